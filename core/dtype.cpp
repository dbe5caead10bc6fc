// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "dtype.h"

#include <array>
#include <cmath>
#include <limits>

namespace napkin::core {

namespace {
constexpr double inf = std::numeric_limits<double>::infinity();
// Bit layouts: IEEE 754 (fp32, fp16), Google Brain bfloat16, Micikevicius et al. 2022 (FP8 E4M3
// max 448, E5M2 max 57344), OCP Microscaling Formats v1.0 (MXFP8, MXFP4 with E8M0 scales per 32),
// NVIDIA "Introducing NVFP4" (E2M1 values, E4M3 scale per 16 values, fp32 per-tensor scale).
constexpr std::array<DTypeInfo, 9> kInfos{{
    {DType::Fp32, "fp32", 1, 8, 23, 127, 4.0, 0, 0.0, 0.0, true, true, 3.4028234663852886e38, PeakColumn::Fp32,
     "IEEE 754 binary32"},
    {DType::Tf32, "tf32", 1, 8, 10, 127, 4.0, 0, 0.0, 0.0, false, true, 3.4028234663852886e38, PeakColumn::Tf32,
     "NVIDIA A100 whitepaper: TF32 is a tensor-core math mode on fp32 storage"},
    {DType::Fp16, "fp16", 1, 5, 10, 15, 2.0, 0, 0.0, 0.0, true, true, 65504.0, PeakColumn::Fp16, "IEEE 754 binary16"},
    {DType::Bf16, "bf16", 1, 8, 7, 127, 2.0, 0, 0.0, 0.0, true, true, 3.3895313892515355e38, PeakColumn::Bf16,
     "bfloat16 (Google Brain); CS336 lecture 2"},
    {DType::Fp8E4m3, "fp8_e4m3", 1, 4, 3, 7, 1.0, 0, 0.0, 0.0, true, false, 448.0, PeakColumn::Fp8,
     "Micikevicius et al. 2022, FP8 Formats for Deep Learning (E4M3, max 448)"},
    {DType::Fp8E5m2, "fp8_e5m2", 1, 5, 2, 15, 1.0, 0, 0.0, 0.0, true, true, 57344.0, PeakColumn::Fp8,
     "Micikevicius et al. 2022, FP8 Formats for Deep Learning (E5M2, max 57344)"},
    {DType::Mxfp8, "mxfp8", 1, 4, 3, 7, 1.0, 32, 1.0, 0.0, true, false, 448.0, PeakColumn::Fp8,
     "OCP Microscaling Formats v1.0: E4M3 elements, one E8M0 scale per 32"},
    {DType::Nvfp4, "nvfp4", 1, 2, 1, 1, 0.5, 16, 1.0, 4.0, true, false, 6.0, PeakColumn::Fp4,
     "NVIDIA, Introducing NVFP4: E2M1 values, one E4M3 scale per 16, one fp32 scale per tensor"},
    {DType::Mxfp4, "mxfp4", 1, 2, 1, 1, 0.5, 32, 1.0, 0.0, true, false, 6.0, PeakColumn::Fp4,
     "OCP Microscaling Formats v1.0: E2M1 elements, one E8M0 scale per 32"},
}};
} // namespace

const DTypeInfo& info(DType t) { return kInfos[static_cast<std::size_t>(t)]; }

std::optional<DType> parseDType(std::string_view id)
{
    for (const auto& i : kInfos)
        if (i.id == id)
            return i.type;
    return std::nullopt;
}

std::string_view dtypeList() { return "fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4, mxfp4"; }

double bytesPerValue(DType t)
{
    const auto& i = info(t);
    return i.blockSize > 0 ? i.elementBytes + i.blockScaleBytes / i.blockSize : i.elementBytes;
}

double roundToFormat(DType t, double x)
{
    const auto& f = info(t);
    if (std::isnan(x) || x == 0.0)
        return x;
    if (t == DType::Fp32)
        return static_cast<double>(static_cast<float>(x));
    const double sign = std::signbit(x) ? -1.0 : 1.0;
    const double a = std::fabs(x);
    if (std::isinf(a))
        return f.hasInfinity ? x : sign * f.maxFinite;
    const int minExp = 1 - f.exponentBias; // smallest normal exponent
    int e = std::ilogb(a);
    if (e < minExp)
        e = minExp; // subnormal range: fixed spacing
    const double quantum = std::ldexp(1.0, e - f.mantissaBits);
    double r = std::nearbyint(a / quantum) * quantum; // default rounding mode: nearest, ties to even
    if (r > f.maxFinite) {
        // IEEE formats overflow to infinity once past max + half a step; saturating formats clamp.
        const double halfStep = std::ldexp(1.0, std::ilogb(f.maxFinite) - f.mantissaBits - 1);
        if (f.hasInfinity)
            // NOLINTNEXTLINE(bugprone-narrowing-conversions): clang-tidy 14 takes +inf for out of range
            r = (a >= f.maxFinite + halfStep) ? inf : f.maxFinite;
        else
            r = f.maxFinite;
    }
    return sign * r;
}

} // namespace napkin::core
