// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The roofline stage of estimate(): one rank's layer, op by op, and the MFU bound it implies.

#include "estimate_stages.h"
#include "flops_megatron.h"
#include "framework.h"
#include "lowprecision.h"
#include "roofline.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace napkin::core::detail {

void estimateRoofline(const Scenario& sc, Plan& p)
{
    const auto& tr = sc.training;
    const auto& pr = sc.precision;
    const auto& par = sc.parallel;
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const TransformerShape& shape = sc.model.shape;
    const auto& c = p.compute;
    const auto& hw = p.hardware;
    const Layout lay = layoutOf(sc);
    const std::int64_t tp = lay.tp, cp = lay.cp;
    const double e = bytesPerValue(pr.activations);
    const double s = double(tr.seqLen), b = double(tr.microBatch);
    const double ew = bytesPerValue(pr.weights), eg = bytesPerValue(pr.gradients);
    if (isMlp) {
        const double D = double(sc.model.mlp.width), L = double(sc.model.mlp.layers);
        p.ops.push_back(makeOp("linear", Pass::Forward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
        p.ops.push_back(makeOp("linear.dgrad", Pass::Backward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
        p.ops.push_back(makeOp("linear.wgrad", Pass::Backward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
        for (auto& op : p.ops) { // Y[B x D] = X W, dX = dY W^T, dW[D x D] = X^T dY
            const bool wgrad = op.name == std::string_view("linear.wgrad");
            op.kind = OpKind::Gemm;
            op.m = wgrad ? D : b;
            op.n = D;
            op.k = wgrad ? b : D;
        }
        return;
    }
    // One rank's share: its tensor-parallel shard of the matrices, s / cp queries against all s keys.
    LayerOpOptions options;
    options.flash = tr.flashAttention;
    options.fusion = sc.stepTime.kernelFusion == KernelFusion::Eager ? KernelFusion::Eager : KernelFusion::Fused;
    options.loss = lossKernelFor(sc.stepTime.framework, sc.stepTime.crossEntropy);
    options.expertRanks = par.ep;
    options.sortByLocalExpert = sc.stepTime.moeDispatcher == MoeDispatcher::AllToAll;
    const MoeTokenShare share = moeTokenShare(par);
    options.moeTokenSplit = share.split;
    options.expertGather = share.gather;
    options.expertWidthScale = share.widthScale;
    options.routerFused = sc.stepTime.moeRouterFusion;
    options.routerAuxLoss = effectiveMoeAuxLoss(sc) != MoeAuxLoss::None;
    options.routerFp32 = sc.training.moeRouterFp32;
    // Megatron-LM's --gradient-accumulation-fusion defaults on (training/arguments.py
    // --no-gradient-accumulation-fusion; Megatron-Bridge's GPT provider enables it where the fused
    // kernels exist) and Megatron-Core passes it to Transformer Engine as fuse_wgrad_accumulation
    // (extensions/transformer_engine.py, d98e8a64d), for the experts' grouped GEMMs too.
    options.accumulateWgrad = sc.stepTime.framework == Framework::Megatron;
    // Megatron's --tp-comm-overlap is Transformer Engine's userbuffers (sequence parallelism required):
    // the GEMMs beside the collectives run in chunks (LayerOpOptions; TE module/base.py initialize_ub).
    if (userbuffersTpOverlap(sc)) {
        options.ringChunks = int(tp);
        options.pipelineChunks = kUserbuffersPipelineChunks;
    }
    if (sc.finetune.peft()) {
        options.frozenBase = true;
        options.loraRank = double(sc.finetune.loraRank);
        options.loraTargets = sc.finetune.targets;
        if (p.finetune.quantised > 0) {
            options.dequantBytes = p.finetune.baseBytesPerValue;
            options.dequantName = sc.finetune.base == BaseStorage::Nf4 ? "bitsandbytes dequantize_4bit (NF4 to bf16)"
                                                                       : "bitsandbytes int8 dequantize (row scales)";
        }
    }
    // Sliding windows and chunks: a fused kernel visits only the blocks inside the window (FlashAttention
    // window_size), so the average layer's attention sees keys = 2 · mean causal context instead of s;
    // an unfused path computes and masks the whole square.
    double keys = s;
    if (tr.flashAttention && (shape.slidingWindow > 0 || shape.attentionChunk > 0))
        keys = std::min(s, 2 * meanCausalContext(shape, s));
    appendLayerOps(p.ops, tensorParallelShard(shape, int(tp)), s / double(cp), b, e, ew, eg, options, hw, keys);
    if (par.sequenceParallel && tp > 1) {
        // Sequence parallelism splits the norms, residuals and dropouts over the TP ranks
        // (Korthikanti et al. 2022 §4.2.2).
        for (auto& op : p.ops) {
            const std::string_view name = op.name;
            if (name.rfind("norm_", 0) == 0 || name.rfind("residual_", 0) == 0)
                splitOp(op, double(tp), hw);
        }
    }
    applyLowPrecisionRecipe(sc, p); // FP8 / FP4: what stays in 16 bits, the quantise kernels
    // Roofline bound on MFU: model FLOPs of one micro-batch over the ideal time of its ops.
    double ideal = 0;
    for (const auto& op : p.ops)
        ideal += op.timeSeconds * op.count;
    const double microFlops = c.flopsPerToken * s * b / double(tp * cp); // this rank's share
    const double rooflineMfu = ideal > 0 ? microFlops / (ideal * hw.peakFlops) : 0;
    derive(p, "roofline.max_mfu", "{model_flops} / ({ideal_time} · {C})", rooflineMfu, "",
           "roofline: each op at max(F / C, Q / beta), no overlap between ops",
           {{"model_flops", microFlops}, {"ideal_time", ideal}, {"C", hw.peakFlops}});
    if (sc.stepTime.mode == TimeMode::Mfu && sc.cluster.mfu > rooflineMfu) {
        p.warnings.push_back(
            {"mfu_above_roofline",
             fmt::format("cluster.mfu {:.2f} is above the {:.2f} that the roofline allows for this layer at "
                         "micro-batch {}",
                         sc.cluster.mfu, rooflineMfu, tr.microBatch)});
    }
}

} // namespace napkin::core::detail
