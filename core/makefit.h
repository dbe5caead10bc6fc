// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// "Make it fit": the cheapest changes that bring a plan under the GPU's capacity (napkin-cli suggest,
// the app's Make it fit button). Every change is a full re-plan of the scenario document with the
// change's keys set, never an estimate of one.

#include "plan.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace napkin::core {

struct FitChange {
    std::string description;                       // "QLoRA: NF4 base, r = 64 on every linear layer"
    nlohmann::json set = nlohmann::json::object(); // scenario keys it sets: {"finetune.method": "qlora", ...}
    double total = 0;                              // memory per GPU after the change
    double capacity = 0;                           // of the GPU after the change
    double memorySaved = 0;                        // baseline total − total
    double stepSeconds = 0;                        // predicted step after the change
    double stepSecondsDelta = 0;                   // − the baseline's
    std::int64_t gpus = 0;
    std::string gpuName;
    bool fits = false;
};

struct FitSuggestions {
    bool valid = false; // the baseline scenario parsed
    bool baselineFits = false;
    double baselineTotal = 0, capacity = 0, baselineStep = 0;
    std::int64_t baselineGpus = 0;
    std::string gpuName, title;
    bool predicted = true;          // step times from the predicted step (else the scenario's MFU)
    std::vector<FitChange> changes; // fitting first, then by GPU-seconds per step, then by memory saved
};

// doc: a complete scenario document (defaults merged). baseDir resolves relative files in it.
// At most `limit` changes are returned; single changes first, then combinations of two or three
// when no single change fits.
FitSuggestions suggestFits(const nlohmann::json& doc, const std::string& baseDir = {}, int limit = 12);

nlohmann::json fitSuggestionsToJson(const FitSuggestions& s); // napkin.suggest/1
std::string fitSuggestionsText(const FitSuggestions& s);

} // namespace napkin::core
