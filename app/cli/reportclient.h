// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// PDF, HTML, Markdown reports with chart images, and charts as PNG/SVG/PDF need Qt's painters:
// napkin-cli hands them to napkin-report (app/report/main.cpp) as a napkin.report-request/1
// document, so napkin-cli itself links no Qt. Internal to napkin_cli.

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace napkin::cli::detail {

// napkin-report's path: $NAPKIN_REPORT, else beside this executable as installed
// (bin/../libexec/napkin/napkin-report), else as built (app/cli/../report/napkin-report). Empty when
// none exists; *looked lists where it looked.
std::string findReportHelper(std::string* looked);

// Runs napkin-report on `request`; what it says goes to err. Returns its exit status (0 written,
// 1 I/O error, 2 invalid input), or 1 when it cannot be found or started (err says why).
int runReportHelper(const nlohmann::json& request, std::ostream& err);

} // namespace napkin::cli::detail
