// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "accuracy.h"

#include "catalog.h"
#include "format.h"
#include "model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace napkin::core {

namespace {

std::string billions(double params) { return formatNumber(std::round(params / 1e8) / 10) + "B"; }

bool usesRecipe(const Scenario& s) { return s.precision.recipe != LowPrecisionRecipe::None; }

// The validated run's scenario as runValidation parses it.
bool parseCase(const ValidationCase& c, Scenario& out)
{
    auto doc = mergeScenario(defaultScenarioJson(), c.scenario);
    doc["step_time"]["mode"] = "predicted";
    if (!c.convention.empty())
        doc["flops"]["convention"] = c.convention;
    Errors errors;
    out = parseScenario(doc, builtinCatalog(), errors);
    return errors.empty();
}

std::string percent(double e) { return fmt::format("{:+.0f}%", 100 * e); }

} // namespace

double similarityScore(const Scenario& a, const Scenario& b, std::vector<std::string>* alike)
{
    auto note = [&](const std::string& s) {
        if (alike)
            alike->push_back(s);
    };
    double score = 0;
    if (a.gpu && b.gpu && a.gpu->id == b.gpu->id) {
        score += 3;
        note("same GPU (" + a.gpu->name + ")");
    }
    const double pa = countParams(a.model).total, pb = countParams(b.model).total;
    if (pa > 0 && pb > 0) {
        const double d = std::fabs(std::log10(pa / pb));
        score += 2 * std::max(0.0, 1 - d);
        if (d < 0.5)
            note("size " + billions(pb) + " vs " + billions(pa));
    }
    if (isMoe(a.model.shape) == isMoe(b.model.shape)) {
        score += 1;
        note(isMoe(a.model.shape) ? "mixture of experts" : "dense");
    }
    const double ga = double(a.cluster.gpus), gb = double(b.cluster.gpus);
    if (ga > 0 && gb > 0) {
        const double d = std::fabs(std::log10(ga / gb));
        score += std::max(0.0, 1 - d / 2);
        if (d < 0.5)
            note(formatGrouped(gb) + " GPUs vs " + formatGrouped(ga));
    }
    if ((a.parallel.tp > 1) == (b.parallel.tp > 1)) {
        score += 0.5;
        note(a.parallel.tp > 1 ? "tensor parallel" : "no tensor parallel");
    }
    if ((a.parallel.pp > 1) == (b.parallel.pp > 1)) {
        score += 0.5;
        note(a.parallel.pp > 1 ? "pipeline parallel" : "no pipeline parallel");
    }
    if (usesRecipe(a) == usesRecipe(b)) {
        score += 0.5;
        note(usesRecipe(a) ? "FP8/FP4 recipe" : "16-bit GEMMs");
    }
    return score;
}

AccuracyEstimate accuracyFor(const Scenario& sc, const std::vector<ValidationResult>& results, int n)
{
    AccuracyEstimate out;
    for (const auto& r : results) {
        if (!r.c || !r.failure.empty())
            continue;
        Scenario other;
        if (!parseCase(*r.c, other))
            continue;
        SimilarRun s;
        s.result = &r;
        s.score = similarityScore(sc, other, &s.alike);
        out.closest.push_back(std::move(s));
    }
    // Ties: the smaller |error| first would flatter Napkin; keep the set's order (stable sort).
    std::stable_sort(out.closest.begin(), out.closest.end(),
                     [](const SimilarRun& x, const SimilarRun& y) { return x.score > y.score; });
    if (int(out.closest.size()) > n)
        out.closest.resize(std::size_t(std::max(n, 0)));
    std::vector<double> errors;
    for (const auto& s : out.closest)
        errors.push_back(s.result->error);
    if (errors.empty())
        return out;
    std::sort(errors.begin(), errors.end());
    out.low = errors.front();
    out.high = errors.back();
    const std::size_t m = errors.size() / 2;
    out.median = errors.size() % 2 ? errors[m] : (errors[m - 1] + errors[m]) / 2;
    out.valid = true;
    return out;
}

std::string accuracyText(const AccuracyEstimate& a)
{
    if (!a.valid)
        return "No validated run is comparable to this scenario.";
    return fmt::format("Napkin's error on the {} most similar validated runs: {} to {} (median {}); a positive error "
                       "means the published run was slower than predicted.",
                       a.closest.size(), percent(a.low), percent(a.high), percent(a.median));
}

} // namespace napkin::core
