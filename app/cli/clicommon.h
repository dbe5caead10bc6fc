// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What napkin-cli's command files share: the parsed options and the helpers that read scenarios and
// write output. Internal to napkin_cli.

#include "errors.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace napkin::cli::detail {

struct Options {
    std::string command;
    std::vector<std::string> positional;
    std::vector<std::string> sets;
    std::string format = "text";
    std::string output;
    std::optional<std::string> m, k, n, dtype;
    std::optional<std::string> stepTime, tokensPerSecond, peakAllocated, peakReserved;
    std::optional<std::string> size, page, title;
    double scale = 2; // chart --scale: PNG pixels per chart unit
    std::optional<std::string> top, deadlineDays, batch;
    bool keepRecompute = false, keepZero = false, keepEtp = false;
    bool unevenStages = false; // search: also pipeline depths that do not divide the layers
    bool check = false;        // --check: exit 3 when the answer is "does not fit" or "none"
    bool gib = false;
    bool exact = false;
};

// The command line (app/cli/args.cpp, CLI11). Returns -1 when o.command should run, else the exit
// status after printing help, the version, the man page or a command-line error.
int parseCommandLine(int argc, char** argv, Options& o, std::ostream& out, std::ostream& err);

void printErrors(const core::Errors& errors, std::ostream& err);
// Defaults, then the file, then each --set, then strict parsing.
std::optional<core::Scenario> loadScenario(const Options& o, const std::string* file, core::Errors& errors);
// The scenario document (defaults, file, --set) without parsing it.
std::optional<nlohmann::json> scenarioDocument(const Options& o, const std::string* file, core::Errors& errors);
// To stdout, or atomically to -o FILE.
int writeOutput(const Options& o, const std::string& text, std::ostream& out, std::ostream& err);
bool checkFormat(const Options& o, std::initializer_list<const char*> allowed, std::ostream& err);
// --check: a successful command whose answer is "does not fit" / "none" exits 3 (CheckFailed).
inline int checked(const Options& o, int status, bool failed) { return status == 0 && o.check && failed ? 3 : status; }

// Commands in infocommands.cpp.
int cmdPresets(const Options& o, std::ostream& out, std::ostream& err);
int cmdDtype(const Options& o, std::ostream& out, std::ostream& err);
int cmdReconcile(const Options& o, std::ostream& out, std::ostream& err);
// Solvers in solvecommands.cpp.
int cmdSearch(const Options& o, std::ostream& out, std::ostream& err);
int cmdGpusFor(const Options& o, std::ostream& out, std::ostream& err);
int cmdSuggest(const Options& o, std::ostream& out, std::ostream& err);
int cmdValidate(const Options& o, std::ostream& out, std::ostream& err);

} // namespace napkin::cli::detail
