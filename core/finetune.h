// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Parameter-efficient fine-tuning (the scenario's finetune section) and the quantised storage formats
// it and the 8-bit optimizers use: which parameters train, which stay frozen and in what format, and
// what the adapters add. Formulas and sources: LoRA (Hu et al. 2021, arXiv 2106.09685), QLoRA
// (Dettmers et al. 2023, arXiv 2305.14314), LLM.int8() (Dettmers et al. 2022, arXiv 2208.07339),
// 8-bit optimizers (Dettmers et al. 2022, arXiv 2110.02861), Hugging Face PEFT and bitsandbytes.

#include "model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace napkin::core {

// finetune.method: every parameter trains (full), or the base is frozen and low-rank adapters train
// (LoRA), or the frozen base is stored quantised as well (QLoRA).
enum class FinetuneMethod { Full, Lora, Qlora };

// finetune.base_dtype: how the frozen base's linear layers are stored. Weights: the precision plan's
// weight dtype (bf16 in every plan LoRA runs with); Int8: LLM.int8() (bitsandbytes Linear8bitLt: one
// int8 per value and one fp32 scale per output row); Nf4: 4-bit NormalFloat in blocks of 64 with one
// absmax each (bitsandbytes Linear4bit), the absmaxes 8-bit quantised in blocks of 256 with one fp32
// scale each when double quantisation is on (QLoRA §3).
enum class BaseStorage { Weights, Int8, Nf4 };

// finetune.lora_targets: the linear layers of each block that get an adapter (PEFT target_modules,
// Llama's names; a GELU MLP's two matrices are up and down).
enum LoraTarget : std::uint8_t {
    kLoraQ = 1u << 0,
    kLoraK = 1u << 1,
    kLoraV = 1u << 2,
    kLoraO = 1u << 3,
    kLoraGate = 1u << 4,
    kLoraUp = 1u << 5,
    kLoraDown = 1u << 6
};
inline constexpr std::uint8_t kLoraAllTargets = 0x7f;

struct FinetuneConfig {
    FinetuneMethod method = FinetuneMethod::Full;
    std::int64_t loraRank = 16;
    std::uint8_t targets = kLoraAllTargets;  // resolved: "all-linear" is every linear layer the block has
    bool allLinear = true;                   // lora_targets was "all-linear"
    BaseStorage base = BaseStorage::Weights; // resolved: "auto" is nf4 for QLoRA, the weight dtype otherwise
    bool doubleQuant = true;                 // nf4 only: QLoRA's double quantisation of the block scales
    double loraDropout = 0;                  // PEFT LoraConfig.lora_dropout (0: nn.Identity, nothing saved)
    bool peft() const { return method != FinetuneMethod::Full; }
};

// optimizer.paged (bitsandbytes paged optimizers, QLoRA §3): the states live in CUDA unified memory
// and page to the host when the GPU runs out. Resolved: "auto" is on for QLoRA.
struct PagedOptimizer {
    bool on = false;
    bool automatic = true;
};

// Bytes per value of the quantised formats (amortised scale metadata included).
// NF4: 4 bits + one absmax per 64 values; double quantisation stores that absmax in 8 bits with one
// fp32 scale per 256 blocks: 0.5 + 1/64 + 4/16384 = 0.5159 (QLoRA §3: 0.127 bits of constants per
// parameter instead of 0.5); without it an fp32 absmax per 64: 0.5 + 4/64.
double nf4BytesPerValue(bool doubleQuant);
// bitsandbytes blockwise 8-bit optimizer states (Dettmers et al. 2022, 8-bit Optimizers via Block-wise
// Quantization §2): one byte per value and one fp32 absmax per block of 2,048.
inline constexpr double kInt8BlockwiseBytes = 1.0 + 4.0 / 2048.0;
// bitsandbytes keeps the states of tensors with fewer than min_8bit_size = 4,096 elements in fp32
// (bitsandbytes/optim/optimizer.py Optimizer8bit, args.min_8bit_size).
inline constexpr double kInt8MinTensorElements = 4096;

// One linear layer of a block: its PEFT name and (in, out) features per layer.
struct BlockLinear {
    LoraTarget target;
    const char* name; // "q_proj" ... as PEFT prints them
    double in = 0, out = 0;
};
// The linear layers of a dense decoder block (q, k, v, o; gate, up, down or up, down), Llama layout.
std::vector<BlockLinear> blockLinears(const TransformerShape& shape);

// What a fine-tuning method trains and stores, for the whole model (estimate() splits it over stages).
struct FinetuneCounts {
    const char* method = "full";
    const char* baseDtype = ""; // storage of the frozen base's linear weights ("" for full)
    double trainable = 0;       // parameters with gradients and optimizer states
    double frozen = 0;          // parameters without (the base under LoRA / QLoRA)
    double adapters = 0;        // LoRA A and B, all layers (0 for full)
    double adaptersPerLayer = 0;
    double adapterTensors = 0;      // LoRA A and B matrices, all layers
    double quantised = 0;           // frozen linear-layer weights stored in the base format
    double quantisedRows = 0;       // their output rows (LLM.int8()'s row scales)
    double baseBytesPerValue = 0;   // bytes per quantised weight, scales amortised
    double loraForwardPerToken = 0; // forward FLOPs of every adapter per token: 2 · r · (in + out) summed
    double smallTensorParams = 0;   // trainable parameters in tensors under 4,096 elements (8-bit states stay fp32)
    double targetInputs = 0;        // input features of the targeted linears per layer (dropout's saved tensors)
    double targetCount = 0;         // targeted linears per layer
    double loraRank = 0;            // as configured (0 for full)
    std::uint8_t targets = 0;       // resolved targets (0 for full)
    bool pagedOptimizer = false;    // optimizer.paged, resolved
    bool int8States = false;        // precision.optimizer int8_blockwise
};

// Counts for a transformer spec under the config. Full fine-tuning trains params (total + MTP).
// weightBytes and weightName: the precision plan's weight dtype (the base's storage when not quantised).
FinetuneCounts finetuneCounts(const TransformerShape& shape, const ParamCounts& params, const FinetuneConfig& cfg,
                              double weightBytes, const char* weightName);

// Parameters in tensors of fewer than 4,096 elements (norm weights, biases) among all of a model's
// parameters: bitsandbytes keeps their optimizer states in fp32.
double smallTensorParams(const TransformerShape& shape);

const char* toString(FinetuneMethod m);
const char* toString(BaseStorage b, bool doubleQuant);
std::string loraTargetNames(std::uint8_t targets); // "q, k, v, o"

} // namespace napkin::core
