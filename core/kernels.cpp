// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels.h"

namespace napkin::core {

namespace {

constexpr double kF32 = 4; // fp32 intermediates

} // namespace

KernelCost rmsNormCost(KernelFusion fusion, Pass pass, double e)
{
    const bool fwd = pass == Pass::Forward;
    if (fusion != KernelFusion::Eager) // read x, write y | read x and dy, write dx (Apex/TE fused RMSNorm)
        return fwd ? KernelCost{5, 2 * e, 1, "fused RMSNorm kernel"}
                   : KernelCost{8, 3 * e, 1, "fused RMSNorm backward kernel"};
    if (fwd)
        // x.float() (e + 4), pow (8), mean (4), +eps and rsqrt (per row), x * r (8), type_as (4 + e),
        // * weight (2e): torchtitan models/norms.py RMSNorm (9dec370), HF LlamaRMSNorm.
        return {5, (e + kF32) + 2 * kF32 + kF32 + 2 * kF32 + (kF32 + e) + 2 * e, 8,
                "eager RMSNorm: x.float, pow, mean, add, rsqrt, mul, type_as, mul weight"};
    // Autograd of the same ops: mul-weight backward (g·w, g·x̂ and its row sum: 6e), type_as
    // backward (e + 4), mul backward (g·r 8, g·x 12 and its row sum 4), rsqrt/add/mean backward
    // (the mean's gradient expanded to full size: 4), pow backward (x^1, ·2, ·g: 28), the two
    // gradients of x summed (12), x.float() backward (4 + e).
    return {8, 6 * e + (e + kF32) + 24 + kF32 + 28 + 12 + (kF32 + e), 15,
            "eager RMSNorm backward: autograd of the forward's ops (PyTorch derivatives.yaml)"};
}

KernelCost ropeCost(KernelFusion fusion, Pass pass, double e)
{
    (void)pass; // the backward multiplies by the conjugate: the same kernels and bytes
    if (fusion != KernelFusion::Eager)
        return {3, 2 * e, 1, "fused rotary-embedding kernel (Apex fused_apply_rotary_pos_emb, Transformer Engine)"};
    // x.float() (e + 4), complex multiply by freqs_cis (8; the table is small), type_as (4 + e):
    // torchtitan models/llama/model.py apply_rotary_emb (9dec370), Meta's Llama reference code.
    return {3, (e + kF32) + 2 * kF32 + (kF32 + e), 3, "eager RoPE: x.float, view_as_complex multiply, type_as"};
}

KernelCost swigluCost(KernelFusion fusion, Pass pass, double e)
{
    const bool fwd = pass == Pass::Forward;
    if (fusion != KernelFusion::Eager) // read gate and up, write h | read dh, gate, up; write dgate, dup
        return fwd ? KernelCost{5, 3 * e, 1, "fused SwiGLU kernel (Megatron bias_swiglu, Transformer Engine)"}
                   : KernelCost{8, 5 * e, 1, "fused SwiGLU backward kernel"};
    // F.silu(w1(x)) * w3(x): silu (2e) then mul (3e); backward: dh·up and dh·silu (3e each), silu
    // backward (3e) (torchtitan models/llama/model.py FeedForward).
    return fwd ? KernelCost{5, 5 * e, 2, "eager SwiGLU: silu, mul"}
               : KernelCost{8, 9 * e, 3, "eager SwiGLU backward: two muls, silu backward"};
}

KernelCost hiddenDropoutExtra(KernelFusion fusion, Pass pass, double e)
{
    (void)pass; // forward writes the 1-byte mask, backward reads it
    if (fusion != KernelFusion::Eager)
        return {0, 1, 0, "bias-dropout-add fused (Megatron-LM fused_bias_dropout_add): + the 1-byte mask"};
    return {1, 2 * e + 1, 1, "eager nn.Dropout before the residual add: its own kernel + the 1-byte mask"};
}

KernelCost attentionDropoutCost(Pass pass, double e)
{
    (void)pass;
    // Megatron-LM ParallelAttention: attention_dropout(attention_probs) after the fused softmax:
    // read e, write e and the 1-byte mask | read the gradient and the mask, write e.
    return {1, 2 * e + 1, 1, "attention-probability dropout (Megatron-LM ParallelAttention.attention_dropout)"};
}

KernelCost lossCost(LossKernel loss, Pass pass, double e)
{
    const bool fwd = pass == Pass::Forward;
    if (loss == LossKernel::Fused) {
        // Transformer Engine's Triton cross-entropy (transformer_engine/pytorch/triton/cross_entropy.py,
        // what Megatron runs with --cross-entropy-loss-fusion --cross-entropy-fusion-impl te):
        // online_softmax_kernel reads the logits once for each row's max and sum (e); cross_entropy_kernel
        // reads them again and writes the gradient over them in place (2e) | element_mul_kernel scales
        // that gradient by the loss's gradient in place (2e).
        return fwd ? KernelCost{5, 3 * e, 2,
                                "fused cross-entropy (Transformer Engine Triton): online softmax, "
                                "loss and gradient written over the logits"}
                   : KernelCost{1, 2 * e, 1, "fused cross-entropy backward: the stored gradient scaled in place"};
    }
    if (loss == LossKernel::MegatronVocabParallel) {
        // Megatron-LM gpt_model / core tensor_parallel cross_entropy.py: output.float() (e + 4), max
        // (4), sub_ (8), exp (8), sum (4), div_ (8) | grad_input.mul_ (8), .float() backward (4 + e).
        return fwd ? KernelCost{5, (e + kF32) + kF32 + 2 * kF32 + 2 * kF32 + kF32 + 2 * kF32, 6,
                                "Megatron vocab-parallel cross-entropy on fp32 logits: float, max, sub_, exp, sum, "
                                "div_"}
                   : KernelCost{3, 2 * kF32 + (kF32 + e), 2,
                                "Megatron vocab-parallel cross-entropy backward: mul_, cast"};
    }
    // torchtitan train.py (9dec370): cross_entropy(pred.flatten(0, 1).float(), labels): cast (e + 4),
    // log_softmax (reads the row for its max and its sum, then writes: 16) | nll_loss backward
    // (zeros 4 + scatter), log_softmax_backward (reads gradient and output for the row sum and
    // the write: 16), cast back (4 + e).
    return fwd ? KernelCost{5, (e + kF32) + 4 * kF32, 3, "F.cross_entropy on fp32 logits: float, log_softmax, nll_loss"}
               : KernelCost{3, kF32 + 4 * kF32 + (kF32 + e), 4,
                            "F.cross_entropy backward: zeros, scatter, log_softmax_backward, cast back"};
}

LossKernel lossKernelFor(Framework framework, CrossEntropyChoice choice)
{
    if (choice == CrossEntropyChoice::Fused)
        return LossKernel::Fused;
    return framework == Framework::Torchtitan ? LossKernel::PyTorchCrossEntropy : LossKernel::MegatronVocabParallel;
}

KernelCost routerCost(bool fused, bool auxLoss, Pass pass)
{
    const bool fwd = pass == Pass::Forward;
    // Per element of the T x E logits, fp32 (Megatron-Core keeps the router's scores in fp32).
    if (fused) {
        // Transformer Engine's fused router (TE >= 2.7, transformer_engine/pytorch/router.py):
        // fused_topk_with_score_function reads the logits and writes the probabilities and the
        // routing map (4 + 4 + 1) | reads their gradient and the saved probabilities, writes the
        // logits' gradient (4 + 4 + 4). With the aux loss: fused_compute_score_for_moe_aux_loss (the
        // same bytes again), routing_map.sum for the tokens per expert (1), fused_moe_aux_loss (4),
        // the tracker's two scalar updates | the scores' backward and the loss's (4 + 4 + 4 and 4),
        // MoEAuxLossAutoScaler's ones_like * scale on a scalar. Kernels counted from Megatron-Core
        // (router.py, moe_utils.py at d98e8a64d); each TE function taken as one kernel.
        if (!auxLoss)
            return fwd ? KernelCost{6, 9, 1, "Transformer Engine fused top-k router (softmax, top-k, probs, map)"}
                       : KernelCost{4, 12, 1, "Transformer Engine fused top-k router backward"};
        return fwd ? KernelCost{12, 9 + 9 + 1 + 4, 6,
                                "Transformer Engine fused router and aux loss (scores, tokens per expert, loss)"}
                   : KernelCost{8, 12 + 12 + 4, 4, "Transformer Engine fused router and aux-loss backward"};
    }
    // PyTorch ops: logits.float (e + 4; 4 + 4 here: the router computes in fp32), softmax (8), topk
    // (4 read, k values written), zeros + scatter of the probabilities (4 + 4) and of the routing map
    // (4 + 1 and a bool cast), the probabilities' scaling and cast (8), small index kernels | gather
    // of the probabilities' gradient (4 + 4), softmax backward (12), the cast's backward (8). The aux
    // loss adds the scores' softmax (8), topk and its map (4 + 5), routing_map.sum (1), probs.sum (4),
    // f · P and the sum over E, coefficient, tracker updates (scalars) | the sum's expanded gradient
    // (4), softmax backward (12), scalar kernels (moe_utils.py switch_load_balancing_loss_func and
    // compute_routing_scores_for_aux_loss, router.py attach_and_log_load_balancing_loss).
    if (!auxLoss)
        return fwd ? KernelCost{6, 8 + 8 + 4 + 8 + 5 + 8, 13, "PyTorch top-k routing: cast, softmax, topk, scatters"}
                   : KernelCost{4, 8 + 12 + 8, 8, "PyTorch top-k routing backward (autograd)"};
    return fwd ? KernelCost{12, 41 + 8 + 9 + 1 + 4, 28,
                            "PyTorch top-k routing and aux loss: cast, softmax, topk, scatters, token counts, loss"}
               : KernelCost{8, 28 + 4 + 12, 16, "PyTorch top-k routing and aux-loss backward (autograd)"};
}

} // namespace napkin::core
