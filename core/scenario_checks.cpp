// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The checks across the sections of a scenario (core/scenario_sections.h: checkScenario), once each
// field is valid on its own: the layout against the GPU count, heads, layers and sequence; the expert
// layout; the pipeline schedule; recompute modules; ZeRO against FSDP; the compute dtype against the GPU.

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

// Uneven stages (first/last_stage_layers, pipeline_layout) or the divisibility rule, with errors
// that name the keys that would let the user state an uneven split.
void checkPipelineLayout(const ParallelConfig& pa, std::int64_t layers, Errors& errors)
{
    if (layers <= 0)
        return;
    const std::int64_t pp = pa.pp;
    if (!pa.pipelineLayout.empty()) {
        std::int64_t sum = 0;
        for (int x : pa.pipelineLayout)
            sum += x;
        if (std::int64_t(pa.pipelineLayout.size()) != pp || sum != layers)
            errors.push_back({"parallel.pipeline_layout",
                              std::to_string(pa.pipelineLayout.size()) + " stages, " + std::to_string(sum) + " layers",
                              "must list one layer count per pipeline stage, summing to the model's layers",
                              std::to_string(pp) + " integers summing to " + std::to_string(layers)});
        if (pa.firstStageLayers > 0 || pa.lastStageLayers > 0)
            errors.push_back({"parallel.first_stage_layers", std::to_string(pa.firstStageLayers),
                              "conflicts with parallel.pipeline_layout", "0 when pipeline_layout is given"});
        return;
    }
    if (pa.firstStageLayers > 0 || pa.lastStageLayers > 0) {
        if (pp < 2) {
            errors.push_back({"parallel.first_stage_layers", std::to_string(pa.firstStageLayers),
                              "uneven stages need pipeline parallelism", "0 when pp = 1"});
            return;
        }
        const std::int64_t f = pa.firstStageLayers, l = pa.lastStageLayers, middle = pp - 2;
        const std::int64_t rest = layers - f - l;
        const bool ok = rest >= 0 && (middle == 0 ? rest == 0 : rest % middle == 0);
        if (!ok)
            errors.push_back({"parallel.first_stage_layers", std::to_string(f) + " + " + std::to_string(l),
                              "the " + std::to_string(layers) +
                                  " layers less the first and last stage's must split equally over the " +
                                  std::to_string(middle) + " middle stages",
                              "first + last <= layers with (layers - first - last) divisible by pp - 2"});
        return;
    }
    if (layers % (pp * pa.virtualStages) != 0)
        errors.push_back({"parallel.pp", std::to_string(pa.pp),
                          "pp · virtual_stages = " + std::to_string(pp * pa.virtualStages) + " must divide the " +
                              std::to_string(layers) + " layers",
                          "a divisor of model.layers, or uneven stages with parallel.first_stage_layers / "
                          "parallel.last_stage_layers or parallel.pipeline_layout"});
}

// parallel.ep / parallel.etp against the experts and the dense layout; resolves etp and edp. A
// model without routed experts keeps ep = 1 (the plan warns moe_keys_unused).
void checkExpertLayout(Scenario& sc, Errors& errors)
{
    auto& pa = sc.parallel;
    if (pa.etpAuto)
        pa.etp = pa.tp; // Megatron-Core: expert_tensor_parallel_size defaults to tensor_model_parallel_size
    const bool moe = sc.model.kind == ModelKind::Transformer && isMoe(sc.model.shape);
    const std::int64_t stageRanks = std::int64_t(pa.tp) * pa.cp * std::max<std::int64_t>(1, pa.dp);
    if (!moe) {
        pa.epUnused = pa.ep > 1 ? pa.ep : 0;
        pa.ep = 1;
        pa.edp = stageRanks / std::max(1, pa.etp);
        return;
    }
    const auto& m = sc.model.shape.moe;
    const std::int64_t fold = std::int64_t(pa.ep) * pa.etp;
    if (m.experts % pa.ep != 0)
        errors.push_back(
            {"parallel.ep", std::to_string(pa.ep),
             "must divide the " + std::to_string(m.experts) + " routed experts (each rank holds experts / ep)",
             "a divisor of model.moe.experts"});
    else if (pa.dp > 0 && stageRanks % fold != 0)
        errors.push_back({stageRanks % pa.ep == 0 ? "parallel.etp" : "parallel.ep",
                          std::to_string(stageRanks % pa.ep == 0 ? pa.etp : pa.ep),
                          "ep · etp = " + std::to_string(fold) +
                              " must divide tp · cp · dp = " + std::to_string(stageRanks) +
                              " (the MoE layers fold ETP · EP · EDP · PP onto the GPUs of TP · CP · DP · PP)",
                          "ep · etp a divisor of cluster.gpus / pp"});
    else if (m.expertFfn % pa.etp != 0)
        errors.push_back({"parallel.etp", std::to_string(pa.etp),
                          "must divide the expert FFN size " + std::to_string(m.expertFfn),
                          "a divisor of model.moe.expert_ffn, or \"auto\""});
    pa.edp = expertDataParallelSize(pa);
}

// parallel.pipeline_schedule against the layout: "auto" resolves to interleaved when virtual_stages > 1,
// else 1F1B. DualPipe (deepseek-ai/DualPipe dualpipe.py: num_ranks % 2 == 0, num_chunks even and
// >= 2 · num_ranks) pairs stage i with stage pp − 1 − i and splits the micro-batches over both ends.
void checkPipelineSchedule(Scenario& sc, Errors& errors)
{
    auto& pa = sc.parallel;
    if (pa.scheduleAuto) {
        pa.schedule = resolvedSchedule(PipelineSchedule::OneFOneB, pa.virtualStages);
        return;
    }
    const std::string name = toString(pa.schedule);
    const std::string v = std::to_string(pa.virtualStages);
    if (pa.schedule == PipelineSchedule::OneFOneB && pa.virtualStages > 1)
        errors.push_back({"parallel.pipeline_schedule", "\"1f1b\"",
                          "runs one chunk per stage but parallel.virtual_stages is " + v,
                          "\"interleaved\" or \"auto\", or parallel.virtual_stages = 1"});
    if (pa.schedule == PipelineSchedule::Interleaved && pa.virtualStages < 2)
        errors.push_back({"parallel.pipeline_schedule", "\"interleaved\"",
                          "needs parallel.virtual_stages >= 2 (it is " + v + ")",
                          "parallel.virtual_stages from 2 to 512, or \"1f1b\""});
    if (pa.schedule != PipelineSchedule::DualPipe)
        return;
    if (pa.pp < 2 || pa.pp % 2 != 0) {
        errors.push_back(
            {"parallel.pipeline_schedule", "\"dualpipe\"",
             "pairs stage i with stage pp - 1 - i: needs an even parallel.pp (it is " + std::to_string(pa.pp) + ")",
             "an even parallel.pp >= 2, or \"1f1b\""});
        return;
    }
    if (pa.virtualStages > 1)
        errors.push_back({"parallel.pipeline_schedule", "\"dualpipe\"",
                          "runs one chunk per direction but parallel.virtual_stages is " + v,
                          "parallel.virtual_stages = 1"});
    const auto& tr = sc.training;
    const std::int64_t perStep = tr.microBatch * pa.dp;
    if (perStep <= 0 || tr.globalBatch <= 0)
        return;
    const std::int64_t m = (tr.globalBatch + perStep - 1) / perStep;
    if (!dualPipeMicroBatchesOk(m, pa.pp))
        errors.push_back(
            {"parallel.pipeline_schedule", "\"dualpipe\"",
             "needs an even number of micro-batches per step, at least 2 · pp = " + std::to_string(2 * pa.pp) +
                 "; training.global_batch / (micro_batch · dp) gives " + std::to_string(m),
             "training.global_batch a multiple of 2 · micro_batch · dp = " + std::to_string(2 * perStep) +
                 " and at least " + std::to_string(2 * std::int64_t(pa.pp) * perStep)});
}

// training.recompute_modules against the model: each module must exist in it (Megatron-Core builds
// "mlp" for dense MLP layers, "moe", "moe_act" and "shared_experts" for MoE layers, "mla_up_proj" for
// multi-head latent attention).
void checkRecomputeModules(const Scenario& sc, Errors& errors)
{
    const auto& t = sc.training;
    if (t.recompute != Recompute::Modules || sc.model.kind != ModelKind::Transformer)
        return;
    const auto& m = sc.model.shape;
    const bool moe = isMoe(m);
    const std::int64_t dense = m.layers - (moe ? moeLayerCount(m) : 0);
    auto need = [&](std::uint8_t bit, const char* name, bool ok, const std::string& why, const char* instead) {
        if ((t.recomputeModules & bit) && !ok)
            errors.push_back({"training.recompute_modules", name, why, instead});
    };
    need(kModuleMlp, "mlp", dense > 0,
         "recomputes dense MLP layers, and every layer of " + sc.model.name + " is a MoE layer",
         "\"moe\" (the MoE layer) or \"moe_act\"");
    need(kModuleMoe, "moe", moe, "recomputes MoE layers, and " + sc.model.name + " has none", "\"mlp\"");
    need(kModuleMoeAct, "moe_act", moe,
         "recomputes the routed experts' activation, and " + sc.model.name + " has no MoE layers", "\"mlp\"");
    need(kModuleShared, "shared_experts", moe && m.moe.sharedExperts > 0,
         "recomputes shared experts, and " + sc.model.name + " has none", "\"moe\", \"moe_act\"");
    need(kModuleMlaUp, "mla_up_proj", m.attention == AttentionKind::Mla,
         "recomputes multi-head latent attention's up-projections, and " + sc.model.name + " has no MLA",
         "\"core_attn\", \"layernorm\"");
}

} // namespace

// Cross-field checks, once each field is known to be valid on its own.
void checkScenario(Scenario& sc, Errors& errors)
{
    // The parallel layout: tp · pp · cp · dp = GPUs; TP divides the heads, PP the layers, CP the sequence.
    {
        auto& pa = sc.parallel;
        const std::int64_t mp = std::int64_t(pa.tp) * pa.pp * pa.cp;
        const std::int64_t gpus = sc.cluster.gpus;
        if (gpus > 0) {
            if (pa.dp > 0 && mp * pa.dp != gpus)
                errors.push_back({"parallel.dp", std::to_string(pa.dp),
                                  "tp · pp · cp · dp = " + std::to_string(mp * pa.dp) + " but cluster.gpus is " +
                                      std::to_string(gpus),
                                  "cluster.gpus / (tp · pp · cp), or \"auto\""});
            else if (pa.dp == 0 && gpus % mp != 0)
                errors.push_back(
                    {"parallel.tp", std::to_string(pa.tp),
                     "tp · pp · cp = " + std::to_string(mp) + " does not divide cluster.gpus " + std::to_string(gpus),
                     "a layout whose product divides the GPU count"});
            else if (pa.dp == 0)
                pa.dp = gpus / mp;
        }
        if (pa.fsdp != Fsdp::None && pa.zeroStage != 0 && pa.zeroStage != effectiveZeroStage(sc))
            errors.push_back({"parallel.zero", std::to_string(pa.zeroStage),
                              std::string("conflicts with parallel.fsdp \"") + toString(pa.fsdp) + "\" (ZeRO-" +
                                  std::to_string(effectiveZeroStage(sc)) + ")",
                              "0 (let parallel.fsdp decide) or " + std::to_string(effectiveZeroStage(sc))});
        if (sc.model.kind == ModelKind::Mlp && mp > 1)
            errors.push_back(
                {"parallel.tp", std::to_string(pa.tp), "the toy model runs data-parallel only", "tp = pp = cp = 1"});
        if (sc.model.kind != ModelKind::Mlp) {
            const auto& s = sc.model.shape;
            if (s.heads > 0 && s.heads % pa.tp != 0)
                errors.push_back({"parallel.tp", std::to_string(pa.tp),
                                  "must divide the " + std::to_string(s.heads) + " attention heads",
                                  "a divisor of model.heads"});
            else if (s.kvHeads > 0 && s.kvHeads % pa.tp != 0 && pa.tp % s.kvHeads != 0)
                errors.push_back({"parallel.tp", std::to_string(pa.tp),
                                  "must divide the " + std::to_string(s.kvHeads) +
                                      " KV heads, or be a multiple of them (KV replicated)",
                                  "a divisor or multiple of model.kv_heads"});
            checkPipelineLayout(pa, s.layers, errors);
            if (pa.virtualStages > 1 && pa.pp == 1)
                errors.push_back({"parallel.virtual_stages", std::to_string(pa.virtualStages),
                                  "interleaving needs pipeline parallelism", "1 when pp = 1"});
            if (sc.training.seqLen > 0 && sc.training.seqLen % pa.cp != 0)
                errors.push_back({"parallel.cp", std::to_string(pa.cp),
                                  "must divide training.seq_len " + std::to_string(sc.training.seqLen),
                                  "a divisor of the sequence length"});
            if (pa.cpComm == CpComm::A2a && s.heads > 0 && (s.heads / pa.tp) % pa.cp != 0) // Ulysses splits heads
                errors.push_back({"parallel.cp_comm", "a2a", "needs parallel.cp to divide the heads per TP rank",
                                  "p2p or all_gather, or cp dividing model.heads / tp"});
        }
        checkExpertLayout(sc, errors);
        if (pa.dp > 0)
            checkPipelineSchedule(sc, errors);
    }
    checkRecomputeModules(sc, errors);
    if (sc.model.kind == ModelKind::Mlp && sc.training.checkpointEvery > sc.model.mlp.layers && sc.model.mlp.layers > 0)
        errors.push_back({"training.checkpoint_every", std::to_string(sc.training.checkpointEvery),
                          "exceeds the model's " + std::to_string(sc.model.mlp.layers) + " layers",
                          "1 to " + std::to_string(sc.model.mlp.layers) + ", or \"auto\""});
    if (sc.model.kind != ModelKind::Mlp) {
        const auto& s = sc.model.shape;
        if (sc.training.checkpointEvery > s.layers && s.layers > 0)
            errors.push_back({"training.checkpoint_every", std::to_string(sc.training.checkpointEvery),
                              "exceeds the model's " + std::to_string(s.layers) + " layers",
                              "1 to " + std::to_string(s.layers) + ", or \"auto\""});
        if (s.positions == PositionKind::Learned && s.maxPositions > 0 && sc.training.seqLen > s.maxPositions)
            errors.push_back({"training.seq_len", std::to_string(sc.training.seqLen),
                              "exceeds the learned position table of " + std::to_string(s.maxPositions),
                              "1 to " + std::to_string(s.maxPositions)});
    }
    if (!sc.cluster.gpuId.empty() && sc.gpu->peak(info(sc.precision.compute).peak) <= 0) {
        std::string supported;
        for (const auto& i : {DType::Fp32, DType::Tf32, DType::Fp16, DType::Bf16, DType::Fp8E4m3, DType::Nvfp4})
            if (sc.gpu->peak(info(i).peak) > 0)
                supported += (supported.empty() ? "" : ", ") + std::string(info(i).id);
        errors.push_back({"precision.compute", std::string(info(sc.precision.compute).id),
                          sc.gpu->name + " has no dense " + std::string(info(sc.precision.compute).id) + " rate",
                          supported});
    }
}

} // namespace napkin::core::detail
