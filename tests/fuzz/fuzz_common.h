// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Shared checks for the fuzz targets: whatever the input, a valid scenario yields a plan whose every
// number is finite, and an invalid one yields errors that name a field. Anything else aborts, which
// libFuzzer reports as a crash with the input that caused it.

#include "estimate.h"
#include "fit.h"
#include "format.h"
#include "scenario.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace napkin::fuzz {

inline void require(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
        std::abort();
    }
}

inline void checkJsonFinite(const nlohmann::json& j)
{
    if (j.is_number_float())
        require(std::isfinite(j.get<double>()), "non-finite number in plan JSON");
    else if (j.is_structured())
        for (const auto& x : j)
            checkJsonFinite(x);
}

// Parses doc; when valid, evaluates and checks the plan; when invalid, checks the errors.
inline void evaluate(const nlohmann::json& doc, bool withFit = false)
{
    core::Errors errors;
    const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors, "/nonexistent");
    if (!errors.empty()) {
        for (const auto& e : errors)
            require(!core::describe(e).empty() && core::describe(e).find('\n') == std::string::npos,
                    "error message empty or spans lines");
        return;
    }
    const auto plan = core::estimate(sc);
    const auto& m = plan.memory;
    checkJsonFinite(core::planToJson(plan));
    require(std::abs(m.total - (m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations +
                                m.temporaries + m.overhead)) <= 1e-9 * std::max(1.0, m.total),
            "total is not the sum of the buckets");
    require(m.total >= 0 && plan.compute.trainingFlops > 0 && plan.time.seconds > 0, "non-positive headline");
    (void)core::planToText(plan);
    (void)core::planToCsv(plan);
    if (withFit) {
        const auto f = core::fit(sc);
        checkJsonFinite(core::fitToJson(f, sc));
    }
}

} // namespace napkin::fuzz
