// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Predicted step time: one rank's ops at their achievable rates (core/achievable.h) + communication
// priced by NCCL's α–β model (core/collectives.h) over the links the layout uses + the pipeline
// bubble + the rest of a real step (optimizer, clipping, launches, checkpoint saves), with what
// overlaps decided by the framework's rules (core/framework.h).
//
// Model (one optimizer step, the slowest pipeline stage, Megatron rank order TP < CP < DP < PP):
//   t_mb   = L_stage · (t_fwd + t_bwd + t_recompute) + t_logits(last stage) + TP + exposed CP + PP sends
//   step   = (m + (p - 1)/v) · t_mb + exposed DP traffic + optimizer + clipping + launches + saves
// where m = micro-batches per step per replica (Narayanan et al. 2021 §2.2: bubble (p - 1)/(v·m)).
// Data loading is assumed hidden behind compute (prefetching loaders).

#include "collectives.h"
#include "plan.h"
#include "scenario.h"

namespace napkin::core {

// Needs plan.ops with their achievable fields (see estimate), plan.memory, plan.compute and
// plan.hardware. atPeak: every op at its roofline bound, links at their nominal rate, no latency and
// no overheads (what the spec sheet promises: time.breakdown_at_peak).
StepTimeBreakdown predictStepTime(const Scenario& scenario, const Plan& plan, bool atPeak = false);

// Achieved over nominal bus bandwidth when step_time.collective_efficiency is auto (see steptime.cpp).
double defaultCollectiveEfficiency();

} // namespace napkin::core
