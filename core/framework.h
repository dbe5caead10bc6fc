// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What overlaps with what in a training step is a fact of the framework, not a free knob. Each
// framework's rules, pinned to a named version, with sources (docs/plan-schema.md §6.1):
//
//   megatron   Megatron-Core 0.9 (2024) with the distributed optimizer, as its example training
//              scripts run it (--overlap-grad-reduce, --overlap-param-gather): gradient reduce-scatter
//              overlaps the backward, the parameter all-gather the next forward; tensor-parallel
//              collectives are exposed (--tp-comm-overlap is opt-in, Transformer Engine userbuffers);
//              attention through Transformer Engine's cuDNN fused kernels (FlashAttention-3 class on
//              Hopper). Full recompute repeats the forward's TP collectives. Elementwise ops fused
//              (Apex/TE LayerNorm and RMSNorm, bias-GeLU, bias-dropout-add, SwiGLU, RoPE kernels);
//              the loss is its vocab-parallel cross-entropy on fp32 logits (core/kernels.h).
//   torchtitan torchtitan 0.1 / PyTorch FSDP2 (Liang et al. 2024, arXiv 2410.06511): parameters are
//              all-gathered for the forward and again for the backward (reshard_after_forward), and
//              gradients reduce-scattered, every micro-batch, each gather copied out of and each
//              reduction copied into its buffer on the compute stream; implicit prefetching overlaps each
//              gather with the previous block's compute; activation checkpointing recomputes inside
//              the backward's gathered window (no extra gather); async TP is opt-in; attention
//              through PyTorch SDPA (FlashAttention-2 kernels). Selective activation checkpointing
//              is its op-level policy (torchtitan parallelize.py `_save_list`: matmuls and SDPA
//              saved, "except every second mm"): half the forward matmuls and every elementwise op
//              are recomputed. Eager PyTorch unless torch.compile is on (kernel_fusion = fused):
//              the model code's RMSNorm, RoPE, SwiGLU and repeat_kv run op by op; the loss is
//              F.cross_entropy on fp32 logits (torchtitan train.py at 9dec370, 2024-12-26).
//   deepspeed  DeepSpeed 0.14 ZeRO (deepspeed/runtime/zero/config.py): overlap_comm defaults to
//              false for stages 1-2 and to true for stage 3; stage 3 gathers parameters for the
//              forward, the backward and again for a recomputed forward; FlashAttention-2 kernels;
//              Megatron-DeepSpeed's fused elementwise kernels.
//
// `auto` picks torchtitan when parallel.fsdp is set, deepspeed when parallel.zero is 3, else megatron.

#include "achievable.h"
#include "scenario.h"

namespace napkin::core {

struct FrameworkRules {
    Framework framework = Framework::Megatron;
    const char* version = "";
    bool overlapDp = true;
    bool overlapTp = false;
    bool regatherForRecompute = false;         // ZeRO-3 / FSDP gathers again for a recomputed forward
    bool reduceScatterEveryMicroBatch = false; // sharded gradients reduced per micro-batch (ZeRO-3, FSDP)
    bool fsdpCopies = false;                   // FSDP2 copies gathered parameters and gradients on the compute stream
    AttentionKernel hopperAttention = AttentionKernel::Flash2;
    KernelFusion fusion = KernelFusion::Fused; // how the framework runs elementwise ops by default
    const char* source = "";
};

FrameworkRules frameworkRules(Framework framework);

// Resolves step_time.framework = auto and the framework-governed keys left at "auto".
void resolveFramework(Scenario& scenario);
// What step_time.framework = auto means: torchtitan with FSDP, deepspeed at ZeRO-3, else megatron.
Framework autoFramework(bool fsdp, int zeroStage);
// Megatron-Core refuses expert parallelism beside tensor parallelism without sequence parallelism
// (transformer_config.py __post_init__: "When using expert parallelism and tensor parallelism,
// sequence parallelism must be used").
bool requiresSequenceParallel(Framework framework, int tp, int ep);

// Tensor-parallel overlap as Transformer Engine's userbuffers run it (Megatron --tp-comm-overlap, which
// needs sequence parallelism): chunked GEMMs (core/roofline.h LayerOpOptions) and 16 SMs for the
// reduce-scatters. Other frameworks' overlap (torchtitan's async TP) hides the traffic without them.
bool userbuffersTpOverlap(const Scenario& scenario);

// Parameter all-gathers per micro-batch where parameters are sharded per micro-batch (ZeRO-3 / FSDP):
// forward and backward (Liang et al. 2024 §2, FSDP2), once under SHARD_GRAD_OP (it keeps the gathered
// parameters until the backward), one more where the framework re-fetches for a recomputed forward
// (FrameworkRules::regatherForRecompute, full recompute). 0 under ZeRO-0-2.
double shardedGathersPerMicroBatch(const Scenario& scenario);

// FSDP2's copies on the compute stream, bytes per micro-batch (torch/distributed/fsdp/_fully_shard/
// _fsdp_collectives.py, PyTorch 2.5-2.6): after each all-gather, foreach_all_gather_copy_out reads the
// gathered buffer and writes the unsharded parameters (FSDPParamGroup.wait_for_unshard, on the current
// stream: "overlap the current copy-out with the next all-gather"); before each reduce-scatter,
// foreach_reduce_scatter_copy_in reads the unsharded gradients and writes the reduce-scatter input in
// the reduce dtype (torch._chunk_cat on the current stream; the reduce-scatter stream then waits on it).
// paramsPerRank: the parameters this rank gathers; trained: the share that has gradients. 0 without
// step_time.fsdp_copies (resolved from the framework) and where nothing is sharded per micro-batch.
double fsdpCopyBytes(const Scenario& scenario, double paramsPerRank, double shardRanks, double trained = 1);

// The attention kernel a scenario runs on a GPU of this compute capability.
AttentionKernel attentionKernelFor(const Scenario& scenario);

// training.moe_aux_loss resolved: "auto" is seq_aux_loss for a model with a score-correction bias
// (DeepSeek-V3, Megatron-Bridge deepseek_v3_bridge.py), else aux_loss (Megatron-Core's default
// --moe-router-load-balancing-type); a dense model has none.
MoeAuxLoss effectiveMoeAuxLoss(const Scenario& scenario);

} // namespace napkin::core
