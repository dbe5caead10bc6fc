#include "roofline.h"

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

RooflineOp makeOp(const char* name, Pass pass, OpUnit unit, OpCost cost, const HardwareSummary& hw, double count)
{
    RooflineOp op;
    op.name = name;
    op.pass = pass;
    op.unit = unit;
    op.flops = cost.flops;
    op.bytes = cost.bytes;
    op.count = count;
    op.intensity = cost.bytes > 0 ? cost.flops / cost.bytes : 0;
    op.ceiling = unit == OpUnit::Tensor ? hw.peakFlops : hw.vectorFlops;
    if (op.ceiling <= 0)
        op.ceiling = hw.peakFlops;
    op.attainable = std::min(op.ceiling, hw.bandwidth * op.intensity);
    op.timeSeconds = std::max(cost.flops / op.ceiling, hw.bandwidth > 0 ? cost.bytes / hw.bandwidth : 0.0);
    op.bound = op.intensity * hw.bandwidth >= op.ceiling ? Bound::Compute : Bound::Memory;
    return op;
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
    return r;
}

void appendLayerOps(std::vector<RooflineOp>& ops, const TransformerShape& m, double s, double b, double e, double w,
                    double g, const LayerOpOptions& opt, const HardwareSummary& hw, double keyLen)
{
    const bool flash = opt.flash;
    const double n = s * b, h = double(m.dModel), a = double(m.heads), hd = double(m.headDim);
    const double qd = a * hd, kvd = double(m.kvHeads) * hd, f = double(m.ffn), V = double(m.vocab);
    const double L = double(m.layers);
    const double keys = keyLen > 0 ? keyLen : s;
    const double nk = keys * b; // key/value rows read by attention
    const double scores = b * a * s * keys;
    const bool swiglu = m.ffnKind == FfnKind::Swiglu;
    const double upWidth = swiglu ? 2 * f : f;
    const bool eager = opt.fusion == KernelFusion::Eager;
    // Norm FLOPs per element: LayerNorm 9 forward / 14 backward (Calculon, layers.py LayerNorm);
    // RMSNorm skips the mean: 5 / 8 here.
    const bool ln = m.norm == NormKind::LayerNorm;
    const double normF = ln ? 9 : 5, normB = ln ? 14 : 8;

    auto add = [&](const char* name, Pass pass, OpUnit u, OpCost c, double count, double kernels = 1, const char* impl = "") {
        ops.push_back(makeOp(name, pass, u, c, hw, count));
        ops.back().kernels = kernels;
        ops.back().implementation = impl;
    };
    auto fwd = [&](const char* name, OpUnit u, OpCost c, double count) { add(name, Pass::Forward, u, c, count); };
    auto bwd = [&](const char* name, OpUnit u, OpCost c, double count) { add(name, Pass::Backward, u, c, count); };
    // A per-element kernel cost (core/kernels.h) over `elems` elements, plus fixed bytes.
    auto kernel = [&](const char* name, Pass pass, const KernelCost& k, double elems, double extraBytes = 0) {
        add(name, pass, OpUnit::Vector, {k.flops * elems, k.bytes * elems + extraBytes}, L, k.kernels, k.impl);
    };
    // Norms: LayerNorm is one ATen kernel each way in every framework; RMSNorm depends on fusion.
    auto norm = [&](const char* name, Pass pass) {
        const bool f0 = pass == Pass::Forward;
        if (ln || m.norm == NormKind::NonParametric)
            add(name, pass, OpUnit::Vector, {(f0 ? normF : normB) * n * h, (f0 ? 2 : 3) * e * n * h + (f0 ? w : g) * h}, L);
        else
            kernel(name, pass, rmsNormCost(opt.fusion, pass, e), n * h, (f0 ? w : g) * h);
    };
    // Residual add (read x and the branch, write the sum), with the hidden dropout before it.
    auto residual = [&](const char* name, Pass pass) {
        const KernelCost d = m.dropout ? hiddenDropoutExtra(opt.fusion, pass, e) : KernelCost{0, 0, 0, ""};
        add(name, pass, OpUnit::Vector, {(1 + d.flops) * n * h, (3 * e + d.bytes) * n * h}, L, 1 + d.kernels,
            m.dropout ? d.impl : "");
    };
    // A GEMM Y[M x N] = X[M x K] W[K x N] in the forward pass; dX = dY W^T and dW = X^T dY backward,
    // each 2MKN (CS336 lecture 2: forward + two backward matmuls = 6 M P).
    struct Gemm {
        const char* fwd;
        const char* dgrad;
        const char* wgrad;
        double M, K, N, count;
    };
    // The last op's shape: output rows m, columns n, reduction k, over `batch` products.
    auto shape = [&](OpKind kind, double M, double N, double K, double batch = 1, bool causal = false) {
        auto& op = ops.back();
        op.kind = kind;
        op.m = M;
        op.n = N;
        op.k = K;
        op.batch = batch;
        op.causal = causal;
    };
    auto gemmFwd = [&](const Gemm& x) {
        fwd(x.fwd, OpUnit::Tensor, {2 * x.M * x.K * x.N, e * x.M * x.K + w * x.K * x.N + e * x.M * x.N}, x.count);
        shape(OpKind::Gemm, x.M, x.N, x.K);
    };
    auto gemmBwd = [&](const Gemm& x) {
        // dX[M x K] = dY[M x N] W^T; dW[K x N] = X^T dY (reduction over the M rows).
        bwd(x.dgrad, OpUnit::Tensor, {2 * x.M * x.K * x.N, e * x.M * x.N + w * x.K * x.N + e * x.M * x.K}, x.count);
        shape(OpKind::Gemm, x.M, x.K, x.N);
        bwd(x.wgrad, OpUnit::Tensor, {2 * x.M * x.K * x.N, e * x.M * x.K + e * x.M * x.N + g * x.K * x.N}, x.count);
        shape(OpKind::Gemm, x.K, x.N, x.M);
    };
    const Gemm qkv{"qkv_proj", "qkv_proj.dgrad", "qkv_proj.wgrad", n, h, qd + 2 * kvd, L};
    const Gemm out{"out_proj", "out_proj.dgrad", "out_proj.wgrad", n, qd, h, L};
    const Gemm up{swiglu ? "mlp_gate_up" : "mlp_up", swiglu ? "mlp_gate_up.dgrad" : "mlp_up.dgrad",
                  swiglu ? "mlp_gate_up.wgrad" : "mlp_up.wgrad", n, h, upWidth, L};
    const Gemm down{"mlp_down", "mlp_down.dgrad", "mlp_down.wgrad", n, f, h, L};
    const Gemm logits{"logits", "logits.dgrad", "logits.wgrad", n, h, V, 1};
    const bool rope = m.positions == PositionKind::Rotary;
    // Eager GQA repeats K and V to every query head before SDPA (torchtitan repeat_kv: expand +
    // reshape copies); fused kernels read the shared heads directly.
    const bool repeatKv = eager && m.kvHeads < m.heads;
    const KernelCost lossF = lossCost(opt.loss, Pass::Forward, e), lossB = lossCost(opt.loss, Pass::Backward, e);

    // Forward, in execution order.
    norm("norm_attn", Pass::Forward);
    gemmFwd(qkv);
    if (m.qkNorm) // OLMo 2: RMSNorm over q and k
        kernel("qk_norm", Pass::Forward, rmsNormCost(opt.fusion, Pass::Forward, e), n * (qd + kvd));
    if (rope) // rotary embedding of q and k (Su et al. 2021)
        kernel("rope", Pass::Forward, ropeCost(opt.fusion, Pass::Forward, e), n * (qd + kvd));
    if (repeatKv)
        add("repeat_kv", Pass::Forward, OpUnit::Vector, {0, 2 * e * nk * (kvd + qd)}, L, 2, "eager repeat_kv: K and V copied to every query head");
    const double kvRead = repeatKv ? qd : kvd; // K and V columns attention reads
    if (flash) {
        // FlashAttention: QK^T and PV (2 x 2 b a s² hd) plus ~5 softmax ops per score, scores kept
        // on chip: reads Q, K, V and writes O once (Dao et al. 2022). No causal halving. Dropout,
        // if any, is drawn inside the kernel.
        fwd("attention_flash", OpUnit::Tensor, {4 * scores * hd + 5 * scores, e * (2 * n * qd + 2 * nk * kvRead)}, L);
        shape(OpKind::Attention, s, keys, hd, b * a, true);
    } else {
        // Unfused attention: batched GEMMs over b · a heads; every score is computed (no skipping).
        fwd("scores_qk", OpUnit::Tensor, {2 * scores * hd, e * (n * qd + nk * kvRead) + e * scores}, L);
        shape(OpKind::Gemm, s, keys, hd, b * a);
        fwd("softmax", OpUnit::Vector, {5 * scores, 2 * e * scores}, L);
        if (m.dropout) {
            const KernelCost d = attentionDropoutCost(Pass::Forward, e);
            add("attn_dropout", Pass::Forward, OpUnit::Vector, {d.flops * scores, d.bytes * scores}, L, d.kernels, d.impl);
        }
        fwd("scores_v", OpUnit::Tensor, {2 * scores * hd, e * scores + e * nk * kvRead + e * n * qd}, L);
        shape(OpKind::Gemm, s, hd, keys, b * a);
    }
    gemmFwd(out);
    residual("residual_attn", Pass::Forward);
    norm("norm_mlp", Pass::Forward);
    gemmFwd(up);
    if (swiglu)
        kernel("silu_mul", Pass::Forward, swigluCost(opt.fusion, Pass::Forward, e), n * f);
    else
        fwd("gelu", OpUnit::Vector, {20 * n * f, 2 * e * n * f}, L); // CS336: ~20 ops per value (illustrative)
    gemmFwd(down);
    residual("residual_mlp", Pass::Forward);
    gemmFwd(logits);
    add("cross_entropy", Pass::Forward, OpUnit::Vector, {lossF.flops * n * V, lossF.bytes * n * V}, 1, lossF.kernels, lossF.impl);

    // Backward, in execution order.
    add("cross_entropy.bwd", Pass::Backward, OpUnit::Vector, {lossB.flops * n * V, lossB.bytes * n * V}, 1, lossB.kernels, lossB.impl);
    gemmBwd(logits);
    residual("residual_mlp.bwd", Pass::Backward);
    gemmBwd(down);
    if (swiglu)
        kernel("silu_mul.bwd", Pass::Backward, swigluCost(opt.fusion, Pass::Backward, e), n * f);
    else
        bwd("gelu.bwd", OpUnit::Vector, {20 * n * f, 3 * e * n * f}, L);
    gemmBwd(up);
    norm("norm_mlp.bwd", Pass::Backward);
    residual("residual_attn.bwd", Pass::Backward);
    gemmBwd(out);
    if (flash) {
        // FlashAttention-2 backward: 5 matmuls against the forward's 2 (2.5x), recomputing P on chip;
        // reads Q, K, V, O, dO and writes dQ, dK, dV.
        bwd("attention_flash.bwd", OpUnit::Tensor, {10 * scores * hd + 8 * scores, e * (4 * n * qd + 4 * nk * kvRead)}, L);
        shape(OpKind::Attention, s, keys, hd, b * a, true);
    } else {
        bwd("scores_v.bwd", OpUnit::Tensor, {4 * scores * hd, e * n * qd + 2 * e * nk * kvRead + 2 * e * scores}, L);
        shape(OpKind::Gemm, s, hd, keys, b * a);
        if (m.dropout) {
            const KernelCost d = attentionDropoutCost(Pass::Backward, e);
            add("attn_dropout.bwd", Pass::Backward, OpUnit::Vector, {d.flops * scores, d.bytes * scores}, L, d.kernels, d.impl);
        }
        bwd("softmax.bwd", OpUnit::Vector, {3 * scores, 3 * e * scores}, L);
        bwd("scores_qk.bwd", OpUnit::Tensor, {4 * scores * hd, e * scores + 2 * e * (n * qd + nk * kvRead)}, L);
        shape(OpKind::Gemm, s, keys, hd, b * a);
    }
    if (repeatKv) // the repeated heads' gradients summed back
        add("repeat_kv.bwd", Pass::Backward, OpUnit::Vector, {2 * nk * qd, 2 * e * nk * (kvd + qd)}, L, 2, "sum over the repeated heads");
    if (rope)
        kernel("rope.bwd", Pass::Backward, ropeCost(opt.fusion, Pass::Backward, e), n * (qd + kvd));
    if (m.qkNorm)
        kernel("qk_norm.bwd", Pass::Backward, rmsNormCost(opt.fusion, Pass::Backward, e), n * (qd + kvd));
    gemmBwd(qkv);
    norm("norm_attn.bwd", Pass::Backward);
}

} // namespace napkin::core
