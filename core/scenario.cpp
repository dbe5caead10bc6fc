// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "scenario.h"

#include "scenario_sections.h"

#include "jsonreader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <type_traits>
#include <sstream>

namespace napkin::core {

const char* toString(Recompute r)
{
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    case Recompute::Modules: return "modules";
    case Recompute::Op: return "op";
    }
    return "";
}

const char* toString(OptimizerKind o)
{
    switch (o) {
    case OptimizerKind::Sgd: return "sgd";
    case OptimizerKind::Momentum: return "momentum";
    case OptimizerKind::AdaGrad: return "adagrad";
    case OptimizerKind::RmsProp: return "rmsprop";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
    case OptimizerKind::Lion: return "lion";
    case OptimizerKind::Adafactor: return "adafactor";
    case OptimizerKind::Muon: return "muon";
    }
    return "";
}

const char* toString(Fsdp f)
{
    switch (f) {
    case Fsdp::None: return "none";
    case Fsdp::Full: return "full";
    case Fsdp::GradOp: return "grad_op";
    case Fsdp::Hybrid: return "hybrid";
    }
    return "";
}

const char* toString(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved";
    case PipelineSchedule::DualPipe: return "dualpipe";
    }
    return "";
}

const char* toString(TimeMode m) { return m == TimeMode::Predicted ? "predicted" : "mfu"; }

int effectiveZeroStage(const Scenario& sc)
{
    switch (sc.parallel.fsdp) {
    case Fsdp::Full:
    case Fsdp::Hybrid: return 3;
    case Fsdp::GradOp: return 2;
    case Fsdp::None: break;
    }
    return sc.parallel.zeroStage;
}

std::int64_t gradientGroupSize(const Scenario& sc, std::int64_t dp)
{
    // Context-parallel ranks hold the same parameters: the gradients are reduced, and ZeRO / FSDP
    // states sharded, over data × context parallel ranks (Megatron-Core
    // get_data_parallel_group(with_context_parallel=True); torchtitan's dp_shard_cp mesh; DeepSpeed's
    // sequence-data-parallel group).
    return std::max<std::int64_t>(1, dp) * std::max(1, sc.parallel.cp);
}

std::int64_t shardGroupSize(const Scenario& sc, std::int64_t dp)
{
    const std::int64_t group = gradientGroupSize(sc, dp);
    if (sc.parallel.fsdp != Fsdp::Hybrid)
        return group;
    // HYBRID_SHARD shards inside a node: the ranks of that group that share one node (Megatron rank
    // order puts TP innermost, then CP and DP).
    const std::int64_t inner = std::int64_t(std::max(1, sc.parallel.tp));
    const std::int64_t perNode = std::max<std::int64_t>(1, sc.parallel.gpusPerNode / inner);
    return std::max<std::int64_t>(1, std::min(group, perNode));
}

bool dualPipeMicroBatchesOk(std::int64_t m, std::int64_t pp) { return m % 2 == 0 && m >= 2 * pp; }

PipelineSchedule resolvedSchedule(PipelineSchedule requested, int virtualStages)
{
    if (requested == PipelineSchedule::DualPipe)
        return requested;
    return virtualStages > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB;
}

std::int64_t expertDataParallelSize(const ParallelConfig& pa)
{
    const std::int64_t ranks = std::int64_t(std::max(1, pa.tp)) * std::max(1, pa.cp) * std::max<std::int64_t>(1, pa.dp);
    const std::int64_t fold = std::int64_t(std::max(1, pa.ep)) * std::max(1, pa.etp);
    return std::max<std::int64_t>(1, ranks / fold);
}

std::vector<double> stageLayerCounts(const ParallelConfig& pa, std::int64_t layers)
{
    const std::int64_t pp = std::max(1, pa.pp);
    std::vector<double> out;
    if (std::int64_t(pa.pipelineLayout.size()) == pp) {
        for (int x : pa.pipelineLayout)
            out.push_back(double(x));
        return out;
    }
    if ((pa.firstStageLayers > 0 || pa.lastStageLayers > 0) && pp >= 2) {
        const double middle = pp > 2 ? double(layers - pa.firstStageLayers - pa.lastStageLayers) / double(pp - 2) : 0.0;
        out.assign(std::size_t(pp), middle);
        out.front() = pa.firstStageLayers;
        out.back() = pa.lastStageLayers;
        return out;
    }
    out.assign(std::size_t(pp), double(layers) / double(pp));
    return out;
}

const char* toString(Framework f)
{
    switch (f) {
    case Framework::Auto: return "auto";
    case Framework::Megatron: return "megatron";
    case Framework::Torchtitan: return "torchtitan";
    case Framework::Deepspeed: return "deepspeed";
    }
    return "";
}

const char* toString(AttentionKernelChoice k)
{
    switch (k) {
    case AttentionKernelChoice::Auto: return "auto";
    case AttentionKernelChoice::Flash1: return "flash1";
    case AttentionKernelChoice::Flash2: return "flash2";
    case AttentionKernelChoice::Flash3: return "flash3";
    }
    return "";
}

const char* toString(KernelFusion k)
{
    switch (k) {
    case KernelFusion::Auto: return "auto";
    case KernelFusion::Fused: return "fused";
    case KernelFusion::Eager: return "eager";
    }
    return "";
}

const char* toString(FlopsConvention f)
{
    switch (f) {
    case FlopsConvention::Auto: return "auto";
    case FlopsConvention::SixPT: return "6PT";
    case FlopsConvention::Palm: return "palm";
    case FlopsConvention::Megatron: return "megatron";
    case FlopsConvention::MegatronCore: return "megatron-core";
    }
    return "";
}

int optimizerStates(OptimizerKind o)
{
    // CS336 lecture 2's lattice: SGD keeps nothing; momentum, AdaGrad (sum of g^2), RMSProp (EMA of
    // g^2) one array; Adam/AdamW two (m, v). Lion (Chen et al. 2023) and Muon (Jordan et al. 2024)
    // keep one momentum. Adafactor (Shazeer & Stern 2018) is factored and counted separately.
    switch (o) {
    case OptimizerKind::Sgd: return 0;
    case OptimizerKind::Momentum:
    case OptimizerKind::AdaGrad:
    case OptimizerKind::RmsProp:
    case OptimizerKind::Lion:
    case OptimizerKind::Muon: return 1;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: return 2;
    case OptimizerKind::Adafactor: return 1;
    }
    return 0;
}

const nlohmann::json& defaultScenarioJson()
{
    static const nlohmann::json doc = nlohmann::json::parse(embeddedResource("default-scenario.json"));
    return doc;
}

nlohmann::json mergeScenario(const nlohmann::json& base, const nlohmann::json& user)
{
    if (!user.is_object() || !base.is_object())
        return user;
    nlohmann::json out = base;
    for (const auto& [key, value] : user.items()) {
        if (key != "model" && value.is_object() && out.contains(key) && out[key].is_object())
            out[key] = mergeScenario(out[key], value);
        else
            out[key] = value;
    }
    // A layer that names parallel.fsdp without parallel.zero set it last: the sharding rule the app
    // applies to a changed control decides (the base's ZeRO stage, the defaults' 1, yields).
    if (const auto pa = user.find("parallel");
        pa != user.end() && pa->is_object() && pa->contains("fsdp") && !pa->contains("zero"))
        resolveShardingChoice(out, "parallel.fsdp");
    return out;
}

void applySet(nlohmann::json& doc, std::string_view assignment, Errors& errors)
{
    const auto eq = assignment.find('=');
    if (eq == std::string_view::npos || eq == 0) {
        errors.push_back({"--set", std::string(assignment), "expected PATH=VALUE", "e.g. cluster.gpus=8"});
        return;
    }
    const std::string text(assignment.substr(eq + 1));
    nlohmann::json value = parseJsonLimited(text);
    if (value.is_discarded())
        value = text;
    setPath(doc, std::string(assignment.substr(0, eq)), value, errors);
}

void setPath(nlohmann::json& doc, const std::string& path, const nlohmann::json& value, Errors& errors)
{
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    std::vector<std::string> parts;
    std::stringstream ss(path);
    for (std::string p; std::getline(ss, p, '.');) {
        if (p.empty()) {
            errors.push_back({path, text, "empty path component", "dotted keys, e.g. training.seq_len"});
            return;
        }
        parts.push_back(p);
    }
    if (parts.empty()) {
        errors.push_back({"--set", text, "empty path", "dotted keys, e.g. training.seq_len"});
        return;
    }
    if (!doc.is_object())
        doc = nlohmann::json::object();
    if (parts.size() == 2 && parts[0] == "model" &&
        (parts[1] == "preset" || parts[1] == "hf_config" || parts[1] == "params" || parts[1] == "kind")) {
        doc["model"] = nlohmann::json{{parts[1], value}};
        return;
    }
    nlohmann::json* node = &doc;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        nlohmann::json& next = (*node)[parts[i]];
        if (next.is_null())
            next = nlohmann::json::object();
        if (!next.is_object()) {
            errors.push_back(
                {path, text, "'" + parts[i] + "' is not an object", "a path into the scenario's sections"});
            return;
        }
        node = &next;
    }
    (*node)[parts.back()] = value;
}

void resolveShardingChoice(nlohmann::json& doc, std::string_view changedPath)
{
    // training.checkpoint_every applies to full recompute only: leaving full resets it to "auto".
    if (changedPath == "training.recompute") {
        if (const auto tr = doc.find("training"); tr != doc.end() && tr->is_object()) {
            const auto rc = tr->find("recompute");
            if (rc != tr->end() && *rc != "full" && tr->contains("checkpoint_every"))
                (*tr)["checkpoint_every"] = "auto";
            // "modules" needs a module list: start from the attention core (= "selective"); the list
            // goes when the policy changes again.
            if (rc != tr->end() && *rc == "modules" && !tr->contains("recompute_modules"))
                (*tr)["recompute_modules"] = nlohmann::json::array({"core_attn"});
            else if (rc != tr->end() && *rc != "modules")
                tr->erase("recompute_modules");
        }
    }
    const auto pa = doc.find("parallel");
    if (pa == doc.end() || !pa->is_object())
        return;
    const auto fsdp = pa->find("fsdp");
    const bool sharded = fsdp != pa->end() && fsdp->is_string() && *fsdp != "none";
    if (!sharded)
        return;
    if (changedPath == "parallel.fsdp")
        (*pa)["zero"] = 0;
    else if (changedPath == "parallel.zero")
        (*pa)["fsdp"] = "none";
}

std::optional<std::string> readTextFile(const std::string& path, std::string& error)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = "cannot open file";
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        error = "read error";
        return std::nullopt;
    }
    return ss.str();
}

Scenario parseScenario(const nlohmann::json& doc, const Catalog& catalog, Errors& errors, const std::string& baseDir,
                       const FileReader& reader)
{
    using namespace detail;
    Scenario sc;
    ObjectReader top(doc, "", errors);
    if (!top.isObject())
        return sc;
    if (auto s = top.string("schema"); s && *s != "napkin.scenario/1")
        top.error("schema", shortDump(*s), "unsupported schema", "napkin.scenario/1");
    sc.name = top.string("name").value_or("");
    top.string("description");
    auto section = [&](const char* key) -> const nlohmann::json& {
        static const nlohmann::json empty = nlohmann::json::object();
        const auto* v = top.child(key);
        return v ? *v : empty;
    };
    if (const auto* m = top.child("model"))
        readModel(*m, catalog, sc, errors, baseDir, reader);
    else
        errors.push_back({"model", "", "missing required section", "{\"preset\": ID} | {\"hf_config\": PATH} | ..."});
    readTraining(section("training"), sc, errors);
    readPrecision(section("precision"), catalog, sc, errors);
    readOptimizer(section("optimizer"), sc, errors);
    readCluster(section("cluster"), catalog, sc, errors, baseDir, reader);
    readParallel(section("parallel"), sc, errors);
    readStepTime(section("step_time"), sc, errors);
    readFlops(section("flops"), sc, errors);
    readOverhead(section("overhead"), sc, errors);
    readOffload(section("offload"), sc, errors);
    readFinetune(section("finetune"), sc, errors);
    top.finish();
    checkScenario(sc, errors);
    checkOffload(sc, errors);
    checkFinetune(sc, errors);
    return sc;
}

std::optional<nlohmann::json> parseScenarioText(std::string_view text, const std::string& origin, Errors& errors)
{
    auto user = parseJsonLimited(text, origin, errors);
    if (user.is_discarded())
        return std::nullopt;
    if (!user.is_object()) {
        errors.push_back({"", shortDump(user), origin + " must hold a JSON object", "{...}"});
        return std::nullopt;
    }
    return mergeScenario(defaultScenarioJson(), user);
}

Scenario defaultScenario()
{
    Errors errors;
    auto sc = parseScenario(defaultScenarioJson(), builtinCatalog(), errors);
    if (!errors.empty())
        throw std::logic_error("built-in default scenario is invalid: " + describe(errors.front()));
    return sc;
}

} // namespace napkin::core
