// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Reconcile a real run with its plan (CS336 lecture 2 exercises 2 and 3): measured MFU and HFU from
// the step time, and the predicted ledger beside torch.cuda.max_memory_allocated() with the usual
// reasons for the gap, ranked by how much of it each could explain.

#include "plan.h"
#include "scenario.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace napkin::core {

struct Measurement {
    std::optional<double> stepSeconds;        // wall time of one optimizer step
    std::optional<double> tokensPerSecond;    // whole job; overrides the step time when both are given
    std::optional<double> peakAllocatedBytes; // torch.cuda.max_memory_allocated() on one GPU
    std::optional<double> peakReservedBytes;  // torch.cuda.max_memory_reserved()
};

struct GapReason {
    std::string reason;
    double bytes = 0;            // how large this effect is in this plan
    double explainsFraction = 0; // min(bytes, |gap|) / |gap|
};

struct Reconciliation {
    double tokensPerSecond = 0;
    double stepSeconds = 0;
    double mfu = 0;
    double hfu = 0;
    double achievedFlopsPerGpu = 0; // model FLOP/s per GPU
    bool hasMemory = false;
    double predictedAllocated = 0; // tensors + library workspaces: what the caching allocator hands out
    double peakAllocated = 0;
    double peakReserved = 0;
    double gapBytes = 0; // measured - predicted
    double gapFraction = 0;
    std::vector<GapReason> reasons; // largest share of the gap first
    std::vector<std::string> warnings;
};

// Errors name the measurement (--step-time, --tokens-per-second, ...) when values are unusable.
Reconciliation reconcile(const Scenario& scenario, const Plan& plan, const Measurement& m, Errors& errors);
nlohmann::json reconciliationToJson(const Reconciliation& r, const Plan& plan);

} // namespace napkin::core
