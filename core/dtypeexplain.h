// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How a number format stores a value: the rounded value, its bit fields, the error, the range and
// the spacing near it (the dtype explorer; CS336 lecture 2's float formats).

#include "dtype.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace napkin::core {

struct StoredValue {
    DType type;
    double input = 0;
    double stored = 0;        // nearest representable value (RNE; saturation or infinity per format)
    std::string signBits;     // "0"
    std::string exponentBits; // "01111"
    std::string mantissaBits; // "0000000000"
    double relativeError = 0; // |stored - input| / |input| (0 for input 0)
    double spacing = 0;       // distance to the next representable magnitude near the value
    double maxFinite = 0;
    double minNormal = 0;
    double minSubnormal = 0;
    bool underflow = false; // a non-zero input stored as zero
    bool overflow = false;  // stored as infinity or saturated at the maximum
    bool subnormal = false;
    std::string note; // block formats: the element with a unit scale
};

StoredValue storeValue(DType t, double x);

// The formats the explorer shows: fp32, fp16, bf16, fp8 e4m3, fp8 e5m2, nvfp4, mxfp4.
std::vector<StoredValue> storeInAll(double x);
nlohmann::json toJson(const StoredValue& v);

} // namespace napkin::core
