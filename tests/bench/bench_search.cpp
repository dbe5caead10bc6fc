// Milliseconds per exhaustive layout search (core/search.h): Llama-3.1-405B on 16,384 H100s, global
// batch 2,048 sequences of 8,192 tokens (Llama 3's 16M-token batch). Usage: bench_search [rounds]
#include "scenario.h"
#include "search.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv)
{
    using namespace napkin::core;
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
    nlohmann::json doc = defaultScenarioJson();
    Errors errors;
    for (const char* set : {"model.preset=llama-3.1-405b", "cluster.gpus=16384", "training.seq_len=8192",
                            "training.global_batch=2048", "training.tokens=15.6e12", "parallel.zero=0"})
        applySet(doc, set, errors);
    const Scenario sc = parseScenario(doc, builtinCatalog(), errors);
    if (!errors.empty()) {
        std::fprintf(stderr, "%s\n", describe(errors.front()).c_str());
        return 1;
    }
    std::vector<double> ms;
    SearchResult last;
    for (int i = 0; i < rounds; ++i) {
        last = searchLayouts(sc);
        ms.push_back(last.elapsedSeconds * 1e3);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("search(llama-3.1-405b, 16384 x h100-sxm): median %.1f ms, best %.1f ms, worst %.1f ms per search "
                "(%d rounds; %lld layouts evaluated, %lld fit)\n",
                ms[ms.size() / 2], ms.front(), ms.back(), rounds, static_cast<long long>(last.evaluated),
                static_cast<long long>(last.feasible));
    if (!last.best.empty()) {
        const auto& b = last.best.front();
        std::printf("best: tp %d pp %d v %d cp %d dp %lld mb %lld recompute %s zero %d: step %.3f s, MFU %.3f\n",
                    b.layout.tp, b.layout.pp, b.layout.virtualStages, b.layout.cp, static_cast<long long>(b.layout.dp),
                    static_cast<long long>(b.layout.microBatch), toString(b.layout.recompute), b.layout.zero, b.time.step,
                    b.time.mfu);
    }
    return 0;
}
