// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Routing imbalance sensitivity (issue 16): the plan again with the busiest expert rank at 1.0, 1.2
// and 1.5 times the mean routed rows and at the worst case, for a mixture of experts with expert
// parallelism. Early training is far from balanced (Megatron-LM moe/README.md reports OOMs from the
// first steps' imbalance), so the worst case is shown beside the balanced one.

#include "plan.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace napkin::core {

struct ImbalancePoint {
    std::string label;      // "1.0", "1.2", "1.5", "worst"
    double imbalance = 1;   // resolved max / mean
    double stepSeconds = 0; // predicted step time (0 when the plan has none)
    double memoryTotal = 0; // per-GPU total, bytes
    bool fits = false;
};

// Empty unless the scenario's model has routed experts and parallel.ep > 1. Each point is a full
// estimate() of the scenario with training.routing_imbalance replaced.
std::vector<ImbalancePoint> imbalanceSweep(const Scenario& sc);

nlohmann::json imbalanceSweepJson(const std::vector<ImbalancePoint>& points);
std::string imbalanceSweepText(const std::vector<ImbalancePoint>& points);

} // namespace napkin::core
