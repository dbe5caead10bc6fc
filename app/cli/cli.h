// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// napkin-cli's commands: plan, fit, op, presets, dtype, reconcile, compare, chart. Exit codes: 0 success, 2 invalid
// input (one line per error on stderr, naming the field), 1 internal or I/O error.

#include <iosfwd>

namespace napkin::cli {

// 3: --check was given and the answer is "does not fit" (or no layout / GPU count does).
enum ExitCode { Ok = 0, InternalError = 1, InvalidInput = 2, CheckFailed = 3 };

int run(int argc, char** argv, std::ostream& out, std::ostream& err);

} // namespace napkin::cli
