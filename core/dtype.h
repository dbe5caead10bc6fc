// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Number formats: storage size (with block-scale metadata), bit layout, and rounding.

#include <optional>
#include <string_view>

namespace napkin::core {

enum class DType { Fp32, Tf32, Fp16, Bf16, Fp8E4m3, Fp8E5m2, Mxfp8, Nvfp4, Mxfp4 };

// Which dense-peak column of the GPU catalogue a compute dtype runs at.
enum class PeakColumn { Fp32, Tf32, Fp16, Bf16, Fp8, Fp4 };

struct DTypeInfo {
    DType type;
    std::string_view id; // scenario spelling: "bf16", "fp8_e4m3", ...
    int signBits;
    int exponentBits;
    int mantissaBits; // stored fraction bits
    int exponentBias;
    double elementBytes;        // bytes per value, without block scales
    int blockSize;              // values sharing one scale (0: no block scaling)
    double blockScaleBytes;     // bytes of each block scale (E4M3 for NVFP4, E8M0 for MX)
    double perTensorScaleBytes; // NVFP4's per-tensor fp32 scale
    bool storable;              // tf32 is a compute mode only
    bool hasInfinity;           // fp8 E4M3 and the fp4 formats saturate instead
    double maxFinite;
    PeakColumn peak;
    std::string_view source;
};

const DTypeInfo& info(DType t);
std::optional<DType> parseDType(std::string_view id);
std::string_view dtypeList(); // "fp32, tf32, fp16, ..." for error messages

// Bytes per stored value including the amortised block-scale metadata:
// NVFP4 = 0.5 + 1/16 (one E4M3 scale per 16 values), MXFP4 = 0.5 + 1/32, MXFP8 = 1 + 1/32.
double bytesPerValue(DType t);

// Rounds x to the nearest value of the element format (round to nearest even, subnormals,
// saturation for formats without infinity). Block formats round their element type (E2M1 or
// E4M3) with a unit scale.
double roundToFormat(DType t, double x);

} // namespace napkin::core
