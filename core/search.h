// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Best parallel layout: every (TP, PP, virtual stages, CP, DP, micro-batch, recompute, ZeRO stage) for
// the scenario's model on its GPUs, ranked by predicted step time (core/steptime.h) among the layouts
// whose most loaded rank fits in memory. The global batch stays fixed, so a shorter step is more tokens
// per second.

#include "plan.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace napkin::core {

struct Layout {
    int tp = 1, pp = 1, virtualStages = 1, cp = 1;
    std::int64_t dp = 1;
    std::int64_t microBatch = 1;
    Recompute recompute = Recompute::None;
    int zero = 0;
    int ep = 1; // expert parallelism (mixtures of experts)
    // Expert tensor parallelism: 0 keeps the scenario's (etp "auto" follows tp); the search sets it,
    // trying etp = tp (Megatron-Core's default) and etp = 1 (experts whole on each rank; MoE parallel
    // folding, megatron/core/transformer/moe/README.md, lets expert layers use another TP size).
    int etp = 0;
    // 1F1B / interleaved follow virtualStages; DualPipe is tried for mixtures of experts (it hides
    // their all-to-all) and kept where the scenario states it.
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    // Uneven stages (parallel.first/last_stage_layers) where pp does not divide the layers: the
    // middle stages take ceil(L / pp) each and the first and last the rest (0: even stages).
    int firstStageLayers = 0, lastStageLayers = 0;
};

// The first and last stage's layers when pp does not divide L: ceil(L / pp) on each of the pp - 2
// middle stages and the rest split over the two ends, the first the smaller half (they hold the
// embedding and the output layer: Llama 3.1 405B's 126 on 16 as 7 + 14 x 8 + 7, DeepSeek-V3's 61 as
// 2 + 14 x 4 + 3). {0, 0} when no such split exists.
std::pair<int, int> unevenEndStages(std::int64_t layers, std::int64_t pp);

struct LayoutResult {
    Layout layout;
    StepTimeBreakdown time;
    double memoryTotal = 0;
    double headroom = 0;
    std::int64_t accumulationSteps = 0;
    std::string why; // why it wins or, for the others, what costs it against the best
};

struct SearchOptions {
    int top = 10;
    int maxMicroBatch = 64;
    int maxVirtualStages = 8;
    int maxContextParallel = 32;
    bool searchRecompute = true; // false: keep the scenario's recompute mode
    bool searchZero = true;      // false: keep the scenario's ZeRO stage / FSDP strategy
    // Also the powers-of-two pipeline depths that do not divide the layers, with uneven end stages
    // (unevenEndStages): how Llama 3.1 405B (126 layers on 16) and DeepSeek-V3 (61 on 16) were laid
    // out. Off by default: it multiplies the layouts (DeepSeek-V3 on 2,048 GPUs: 21k -> 152k).
    bool unevenStages = false;
    // Mixtures of experts: also etp = 1 beside etp = tp (expertTensorRanks in search.cpp); false: the
    // scenario's etp.
    bool searchExpertTensor = true;
    // Threads that plan layouts (0: one per hardware thread). The result does not depend on it.
    int threads = 0;
};

struct SearchResult {
    std::vector<LayoutResult> best; // fastest first
    std::int64_t evaluated = 0;     // layouts whose plan was computed
    std::int64_t feasible = 0;      // of those, the ones that fit
    std::int64_t rejectedMemory = 0;
    std::int64_t rejectedBatch = 0; // global batch not a multiple of micro-batch x DP
    double elapsedSeconds = 0;
};

// Applies a layout to a scenario (parallel section, micro-batch, recompute); FSDP is cleared.
// Under Megatron a layout with EP > 1 and TP > 1 turns sequence parallelism on (Megatron-Core
// requires it).
void applyLayout(Scenario& scenario, const Layout& layout);
// The same change on a scenario document, for front ends (one undo step in the app): the layout's
// keys, FSDP off (the layout's ZeRO stage decides), uneven-stage keys dropped when the pipeline
// depth changes, and dp kept "auto" when it was. Parsing the result equals applyLayout on the
// parsed scenario (tst_steptime).
void applyLayout(nlohmann::json& document, const Layout& layout);
Layout layoutOf(const Scenario& scenario);
// parallel.sequence_parallel as applyLayout leaves it for this layout.
bool sequenceParallelFor(const Scenario& scenario, const Layout& layout);
// The framework a scenario document resolves to (resolveFramework's rule, read leniently for front
// ends), and whether its layout makes applyLayout turn sequence parallelism on (Megatron, EP > 1,
// TP > 1): the app's search dialog does not count that change as a new search input.
Framework documentFramework(const nlohmann::json& document);
bool documentRequiresSequenceParallel(const nlohmann::json& document);

// Fewest GPUs (a multiple of the scenario's tp · pp · cp) whose plan fits and finishes the scenario's
// tokens within deadlineDays, in the scenario's time mode. Assumes time falls as GPUs are added
// (doubling, then bisection); found = false when even 10^7 GPUs miss it.
struct GpuCountResult {
    bool found = false;
    std::int64_t gpus = 0;
    double days = 0;
    double memoryTotal = 0;
    std::int64_t evaluated = 0;
    bool everFits = false;     // false: no GPU count tried fits in memory (activations do not shrink with DP)
    double smallestMemory = 0; // the least per-GPU memory seen
    double capacity = 0;
    // BatchPolicy::Fixed: data parallelism stops at global_batch / micro_batch ranks (one
    // micro-batch each); past it the batch itself would grow. batchLimited: the deadline needs more.
    std::int64_t dpLimit = 0;
    bool batchLimited = false;
    std::int64_t gpusAtLimit = 0;
    double daysAtLimit = 0;
    // A plan that never fits at its ZeRO stage is tried at the next stages: the stage that fits.
    int zeroStage = -1; // -1: the scenario's own stage
};
// Fixed: the global batch stays as written (the search stops at the data-parallel limit and says
// so); Scale: more GPUs may grow the batch (one micro-batch per rank).
enum class BatchPolicy { Fixed, Scale };
GpuCountResult fewestGpusForDeadline(const Scenario& base, double deadlineDays, BatchPolicy batch = BatchPolicy::Fixed);

SearchResult searchLayouts(const Scenario& base, const SearchOptions& opt = {});
nlohmann::json searchToJson(const SearchResult& result, const Scenario& scenario);

} // namespace napkin::core
