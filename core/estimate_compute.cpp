// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The compute budget of estimate(): parameters, the batch and its steps, FLOPs under the convention.

#include "estimate.h"
#include "estimate_stages.h"
#include "flops_megatron.h"
#include "framework.h"

#include <algorithm>
#include <string>

namespace napkin::core::detail {

namespace {

// What trains: every parameter, or under LoRA / QLoRA the adapters r · (in + out) of each targeted
// linear layer of every block (Hu et al. 2021 §4.1; PEFT print_trainable_parameters).
void estimateTrainable(const Scenario& sc, Plan& p)
{
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const auto& pr = sc.precision;
    p.finetune = finetuneCounts(isMlp ? TransformerShape{} : sc.model.shape, p.params, sc.finetune,
                                bytesPerValue(pr.weights), info(pr.weights).id.data());
    p.finetune.pagedOptimizer = sc.pagedOptimizer.on;
    p.finetune.int8States = pr.optimizerInt8Blockwise;
    const auto& f = p.finetune;
    if (!sc.finetune.peft())
        return;
    derive(p, "params.trainable", "{L} · {r} · {in_plus_out}", f.trainable, "parameters",
           "LoRA (Hu et al. 2021 §4.1): A (r x in) and B (out x r) on each targeted linear layer of every block; "
           "HF PEFT counts lora_A and lora_B (print_trainable_parameters)",
           {{"L", double(sc.model.shape.layers)},
            {"r", double(sc.finetune.loraRank)},
            {"in_plus_out", f.adaptersPerLayer / double(sc.finetune.loraRank)}});
    if (f.quantised > 0)
        derive(
            p, "params.quantised", "{L} · {linear_weights_per_layer}", f.quantised, "parameters",
            sc.finetune.base == BaseStorage::Nf4
                ? "QLoRA (Dettmers et al. 2023 §3): every linear layer of the blocks in NF4 (bitsandbytes Linear4bit; "
                  "the output head, embeddings and norms stay in 16 bits)"
                : "LLM.int8() (Dettmers et al. 2022): every linear layer of the blocks in int8 with fp32 row scales "
                  "(bitsandbytes Linear8bitLt; the output head, embeddings and norms stay in 16 bits)",
            {{"L", double(sc.model.shape.layers)},
             {"linear_weights_per_layer", f.quantised / double(sc.model.shape.layers)}});
}

} // namespace

void estimateParams(const Scenario& sc, Plan& p)
{
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const TransformerShape& shape = sc.model.shape;
    p.params = countParams(sc.model);
    const double P = p.params.total;
    if (isMlp)
        derive(p, "params.total", "{D} · {D} · {L} + {head}", P, "parameters",
               "CS336 lecture 2: D^2 L + D for the toy deep linear model",
               {{"D", double(sc.model.mlp.width)}, {"L", double(sc.model.mlp.layers)}, {"head", p.params.head}});
    else if (p.params.derivedShape)
        derive(p, "params.total", "{P}", P, "parameters", "as given in the scenario (model.params)", {{"P", P}});
    else
        derive(
            p, "params.total", "{L} · {per_layer} + {embedding} + {positions} + {head} + {final_norm}", P, "parameters",
            "exact count from the architecture (Touvron et al. 2023 layout; nanoGPT for GPT-2/3 biases and positions)",
            {{"L", double(shape.layers)},
             {"per_layer", p.params.perLayer},
             {"embedding", p.params.embedding},
             {"positions", p.params.positional},
             {"head", p.params.head},
             {"final_norm", p.params.finalNorm}});
    estimateTrainable(sc, p);
    if (!isMlp && isMoe(shape)) {
        const double Lm = double(moeLayerCount(shape)), L = double(shape.layers);
        derive(p, "params.active",
               "{L_dense} · {dense_layer} + {L_moe} · ({moe_layer} - ({E} - {k}) / {E} · {experts_per_layer}) + "
               "{embedding} + {positions} + {head} + {final_norm}",
               p.params.active, "parameters",
               "a token runs through k of the E routed experts of each MoE layer, the shared experts and the router; "
               "the input embedding counted (Mistral, Qwen, Meta, AI2); params.active_excl_embedding drops it "
               "(DeepSeek, OpenAI) (moe-notes.md §0.3)",
               {{"L_dense", L - Lm},
                {"dense_layer", p.params.denseLayer},
                {"L_moe", Lm},
                {"moe_layer", p.params.moeLayer},
                {"E", double(shape.moe.experts)},
                {"k", double(shape.moe.topK)},
                {"experts_per_layer", Lm > 0 ? p.params.routedExperts / Lm : 0.0},
                {"embedding", p.params.embedding},
                {"positions", p.params.positional},
                {"head", p.params.head},
                {"final_norm", p.params.finalNorm}});
    }
}

void estimateBatch(const Scenario& sc, Plan& p)
{
    const auto& tr = sc.training;
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    auto& c = p.compute;
    const auto& par = sc.parallel;
    const Layout lay = layoutOf(sc);
    const std::int64_t tp = lay.tp, pp = lay.pp, cp = lay.cp, vStages = lay.virtualStages;
    // Megatron-LM layout: GPUs = TP · PP · CP · DP (resolved and checked when the scenario is read).
    const std::int64_t dp = par.dp > 0 ? par.dp : std::max<std::int64_t>(1, sc.cluster.gpus / (tp * pp * cp));
    c.dataParallel = dp;
    const std::int64_t perStep = tr.microBatch * dp;
    c.accumulationSteps = perStep > 0 ? std::max<std::int64_t>(1, (tr.globalBatch + perStep - 1) / perStep) : 1;
    c.effectiveGlobalBatch = c.accumulationSteps * perStep;
    const double seq = isMlp ? 1.0 : double(tr.seqLen);
    c.tokensPerStep = double(c.effectiveGlobalBatch) * seq;
    c.steps = tr.tokens / c.tokensPerStep;
    derive(p, "compute.accumulation_steps", "ceil({global_batch} / ({micro_batch} · {dp}))",
           double(c.accumulationSteps), "steps", "global batch = micro-batch × accumulation × data parallel",
           {{"global_batch", double(tr.globalBatch)}, {"micro_batch", double(tr.microBatch)}, {"dp", double(dp)}});
    c.requestedGlobalBatch = tr.globalBatch;
    c.batchScaled = perStep > tr.globalBatch && c.effectiveGlobalBatch >= 2 * tr.globalBatch;
    if (c.batchScaled) {
        // One micro-batch per data-parallel rank is already more than the requested batch: the
        // optimisation changes (a batch-size-dependent learning rate, fewer steps), not only time.
        p.warnings.push_back(
            {"batch_scaled",
             "training.global_batch " + std::to_string(tr.globalBatch) + " is smaller than micro_batch " +
                 std::to_string(tr.microBatch) + " × " + std::to_string(dp) +
                 " data-parallel ranks: the plan trains with a global batch of " +
                 std::to_string(c.effectiveGlobalBatch) + " sequences (" +
                 std::to_string(c.effectiveGlobalBatch / std::max<std::int64_t>(1, tr.globalBatch)) +
                 "x). Fewer GPUs, more tp / pp / cp, or a larger training.global_batch keep the batch"});
    } else if (c.effectiveGlobalBatch != tr.globalBatch) {
        p.warnings.push_back({"batch_not_divisible", "training.global_batch " + std::to_string(tr.globalBatch) +
                                                         " is not a multiple of micro_batch × data-parallel GPUs = " +
                                                         std::to_string(perStep) + "; the plan uses " +
                                                         std::to_string(c.effectiveGlobalBatch) + " (" +
                                                         std::to_string(c.accumulationSteps) + " accumulation steps)"});
    }
    if (pp > 1 && par.schedule == PipelineSchedule::DualPipe) {
        // DualPipe (arXiv 2412.19437 §3.2.1 Table 2): bubble (p/2 − 1)(F&B + B − 3W) against 1F1B's
        // (p − 1)(F + B); with F&B = F + B (the pair's communication hidden, its compute serial) and a
        // backward of twice the forward, half of it weight gradients (B = 2F, W = F: Narayanan et al.
        // 2021 §3.3), the idle share of m micro-batches of F + B is 2 (p/2 − 1) / (3 m).
        p.memory.bubbleFraction = 2.0 * (double(pp) / 2 - 1) / (3.0 * double(c.accumulationSteps));
        derive(p, "parallel.bubble_fraction", "2 · ({p} / 2 - 1) / (3 · {m})", p.memory.bubbleFraction, "",
               "DualPipe (arXiv 2412.19437 §3.2.1 Table 2): bubble (p/2 - 1)(F&B + B - 3W) with F&B = F + B, B = 2F, "
               "W = F, over m micro-batches of F + B; the predicted step uses each chunk's own F, B and W",
               {{"p", double(pp)}, {"m", double(c.accumulationSteps)}});
    } else if (pp > 1) {
        // Narayanan et al. 2021 §2.2: pipeline bubble (p - 1) / m for 1F1B, (p - 1) / (v · m) interleaved.
        p.memory.bubbleFraction = double(pp - 1) / (double(vStages) * double(c.accumulationSteps));
        derive(p, "parallel.bubble_fraction", "({p} - 1) / ({v} · {m})", p.memory.bubbleFraction, "",
               "Narayanan et al. 2021 (Megatron-LM) §2.2: pipeline bubble of 1F1B (v = 1) and interleaved schedules",
               {{"p", double(pp)}, {"v", double(vStages)}, {"m", double(c.accumulationSteps)}});
    }
}

namespace {

// Forward matmul FLOPs per token the recompute modules run again (2 per parameter per token): the dense
// MLP layers' matrices ("mlp"), the MoE layers' routed (k of them) and shared experts and router
// ("moe"), the shared experts alone ("shared_experts"), MLA's up-projections ("mla_up_proj").
// "moe_act", "layernorm" and "core_attn"'s softmax are elementwise (core_attn's matmuls: above).
double moduleRecomputeFlops(const TransformerShape& m, std::uint8_t mods)
{
    const double L = double(m.layers), h = double(m.dModel);
    const double Lm = isMoe(m) ? double(moeLayerCount(m)) : 0.0;
    const double mats = m.ffnKind == FfnKind::Swiglu ? 3 : 2;
    double r = 0;
    if (mods & kModuleMlp)
        r += 2 * (L - Lm) * h * double(m.ffn) * mats;
    if (mods & kModuleMoe)
        r += 2 * Lm *
             (h * (double(m.moe.topK) * double(m.moe.expertFfn) + sharedExpertWidth(m.moe)) * mats +
              h * double(m.moe.experts));
    else if (mods & kModuleShared)
        r += 2 * Lm * h * sharedExpertWidth(m.moe) * mats;
    if ((mods & kModuleMlaUp) && m.attention == AttentionKind::Mla)
        r += 2 * L * double(m.heads) *
             (double(m.mla.qLoraRank) * double(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim) +
              double(m.mla.kvLoraRank) * double(m.mla.qkNopeHeadDim + m.mla.vHeadDim));
    return r;
}

} // namespace

double estimateFlops(const Scenario& sc, Plan& p)
{
    const auto& tr = sc.training;
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const TransformerShape& shape = sc.model.shape;
    // FLOPs follow the parameters a token runs through: all of them for a dense model, the active
    // ones (k routed experts, shared experts, router) with experts (moe-notes.md §6.3).
    const bool moe = !isMlp && isMoe(shape);
    const double P = moe ? p.params.active : p.params.total;
    const double s = double(tr.seqLen);
    auto& c = p.compute;
    const auto conv = effectiveConvention(sc);
    c.convention = isMlp ? toString(FlopsConvention::SixPT) : toString(conv);
    double forwardRecompute = 0; // extra forward FLOPs per token from recomputation
    Derivation* convention = nullptr;
    double weightGemms = 0; // the convention's forward + backward FLOPs of the weight matmuls per token
    if (conv == FlopsConvention::SixPT || isMlp) {
        c.flopsPerToken = 6 * P;
        weightGemms = 6 * P;
        convention = &derive(p, "compute.flops_per_token", "6 · {P}", c.flopsPerToken, "FLOP",
                             moe ? "Kaplan et al. 2020 with P the active parameters (mixture of experts): forward 2P + "
                                   "backward 4P per token"
                                 : "Kaplan et al. 2020; CS336 lecture 2: forward 2P + backward 4P per token",
                             {{"P", P}});
        forwardRecompute = 2 * P;
    } else if (conv == FlopsConvention::MegatronCore) {
        const auto f = megatronCoreFlopsPerToken(shape, s);
        c.flopsPerToken = f.total;
        weightGemms = f.total - f.core;
        convention = &derive(
            p, "compute.flops_per_token", "{linear} + {core} + {mlp} + {logits} + {mtp}", c.flopsPerToken, "FLOP",
            "Megatron-Core num_floating_point_operations (megatron/training/training.py), the convention of NVIDIA's "
            "Model TFLOP/s tables: active experts, causal halving, exact sliding-window context, MTP, no router "
            "(core/flops_megatron.h)",
            {{"linear", f.linear}, {"core", f.core}, {"mlp", f.mlp}, {"logits", f.logits}, {"mtp", f.mtp}});
        forwardRecompute = (f.total - f.logits) / 3; // one more forward of everything but the head
    } else if (conv == FlopsConvention::Palm) {
        // PaLM (Chowdhery et al. 2022) App. B: 6N + 12 L H Q T; N excludes learned position tables
        // (nanoGPT estimate_mfu).
        const double Nn = P - p.params.positional;
        const double L = double(shape.layers), H = double(shape.heads), Q = double(shape.headDim);
        c.flopsPerToken = 6 * Nn + 12 * L * H * Q * s;
        weightGemms = 6 * Nn;
        convention = &derive(p, "compute.flops_per_token", "6 · {N} + 12 · {L} · {H} · {Q} · {T}", c.flopsPerToken,
                             "FLOP", "Chowdhery et al. 2022 (PaLM), Appendix B; no causal-mask halving",
                             {{"N", Nn}, {"L", L}, {"H", H}, {"Q", Q}, {"T", s}});
        forwardRecompute = 2 * Nn + 4 * L * H * Q * s;
    } else {
        // Narayanan et al. 2021 eq. 3 without recompute, per token: 72 l h² (1 + s/6h + V/12hl). It
        // assumes a dense 4h MLP and full attention: a mixture of experts is warned about.
        if (moe)
            p.warnings.push_back(
                {"flops_convention_dense",
                 "flops.convention \"megatron\" is Narayanan et al. 2021 eq. 3, which assumes a dense MLP of "
                 "4 · d_model: it does not count the " +
                     std::to_string(shape.moe.topK) + " of " + std::to_string(shape.moe.experts) +
                     " experts a token runs through; \"6PT\" or \"palm\" count the active parameters"});
        const double l = double(shape.layers), h = double(shape.dModel), V = double(shape.vocab);
        c.flopsPerToken = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * h * l));
        weightGemms = 72 * l * h * h + 6 * h * V;
        convention = &derive(p, "compute.flops_per_token",
                             "72 · {l} · {h} · {h} · (1 + {s} / (6 · {h}) + {V} / (12 · {h} · {l}))", c.flopsPerToken,
                             "FLOP", "Narayanan et al. 2021 (Megatron-LM), eq. 3 without recomputation",
                             {{"l", l}, {"h", h}, {"s", s}, {"V", V}});
        forwardRecompute = 24 * l * h * h * (1 + s / (6 * h)); // eq. 3 with recompute adds one forward (no logits)
    }
    if (sc.finetune.peft()) {
        // A frozen base computes no weight gradients: a third of the weight matmuls' 6 FLOPs per parameter
        // go (4P instead of 6P, the attention core unchanged); each adapter costs 6 per parameter like
        // any trained weight (Hu et al. 2021 §4.2: LoRA trains with no extra inference latency, only
        // the low-rank products added).
        const double A = p.finetune.adapters;
        const double full = c.flopsPerToken;
        convention->quantity = "compute.full_training_flops_per_token";
        c.flopsPerToken = full - weightGemms / 3 + 6 * A;
        derive(p, "compute.flops_per_token", "{full} − {weight_gemms} / 3 + 6 · {P_adapters}", c.flopsPerToken, "FLOP",
               "frozen base (LoRA / QLoRA): no weight gradients, so 4 of the 6 FLOPs per weight and token remain; the "
               "adapters 6 per parameter (forward, input and weight gradients)",
               {{"full", full}, {"weight_gemms", weightGemms}, {"P_adapters", A}});
        forwardRecompute += 2 * A;
    }
    c.trainingFlops = c.flopsPerToken * tr.tokens;
    derive(p, "compute.training_flops", "{flops_per_token} · {T}", c.trainingFlops, "FLOP", kSrcCs336,
           {{"flops_per_token", c.flopsPerToken}, {"T", tr.tokens}});
    c.flopsPerStep = c.flopsPerToken * c.tokensPerStep;
    derive(p, "compute.flops_per_step", "{flops_per_token} · {tokens_per_step}", c.flopsPerStep, "FLOP", kSrcCs336,
           {{"flops_per_token", c.flopsPerToken}, {"tokens_per_step", c.tokensPerStep}});
    double recomputePerToken = 0;
    const double L = double(shape.layers);
    if (tr.recompute == Recompute::Full)
        recomputePerToken = forwardRecompute;
    else if (tr.recompute == Recompute::Op && !isMlp)
        // torchtitan's op-level policy re-runs the even matmuls of each block (wk, wo, and w3 or GELU's
        // w2; core/saved_tensors.h): 2 FLOPs per parameter per token; SDPA is saved.
        recomputePerToken = 2 * L * opPolicyRecomputedParams(shape);
    else if (!isMlp && (tr.recompute == Recompute::Selective || tr.recompute == Recompute::Modules)) {
        const bool core = tr.recompute == Recompute::Selective || (tr.recomputeModules & kModuleCoreAttn);
        if (core) // QK^T and PV again: 4 L H Q T per token (Korthikanti §5)
            recomputePerToken += 4 * L * double(shape.heads) * double(shape.headDim) * s;
        if (tr.recompute == Recompute::Modules)
            recomputePerToken += moduleRecomputeFlops(shape, tr.recomputeModules);
    }
    c.hardwareFlops = (c.flopsPerToken + recomputePerToken) * tr.tokens;
    derive(p, "compute.hardware_flops", "({flops_per_token} + {recompute_per_token}) · {T}", c.hardwareFlops, "FLOP",
           "Korthikanti et al. 2022: hardware FLOPs add the recomputed forward work",
           {{"flops_per_token", c.flopsPerToken}, {"recompute_per_token", recomputePerToken}, {"T", tr.tokens}});
    return recomputePerToken;
}

} // namespace napkin::core::detail
