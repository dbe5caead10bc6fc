// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Milliseconds per exhaustive layout search (core/search.h), two cases: Llama-3.1-405B on 16,384
// H100s, global batch 2,048 sequences of 8,192 tokens (Llama 3's 16M-token batch); DeepSeek-V3 on
// 2,048 H800s, global batch 15,360 sequences of 4,096 tokens (its report's batch), where the search
// also explores expert parallelism; and that one again with uneven pipeline stages (3 rounds at most).
// Usage: bench_search [rounds]
#include "scenario.h"
#include "search.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <vector>

namespace {

int bench(const char* label, std::initializer_list<const char*> sets, int rounds, bool uneven = false)
{
    using namespace napkin::core;
    nlohmann::json doc = defaultScenarioJson();
    Errors errors;
    for (const char* set : sets)
        applySet(doc, set, errors);
    const Scenario sc = parseScenario(doc, builtinCatalog(), errors);
    if (!errors.empty()) {
        std::fprintf(stderr, "%s\n", describe(errors.front()).c_str());
        return 1;
    }
    std::vector<double> ms;
    SearchResult last;
    for (int i = 0; i < rounds; ++i) {
        SearchOptions opt;
        opt.unevenStages = uneven;
        last = searchLayouts(sc, opt);
        ms.push_back(last.elapsedSeconds * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    std::printf(
        "search(%s): median %.1f ms, best %.1f ms, worst %.1f ms per search (%d rounds; %lld layouts evaluated, "
        "%lld fit)\n",
        label, ms[ms.size() / 2], ms.front(), ms.back(), rounds, static_cast<long long>(last.evaluated),
        static_cast<long long>(last.feasible));
    if (!last.best.empty()) {
        const auto& b = last.best.front();
        std::printf("best: tp %d pp %d v %d cp %d dp %lld ep %d mb %lld recompute %s zero %d: step %.3f s, MFU %.3f\n",
                    b.layout.tp, b.layout.pp, b.layout.virtualStages, b.layout.cp, static_cast<long long>(b.layout.dp),
                    b.layout.ep, static_cast<long long>(b.layout.microBatch), toString(b.layout.recompute),
                    b.layout.zero, b.time.step, b.time.mfu);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
    int rc = bench("llama-3.1-405b, 16384 x h100-sxm",
                   {"model.preset=llama-3.1-405b", "cluster.gpus=16384", "training.seq_len=8192",
                    "training.global_batch=2048", "training.tokens=15.6e12", "parallel.zero=0"},
                   rounds);
    rc |= bench("deepseek-v3, 2048 x h800-sxm",
                {"model.preset=deepseek-v3", "cluster.gpu=h800-sxm", "cluster.gpus=2048", "training.seq_len=4096",
                 "training.global_batch=15360", "training.tokens=14.8e12", "parallel.zero=0"},
                rounds);
    // The same with uneven stages (--uneven-stages): DeepSeek's own depth, 16, needs them (61 layers).
    rc |= bench("deepseek-v3, 2048 x h800-sxm, uneven stages",
                {"model.preset=deepseek-v3", "cluster.gpu=h800-sxm", "cluster.gpus=2048", "training.seq_len=4096",
                 "training.global_batch=15360", "training.tokens=14.8e12", "parallel.zero=0"},
                std::min(rounds, 3), true);
    return rc;
}
