// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "flops_megatron.h"

#include <algorithm>

namespace napkin::core {

namespace {

// Mean keys a query attends to under a causal mask: s/2, or with a window W < s, W - W(W-1)/(2s)
// (Megatron-Bridge flop_utils.py: the exact mean causal context of a sliding window).
double causalContext(double s, double window)
{
    if (window > 0 && window < s)
        return window - window * (window - 1) / (2 * s);
    return s / 2;
}

bool slidingLayer(const TransformerShape& m, std::int64_t i)
{
    if (m.slidingWindow <= 0)
        return false;
    if (m.slidingLayers.empty())
        return true;
    return std::size_t(i) < m.slidingLayers.size() && m.slidingLayers[std::size_t(i)] != 0;
}

double layerWindow(const TransformerShape& m, std::int64_t i)
{
    if (slidingLayer(m, i))
        return double(m.slidingWindow);
    return m.attentionChunk > 0 ? double(m.attentionChunk) : 0.0; // Llama 4: chunked local attention
}

} // namespace

double meanCausalContext(const TransformerShape& m, double s)
{
    if (m.layers <= 0)
        return s / 2;
    double sum = 0;
    for (std::int64_t i = 0; i < m.layers; ++i)
        sum += causalContext(s, layerWindow(m, i));
    return sum / double(m.layers);
}

MegatronCoreFlops megatronCoreFlopsPerToken(const TransformerShape& m, double s)
{
    MegatronCoreFlops r;
    const double d = double(m.dModel), H = double(m.heads), V = double(m.vocab);
    const double g = isGated(m.ffnKind) ? 3 : 2;
    double linear = 0, qkHead = 0, vHead = 0;
    if (m.attention == AttentionKind::Mla) {
        // Megatron-Core counts the latent norms' weights with the projections (training.py L1128-1140).
        const MlaProjections proj = mlaProjections(m);
        linear = 6 * (proj.q + proj.kv + proj.out + proj.norms);
        qkHead = double(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim);
        vHead = double(m.mla.vHeadDim);
    } else {
        const double qd = H * double(m.headDim), kvd = double(m.kvHeads) * double(m.headDim);
        linear = 6 * (d * (qd + 2 * kvd) + qd * d);
        qkHead = vHead = double(m.headDim);
    }
    const auto& e = m.moe;
    const double moeMlp = 6 * d * g * (double(e.topK) * double(e.expertFfn) + sharedExpertWidth(e));
    const double denseMlp = 6 * d * g * double(m.ffn);
    for (std::int64_t i = 0; i < m.layers; ++i) {
        const double window = layerWindow(m, i);
        // QK^T and PV over ctx keys, forward 2 · 2 multiply-adds per key per head, × 3 with backward.
        r.core += 6 * H * (qkHead + vHead) * causalContext(s, window);
        r.linear += linear;
        r.mlp += isMoeLayer(m, i) ? moeMlp : denseMlp;
    }
    const double mtp = double(std::max<std::int64_t>(0, m.mtpLayers));
    if (mtp > 0) {
        const bool lastMoe = isMoeLayer(m, m.layers - 1);
        r.mtp = mtp * (linear + 6 * H * (qkHead + vHead) * causalContext(s, 0) + (lastMoe ? moeMlp : denseMlp) +
                       6 * (3 * d + 2 * d * d));
    }
    r.logits = 6 * d * V * (1 + mtp);
    r.total = r.linear + r.core + r.mlp + r.logits + r.mtp;
    return r;
}

} // namespace napkin::core
