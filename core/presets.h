// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The app's Presets menu as data (resources/presets.json): the lecture's worked examples, each a set
// of scenario keys laid over the default scenario, the derivation to show, and its source.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace napkin::core {

struct Preset {
    std::string id, title, source;
    nlohmann::json set = nlohmann::json::object(); // scenario keys over the defaults (mergeScenario)
    std::string derivation;                        // the quantity to show when applied ("" for none)
    bool rooflineSeedOps = false;                  // the roofline overlay of the lecture's GEMMs, no scenario
};

const std::vector<Preset>& builtinPresets();

// The default scenario with the preset's keys laid over it (mergeScenario rules).
nlohmann::json presetDocument(const Preset& preset);

} // namespace napkin::core
