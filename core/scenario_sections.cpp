// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The sections of a napkin.scenario/1 document, each read strictly (core/scenario.h: parseScenario
// calls them in document order); the checks across sections are in core/scenario_checks.cpp.

#include "scenario_sections.h"

#include "calibration.h"
#include "format.h"
#include "framework.h"
#include "jsonreader.h"
#include "saved_tensors.h"
#include "suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace napkin::core::detail {

namespace {

constexpr std::int64_t kMaxSeqLen = 1LL << 24;
constexpr std::int64_t kMaxBatch = 1LL << 30;
constexpr std::int64_t kMaxGpus = 10000000;

} // namespace

void readModel(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors,
               const std::string& baseDir, const FileReader& reader)
{
    ObjectReader r(node, "model", errors);
    if (!r.isObject())
        return;
    const int selectors = int(r.has("preset")) + int(r.has("hf_config")) + int(r.has("params")) + int(r.has("kind"));
    if (selectors != 1) {
        errors.push_back(
            {"model", shortDump(node),
             selectors == 0 ? "says what model to use with one of preset, hf_config, params or kind"
                            : "has more than one of preset, hf_config, params and kind",
             "{\"preset\": ID} | {\"hf_config\": PATH} | {\"params\": N} | {\"kind\": \"transformer\"|\"mlp\", ...}"});
        r.accept({"preset", "hf_config", "params", "kind"});
        r.acceptAll(kTransformerKeys);
        r.accept({"width", "head"});
        r.finish();
        return;
    }
    ModelSpec& m = sc.model;
    bool loaded = true; // false when an hf_config could not be read: skip the shape checks
    if (r.has("params")) {
        if (auto p = r.number("params", 1e3, 1e15, true)) {
            m.kind = ModelKind::ParamsOnly;
            m.id = "params";
            m.givenParams = std::round(*p);
            std::string count = formatCount(m.givenParams); // "70 B" -> "70B-parameter model"
            count.erase(std::remove(count.begin(), count.end(), ' '), count.end());
            m.name = count + "-parameter model";
            m.shape = deriveShape(m.givenParams, &m.shapeNote);
            m.source = "parameter count as given; shape derived";
        }
        r.finish();
        return;
    }
    if (r.has("kind")) {
        const auto kind =
            r.choice<ModelKind>("kind", {{"transformer", ModelKind::Transformer}, {"mlp", ModelKind::Mlp}}, true);
        if (kind == ModelKind::Mlp) {
            m.kind = ModelKind::Mlp;
            m.id = "mlp";
            m.name = "deep linear model (CS336 lecture 2)";
            m.source = "CS336 lecture 2 toy model: L layers of D x D, optional D -> 1 head";
            m.mlp.width = r.integer("width", 1, 1LL << 20, true).value_or(0);
            m.mlp.layers = r.integer("layers", 1, 100000, true).value_or(0);
            m.mlp.head = r.boolean("head").value_or(false);
            r.finish();
            return;
        }
        if (kind == ModelKind::Transformer) {
            m.kind = ModelKind::Transformer;
            m.id = "custom";
            m.name = "custom transformer";
            m.source = "architecture given in the scenario";
            readTransformerFields(r, m.shape);
            r.finish();
            validateShape(m.shape, "model", errors);
            return;
        }
        r.finish();
        return;
    }
    if (r.has("preset")) {
        const auto id = r.string("preset", true);
        if (id) {
            const Alias* alias = catalog.model(*id) ? nullptr : catalog.modelAlias(*id);
            if (alias && !alias->id.empty())
                sc.aliasNotes.push_back("model.preset \"" + *id + "\" is " + alias->id + " (" + alias->note +
                                        "); write \"" + alias->id + "\" to silence this");
            if (const auto* p = catalog.model(alias && !alias->id.empty() ? alias->id : *id)) {
                m = *p;
            } else {
                r.error("preset", shortDump(*id), "unknown model preset" + didYouMean(*id, catalog.modelIdList()),
                        catalog.modelIds());
                r.acceptAll(kTransformerKeys);
                r.finish();
                return;
            }
        }
    } else {
        const std::size_t before = errors.size();
        loaded = false;
        const auto path = r.string("hf_config", true);
        if (path) {
            std::string full = *path;
            if (!baseDir.empty() && !full.empty() && full.front() != '/')
                full = baseDir + "/" + full;
            std::string why;
            const auto text = reader(full, why);
            if (!text) {
                r.error("hf_config", shortDump(*path), why, "a readable Hugging Face config.json");
            } else {
                const auto cfg = parseJsonLimited(*text);
                if (cfg.is_discarded())
                    r.error("hf_config", shortDump(*path), "is not valid JSON", "a Hugging Face config.json");
                else
                    m = modelFromHfConfig(cfg, "model.hf_config(" + *path + ")", errors);
                loaded = errors.size() == before;
                m.id = "hf:" + *path;
            }
        }
    }
    // Architecture overrides on top of a preset or an HF config.
    bool overridden = false;
    for (const char* k : kTransformerKeys)
        overridden = overridden || r.has(k);
    readTransformerFields(r, m.shape);
    r.finish();
    if (overridden) {
        m.name += " (modified)";
    }
    if (loaded)
        validateShape(m.shape, "model", errors);
}

// training.recompute_modules: Megatron-Core's module names, with recompute "modules" only.
void readRecomputeModules(ObjectReader& r, TrainingConfig& t, Errors& errors)
{
    const char* allowed = "an array of core_attn, mlp, layernorm, moe, moe_act, shared_experts, mla_up_proj";
    const auto* list = r.child("recompute_modules");
    if (!list || list->is_null()) {
        if (t.recompute == Recompute::Modules)
            errors.push_back(
                {"training.recompute_modules", "(missing)", "is needed with training.recompute \"modules\"", allowed});
        return;
    }
    if (t.recompute != Recompute::Modules) {
        errors.push_back({"training.recompute_modules", shortDump(*list),
                          "applies to training.recompute \"modules\" only",
                          "remove it, or set training.recompute to \"modules\""});
        return;
    }
    if (!list->is_array() || list->empty()) {
        errors.push_back({"training.recompute_modules", shortDump(*list), "must be a non-empty array", allowed});
        return;
    }
    for (const auto& item : *list) {
        const std::string name = item.is_string() ? item.get<std::string>() : shortDump(item);
        const std::uint8_t bit = item.is_string() ? recomputeModuleBit(name) : 0;
        if (bit)
            t.recomputeModules |= bit;
        else
            errors.push_back({"training.recompute_modules", name, "unknown recompute module", allowed});
    }
}

// training.routing_imbalance (a number >= 1, or "worst") and training.moe_capacity_factor (absent
// or null: dropless). Their meaning: moe-notes.md §3; what they change: core/moe_run.h.
void readMoeRun(ObjectReader& r, TrainingConfig& t)
{
    if (const auto* v = r.child("routing_imbalance"); v && v->is_string() && v->get<std::string>() == "worst")
        t.routingImbalanceWorst = true;
    else if (v && v->is_string() && v->get<std::string>() == "balanced")
        t.routingImbalance = 1;
    else if (v && !v->is_null() && !v->is_number())
        r.error("routing_imbalance", shortDump(*v), "must be a number or \"worst\"",
                "a number from 1 (balanced) to 1024 (max/mean tokens per expert rank), \"balanced\" or \"worst\"");
    else if (v && !v->is_null())
        t.routingImbalance = r.number("routing_imbalance", 1, 1024).value_or(1);
    if (const auto* v = r.child("moe_capacity_factor"); v && !v->is_null())
        t.capacityFactor = r.number("moe_capacity_factor", 0, 1024, false, true);
    t.moeAuxLoss = r.choice<MoeAuxLoss>("moe_aux_loss", {{"auto", MoeAuxLoss::Auto},
                                                         {"none", MoeAuxLoss::None},
                                                         {"aux_loss", MoeAuxLoss::AuxLoss},
                                                         {"seq_aux_loss", MoeAuxLoss::SeqAuxLoss},
                                                         {"global_aux_loss", MoeAuxLoss::GlobalAuxLoss}})
                       .value_or(MoeAuxLoss::Auto);
    t.moeRouterFp32 = r.choice<bool>("moe_router_dtype", {{"auto", false}, {"fp32", true}}).value_or(false);
}

void readTraining(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "training", errors);
    auto& t = sc.training;
    t.tokens = r.number("tokens", 0, 1e18, true, true).value_or(0);
    t.seqLen = r.integer("seq_len", 1, kMaxSeqLen, true).value_or(0);
    t.microBatch = r.integer("micro_batch", 1, kMaxBatch, true).value_or(0);
    t.globalBatch = r.integer("global_batch", 1, kMaxBatch, true).value_or(0);
    t.recompute = r.choice<Recompute>("recompute",
                                      {{"none", Recompute::None},
                                       {"selective", Recompute::Selective},
                                       {"full", Recompute::Full},
                                       {"modules", Recompute::Modules},
                                       {"op", Recompute::Op}},
                                      true)
                      .value_or(Recompute::None);
    if (const auto* k = r.child("checkpoint_every");
        k && !(k->is_string() && k->get<std::string>() == "auto") && !k->is_null()) {
        t.checkpointEvery = r.integer("checkpoint_every", 1, 100000).value_or(0);
        if (t.checkpointEvery > 0 && t.recompute != Recompute::Full)
            errors.push_back({"training.checkpoint_every", std::to_string(t.checkpointEvery),
                              std::string("applies to training.recompute \"full\" only (recompute is \"") +
                                  toString(t.recompute) + "\")",
                              "\"auto\", or set training.recompute to \"full\""});
    }
    readRecomputeModules(r, t, errors);
    t.flashAttention = r.boolean("flash_attention", true).value_or(true);
    readMoeRun(r, t);
    r.finish();
    if (t.microBatch > 0 && t.globalBatch > 0 && t.globalBatch < t.microBatch)
        errors.push_back({"training.global_batch", std::to_string(t.globalBatch),
                          "is smaller than training.micro_batch " + std::to_string(t.microBatch),
                          "at least training.micro_batch"});
}

void readPrecision(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "precision", errors);
    auto& p = sc.precision;
    const auto planId = r.string("plan", true);
    const PrecisionPlan* plan = planId ? catalog.plan(*planId) : nullptr;
    if (planId && !plan)
        r.error("plan", shortDump(*planId), "unknown precision plan", catalog.planIds());
    if (plan) {
        p.plan = plan->id;
        p.weights = plan->weights;
        p.gradients = plan->gradients;
        p.master = plan->master;
        p.optimizer = plan->optimizer;
        p.activations = plan->activations;
        p.compute = plan->compute;
    }
    // Reads one bucket's dtype into target; "none" (master only) clears it. Returns false on error.
    auto dtype = [&](const char* key, bool storage, bool allowNone, auto& target) {
        const auto s = r.string(key);
        if (!s)
            return;
        if (allowNone && *s == "none") {
            if constexpr (std::is_same_v<std::decay_t<decltype(target)>, std::optional<DType>>)
                target.reset();
            return;
        }
        const auto t = parseDType(*s);
        if (!t || (storage && !info(*t).storable)) {
            r.error(key, shortDump(*s), t ? "tf32 is a compute mode only, not a storage format" : "unknown dtype",
                    std::string(storage ? "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4, mxfp4" : dtypeList()) +
                        (allowNone ? ", none" : "") + (std::string_view(key) == "optimizer" ? ", int8_blockwise" : ""));
            return;
        }
        target = *t;
    };
    dtype("weights", true, false, p.weights);
    dtype("gradients", true, false, p.gradients);
    dtype("master", true, true, p.master);
    if (const auto* o = r.child("optimizer"); o && o->is_string() && o->get<std::string>() == "int8_blockwise") {
        // bitsandbytes' 8-bit optimizers (core/finetune.h): int8 states in blocks of 2,048 with an fp32
        // absmax each; tensors under 4,096 elements keep fp32 states.
        p.optimizerInt8Blockwise = true;
        p.optimizer = DType::Fp32;
    } else {
        dtype("optimizer", true, false, p.optimizer);
    }
    dtype("activations", true, false, p.activations);
    dtype("compute", false, false, p.compute);
    if (const auto* v = r.child("expert_weights");
        v && !v->is_null() && !(v->is_string() && v->get<std::string>() == "auto")) {
        DType expert = p.weights;
        const std::size_t before = r.errors().size();
        dtype("expert_weights", true, false, expert);
        if (r.errors().size() == before)
            p.expertWeights = expert;
    }
    readRecipe(r, p);
    r.finish();
}

// cluster.gpu = "calibration:FILE": a napkin-probe profile (calibration.h), read once here so that
// estimate() does no IO. FILE is relative to the scenario's directory (the cwd without one). Every
// error names cluster.gpu and quotes the profile's own JSON path.
std::shared_ptr<const GpuSpec> readCalibrationGpu(const std::string& value, const Catalog& catalog, Errors& errors,
                                                  const std::string& baseDir, const FileReader& reader)
{
    const std::string path = value.substr(kCalibrationPrefix.size());
    const std::string allowed = "calibration:FILE with a napkin.calibration/1 or /2 profile whose status is ok";
    if (path.empty()) {
        errors.push_back({"cluster.gpu", shortDump(value), "names no profile file", allowed});
        return nullptr;
    }
    std::string full = path;
    if (!baseDir.empty() && full.front() != '/')
        full = baseDir + "/" + full;
    std::string why;
    const auto text = reader(full, why);
    if (!text) {
        errors.push_back({"cluster.gpu", shortDump(value), why + " (" + full + ")", allowed});
        return nullptr;
    }
    Errors inner;
    const auto profile = loadCalibrationProfile(*text, catalog, inner);
    for (const auto& e : inner)
        errors.push_back({"cluster.gpu", shortDump(value),
                          (e.field == "profile" ? "profile" : "profile " + e.field) +
                              (e.value.empty() ? "" : " = " + e.value) + ": " + e.why,
                          e.allowed});
    if (!profile)
        return nullptr;
    auto gpu = std::make_shared<const GpuSpec>(calibratedGpu(*profile, path, catalog));
    if (gpu->bandwidthBytesPerSecond <= 0) {
        errors.push_back(
            {"cluster.gpu", shortDump(value),
             "the profile has no verified memory bandwidth (hbm_copy, hbm_scale, hbm_triad or hbm_read) and "
             "its device \"" +
                 profile->devices.front().name + "\" matches no catalogue GPU",
             allowed});
        return nullptr;
    }
    return gpu;
}

void readCluster(const nlohmann::json& node, const Catalog& catalog, Scenario& sc, Errors& errors,
                 const std::string& baseDir, const FileReader& reader)
{
    ObjectReader r(node, "cluster", errors);
    auto& c = sc.cluster;
    if (auto id = r.string("gpu", true)) {
        if (id->rfind(kCalibrationPrefix, 0) == 0) {
            if (auto g = readCalibrationGpu(*id, catalog, errors, baseDir, reader)) {
                c.gpuId = *id;
                sc.gpu = std::move(g);
            }
        } else if (const auto* g = catalog.gpu(*id)) {
            c.gpuId = *id;
            sc.gpu = std::make_shared<const GpuSpec>(*g);
        } else if (const Alias* a = catalog.gpuAlias(*id); a && !a->candidates.empty()) {
            // Ambiguous ("a100": 40 or 80 GB, SXM or PCIe): refuse and list them; the numbers differ.
            std::string list;
            for (const auto& x : a->candidates)
                list += (list.empty() ? "" : ", ") + x;
            r.error("gpu", shortDump(*id), "is ambiguous: it could be " + list, list);
        } else if (a) {
            c.gpuId = a->id;
            sc.gpu = std::make_shared<const GpuSpec>(*catalog.gpu(a->id));
            sc.aliasNotes.push_back("cluster.gpu \"" + *id + "\" is " + a->id + " (" + a->note + "); write \"" + a->id +
                                    "\" to silence this");
        } else {
            r.error("gpu", shortDump(*id), "unknown GPU" + didYouMean(*id, catalog.gpuIdList()),
                    catalog.gpuIds() + ", or calibration:FILE");
        }
    }
    c.gpus = r.integer("gpus", 1, kMaxGpus, true).value_or(0);
    c.mfu = r.number("mfu", 0, 1, true, true).value_or(0);
    c.pricePerGpuHour = r.number("price_per_gpu_hour", 0, 10000, true).value_or(0);
    // A board power limit below the TDP lowers the sustained clock (core/achievable.h). The GPU's
    // TDP is its maximum limit: no cap above it.
    if (const auto* pl = r.child("power_limit"); pl && !pl->is_null()) {
        const double tdp = sc.gpu ? sc.gpu->tdpWatts : 0;
        if (tdp > 0)
            c.powerLimitWatts = r.number("power_limit", 50, tdp).value_or(0);
        else
            r.error("power_limit", shortDump(*pl), "needs a GPU with a published TDP",
                    "leave it out for " + (sc.gpu ? sc.gpu->name : std::string("this GPU")));
    }
    readClusterHost(r, c);
    r.finish();
}

const char* unfusedOptimizerValue(const Scenario& sc)
{
    switch (sc.optimizerImpl) {
    case OptimizerImpl::Foreach: return "\"foreach\"";
    case OptimizerImpl::ForLoop: return "\"forloop\"";
    default: return "";
    }
}

void readOptimizer(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "optimizer", errors);
    sc.optimizer = r.choice<OptimizerKind>("name",
                                           {{"sgd", OptimizerKind::Sgd},
                                            {"momentum", OptimizerKind::Momentum},
                                            {"adagrad", OptimizerKind::AdaGrad},
                                            {"rmsprop", OptimizerKind::RmsProp},
                                            {"adam", OptimizerKind::Adam},
                                            {"adamw", OptimizerKind::AdamW},
                                            {"lion", OptimizerKind::Lion},
                                            {"adafactor", OptimizerKind::Adafactor},
                                            {"muon", OptimizerKind::Muon}},
                                           true)
                       .value_or(OptimizerKind::AdamW);
    sc.optimizerImpl = r.choice<OptimizerImpl>("implementation",
                                               {{"auto", OptimizerImpl::Auto},
                                                {"fused", OptimizerImpl::Fused},
                                                {"foreach", OptimizerImpl::Foreach},
                                                {"forloop", OptimizerImpl::ForLoop}},
                                               true)
                           .value_or(OptimizerImpl::Auto);
    const bool adam = sc.optimizer == OptimizerKind::Adam || sc.optimizer == OptimizerKind::AdamW;
    if (const char* unfused = unfusedOptimizerValue(sc); *unfused && !adam)
        r.error("implementation", unfused,
                "the foreach and forloop updates are priced for adam and adamw only (optimizer.name is " +
                    std::string(toString(sc.optimizer)) + ")",
                "\"auto\" or \"fused\" with this optimizer");
    readPaged(r, sc.pagedOptimizer);
    r.finish();
}

void readParallel(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "parallel", errors);
    auto& pa = sc.parallel;
    pa.zeroStage = int(r.integer("zero", 0, 3, true).value_or(0));
    pa.tp = int(r.integer("tp", 1, 4096).value_or(1));
    pa.pp = int(r.integer("pp", 1, 4096).value_or(1));
    pa.virtualStages = int(r.integer("virtual_stages", 1, 512).value_or(1));
    pa.cp = int(r.integer("cp", 1, 4096).value_or(1));
    pa.cpComm =
        r.choice<CpComm>("cp_comm", {{"p2p", CpComm::P2p}, {"all_gather", CpComm::AllGather}, {"a2a", CpComm::A2a}})
            .value_or(CpComm::P2p);
    if (const auto* d = r.child("dp"); d && !(d->is_string() && d->get<std::string>() == "auto") && !d->is_null())
        pa.dp = r.integer("dp", 1, kMaxGpus).value_or(0);
    pa.sequenceParallel = r.boolean("sequence_parallel").value_or(false);
    pa.gpusPerNode = int(r.integer("gpus_per_node", 1, 1024).value_or(8));
    pa.firstStageLayers = int(r.integer("first_stage_layers", 0, 100000).value_or(0));
    pa.lastStageLayers = int(r.integer("last_stage_layers", 0, 100000).value_or(0));
    if (const auto* lay = r.child("pipeline_layout"); lay && !lay->is_null()) {
        bool ok = lay->is_array() && !lay->empty() && lay->size() <= 4096;
        for (std::size_t i = 0; ok && i < lay->size(); ++i)
            ok = (*lay)[i].is_number_integer() && (*lay)[i].get<std::int64_t>() >= 0 &&
                 (*lay)[i].get<std::int64_t>() <= 100000;
        if (ok)
            for (const auto& x : *lay)
                pa.pipelineLayout.push_back(int(x.get<std::int64_t>()));
        else
            r.error("pipeline_layout", shortDump(*lay), "must be an array of layer counts, one per pipeline stage",
                    "pp integers >= 0 summing to model.layers");
    }
    pa.ep = int(r.integer("ep", 1, 4096).value_or(1));
    if (const auto* e = r.child("etp"); e && e->is_string() && e->get<std::string>() != "auto") {
        r.error("etp", shortDump(*e), "must be an integer or \"auto\"",
                "an integer from 1 to 4096, or \"auto\" (= tp)");
    } else if (e && !e->is_string() && !e->is_null()) {
        pa.etpAuto = false;
        pa.etp = int(r.integer("etp", 1, 4096).value_or(1));
    }
    if (const auto* lim = r.child("ep_node_limit"); lim && !lim->is_null())
        pa.epNodeLimit = int(r.integer("ep_node_limit", 1, 1024).value_or(0));
    // parallel.pipeline_schedule: "auto" resolves in checkScenario (interleaved when virtual_stages > 1).
    const int schedule = r.choice<int>("pipeline_schedule", {{"auto", -1},
                                                             {"1f1b", int(PipelineSchedule::OneFOneB)},
                                                             {"interleaved", int(PipelineSchedule::Interleaved)},
                                                             {"dualpipe", int(PipelineSchedule::DualPipe)}})
                             .value_or(-1);
    pa.scheduleAuto = schedule < 0;
    if (schedule >= 0)
        pa.schedule = PipelineSchedule(schedule);
    pa.fsdp =
        r.choice<Fsdp>(
             "fsdp", {{"none", Fsdp::None}, {"full", Fsdp::Full}, {"grad_op", Fsdp::GradOp}, {"hybrid", Fsdp::Hybrid}})
            .value_or(Fsdp::None);
    r.finish();
}

void readStepTime(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "step_time", errors);
    auto& st = sc.stepTime;
    st.mode = r.choice<TimeMode>("mode", {{"mfu", TimeMode::Mfu}, {"predicted", TimeMode::Predicted}})
                  .value_or(TimeMode::Mfu);
    if (const auto* c = r.child("intra_node_bandwidth"); c && !(c->is_string() && c->get<std::string>() == "auto"))
        st.intraNodeBandwidth = r.number("intra_node_bandwidth", 1e8, 1e14).value_or(0);
    st.interNodeBandwidth = r.number("inter_node_bandwidth", 1e8, 1e14).value_or(5e10);
    auto autoBool = [&r](const char* key, bool& value, bool& isAuto) {
        const auto* c = r.child(key);
        isAuto = !c || c->is_null() || (c->is_string() && c->get<std::string>() == "auto");
        if (!isAuto) {
            if (c->is_boolean())
                value = c->get<bool>();
            else
                r.error(key, shortDump(*c), "must be a boolean or \"auto\"",
                        "true, false or \"auto\" (the framework's rule)");
        }
    };
    autoBool("overlap_dp", st.overlapDp, st.overlapDpAuto);
    autoBool("overlap_tp", st.overlapTp, st.overlapTpAuto);
    autoBool("fsdp_copies", st.fsdpCopies, st.fsdpCopiesAuto);
    autoBool("overlap_ep", st.overlapEp, st.overlapEpAuto);
    autoBool("fp8_dispatch", st.fp8Dispatch, st.fp8DispatchAuto);
    autoBool("moe_router_fusion", st.moeRouterFusion, st.moeRouterFusionAuto);
    // "auto": on with DeepSeek-V3's block-wise recipe, which quantises before the dispatch (§3.3.3);
    // Megatron-Core's default dispatches BF16 tokens and quantises after the permutation.
    if (st.fp8DispatchAuto)
        st.fp8Dispatch = sc.precision.recipe == LowPrecisionRecipe::Blockwise;
    else if (st.fp8Dispatch &&
             (sc.precision.recipe == LowPrecisionRecipe::None || !(sc.precision.lowPrecisionGemms & kLowMlp)))
        r.error("fp8_dispatch", "true",
                "needs an FP8 recipe on the MLP GEMMs (precision.recipe, precision.low_precision_gemms)",
                "false or \"auto\" with this precision");
    st.moeDispatcher = r.choice<MoeDispatcher>("moe_dispatcher", {{"alltoall", MoeDispatcher::AllToAll},
                                                                  {"deepep", MoeDispatcher::DeepEp}})
                           .value_or(MoeDispatcher::AllToAll);
    // SMs the dispatch and combine kernels take: up to half the GPU's SMs, or "auto".
    if (const auto* c = r.child("ep_comm_sms");
        c && !c->is_null() && !(c->is_string() && c->get<std::string>() == "auto")) {
        const int most = sc.gpu && sc.gpu->smCount > 1 ? sc.gpu->smCount / 2 : 1024;
        if (c->is_string())
            r.error("ep_comm_sms", shortDump(*c), "must be an integer or \"auto\"",
                    "an integer from 1 to " + std::to_string(most) + ", or \"auto\"");
        else
            st.epCommSms = int(r.integer("ep_comm_sms", 1, most).value_or(0));
    }
    st.groupedGemm =
        r.choice<GroupedGemm>("grouped_gemm", {{"streams", GroupedGemm::Streams}, {"single", GroupedGemm::Single}})
            .value_or(GroupedGemm::Streams);
    st.crossEntropy = r.choice<CrossEntropyChoice>("cross_entropy", {{"auto", CrossEntropyChoice::Auto},
                                                                     {"unfused", CrossEntropyChoice::Unfused},
                                                                     {"fused", CrossEntropyChoice::Fused}})
                          .value_or(CrossEntropyChoice::Auto);
    st.framework = r.choice<Framework>("framework", {{"auto", Framework::Auto},
                                                     {"megatron", Framework::Megatron},
                                                     {"torchtitan", Framework::Torchtitan},
                                                     {"deepspeed", Framework::Deepspeed}})
                       .value_or(Framework::Auto);
    st.frameworkAuto = st.framework == Framework::Auto;
    st.attentionKernel =
        r.choice<AttentionKernelChoice>("attention_kernel", {{"auto", AttentionKernelChoice::Auto},
                                                             {"flash1", AttentionKernelChoice::Flash1},
                                                             {"flash2", AttentionKernelChoice::Flash2},
                                                             {"flash3", AttentionKernelChoice::Flash3}})
            .value_or(AttentionKernelChoice::Auto);
    st.kernelFusion = r.choice<KernelFusion>("kernel_fusion", {{"auto", KernelFusion::Auto},
                                                               {"fused", KernelFusion::Fused},
                                                               {"eager", KernelFusion::Eager}})
                          .value_or(KernelFusion::Auto);
    st.kernelFusionAuto = st.kernelFusion == KernelFusion::Auto;
    st.cudaGraphs = r.boolean("cuda_graphs").value_or(false);
    if (const auto* c = r.child("collective_efficiency"); c && !(c->is_string() && c->get<std::string>() == "auto"))
        st.collectiveEfficiency = r.number("collective_efficiency", 0.01, 1.0).value_or(0);
    st.saveEverySteps = r.integer("save_every_steps", 0, 1000000000).value_or(0);
    if (const auto* c = r.child("save_bandwidth"); c && !c->is_null())
        st.saveBandwidth = r.number("save_bandwidth", 1e6, 1e13).value_or(0);
    if (st.saveEverySteps > 0 && st.saveBandwidth <= 0)
        r.error("save_bandwidth", "null", "required when step_time.save_every_steps > 0",
                "bytes/s per GPU writing its checkpoint shard, 1e6 to 1e13");
    r.finish();
    resolveFramework(sc);
}

void readFlops(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "flops", errors);
    sc.flops = r.choice<FlopsConvention>("convention",
                                         {{"auto", FlopsConvention::Auto},
                                          {"6PT", FlopsConvention::SixPT},
                                          {"palm", FlopsConvention::Palm},
                                          {"megatron", FlopsConvention::Megatron},
                                          {"megatron-core", FlopsConvention::MegatronCore}},
                                         true)
                   .value_or(FlopsConvention::Auto);
    r.finish();
}

void readOverhead(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "overhead", errors);
    auto& o = sc.overhead;
    o.cudaContextBytes = r.bytes("cuda_context_bytes", 0, 1e12, true).value_or(0);
    o.workspaceBytes = r.bytes("workspace_bytes", 0, 1e12, true).value_or(0);
    if (const auto* c = r.child("comm_buffer_bytes"); c && !(c->is_string() && c->get<std::string>() == "auto"))
        o.commBufferBytes = r.bytes("comm_buffer_bytes", 0, 1e12);
    o.allocatorFraction = r.number("allocator_fraction", 0, 1, true).value_or(0);
    r.finish();
}

} // namespace napkin::core::detail
