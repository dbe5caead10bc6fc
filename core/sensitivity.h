// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// "What would change the answer": the inputs a plan is most sensitive to, computed by re-planning
// the scenario document with each input moved one step (doubled, halved, the next option): the
// change goes through applySet and parseScenario, so every rule that depends on it (the
// data-parallel size that follows the GPU count, the framework's defaults) follows too, and each
// line equals a full plan at the new value.

#include "plan.h"
#include "scenario.h"

#include <string>
#include <vector>

namespace napkin::core {

struct Sensitivity {
    std::string input;                        // "training.micro_batch"
    std::string change;                       // "1 → 2"
    double memoryBefore = 0, memoryAfter = 0; // per-GPU total, bytes
    double daysBefore = 0, daysAfter = 0;
    bool fitsBefore = false, fitsAfter = false;
    double score = 0; // max relative change of memory and days; +1 when it flips fits
};

// The top `count` single-input changes, largest effect first. doc: the merged scenario document
// the plan was parsed from; baseDir and reader resolve the files it refers to, as for parseScenario.
// A change the document cannot take (it would make the scenario invalid) is left out. In the
// predicted step-time mode cluster.mfu is not an input and is not listed.
std::vector<Sensitivity> sensitivities(const nlohmann::json& doc, std::size_t count = 3,
                                       const std::string& baseDir = {}, const FileReader& reader = readTextFile);

} // namespace napkin::core
