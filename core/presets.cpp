// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "presets.h"

#include "jsonreader.h"
#include "catalog.h"
#include "scenario.h"

#include <stdexcept>

namespace napkin::core {

const std::vector<Preset>& builtinPresets()
{
    static const std::vector<Preset> presets = [] {
        std::vector<Preset> out;
        Errors errors;
        const auto doc = parseJsonLimited(embeddedResource("presets.json"), "presets.json", errors);
        ObjectReader top(doc, "", errors);
        if (top.string("schema", true).value_or("") != "napkin.presets/1")
            top.error("schema", "", "unknown schema", "napkin.presets/1");
        const auto* arr = top.child("presets");
        top.finish();
        if (arr && arr->is_array())
            for (std::size_t i = 0; i < arr->size(); ++i) {
                ObjectReader r((*arr)[i], "presets[" + std::to_string(i) + "]", errors);
                Preset p;
                p.id = r.string("id", true).value_or("");
                p.title = r.string("title", true).value_or("");
                p.source = r.string("source", true).value_or("");
                p.derivation = r.string("derivation").value_or("");
                p.rooflineSeedOps = r.boolean("roofline_seed_ops").value_or(false);
                if (const auto* s = r.child("set"))
                    p.set = *s;
                r.finish();
                out.push_back(std::move(p));
            }
        if (!errors.empty())
            throw std::logic_error("embedded presets.json is invalid: " + describe(errors.front()));
        return out;
    }();
    return presets;
}

nlohmann::json presetDocument(const Preset& p) { return mergeScenario(defaultScenarioJson(), p.set); }

} // namespace napkin::core
