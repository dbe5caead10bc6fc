// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Arithmetic intensity and the roofline: t >= max(F / C, Q / beta), I = F / Q, ridge I* = C / beta
// (Williams, Waterman & Patterson 2009; CS336 lecture 2).

#include "kernels.h"
#include "plan.h"

namespace napkin::core {

struct OpCost {
    double flops = 0;
    double bytes = 0;
};

// Seeds' op table (CS336 lecture 2), e = bytes per element:
OpCost gemmCost(double m, double k, double n, double e, bool exactAdds = false); // 2MKN (or MN(2K-1)); e(MK + KN + MN)
OpCost reluCost(double n, double e);                                             // n ops; 2en bytes (read + write)
OpCost geluCost(double n, double e);                                             // 20n ops (illustrative); 2en bytes
OpCost dotCost(double n, double e);                                              // 2n - 1 FLOPs; e(2n + 1) bytes
OpCost matvecCost(double n, double e);                                           // n(2n - 1) FLOPs; e(n² + 2n) bytes

RooflineOp makeOp(const char* name, Pass pass, OpUnit unit, OpCost cost, const HardwareSummary& hw, double count = 1);
// The same op with its FLOPs and bytes divided by `ways` (sequence parallelism splits the norms and
// residuals over the TP ranks): the roofline fields are recomputed, everything else is kept.
void splitOp(RooflineOp& op, double ways, const HardwareSummary& hw);

// How a layer's ops run: FlashAttention or unfused attention, the framework's elementwise kernels
// (core/kernels.h) and its loss.
// Transformer Engine's userbuffers defaults (transformer_engine/pytorch/module/base.py initialize_ub):
// the pipeline and bulk overlaps split their GEMM in 4 and run the reduce-scatters and bulk transfers on
// 16 SMs that the GEMM leaves free (set_sm_margin); ring exchange moves chunks with the copy engines
// (1 SM, no margin).
inline constexpr int kUserbuffersPipelineChunks = 4;
inline constexpr double kUserbuffersSms = 16;

struct LayerOpOptions {
    bool flash = true;
    KernelFusion fusion = KernelFusion::Fused;
    LossKernel loss = LossKernel::MegatronVocabParallel;
    int expertRanks = 1;           // parallel.ep: a rank reads the weights of experts / ep routed experts only
    bool sortByLocalExpert = true; // the all-to-all dispatcher's chunk sort (false: DeepEP lays tokens out)
    // Mixture of experts (moeTokenShare in estimate_stages.h): the router and the permutes see
    // n / moeTokenSplit tokens, the experts n / moeTokenSplit · expertGather rows, and one expert's fc1
    // columns are the TP-sharded shape's times expertWidthScale (tp / etp). 1, 1, 1: every rank routes
    // all n tokens, the experts split as TP.
    double moeTokenSplit = 1, expertGather = 1, expertWidthScale = 1;
    // The router's softmax / top-k and load-balancing loss kernels (core/kernels.h routerCost):
    // Transformer Engine's fused router or PyTorch ops; with or without the aux loss.
    bool routerFused = false, routerAuxLoss = false;
    // Megatron-Core --moe-router-dtype fp32 (RouterGatingLinearFunction): fp32 logits from BF16
    // operands, and a backward that casts the input and weight to fp32 and runs both gradient GEMMs on
    // fp32 operands (TF32 on the tensor cores), casting the gradients back.
    bool routerFp32 = false;
    // Weight gradients accumulated in the GEMM (Megatron --gradient-accumulation-fusion, on by default:
    // Transformer Engine's fuse_wgrad_accumulation, beta = 1 into main_grad): each wgrad GEMM reads the
    // gradient buffer it adds into as well as writing it.
    bool accumulateWgrad = false;
    // Tensor-parallel communication overlapped as Transformer Engine's userbuffers do it (Megatron
    // --tp-comm-overlap): the GEMMs beside an all-gather run as ringChunks GEMMs of M / ringChunks rows
    // one after another (ring exchange, one chunk per TP rank), those beside a reduce-scatter as
    // pipelineChunks (1: not overlapped). Dense layers only: the experts' grouped GEMMs are not split.
    int ringChunks = 1, pipelineChunks = 1;
    // LoRA / QLoRA (core/finetune.h): the base's weights frozen (no weight-gradient GEMMs), adapters of
    // rank loraRank on the loraTargets linear layers; a quantised base is dequantised to the weight
    // dtype before each forward and backward GEMM (bitsandbytes), reading dequantBytes per weight.
    bool frozenBase = false;
    double loraRank = 0;
    std::uint8_t loraTargets = 0;
    double dequantBytes = 0;
    const char* dequantName = "";
};

// The routed experts' GEMMs as one grouped GEMM (Megatron-Core / Transformer Engine grouped GEMM, one
// CTA grid over every local expert's tiles): rows per local expert = n · k · ep / E for n tokens of
// the micro-batch (balanced routing), experts / ep groups.
struct GroupedExperts {
    double share = 0;  // routed experts' part of the MLP GEMMs' FLOPs
    double rows = 0;   // rows per local expert
    double groups = 0; // local experts
};
GroupedExperts groupedExperts(const TransformerShape& shard, double tokens, int expertRanks);

// One transformer layer at micro-batch b and sequence s, forward then backward, then the logits
// and loss (count 1). eAct: activation bytes; eW: weight bytes; eG: gradient bytes.
// keyLen: keys each query attends to (context parallelism: s / cp queries against all s keys);
// 0 means s. For a tensor-parallel rank pass the rank's shard (tensorParallelShard).
void appendLayerOps(std::vector<RooflineOp>& ops, const TransformerShape& m, double s, double b, double eAct, double eW,
                    double eG, const LayerOpOptions& options, const HardwareSummary& hw, double keyLen = 0);

// One tensor-parallel rank's share of a layer (Shoeybi et al. 2019, Megatron-LM §3): attention heads,
// KV heads (at least one: replicated when kv_heads < t), the MLP width and the vocabulary split t ways.
TransformerShape tensorParallelShard(const TransformerShape& m, int t);

} // namespace napkin::core
