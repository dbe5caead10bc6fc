// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lowprecision.h"

#include "kernels.h"
#include "model.h"
#include "roofline.h"
#include "scenario.h"

#include <array>
#include <string_view>

namespace napkin::core {

namespace {

// Transformer Engine quantises each GEMM operand into a rowwise copy (the forward and dgrad) and a
// columnwise one (the transposed operand of wgrad): Hopper's FP8 tensor cores take only the TN layout,
// and MX / NVFP4 scales run along the reduction dimension, so both directions need their own copy
// (TE Float8Tensor / MXFP8Tensor usage rowwise + columnwise).
// Launches per quantised tensor, read from Transformer Engine d0067d0da (pytorch/csrc/quantizer.cpp,
// extensions/cast.cpp split_quantize, common/recipe/current_scaling.cu): current scaling zeroes the
// amax, reduces it over the tensor, computes the scale and casts (4 kernels); delayed scaling, block
// scaling and MX cast in one kernel each. A grouped GEMM's input is split per expert and each split
// quantised on its own (multi_tensor_quantize_impl), except delayed scaling (one
// nvte_multi_cast_transpose over all splits) and NVFP4 (one fused grouped kernel).
constexpr std::array<RecipeInfo, 6> kRecipes{{
    {LowPrecisionRecipe::None, "none", 2, 0, 0, 0, false, 0, false, "every GEMM in the 16-bit compute dtype"},
    {LowPrecisionRecipe::Delayed, "delayed", 1, 0, 0, 2, false, 1, true,
     "Transformer Engine DelayedScaling (its default): per-tensor scales from an amax history, amax reduced inside the "
     "cast kernel; FP8 E4M3 forward, E5M2 gradients in the HYBRID format (Micikevicius et al. 2022)"},
    {LowPrecisionRecipe::Current, "current", 1, 0, 0, 2, true, 4, false,
     "Transformer Engine Float8CurrentScaling (Megatron-Bridge fp8_cs): the scale from the tensor's own amax, a "
     "reduction over the input before the cast"},
    {LowPrecisionRecipe::Blockwise, "blockwise", 1, 4.0 / 128, 4.0 / (128 * 128), 2, false, 1, false,
     "DeepSeek-V3 §3.3.2 fine-grained quantisation: 1 x 128 activation tiles and 128 x 128 weight blocks, one fp32 "
     "scale each (TE Float8BlockScaling)"},
    {LowPrecisionRecipe::Mxfp8, "mxfp8", 1, 1.0 / 32, 1.0 / 32, 2, false, 1, false,
     "OCP Microscaling v1.0 MXFP8: E4M3 values with one E8M0 scale per 32 along the reduction dimension (Blackwell "
     "tensor cores; TE MXFP8BlockScaling)"},
    {LowPrecisionRecipe::Nvfp4, "nvfp4", 0.5, 1.0 / 16, 1.0 / 16, 2, true, 1, true,
     "NVIDIA NVFP4 training (arXiv 2509.25149): E2M1 values, an E4M3 scale per 16 and an fp32 per tensor from its amax "
     "(TE NVFP4BlockScaling)"},
}};

// The recipe class of a tensor op by its name, or 0 for ops outside every class (router, adapters).
std::uint8_t gemmClass(std::string_view name)
{
    auto starts = [&](std::string_view p) { return name.rfind(p, 0) == 0; };
    if (starts("qkv_proj"))
        return kLowQkv;
    if (starts("out_proj"))
        return kLowOut;
    if (starts("mlp_"))
        return kLowMlp;
    if (starts("logits"))
        return kLowHead;
    if (starts("attention_flash") || starts("scores_"))
        return kLowAttention;
    return 0;
}

void place(RooflineOp& op, double ceiling, double bandwidth)
{
    op.ceiling = ceiling;
    op.attainable = std::min(op.ceiling, bandwidth * op.intensity);
    op.timeSeconds = std::max(op.flops / op.ceiling, bandwidth > 0 ? op.bytes / bandwidth : 0.0);
    op.bound = op.intensity * bandwidth >= op.ceiling ? Bound::Compute : Bound::Memory;
}

} // namespace

const RecipeInfo& recipeInfo(LowPrecisionRecipe r) { return kRecipes[static_cast<std::size_t>(r)]; }
const char* toString(LowPrecisionRecipe r) { return recipeInfo(r).id; }

std::string lowPrecisionGemmNames(std::uint8_t gemms)
{
    static constexpr std::pair<std::uint8_t, const char*> kNames[] = {
        {kLowQkv, "qkv"}, {kLowOut, "out"}, {kLowMlp, "mlp"}, {kLowHead, "head"}, {kLowAttention, "attention"}};
    std::string out;
    for (const auto& [bit, name] : kNames)
        if (gemms & bit)
            out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

void applyLowPrecisionRecipe(const Scenario& sc, Plan& p)
{
    const auto& pr = sc.precision;
    if (pr.recipe == LowPrecisionRecipe::None || sc.model.kind == ModelKind::Mlp)
        return;
    const auto& hw = p.hardware;
    const RecipeInfo& ri = recipeInfo(pr.recipe);
    const double e = bytesPerValue(pr.activations), ew = bytesPerValue(pr.weights);
    const bool fused = sc.stepTime.kernelFusion != KernelFusion::Eager;
    // Megatron-Core passes is_first_microbatch: TE casts the weights on the first micro-batch only
    // and keeps the copies for the step (core/steptime.cpp charges count / L per layer and micro-batch);
    // torchtitan's Float8Linear casts them on every forward.
    const bool transformerEngine = sc.stepTime.framework == Framework::Megatron, cached = transformerEngine;
    if (pr.fp8ParamGather && !transformerEngine)
        p.warnings.push_back({"fp8_param_gather_unused",
                              "precision.fp8_param_gather has no effect under step_time.framework " +
                                  std::string(toString(sc.stepTime.framework)) +
                                  ": it is Megatron-Core's flag (Transformer Engine keeps the FP8 weights); torchao's "
                                  "Float8Linear keeps the 16-bit weights and casts them every forward"});
    const double m = double(std::max<std::int64_t>(1, p.compute.accumulationSteps));
    std::vector<RooflineOp> casts;
    for (auto& op : p.ops) {
        if (op.unit != OpUnit::Tensor || op.tf32) // fp32-operand GEMMs keep their TF32 rate
            continue;
        const std::uint8_t cls = gemmClass(op.name);
        if (!(cls & pr.lowPrecisionGemms)) {
            // Kept in 16 bits: the 16-bit dense peak is its roofline ceiling.
            op.highPrecision = true;
            if (hw.peakFlops16 > 0)
                place(op, hw.peakFlops16, hw.bandwidth);
            continue;
        }
        if (cls == kLowAttention || op.pass != Pass::Forward || op.kind != OpKind::Gemm || op.n <= 0 || op.k <= 0)
            continue;
        // The forward GEMM's input (M x K, from F = 2 M K N) and, for the backward, its output gradient
        // (M x N), each quantised into both copies; the weight (K x N) once per step when cached.
        const double input = op.flops / (2 * op.n), grad = op.flops / (2 * op.k), weight = op.k * op.n;
        const double write = ri.copies * (ri.elementBytes + ri.activationScales);
        // Norm outputs are quantised inside the fused norm (TE LayerNormLinear / LayerNormMLP): no read.
        const bool normFused = fused && (cls == kLowQkv || (cls == kLowMlp && std::string_view(op.name) != "mlp_down"));
        const double read = (normFused ? 0 : e) + (ri.amaxPass ? e : 0);
        // Tensors quantised per GEMM: one, or one per local expert of a grouped GEMM (+ the shared experts').
        double tensors = 1;
        if (op.groupedShare > 0)
            tensors = (ri.groupedInOne ? 1.0 : std::max(1.0, op.grouped[3])) + (op.groupedShare < 1 ? 1.0 : 0.0);
        // Transformer Engine's launches under Megatron; torchao's Float8Linear (torchtitan) is fused by
        // torch.compile or runs as ATen ops, not counted here: one launch per tensor as before.
        const double launches = transformerEngine ? ri.launches * tensors : 1.0;
        RooflineOp in =
            makeOp("quantize_input", Pass::Forward, OpUnit::Vector, {3 * input, input * (read + write)}, hw, op.count);
        in.implementation = ri.source;
        in.kernels = launches;
        casts.push_back(in);
        RooflineOp g = makeOp("quantize_grad", Pass::Backward, OpUnit::Vector,
                              {3 * grad, grad * (e + (ri.amaxPass ? e : 0) + write)}, hw, op.count);
        g.implementation = ri.source;
        g.kernels = launches;
        casts.push_back(g);
        RooflineOp w = makeOp("quantize_weight", Pass::Forward, OpUnit::Vector,
                              {3 * weight, weight * (ew + ri.copies * (ri.elementBytes + ri.weightScales))}, hw,
                              cached ? op.count / m : op.count);
        w.implementation = ri.source;
        w.kernels = launches;
        casts.push_back(w);
    }
    // One op per kind, summed over the GEMM classes (the roofline lists a layer's kinds of work).
    auto merge = [&](const char* name) {
        RooflineOp sum;
        bool any = false;
        for (const auto& c : casts)
            if (std::string_view(c.name) == name) {
                if (!any)
                    sum = c, sum.flops = sum.bytes = 0, sum.kernels = 0;
                any = true;
                // Per-layer totals at the first op's count (counts are equal per layer, or per step for weights).
                sum.flops += c.flops * c.count;
                sum.bytes += c.bytes * c.count;
                sum.kernels += c.kernels;
            }
        if (!any)
            return;
        const double count = sum.count;
        sum.flops /= count;
        sum.bytes /= count;
        sum.intensity = sum.bytes > 0 ? sum.flops / sum.bytes : 0;
        place(sum, hw.vectorFlops > 0 ? hw.vectorFlops : hw.peakFlops, hw.bandwidth);
        p.ops.push_back(sum);
    };
    merge("quantize_input");
    merge("quantize_weight");
    merge("quantize_grad");
}

double lowPrecisionWeightCacheBytes(const Scenario& sc, double gemmParamsOnRank)
{
    const auto& pr = sc.precision;
    if (pr.recipe == LowPrecisionRecipe::None || sc.stepTime.framework != Framework::Megatron)
        return 0;
    const RecipeInfo& ri = recipeInfo(pr.recipe);
    return gemmParamsOnRank * ri.copies * (ri.elementBytes + ri.weightScales);
}

AmaxReductions tensorParallelAmaxReductions(const Scenario& sc)
{
    // Transformer Engine d0067d0da: linear.py, layernorm_linear.py and layernorm_mlp.py give the input
    // quantizer the TP group when sequence_parallel and parallel_mode == "column", and the output
    // gradient's when sequence_parallel and parallel_mode == "row" (set_quantizer_amax_reduction_group);
    // quantizer.cpp Float8CurrentScalingQuantizer::quantize then runs amax_reduction_group->allreduce(MAX)
    // ->wait() between the amax and the scale (NVFP4Quantizer likewise). Delayed scaling reduces its
    // amax history once per autocast region instead; block and MX scales are local (no reduction).
    const auto& pr = sc.precision;
    const auto& par = sc.parallel;
    AmaxReductions r;
    if (pr.recipe == LowPrecisionRecipe::None || !recipeInfo(pr.recipe).amaxPass || !par.sequenceParallel ||
        par.tp <= 1 || sc.stepTime.framework != Framework::Megatron || sc.model.kind != ModelKind::Transformer)
        return r;
    const auto& shape = sc.model.shape;
    const double L = double(std::max<std::int64_t>(1, shape.layers));
    // Tensor-parallel MLPs per layer: every dense layer's, and an MoE layer's shared experts (Megatron-Core
    // SharedExpertMLP: TE column- and row-parallel linears). Routed experts get their tokens from the
    // dispatcher, outside sequence parallelism (TEGroupedLinear): no reduction.
    const double moe = double(moeLayerCount(shape)) / L;
    const double mlps = (1 - moe) + (shape.moe.sharedExperts > 0 ? moe : 0);
    const double qkv = (pr.lowPrecisionGemms & kLowQkv) ? 1 : 0, out = (pr.lowPrecisionGemms & kLowOut) ? 1 : 0;
    const double mlp = (pr.lowPrecisionGemms & kLowMlp) ? mlps : 0;
    r.forward = qkv + mlp;
    r.backward = out + mlp;
    return r;
}

} // namespace napkin::core
