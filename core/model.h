// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Model descriptions and their exact parameter counts.

#include "errors.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace napkin::core {

enum class ModelKind { Transformer, Mlp, ParamsOnly };
enum class FfnKind { Gelu, Swiglu, Geglu };
// Gated MLPs (SwiGLU, GeGLU) have three matrices (gate, up, down); GELU two.
inline bool isGated(FfnKind k) { return k != FfnKind::Gelu; }
// Attention: multi-head (GQA/MQA through kv_heads) or DeepSeek's multi-head latent attention.
enum class AttentionKind { Mha, Mla };

// DeepSeek-V2/V3 multi-head latent attention (DeepSeek-AI 2024, arXiv 2405.04434 §2.1; moe-notes.md
// §2.1): q through an optional rank-r_q bottleneck, k and v through a shared rank-r_kv latent plus
// one RoPE key of d_r per token; per head q and k of d_n + d_r, v of d_v.
struct MlaShape {
    std::int64_t qLoraRank = 0; // 0: no query compression (DeepSeek-V2-Lite)
    std::int64_t kvLoraRank = 0;
    std::int64_t qkNopeHeadDim = 0;
    std::int64_t qkRopeHeadDim = 0;
    std::int64_t vHeadDim = 0;
};
// LayerNormNoBias: a LayerNorm with a weight and no bias (DBRX: nn.LayerNorm(bias=False)).
enum class NormKind { LayerNorm, RmsNorm, NonParametric, LayerNormNoBias };
// Which linear layers carry biases: all (GPT-2/3), q/k/v only (Qwen2), q/k/v/o (Llama attention_bias),
// MLP only (GPT-NeoX with attention_bias false).
enum class BiasKind { None, All, Qkv, Attention, Mlp };
enum class PositionKind { Learned, Rotary, Relative, None };
// RMSNorm on q and k: none, over the full projections (OLMo 2, OLMoE: qd + kvd weights), or per head
// with one head_dim weight shared by every head (Qwen3, Gemma 3: 2 · head_dim weights).
enum class QkNorm { None, Full, Head };

// Mixture-of-experts MLP (moe-notes.md §1.1; Fedus et al. 2022; Jiang et al. 2024, Mixtral).
// experts == 0: a dense model. Layer i is an MoE layer iff i >= firstDenseLayers and
// (i + 1 - layerOffset) % layerFreq == 0 (HF Qwen2/3-MoE decoder_sparse_step and Llama 4
// interleave_moe_layer_step: offset 0; Megatron --moe-layer-freq N: offset 1), unless moeLayers
// lists every layer explicitly (1 = MoE). Dense layers use the model's ffn.
struct MoeShape {
    std::int64_t experts = 0;         // routed experts E
    std::int64_t topK = 0;            // experts per token k
    std::int64_t expertFfn = 0;       // routed expert width I_e
    std::int64_t sharedExperts = 0;   // always-active experts
    std::int64_t sharedExpertFfn = 0; // width of each shared expert (0: expertFfn)
    bool sharedExpertGate = false;    // Qwen2-MoE: sigmoid gate h -> 1 on the shared expert
    std::int64_t firstDenseLayers = 0;
    std::int64_t layerFreq = 1;
    std::int64_t layerOffset = 0;
    std::vector<std::uint8_t> moeLayers; // explicit 0/1 per layer (overrides the rule)
    bool routerBias = false;             // a bias of E on the router
    bool expertBias = false;             // gpt-oss: biases on each expert's projections
    bool scoreCorrectionBias = false;    // DeepSeek-V3 aux-loss-free balancing: an E-vector per MoE layer
};

// A decoder-only transformer. headDim need not equal dModel / heads (Gemma-style), kvHeads < heads
// is GQA, kvHeads == 1 is MQA.
struct TransformerShape {
    std::int64_t layers = 0;
    std::int64_t dModel = 0;
    std::int64_t heads = 0;
    std::int64_t kvHeads = 0;
    std::int64_t headDim = 0;
    std::int64_t ffn = 0;
    std::int64_t vocab = 0;
    std::int64_t maxPositions = 0; // learned position table rows; context length otherwise
    FfnKind ffnKind = FfnKind::Swiglu;
    bool tiedEmbeddings = false;
    NormKind norm = NormKind::RmsNorm;
    BiasKind biases = BiasKind::None;
    PositionKind positions = PositionKind::Rotary;
    bool dropout = false; // GPT-style dropout masks (Korthikanti counts them)
    QkNorm qkNorm = QkNorm::None;
    MoeShape moe;
    AttentionKind attention = AttentionKind::Mha;
    MlaShape mla;
    // DeepSeek-V3 multi-token prediction depths: each 2 norms, a 2d -> d projection, one layer of the
    // last layer's kind and a norm (arXiv 2412.19437 §2.2); counted in params.mtp, not in total.
    std::int64_t mtpLayers = 0;
    bool sandwichNorm = false;   // Gemma 2/3: norms before and after attention and MLP (4 per layer)
    bool attentionSinks = false; // gpt-oss: one learned logit per head per layer
    // Sliding-window attention (Gemma 2/3, gpt-oss, Mistral 7B v0.1): layers that attend to the last
    // slidingWindow keys only. slidingLayers lists them (1 = sliding) as HF layer_types does; empty
    // with a window means every layer. attentionChunk: Llama 4's chunked local attention.
    std::int64_t slidingWindow = 0;
    std::vector<std::uint8_t> slidingLayers;
    std::int64_t attentionChunk = 0;
};

// Mixture-of-experts helpers. isMoe: any routed experts. isMoeLayer: the placement rule above.
bool isMoe(const TransformerShape& s);
bool isMoeLayer(const TransformerShape& s, std::int64_t layer);
std::int64_t moeLayerCount(const TransformerShape& s);
// The MLP work of an average layer per token, as a width of the model's MLP kind: ffn for a dense
// model; (L_dense · ffn + L_moe · (k · I_e + shared · I_s)) / L with experts. FLOPs and saved
// activations are linear in the width, so their sums over the layers are exact.
double mlpWidth(const TransformerShape& s);
// mlpWidth on the busiest expert-parallel rank, whose routed experts take `load` × the mean rows:
// the routed part k · I_e of the MoE layers grows by (load - 1); dense layers and shared experts do not.
double busiestRankMlpWidth(const TransformerShape& s, double load);
// The routed experts' part of mlpWidth: L_moe · k · I_e / L (0 for a dense model).
double routedExpertWidth(const TransformerShape& s);
// The MLP weights an average layer holds, as the same kind of width: E · I_e + shared · I_s on MoE
// layers (every expert's weights are read, k of them per token).
double mlpWeightWidth(const TransformerShape& s, int expertRanks = 1); // a rank holding experts / expertRanks
// The summed width of an MoE layer's shared experts: shared · I_s (I_s = I_e when not given).
double sharedExpertWidth(const MoeShape& m);
// MLA's projection weights per layer (moe-notes.md §2.1; DeepSeek-V3 inference/model.py): query
// d·r_q + r_q·H·(d_n + d_r), or d·H·(d_n + d_r) without a query rank; key/value d·(r_kv + d_r) +
// r_kv·H·(d_n + d_v); output H·d_v·d; the latent norms r_q + r_kv (one weight per rank element).
struct MlaProjections {
    double q = 0, kv = 0, out = 0, norms = 0;
};
MlaProjections mlaProjections(const TransformerShape& s);

// CS336 lecture 2's toy deep linear model: L layers of D x D, optional D -> 1 head.
struct MlpShape {
    std::int64_t width = 0;
    std::int64_t layers = 0;
    bool head = false;
};

struct ModelSpec {
    ModelKind kind = ModelKind::Transformer;
    std::string id; // preset id, "custom", "hf:<path>" or "params"
    std::string name;
    std::string source;     // where the architecture comes from
    TransformerShape shape; // for ParamsOnly: the derived shape (activations and roofline only)
    MlpShape mlp;
    double givenParams = 0; // ParamsOnly: the parameter count as given
    std::string shapeNote;  // ParamsOnly: how the shape was derived
};

struct ParamCounts {
    double total = 0;
    double embedding = 0;  // input token embedding
    double positional = 0; // learned position table
    double perLayer = 0;
    double layers = 0;
    double head = 0; // untied output projection
    double finalNorm = 0;
    double nonEmbedding = 0;
    // Parameters a token runs through (mixture of experts: k routed experts, shared experts, router;
    // equal to total for a dense model). Model cards differ on the input embedding: "active" counts
    // it (Mistral, Qwen, Meta, AI2), "activeExclEmbedding" does not (DeepSeek, OpenAI).
    double active = 0;
    double activeExclEmbedding = 0;
    double routedExperts = 0;         // all routed experts' weights (and biases), all layers
    double routedExpertsPerLayer = 0; // one MoE layer's routed experts
    double router = 0;                // router weights (+ biases, score-correction vectors), all layers
    double denseLayer = 0;            // one dense layer; perLayer is the mean over all layers
    double moeLayer = 0;              // one MoE layer (0 without experts)
    double mtp = 0;                   // multi-token prediction modules (DeepSeek-V3), not in total
    double matrices = 0;              // weight tensors (for per-tensor scales)
    double adafactorStateElems = 0;   // factored second moment: r + c per matrix, n per vector
    bool derivedShape = false;
};

// Exact counts. Llama-style decoder: per layer d(H hd) + 2d(KV hd) + (H hd)d + 3 d ffn (SwiGLU; 2 d ffn
// for GELU) + norms; plus V d embedding, V d untied head, final norm (Touvron et al. 2023; HF
// model.parameters()). GPT-2/3 add biases, LayerNorm weight+bias and learned positions (nanoGPT).
ParamCounts countParams(const ModelSpec& m);

// A plausible transformer for a bare parameter count: SwiGLU, RMSNorm, d/L = 128 (Llama-2-7B:
// 4096/32; GPT-3: 12288/96), 12 d^2 per layer, d a multiple of the head dim.
TransformerShape deriveShape(double params, std::string* note = nullptr);

// Reads {"kind":"transformer", ...} fields (or overrides on top of a preset) into shape.
// Keys: layers, d_model, heads, kv_heads, head_dim, ffn, ffn_kind, vocab, tied_embeddings, norm,
// biases, positions, max_positions, dropout, qk_norm, moe {experts, top_k, expert_ffn, shared_experts,
// shared_expert_ffn, shared_expert_gate, first_dense_layers, layer_freq, layer_offset, moe_layers,
// router_bias, expert_bias, score_correction_bias}.
// Every key readTransformerFields reads (the model object's architecture fields).
// (clang-format would lay this out as a single column of 28 lines.)
// clang-format off
inline constexpr const char* kTransformerKeys[] = {
    "layers", "d_model", "heads", "kv_heads", "head_dim", "ffn", "ffn_kind", "vocab", "tied_embeddings", "norm",
    "biases", "positions", "max_positions", "dropout", "qk_norm", "moe", "attention", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "mtp_layers", "sandwich_norm", "attention_sinks",
    "sliding_window", "attention_chunk", "layer_types"};
// clang-format on
class ObjectReader;
void readTransformerFields(ObjectReader& r, TransformerShape& shape);
// Checks divisibility and consistency; errors name fields under path.
void validateShape(const TransformerShape& s, const std::string& path, Errors& errors);

// Hugging Face config.json (Llama, Mistral, Qwen2, Qwen3, GPT-2, GPT-NeoX, OLMo, OLMo 2 families; the
// mixture-of-experts Mixtral, Qwen2-MoE, Qwen3-MoE and OLMoE).
ModelSpec modelFromHfConfig(const nlohmann::json& config, const std::string& origin, Errors& errors);

const char* toString(FfnKind k);
const char* toString(NormKind k);
const char* toString(BiasKind k);
const char* toString(PositionKind k);
const char* toString(QkNorm k);
const char* toString(AttentionKind k);

} // namespace napkin::core
