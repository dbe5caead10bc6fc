// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The elementwise kernels a framework actually launches for each memory-bound op of a layer, with
// the bytes each one reads and writes per element of the tensor it works on (e: activation bytes,
// 4: fp32). Fused: one kernel that reads its inputs and writes its outputs once (Megatron-LM /
// Transformer Engine / Apex kernels, torch.compile). Eager: every ATen op of the model's Python
// code is its own kernel, with fp32 intermediates where the code upcasts; the backward is what
// autograd runs for those ops (PyTorch tools/autograd/derivatives.yaml).
//
// Per element of the op's tensor (forward | backward, bytes; kernels):
//   RMSNorm  fused     2e + w/row           | 3e                           ; 1 | 1
//            eager     28 + 4e (x.float, pow, mean, +eps, rsqrt, mul, type_as, mul weight:
//                      torchtitan models/norms.py RMSNorm, HF LlamaRMSNorm) | 76 + 8e ; 8 | 15
//   LayerNorm          one ATen kernel each way (native_layer_norm): eager = fused
//   RoPE     fused     2e                   | 2e  (Apex/TE fused rotary kernels)  ; 1 | 1 per tensor
//            eager     16 + 2e (x.float, complex multiply, type_as: torchtitan llama/model.py
//                      apply_rotary_emb)   | 16 + 2e                      ; 3 | 3 per tensor
//   SwiGLU   fused     3e (per FFN element) | 5e                           ; 1 | 1
//            eager     5e (silu, mul)       | 9e (two muls, silu backward) ; 2 | 3
//   dropout  fused into bias-dropout-add: +1 (mask write) | +1 (mask read)
//            eager (a dropout kernel): +2e + 1 | +2e + 1; attention-probability dropout of unfused
//            attention is its own kernel in every framework (Megatron-LM ParallelAttention);
//            FlashAttention draws it inside the kernel (Philox): no bytes.
//   repeat_kv (eager GQA before SDPA, torchtitan llama/model.py): copies K and V to all heads
//   loss     fp32 logits: Megatron vocab-parallel cross-entropy (logits.float(), max, sub_, exp,
//            sum, div_ | mul_, cast back: 36 + e | 12 + e per logit) or PyTorch F.cross_entropy on
//            .float() logits (cast, log_softmax, nll_loss | zeros + scatter, log_softmax_backward,
//            cast back: 20 + e | 24 + e per logit).
//   router   softmax top-k over the T x E router logits, and the load-balancing loss, per MoE layer
//            (Megatron-Core moe/moe_utils.py topk_routing_with_score_function,
//            compute_routing_scores_for_aux_loss, switch_load_balancing_loss_func and router.py at
//            d98e8a64d): unfused 13 | 8 kernels, 28 | 16 with the aux loss; fused (Transformer
//            Engine's fused router, --moe-router-fusion) 1 | 1, 6 | 4 with the aux loss. Most work on
//            a T x E fp32 tensor or on E values: launch-bound at training sizes.

#include "plan.h"
#include "scenario.h"

namespace napkin::core {

struct KernelCost {
    double flops = 0;   // per element
    double bytes = 0;   // per element
    double kernels = 1; // launches
    const char* impl = "";
};

enum class LossKernel { MegatronVocabParallel, PyTorchCrossEntropy, Fused };

KernelCost rmsNormCost(KernelFusion fusion, Pass pass, double e);
KernelCost ropeCost(KernelFusion fusion, Pass pass, double e);           // per q or k element
KernelCost swigluCost(KernelFusion fusion, Pass pass, double e);         // per FFN element
KernelCost hiddenDropoutExtra(KernelFusion fusion, Pass pass, double e); // added to the residual add
KernelCost attentionDropoutCost(Pass pass, double e);                    // per score (unfused attention)
KernelCost lossCost(LossKernel loss, Pass pass, double e);               // per logit
KernelCost routerCost(bool fused, bool auxLoss, Pass pass);              // per router logit (T x E)

// The loss implementation: step_time.cross_entropy, or with "auto" the framework's (unfused) one.
LossKernel lossKernelFor(Framework framework, CrossEntropyChoice choice);

} // namespace napkin::core
