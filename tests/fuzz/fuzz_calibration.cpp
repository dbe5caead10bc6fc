// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: a napkin-probe calibration profile, loaded strictly and used as cluster.gpu.
#include "fuzz_common.h"

#include "calibration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace napkin;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    core::Errors errors;
    const auto profile = core::loadCalibrationProfile(text, core::builtinCatalog(), errors);
    fuzz::require(profile.has_value() == errors.empty(), "a profile and errors, or neither");
    for (const auto& e : errors)
        fuzz::require(!e.field.empty() && !e.why.empty() && core::describe(e).find('\n') == std::string::npos,
                      "error without field or reason, or spanning lines");
    if (profile) {
        fuzz::require(!profile->devices.empty(), "accepted a profile without a device");
        for (const auto& d : profile->devices) {
            for (const auto& r : d.results)
                fuzz::require(std::isfinite(r.best) && r.best > 0 && r.median > 0 && r.median <= r.best,
                              "accepted a result outside best >= median > 0");
            for (const auto& p : d.points)
                fuzz::require(std::isfinite(p.intensity()) && std::isfinite(p.flopsPerSecond()),
                              "point rate not finite");
        }
    }
    // The same profile through a scenario, as cluster.gpu = "calibration:FILE" brings it in.
    nlohmann::json doc = core::defaultScenarioJson();
    doc["cluster"]["gpu"] = "calibration:fuzz.json";
    errors.clear();
    const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors, {}, [&](const std::string&, std::string&) {
        return std::optional<std::string>(text);
    });
    fuzz::require(errors.empty() || errors.front().field == "cluster.gpu" ||
                      errors.front().field == "precision.compute",
                  "a profile error that does not name cluster.gpu");
    if (errors.empty()) {
        const auto plan = core::estimate(sc);
        fuzz::require(plan.hardware.bandwidth > 0 && plan.hardware.peakFlops > 0, "measured GPU without rates");
        fuzz::checkJsonFinite(core::planToJson(plan));
        (void)core::planToText(plan);
    }
    return 0;
}
