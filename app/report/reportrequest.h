// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// napkin.report-request/1: what napkin-cli hands napkin-report for the formats that need Qt's
// painters (PDF, HTML, Markdown with chart images, chart PNG/SVG/PDF). The CLI has already read the
// scenario files and applied --set: the request carries the finished documents, so nothing is
// parsed from command-line text twice.
//
//   {"schema": "napkin.report-request/1",
//    "job": "report" | "comparison" | "chart",
//    "format": "pdf" | "html" | "md" | "csv" | "json" (report, comparison) | "png" | "svg" | "pdf" (chart),
//    "output": "FILE",
//    "inputs": [{"document": {napkin.scenario/1}, "label": "…", "base_dir": "…"}, …],
//    "options": {"page": "a4" | "letter", "gib": false, "title": "…", "version": "0.1.0"},
//    "chart": "ledger" | "roofline" | "timeline" | "steptime" | "stages", "size": [900, 260], "scale": 2}   (chart
//    only)

#include <nlohmann/json.hpp>

#include <QString>

namespace napkin::report {

// Exit statuses, as napkin-cli's (app/cli/cli.h): 0 written, 1 I/O or internal error, 2 invalid request.
enum RequestStatus { RequestOk = 0, RequestFailed = 1, RequestInvalid = 2 };

// Writes what the request asks for. On failure *message says why (naming the field or the path).
// Needs a QApplication (offscreen is fine).
int runRequest(const nlohmann::json& request, QString* message);

} // namespace napkin::report
