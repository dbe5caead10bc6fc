// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "dtypeexplain.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace napkin::core {

namespace {
std::string bits(std::uint64_t v, int width)
{
    std::string s(std::size_t(width), '0');
    for (int i = 0; i < width; ++i)
        if (v & (std::uint64_t(1) << (width - 1 - i)))
            s[std::size_t(i)] = '1';
    return s;
}
} // namespace

StoredValue storeValue(DType t, double x)
{
    const auto& f = info(t);
    StoredValue v;
    v.type = t;
    v.input = x;
    v.stored = roundToFormat(t, x);
    const int minExp = 1 - f.exponentBias;
    v.maxFinite = f.maxFinite;
    v.minNormal = std::ldexp(1.0, minExp);
    v.minSubnormal = std::ldexp(1.0, minExp - f.mantissaBits);
    v.signBits = std::signbit(v.stored) ? "1" : "0";
    const double a = std::fabs(v.stored);
    const int expAllOnes = (1 << f.exponentBits) - 1;
    std::uint64_t expField = 0, mant = 0;
    if (std::isinf(a)) {
        expField = std::uint64_t(expAllOnes);
        v.overflow = true;
    } else if (a > 0) {
        int e = std::ilogb(a);
        if (e < minExp) {
            v.subnormal = true;
            mant = std::uint64_t(std::llround(a / v.minSubnormal));
        } else {
            const int biased = e + f.exponentBias; // >= 1: a normal number
            expField = std::uint64_t(biased);
            mant = std::uint64_t(std::llround((a / std::ldexp(1.0, e) - 1.0) * std::ldexp(1.0, f.mantissaBits)));
        }
    }
    v.exponentBits = bits(expField, f.exponentBits);
    v.mantissaBits = bits(mant, f.mantissaBits);
    v.relativeError = x != 0 && std::isfinite(v.stored) ? std::fabs(v.stored - x) / std::fabs(x) : 0.0;
    const int e = a > 0 && std::isfinite(a) ? std::max(std::ilogb(a), minExp) : minExp;
    v.spacing = std::ldexp(1.0, e - f.mantissaBits);
    v.underflow = x != 0 && v.stored == 0;
    if (!f.hasInfinity && std::fabs(x) > f.maxFinite)
        v.overflow = true;
    if (f.blockSize > 0)
        v.note = "element value with a block scale of 1; the block holds " + std::to_string(f.blockSize) +
                 " values sharing one scale";
    return v;
}

std::vector<StoredValue> storeInAll(double x)
{
    std::vector<StoredValue> out;
    for (DType t : {DType::Fp32, DType::Fp16, DType::Bf16, DType::Fp8E4m3, DType::Fp8E5m2, DType::Nvfp4, DType::Mxfp4})
        out.push_back(storeValue(t, x));
    return out;
}

nlohmann::json toJson(const StoredValue& v)
{
    const auto& f = info(v.type);
    auto num = [](double d) { return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(d > 0 ? "inf" : "-inf"); };
    return {{"dtype", f.id},
            {"input", v.input},
            {"stored", num(v.stored)},
            {"bits", {{"sign", v.signBits}, {"exponent", v.exponentBits}, {"mantissa", v.mantissaBits}}},
            {"layout",
             std::to_string(f.signBits) + "+" + std::to_string(f.exponentBits) + "+" + std::to_string(f.mantissaBits)},
            {"relative_error", v.relativeError},
            {"spacing", v.spacing},
            {"range", {{"max", v.maxFinite}, {"min_normal", v.minNormal}, {"min_subnormal", v.minSubnormal}}},
            {"underflow", v.underflow},
            {"overflow", v.overflow},
            {"subnormal", v.subnormal},
            {"bytes_per_value", bytesPerValue(v.type)},
            {"note", v.note},
            {"source", f.source}};
}

} // namespace napkin::core
