// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "model.h"

#include "jsonreader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace napkin::core {

const char* toString(FfnKind k)
{
    switch (k) {
    case FfnKind::Gelu: return "gelu";
    case FfnKind::Swiglu: return "swiglu";
    case FfnKind::Geglu: return "geglu";
    }
    return "";
}
const char* toString(AttentionKind k) { return k == AttentionKind::Mla ? "mla" : "mha"; }
const char* toString(NormKind k)
{
    switch (k) {
    case NormKind::LayerNorm: return "layernorm";
    case NormKind::RmsNorm: return "rmsnorm";
    case NormKind::NonParametric: return "nonparametric";
    case NormKind::LayerNormNoBias: return "layernorm_nobias";
    }
    return "";
}
const char* toString(BiasKind k)
{
    switch (k) {
    case BiasKind::None: return "none";
    case BiasKind::All: return "all";
    case BiasKind::Qkv: return "qkv";
    case BiasKind::Attention: return "attention";
    case BiasKind::Mlp: return "mlp";
    }
    return "";
}
const char* toString(PositionKind k)
{
    switch (k) {
    case PositionKind::Learned: return "learned";
    case PositionKind::Rotary: return "rotary";
    case PositionKind::Relative: return "relative";
    case PositionKind::None: return "none";
    }
    return "";
}

const char* toString(QkNorm k)
{
    switch (k) {
    case QkNorm::None: return "none";
    case QkNorm::Full: return "full";
    case QkNorm::Head: return "head";
    }
    return "";
}

bool isMoe(const TransformerShape& s) { return s.moe.experts > 0; }

bool isMoeLayer(const TransformerShape& s, std::int64_t layer)
{
    const auto& m = s.moe;
    if (m.experts <= 0)
        return false;
    if (!m.moeLayers.empty())
        return layer >= 0 && std::size_t(layer) < m.moeLayers.size() && m.moeLayers[std::size_t(layer)] != 0;
    const std::int64_t freq = std::max<std::int64_t>(1, m.layerFreq);
    const std::int64_t k = layer + 1 - m.layerOffset;
    return layer >= m.firstDenseLayers && k >= 0 && k % freq == 0;
}

std::int64_t moeLayerCount(const TransformerShape& s)
{
    if (!isMoe(s))
        return 0;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < s.layers; ++i)
        n += isMoeLayer(s, i) ? 1 : 0;
    return n;
}

double sharedExpertWidth(const MoeShape& m)
{
    return double(m.sharedExperts) * double(m.sharedExpertFfn > 0 ? m.sharedExpertFfn : m.expertFfn);
}

MlaProjections mlaProjections(const TransformerShape& s)
{
    const auto& a = s.mla;
    const double d = double(s.dModel), H = double(s.heads), rq = double(a.qLoraRank), rkv = double(a.kvLoraRank);
    const double dq = double(a.qkNopeHeadDim + a.qkRopeHeadDim);
    MlaProjections m;
    m.q = rq > 0 ? d * rq + rq * H * dq : d * H * dq;
    m.kv = d * (rkv + double(a.qkRopeHeadDim)) + rkv * H * double(a.qkNopeHeadDim + a.vHeadDim);
    m.out = H * double(a.vHeadDim) * d;
    m.norms = rq + rkv;
    return m;
}

namespace {

double averageWidth(const TransformerShape& s, double moeWidth)
{
    const double L = double(s.layers);
    if (!isMoe(s) || L <= 0)
        return double(s.ffn);
    const double Lm = double(moeLayerCount(s));
    return ((L - Lm) * double(s.ffn) + Lm * moeWidth) / L;
}

} // namespace

double mlpWidth(const TransformerShape& s)
{
    return averageWidth(s, double(s.moe.topK) * double(s.moe.expertFfn) + sharedExpertWidth(s.moe));
}

double routedExpertWidth(const TransformerShape& s)
{
    if (!isMoe(s))
        return 0;
    return averageWidth(s, double(s.moe.topK) * double(s.moe.expertFfn)) - averageWidth(s, 0.0);
}

double busiestRankMlpWidth(const TransformerShape& s, double load)
{
    if (!isMoe(s) || load <= 1)
        return mlpWidth(s);
    return mlpWidth(s) + routedExpertWidth(s) * (load - 1);
}

double mlpWeightWidth(const TransformerShape& s, int expertRanks)
{
    const double local = double(s.moe.experts) / double(std::max(1, expertRanks));
    return averageWidth(s, local * double(s.moe.expertFfn) + sharedExpertWidth(s.moe));
}

namespace {

double normParams(NormKind k, double d)
{
    switch (k) {
    case NormKind::LayerNorm: return 2 * d;   // weight + bias
    case NormKind::RmsNorm: return d;         // weight only
    case NormKind::NonParametric: return 0;   // OLMo 1: no affine parameters
    case NormKind::LayerNormNoBias: return d; // DBRX: weight only
    }
    return 0;
}

ParamCounts countTransformer(const TransformerShape& s)
{
    ParamCounts c;
    const double d = double(s.dModel), V = double(s.vocab), f = double(s.ffn);
    const double qd = double(s.heads) * double(s.headDim), kvd = double(s.kvHeads) * double(s.headDim);
    // Attention: q (d x qd), k and v (d x kvd), o (qd x d).
    double common = d * qd + 2 * d * kvd + qd * d;
    double matrices = 4, factored = (d + qd) + 2 * (d + kvd) + (qd + d);
    double vectors = 0;
    if (s.attention == AttentionKind::Mla) {
        // MLA (moe-notes.md §2.1; DeepSeek-V3 inference/model.py): q = d·r_q + r_q (q_a_layernorm) +
        // r_q·H·(d_n + d_r), or d·H·(d_n + d_r) without a q rank; kv = d·(r_kv + d_r) + r_kv
        // (kv_a_layernorm) + r_kv·H·(d_n + d_v); o = H·d_v·d.
        const auto& a = s.mla;
        const double H = double(s.heads), rq = double(a.qLoraRank), rkv = double(a.kvLoraRank);
        const double dq = double(a.qkNopeHeadDim + a.qkRopeHeadDim), dr = double(a.qkRopeHeadDim),
                     dv = double(a.vHeadDim);
        const double dn = double(a.qkNopeHeadDim);
        const MlaProjections proj = mlaProjections(s);
        common = proj.q + proj.kv + proj.out;
        vectors += proj.norms;
        matrices = rq > 0 ? 2 : 1;
        factored = rq > 0 ? (d + rq) + (rq + H * dq) : d + H * dq;
        matrices += 3;
        factored += (d + rkv + dr) + (rkv + H * (dn + dv)) + (H * dv + d);
    }
    if (s.attentionSinks)
        vectors += double(s.heads); // gpt-oss: one sink logit per head
    const bool qkvBias = s.biases == BiasKind::All || s.biases == BiasKind::Qkv || s.biases == BiasKind::Attention;
    const bool outBias = s.biases == BiasKind::All || s.biases == BiasKind::Attention;
    const bool mlpBias = s.biases == BiasKind::All || s.biases == BiasKind::Mlp;
    if (qkvBias)
        vectors += qd + 2 * kvd; // Qwen2: q/k/v biases only
    if (outBias)
        vectors += d;
    if (s.qkNorm == QkNorm::Full)
        vectors += qd + kvd; // OLMo 2, OLMoE: RMSNorm weights over the q and k projections
    else if (s.qkNorm == QkNorm::Head)
        vectors += 2 * double(s.headDim); // Qwen3: q_norm and k_norm of head_dim, shared by the heads
    // Transformer-XL relative positions (Chinchilla/Gopher): W_R (d x d) + two d-vectors per layer
    // (nanoGPT scaling_laws.ipynb chinchilla_params).
    if (s.positions == PositionKind::Relative) {
        common += d * d;
        matrices += 1;
        factored += 2 * d;
        vectors += 2 * d;
    }
    vectors += (s.sandwichNorm ? 4 : 2) * normParams(s.norm, d); // Gemma 2/3: pre and post norms
    common += vectors;
    factored += vectors;
    // MLP: GELU fc (d x f) + proj (f x d); SwiGLU gate, up (d x f) + down (f x d).
    const double g = isGated(s.ffnKind) ? 3 : 2;
    const double denseMlp = g * d * f + (mlpBias ? (g - 1) * f + d : 0);
    c.denseLayer = common + denseMlp;
    const double denseMatrices = matrices + g, denseFactored = factored + g * (d + f) + (mlpBias ? (g - 1) * f + d : 0);
    const double L = double(s.layers);
    double Lm = 0, moeMatrices = 0, moeFactored = 0;
    if (isMoe(s)) {
        // An MoE layer (moe-notes.md §1.1, Megatron theoretical_memory_usage.py L104-130): E routed
        // experts of g · d · I_e (gpt-oss: + (g - 1) I_e + d biases each), the router d · E (+ E bias,
        // + E score-correction bias), shared experts of g · d · I_s (Qwen2-MoE: + a d -> 1 gate).
        const auto& m = s.moe;
        const double E = double(m.experts), k = double(m.topK), Ie = double(m.expertFfn);
        const double Is = m.sharedExpertFfn > 0 ? double(m.sharedExpertFfn) : Ie, S = double(m.sharedExperts);
        const double expert = g * d * Ie + (m.expertBias ? (g - 1) * Ie + d : 0);
        const double router = d * E + (m.routerBias ? E : 0) + (m.scoreCorrectionBias ? E : 0);
        const double shared = S * g * d * Is + (m.sharedExpertGate ? d : 0);
        Lm = double(moeLayerCount(s));
        c.moeLayer = common + E * expert + router + shared;
        c.routedExpertsPerLayer = E * expert;
        c.routedExperts = Lm * c.routedExpertsPerLayer;
        c.router = Lm * router;
        const double activeMoe = common + k * expert + router + shared;
        c.active = (L - Lm) * c.denseLayer + Lm * activeMoe;
        moeMatrices = matrices + E * g + 1 + S * g + (m.sharedExpertGate ? 1 : 0);
        moeFactored = factored + E * (g * (d + Ie) + (m.expertBias ? (g - 1) * Ie + d : 0)) + (d + E) +
                      (router - d * E) + S * g * (d + Is) + (m.sharedExpertGate ? d + 1 : 0);
    }
    c.layers = (L - Lm) * c.denseLayer + Lm * c.moeLayer;
    c.perLayer = L > 0 ? c.layers / L : 0;
    if (!isMoe(s))
        c.active = c.layers;
    // Multi-token prediction (DeepSeek-V3 README_WEIGHTS.md): per depth enorm and hnorm (2d), eh_proj
    // (2d x d), one layer of the last layer's kind, and the shared head's norm (d); the embedding and
    // output head are the main model's.
    if (s.mtpLayers > 0) {
        const double last = isMoeLayer(s, s.layers - 1) ? c.moeLayer : c.denseLayer;
        c.mtp = double(s.mtpLayers) * (2 * normParams(s.norm, d) + 2 * d * d + last + normParams(s.norm, d));
    }
    c.embedding = V * d;
    c.positional = s.positions == PositionKind::Learned ? double(s.maxPositions) * d : 0;
    c.head = s.tiedEmbeddings ? 0 : V * d;
    c.finalNorm = normParams(s.norm, d);
    const double outside = c.embedding + c.positional + c.head + c.finalNorm;
    c.total = c.layers + outside;
    c.active += outside;
    c.activeExclEmbedding = c.active - c.embedding;
    c.nonEmbedding = c.total - c.embedding - c.positional - c.head;
    c.matrices =
        (L - Lm) * denseMatrices + Lm * moeMatrices + 1 + (s.tiedEmbeddings ? 0 : 1) + (c.positional > 0 ? 1 : 0);
    c.adafactorStateElems = (L - Lm) * denseFactored + Lm * moeFactored + (V + d) + (s.tiedEmbeddings ? 0 : V + d) +
                            (c.positional > 0 ? double(s.maxPositions) + d : 0) + c.finalNorm;
    return c;
}

} // namespace

ParamCounts countParams(const ModelSpec& m)
{
    switch (m.kind) {
    case ModelKind::Transformer: return countTransformer(m.shape);
    case ModelKind::Mlp: {
        // CS336 lecture 2: D^2 L + D (the D -> 1 head).
        ParamCounts c;
        const double D = double(m.mlp.width), L = double(m.mlp.layers);
        c.perLayer = D * D;
        c.layers = L * D * D;
        c.head = m.mlp.head ? D : 0;
        c.total = c.layers + c.head;
        c.nonEmbedding = c.total;
        c.active = c.total;
        c.activeExclEmbedding = c.total;
        c.matrices = L + (m.mlp.head ? 1 : 0);
        c.adafactorStateElems = L * 2 * D + (m.mlp.head ? D + 1 : 0);
        return c;
    }
    case ModelKind::ParamsOnly: {
        ParamCounts c = countTransformer(m.shape);
        // The count as given is the truth; the derived shape only sizes activations and ops.
        const double scale = c.total > 0 ? m.givenParams / c.total : 1.0;
        c.total = m.givenParams;
        c.nonEmbedding *= scale;
        c.layers *= scale;
        c.perLayer *= scale;
        c.embedding *= scale;
        c.head *= scale;
        c.adafactorStateElems *= scale;
        c.denseLayer *= scale;
        c.active = c.total;
        c.activeExclEmbedding = c.total - c.embedding;
        c.derivedShape = true;
        return c;
    }
    }
    return {};
}

TransformerShape deriveShape(double params, std::string* note)
{
    TransformerShape s;
    s.vocab = 32000;
    s.ffnKind = FfnKind::Swiglu;
    s.norm = NormKind::RmsNorm;
    s.positions = PositionKind::Rotary;
    s.tiedEmbeddings = params < 1e9; // small models usually tie (GPT-2); large ones do not (Llama)
    s.maxPositions = 4096;
    const double embedFactor = s.tiedEmbeddings ? 1.0 : 2.0;
    // Non-embedding N' = 12 L d^2 with L = d / 128  =>  d^3 = 128 N' / 12. Iterate because the
    // embedding share depends on d; keep the embedding below half of the parameters.
    double d = 256;
    for (int i = 0; i < 4; ++i) {
        double dMaxEmbed = params / (2 * embedFactor * double(s.vocab));
        double nonEmb = std::max(params - embedFactor * double(s.vocab) * std::min(d, dMaxEmbed), params * 0.5);
        d = std::cbrt(nonEmb * 128.0 / 12.0);
        d = std::min(d, std::max(64.0, dMaxEmbed));
    }
    s.headDim = d >= 1024 ? 128 : 64;
    s.dModel = std::max<std::int64_t>(s.headDim, std::int64_t(std::llround(d / double(s.headDim))) * s.headDim);
    s.heads = s.dModel / s.headDim;
    s.kvHeads = s.heads;
    // SwiGLU with ffn = 8d/3 rounded up to a multiple of 256 (Llama's multiple_of) keeps 12 d^2 per layer.
    s.ffn = std::max<std::int64_t>(256, ((8 * s.dModel / 3 + 255) / 256) * 256);
    const double dd = double(s.dModel);
    const double perLayer = 4 * dd * dd + 3 * dd * double(s.ffn) + 2 * dd;
    const double nonEmb = std::max(params - embedFactor * double(s.vocab) * dd, perLayer);
    s.layers = std::max<std::int64_t>(1, std::llround(nonEmb / perLayer));
    if (note) {
        *note = "derived from the parameter count: L = " + std::to_string(s.layers) +
                " layers of d = " + std::to_string(s.dModel) + " (" + std::to_string(s.heads) + " heads of " +
                std::to_string(s.headDim) + "), SwiGLU ffn " + std::to_string(s.ffn) + ", vocab 32000, " +
                (s.tiedEmbeddings ? "tied" : "untied") +
                " embeddings; 12 d^2 per layer with d/L = 128 (Llama-2-7B 4096/32, GPT-3 12288/96). "
                "Used for activations and the roofline only; the parameter count is taken as given.";
    }
    return s;
}

namespace {

void readMoeFields(const nlohmann::json& node, const std::string& path, Errors& errors, MoeShape& m)
{
    ObjectReader r(node, path, errors);
    if (!r.isObject()) {
        errors.push_back(
            {path, shortDump(node), "must be an object", "{\"experts\": E, \"top_k\": k, \"expert_ffn\": I_e, ...}"});
        return;
    }
    constexpr std::int64_t big = 1LL << 24;
    if (auto v = r.integer("experts", 0, 65536))
        m.experts = *v;
    if (auto v = r.integer("top_k", 1, 65536))
        m.topK = *v;
    if (auto v = r.integer("expert_ffn", 1, big))
        m.expertFfn = *v;
    if (auto v = r.integer("shared_experts", 0, 65536))
        m.sharedExperts = *v;
    if (auto v = r.integer("shared_expert_ffn", 0, big))
        m.sharedExpertFfn = *v;
    if (auto v = r.boolean("shared_expert_gate"))
        m.sharedExpertGate = *v;
    if (auto v = r.integer("first_dense_layers", 0, 100000))
        m.firstDenseLayers = *v;
    if (auto v = r.integer("layer_freq", 1, 100000))
        m.layerFreq = *v;
    if (auto v = r.integer("layer_offset", 0, 100000))
        m.layerOffset = *v;
    if (const auto* list = r.child("moe_layers"); list && !list->is_null()) {
        m.moeLayers.clear();
        bool ok = list->is_array() && list->size() <= 100000;
        for (std::size_t i = 0; ok && i < list->size(); ++i) {
            const auto& x = (*list)[i];
            ok = x.is_number_integer() && (x.get<std::int64_t>() == 0 || x.get<std::int64_t>() == 1);
            if (ok)
                m.moeLayers.push_back(std::uint8_t(x.get<std::int64_t>()));
        }
        if (!ok) {
            r.error("moe_layers", shortDump(*list), "must list 0 (dense) or 1 (MoE) for every layer",
                    "an array of 0/1, one per layer");
            m.moeLayers.clear();
        }
    }
    if (auto v = r.boolean("router_bias"))
        m.routerBias = *v;
    if (auto v = r.boolean("expert_bias"))
        m.expertBias = *v;
    if (auto v = r.boolean("score_correction_bias"))
        m.scoreCorrectionBias = *v;
    r.finish();
}

void validateMoe(const TransformerShape& s, const std::string& path, Errors& errors)
{
    const auto& m = s.moe;
    if (m.experts <= 0)
        return;
    const std::string p = path + ".moe.";
    if (m.topK <= 0 || m.topK > m.experts)
        errors.push_back(
            {p + "top_k", m.topK > 0 ? std::to_string(m.topK) : "",
             m.topK > 0 ? "is more than the " + std::to_string(m.experts) + " experts" : "missing: experts need top_k",
             "an integer from 1 to experts (" + std::to_string(m.experts) + ")"});
    if (m.expertFfn <= 0)
        errors.push_back({p + "expert_ffn", "", "missing: experts need their FFN width", "a positive integer"});
    if (!m.moeLayers.empty() && std::int64_t(m.moeLayers.size()) != s.layers)
        errors.push_back({p + "moe_layers", std::to_string(m.moeLayers.size()) + " entries",
                          "must have one entry per layer (" + std::to_string(s.layers) + ")",
                          "an array of " + std::to_string(s.layers) + " values 0/1"});
    else if (s.layers > 0 && moeLayerCount(s) == 0)
        errors.push_back({p + "first_dense_layers", std::to_string(m.firstDenseLayers),
                          "leaves no mixture-of-experts layer (layer i is MoE iff i >= first_dense_layers and "
                          "(i + 1 - layer_offset) % layer_freq == 0)",
                          "fewer than layers (" + std::to_string(s.layers) + "), or set moe.experts to 0"});
}

} // namespace

void readTransformerFields(ObjectReader& r, TransformerShape& s)
{
    constexpr std::int64_t big = 1LL << 24;
    if (auto v = r.integer("layers", 1, 100000))
        s.layers = *v;
    if (auto v = r.integer("d_model", 1, big))
        s.dModel = *v;
    const std::int64_t oldHeads = s.heads;
    if (auto v = r.integer("heads", 1, 65536))
        s.heads = *v;
    const bool kvGiven = r.has("kv_heads");
    if (auto v = r.integer("kv_heads", 1, 65536))
        s.kvHeads = *v;
    const bool hdGiven = r.has("head_dim");
    if (auto v = r.integer("head_dim", 1, 65536))
        s.headDim = *v;
    if (auto v = r.integer("ffn", 1, big))
        s.ffn = *v;
    if (auto v = r.choice<FfnKind>("ffn_kind",
                                   {{"gelu", FfnKind::Gelu}, {"swiglu", FfnKind::Swiglu}, {"geglu", FfnKind::Geglu}}))
        s.ffnKind = *v;
    if (auto v = r.integer("vocab", 1, 1LL << 30))
        s.vocab = *v;
    if (auto v = r.boolean("tied_embeddings"))
        s.tiedEmbeddings = *v;
    if (auto v = r.choice<NormKind>("norm", {{"layernorm", NormKind::LayerNorm},
                                             {"rmsnorm", NormKind::RmsNorm},
                                             {"nonparametric", NormKind::NonParametric},
                                             {"layernorm_nobias", NormKind::LayerNormNoBias}}))
        s.norm = *v;
    if (auto v = r.choice<BiasKind>("biases", {{"none", BiasKind::None},
                                               {"all", BiasKind::All},
                                               {"qkv", BiasKind::Qkv},
                                               {"attention", BiasKind::Attention},
                                               {"mlp", BiasKind::Mlp}}))
        s.biases = *v;
    if (auto v = r.choice<PositionKind>("positions", {{"learned", PositionKind::Learned},
                                                      {"rotary", PositionKind::Rotary},
                                                      {"relative", PositionKind::Relative},
                                                      {"none", PositionKind::None}}))
        s.positions = *v;
    if (auto v = r.integer("max_positions", 1, 1LL << 26))
        s.maxPositions = *v;
    if (auto v = r.boolean("dropout"))
        s.dropout = *v;
    if (const auto* q = r.child("qk_norm"); q && q->is_boolean()) // true: over the full projections (OLMo 2)
        s.qkNorm = q->get<bool>() ? QkNorm::Full : QkNorm::None;
    else if (auto v =
                 r.choice<QkNorm>("qk_norm", {{"none", QkNorm::None}, {"full", QkNorm::Full}, {"head", QkNorm::Head}}))
        s.qkNorm = *v;
    if (const auto* j = r.child("moe"); j && !j->is_null())
        readMoeFields(*j, r.fieldPath("moe"), r.errors(), s.moe);
    if (auto v = r.choice<AttentionKind>("attention", {{"mha", AttentionKind::Mha}, {"mla", AttentionKind::Mla}}))
        s.attention = *v;
    if (auto v = r.integer("q_lora_rank", 0, big))
        s.mla.qLoraRank = *v;
    if (auto v = r.integer("kv_lora_rank", 1, big))
        s.mla.kvLoraRank = *v;
    if (auto v = r.integer("qk_nope_head_dim", 0, 65536))
        s.mla.qkNopeHeadDim = *v;
    if (auto v = r.integer("qk_rope_head_dim", 0, 65536))
        s.mla.qkRopeHeadDim = *v;
    if (auto v = r.integer("v_head_dim", 1, 65536))
        s.mla.vHeadDim = *v;
    if (auto v = r.integer("mtp_layers", 0, 64))
        s.mtpLayers = *v;
    if (auto v = r.boolean("sandwich_norm"))
        s.sandwichNorm = *v;
    if (auto v = r.boolean("attention_sinks"))
        s.attentionSinks = *v;
    if (auto v = r.integer("sliding_window", 0, 1LL << 26))
        s.slidingWindow = *v;
    if (auto v = r.integer("attention_chunk", 0, 1LL << 26))
        s.attentionChunk = *v;
    if (const auto* list = r.child("layer_types"); list && !list->is_null()) {
        // Hugging Face's layer_types: "sliding_attention" or "full_attention" per layer.
        s.slidingLayers.clear();
        bool ok = list->is_array() && list->size() <= 100000;
        for (std::size_t i = 0; ok && i < list->size(); ++i) {
            const auto& x = (*list)[i];
            ok = x.is_string() && (x == "sliding_attention" || x == "full_attention");
            if (ok)
                s.slidingLayers.push_back(x == "sliding_attention" ? 1 : 0);
        }
        if (!ok) {
            r.error("layer_types", shortDump(*list), "must name each layer's attention",
                    "an array of \"sliding_attention\" or \"full_attention\", one per layer");
            s.slidingLayers.clear();
        }
    }
    // Defaults that follow from other fields when not given: MHA, d / heads.
    // An MHA model stays MHA when only its head count changes.
    if (!kvGiven && (s.kvHeads == 0 || s.kvHeads == oldHeads))
        s.kvHeads = s.heads;
    // head_dim follows d_model / heads unless given; 0 (an error in validateShape) when it does not divide.
    if (!hdGiven && (s.headDim == 0 || r.has("d_model") || r.has("heads")))
        s.headDim = (s.heads > 0 && s.dModel % s.heads == 0) ? s.dModel / s.heads : 0;
}

void validateShape(const TransformerShape& s, const std::string& path, Errors& errors)
{
    auto f = [&](const char* key) { return path + "." + key; };
    auto need = [&](std::int64_t v, const char* key) {
        if (v <= 0)
            errors.push_back(
                {f(key), v == 0 ? "" : std::to_string(v), "missing or not positive", "a positive integer"});
        return v > 0;
    };
    // Every field is checked (no short-circuit), so all missing ones are reported at once.
    const bool fields[] = {need(s.layers, "layers"),    need(s.dModel, "d_model"), need(s.heads, "heads"),
                           need(s.kvHeads, "kv_heads"), need(s.ffn, "ffn"),        need(s.vocab, "vocab")};
    bool ok = true;
    for (bool f : fields)
        ok = ok && f;
    if (!ok)
        return;
    if (s.headDim <= 0) {
        errors.push_back({f("heads"), std::to_string(s.heads),
                          "does not divide d_model " + std::to_string(s.dModel) + " and no head_dim is given",
                          "a divisor of d_model, or set head_dim"});
        return;
    }
    if (s.kvHeads > s.heads || s.heads % s.kvHeads != 0)
        errors.push_back({f("kv_heads"), std::to_string(s.kvHeads),
                          "must divide heads " + std::to_string(s.heads) + " (GQA groups)",
                          "a divisor of heads (1 = MQA, heads = MHA)"});
    if (s.positions == PositionKind::Learned && s.maxPositions <= 0)
        errors.push_back({f("max_positions"), "", "learned positions need a table size", "a positive integer"});
    validateMoe(s, path, errors);
    if (s.attention == AttentionKind::Mla) {
        const std::pair<std::int64_t, const char*> need[] = {
            {s.mla.kvLoraRank, "kv_lora_rank"},
            {s.mla.qkNopeHeadDim + s.mla.qkRopeHeadDim, "qk_nope_head_dim"},
            {s.mla.vHeadDim, "v_head_dim"}};
        for (const auto& [v, key] : need)
            if (v <= 0)
                errors.push_back({f(key), "",
                                  "missing: attention \"mla\" needs kv_lora_rank, qk_nope_head_dim, "
                                  "qk_rope_head_dim and v_head_dim",
                                  "a positive integer"});
    }
    if (!s.slidingLayers.empty() && std::int64_t(s.slidingLayers.size()) != s.layers)
        errors.push_back({f("layer_types"), std::to_string(s.slidingLayers.size()) + " entries",
                          "must have one entry per layer (" + std::to_string(s.layers) + ")",
                          "an array of " + std::to_string(s.layers) + " attention types"});
}

} // namespace napkin::core
