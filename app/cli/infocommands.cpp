// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli's information commands: presets (the catalogues), dtype (the dtype explorer) and
// reconcile (a measured run against its plan).
#include "clicommon.h"
#include "cli.h"

#include "catalog.h"
#include "dtypeexplain.h"
#include "estimate.h"
#include "format.h"
#include "jsonreader.h"
#include "reconcile.h"

#include <fmt/format.h>

#include <ostream>

namespace napkin::cli::detail {

using core::Errors;
using nlohmann::json;

namespace {

json gpusJson()
{
    json arr = json::array();
    for (const auto& g : core::builtinCatalog().gpus) {
        json peaks = json::object();
        const char* names[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
        for (std::size_t i = 0; i < 6; ++i)
            peaks[names[i]] = g.denseFlopsPerSecond[i] > 0 ? json(g.denseFlopsPerSecond[i]) : json(nullptr);
        arr.push_back({{"id", g.id},
                       {"name", g.name},
                       {"vendor", g.vendor},
                       {"memory_bytes", g.memoryBytes},
                       {"bandwidth_bytes_per_second", g.bandwidthBytesPerSecond},
                       {"dense_flops_per_second", peaks},
                       {"sparse_listed", g.sparseListed},
                       {"tdp_watts", g.tdpWatts > 0 ? json(g.tdpWatts) : json(nullptr)},
                       {"interconnect", g.interconnectName},
                       {"source", g.sourceFlops}});
    }
    return arr;
}

json modelsJson()
{
    json arr = json::array();
    for (const auto& m : core::builtinCatalog().models) {
        const auto c = core::countParams(m);
        arr.push_back({{"id", m.id},
                       {"name", m.name},
                       {"params", c.total},
                       {"active_params", c.active},
                       {"experts", m.shape.moe.experts},
                       {"top_k", m.shape.moe.topK},
                       {"layers", m.shape.layers},
                       {"d_model", m.shape.dModel},
                       {"heads", m.shape.heads},
                       {"kv_heads", m.shape.kvHeads},
                       {"ffn", m.shape.ffn},
                       {"ffn_kind", core::toString(m.shape.ffnKind)},
                       {"vocab", m.shape.vocab},
                       {"source", m.source}});
    }
    return arr;
}

json plansJson()
{
    json arr = json::array();
    for (const auto& p : core::builtinCatalog().plans) {
        const double states = core::bytesPerValue(p.weights) + core::bytesPerValue(p.gradients) +
                              (p.master ? core::bytesPerValue(*p.master) : 0.0) + 2 * core::bytesPerValue(p.optimizer);
        arr.push_back({{"id", p.id},
                       {"name", p.name},
                       {"weights", core::info(p.weights).id},
                       {"gradients", core::info(p.gradients).id},
                       {"master", p.master ? json(core::info(*p.master).id) : json("none")},
                       {"optimizer", core::info(p.optimizer).id},
                       {"activations", core::info(p.activations).id},
                       {"compute", core::info(p.compute).id},
                       {"bytes_per_param_with_adam", states},
                       {"description", p.description}});
    }
    return arr;
}

} // namespace

int cmdDtype(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    if (o.positional.size() != 1) {
        err << "error: dtype takes one VALUE (e.g. 1e-8, 1.001, 448)\n";
        return InvalidInput;
    }
    const auto x = core::parseQuantity(o.positional[0]);
    if (!x) {
        err << "error: VALUE = " << o.positional[0]
            << ": not a finite number (allowed: decimals such as 1e-8, -0.3, 65504)\n";
        return InvalidInput;
    }
    const auto all = core::storeInAll(*x);
    if (o.format == "json") {
        json formats = json::array();
        for (const auto& v : all)
            formats.push_back(core::toJson(v));
        return writeOutput(o, json{{"value", *x}, {"formats", formats}}.dump(1) + "\n", out, err);
    }
    std::string t = "How " + o.positional[0] + " is stored\n";
    for (const auto& v : all) {
        const std::string fields = v.signBits + " " + v.exponentBits + " " + v.mantissaBits;
        t += fmt::format("  {:<9} {:<34} stored {:<14.8g} rel. error {:<10.3g} spacing {:<10.3g}{}{}\n",
                         core::info(v.type).id, fields, v.stored, v.relativeError, v.spacing,
                         v.underflow ? "  UNDERFLOW" : "", v.overflow ? "  OVERFLOW" : "");
    }
    return writeOutput(o, t, out, err);
}

int cmdReconcile(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    Errors errors;
    core::Measurement m;
    auto number = [&](const std::optional<std::string>& v, const char* flag, std::optional<double>& target) {
        if (!v)
            return;
        const auto d = core::parseQuantity(*v);
        if (!d)
            errors.push_back({flag, *v, "not a number", "a positive number, e.g. 2.5, 1.2M, 74e9"});
        else
            target = *d;
    };
    number(o.stepTime, "--step-time", m.stepSeconds);
    number(o.tokensPerSecond, "--tokens-per-second", m.tokensPerSecond);
    auto bytes = [&](const std::optional<std::string>& v, const char* flag, std::optional<double>& target) {
        if (!v)
            return;
        const auto d = core::parseBytes(*v);
        if (!d)
            errors.push_back({flag, *v, "not a size", core::kByteSuffixes});
        else
            target = *d;
    };
    bytes(o.peakAllocated, "--peak-allocated", m.peakAllocatedBytes);
    bytes(o.peakReserved, "--peak-reserved", m.peakReservedBytes);
    const auto sc =
        errors.empty() ? loadScenario(o, o.positional.empty() ? nullptr : o.positional.data(), errors) : std::nullopt;
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto plan = core::estimate(*sc);
    const auto r = core::reconcile(*sc, plan, m, errors);
    if (!errors.empty()) {
        printErrors(errors, err);
        return InvalidInput;
    }
    if (o.format == "json")
        return writeOutput(o, core::reconciliationToJson(r, plan).dump(1) + "\n", out, err);
    std::string t = "Measured against the plan for " + plan.modelName + " on " + std::to_string(sc->cluster.gpus) +
                    " x " + plan.hardware.name() + "\n";
    t += fmt::format(
        "  throughput   {} tokens/s (step {:.4g} s)\n  MFU          {:.3f} (assumed {:.2f})\n  HFU          {:.3f}\n",
        core::formatCount(r.tokensPerSecond), r.stepSeconds, r.mfu, plan.time.mfu, r.hfu);
    if (r.hasMemory) {
        t += fmt::format("  memory       predicted {} allocated, measured {}: gap {} ({:+.1f}%)\n",
                         core::formatBytes(r.predictedAllocated), core::formatBytes(r.peakAllocated),
                         core::formatBytes(r.gapBytes), 100 * r.gapFraction);
        for (const auto& g : r.reasons)
            t += fmt::format("    {:3.0f}%  {} ({})\n", 100 * g.explainsFraction, g.reason, core::formatBytes(g.bytes));
    }
    for (const auto& w : r.warnings)
        t += "  warning: " + w + "\n";
    return writeOutput(o, t, out, err);
}

int cmdPresets(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    const std::string which = o.positional.empty() ? "all" : o.positional[0];
    if (which != "all" && which != "gpus" && which != "models" && which != "plans") {
        err << "error: presets " << which << ": unknown catalogue (allowed: gpus, models, plans)\n";
        return InvalidInput;
    }
    json j = json::object();
    if (which == "all" || which == "gpus")
        j["gpus"] = gpusJson();
    if (which == "all" || which == "models")
        j["models"] = modelsJson();
    if (which == "all" || which == "plans")
        j["plans"] = plansJson();
    if (o.format == "json")
        return writeOutput(o, j.dump(1) + "\n", out, err);
    std::string t;
    if (j.contains("gpus")) {
        t += "GPUs (dense peaks; vendor sheets that print 2:4-sparse figures are halved)\n";
        for (const auto& g : j["gpus"]) {
            const auto& bf = g["dense_flops_per_second"]["bf16"];
            const auto& f16 = g["dense_flops_per_second"]["fp16"];
            const double tensor = bf.is_number() ? bf.get<double>() : f16.is_number() ? f16.get<double>() : 0.0;
            t += fmt::format("  {:<16} {:<40} {:6.0f} GB {:6.3f} TB/s {:8.1f} TFLOP/s bf16/fp16\n",
                             g["id"].get<std::string>(), g["name"].get<std::string>(),
                             g["memory_bytes"].get<double>() / 1e9,
                             g["bandwidth_bytes_per_second"].get<double>() / 1e12, tensor / 1e12);
        }
    }
    if (j.contains("models")) {
        t += "Models\n";
        for (const auto& m : j["models"]) {
            t += fmt::format("  {:<16} {:<24} {:16.0f} parameters\n", m["id"].get<std::string>(),
                             m["name"].get<std::string>(), m["params"].get<double>());
        }
    }
    if (j.contains("plans")) {
        t += "Precision plans (bytes/param with Adam: weights + gradients + master + 2 states)\n";
        for (const auto& p : j["plans"]) {
            t += fmt::format("  {:<18} {:5.2f}  {}\n", p["id"].get<std::string>(),
                             p["bytes_per_param_with_adam"].get<double>(), p["name"].get<std::string>());
        }
    }
    return writeOutput(o, t, out, err);
}

} // namespace napkin::cli::detail
