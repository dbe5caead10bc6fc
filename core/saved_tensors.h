// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The tensors a transformer layer's forward keeps for its backward, one by one, and which recompute
// policies drop them. Per-layer activation bytes are their sum.
//
// Two lists, as the frameworks run the layer (core/kernels.h):
//   fused  Megatron-Core with Transformer Engine (and torch.compile): Korthikanti et al. 2022 §4.1's
//          tensors, generalised to GQA, SwiGLU, QK-norm and no-dropout models. At GPT-3 shape with
//          dropout and no FlashAttention the sum is Table 2: sbh(10 + 24/t) + 5as²b/t at 16 bits.
//          The norms' fp32 statistics (4 bytes per token each) are left out, as in the paper.
//   eager  PyTorch running the model code op by op (torchtitan's Llama at 9dec370, Dec 2024): what
//          each ATen op's derivative saves (tools/autograd/derivatives.yaml). RMSNorm saves x.float()
//          (pow, mul), rsqrt, the normalised bf16 tensor (mul by weight); RoPE saves the fp32 copies
//          of q and k (the complex multiply); repeat_kv's copies of K and V are SDPA's inputs;
//          SwiGLU saves w1's output (silu), silu's and w3's outputs (mul) and the product (w2).
//
// Policies (training.recompute): none; selective = Korthikanti's attention core = modules
// ["core_attn"]; full (only the layer input); modules (Megatron-Core --recompute-modules: core_attn,
// mlp, layernorm; the inputs of a recomputed module stay, its internals go); op (torchtitan's
// op-level selective checkpointing at 9dec370, torchtitan/parallelisms/parallelize_llama.py: the
// block input and the outputs of SDPA and of every other mm in forward order: wq, wv, w1 (and w2
// with SwiGLU), everything else recomputed).

#include "model.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

// training.recompute: none, selective (the attention core), full (the layer input only), modules
// (Megatron-Core --recompute-modules), op (torchtitan's op-level policy).
enum class Recompute { None, Selective, Full, Modules, Op };

// Bits of SavedTensor::droppedBy: the policies under which the tensor is not held from the forward
// to the backward. kDropNone marks a tensor only a checkpoint policy keeps (the op policy's matmul
// outputs, an eager layer's input): plain autograd frees it.
enum DropBit : std::uint16_t {
    kDropNone = 1u << 0,
    kDropSelective = 1u << 1,
    kDropFull = 1u << 2,
    kDropOp = 1u << 3,
    kDropCoreAttn = 1u << 4,  // modules: core_attn
    kDropMlp = 1u << 5,       // modules: mlp
    kDropLayernorm = 1u << 6, // modules: layernorm
    kDropMoe = 1u << 7,       // modules: moe (the MoE layer: router, dispatch, experts, shared experts, combine)
    kDropMoeAct = 1u << 8,    // modules: moe_act (the routed experts' activation output)
    kDropShared = 1u << 9,    // modules: shared_experts
    kDropMlaUp = 1u << 10     // modules: mla_up_proj (MLA's per-head q, k, v after the up-projections and RoPE)
};

// training.recompute_modules as bits: Megatron-Core's names (transformer_config.py recompute_modules:
// "mlp" is the dense MLP submodule, "moe" the MoE layer; moe_act, layernorm and mla_up_proj discard
// their outputs and recompute them from their kept inputs).
enum : std::uint8_t {
    kModuleCoreAttn = 1u << 0,
    kModuleMlp = 1u << 1,
    kModuleLayernorm = 1u << 2,
    kModuleMoe = 1u << 3,
    kModuleMoeAct = 1u << 4,
    kModuleShared = 1u << 5,
    kModuleMlaUp = 1u << 6
};

struct SavedTensor {
    const char* name = "";         // "attention_norm.fp32_input"
    const char* op = "";           // the op whose backward needs it
    std::array<double, 4> shape{}; // per rank (after TP / SP / CP): [s, b, width] or [b, heads, s, s]
    int dims = 0;
    const char* dtype = ""; // "bf16", "fp32", "bool"
    double bytes = 0;       // per layer per micro-batch on this rank
    bool scores = false;    // grows with the attention scores (a · s² per sequence)
    bool stats = false;     // FlashAttention's fp32 log-sum-exp (a · s per sequence)
    std::uint16_t droppedBy = 0;
    bool kept = false; // held under the scenario's policy
};

struct TensorContext {
    double s = 0, b = 0; // tokens of a sequence on this rank (s / cp), micro-batch
    double e = 2;        // activation bytes per value
    const char* eName = "bf16";
    double t = 1; // tensor-parallel ranks
    bool sequenceParallel = false;
    bool flash = true;
    bool eager = false; // step_time.kernel_fusion eager: the eager list
    Recompute policy = Recompute::None;
    std::uint8_t modules = 0;    // with Recompute::Modules
    double routingImbalance = 1; // mixture of experts: the busiest expert rank's rows over the mean (1 without EP)
    double routedRows = 1;       // experts' input rows per routed token of s on a rank (gather / split)
    double expertWidthScale = 1; // each expert's fc1 width against a TP-sharded one (moeTokenShare: tp / etp)
    // LoRA (core/finetune.h): adapters on `loraTargets` linear layers of rank loraRank whose inputs sum
    // to loraInputs features; with lora_dropout > 0 each adapter reads its own dropped-out input.
    double loraRank = 0, loraTargets = 0, loraInputs = 0;
    bool loraDropout = false;
    // An FP8 / FP4 recipe (core/lowprecision.h): the GEMM classes whose inputs Transformer Engine saves
    // quantised (lowBytes per value, the columnwise copy wgrad reads) instead of in 16 bits.
    std::uint8_t lowInputs = 0;
    double lowBytes = 0;
    const char* lowName = "";
};

struct LayerTensors {
    std::array<SavedTensor, 56> tensors{};
    int count = 0;
    int keptCount = 0;         // tensors held under the policy
    double kept = 0;           // what one layer holds per micro-batch under the policy
    double autograd = 0;       // what it would hold with no recompute
    double rematerialised = 0; // held by autograd, dropped by the policy: back during the layer's backward
    double keptPerToken = 0;   // kept bytes per token, outside the scores and the statistics
    double keptPerScore = 0;   // kept bytes per attention score element
    double keptStats = 0;      // kept FlashAttention statistics, bytes
};

LayerTensors layerSavedTensors(const TransformerShape& m, const TensorContext& c);
// The same, written into `out` (estimate() fills the plan's list in place: no copy of the array).
void layerSavedTensors(const TransformerShape& m, const TensorContext& c, LayerTensors& out);

// torchtitan's op policy recomputes the even matmuls of a block in forward order (wq, wk, wv, wo,
// w1, w3, w2 with SwiGLU; wq, wk, wv, wo, w1, w2 with GELU): wk, wo and w3 (GELU: w2). Their
// parameters per layer, and the share of each of the roofline's fused GEMM ops (qkv_proj, out_proj,
// mlp_gate_up, mlp_up, mlp_down) that it runs again.
double opPolicyRecomputedParams(const TransformerShape& m);
double opPolicyRecomputedShare(std::string_view gemmOp, const TransformerShape& m);

// Whether a tensor with these drop bits is dropped under the policy (modules: any listed module).
bool droppedUnder(std::uint16_t droppedBy, Recompute policy, std::uint8_t modules);

// Plan-JSON names of the policies a tensor's bits name: "none", "selective", "full", "op",
// "modules:core_attn", "modules:mlp", "modules:layernorm".
std::vector<std::string> droppedByNames(std::uint16_t droppedBy);
// The tensors a derivation of the activations names: "kept: input_norm.input, ...; recomputed for the
// backward: ..." (plain text, for the app's derivation panel and reports).
std::string savedTensorsSummary(const LayerTensors& lt);

// Megatron-Core recompute module names accepted in training.recompute_modules, and the module bit
// of one (0 when unknown). The MoE and MLA modules need a model with those layers (checked by the
// loader).
std::uint8_t recomputeModuleBit(const std::string& name);
std::string recomputeModuleNames(std::uint8_t modules); // "core_attn, mlp"
std::vector<std::string> recomputeModuleList(std::uint8_t modules);
const char* toString(Recompute r); // core/scenario.cpp

} // namespace napkin::core
