// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The stages of estimate() (estimate.cpp), in the order it calls them. Internal to napkin_core: each
// stage reads what the earlier ones stored in the Plan and appends its derivations and warnings in
// plan order, so the order of the calls is the order of plan.derivations.

#include "plan.h"
#include "scenario.h"

#include <cstdint>
#include <initializer_list>

namespace napkin::core::detail {

inline constexpr const char* kSrcCs336 = "CS336 lecture 2 (Stanford, Spring 2026)";

// Appends a derivation, built in place (no copy of the term array); terms past the twelfth are dropped
// (a test checks that no derivation has that many: tst_properties derivationsSubstituteEveryTerm).
Derivation& derive(Plan& p, const char* quantity, const char* formula, double value, const char* unit,
                   const char* source, std::initializer_list<Term> terms);

// The Megatron-LM layout sizes, each at least 1 (the scenario reader has checked them).
struct Layout {
    std::int64_t tp = 1, pp = 1, cp = 1, virtualStages = 1;
};
Layout layoutOf(const Scenario& sc);

// plan.hardware: the GPU's peaks, bandwidth, ridge, capacity and TDP (estimate.cpp).
void estimateHardware(const Scenario& sc, Plan& p);
// plan.params: the exact count, or the given one for a derived shape (estimate_compute.cpp).
void estimateParams(const Scenario& sc, Plan& p);
// How a rank's tokens reach its experts (Megatron-Core moe/token_dispatcher.py
// MoEAlltoAllTokenDispatcher): a rank routes n / split of a micro-batch's n tokens (split = tp with
// sequence parallelism: each TP rank routes its own shard), and when the ranks of an expert-TP group
// hold different tokens (sequence parallelism, or tp = 1) the dispatcher all-gathers the experts'
// input rows over that group after the all-to-all (gather = etp). One expert's fc1 columns are split
// over etp: widthScale = tp / etp against a TP-sharded shape. Without sequence parallelism at tp > 1
// the TP ranks hold the same tokens: split 1, gather 1. The op list, the activation ledger and
// plan.moe's rows all take their token counts from here.
struct MoeTokenShare {
    double split = 1, gather = 1, widthScale = 1;
};
MoeTokenShare moeTokenShare(const ParallelConfig& parallel);

// plan.moe: routing imbalance, capacity and expert storage as the layout resolves them (moe_run.cpp).
void estimateMoeRun(const Scenario& sc, Plan& p);
// plan.compute's batch: data parallelism, accumulation steps, tokens and steps; the pipeline bubble.
void estimateBatch(const Scenario& sc, Plan& p);
// plan.memory: every pipeline stage's tensors, the most loaded one's ledger, overhead, total, fit
// (estimate_memory.cpp). Needs hardware, params and batch.
void estimateMemory(const Scenario& sc, Plan& p);
// plan.compute's FLOPs under the convention. Returns the recomputed forward FLOPs per token (selective or
// full recomputation), which the time stage turns into HFU.
double estimateFlops(const Scenario& sc, Plan& p);
// plan.ops: one rank's layer on the roofline, and the MFU bound it implies (estimate_roofline.cpp).
void estimateRoofline(const Scenario& sc, Plan& p);
// plan.stepTime, plan.time and plan.cost (estimate_time.cpp). Needs everything above.
// withPeak: also the spec-peak step time beside the achievable one (predicted mode; the search skips it).
void estimateTimeAndCost(const Scenario& sc, double recomputePerToken, Plan& p, bool withPeak = true);
// The warnings about the plan as a whole: calibration, no TDP, under one step, derived shape.
void appendClosingWarnings(const Scenario& sc, Plan& p);

} // namespace napkin::core::detail
