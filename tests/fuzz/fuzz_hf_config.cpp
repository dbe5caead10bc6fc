// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: a Hugging Face config.json imported as the model.
#include "fuzz_common.h"

#include "jsonreader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace napkin;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    core::Errors errors;
    const auto cfg = core::parseJsonLimited(text, "config.json", errors);
    if (cfg.is_discarded())
        return 0;
    const auto model = core::modelFromHfConfig(cfg, "config.json", errors);
    if (!errors.empty())
        return 0;
    const auto counts = core::countParams(model);
    fuzz::require(std::isfinite(counts.total) && counts.total > 0, "parameter count not finite and positive");
    // The same config through a scenario, as `model.hf_config` would bring it in.
    const std::string path = "/fuzz/config.json";
    nlohmann::json doc = core::defaultScenarioJson();
    doc["model"] = {{"hf_config", path}};
    errors.clear();
    const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors, {}, [&](const std::string&, std::string&) {
        return std::optional<std::string>(text);
    });
    if (errors.empty()) {
        const auto plan = core::estimate(sc);
        fuzz::checkJsonFinite(core::planToJson(plan));
    }
    return 0;
}
