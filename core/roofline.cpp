// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "roofline.h"
#include "achievable.h"
#include "finetune.h"

#include <algorithm>

namespace napkin::core {

OpCost gemmCost(double m, double k, double n, double e, bool exactAdds)
{
    // CS336 lecture 2: each output needs k multiplies and k - 1 adds; bytes read X, W once and write Y.
    return {exactAdds ? m * n * (2 * k - 1) : 2 * m * k * n, e * (m * k + k * n + m * n)};
}
OpCost reluCost(double n, double e) { return {n, 2 * e * n}; }
OpCost geluCost(double n, double e) { return {20 * n, 2 * e * n}; }
OpCost dotCost(double n, double e) { return {2 * n - 1, e * (2 * n + 1)}; }
OpCost matvecCost(double n, double e) { return {n * (2 * n - 1), e * (n * n + 2 * n)}; }

namespace {

// Intensity, ceiling, attainable rate, time and bound of an op from its FLOPs and bytes.
void placeOnRoofline(RooflineOp& op, const HardwareSummary& hw)
{
    op.intensity = op.bytes > 0 ? op.flops / op.bytes : 0;
    op.ceiling = op.tf32 ? tf32PeakFlops(hw) : (op.unit == OpUnit::Tensor ? hw.peakFlops : hw.vectorFlops);
    if (op.ceiling <= 0)
        op.ceiling = hw.peakFlops;
    op.attainable = std::min(op.ceiling, hw.bandwidth * op.intensity);
    op.timeSeconds = std::max(op.flops / op.ceiling, hw.bandwidth > 0 ? op.bytes / hw.bandwidth : 0.0);
    op.bound = op.intensity * hw.bandwidth >= op.ceiling ? Bound::Compute : Bound::Memory;
}

// An op's identity and cost, placed on the roofline; the rest keeps its defaults.
void setOp(RooflineOp& op, const char* name, Pass pass, OpUnit unit, OpCost cost, const HardwareSummary& hw,
           double count)
{
    op.name = name;
    op.pass = pass;
    op.unit = unit;
    op.flops = cost.flops;
    op.bytes = cost.bytes;
    op.count = count;
    placeOnRoofline(op, hw);
}

} // namespace

RooflineOp makeOp(const char* name, Pass pass, OpUnit unit, OpCost cost, const HardwareSummary& hw, double count)
{
    RooflineOp op;
    setOp(op, name, pass, unit, cost, hw, count);
    return op;
}

void splitOp(RooflineOp& op, double ways, const HardwareSummary& hw)
{
    op.flops /= ways;
    op.bytes /= ways;
    placeOnRoofline(op, hw);
}

TransformerShape tensorParallelShard(const TransformerShape& m, int t)
{
    if (t <= 1)
        return m;
    auto split = [t](std::int64_t x) { return std::max<std::int64_t>(1, (x + t - 1) / t); };
    TransformerShape r = m;
    r.heads = split(m.heads);
    r.kvHeads = split(m.kvHeads);
    r.ffn = split(m.ffn);
    r.vocab = split(m.vocab);
    // Experts split the same way (expert tensor parallelism = TP, Megatron-Core's default).
    r.moe.expertFfn = m.moe.expertFfn > 0 ? split(m.moe.expertFfn) : 0;
    r.moe.sharedExpertFfn = m.moe.sharedExpertFfn > 0 ? split(m.moe.sharedExpertFfn) : 0;
    return r;
}

namespace {

// Multi-head latent attention as the op list sees it (moe-notes.md §2.2: training does not absorb the
// up-projections): the projections from the layer input are q (d·r_q, r_q·H·(d_n + d_r)) and kv
// (d·(r_kv + d_r), r_kv·H·(d_n + d_v)), one GEMM of their summed width; K and V are materialised per
// head, q and k of d_n + d_r, v of d_v, so the core's QK^T and PV average (d_qk + d_v) / 2 per head.
// H is this rank's share of the heads: the down-projections are not split by TP (Megatron-Core).
double attentionHeadDim(const TransformerShape& m)
{
    if (m.attention != AttentionKind::Mla)
        return double(m.headDim);
    return double(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim + m.mla.vHeadDim) / 2;
}
double qkvWidth(const TransformerShape& m)
{
    const double H = double(m.heads);
    if (m.attention != AttentionKind::Mla)
        return (H + 2 * double(m.kvHeads)) * double(m.headDim);
    const MlaProjections proj = mlaProjections(m);
    return (proj.q + proj.kv) / double(m.dModel);
}
double outWidth(const TransformerShape& m)
{
    return double(m.heads) * double(m.attention == AttentionKind::Mla ? m.mla.vHeadDim : m.headDim);
}

// One layer's ops for appendLayerOps: the dimensions of one rank's shard and a helper per kind of
// op, so that forwardOps and backwardOps read as the layer's execution order.
struct LayerOpBuilder {
    struct Gemm {
        const char* fwd;
        const char* dgrad;
        const char* wgrad;
        double M, K, N, count;
        double weights = 1;              // weights read / K x N (mixture of experts: every expert's)
        double expertK = 0, expertN = 0; // the routed experts' share as a grouped GEMM (0: none)
        // Transformer Engine's userbuffers overlap for this GEMM (tpOverlapChunks): whether it is one
        // of the TP-sharded projections (qkv, out, mlp) and which side of the TP collective it sits on.
        enum class Tp { None, Input, Output };
        Tp tp = Tp::None;
        bool mlp = false;
    };

    std::vector<RooflineOp>& ops;
    const TransformerShape& m;
    const LayerOpOptions& opt;
    const HardwareSummary& hw;
    double s, b, e, w, g; // sequence, micro-batch; activation, weight and gradient bytes
    double n = s * b, h = double(m.dModel), a = double(m.heads), hd = attentionHeadDim(m);
    double kvHeads = m.attention == AttentionKind::Mla ? a : double(m.kvHeads);
    double qd = a * hd, kvd = kvHeads * hd, f = mlpWidth(m), V = double(m.vocab), L = double(m.layers);
    double qkvN = qkvWidth(m), outK = outWidth(m);
    // Mixture of experts: the MLP's GEMMs do the k routed experts' work per token (f above) and read
    // every expert's weights (moe-notes.md §1.1); the router is a d x E GEMM on the MoE layers.
    // With expert parallelism a rank holds and reads experts / ep of them (Megatron-Core EP).
    double weightRatio = f > 0 ? mlpWeightWidth(m, opt.expertRanks) / f : 1.0;
    double experts = double(m.moe.experts), moeLayers = double(moeLayerCount(m));
    double keys = 0, nk = 0, scores = 0; // keys per query, key/value rows read, b · a · s · keys
    bool swiglu = m.ffnKind == FfnKind::Swiglu;
    // Norm FLOPs per element: LayerNorm 9 forward / 14 backward (Calculon, layers.py LayerNorm);
    // RMSNorm skips the mean: 5 / 8 here.
    bool ln = m.norm == NormKind::LayerNorm || m.norm == NormKind::LayerNormNoBias;
    bool rope = m.positions == PositionKind::Rotary; // rotary embedding of q and k (Su et al. 2021)
    // Eager GQA repeats K and V to every query head before SDPA (torchtitan repeat_kv: expand +
    // reshape copies); fused kernels read the shared heads directly.
    bool repeatKv = opt.fusion == KernelFusion::Eager && kvHeads < a;
    double kvRead = repeatKv ? qd : kvd; // K and V columns attention reads
    // A rank routes its own n / split tokens and the dispatcher gathers the experts' input rows over
    // the expert-TP group (Megatron-Core moe/token_dispatcher.py MoEAlltoAllTokenDispatcher: router and
    // permute on the local tokens, an all-gather over expt_tp after the all-to-all); each expert's fc1
    // is split over etp where the TP-sharded shape splits it over tp (moeTokenShare).
    double routedN = n / opt.moeTokenSplit, expertRows = routedN * opt.expertGather;
    double expertScale = opt.expertWidthScale;
    GroupedExperts grouped = groupedExperts(m, expertRows, opt.expertRanks);
    double expertWidth = double(m.moe.expertFfn) * expertScale * (swiglu ? 2 : 1); // one expert's fc1 columns

    void add(const char* name, Pass pass, OpUnit u, OpCost c, double count, double kernels = 1, const char* impl = "")
    {
        // Built in place (an op is ~300 bytes; this runs ~30 times per plan).
        auto& op = ops.emplace_back();
        setOp(op, name, pass, u, c, hw, count);
        op.kernels = kernels;
        op.implementation = impl;
    }
    // The last op's shape: output rows m, columns n, reduction k, over `batch` products.
    void shape(OpKind kind, double M, double N, double K, double batch = 1, bool causal = false)
    {
        auto& op = ops.back();
        op.kind = kind;
        op.m = M;
        op.n = N;
        op.k = K;
        op.batch = batch;
        op.causal = causal;
    }
    // A per-element kernel cost (core/kernels.h) over `elems` elements, plus fixed bytes.
    void kernel(const char* name, Pass pass, const KernelCost& k, double elems, double extraBytes = 0)
    {
        add(name, pass, OpUnit::Vector, {k.flops * elems, k.bytes * elems + extraBytes}, L, k.kernels, k.impl);
    }
    // Norms: LayerNorm is one ATen kernel each way in every framework; RMSNorm depends on fusion.
    void norm(const char* name, Pass pass)
    {
        const bool fw = pass == Pass::Forward;
        if (ln || m.norm == NormKind::NonParametric)
            add(name, pass, OpUnit::Vector,
                {(fw ? (ln ? 9 : 5) : (ln ? 14 : 8)) * n * h, (fw ? 2 : 3) * e * n * h + (fw ? w : g) * h}, L);
        else
            kernel(name, pass, rmsNormCost(opt.fusion, pass, e), n * h, (fw ? w : g) * h);
    }
    void qkNormAndRope(Pass pass)
    {
        if (m.qkNorm != QkNorm::None) // OLMo 2, Qwen3: RMSNorm over q and k
            kernel(pass == Pass::Forward ? "qk_norm" : "qk_norm.bwd", pass, rmsNormCost(opt.fusion, pass, e),
                   n * (qd + kvd));
        if (rope)
            kernel(pass == Pass::Forward ? "rope" : "rope.bwd", pass, ropeCost(opt.fusion, pass, e), n * (qd + kvd));
    }
    // Residual add (read x and the branch, write the sum), with the hidden dropout before it.
    void residual(const char* name, Pass pass)
    {
        const KernelCost d = m.dropout ? hiddenDropoutExtra(opt.fusion, pass, e) : KernelCost{0, 0, 0, ""};
        add(name, pass, OpUnit::Vector, {(1 + d.flops) * n * h, (3 * e + d.bytes) * n * h}, L, 1 + d.kernels, d.impl);
    }
    void attentionDropout(const char* name, Pass pass)
    {
        const KernelCost d = attentionDropoutCost(pass, e);
        add(name, pass, OpUnit::Vector, {d.flops * scores, d.bytes * scores}, L, d.kernels, d.impl);
    }
    // A mixture of experts moves every routed row through memory-bound kernels around the experts
    // (Megatron-Core moe/token_dispatcher.py MoEAlltoAllTokenDispatcher with moe/moe_utils.py permute,
    // sort_chunks_by_idxs, unpermute; torchtitan and DeepSeek's framework likewise gather the tokens
    // into expert order for the grouped GEMM). Dispatch: permute gathers the T·k routed rows (read and
    // write T·k·h); with EP > 1 and more than one local expert the received chunks are sorted by local
    // expert (T·k·h each way again; DeepEP's dispatch writes them in expert order, step_time.moe_dispatcher
    // "deepep"). Combine: the chunks unsorted, then unpermute reads the T·k expert
    // rows and writes T probability-weighted sums. A backward pass moves the same bytes. Averaged over
    // the layers (dense layers of a mixed stack have none). DeepSeek-V3's profiled chunk pair spends
    // ~10 ms on norms, SwiGLU, copies and elementwise kernels where the model had 5 without these.
    void moeTokens(bool dispatch, Pass pass)
    {
        const double k = double(m.moe.topK);
        if (moeLayers <= 0 || k <= 0 || experts <= 0)
            return;
        const double share = moeLayers / L, rows = routedN * k * share, gathered = expertRows * k * share;
        const bool sort = opt.sortByLocalExpert && opt.expertRanks > 1 && experts / double(opt.expertRanks) > 1;
        const double bytes = (dispatch ? 2 * e * rows * h : e * rows * h + e * routedN * share * h) +
                             (sort ? 2 * e * gathered * h : 0.0);
        const bool fwd = pass == Pass::Forward;
        const char* name =
            dispatch ? (fwd ? "mlp_permute" : "mlp_permute.bwd") : (fwd ? "mlp_unpermute" : "mlp_unpermute.bwd");
        add(name, pass, OpUnit::Vector, {dispatch ? 0.0 : 2 * rows * h, bytes}, L, sort ? 2 : 1,
            dispatch ? "token permute into expert order (+ sort by local expert after the all-to-all)"
                     : "unsort + unpermute: k expert rows summed per token, weighted by the router");
    }
    // The router's softmax, top-k and load-balancing loss on the routedN x E logits (core/kernels.h
    // routerCost), on the MoE layers only (count L_moe, as the router GEMM).
    void routing(Pass pass)
    {
        if (moeLayers <= 0 || experts <= 0 || m.moe.topK <= 0)
            return;
        const bool fwd = pass == Pass::Forward;
        const KernelCost k = routerCost(opt.routerFused, opt.routerAuxLoss, pass);
        const double logits = routedN * experts;
        add(fwd ? "router_topk" : "router_topk.bwd", pass, OpUnit::Vector, {k.flops * logits, k.bytes * logits},
            moeLayers, k.kernels, k.impl);
    }
    void loss(const char* name, Pass pass)
    {
        const KernelCost k = lossCost(opt.loss, pass, e);
        add(name, pass, OpUnit::Vector, {k.flops * n * V, k.bytes * n * V}, 1, k.kernels, k.impl);
    }
    // A GEMM Y[M x N] = X[M x K] W[K x N] in the forward pass; dX = dY W^T and dW = X^T dY backward,
    // each 2MKN (CS336 lecture 2: forward + two backward matmuls = 6 M P).
    void gemmFwd(const Gemm& x)
    {
        add(x.fwd, Pass::Forward, OpUnit::Tensor,
            {2 * x.M * x.K * x.N, e * x.M * x.K + w * x.K * x.N * x.weights + e * x.M * x.N}, x.count);
        shape(OpKind::Gemm, x.M, x.N, x.K);
        groupedShape(x, grouped.rows, x.expertN, x.expertK);
        tpOverlapChunks(x, Pass::Forward);
    }
    // Transformer Engine's userbuffers overlap (transformer_engine/pytorch/module/base.py initialize_ub,
    // default methods): ring exchange, one GEMM chunk per TP rank, for the all-gather before qkv_fprop
    // and fc1_fprop and in proj_dgrad and fc2_dgrad; pipeline, 4 chunks, for the reduce-scatter after
    // proj_fprop and fc2_fprop; bulk overlap (qkv and fc1 dgrad / wgrad) leaves the GEMM whole.
    // The GEMM just added (x's forward or data-gradient product).
    void tpOverlapChunks(const Gemm& x, Pass pass)
    {
        if (x.tp == Gemm::Tp::None || (x.mlp && moeLayers > 0)) // experts: grouped GEMMs, outside userbuffers
            return;
        const bool fwd = pass == Pass::Forward;
        // Input side (qkv, fc1): its forward follows the all-gather; output side (proj, fc2): its forward
        // precedes the reduce-scatter and its dgrad follows the all-gather.
        int chunks = 1;
        if (x.tp == Gemm::Tp::Input ? fwd : !fwd)
            chunks = opt.ringChunks;
        else if (fwd)
            chunks = opt.pipelineChunks;
        auto& op = ops.back();
        if (chunks > 1) {
            op.chunks = chunks;
            op.kernels = chunks;
        }
    }
    // The routed experts' FLOPs of the last op as one grouped GEMM of rows x n x k per local expert.
    void groupedShape(const Gemm& x, double M, double N, double K)
    {
        if (x.expertK <= 0 || grouped.share <= 0)
            return;
        auto& op = ops.back();
        op.groupedShare = grouped.share;
        op.grouped = {M, N, K, grouped.groups};
    }
    void gemmBwd(const Gemm& x)
    {
        // dX[M x K] = dY[M x N] W^T; dW[K x N] = X^T dY (reduction over the M rows).
        add(x.dgrad, Pass::Backward, OpUnit::Tensor,
            {2 * x.M * x.K * x.N, e * x.M * x.N + w * x.K * x.N * x.weights + e * x.M * x.K}, x.count);
        shape(OpKind::Gemm, x.M, x.K, x.N);
        groupedShape(x, grouped.rows, x.expertK, x.expertN);
        tpOverlapChunks(x, Pass::Backward);
        if (opt.frozenBase) // LoRA / QLoRA: frozen weights get no gradient
            return;
        const double gradIo = opt.accumulateWgrad ? 2 : 1; // written, and read first when accumulated
        add(x.wgrad, Pass::Backward, OpUnit::Tensor,
            {2 * x.M * x.K * x.N, e * x.M * x.K + e * x.M * x.N + gradIo * g * x.K * x.N * x.weights}, x.count);
        shape(OpKind::Gemm, x.K, x.N, x.M);
        groupedShape(x, x.expertK, x.expertN, grouped.rows);
    }
    // The router's d x E GEMM on the MoE layers. With --moe-router-dtype fp32, Megatron-Core d98e8a64d
    // moe_utils.py RouterGatingLinearFunction: forward te_general_gemm of the BF16 operands into fp32
    // logits; backward weight.to(fp32) and inp.to(fp32), both gradient GEMMs on fp32 operands (Transformer
    // Engine runs a GEMM that is fp32 throughout as TF32: cublaslt_gemm.cu "Use TF32 only for pure FP32
    // GEMM"), fp32 gradients cast back to the input's and the weight's dtype: four casts.
    void routerGemm(Pass pass)
    {
        const Gemm x = router();
        if (!opt.routerFp32) {
            pass == Pass::Forward ? gemmFwd(x) : gemmBwd(x);
            return;
        }
        constexpr double f = 4; // fp32 bytes
        const double M = x.M, K = x.K, N = x.N;
        if (pass == Pass::Forward) {
            add(x.fwd, pass, OpUnit::Tensor, {2 * M * K * N, e * M * K + w * K * N + f * M * N}, x.count);
            shape(OpKind::Gemm, M, N, K);
            return;
        }
        // inp (M x K) and weight (K x N) up to fp32, grad_input and grad_weight back: read + write each.
        add("router_cast.bwd", pass, OpUnit::Vector, {0, M * K * (e + f) * 2 + K * N * (w + f) * 2}, x.count, 4,
            "--moe-router-dtype fp32: inp and weight to fp32, grad_input and grad_weight back");
        add(x.dgrad, pass, OpUnit::Tensor, {2 * M * K * N, f * M * N + f * K * N + f * M * K}, x.count);
        shape(OpKind::Gemm, M, K, N);
        asTf32();
        if (opt.frozenBase)
            return;
        add(x.wgrad, pass, OpUnit::Tensor, {2 * M * K * N, f * M * K + f * M * N + f * K * N}, x.count);
        shape(OpKind::Gemm, K, N, M);
        asTf32();
    }
    void asTf32()
    {
        ops.back().tf32 = true;
        placeOnRoofline(ops.back(), hw);
    }
    // LoRA's adapters of every targeted linear layer as one batched op per product (Hu et al. 2021:
    // h = W x + B A x): A is in x r, B is r x out; forward A then B (and the add into W x), backward
    // B's input and weight gradients, then A's. 6 · r · (in + out) FLOPs per token in all.
    void lora(Pass pass)
    {
        double in = 0, out = 0, t = 0;
        for (const auto& lin : blockLinears(m))
            if (opt.loraTargets & lin.target)
                in += lin.in, out += lin.out, t += 1;
        const double r = opt.loraRank;
        if (t <= 0 || r <= 0)
            return;
        if (pass == Pass::Forward) {
            add("lora_a", pass, OpUnit::Tensor, {2 * n * in * r, e * n * in + w * in * r + e * n * r * t}, L);
            shape(OpKind::Gemm, n, r, in / t, t);
            add("lora_b", pass, OpUnit::Tensor, {2 * n * r * out, e * n * r * t + w * r * out + 3 * e * n * out}, L);
            shape(OpKind::Gemm, n, out / t, r, t);
            return;
        }
        add("lora_b.dgrad", pass, OpUnit::Tensor, {2 * n * out * r, e * n * out + w * r * out + e * n * r * t}, L);
        shape(OpKind::Gemm, n, r, out / t, t);
        add("lora_b.wgrad", pass, OpUnit::Tensor, {2 * n * out * r, e * n * out + e * n * r * t + g * r * out}, L);
        shape(OpKind::Gemm, r, out / t, n, t);
        add("lora_a.dgrad", pass, OpUnit::Tensor, {2 * n * r * in, e * n * r * t + w * in * r + 2 * e * n * in}, L);
        shape(OpKind::Gemm, n, in / t, r, t);
        add("lora_a.wgrad", pass, OpUnit::Tensor, {2 * n * r * in, e * n * in + e * n * r * t + g * in * r}, L);
        shape(OpKind::Gemm, in / t, r, n, t);
    }
    // A quantised base: each linear layer's weights dequantised to the weight dtype before its GEMM, in
    // the forward and again in the backward (bitsandbytes MatMul4Bit / Linear8bitLt): memory-bound.
    void dequant(Pass pass)
    {
        if (opt.dequantBytes <= 0)
            return;
        double weights = 0;
        for (const auto& lin : blockLinears(m))
            weights += lin.in * lin.out;
        add(pass == Pass::Forward ? "dequant_base" : "dequant_base.bwd", pass, OpUnit::Vector,
            {2 * weights, (opt.dequantBytes + w) * weights}, L, 1, opt.dequantName);
    }
    Gemm qkv() const
    {
        return {"qkv_proj", "qkv_proj.dgrad", "qkv_proj.wgrad", n, h, qkvN, L, 1, 0, 0, Gemm::Tp::Input};
    }
    Gemm out() const
    {
        return {"out_proj", "out_proj.dgrad", "out_proj.wgrad", n, outK, h, L, 1, 0, 0, Gemm::Tp::Output};
    }
    Gemm up() const
    {
        return {swiglu ? "mlp_gate_up" : "mlp_up",
                swiglu ? "mlp_gate_up.dgrad" : "mlp_up.dgrad",
                swiglu ? "mlp_gate_up.wgrad" : "mlp_up.wgrad",
                n,
                h,
                swiglu ? 2 * f : f,
                L,
                weightRatio,
                h,
                expertWidth,
                Gemm::Tp::Input,
                true};
    }
    Gemm down() const
    {
        return {"mlp_down",
                "mlp_down.dgrad",
                "mlp_down.wgrad",
                n,
                f,
                h,
                L,
                weightRatio,
                double(m.moe.expertFfn) * expertScale,
                h,
                Gemm::Tp::Output,
                true};
    }
    Gemm router() const { return {"router", "router.dgrad", "router.wgrad", routedN, h, experts, moeLayers}; }
    Gemm logits() const { return {"logits", "logits.dgrad", "logits.wgrad", n, h, V, 1}; }
};

// Forward, in execution order.
void forwardOps(LayerOpBuilder& x)
{
    const double e = x.e, n = x.n, L = x.L, sc = x.scores;
    x.dequant(Pass::Forward);
    x.norm("norm_attn", Pass::Forward);
    x.gemmFwd(x.qkv());
    x.qkNormAndRope(Pass::Forward);
    if (x.repeatKv)
        x.add("repeat_kv", Pass::Forward, OpUnit::Vector, {0, 2 * e * x.nk * (x.kvd + x.qd)}, L, 2,
              "eager repeat_kv: K and V copied to every query head");
    if (x.opt.flash) {
        // FlashAttention: QK^T and PV (2 x 2 b a s² hd) plus ~5 softmax ops per score, scores kept
        // on chip: reads Q, K, V and writes O once (Dao et al. 2022). No causal halving. Dropout,
        // if any, is drawn inside the kernel.
        x.add("attention_flash", Pass::Forward, OpUnit::Tensor,
              {4 * sc * x.hd + 5 * sc, e * (2 * n * x.qd + 2 * x.nk * x.kvRead)}, L);
        x.shape(OpKind::Attention, x.s, x.keys, x.hd, x.b * x.a, true);
    } else {
        // Unfused attention: batched GEMMs over b · a heads; every score is computed (no skipping).
        x.add("scores_qk", Pass::Forward, OpUnit::Tensor, {2 * sc * x.hd, e * (n * x.qd + x.nk * x.kvRead) + e * sc},
              L);
        x.shape(OpKind::Gemm, x.s, x.keys, x.hd, x.b * x.a);
        x.add("softmax", Pass::Forward, OpUnit::Vector, {5 * sc, 2 * e * sc}, L);
        if (x.m.dropout)
            x.attentionDropout("attn_dropout", Pass::Forward);
        x.add("scores_v", Pass::Forward, OpUnit::Tensor, {2 * sc * x.hd, e * sc + e * x.nk * x.kvRead + e * n * x.qd},
              L);
        x.shape(OpKind::Gemm, x.s, x.hd, x.keys, x.b * x.a);
    }
    x.gemmFwd(x.out());
    x.residual("residual_attn", Pass::Forward);
    x.norm("norm_mlp", Pass::Forward);
    if (x.moeLayers > 0)
        x.routerGemm(Pass::Forward);
    x.routing(Pass::Forward);
    x.moeTokens(true, Pass::Forward);
    x.gemmFwd(x.up());
    if (x.swiglu)
        x.kernel("silu_mul", Pass::Forward, swigluCost(x.opt.fusion, Pass::Forward, e), n * x.f);
    else
        x.add("gelu", Pass::Forward, OpUnit::Vector, {20 * n * x.f, 2 * e * n * x.f},
              L); // CS336: ~20 ops per value (illustrative)
    x.gemmFwd(x.down());
    x.moeTokens(false, Pass::Forward);
    x.residual("residual_mlp", Pass::Forward);
    x.lora(Pass::Forward);
    x.gemmFwd(x.logits());
    x.loss("cross_entropy", Pass::Forward);
}

// Backward, in execution order.
void backwardOps(LayerOpBuilder& x)
{
    const double e = x.e, n = x.n, L = x.L, sc = x.scores;
    x.loss("cross_entropy.bwd", Pass::Backward);
    x.gemmBwd(x.logits());
    x.residual("residual_mlp.bwd", Pass::Backward);
    x.dequant(Pass::Backward);
    x.lora(Pass::Backward);
    x.moeTokens(false, Pass::Backward);
    x.gemmBwd(x.down());
    if (x.swiglu)
        x.kernel("silu_mul.bwd", Pass::Backward, swigluCost(x.opt.fusion, Pass::Backward, e), n * x.f);
    else
        x.add("gelu.bwd", Pass::Backward, OpUnit::Vector, {20 * n * x.f, 3 * e * n * x.f}, L);
    x.gemmBwd(x.up());
    x.moeTokens(true, Pass::Backward);
    x.routing(Pass::Backward);
    if (x.moeLayers > 0)
        x.routerGemm(Pass::Backward);
    x.norm("norm_mlp.bwd", Pass::Backward);
    x.residual("residual_attn.bwd", Pass::Backward);
    x.gemmBwd(x.out());
    if (x.opt.flash) {
        // FlashAttention-2 backward: 5 matmuls against the forward's 2 (2.5x), recomputing P on chip;
        // reads Q, K, V, O, dO and writes dQ, dK, dV.
        x.add("attention_flash.bwd", Pass::Backward, OpUnit::Tensor,
              {10 * sc * x.hd + 8 * sc, e * (4 * n * x.qd + 4 * x.nk * x.kvRead)}, L);
        x.shape(OpKind::Attention, x.s, x.keys, x.hd, x.b * x.a, true);
    } else {
        x.add("scores_v.bwd", Pass::Backward, OpUnit::Tensor,
              {4 * sc * x.hd, e * n * x.qd + 2 * e * x.nk * x.kvRead + 2 * e * sc}, L);
        x.shape(OpKind::Gemm, x.s, x.hd, x.keys, x.b * x.a);
        if (x.m.dropout)
            x.attentionDropout("attn_dropout.bwd", Pass::Backward);
        x.add("softmax.bwd", Pass::Backward, OpUnit::Vector, {3 * sc, 3 * e * sc}, L);
        x.add("scores_qk.bwd", Pass::Backward, OpUnit::Tensor,
              {4 * sc * x.hd, e * sc + 2 * e * (n * x.qd + x.nk * x.kvRead)}, L);
        x.shape(OpKind::Gemm, x.s, x.keys, x.hd, x.b * x.a);
    }
    if (x.repeatKv) // the repeated heads' gradients summed back
        x.add("repeat_kv.bwd", Pass::Backward, OpUnit::Vector, {2 * x.nk * x.qd, 2 * e * x.nk * (x.kvd + x.qd)}, L, 2,
              "sum over the repeated heads");
    x.qkNormAndRope(Pass::Backward);
    x.gemmBwd(x.qkv());
    x.norm("norm_attn.bwd", Pass::Backward);
}

} // namespace

GroupedExperts groupedExperts(const TransformerShape& shard, double tokens, int expertRanks)
{
    GroupedExperts g;
    const double f = mlpWidth(shard), E = double(shard.moe.experts), k = double(shard.moe.topK);
    if (!isMoe(shard) || E <= 0 || k <= 0 || shard.moe.expertFfn <= 0 || f <= 0)
        return g;
    const double ep = double(std::max(1, expertRanks));
    g.share = routedExpertWidth(shard) / f;
    g.groups = std::max(1.0, E / ep);
    g.rows = tokens * k * ep / E;
    return g;
}

void appendLayerOps(std::vector<RooflineOp>& ops, const TransformerShape& m, double s, double b, double e, double w,
                    double g, const LayerOpOptions& opt, const HardwareSummary& hw, double keyLen)
{
    LayerOpBuilder x{ops, m, opt, hw, s, b, e, w, g};
    x.keys = keyLen > 0 ? keyLen : s;
    x.nk = x.keys * b;
    x.scores = b * x.a * s * x.keys;
    forwardOps(x);
    backwardOps(x);
}

} // namespace napkin::core
