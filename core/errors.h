// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// User errors are values: a list of {field path, value, why, allowed}. Never asserts, never NaN.

#include <string>
#include <vector>

namespace napkin::core {

struct UserError {
    std::string field;   // dotted path in the scenario, e.g. "training.seq_len"
    std::string value;   // the offending value as the user wrote it ("" when missing)
    std::string why;     // what is wrong
    std::string allowed; // the allowed range or set
};

using Errors = std::vector<UserError>;

// "training.seq_len = -5: out of range (allowed: an integer from 1 to 16777216)"
std::string describe(const UserError& e);

} // namespace napkin::core
