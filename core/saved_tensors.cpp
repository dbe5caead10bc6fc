// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "saved_tensors.h"

#include "lowprecision.h"

#include <algorithm>

namespace napkin::core {

namespace {

// Policies that drop everything but the layer input, and those that drop a tensor only a
// checkpoint policy keeps.
constexpr std::uint16_t kFullOp = kDropFull | kDropOp;
constexpr std::uint16_t kCheckpointOnly = kDropNone | kDropSelective | kDropCoreAttn | kDropMlp | kDropLayernorm;
constexpr std::uint16_t kCore = kDropSelective | kDropCoreAttn;

struct ListBuilder {
    const TensorContext& c;
    LayerTensors& out;

    // A [s, b, width] tensor of `bytesPer` bytes per value.
    void token(const char* name, const char* op, double width, double bytesPer, const char* dtype, std::uint16_t drop,
               bool stats = false)
    {
        if (out.count >= int(out.tensors.size()) || width <= 0)
            return;
        SavedTensor& t = out.tensors[std::size_t(out.count++)];
        t.name = name;
        t.op = op;
        t.shape = {c.s, c.b, width, 0};
        t.dims = 3;
        t.dtype = dtype;
        t.bytes = c.s * c.b * width * bytesPer;
        t.scores = false;
        t.stats = stats;
        t.droppedBy = drop;
        t.kept = false;
    }
    // A [b, heads, s, s] attention-score tensor.
    void scores(const char* name, const char* op, double heads, double bytesPer, const char* dtype, std::uint16_t drop)
    {
        if (out.count >= int(out.tensors.size()))
            return;
        SavedTensor& t = out.tensors[std::size_t(out.count++)];
        t.name = name;
        t.op = op;
        t.shape = {c.b, heads, c.s, c.s};
        t.dims = 4;
        t.dtype = dtype;
        t.bytes = c.b * heads * c.s * c.s * bytesPer;
        t.scores = true;
        t.stats = false;
        t.droppedBy = drop;
        t.kept = false;
    }
};

struct Widths {
    double rep = 0;                         // h, or h / t with sequence parallelism (norms, residual, masks)
    double row = 1;                         // one value per token (1 / t of the tokens with sequence parallelism)
    double h = 0;                           // h on every rank (a row-parallel matmul's output before its reduction)
    double q = 0, kv = 0, f = 0, heads = 0; // per tensor-parallel rank
    double routed = 0, router = 0;          // MoE, per token of the average layer: routed rows k·r, router columns E
    // The MLP width f split by the module that holds it (per token of the average layer, per TP rank):
    // dense MLP layers, routed experts (× imbalance) and shared experts of the MoE layers.
    double fDense = 0, fRouted = 0, fShared = 0;
    double mlaQ = 0, mlaKv = 0; // MLA: compressed query and key-value widths (0: not MLA / no q compression)
    double mlaRope = 0;         //   the shared RoPE key's width, in the key-value down-projection's output
    bool mla = false;
    bool swiglu = false, rope = false, dropout = false, repeat = false, layerNorm = false;
};

// A mixture-of-experts layer's own tensors (moe-notes.md §6.2; Megatron-Core moe_layer.py,
// token_dispatcher.py): the router's fp32 probabilities (T · E, kept for the aux loss and the
// top-k backward), the permuted tokens the experts' fc1 reads (T · k rows of d_model, on every
// expert-tensor rank: the dispatcher gathers them), and the experts' fc2 output that the
// probability-weighted combine needs. Listed at the average layer's width (MoE layers / L). A rank
// routes s / split tokens and the dispatcher gathers the rows over the expert-TP group
// (MoEAlltoAllTokenDispatcher; moeTokenShare in estimate_stages.h): gather / split of the k rows per
// token of s on each rank (etp / t with sequence parallelism), the probabilities 1 / t.
void moeInputs(ListBuilder& x, const Widths& w)
{
    if (w.routed <= 0)
        return;
    x.token("moe.router_probs", "router top-k and aux loss (fp32)", w.router, 4, "fp32", kFullOp | kDropMoe);
    x.token("moe.permuted_input", "expert fc1 (its input: k rows per token)", w.routed * w.h, x.c.e, x.c.eName,
            kFullOp | kDropMoe);
}

void moeOutputs(ListBuilder& x, const Widths& w)
{
    if (w.routed > 0)
        x.token("moe.expert_output", "unpermute and combine (weighted by the probabilities)", w.routed * w.h, x.c.e,
                x.c.eName, kFullOp | kDropMoe);
}

// The MLP's fc1 outputs and activation output, by module: the dense MLP layers ("mlp"), the routed
// experts ("moe"; "moe_act" discards the activation output and recomputes it from fc1's) and the
// shared experts ("moe", "shared_experts"). Fused kernels: SwiGLU keeps the gate and up halves and
// the product (Korthikanti et al. 2022 §4.1 generalised), GELU its input and output.
struct MlpNames {
    const char* gate;
    const char* up;
    const char* act;
    const char* fc1;
    std::uint16_t module; // the drop bits of the module that holds these tensors
    std::uint16_t actExtra;
};

void fusedMlp(ListBuilder& x, const Widths& w, double width, const MlpNames& n)
{
    const double e = x.c.e;
    const char* E = x.c.eName;
    if (width <= 0)
        return;
    if (w.swiglu) {
        x.token(n.gate, "swiglu (silu of the gate)", width, e, E, kDropFull | n.module);
        x.token(n.up, "swiglu (the product)", width, e, E, kFullOp | n.module);
    } else {
        x.token(n.fc1, "gelu (its input)", width, e, E, kDropFull | n.module);
    }
    x.token(n.act, "fc2 (its input)", width, e, E, kFullOp | n.module | n.actExtra);
}

constexpr MlpNames kDenseMlp{"mlp.gate", "mlp.up", "mlp.activation_output", "mlp.fc1_output", kDropMlp, 0};
constexpr MlpNames kRoutedMlp{"experts.gate",       "experts.up", "experts.activation_output",
                              "experts.fc1_output", kDropMoe,     kDropMoeAct};
constexpr MlpNames kSharedMlp{"shared_experts.gate",       "shared_experts.up",    "shared_experts.activation_output",
                              "shared_experts.fc1_output", kDropMoe | kDropShared, 0};

// Multi-head latent attention's compressed tensors (NVIDIA's DeepSeek-V3 ledger, moe-notes.md §1.6;
// Megatron-Core multi_latent_attention.py): the query's and the key-value's down-projection outputs
// (the latter with the shared RoPE key) that their norms read, and the normalised latents the
// up-projections read. mla_up_proj keeps these and discards what the up-projections and RoPE make.
void mlaLatents(ListBuilder& x, const Widths& w)
{
    if (!w.mla)
        return;
    const double e = x.c.e;
    const char* E = x.c.eName;
    if (w.mlaQ > 0) {
        x.token("mla.q_down_output", "q_layernorm (its input)", w.mlaQ, e, E, kDropFull);
        x.token("mla.q_latent", "linear_q_up_proj (its input)", w.mlaQ, e, E, kFullOp);
    }
    x.token("mla.kv_down_output", "kv_layernorm and RoPE of the shared key (its input)", w.mlaKv + w.mlaRope, e, E,
            kDropFull);
    x.token("mla.kv_latent", "linear_kv_up_proj (its input)", w.mlaKv, e, E, kFullOp);
}

// Megatron-Core + Transformer Engine (Korthikanti et al. 2022 Table 2's tensors). The op policy's
// bits follow torchtitan's mm order (wq, wk, wv, wo, w1, w3, w2: the odd ones kept).
void fusedList(ListBuilder& x, const Widths& w, const TransformerShape& m)
{
    const double e = x.c.e;
    const char* E = x.c.eName;
    x.token("input_norm.input", "input_layernorm (the layer input)", w.rep, e, E, 0);
    x.token("input_norm.output", "qkv_proj (its input)", w.rep, e, E, kFullOp | kDropLayernorm);
    if (m.qkNorm != QkNorm::None) {
        x.token("q_norm.input", "q_layernorm", w.q, e, E, kFullOp);
        x.token("k_norm.input", "k_layernorm", w.kv, e, E, kFullOp);
    }
    mlaLatents(x, w);
    const std::uint16_t up = w.mla ? kDropMlaUp : 0; // made by MLA's up-projections (and RoPE)
    // Without RoPE the attention's q is wq's output, which the op policy keeps.
    x.token("attention.q", "core_attention (QK^T)", w.q, e, E,
            std::uint16_t((w.rope ? kFullOp : std::uint16_t(kDropFull)) | up));
    if (w.rope && !w.mla)
        x.token("wq.output", "kept by the op policy (mm 1)", w.q, e, E, kCheckpointOnly | kDropFull);
    x.token("attention.k", "core_attention (QK^T)", w.kv, e, E, kFullOp | up);
    x.token("attention.v", "core_attention (attention over values)", w.kv, e, E, kDropFull | up);
    if (x.c.flash) {
        x.token("attention.logsumexp", "flash attention backward", w.heads, 4, "fp32", kDropFull | kCore, true);
    } else {
        x.scores("attention.softmax", "attention over values", w.heads, e, E, kFullOp | kCore);
        if (w.dropout) {
            x.scores("attention.dropout_mask", "attention dropout", w.heads, 1, "bool", kFullOp | kCore);
            x.scores("attention.dropout_output", "attention over values", w.heads, e, E, kFullOp | kCore);
        }
    }
    // Flash's output is kept by the op policy; the unfused path's is a bmm's, which it drops.
    x.token("attention.output", "out_proj (its input)", w.q, e, E, x.c.flash ? std::uint16_t(kDropFull) : kFullOp);
    if (w.dropout)
        x.token("attention.dropout_mask", "bias-dropout-add", w.rep, 1, "bool", kFullOp);
    x.token("mlp_norm.input", "pre_mlp_layernorm", w.rep, e, E, kFullOp);
    x.token("mlp_norm.output", "mlp_fc1 (its input)", w.rep, e, E,
            std::uint16_t(kFullOp | kDropLayernorm | (w.fDense > 0 ? kDropMlp : 0)));
    moeInputs(x, w);
    fusedMlp(x, w, w.fDense, kDenseMlp);
    fusedMlp(x, w, w.fRouted, kRoutedMlp);
    fusedMlp(x, w, w.fShared, kSharedMlp);
    moeOutputs(x, w);
    if (w.swiglu)
        x.token("w2.output", "kept by the op policy (mm 7)", w.h, e, E, kCheckpointOnly | kDropFull);
    if (w.dropout)
        x.token("mlp.dropout_mask", "bias-dropout-add", w.rep, 1, "bool", kFullOp);
}

// Eager PyTorch, torchtitan's Llama block (models/llama/model.py, models/norms.py at 9dec370).
void eagerNorm(ListBuilder& x, const Widths& w, const char* fp32Name, const char* rstdName, const char* normedName,
               const char* outName, const char* outOp, std::uint16_t outDrop)
{
    const double e = x.c.e;
    const char* E = x.c.eName;
    if (w.layerNorm) { // native_layer_norm saves its input, mean and rstd
        x.token(fp32Name, "layer_norm (its input)", w.rep, e, E, kFullOp);
        x.token(rstdName, "layer_norm (mean, rstd)", 2 * w.row, 4, "fp32", kFullOp);
    } else {
        x.token(fp32Name, "pow, mul (x.float())", w.rep, 4, "fp32", kFullOp);
        x.token(rstdName, "mul (rsqrt of the mean square)", w.row, 4, "fp32", kFullOp);
        x.token(normedName, "mul by weight (normalised, type_as(x))", w.rep, e, E, kFullOp);
    }
    x.token(outName, outOp, w.rep, e, E, outDrop);
}

// Eager SwiGLU (w1, silu, w3, mul) or GELU (w1, gelu) by module, as fusedMlp.
struct EagerMlpNames {
    const char* w1;
    const char* silu;
    const char* w3;
    const char* mul;
    const char* gelu;
    std::uint16_t module;
    std::uint16_t actExtra;
};
constexpr EagerMlpNames kEagerDense{"w1.output", "silu.output", "w3.output", "mul.output", "gelu.output", kDropMlp, 0};
constexpr EagerMlpNames kEagerRouted{"experts.w1_output",  "experts.silu_output", "experts.w3_output",
                                     "experts.mul_output", "experts.gelu_output", kDropMoe,
                                     kDropMoeAct};
constexpr EagerMlpNames kEagerShared{"shared_experts.w1_output",
                                     "shared_experts.silu_output",
                                     "shared_experts.w3_output",
                                     "shared_experts.mul_output",
                                     "shared_experts.gelu_output",
                                     kDropMoe | kDropShared,
                                     0};

void eagerMlp(ListBuilder& x, const Widths& w, double width, const EagerMlpNames& n)
{
    const double e = x.c.e;
    const char* E = x.c.eName;
    if (width <= 0)
        return;
    if (w.swiglu) {
        x.token(n.w1, "silu (its input)", width, e, E, kDropFull | n.module);
        x.token(n.silu, "mul", width, e, E, kFullOp | n.module | n.actExtra);
        x.token(n.w3, "mul", width, e, E, kFullOp | n.module);
        x.token(n.mul, "w2 (its input)", width, e, E, kFullOp | n.module | n.actExtra);
    } else {
        x.token(n.w1, "gelu (its input)", width, e, E, kDropFull | n.module);
        x.token(n.gelu, "w2 (its input)", width, e, E, kFullOp | n.module | n.actExtra);
    }
}

void eagerList(ListBuilder& x, const Widths& w, const TransformerShape& m)
{
    const double e = x.c.e;
    const char* E = x.c.eName;
    x.token("layer.input", "checkpoint input (block boundary)", w.rep, e, E, kCheckpointOnly);
    eagerNorm(x, w, "attention_norm.fp32_input", "attention_norm.rstd", "attention_norm.normalized",
              "attention_norm.output", "wq, wk, wv (their input)", kFullOp | kDropLayernorm);
    mlaLatents(x, w);
    const std::uint16_t up = w.mla ? kDropMlaUp : 0; // made by MLA's up-projections (and RoPE)
    x.token("wq.output", "kept by the op policy (mm 1)", w.q, e, E, kCheckpointOnly | kDropFull);
    // wv's output is SDPA's v when no head repeats it; else only the op policy keeps it (mm 3).
    x.token("wv.output", w.repeat ? "kept by the op policy (mm 3)" : "sdpa (values)", w.kv, e, E,
            w.repeat ? std::uint16_t(kCheckpointOnly | kDropFull) : std::uint16_t(kDropFull));
    if (m.qkNorm != QkNorm::None) {
        x.token("q_norm.fp32_input", "q_norm (x.float())", w.q, 4, "fp32", kFullOp);
        x.token("k_norm.fp32_input", "k_norm (x.float())", w.kv, 4, "fp32", kFullOp);
    }
    if (w.rope) {
        x.token("rope.q_fp32", "complex multiply (xq.float())", w.q, 4, "fp32", kFullOp | up);
        x.token("rope.k_fp32", "complex multiply (xk.float())", w.kv, 4, "fp32", kFullOp | up);
    }
    x.token("sdpa.q", "sdpa (queries)", w.q, e, E, kFullOp | up);
    x.token("sdpa.k", w.repeat ? "sdpa (repeat_kv copy of the keys)" : "sdpa (keys)", w.repeat ? w.q : w.kv, e, E,
            kFullOp | up);
    if (w.repeat)
        x.token("sdpa.v", "sdpa (repeat_kv copy of the values)", w.q, e, E, kFullOp);
    if (x.c.flash) {
        x.token("sdpa.logsumexp", "flash attention backward", w.heads, 4, "fp32", kDropFull | kCore, true);
        x.token("sdpa.output", "sdpa backward, wo (its input)", w.q, e, E, kDropFull);
    } else { // the math path: bmm, softmax, (dropout,) bmm
        x.scores("attention.softmax", "bmm (attention over values)", w.heads, e, E, kFullOp | kCore);
        if (w.dropout) {
            x.scores("attention.dropout_mask", "dropout", w.heads, 1, "bool", kFullOp | kCore);
            x.scores("attention.dropout_output", "bmm (attention over values)", w.heads, e, E, kFullOp | kCore);
        }
        x.token("attention.output", "wo (its input)", w.q, e, E, kFullOp);
    }
    if (w.dropout)
        x.token("attention.dropout_mask", "dropout", w.rep, 1, "bool", kFullOp);
    eagerNorm(x, w, "ffn_norm.fp32_input", "ffn_norm.rstd", "ffn_norm.normalized", "ffn_norm.output",
              w.swiglu ? "w1, w3 (their input)" : "w1 (its input)",
              std::uint16_t(kFullOp | kDropLayernorm | (w.fDense > 0 ? kDropMlp : 0)));
    moeInputs(x, w);
    eagerMlp(x, w, w.fDense, kEagerDense);
    eagerMlp(x, w, w.fRouted, kEagerRouted);
    eagerMlp(x, w, w.fShared, kEagerShared);
    if (w.swiglu)
        x.token("w2.output", "kept by the op policy (mm 7)", w.h, e, E, kCheckpointOnly | kDropFull);
    moeOutputs(x, w);
    if (w.dropout)
        x.token("mlp.dropout_mask", "dropout", w.rep, 1, "bool", kFullOp);
}

} // namespace

double opPolicyRecomputedParams(const TransformerShape& m)
{
    const double h = double(m.dModel), f = mlpWidth(m);
    const double qd = double(m.heads) * double(m.headDim), kvd = double(m.kvHeads) * double(m.headDim);
    return h * kvd + qd * h + h * f; // wk, wo, and w3 (SwiGLU) or w2 (GELU): both h × f
}

double opPolicyRecomputedShare(std::string_view gemmOp, const TransformerShape& m)
{
    const double qd = double(m.heads) * double(m.headDim), kvd = double(m.kvHeads) * double(m.headDim);
    const bool swiglu = m.ffnKind == FfnKind::Swiglu;
    if (gemmOp == "qkv_proj")
        return kvd / (qd + 2 * kvd); // wk of the fused projection
    if (gemmOp == "out_proj")
        return 1;
    if (gemmOp == "mlp_gate_up")
        return 0.5; // w3 of the gate/up pair
    if (gemmOp == "mlp_down")
        return swiglu ? 0 : 1; // GELU's w2 is mm 6
    return 0;                  // mlp_up (GELU's w1, mm 5) is kept
}

bool droppedUnder(std::uint16_t d, Recompute policy, std::uint8_t modules)
{
    switch (policy) {
    case Recompute::None: return (d & kDropNone) != 0;
    case Recompute::Selective: return (d & kDropSelective) != 0;
    case Recompute::Full: return (d & kDropFull) != 0;
    case Recompute::Op: return (d & kDropOp) != 0;
    case Recompute::Modules:
        // A checkpoint-only tensor stays dropped: recomputing a module does not save a new tensor.
        return (d & kDropNone) != 0 || ((modules & kModuleCoreAttn) && (d & kDropCoreAttn)) ||
               ((modules & kModuleMlp) && (d & kDropMlp)) || ((modules & kModuleLayernorm) && (d & kDropLayernorm)) ||
               ((modules & kModuleMoe) && (d & kDropMoe)) || ((modules & kModuleMoeAct) && (d & kDropMoeAct)) ||
               ((modules & kModuleShared) && (d & kDropShared)) || ((modules & kModuleMlaUp) && (d & kDropMlaUp));
    }
    return false;
}

LayerTensors layerSavedTensors(const TransformerShape& m, const TensorContext& c)
{
    LayerTensors out;
    layerSavedTensors(m, c, out);
    return out;
}

// A low-precision recipe's GEMMs save their inputs quantised (Transformer Engine Linear /
// LayerNormLinear / LayerNormMLP keep the FP8 columnwise copy for wgrad): the norm outputs and the MLP
// activation feed only their GEMM, so the 16-bit tensor is not kept; the attention output is also
// FlashAttention's O, kept in 16 bits for its backward, so the out projection adds its FP8 copy.
static void quantisedInputs(ListBuilder& x, const Widths& w)
{
    const TensorContext& c = x.c;
    LayerTensors& out = x.out;
    const double ratio = c.lowBytes / c.e;
    for (int i = 0; i < out.count; ++i) {
        SavedTensor& t = out.tensors[std::size_t(i)];
        const std::string_view name = t.name;
        const bool act = name.size() > 18 && name.substr(name.size() - 18) == ".activation_output";
        const bool qkv = name == "input_norm.output" && (c.lowInputs & kLowQkv);
        const bool mlp = (name == "mlp_norm.output" || act) && (c.lowInputs & kLowMlp);
        if (!qkv && !mlp)
            continue;
        t.bytes *= ratio;
        t.dtype = c.lowName;
    }
    if (c.lowInputs & kLowOut)
        x.token("attention.output_quantised", "out_proj (its quantised input)", w.q, c.lowBytes, c.lowName,
                c.flash ? std::uint16_t(kDropFull) : std::uint16_t(kDropFull | kDropOp));
}

void layerSavedTensors(const TransformerShape& m, const TensorContext& c, LayerTensors& out)
{
    out.count = out.keptCount = 0;
    out.kept = out.autograd = out.rematerialised = out.keptPerToken = out.keptPerScore = out.keptStats = 0;
    const double t = c.t > 0 ? c.t : 1.0;
    Widths w;
    w.h = double(m.dModel);
    w.rep = c.sequenceParallel ? w.h / t : w.h;
    w.row = c.sequenceParallel ? 1 / t : 1;
    w.q = double(m.heads) * double(m.headDim) / t;
    w.kv = double(m.kvHeads) * double(m.headDim) / t;
    if (m.attention == AttentionKind::Mla) {
        // MLA materialises per-head q and k of d_n + d_r and v of d_v (moe-notes.md §2.3): k and v are
        // listed at their mean width, so their sum is exact. The compressed latents are not listed yet.
        const double dq = double(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim), dv = double(m.mla.vHeadDim);
        w.q = double(m.heads) * dq / t;
        w.kv = double(m.heads) * (dq + dv) / 2 / t;
    }
    // Mixture of experts: the k routed experts' rows and the shared experts; the busiest expert rank
    // holds imbalance × the routed rows.
    const double r = std::max(1.0, c.routingImbalance);
    w.f = busiestRankMlpWidth(m, r) / t;
    w.fDense = w.f;
    if (isMoe(m) && m.layers > 0) {
        const double share = double(moeLayerCount(m)) / double(m.layers);
        w.routed = share * double(m.moe.topK) * r * c.routedRows;
        w.router = share * double(m.moe.experts) * w.row;
        // k · routedRows rows per token of s, each fc1 output expertWidthScale / t = 1 / etp of the
        // expert's width (k / t with sequence parallelism, where routedRows = etp / t)
        w.fRouted = share * double(m.moe.topK) * c.routedRows * double(m.moe.expertFfn) * c.expertWidthScale / t * r;
        w.fShared = share * sharedExpertWidth(m.moe) / t;
        w.fDense = (1 - share) * double(m.ffn) / t;
    }
    if (m.attention == AttentionKind::Mla) {
        w.mla = true;
        w.mlaQ = double(m.mla.qLoraRank);
        w.mlaKv = double(m.mla.kvLoraRank);
        w.mlaRope = double(m.mla.qkRopeHeadDim);
    }
    w.heads = double(m.heads) / t;
    w.swiglu = m.ffnKind == FfnKind::Swiglu;
    w.rope = m.positions == PositionKind::Rotary;
    w.dropout = m.dropout;
    w.repeat = m.attention != AttentionKind::Mla && m.kvHeads < m.heads;
    w.layerNorm = m.norm == NormKind::LayerNorm || m.norm == NormKind::LayerNormNoBias;
    ListBuilder x{c, out};
    if (c.eager)
        eagerList(x, w, m);
    else
        fusedList(x, w, m);
    if (c.lowInputs != 0 && c.lowBytes > 0)
        quantisedInputs(x, w);
    if (c.loraTargets > 0) {
        // PEFT's LoRA layer computes B(A(dropout(x))): A's output (r per token and adapter) is saved for
        // B's weight gradient; with dropout, A saves the dropped-out copy of its input and the mask
        // (peft/tuners/lora/layer.py Linear.forward). x itself is the frozen layer's saved input already.
        x.token("lora.a_outputs", "lora_B (weight gradient)", c.loraTargets * c.loraRank, c.e, c.eName, kDropFull);
        if (c.loraDropout) {
            x.token("lora.dropout_outputs", "lora_A (weight gradient)", c.loraInputs / t, c.e, c.eName, kDropFull);
            x.token("lora.dropout_masks", "lora_dropout", c.loraInputs / t, 1, "bool", kDropFull);
        }
    }
    const double tokens = c.s * c.b;
    for (int i = 0; i < out.count; ++i) {
        SavedTensor& st = out.tensors[std::size_t(i)];
        st.kept = !droppedUnder(st.droppedBy, c.policy, c.modules);
        const bool byAutograd = (st.droppedBy & kDropNone) == 0;
        if (byAutograd)
            out.autograd += st.bytes;
        if (byAutograd && !st.kept)
            out.rematerialised += st.bytes;
        if (!st.kept)
            continue;
        out.kept += st.bytes;
        ++out.keptCount;
        if (st.scores)
            out.keptPerScore += st.bytes / (c.b * w.heads * t * c.s * c.s); // per element of all a heads' scores
        else if (st.stats)
            out.keptStats += st.bytes;
        else if (tokens > 0)
            out.keptPerToken += st.bytes / tokens;
    }
}

std::vector<std::string> droppedByNames(std::uint16_t d)
{
    static constexpr std::pair<std::uint16_t, const char*> kNames[] = {{kDropNone, "none"},
                                                                       {kDropSelective, "selective"},
                                                                       {kDropFull, "full"},
                                                                       {kDropOp, "op"},
                                                                       {kDropCoreAttn, "modules:core_attn"},
                                                                       {kDropMlp, "modules:mlp"},
                                                                       {kDropLayernorm, "modules:layernorm"},
                                                                       {kDropMoe, "modules:moe"},
                                                                       {kDropMoeAct, "modules:moe_act"},
                                                                       {kDropShared, "modules:shared_experts"},
                                                                       {kDropMlaUp, "modules:mla_up_proj"}};
    std::vector<std::string> out;
    for (const auto& [bit, name] : kNames)
        if (d & bit)
            out.emplace_back(name);
    return out;
}

std::uint8_t recomputeModuleBit(const std::string& name)
{
    if (name == "core_attn")
        return kModuleCoreAttn;
    if (name == "mlp")
        return kModuleMlp;
    if (name == "layernorm")
        return kModuleLayernorm;
    if (name == "moe")
        return kModuleMoe;
    if (name == "moe_act")
        return kModuleMoeAct;
    if (name == "shared_experts")
        return kModuleShared;
    if (name == "mla_up_proj")
        return kModuleMlaUp;
    return 0;
}

std::vector<std::string> recomputeModuleList(std::uint8_t modules)
{
    std::vector<std::string> out;
    for (const auto& [bit, name] :
         {std::pair{kModuleCoreAttn, "core_attn"}, std::pair{kModuleMlp, "mlp"},
          std::pair{kModuleLayernorm, "layernorm"}, std::pair{kModuleMoe, "moe"}, std::pair{kModuleMoeAct, "moe_act"},
          std::pair{kModuleShared, "shared_experts"}, std::pair{kModuleMlaUp, "mla_up_proj"}})
        if (modules & bit)
            out.emplace_back(name);
    return out;
}

std::string recomputeModuleNames(std::uint8_t modules)
{
    std::string out;
    for (const auto& name : recomputeModuleList(modules))
        out += (out.empty() ? "" : ", ") + name;
    return out;
}

std::string savedTensorsSummary(const LayerTensors& lt)
{
    std::string kept, dropped;
    for (int i = 0; i < lt.count; ++i) {
        const auto& t = lt.tensors[std::size_t(i)];
        std::string& list = t.kept ? kept : dropped;
        if (!t.kept && (t.droppedBy & kDropNone) != 0)
            continue; // freed by autograd itself, not by a policy
        list += (list.empty() ? "" : ", ") + std::string(t.name);
    }
    std::string out = "kept: " + (kept.empty() ? std::string("none") : kept);
    if (!dropped.empty())
        out += "; recomputed for the backward: " + dropped;
    return out;
}

} // namespace napkin::core
