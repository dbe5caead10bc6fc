#pragma once
// Model descriptions and their exact parameter counts.

#include "errors.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace napkin::core {

enum class ModelKind { Transformer, Mlp, ParamsOnly };
enum class FfnKind { Gelu, Swiglu };
enum class NormKind { LayerNorm, RmsNorm, NonParametric };
// Which linear layers carry biases: all (GPT-2/3), q/k/v only (Qwen2), q/k/v/o (Llama attention_bias),
// MLP only (GPT-NeoX with attention_bias false).
enum class BiasKind { None, All, Qkv, Attention, Mlp };
enum class PositionKind { Learned, Rotary, Relative, None };

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
    bool qkNorm = false;  // OLMo 2: RMSNorm on q and k
};

// CS336 lecture 2's toy deep linear model: L layers of D x D, optional D -> 1 head.
struct MlpShape {
    std::int64_t width = 0;
    std::int64_t layers = 0;
    bool head = false;
};

struct ModelSpec {
    ModelKind kind = ModelKind::Transformer;
    std::string id;      // preset id, "custom", "hf:<path>" or "params"
    std::string name;
    std::string source;  // where the architecture comes from
    TransformerShape shape; // for ParamsOnly: the derived shape (activations and roofline only)
    MlpShape mlp;
    double givenParams = 0; // ParamsOnly: the parameter count as given
    std::string shapeNote;  // ParamsOnly: how the shape was derived
};

struct ParamCounts {
    double total = 0;
    double embedding = 0;   // input token embedding
    double positional = 0;  // learned position table
    double perLayer = 0;
    double layers = 0;
    double head = 0;        // untied output projection
    double finalNorm = 0;
    double nonEmbedding = 0;
    double matrices = 0;    // weight tensors (for per-tensor scales)
    double adafactorStateElems = 0; // factored second moment: r + c per matrix, n per vector
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
// biases, positions, max_positions, dropout, qk_norm.
class ObjectReader;
void readTransformerFields(ObjectReader& r, TransformerShape& shape);
// Checks divisibility and consistency; errors name fields under path.
void validateShape(const TransformerShape& s, const std::string& path, Errors& errors);

// Hugging Face config.json (Llama, Mistral, Qwen2, GPT-2, GPT-NeoX, OLMo, OLMo 2 families).
ModelSpec modelFromHfConfig(const nlohmann::json& config, const std::string& origin, Errors& errors);

const char* toString(FfnKind k);
const char* toString(NormKind k);
const char* toString(BiasKind k);
const char* toString(PositionKind k);

} // namespace napkin::core
