// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-probe: measures the local GPU and writes a napkin.calibration/2 profile (docs/probe.md).
// Thin main: arguments in, napkin::gpu::runProbe, the profile out, the documented exit code.

#include "options.h"
#include "profile.h"
#include "runner.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    using namespace napkin::gpu;
    Options options;
    std::string error;
    if (!parseOptions(std::vector<std::string>(argv + 1, argv + argc), options, error)) {
        std::fprintf(stderr, "napkin-probe: error: %s\n", error.c_str());
        return ExitUsage;
    }
    if (options.help) {
        std::fputs(usageText().c_str(), stdout);
        return ExitOk;
    }
    if (options.version) {
        std::printf("napkin-probe %s\n", NAPKIN_PROBE_VERSION);
        return ExitOk;
    }
    ProgressSink sink;
    if (options.progress)
        sink = [](const std::string& line) {
            std::fprintf(stderr, "%s\n", line.c_str());
            std::fflush(stderr);
        };
    const Profile profile = runProbe(options, sink);
    const std::string json = toJson(profile);
    if (options.output.empty()) {
        std::fputs(json.c_str(), stdout);
        std::fflush(stdout);
    } else if (!writeFileAtomically(options.output, json, error)) {
        std::fprintf(stderr, "napkin-probe: error: %s\n", error.c_str());
        return ExitError;
    }
    // The one-line human message: what happened and what to do.
    std::fprintf(stderr, "napkin-probe: %s: %s\n", statusName(profile.status), profile.message.c_str());
    return exitCodeFor(profile.status);
}
