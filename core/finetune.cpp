// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "finetune.h"

namespace napkin::core {

double nf4BytesPerValue(bool doubleQuant)
{
    // QLoRA §3 (Dettmers et al. 2023): 4-bit NormalFloat values, one absmax per block of 64; double
    // quantisation stores each absmax as FP8 (1 byte) with one fp32 constant per 256 blocks.
    return doubleQuant ? 0.5 + 1.0 / 64 + 4.0 / (64.0 * 256.0) : 0.5 + 4.0 / 64;
}

std::vector<BlockLinear> blockLinears(const TransformerShape& s)
{
    const double h = double(s.dModel), qd = double(s.heads) * double(s.headDim),
                 kvd = double(s.kvHeads) * double(s.headDim), f = double(s.ffn);
    std::vector<BlockLinear> out{
        {kLoraQ, "q_proj", h, qd}, {kLoraK, "k_proj", h, kvd}, {kLoraV, "v_proj", h, kvd}, {kLoraO, "o_proj", qd, h}};
    if (isGated(s.ffnKind))
        out.push_back({kLoraGate, "gate_proj", h, f});
    out.push_back({kLoraUp, "up_proj", h, f});
    out.push_back({kLoraDown, "down_proj", f, h});
    return out;
}

double smallTensorParams(const TransformerShape& s)
{
    double perLayer = 0;
    auto vec = [&](double n, double count = 1) {
        if (n > 0 && n < kInt8MinTensorElements)
            perLayer += n * count;
    };
    const double h = double(s.dModel), qd = double(s.heads) * double(s.headDim),
                 kvd = double(s.kvHeads) * double(s.headDim), f = double(s.ffn);
    const double norms = s.sandwichNorm ? 4 : 2;
    const double vectorsPerNorm = s.norm == NormKind::LayerNorm ? 2 : (s.norm == NormKind::NonParametric ? 0 : 1);
    vec(h, norms * vectorsPerNorm);
    if (s.qkNorm == QkNorm::Full)
        vec(qd), vec(kvd);
    else if (s.qkNorm == QkNorm::Head)
        vec(double(s.headDim), 2);
    const bool qkvBias = s.biases == BiasKind::All || s.biases == BiasKind::Qkv || s.biases == BiasKind::Attention;
    if (qkvBias)
        vec(qd), vec(kvd, 2);
    if (s.biases == BiasKind::All || s.biases == BiasKind::Attention)
        vec(h);
    if (s.biases == BiasKind::All || s.biases == BiasKind::Mlp) {
        vec(f, isGated(s.ffnKind) ? 2 : 1);
        vec(h);
    }
    double total = perLayer * double(s.layers);
    if (vectorsPerNorm > 0 && h < kInt8MinTensorElements)
        total += h * vectorsPerNorm; // the final norm
    return total;
}

FinetuneCounts finetuneCounts(const TransformerShape& shape, const ParamCounts& params, const FinetuneConfig& cfg,
                              double weightBytes, const char* weightName)
{
    FinetuneCounts c;
    c.method = toString(cfg.method);
    const double all = params.total + params.mtp;
    if (!cfg.peft()) {
        c.trainable = all;
        c.smallTensorParams = smallTensorParams(shape);
        return c;
    }
    c.baseDtype = toString(cfg.base, cfg.doubleQuant);
    c.loraRank = double(cfg.loraRank);
    c.targets = cfg.targets;
    const double r = double(cfg.loraRank), L = double(shape.layers);
    double quantised = 0, rows = 0, small = 0;
    for (const auto& lin : blockLinears(shape)) {
        quantised += lin.in * lin.out;
        rows += lin.out;
        if (!(cfg.targets & lin.target))
            continue;
        // LoRA (Hu et al. 2021 §4.1): W + B A with A of r x in and B of out x r (PEFT lora_A, lora_B).
        c.adaptersPerLayer += r * (lin.in + lin.out);
        c.targetInputs += lin.in;
        c.targetCount += 1;
        for (const double n : {r * lin.in, r * lin.out})
            small += n < kInt8MinTensorElements ? n : 0;
    }
    c.adapters = c.adaptersPerLayer * L;
    c.adapterTensors = 2 * c.targetCount * L;
    c.trainable = c.adapters;
    c.frozen = all;
    c.smallTensorParams = small * L;
    c.loraForwardPerToken = 2 * c.adapters;
    switch (cfg.base) {
    case BaseStorage::Weights:
        c.baseDtype = weightName;
        c.baseBytesPerValue = weightBytes;
        break;
    case BaseStorage::Int8:
        c.quantised = quantised * L;
        c.quantisedRows = rows * L;
        // LLM.int8() (bitsandbytes Linear8bitLt): int8 weights and one fp32 scale (SCB) per output row.
        c.baseBytesPerValue = 1 + 4 * c.quantisedRows / c.quantised;
        break;
    case BaseStorage::Nf4:
        c.quantised = quantised * L;
        c.quantisedRows = rows * L;
        c.baseBytesPerValue = nf4BytesPerValue(cfg.doubleQuant);
        break;
    }
    return c;
}

const char* toString(FinetuneMethod m)
{
    switch (m) {
    case FinetuneMethod::Full: return "full";
    case FinetuneMethod::Lora: return "lora";
    case FinetuneMethod::Qlora: return "qlora";
    }
    return "full";
}

const char* toString(BaseStorage b, bool doubleQuant)
{
    switch (b) {
    case BaseStorage::Weights: return "weights";
    case BaseStorage::Int8: return "int8";
    case BaseStorage::Nf4: return doubleQuant ? "nf4 (double quantised)" : "nf4";
    }
    return "weights";
}

std::string loraTargetNames(std::uint8_t targets)
{
    static constexpr std::pair<std::uint8_t, const char*> kNames[] = {
        {kLoraQ, "q"},       {kLoraK, "k"},   {kLoraV, "v"},      {kLoraO, "o"},
        {kLoraGate, "gate"}, {kLoraUp, "up"}, {kLoraDown, "down"}};
    std::string out;
    for (const auto& [bit, name] : kNames)
        if (targets & bit)
            out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

} // namespace napkin::core
