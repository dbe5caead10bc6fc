// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Command line of napkin-probe (docs/probe.md). Pure host code.

#include <string>
#include <vector>

namespace napkin::gpu {

struct Options {
    bool quick = false;      // --quick: 8192^3 GEMMs only, fewer samples, <= 10 s on H100-class GPUs
    std::string output;      // -o FILE; empty: stdout
    int device = 0;          // --device N
    bool allDevices = false; // --all-devices: the suite on every device in turn
    bool list = false;       // --list: identities only, no measurements
    bool progress = true;    // --no-progress turns the stderr JSON lines off
    bool help = false;
    bool version = false;
    double timeLimitSeconds = 0; // --time-limit S; 0: the mode's cap (10 s quick, 60 s full)
    // --soak S: bf16 GEMMs back to back for S seconds before the GEMM steps, so that they are measured
    // at the clock and temperature a long training run holds (Azure runs 10,000 warm-up iterations);
    // not counted against the time cap. 0: none.
    double soakSeconds = 0;
};

/** Parses argv[1..]; false with a one-line `error` naming the option on a usage error. */
bool parseOptions(const std::vector<std::string>& args, Options& options, std::string& error);

/** The --help text. */
std::string usageText();

/** The mode's time cap in seconds: 10 (quick) or 60 (full), or --time-limit. */
double timeCapSeconds(const Options& options);

} // namespace napkin::gpu
