// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Hugging Face config.json import (modelFromHfConfig, core/model.h): each family's fields as
// transformers' configuration_*.py and modeling_*.py name them.
#include "model.h"

#include "jsonreader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace napkin::core {

namespace {

// Reads an integer field of an HF config; missing -> error naming the file and the field.
std::int64_t hfInt(const nlohmann::json& c, std::initializer_list<const char*> names, const std::string& origin,
                   Errors& errors, bool required = true, std::int64_t fallback = 0, std::int64_t max = 1LL << 30)
{
    for (const char* n : names) {
        const auto it = c.find(n);
        if (it == c.end() || it->is_null())
            continue;
        const std::string allowed = "an integer from 1 to " + std::to_string(max);
        if (!it->is_number() || it->get<double>() != std::floor(it->get<double>())) {
            errors.push_back({origin + "." + n, shortDump(*it), "must be an integer", allowed});
            return 0;
        }
        const double d = it->get<double>();
        if (d < 1 || d > double(max)) {
            errors.push_back({origin + "." + n, shortDump(*it), "out of range", allowed});
            return 0;
        }
        return static_cast<std::int64_t>(d);
    }
    if (required)
        errors.push_back({origin + "." + *names.begin(), "", "missing required field", "a positive integer"});
    return fallback;
}

bool hfBool(const nlohmann::json& c, const char* name, bool fallback)
{
    const auto it = c.find(name);
    return (it != c.end() && it->is_boolean()) ? it->get<bool>() : fallback;
}

} // namespace

namespace {

// The name a config gives its model: "_name_or_path" (what save_pretrained writes, e.g.
// "meta-llama/Llama-2-7b-hf"), else the folder of a downloaded repository's config.json, else the
// file's own name ("llama-2-7b.json"), else the architecture class, else model_type.
std::string hfModelName(const nlohmann::json& c, const std::string& origin, const std::string& type)
{
    if (auto it = c.find("_name_or_path"); it != c.end() && it->is_string() && !it->get<std::string>().empty())
        return it->get<std::string>();
    auto fallback = [&] {
        if (auto it = c.find("architectures"); it != c.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
            return (*it)[0].get<std::string>();
        return type.empty() ? std::string("Hugging Face model") : type;
    };
    std::string path = origin; // "model.hf_config(PATH)" or a path
    if (const auto open = path.find('('); open != std::string::npos && !path.empty() && path.back() == ')')
        path = path.substr(open + 1, path.size() - open - 2);
    const auto slash = path.find_last_of('/');
    const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
    if (file == "config.json") {
        if (slash == std::string::npos || slash == 0)
            return fallback();
        const auto prev = path.find_last_of('/', slash - 1);
        std::string dir =
            path.substr(prev == std::string::npos ? 0 : prev + 1, slash - (prev == std::string::npos ? 0 : prev + 1));
        if (!dir.empty() && dir != "." && dir != "..")
            return dir;
    } else if (file.size() > 5 && file.substr(file.size() - 5) == ".json") {
        return file.substr(0, file.size() - 5);
    }
    return fallback();
}

} // namespace

namespace {

constexpr const char* kHfFamilies =
    "llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, olmo, olmo2, olmoe, granitemoe, phi3, gemma2, "
    "gemma3 (text), llama4 (text), gpt_oss, deepseek_v2, deepseek_v3, dbrx, gpt2, gpt_neox "
    "(or describe the model with kind: \"transformer\": layers, d_model, heads, kv_heads, ffn, vocab, moe)";

// The mixture-of-experts fields of the HF families (transformers' configuration_*.py):
//   mixtral  num_local_experts, num_experts_per_tok; experts of intermediate_size; every layer
//   qwen2_moe, qwen3_moe  num_experts, num_experts_per_tok, moe_intermediate_size; layer i is MoE iff
//            i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0; qwen2_moe adds one shared
//            expert of shared_expert_intermediate_size with a sigmoid gate (shared_expert_gate: h -> 1)
//   olmoe    num_experts, num_experts_per_tok; experts of intermediate_size; every layer
//   granitemoe  num_local_experts, num_experts_per_tok; experts of intermediate_size (input_linear 2·I·h,
//            output_linear I·h); every layer
void readHfMoe(const nlohmann::json& c, const std::string& type, const std::string& origin, Errors& errors,
               TransformerShape& s)
{
    auto& m = s.moe;
    if (type == "mixtral" || type == "olmoe" || type == "granitemoe") {
        m.experts = hfInt(c, {type == "olmoe" ? "num_experts" : "num_local_experts"}, origin, errors, true, 0, 65536);
        m.topK = hfInt(c, {"num_experts_per_tok"}, origin, errors, true, 0, 65536);
        m.expertFfn = s.ffn;
        return;
    }
    if (type != "qwen2_moe" && type != "qwen3_moe")
        return;
    m.experts = hfInt(c, {"num_experts"}, origin, errors, true, 0, 65536);
    m.topK = hfInt(c, {"num_experts_per_tok"}, origin, errors, true, 0, 65536);
    m.expertFfn = hfInt(c, {"moe_intermediate_size"}, origin, errors, true, 0, 1LL << 24);
    if (type == "qwen2_moe") {
        m.sharedExpertFfn = hfInt(c, {"shared_expert_intermediate_size"}, origin, errors, false, 0, 1LL << 24);
        m.sharedExperts = m.sharedExpertFfn > 0 ? 1 : 0;
        m.sharedExpertGate = m.sharedExperts > 0;
    }
    const std::int64_t step = hfInt(c, {"decoder_sparse_step"}, origin, errors, false, 1, 100000);
    std::vector<std::int64_t> dense;
    if (auto it = c.find("mlp_only_layers"); it != c.end() && it->is_array())
        for (const auto& x : *it)
            if (x.is_number_integer())
                dense.push_back(x.get<std::int64_t>());
    if (!dense.empty() && s.layers > 0) {
        m.moeLayers.assign(std::size_t(s.layers), 0);
        for (std::int64_t i = 0; i < s.layers; ++i)
            m.moeLayers[std::size_t(i)] =
                (std::find(dense.begin(), dense.end(), i) == dense.end() && (i + 1) % step == 0) ? 1 : 0;
    } else {
        m.layerFreq = step;
        m.layerOffset = 0;
    }
}

// The per-layer list HF writes as layer_types ("sliding_attention" / "full_attention"), or the
// family's fixed pattern when the config predates the field: sliding iff the predicate holds.
template <typename Pred>
void hfSlidingLayers(const nlohmann::json& c, TransformerShape& s, Pred sliding)
{
    s.slidingLayers.assign(std::size_t(std::max<std::int64_t>(0, s.layers)), 0);
    const auto it = c.find("layer_types");
    const bool listed = it != c.end() && it->is_array() && std::int64_t(it->size()) == s.layers;
    for (std::int64_t i = 0; i < s.layers; ++i)
        s.slidingLayers[std::size_t(i)] = (listed ? (*it)[std::size_t(i)] == "sliding_attention" : sliding(i)) ? 1 : 0;
}

// The fields every Llama-like family names the same way.
void readHfCommon(const nlohmann::json& c, const std::string& origin, Errors& errors, TransformerShape& s)
{
    s.dModel = hfInt(c, {"hidden_size"}, origin, errors, true, 0, 1LL << 24);
    s.layers = hfInt(c, {"num_hidden_layers"}, origin, errors, true, 0, 100000);
    s.heads = hfInt(c, {"num_attention_heads"}, origin, errors, true, 0, 65536);
    s.kvHeads = hfInt(c, {"num_key_value_heads"}, origin, errors, false, s.heads);
    s.ffn = hfInt(c, {"intermediate_size"}, origin, errors);
    s.vocab = hfInt(c, {"vocab_size"}, origin, errors);
    s.maxPositions = hfInt(c, {"max_position_embeddings"}, origin, errors, false, 4096);
    s.ffnKind = FfnKind::Swiglu;
    s.norm = NormKind::RmsNorm;
    s.positions = PositionKind::Rotary;
    s.biases = hfBool(c, "attention_bias", false) ? BiasKind::Attention : BiasKind::None;
}

bool readGemma(const nlohmann::json& c, const std::string& type, const std::string& origin, Errors& errors,
               TransformerShape& s)
{
    readHfCommon(c, origin, errors, s);
    s.ffnKind = FfnKind::Geglu; // gelu_pytorch_tanh(gate) * up
    s.sandwichNorm = true;
    s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", true);
    s.slidingWindow = hfInt(c, {"sliding_window"}, origin, errors, false, 0, 1LL << 26);
    if (type == "gemma2") {
        hfSlidingLayers(c, s, [](std::int64_t i) { return i % 2 == 0; });
    } else {
        s.qkNorm = QkNorm::Head;
        const std::int64_t pattern = hfInt(c, {"sliding_window_pattern"}, origin, errors, false, 6, 100000);
        hfSlidingLayers(c, s, [pattern](std::int64_t i) { return (i + 1) % pattern != 0; });
    }
    return true;
}

// The families of 2024-2026 whose layers differ from Llama's (transformers' modeling_*.py):
//   gemma2, gemma3_text  GeGLU, pre and post norms around attention and MLP, tied embeddings,
//       head_dim from the config; Gemma 2 slides on even layers (window 4096), Gemma 3 on all but every
//       sliding_window_pattern-th (default 6) and adds per-head q/k norms
//   llama4_text  routed experts of intermediate_size plus one shared expert of the same width on the
//       MoE layers (interleave_moe_layer_step, or moe_layers), dense layers of intermediate_size_mlp;
//       its q/k L2 norm has no weights; attention_chunk_size
//   gpt_oss  q, k, v and o biases, a sink logit per head, experts with biases (gate_up 2·I, down h)
//       and a biased router; sliding window on the layers layer_types names
//   deepseek_v2, deepseek_v3  MLA, n_routed_experts of moe_intermediate_size, n_shared_experts of
//       the same width, first_k_dense_replace dense layers of intermediate_size and MoE on
//       i % moe_layer_freq == 0 after them; V3: noaux_tc score-correction bias, num_nextn_predict_layers MTP
//   dbrx     d_model, n_heads, n_layers, attn_config.kv_n_heads, ffn_config (ffn_hidden_size,
//       moe_num_experts, moe_top_k); LayerNorm without bias; untied
bool readHfFamily2025(const nlohmann::json& c, const std::string& type, const std::string& origin, Errors& errors,
                      TransformerShape& s)
{
    auto common = [&] { readHfCommon(c, origin, errors, s); };
    if (type == "gemma2" || type == "gemma3_text") {
        nlohmann::json g = c;
        if (type == "gemma3_text" && !g.contains("vocab_size"))
            g["vocab_size"] = 262208; // Gemma3TextConfig's default: the released 4B-27B text_configs omit it
        return readGemma(g, type, origin, errors, s);
    }
    if (type == "llama4_text") {
        common();
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        s.ffn = hfInt(c, {"intermediate_size_mlp"}, origin, errors, false, s.ffn); // dense layers
        auto& m = s.moe;
        m.experts = hfInt(c, {"num_local_experts"}, origin, errors, true, 0, 65536);
        m.topK = hfInt(c, {"num_experts_per_tok"}, origin, errors, false, 1, 65536);
        m.expertFfn = hfInt(c, {"intermediate_size"}, origin, errors);
        m.sharedExperts = 1;
        m.layerFreq = hfInt(c, {"interleave_moe_layer_step"}, origin, errors, false, 1, 100000);
        if (auto it = c.find("moe_layers"); it != c.end() && it->is_array() && s.layers > 0) {
            m.moeLayers.assign(std::size_t(s.layers), 0);
            for (const auto& x : *it)
                if (x.is_number_integer() && x.get<std::int64_t>() >= 0 && x.get<std::int64_t>() < s.layers)
                    m.moeLayers[std::size_t(x.get<std::int64_t>())] = 1;
        }
        s.attentionChunk = hfInt(c, {"attention_chunk_size"}, origin, errors, false, 0, 1LL << 26);
        return true;
    }
    if (type == "gpt_oss") {
        common();
        s.biases = BiasKind::Attention; // GptOssAttention: q, k, v, o Linear(bias=True)
        s.attentionSinks = true;
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        auto& m = s.moe;
        m.experts = hfInt(c, {"num_local_experts"}, origin, errors, true, 0, 65536);
        m.topK = hfInt(c, {"num_experts_per_tok", "experts_per_token"}, origin, errors, true, 0, 65536);
        m.expertFfn = s.ffn;
        m.expertBias = true;
        m.routerBias = true;
        s.slidingWindow = hfInt(c, {"sliding_window"}, origin, errors, false, 0, 1LL << 26);
        hfSlidingLayers(c, s, [](std::int64_t i) { return i % 2 == 0; });
        return true;
    }
    if (type == "deepseek_v2" || type == "deepseek_v3") {
        common();
        s.biases = BiasKind::None;
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        s.attention = AttentionKind::Mla;
        auto& a = s.mla;
        a.qLoraRank = hfInt(c, {"q_lora_rank"}, origin, errors, false, 0, 1LL << 24); // null: no query compression
        a.kvLoraRank = hfInt(c, {"kv_lora_rank"}, origin, errors, true, 0, 1LL << 24);
        a.qkNopeHeadDim = hfInt(c, {"qk_nope_head_dim"}, origin, errors, true, 0, 65536);
        a.qkRopeHeadDim = hfInt(c, {"qk_rope_head_dim"}, origin, errors, true, 0, 65536);
        a.vHeadDim = hfInt(c, {"v_head_dim"}, origin, errors, true, 0, 65536);
        s.headDim = a.vHeadDim; // what each head hands the output projection
        auto& m = s.moe;
        m.experts = hfInt(c, {"n_routed_experts"}, origin, errors, true, 0, 65536);
        m.topK = hfInt(c, {"num_experts_per_tok"}, origin, errors, true, 0, 65536);
        m.expertFfn = hfInt(c, {"moe_intermediate_size"}, origin, errors, true, 0, 1LL << 24);
        m.sharedExperts = hfInt(c, {"n_shared_experts"}, origin, errors, false, 0, 65536);
        m.firstDenseLayers = hfInt(c, {"first_k_dense_replace"}, origin, errors, false, 0, 100000);
        m.layerFreq = hfInt(c, {"moe_layer_freq"}, origin, errors, false, 1, 100000);
        m.layerOffset = 1; // DeepSeek: i % moe_layer_freq == 0
        if (auto it = c.find("topk_method"); it != c.end() && *it == "noaux_tc")
            m.scoreCorrectionBias = true; // e_score_correction_bias
        if (type == "deepseek_v3")
            s.mtpLayers = hfInt(c, {"num_nextn_predict_layers"}, origin, errors, false, 0, 64);
        return true;
    }
    if (type == "dbrx") {
        s.dModel = hfInt(c, {"d_model"}, origin, errors, true, 0, 1LL << 24);
        s.layers = hfInt(c, {"n_layers"}, origin, errors, true, 0, 100000);
        s.heads = hfInt(c, {"n_heads"}, origin, errors, true, 0, 65536);
        s.vocab = hfInt(c, {"vocab_size"}, origin, errors);
        s.maxPositions = hfInt(c, {"max_seq_len"}, origin, errors, false, 4096);
        const auto attn = c.find("attn_config");
        const auto ffn = c.find("ffn_config");
        const nlohmann::json empty = nlohmann::json::object();
        const auto& ac = attn != c.end() && attn->is_object() ? *attn : empty;
        const auto& fc = ffn != c.end() && ffn->is_object() ? *ffn : empty;
        s.kvHeads = hfInt(ac, {"kv_n_heads"}, origin + ".attn_config", errors, false, s.heads);
        s.ffn = hfInt(fc, {"ffn_hidden_size"}, origin + ".ffn_config", errors);
        s.ffnKind = FfnKind::Swiglu;
        s.norm = NormKind::LayerNormNoBias;
        s.positions = PositionKind::Rotary;
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        auto& m = s.moe;
        m.experts = hfInt(fc, {"moe_num_experts"}, origin + ".ffn_config", errors, true, 0, 65536);
        m.topK = hfInt(fc, {"moe_top_k"}, origin + ".ffn_config", errors, true, 0, 65536);
        m.expertFfn = s.ffn;
        return true;
    }
    return false;
}
} // namespace

ModelSpec modelFromHfConfig(const nlohmann::json& c, const std::string& origin, Errors& errors)
{
    ModelSpec m;
    m.kind = ModelKind::Transformer;
    m.id = "hf";
    m.source = "Hugging Face config.json: " + origin;
    if (!c.is_object()) {
        errors.push_back({origin, shortDump(c), "a Hugging Face config.json must be a JSON object", "{...}"});
        return m;
    }
    std::string type;
    if (auto it = c.find("model_type"); it != c.end() && it->is_string())
        type = it->get<std::string>();
    // Multimodal Llama 4 and Gemma 3 configs hold the language model in text_config: Napkin counts
    // the text model (the vision tower is not trained here).
    if (type == "llama4" || type == "gemma3") {
        const auto tc = c.find("text_config");
        if (tc != c.end() && tc->is_object()) {
            nlohmann::json text = *tc;
            text["model_type"] = type + "_text";
            if (!text.contains("_name_or_path") && c.contains("_name_or_path"))
                text["_name_or_path"] = c["_name_or_path"];
            if (c.contains("tie_word_embeddings") && !text.contains("tie_word_embeddings"))
                text["tie_word_embeddings"] = c["tie_word_embeddings"];
            ModelSpec t = modelFromHfConfig(text, origin + ".text_config", errors);
            t.name = hfModelName(c, origin, type);
            t.source = "Hugging Face config.json: " + origin + " (text_config; the vision tower is not counted)";
            return t;
        }
    }
    m.name = hfModelName(c, origin, type);
    auto& s = m.shape;
    const std::size_t before = errors.size();
    if (type == "gpt2") {
        // transformers GPT2Config: n_embd, n_layer, n_head, n_inner (None = 4 n_embd), n_positions.
        s.dModel = hfInt(c, {"n_embd", "hidden_size"}, origin, errors, true, 0, 1LL << 24);
        s.layers = hfInt(c, {"n_layer", "num_hidden_layers"}, origin, errors, true, 0, 100000);
        s.heads = hfInt(c, {"n_head", "num_attention_heads"}, origin, errors, true, 0, 65536);
        s.kvHeads = s.heads;
        s.ffn = hfInt(c, {"n_inner"}, origin, errors, false, 4 * s.dModel);
        s.vocab = hfInt(c, {"vocab_size"}, origin, errors);
        s.maxPositions = hfInt(c, {"n_positions", "n_ctx"}, origin, errors);
        s.ffnKind = FfnKind::Gelu;
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", true);
        s.norm = NormKind::LayerNorm;
        s.biases = BiasKind::All;
        s.positions = PositionKind::Learned;
        s.dropout = true;
    } else if (type == "gpt_neox") {
        // GPTNeoXConfig: LayerNorm with bias, biased projections, rotary, untied embed_out.
        s.dModel = hfInt(c, {"hidden_size"}, origin, errors, true, 0, 1LL << 24);
        s.layers = hfInt(c, {"num_hidden_layers"}, origin, errors, true, 0, 100000);
        s.heads = hfInt(c, {"num_attention_heads"}, origin, errors, true, 0, 65536);
        s.kvHeads = s.heads;
        s.ffn = hfInt(c, {"intermediate_size"}, origin, errors);
        s.vocab = hfInt(c, {"vocab_size"}, origin, errors);
        s.maxPositions = hfInt(c, {"max_position_embeddings"}, origin, errors, false, 2048);
        s.ffnKind = FfnKind::Gelu;
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        s.norm = NormKind::LayerNorm;
        // GPTNeoX: attention_bias switches the attention projections' biases; the MLP's are always on.
        s.biases = hfBool(c, "attention_bias", true) ? BiasKind::All : BiasKind::Mlp;
        s.positions = PositionKind::Rotary;
    } else if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2" || type == "qwen2_moe" ||
               type == "qwen3" || type == "qwen3_moe" || type == "olmo" || type == "olmo2" || type == "olmoe" ||
               type == "phi3" || type == "granitemoe") {
        readHfCommon(c, origin, errors, s);
        s.tiedEmbeddings = hfBool(c, "tie_word_embeddings", false);
        s.norm = type == "olmo" ? NormKind::NonParametric : NormKind::RmsNorm;
        if (type == "qwen2" || type == "qwen2_moe")
            s.biases = BiasKind::Qkv; // Qwen2Attention: q/k/v Linear(bias=True), o_proj bias=False
        else
            // LlamaConfig.attention_bias (Qwen3, OLMoE the same): biases on q, k, v and o projections.
            s.biases = hfBool(c, "attention_bias", false) ? BiasKind::Attention : BiasKind::None;
        s.positions = PositionKind::Rotary;
        // Olmo2Attention / OlmoeAttention: q_norm, k_norm over the full projections; Qwen3Attention:
        // q_norm, k_norm = RMSNorm(head_dim), one weight shared by the heads.
        if (type == "olmo2" || type == "olmoe")
            s.qkNorm = QkNorm::Full;
        else if (type == "qwen3" || type == "qwen3_moe")
            s.qkNorm = QkNorm::Head;
        readHfMoe(c, type, origin, errors, s);
        if (type == "mistral") // Mistral 7B v0.1: sliding_window 4096 on every layer (null from v0.2)
            s.slidingWindow = hfInt(c, {"sliding_window"}, origin, errors, false, 0, 1LL << 26);
    } else if (readHfFamily2025(c, type, origin, errors, s)) {
    } else {
        errors.push_back({origin + ".model_type", type.empty() ? "" : "\"" + type + "\"",
                          type.empty() ? "missing required field" : "unsupported model family", kHfFamilies});
        return m;
    }
    if (errors.size() != before)
        return m;
    if (s.headDim == 0) // MLA sets its own (v_head_dim)
        s.headDim = hfInt(c, {"head_dim"}, origin, errors, false,
                          s.heads > 0 && s.dModel % s.heads == 0 ? s.dModel / s.heads : 0);
    if (s.headDim == 0)
        errors.push_back({origin + ".num_attention_heads", std::to_string(s.heads),
                          "does not divide hidden_size " + std::to_string(s.dModel) + " and no head_dim is given",
                          "a divisor of hidden_size"});
    else if (s.kvHeads > s.heads || s.heads % s.kvHeads != 0)
        errors.push_back({origin + ".num_key_value_heads", std::to_string(s.kvHeads),
                          "must divide num_attention_heads " + std::to_string(s.heads),
                          "a divisor of num_attention_heads"});
    return m;
}

} // namespace napkin::core
