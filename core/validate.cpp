// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "validate.h"

#include "catalog.h"
#include "estimate.h"
#include "jsonreader.h"
#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace napkin::core {

namespace {

const std::vector<std::pair<std::string_view, ValidationMetric>>& metricNames()
{
    static const std::vector<std::pair<std::string_view, ValidationMetric>> names = {
        {"hardware_tflops_per_gpu", ValidationMetric::HardwareTflopsPerGpu},
        {"model_tflops_per_gpu", ValidationMetric::ModelTflopsPerGpu},
        {"mfu", ValidationMetric::Mfu},
        {"hfu", ValidationMetric::Hfu},
        {"tokens_per_second_per_gpu", ValidationMetric::TokensPerSecondPerGpu},
        {"tokens_per_second", ValidationMetric::TokensPerSecond},
        {"samples_per_second", ValidationMetric::SamplesPerSecond},
        {"step_seconds", ValidationMetric::StepSeconds},
    };
    return names;
}

// The published metric, computed from a predicted plan.
double metricOf(ValidationMetric m, const Plan& p, double gpus)
{
    const auto& c = p.compute;
    const double step = p.time.stepSeconds;
    const double hwRatio = c.trainingFlops > 0 ? c.hardwareFlops / c.trainingFlops : 1.0;
    switch (m) {
    case ValidationMetric::HardwareTflopsPerGpu: return c.flopsPerStep * hwRatio / (gpus * step) / 1e12;
    case ValidationMetric::ModelTflopsPerGpu: return c.flopsPerStep / (gpus * step) / 1e12;
    case ValidationMetric::Mfu: return p.time.mfu;
    case ValidationMetric::Hfu: return p.time.hfu;
    case ValidationMetric::TokensPerSecondPerGpu: return c.tokensPerStep / step / gpus;
    case ValidationMetric::TokensPerSecond: return c.tokensPerStep / step;
    case ValidationMetric::SamplesPerSecond: return double(c.effectiveGlobalBatch) / step;
    case ValidationMetric::StepSeconds: return step;
    }
    return 0;
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

} // namespace

const char* toString(ValidationMetric m)
{
    for (const auto& [name, value] : metricNames())
        if (value == m)
            return name.data();
    return "";
}

std::vector<ValidationCase> loadValidationSet(std::string_view text, Errors& errors)
{
    std::vector<ValidationCase> out;
    const auto doc = parseJsonLimited(text, "validation-runs.json", errors);
    ObjectReader top(doc, "", errors);
    if (!top.isObject())
        return out;
    if (auto schema = top.string("schema", true); schema && *schema != "napkin.validation-set/1")
        top.error("schema", *schema, "unsupported schema", "napkin.validation-set/1");
    const auto* arr = top.child("cases");
    if (!arr || !arr->is_array()) {
        top.error("cases", "", "missing array", "an array of cases");
        return out;
    }
    std::set<std::string> ids;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        ObjectReader r((*arr)[i], "cases[" + std::to_string(i) + "]", errors);
        if (!r.isObject())
            continue;
        ValidationCase c;
        c.id = r.string("id", true).value_or("");
        c.source = r.string("source", true).value_or("");
        c.sourceGroup = r.string("source_group", true).value_or("");
        c.url = r.string("url", true).value_or("");
        c.metric =
            r.choice<ValidationMetric>("metric", metricNames(), true).value_or(ValidationMetric::ModelTflopsPerGpu);
        c.convention = r.string("convention").value_or("");
        const bool flopMetric = c.metric == ValidationMetric::HardwareTflopsPerGpu ||
                                c.metric == ValidationMetric::ModelTflopsPerGpu || c.metric == ValidationMetric::Mfu ||
                                c.metric == ValidationMetric::Hfu;
        if (flopMetric) {
            // A source's convention is one of flops.convention's named values (not "auto").
            const FlopsConvention named[] = {FlopsConvention::Megatron, FlopsConvention::MegatronCore,
                                             FlopsConvention::Palm, FlopsConvention::SixPT};
            std::string allowed;
            bool known = false;
            for (const FlopsConvention f : named) {
                known = known || c.convention == toString(f);
                allowed += (allowed.empty() ? "" : ", ") + std::string(toString(f));
            }
            if (!known)
                r.error("convention", c.convention, "a FLOP metric needs the source's convention", allowed);
        }
        c.published = r.number("published", 0, 1e12, true, true).value_or(0);
        if (const auto* s = r.child("scenario"); s && s->is_object())
            c.scenario = *s;
        else
            r.error("scenario", "", "missing object", "a napkin.scenario/1 document (partial)");
        if (const auto* a = r.child("assumptions"); a && a->is_array())
            for (const auto& x : *a)
                if (x.is_string())
                    c.assumptions.push_back(x.get<std::string>());
        r.finish();
        if (!ids.insert(c.id).second)
            errors.push_back({r.fieldPath("id"), c.id, "duplicate id", "unique ids"});
        out.push_back(std::move(c));
    }
    top.finish();
    return out;
}

const std::vector<ValidationCase>& builtinValidationSet()
{
    static const std::vector<ValidationCase> set = [] {
        Errors errors;
        auto cases = loadValidationSet(embeddedResource("validation-runs.json"), errors);
        if (!errors.empty())
            throw std::logic_error("embedded validation set is invalid: " + describe(errors.front()));
        return cases;
    }();
    return set;
}

const std::vector<ValidationResult>& builtinValidationResults()
{
    static const std::vector<ValidationResult> results = runValidation(builtinValidationSet());
    return results;
}

std::vector<ValidationResult> runValidation(const std::vector<ValidationCase>& cases)
{
    std::vector<ValidationResult> out;
    for (const auto& c : cases) {
        ValidationResult r;
        r.c = &c;
        auto doc = mergeScenario(defaultScenarioJson(), c.scenario);
        doc["step_time"]["mode"] = "predicted";
        if (!c.convention.empty())
            doc["flops"]["convention"] = c.convention;
        Errors errors;
        const Scenario sc = parseScenario(doc, builtinCatalog(), errors);
        if (!errors.empty()) {
            r.failure = describe(errors.front());
            out.push_back(std::move(r));
            continue;
        }
        const Plan p = estimate(sc);
        r.gpu = sc.gpu->name;
        if (!p.stepTime.valid || !(p.time.stepSeconds > 0)) {
            r.failure = "no valid predicted step time";
            out.push_back(std::move(r));
            continue;
        }
        r.predicted = metricOf(c.metric, p, double(sc.cluster.gpus));
        r.error =
            c.metric == ValidationMetric::StepSeconds ? c.published / r.predicted - 1 : r.predicted / c.published - 1;
        r.mfu = p.time.mfu;
        r.mfuCeiling = p.time.mfuCeiling;
        r.memoryPerGpu = p.memory.total;
        r.capacity = p.memory.capacity;
        r.fits = p.memory.fits;
        out.push_back(std::move(r));
    }
    return out;
}

ValidationSummary summarize(const std::vector<ValidationResult>& results)
{
    ValidationSummary s;
    std::vector<double> abs, signedErr;
    std::set<std::string> groups;
    for (const auto& r : results) {
        if (!r.failure.empty())
            continue;
        abs.push_back(std::fabs(r.error));
        signedErr.push_back(r.error);
        groups.insert(r.c->sourceGroup);
        s.overMemory += r.fits ? 0 : 1;
    }
    s.n = int(abs.size());
    s.sources = int(groups.size());
    auto median = [](std::vector<double> v) {
        if (v.empty())
            return 0.0;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    };
    s.medianAbsError = median(abs);
    s.medianError = median(signedErr);
    s.maxAbsError = abs.empty() ? 0 : *std::max_element(abs.begin(), abs.end());
    return s;
}

nlohmann::json validationToJson(const std::vector<ValidationResult>& results, const ValidationSummary& s)
{
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& r : results) {
        nlohmann::json j = {{"id", r.c->id},
                            {"source", r.c->source},
                            {"url", r.c->url},
                            {"metric", toString(r.c->metric)},
                            {"convention", r.c->convention},
                            {"published", r.c->published},
                            {"predicted", r.predicted},
                            {"error", r.error},
                            {"assumptions", r.c->assumptions}};
        if (!r.failure.empty())
            j["failure"] = r.failure;
        else {
            j["predicted_mfu"] = r.mfu;
            j["memory_per_gpu"] = r.memoryPerGpu;
            j["memory_capacity"] = r.capacity;
            j["fits"] = r.fits;
        }
        cases.push_back(std::move(j));
    }
    return {{"schema", "napkin.validate/1"},
            {"cases", cases},
            {"summary",
             {{"n", s.n},
              {"sources", s.sources},
              {"median_abs_error", s.medianAbsError},
              {"max_abs_error", s.maxAbsError},
              {"median_error", s.medianError},
              {"over_memory", s.overMemory}}}};
}

std::string validationToText(const std::vector<ValidationResult>& results, const ValidationSummary& s)
{
    std::string t = "Predicted vs published throughput (error = predicted / published - 1; + is optimistic)\n\n";
    // The widest case id sets the first column.
    std::size_t w = 4;
    for (const auto& r : results)
        w = std::max(w, r.c->id.size());
    t += fmt::format("{:<{}} {:<26} {:>12} {:>12} {:>8} {:>6} {:>8}\n", "case", w, "metric", "published", "predicted",
                     "error", "MFU", "memory");
    for (const auto& r : results) {
        if (!r.failure.empty()) {
            t += r.c->id + ": failed: " + r.failure + "\n";
            continue;
        }
        t += fmt::format("{:<{}} {:<26} {:>12.4g} {:>12.4g} {:>8} {:>6.3f} {:>6.1f}GB{}\n", r.c->id, w,
                         toString(r.c->metric), r.c->published, r.predicted, pct(r.error), r.mfu, r.memoryPerGpu / 1e9,
                         r.fits ? "" : " *");
    }
    t +=
        fmt::format("\n{} cases from {} sources; median error {} (bias)\nmedian |error| {:.1f}%, max |error| {:.1f}%\n",
                    s.n, s.sources, pct(s.medianError), 100 * s.medianAbsError, 100 * s.maxAbsError);
    if (s.overMemory > 0)
        t += fmt::format("* {} of {} cases do not fit their GPU's memory in Napkin's ledger (memory: the busiest "
                         "stage's total), though each ran\n",
                         s.overMemory, s.n);
    return t;
}

std::string validationToMarkdown(const std::vector<ValidationResult>& results, const ValidationSummary& s)
{
    std::string t = "| case | source | metric | published | predicted | error | predicted MFU | memory per GPU "
                    "|\n|---|---|---|---:|---:|---:|---:|---:|\n";
    for (const auto& r : results) {
        if (!r.failure.empty()) {
            t += "| " + r.c->id + " | " + r.c->source + " | failed: " + r.failure + " | | | | | |\n";
            continue;
        }
        t += "| " + r.c->id + " | [" + r.c->source + "](" + r.c->url + ") | " + toString(r.c->metric) +
             fmt::format(" | {:.4g} | {:.4g} | {} | {:.3f} | {:.1f} of {:.0f} GB{} |\n", r.c->published, r.predicted,
                         pct(r.error), r.mfu, r.memoryPerGpu / 1e9, r.capacity / 1e9, r.fits ? "" : " (over)");
    }
    t += fmt::format("\n{} cases from {} sources: median |error| {:.1f}%, max |error| {:.1f}%, median error {}.\n", s.n,
                     s.sources, 100 * s.medianAbsError, 100 * s.maxAbsError, pct(s.medianError));
    if (s.overMemory > 0)
        t += fmt::format("{} of {} cases do not fit their GPU's memory in Napkin's ledger, though each ran.\n",
                         s.overMemory, s.n);
    return t;
}

} // namespace napkin::core
