// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The routing-imbalance sweep: estimate() at 1.0, 1.2, 1.5 and the worst case (core/moe_sweep.h).

#include "moe_sweep.h"

#include "estimate.h"
#include "format.h"

#include <fmt/format.h>

namespace napkin::core {

std::vector<ImbalancePoint> imbalanceSweep(const Scenario& sc)
{
    std::vector<ImbalancePoint> out;
    if (sc.model.kind != ModelKind::Transformer || !isMoe(sc.model.shape) || sc.parallel.ep <= 1)
        return out;
    struct Case {
        const char* label;
        double r;
        bool worst;
    };
    for (const Case c :
         {Case{"1.0", 1.0, false}, Case{"1.2", 1.2, false}, Case{"1.5", 1.5, false}, Case{"worst", 1.0, true}}) {
        Scenario s = sc;
        s.training.routingImbalance = c.r;
        s.training.routingImbalanceWorst = c.worst;
        const Plan p = estimate(s);
        out.push_back(
            {c.label, p.moe.routingImbalance, p.stepTime.valid ? p.stepTime.step : 0.0, p.memory.total, p.memory.fits});
    }
    return out;
}

nlohmann::json imbalanceSweepJson(const std::vector<ImbalancePoint>& points)
{
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : points)
        a.push_back({{"label", x.label},
                     {"routing_imbalance", x.imbalance},
                     {"step_seconds", x.stepSeconds},
                     {"memory_per_gpu", x.memoryTotal},
                     {"fits", x.fits}});
    return a;
}

std::string imbalanceSweepText(const std::vector<ImbalancePoint>& points)
{
    if (points.empty())
        return {};
    std::string o = "Routing imbalance (busiest expert rank's rows / mean; training.routing_imbalance)\n";
    for (const auto& x : points)
        o += fmt::format("  {:<6} {:>6.2f}x   step {:>10}   memory {:>10} per GPU{}\n", x.label, x.imbalance,
                         x.stepSeconds > 0 ? fmt::format("{:.4g} s", x.stepSeconds) : std::string("(mfu mode)"),
                         formatBytes(x.memoryTotal), x.fits ? "" : "  DOES NOT FIT");
    return o;
}

} // namespace napkin::core
