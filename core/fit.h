// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Solvers: the largest model and the largest micro-batch that fit.

#include "scenario.h"

#include <nlohmann/json.hpp>

namespace napkin::core {

struct FitResult {
    // CS336 lecture 2 upper bound: model states only, sharded ideally over all GPUs:
    // P = GPUs × capacity / bytes per parameter (8 × 80 GB / 16 = 40B; / 12 = 53.3B).
    double statesOnlyMaxParams = 0;
    double statesBytesPerParam = 0;
    // With activations, temporaries and overhead at the scenario's batch, sequence, ZeRO stage and
    // recompute, for a model of derived shape (0 when not even the smallest fits).
    double withActivationsMaxParams = 0;
    TransformerShape withActivationsShape;
    // Largest micro-batch for the scenario's own model (0 when batch 1 does not fit).
    std::int64_t maxMicroBatch = 0;
    double memoryAtOne = 0; // per GPU at micro-batch 1 (what "does not fit" is short of)
    double totalCapacity = 0;
};

FitResult fit(const Scenario& scenario);
nlohmann::json fitToJson(const FitResult& r, const Scenario& scenario);

} // namespace napkin::core
