// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "format.h"
#include "scenario.h"
#include "format_memory.h"

#include "buckets.h"
#include "calibration.h"

#include "estimate.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <utility>

namespace napkin::core {

const char* toString(Pass p) { return p == Pass::Forward ? "forward" : "backward"; }
const char* toString(Bound b) { return b == Bound::Memory ? "memory" : "compute"; }

// "Llama 3 70B, 15 T tokens, 1,024 × NVIDIA H100 SXM5 80GB": for titles when the scenario has no name
// of its own. Made from the plan's inputs every time, so it never goes stale.
std::string Plan::derivedName() const
{
    std::string name = modelName.empty() ? std::string("a model") : modelName;
    if (nameTokens > 0)
        name += ", " + formatCount(nameTokens) + " tokens";
    name += ", " + formatGrouped(double(nameGpus)) + " × " + (hardware.gpu ? hardware.name() : std::string("GPU"));
    return name;
}

namespace {

std::string render(const Derivation& d, bool values)
{
    std::string out;
    const std::string f = d.formula;
    for (std::size_t i = 0; i < f.size();) {
        if (f[i] == '{') {
            const auto close = f.find('}', i);
            const std::string sym = f.substr(i + 1, close - i - 1);
            std::string text = sym;
            if (values)
                for (int k = 0; k < d.termCount; ++k)
                    if (sym == d.terms[std::size_t(k)].symbol)
                        text = formatTerm(d.terms[std::size_t(k)].value);
            out += text;
            i = close + 1;
        } else {
            out += f[i++];
        }
    }
    return out;
}

std::string csvEscape(const std::string& s)
{
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string o = "\"";
    for (char c : s)
        o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

nlohmann::json perStageJson(const MemoryLedger& m)
{
    auto a = nlohmann::json::array();
    for (std::size_t i = 0; i < m.perStage.size(); ++i) {
        const auto& st = m.perStage[i];
        nlohmann::json stage = {{"stage", i},
                                {"params", st.params},
                                {"tensors", st.tensors},
                                {"in_flight_micro_batches", st.inFlight},
                                {"peak_phase", st.peakPhase}};
        for (const auto& b : kMemoryBuckets)
            if (b.stageBytes)
                stage[b.id] = bucketBytes(b, st);
        a.push_back(std::move(stage));
    }
    return a;
}

// memory.activation_tensors: one layer's saved tensors on the reported rank (core/saved_tensors.h).
nlohmann::json activationTensorsJson(const LayerTensors& lt)
{
    auto a = nlohmann::json::array();
    for (int i = 0; i < lt.count; ++i) {
        const auto& t = lt.tensors[std::size_t(i)];
        auto shape = nlohmann::json::array();
        for (int d = 0; d < t.dims; ++d)
            shape.push_back(t.shape[std::size_t(d)]);
        a.push_back({{"name", t.name},
                     {"op", t.op},
                     {"shape", std::move(shape)},
                     {"dtype", t.dtype},
                     {"bytes", t.bytes},
                     {"kept", t.kept},
                     {"dropped_by", droppedByNames(t.droppedBy)}});
    }
    return a;
}

nlohmann::json breakdownJsonImpl(const StepTimeBreakdown& b)
{
    auto link = [](double bw, bool crosses) { return nlohmann::json{{"bandwidth", bw}, {"crosses_nodes", crosses}}; };
    return {{"compute", b.compute},
            {"recompute", b.recompute},
            {"tp_comm", b.tpComm},
            {"cp_comm", b.cpComm},
            {"ep_comm", b.epComm},
            {"pp_comm", b.ppComm},
            {"bubble", b.bubble},
            {"dp_comm", b.dpComm},
            {"optimizer", b.optimizer},
            {"offload", b.offload},
            {"overheads",
             {{"launch", b.launch},
              {"grad_clip", b.gradClip},
              {"checkpoint_save", b.checkpointSave},
              {"comm_sm_share", b.commSmShare},
              {"fsdp_copies", b.fsdpCopies},
              {"data_loading", 0.0},
              {"note", "data loading is assumed hidden behind compute (prefetching loaders)"}}},
            {"step", b.step},
            {"micro_batch_seconds", b.microBatchSeconds},
            {"dp_comm_before_overlap", b.dpCommTotal},
            {"cp_comm_before_overlap", b.cpCommTotal},
            {"tp_comm_before_overlap", b.tpCommTotal},
            {"tp_amax_reductions", b.tpAmaxReductions},
            {"tp_amax_seconds", b.tpAmaxSeconds},
            {"ep_comm_before_overlap", b.epCommTotal},
            {"pp_comm_before_overlap", b.ppCommTotal},
            {"pipeline_schedule", b.pipelineSchedule},
            {"collective_efficiency", b.collectiveEfficiency},
            {"executed_flops", b.executedFlops},
            {"kernels_per_micro_batch", b.kernelsPerMicroBatch},
            {"framework", b.framework},
            {"links",
             {{"tp", link(b.tpBandwidth, b.tpCrossesNodes)},
              {"cp", link(b.cpBandwidth, b.cpCrossesNodes)},
              {"pp", link(b.ppBandwidth, b.ppCrossesNodes)},
              {"dp", link(b.dpBandwidth, b.dpCrossesNodes)},
              {"ep", link(b.epBandwidth, b.epCrossesNodes)},
              {"edp", link(b.edpBandwidth, b.edpCrossesNodes)}}},
            {"ep_bytes_per_all_to_all", b.epBytesPerMicroBatch},
            {"ep_off_node_share", b.epOffNodeShare},
            {"ep_nvlink_share", b.epNvlinkShare >= 0 ? nlohmann::json(b.epNvlinkShare) : nlohmann::json(nullptr)}};
}

} // namespace

nlohmann::json stepTimeToJson(const StepTimeBreakdown& b) { return breakdownJsonImpl(b); }

// The result of a derivation with its unit: bytes as "13.48 GB (13,476,831,232 bytes)", other integers
// below 10^12 grouped ("6,738,415,616 parameters"), the rest as formatTerm ("989.5e12 FLOP/s").
std::string resultText(const Derivation& d)
{
    const std::string_view unit = d.unit;
    const double v = d.value;
    const bool integer = std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e12; // counts, not rates
    if (unit == "bytes" && std::isfinite(v))
        return std::fabs(v) >= 1e3 ? formatBytes(v) + " (" + formatGrouped(v) + " bytes)" : formatGrouped(v) + " bytes";
    const std::string number = integer ? formatGrouped(v) : formatTerm(v);
    return unit.empty() ? number : number + " " + std::string(unit);
}

std::string formulaText(const Derivation& d) { return render(d, false); }
std::string substitutedText(const Derivation& d) { return render(d, true); }
std::string sourceText(const Derivation& d, const Plan& plan)
{
    if (d.source == kSourceGpu)
        return plan.hardware.source();
    if (d.source == kSourceGpuMemory)
        return plan.hardware.memorySource();
    if (d.source == kSourceGpuTdp)
        return plan.hardware.tdpSource();
    if (d.source == kSourceGpuAchievable)
        return plan.hardware.achievableFlopsSource();
    if (d.source == kSourceGpuAchievableBandwidth)
        return plan.hardware.achievableBandwidthSource();
    // With a calibration profile the achievable rates C_ach and beta_ach are measured: say so beside
    // the formula's own source (rendered lazily, estimate() stays cheap). C and beta stay the spec's.
    if (const auto& cal = plan.hardware.gpu ? plan.hardware.gpu->calibration : nullptr) {
        const auto dtype = parseDType(plan.hardware.computeDtype);
        const bool peakMeasured = dtype && cal->peakMeasured(info(*dtype).peak);
        bool usesC = false, usesBeta = false;
        for (int i = 0; i < d.termCount; ++i) {
            usesC = usesC || std::string_view(d.terms[std::size_t(i)].symbol) == "C_ach";
            usesBeta = usesBeta || std::string_view(d.terms[std::size_t(i)].symbol) == "beta_ach";
        }
        std::string measured;
        if (usesC)
            measured = peakMeasured ? "C_ach " : "";
        if (usesBeta && cal->bandwidthMeasured())
            measured += measured.empty() ? "beta_ach " : "and beta_ach ";
        if (!measured.empty())
            return std::string(d.source) + "; " + measured + cal->citation();
    }
    return d.source;
}

namespace {

// "q, k, v" as ["q", "k", "v"].
nlohmann::json nameArray(const std::string& names)
{
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t at = 0; at < names.size();) {
        const std::size_t comma = names.find(", ", at);
        out.push_back(names.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? names.size() : comma + 2;
    }
    return out;
}

// plan-schema.md "finetune": what trains, what stays frozen and how the base is stored.
nlohmann::json finetuneJson(const FinetuneCounts& f)
{
    using nlohmann::json;
    const bool peft = f.adapters > 0;
    const json targets = peft ? nameArray(loraTargetNames(f.targets)) : json::array();
    return {{"method", f.method},
            {"lora_rank", peft ? json(f.loraRank) : json(nullptr)},
            {"lora_targets", targets},
            {"adapters", f.adapters},
            {"base_dtype", peft ? json(f.baseDtype) : json(nullptr)},
            {"quantised_params", f.quantised},
            {"base_bytes_per_value", peft ? json(f.baseBytesPerValue) : json(nullptr)},
            {"small_tensor_params", f.smallTensorParams},
            {"optimizer_int8_blockwise", f.int8States},
            {"paged_optimizer", f.pagedOptimizer}};
}

} // namespace

nlohmann::json planToJson(const Plan& p)
{
    using nlohmann::json;
    json j;
    j["schema"] = "napkin.plan/1";
    j["scenario"] = p.title();
    j["scenario_name_given"] = !p.scenarioName.empty();
    j["derived_name"] = p.derivedName();
    j["model"] = p.modelName;
    j["params"] = {{"total", p.params.total},
                   {"embedding", p.params.embedding},
                   {"positional", p.params.positional},
                   {"head", p.params.head},
                   {"per_layer", p.params.perLayer},
                   {"layers", p.params.layers},
                   {"non_embedding", p.params.nonEmbedding},
                   {"active", p.params.active},
                   {"active_excl_embedding", p.params.activeExclEmbedding},
                   {"routed_experts", p.params.routedExperts},
                   {"router", p.params.router},
                   {"mtp", p.params.mtp},
                   {"trainable", p.finetune.trainable},
                   {"frozen", p.finetune.frozen},
                   {"derived_shape", p.params.derivedShape}};
    j["finetune"] = finetuneJson(p.finetune);
    if (p.moe.applies) // plan-schema.md "moe": the run's mixture-of-experts properties
        j["moe"] = {{"expert_ranks", p.moe.expertRanks},
                    {"expert_tensor_ranks", p.moe.expertTensorRanks},
                    {"expert_data_parallel", p.moe.expertDataParallel},
                    {"crosses_nodes", p.moe.crossesNodes},
                    {"routing_imbalance", p.moe.routingImbalance},
                    {"routing_imbalance_worst", p.moe.worst},
                    {"capacity_factor", p.moe.capacityFactor > 0 ? json(p.moe.capacityFactor) : json(nullptr)},
                    {"rows_per_expert", p.moe.rowsPerExpert},
                    {"expert_capacity", p.moe.expertCapacity > 0 ? json(p.moe.expertCapacity) : json(nullptr)},
                    {"expert_weights", p.moe.expertWeights},
                    {"expert_params_per_rank", p.moe.expertParamsPerRank},
                    {"expert_weight_bytes_per_rank", p.moe.expertWeightBytesPerRank}};
    const auto& m = p.memory;
    json perGpu = json::object();
    for (const auto& b : kMemoryBuckets)
        perGpu[b.id] = bucketBytes(b, m);
    perGpu["total"] = m.total;
    j["memory"] = {{"per_gpu", perGpu},
                   {"overhead_detail",
                    {{"cuda_context", m.overheadContext},
                     {"workspace", m.overheadWorkspace},
                     {"comm_buffers", m.overheadComm},
                     {"cuda_graphs", m.overheadCudaGraphs},
                     {"allocator_reserve", m.overheadAllocator}}},
                   {"activations_per_layer", m.activationsPerLayer},
                   {"peak_phase", m.peakPhase},
                   {"recompute",
                    {{"policy", toString(m.recompute)},
                     {"modules", recomputeModuleList(m.recomputeModules)},
                     {"rematerialised", m.rematerialised}}},
                   {"activation_tensors", activationTensorsJson(m.layerTensors)},
                   {"gathered_weights", m.gatheredWeights},
                   {"timeline", timelineJson(m)},
                   {"comm_buffers", commBuffersJson(m.comm)},
                   {"host", hostMemoryJson(m.host)},
                   {"checkpoint_every", m.checkpointEvery},
                   {"checkpoint_best_k", m.checkpointBestK},
                   {"states_bytes_per_param", m.statesBytesPerParam},
                   {"params_per_rank", m.paramsPerRank},
                   {"most_loaded_stage", m.mostLoadedStage},
                   {"per_stage", perStageJson(m)},
                   {"capacity", m.capacity},
                   {"headroom", m.headroom},
                   {"tensor_room", m.tensorRoom},
                   {"fits", m.fits}};
    j["parallel"] = {{"data_parallel", p.compute.dataParallel}, {"bubble_fraction", m.bubbleFraction}};
    const auto& c = p.compute;
    j["compute"] = {{"convention", c.convention},
                    {"flops_per_token", c.flopsPerToken},
                    {"training_flops", c.trainingFlops},
                    {"hardware_flops", c.hardwareFlops},
                    {"flops_per_step", c.flopsPerStep},
                    {"tokens_per_step", c.tokensPerStep},
                    {"steps", c.steps},
                    {"accumulation_steps", c.accumulationSteps},
                    {"effective_global_batch", c.effectiveGlobalBatch},
                    {"requested_global_batch", c.requestedGlobalBatch},
                    {"batch_scaled", c.batchScaled},
                    {"data_parallel", c.dataParallel}};
    if (p.stepTime.valid && std::string_view(p.time.mode) == "predicted")
        j["compute"]["executed_flops_per_step"] = p.stepTime.executedFlops;
    const auto& t = p.time;
    j["time"] = {{"seconds", t.seconds},
                 {"days", t.days},
                 {"gpu_hours", t.gpuHours},
                 {"mfu", t.mfu},
                 {"hfu", t.hfu},
                 {"step_seconds", t.stepSeconds},
                 {"tokens_per_second", t.tokensPerSecond},
                 {"mode", t.mode}};
    if (p.stepTime.valid && std::string_view(t.mode) == "predicted") {
        j["time"]["breakdown"] = stepTimeToJson(p.stepTime);
        j["time"]["breakdown_at_peak"] = stepTimeToJson(p.stepTimeAtPeak);
        j["time"]["mfu_ceiling"] = t.mfuCeiling;
    }
    j["cost"] = {{"usd", p.cost.usd}, {"energy_kwh", p.cost.energyKwh}};
    const auto& h = p.hardware;
    j["hardware"] = {{"id", h.id()},
                     {"name", h.name()},
                     {"compute_dtype", h.computeDtype},
                     {"peak_flops", h.peakFlops},
                     {"vector_flops", h.vectorFlops},
                     {"bandwidth", h.bandwidth},
                     {"ridge", h.ridge},
                     {"memory_bytes", h.memoryBytes},
                     {"tdp_watts", h.tdpWatts},
                     {"source", h.source()},
                     {"memory_source", h.memorySource()},
                     {"tdp_source", h.tdpSource()},
                     {"origin", h.gpu->origin},
                     {"bandwidth_source", h.bandwidthSource()},
                     {"achievable_flops", h.achievableFlops},
                     {"achievable_flops_source", h.achievableFlopsSource()},
                     {"achievable_bandwidth", h.achievableBandwidth},
                     {"achievable_bandwidth_source", h.achievableBandwidthSource()},
                     {"recipe", h.recipe},
                     {"low_precision_gemms", nameArray(lowPrecisionGemmNames(h.lowPrecisionGemms))},
                     {"peak_flops_16", h.peakFlops16},
                     {"achievable_flops_16", h.achievableFlops16}};
    if (h.sustainedShare < 1)
        j["hardware"]["sustained_share"] = h.sustainedShare;
    if (h.powerLimitWatts > 0) {
        j["hardware"]["power_limit_watts"] = h.powerLimitWatts;
        j["hardware"]["clock_factor"] = h.clockFactor;
    }
    if (h.gpu->calibration)
        j["hardware"]["calibration"] = calibrationToJson(*h.gpu->calibration);
    json ops = json::array();
    for (const auto& op : p.ops) {
        ops.push_back(
            {{"name", op.name},
             {"pass", toString(op.pass)},
             {"unit", op.unit == OpUnit::Tensor ? "tensor" : "vector"},
             {"flops", op.flops},
             {"bytes", op.bytes},
             {"intensity", op.intensity},
             {"ceiling", op.ceiling},
             {"attainable_flops", op.attainable},
             {"bound", toString(op.bound)},
             {"time_s", op.timeSeconds},
             {"kind", op.kind == OpKind::Gemm ? "gemm" : (op.kind == OpKind::Attention ? "attention" : "elementwise")},
             {"executed_flops", op.executedFlops},
             {"achievable_seconds", op.achievableSeconds},
             {"efficiency", op.efficiency},
             {"efficiency_source", op.efficiencySource},
             {"kernels", op.kernels},
             {"implementation", op.implementation},
             {"count", op.count}});
        if (op.groupedShare > 0)
            ops.back()["grouped_gemm"] = {{"share", op.groupedShare},
                                          {"m", op.grouped[0]},
                                          {"n", op.grouped[1]},
                                          {"k", op.grouped[2]},
                                          {"groups", op.grouped[3]}};
        if (op.chunks > 1) // tensor-parallel overlap: m / chunks rows per GEMM, one after another
            ops.back()["chunks"] = op.chunks;
    }
    j["roofline"] = {{"ridge", h.ridge}, {"ops", ops}};
    json ders = json::array();
    for (const auto& d : p.derivations)
        ders.push_back({{"quantity", d.quantity},
                        {"formula", formulaText(d)},
                        {"substituted", substitutedText(d)},
                        {"value", d.value},
                        {"unit", d.unit},
                        {"source", sourceText(d, p)}});
    j["derivations"] = ders;
    json warns = json::array();
    for (const auto& w : p.warnings)
        warns.push_back({{"code", w.code}, {"message", w.message}});
    j["warnings"] = warns;
    return j;
}

// "  measured     by napkin-probe (FILE): bf16 790 TFLOP/s (spec 989.5, 80%), ..." for a profile.
static std::string measuredText(const Plan& p)
{
    if (!p.hardware.gpu || !p.hardware.gpu->calibration)
        return {};
    const auto& cal = *p.hardware.gpu->calibration;
    const auto dtype = parseDType(p.hardware.computeDtype);
    static constexpr std::array<const char*, 6> columns{"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
    std::string out = "  measured     " + cal.citation().substr(std::string_view("measured ").size()) + ":";
    bool first = true;
    for (const auto& r : calibrationRows(cal)) {
        const bool compute = dtype && r.key == columns[std::size_t(info(*dtype).peak)];
        if (r.key != "bandwidth" && !compute)
            continue;
        const double scale = 1e12; // TB/s and TFLOP/s
        out += std::string(first ? " " : ", ") + r.key + " ";
        out += r.planned ? formatNumber(r.measured / scale) : "not measured, spec " + formatNumber(r.spec / scale);
        out += r.unit == "B/s" ? " TB/s" : " TFLOP/s";
        if (r.planned && r.spec > 0)
            out +=
                " (spec " + formatNumber(r.spec / scale) + ", " + formatNumber(std::round(r.achieved() * 100)) + "%)";
        first = false;
    }
    return out + "\n"; // cal.warnings are among the plan's warnings
}

namespace {

const char* phaseText(std::string_view phase)
{
    return phase == "loss" ? "at the loss (logits and the fp32 loss path held)"
           : phase == "backward_start"
               ? "at the start of the backward (the first recomputed layers back, the logits freed)"
           : phase == "optimizer_step" ? "in the optimizer step (activations freed, the update's temporaries)"
                                       : "at the end of the forward of the micro-batches in flight";
}

std::string shapeText(const SavedTensor& t)
{
    std::string s = "[";
    for (int d = 0; d < t.dims; ++d)
        s += (d ? " × " : "") + formatNumber(t.shape[std::size_t(d)]);
    return s + "]";
}

// One layer's saved tensors: the kept ones line by line, the dropped ones named in one line.
void tensorsText(std::ostream& o, const MemoryLedger& m, bool markdown)
{
    const auto& lt = m.layerTensors;
    if (lt.count == 0)
        return;
    std::string policy = toString(m.recompute);
    if (m.recompute == Recompute::Modules)
        policy += " (" + recomputeModuleNames(m.recomputeModules) + ")";
    o << (markdown ? "## Activations per layer\n\n" : "Activations per layer (memory.activation_tensors)\n")
      << (markdown ? "" : "  ") << "recompute \"" << policy << "\": " << formatBytes(lt.kept) << " kept of "
      << formatBytes(lt.autograd) << " autograd would keep; the peak falls " << phaseText(m.peakPhase) << "\n";
    if (markdown)
        o << "\n| kept tensor | shape | dtype | bytes | saved for |\n|---|---|---|---:|---|\n";
    std::string dropped;
    int droppedCount = 0;
    for (int i = 0; i < lt.count; ++i) {
        const auto& t = lt.tensors[std::size_t(i)];
        if (!t.kept) {
            if ((t.droppedBy & kDropNone) == 0) {
                dropped += (dropped.empty() ? "" : ", ") + std::string(t.name);
                ++droppedCount;
            }
            continue;
        }
        if (markdown)
            o << "| " << t.name << " | " << shapeText(t) << " | " << t.dtype << " | " << formatBytes(t.bytes) << " | "
              << t.op << " |\n";
        else
            o << fmt::format("  kept     {:<28} {:<22} {:<5} {:>10}  {}\n", t.name, shapeText(t), t.dtype,
                             formatBytes(t.bytes), t.op);
    }
    if (droppedCount > 0)
        o << (markdown ? "\nRecomputed for the backward" : "  recomputed") << " (" << droppedCount << " tensors, "
          << formatBytes(m.rematerialised) << " back at once): " << dropped << (markdown ? ".\n" : "\n");
    o << "\n";
}

} // namespace

std::string planToText(const Plan& p)
{
    std::ostringstream o;
    const auto& m = p.memory;
    o << "Napkin plan: " << p.title() << "\n";
    if (const std::string derived = p.derivedName(); !p.scenarioName.empty() && p.scenarioName != derived)
        o << "  plan         " << derived << "\n"; // the user's name may be stale: say what it is
    o << "  model        " << p.modelName << ", " << humanNumber(p.params.total, Quantity::Parameters);
    if (p.params.active < p.params.total) // mixture of experts: what a token runs through
        o << " (" << formatCount(p.params.active) << " active per token, " << formatCount(p.params.activeExclEmbedding)
          << " without the input embedding)";
    o << "\n";
    if (p.finetune.adapters > 0)
        o << "  fine-tune    " << p.finetune.method << ": " << formatCount(p.finetune.trainable) << " trainable ("
          << fmt::format("{:.2f}", 100 * p.finetune.trainable / (p.params.total + p.finetune.adapters)) << "%), rank "
          << formatNumber(p.finetune.loraRank) << " on " << loraTargetNames(p.finetune.targets) << "; frozen base in "
          << p.finetune.baseDtype << "\n";
    o << "  hardware     " << p.hardware.name() << ": " << formatNumber(p.hardware.peakFlops / 1e12)
      << " TFLOP/s dense " << p.hardware.computeDtype << ", " << formatNumber(p.hardware.bandwidth / 1e12)
      << " TB/s, ridge " << formatNumber(std::round(p.hardware.ridge * 100) / 100) << " FLOP/byte\n"
      << measuredText(p);
    if (p.hardware.lowPrecisionGemms != 0) // an FP8 / FP4 recipe: what runs in it, what stays in 16 bits
        o << "  recipe       " << p.hardware.recipe
          << " scaling: " << lowPrecisionGemmNames(p.hardware.lowPrecisionGemms) << " GEMMs in "
          << p.hardware.computeDtype << ", the rest at the 16-bit rate (" << formatNumber(p.hardware.peakFlops16 / 1e12)
          << " TFLOP/s)\n";
    o << "\n";
    o << "Memory per GPU\n";
    auto row = [&](const char* name, double v) {
        o << fmt::format("  {:<18} {:>12}  {:5.1f}%\n", name, formatBytes(v), m.total > 0 ? 100 * v / m.total : 0);
    };
    for (const auto& b : kMemoryBuckets)
        row(b.label, bucketBytes(b, m));
    o << "  total              " << formatBytes(m.total) << " of " << formatBytes(m.capacity) << ": "
      << (m.fits ? "fits, headroom " + formatBytes(m.headroom) : "DOES NOT FIT, short by " + formatBytes(-m.headroom))
      << "\n";
    if (m.host.total > 0 || m.host.nvme > 0)
        o << "  host (offload)     " << formatBytes(m.host.total) << " per GPU, " << formatBytes(m.host.perNode)
          << " per node" << (m.host.capacityPerNode > 0 ? " of " + formatBytes(m.host.capacityPerNode) : std::string())
          << (m.host.nvme > 0 ? "; NVMe " + formatBytes(m.host.nvme) + " per GPU" : std::string()) << "; "
          << formatBytes(m.host.pcieBytesPerStep) << " over the host link per step\n";
    o << "\n";
    tensorsText(o, m, false);
    o << "Compute and time (" << p.compute.convention << ")\n";
    o << "  FLOPs per token    " << humanNumber(p.compute.flopsPerToken, Quantity::Flops) << "\n";
    o << "  training FLOPs     " << humanNumber(p.compute.trainingFlops, Quantity::Flops) << "\n";
    if (p.compute.batchScaled)
        o << "  batch              SCALED: global batch " << formatGrouped(double(p.compute.requestedGlobalBatch))
          << " requested, " << formatGrouped(double(p.compute.effectiveGlobalBatch)) << " trained ("
          << formatGrouped(double(p.compute.dataParallel)) << " data-parallel ranks)\n";
    const bool predicted = std::string_view(p.time.mode) == "predicted";
    o << fmt::format("  time               {} ({}) at MFU {:.2f}, HFU {:.2f}{}\n",
                     humanNumber(p.time.days, Quantity::Days), humanNumber(p.time.seconds, Quantity::Seconds),
                     p.time.mfu, p.time.hfu, predicted ? " (predicted)" : "");
    if (predicted && p.stepTime.valid) {
        const auto& b = p.stepTime;
        o << fmt::format(
            "  step (predicted)   {:.4g} s = compute {:.4g} + recompute {:.4g} + TP {:.4g} + CP {:.4g} + {}PP {:.4g} + "
            "bubble {:.4g} + DP {:.4g} + optimizer {:.4g}\n",
            b.step, b.compute, b.recompute, b.tpComm, b.cpComm,
            b.epComm > 0 ? fmt::format("EP {:.4g} + ", b.epComm) : std::string(), b.ppComm, b.bubble, b.dpComm,
            b.optimizer);
        if (b.pipeCommHidden > 0)
            o << fmt::format(
                "  {}EP {:.4g} s + PP {:.4g} s of traffic, {:.4g} s of it hidden behind the paired "
                "{} (their {:.0f} SMs: in overheads)\n",
                std::string_view(b.pipelineSchedule) == "dualpipe" ? "DualPipe           " : "EP overlap         ",
                b.epCommTotal, b.ppCommTotal, b.pipeCommHidden,
                std::string_view(b.pipelineSchedule) == "dualpipe" ? "chunks" : "micro-batches", b.pipeCommSms);
        if (b.offload > 0)
            o << fmt::format("  offload            {:.4g} s per step (host link, NVMe, CPU optimizer update)\n",
                             b.offload);
    }
    o << "  GPU-hours          " << humanNumber(p.time.gpuHours, Quantity::GpuHours) << "\n"
      << "  cost               " << humanNumber(p.cost.usd, Quantity::Usd) << "\n"
      << "  energy             " << humanNumber(p.cost.energyKwh, Quantity::EnergyKwh) << " (GPUs at TDP)\n";
    // What needs attention comes before the long list of derivations.
    if (!p.warnings.empty()) {
        o << "\nWarnings\n";
        for (const auto& w : p.warnings)
            o << "  " << w.code << ": " << w.message << "\n";
    }
    o << "\nDerivations\n";
    for (const auto& d : p.derivations)
        o << "  " << d.quantity << " = " << formulaText(d) << " = " << substitutedText(d) << " = " << resultText(d)
          << "\n      [" << sourceText(d, p) << "]\n";
    return o.str();
}

std::string planToMarkdown(const Plan& p)
{
    std::ostringstream o;
    const auto& m = p.memory;
    o << "# Napkin plan: " << p.title() << "\n\n";
    if (const std::string derived = p.derivedName(); !p.scenarioName.empty() && p.scenarioName != derived)
        o << "Plan: " << derived << "\n\n";
    o << "Model: " << p.modelName << ", " << formatNumber(p.params.total) << " parameters"
      << (p.params.active < p.params.total ? " (" + formatNumber(p.params.active) + " active per token)"
                                           : std::string())
      << (p.finetune.adapters > 0
              ? std::string(". Fine-tuning: ") + p.finetune.method + ", " + formatNumber(p.finetune.trainable) +
                    " trainable, frozen base in " + p.finetune.baseDtype
              : std::string())
      << ". Hardware: " << p.hardware.name() << " (" << formatNumber(p.hardware.peakFlops / 1e12) << " TFLOP/s dense "
      << p.hardware.computeDtype << ", " << formatNumber(p.hardware.bandwidth / 1e12) << " TB/s).\n\n";
    o << "## Memory per GPU\n\n| bucket | bytes | GB |\n|---|---:|---:|\n";
    auto row = [&](const char* name, double v) {
        o << "| " << name << " | " << formatNumber(v) << " | " << formatBytes(v) << " |\n";
    };
    for (const auto& b : kMemoryBuckets)
        row(b.label, bucketBytes(b, m));
    row("**total**", m.total);
    row("capacity", m.capacity);
    o << "\n"
      << (m.fits ? "Fits, headroom " + formatBytes(m.headroom)
                 : "**Does not fit**: short by " + formatBytes(-m.headroom))
      << ".\n\n";
    if (m.host.total > 0 || m.host.nvme > 0)
        o << "Offload: " << formatBytes(m.host.total) << " per GPU on the host (" << formatBytes(m.host.perNode)
          << " per node)" << (m.host.nvme > 0 ? ", " + formatBytes(m.host.nvme) + " per GPU on NVMe" : std::string())
          << "; " << formatBytes(m.host.pcieBytesPerStep) << " over the host link per step.\n\n";
    tensorsText(o, m, true);
    o << "## Compute and time\n\n| quantity | value |\n|---|---:|\n";
    o << "| FLOPs per token (" << p.compute.convention << ") | "
      << humanNumber(p.compute.flopsPerToken, Quantity::Flops) << " |\n";
    o << "| training FLOPs | " << humanNumber(p.compute.trainingFlops, Quantity::Flops) << " |\n";
    o << "| time | " << humanNumber(p.time.days, Quantity::Days) << " |\n";
    o << "| GPU-hours | " << humanNumber(p.time.gpuHours, Quantity::GpuHours) << " |\n";
    o << "| cost | " << humanNumber(p.cost.usd, Quantity::Usd) << " |\n";
    o << "| energy (GPUs at TDP) | " << humanNumber(p.cost.energyKwh, Quantity::EnergyKwh) << " |\n";
    o << "| MFU / HFU | " << formatNumber(p.time.mfu) << " / " << formatNumber(p.time.hfu) << " |\n";
    o << "\n## Roofline (one layer)\n\n| op | pass | FLOPs | bytes | intensity | bound | time (s) "
         "|\n|---|---|---:|---:|---:|---|---:|\n";
    for (const auto& op : p.ops)
        o << "| " << op.name << " | " << toString(op.pass) << " | " << formatNumber(op.flops) << " | "
          << formatNumber(op.bytes) << " | " << formatNumber(op.intensity) << " | " << toString(op.bound) << " | "
          << formatNumber(op.timeSeconds) << " |\n";
    if (!p.warnings.empty()) {
        o << "\n## Warnings\n\n";
        for (const auto& w : p.warnings)
            o << "- **" << w.code << "**: " << w.message << "\n";
    }
    o << "\n## Derivations\n\n| quantity | formula | substituted | value | source |\n|---|---|---|---:|---|\n";
    for (const auto& d : p.derivations)
        o << "| " << d.quantity << " | " << formulaText(d) << " | " << substitutedText(d) << " | " << resultText(d)
          << " | " << sourceText(d, p) << " |\n";
    return o.str();
}

std::string planToCsv(const Plan& p, const Scenario& sc)
{
    std::ostringstream o;
    auto number = [&](const char* name, double v, const char* unit) {
        o << "input," << name << "," << fmt::format("{:.17g}", v) << "," << unit << "\n";
    };
    auto text = [&](const char* name, const std::string& v) {
        o << "input," << name << "," << csvEscape(v) << ",text\n";
    };
    const auto& pa = sc.parallel;
    text("model", sc.model.name);
    number("tokens", sc.training.tokens, "tokens");
    number("seq_len", double(sc.training.seqLen), "tokens");
    number("micro_batch", double(sc.training.microBatch), "sequences");
    number("global_batch", double(p.compute.effectiveGlobalBatch), "sequences");
    text("gpu", sc.gpu ? sc.gpu->id : sc.cluster.gpuId);
    number("gpus", double(sc.cluster.gpus), "GPUs");
    number("tp", pa.tp, "ranks");
    number("pp", pa.pp, "ranks");
    number("cp", pa.cp, "ranks");
    number("dp", double(p.compute.dataParallel), "ranks");
    number("virtual_stages", pa.virtualStages, "chunks");
    text("pipeline_schedule", toString(pa.schedule));
    number("ep", pa.ep, "ranks");
    if (sc.model.kind == ModelKind::Transformer && isMoe(sc.model.shape)) { // the expert layout (Megatron-Core)
        number("etp", pa.etp, "ranks");
        number("edp", double(pa.edp), "ranks");
    }
    number("zero", pa.zeroStage, "stage");
    text("fsdp", toString(pa.fsdp));
    text("recompute", toString(sc.training.recompute));
    text("precision_plan", sc.precision.plan);
    text("step_time_mode", toString(sc.stepTime.mode));
    if (sc.stepTime.mode == TimeMode::Mfu)
        number("mfu", sc.cluster.mfu, "fraction");
    std::string rows = planToCsv(p);
    const auto header = rows.find('\n') + 1; // after "section,name,value,unit"
    return rows.substr(0, header) + o.str() + rows.substr(header);
}

std::string planToCsv(const Plan& p)
{
    std::ostringstream o;
    o << "section,name,value,unit\n";
    const auto& m = p.memory;
    auto row = [&](const char* sec, const std::string& name, double v, const char* unit) {
        o << sec << "," << csvEscape(name) << "," << fmt::format("{:.17g}", v) << "," << unit << "\n";
    };
    row("params", "total", p.params.total, "parameters");
    row("params", "active", p.params.active, "parameters");
    row("params", "trainable", p.finetune.trainable, "parameters");
    for (const auto& b : kMemoryBuckets)
        row("memory", b.id, bucketBytes(b, m), "bytes");
    row("memory", "total", m.total, "bytes");
    row("memory", "capacity", m.capacity, "bytes");
    row("compute", "flops_per_token", p.compute.flopsPerToken, "FLOP");
    row("compute", "training_flops", p.compute.trainingFlops, "FLOP");
    row("time", "seconds", p.time.seconds, "s");
    row("time", "days", p.time.days, "days");
    row("time", "gpu_hours", p.time.gpuHours, "GPU-hours");
    row("cost", "usd", p.cost.usd, "USD");
    row("cost", "energy_kwh", p.cost.energyKwh, "kWh");
    row("hardware", "peak_flops", p.hardware.peakFlops, "FLOP/s");
    row("hardware", "bandwidth", p.hardware.bandwidth, "B/s");
    row("hardware", "ridge", p.hardware.ridge, "FLOP/byte");
    for (const auto& op : p.ops) {
        const std::string n = std::string(op.name) + " (" + toString(op.pass) + ")";
        row("roofline.flops", n, op.flops, "FLOP");
        row("roofline.bytes", n, op.bytes, "bytes");
        row("roofline.time", n, op.timeSeconds, "s");
    }
    return o.str();
}

} // namespace napkin::core
