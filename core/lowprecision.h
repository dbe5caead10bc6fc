// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// FP8 / FP4 training recipes as frameworks run them (precision.recipe, precision.low_precision_gemms):
// which GEMMs run in the low-precision format (Transformer Engine's Linear layers: QKV, attention
// output, MLP; the output layer and attention itself stay in BF16), the quantise kernels each needs,
// and the FP8 weight copies Transformer Engine keeps through a step.

#include <cstdint>
#include <string>

namespace napkin::core {

struct Scenario;
struct Plan;

// precision.recipe. Delayed: per-tensor scales from an amax history (Transformer Engine
// DelayedScaling, its default). Current: per-tensor scales from the tensor being cast (TE
// Float8CurrentScaling; Megatron-Bridge "fp8_cs"). Blockwise: 1 x 128 activation tiles and 128 x 128
// weight blocks with fp32 scales (DeepSeek-V3 §3.3.2; TE Float8BlockScaling). Mxfp8: 32-value blocks
// with E8M0 scales (OCP MX v1.0; Blackwell tensor cores). Nvfp4: E2M1 values, an E4M3 scale per 16 and
// an fp32 per tensor (NVIDIA NVFP4 training, arXiv 2509.25149).
enum class LowPrecisionRecipe { None, Delayed, Current, Blockwise, Mxfp8, Nvfp4 };

// The GEMM classes a recipe may run in low precision (precision.low_precision_gemms).
enum : std::uint8_t {
    kLowQkv = 1u << 0,      // the QKV projection
    kLowOut = 1u << 1,      // the attention output projection
    kLowMlp = 1u << 2,      // the MLP (and experts) GEMMs
    kLowHead = 1u << 3,     // the output layer (vocabulary)
    kLowAttention = 1u << 4 // the attention core (FP8 dot-product attention)
};
inline constexpr std::uint8_t kLowDefault = kLowQkv | kLowOut | kLowMlp;

struct RecipeInfo {
    LowPrecisionRecipe recipe;
    const char* id;
    double elementBytes;     // bytes per quantised value
    double activationScales; // scale bytes per activation / gradient value
    double weightScales;     // scale bytes per weight value
    double copies;           // quantised copies per tensor: rowwise and columnwise (the transpose) for the backward
    bool amaxPass;           // an extra read of the input for its amax before the cast
    double launches;         // kernels per quantised tensor (Transformer Engine's quantize path)
    bool groupedInOne;       // a grouped GEMM's per-expert splits quantised in one launch
    const char* source;
};
const RecipeInfo& recipeInfo(LowPrecisionRecipe r);
const char* toString(LowPrecisionRecipe r);
std::string lowPrecisionGemmNames(std::uint8_t gemms); // "qkv, out, mlp"

// After the layer's ops are listed (estimate_roofline.cpp): the tensor ops the recipe keeps in 16 bits
// are marked highPrecision and placed under the 16-bit ceiling; the quantise kernels are appended.
void applyLowPrecisionRecipe(const Scenario& sc, Plan& p);

// Transformer Engine's FP8 weight copies (rowwise and columnwise, with their scales) of the rank's
// low-precision GEMM weights, kept from the first micro-batch's forward to the end of the step
// (Megatron-Core passes is_first_microbatch so the cast runs once per step). 0 without a recipe or
// outside Megatron.
double lowPrecisionWeightCacheBytes(const Scenario& sc, double gemmParamsOnRank);

// Transformer Engine's amax all-reduces over the tensor-parallel group, per layer and micro-batch
// (averaged over a stack of dense and MoE layers): under sequence parallelism a per-tensor scaling
// recipe (current scaling, NVFP4) reduces the amax of each column-parallel GEMM's input before the
// all-gather (forward) and of each row-parallel GEMM's output gradient (backward). Each is a 4-byte
// NCCL all-reduce the compute stream waits for. 0 outside Megatron, without SP or TP, or for recipes
// that scale per block or from a history. Sources in core/lowprecision.cpp.
struct AmaxReductions {
    double forward = 0;  // per layer: QKV input, MLP FC1 input (dense MLP or shared experts)
    double backward = 0; // per layer: attention output and MLP FC2 output gradients
};
AmaxReductions tensorParallelAmaxReductions(const Scenario& sc);

} // namespace napkin::core
