// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Atomic output: write to a temporary file beside the target, then rename over it.

#include <string>

namespace napkin::cli {

// Returns an empty string on success, else a message naming the path and the reason. On failure
// nothing is left behind: neither a partial target nor the temporary file.
std::string writeFileAtomically(const std::string& path, const std::string& content);

} // namespace napkin::cli
