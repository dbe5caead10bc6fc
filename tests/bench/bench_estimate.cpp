// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Nanoseconds per full plan evaluation (estimate(): ledger, FLOPs, time, cost, roofline ops and
// derivations) for Llama-3-70B on 1,024 H100s. Usage: bench_estimate [iterations]
#include "estimate.h"
#include "scenario.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv)
{
    using namespace napkin::core;
    const long iterations = argc > 1 ? std::atol(argv[1]) : 200000;
    nlohmann::json doc = defaultScenarioJson();
    Errors errors;
    applySet(doc, "model.preset=llama-3-70b", errors);
    applySet(doc, "cluster.gpus=1024", errors);
    applySet(doc, "training.tokens=15e12", errors);
    applySet(doc, "training.global_batch=2048", errors);
    const Scenario sc = parseScenario(doc, builtinCatalog(), errors);
    if (!errors.empty()) {
        std::fprintf(stderr, "%s\n", describe(errors.front()).c_str());
        return 1;
    }
    double sink = 0;
    std::vector<double> perRound;
    for (int round = 0; round < 7; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < iterations; ++i) {
            const Plan p = estimate(sc);
            sink += p.memory.total;
        }
        const auto t1 = std::chrono::steady_clock::now();
        perRound.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / double(iterations));
    }
    std::sort(perRound.begin(), perRound.end());
    std::printf("estimate(llama-3-70b, 1024 x h100-sxm): median %.0f ns, best %.0f ns, worst %.0f ns per plan "
                "(%ld iterations x 7 rounds; %zu ops, %zu derivations)\n",
                perRound[perRound.size() / 2], perRound.front(), perRound.back(), iterations, estimate(sc).ops.size(),
                estimate(sc).derivations.size());
    return sink > 0 ? 0 : 1;
}
