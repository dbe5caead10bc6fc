// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: typed numbers ("7B", "15T", "2e12", "4k", "1,024").
#include "jsonreader.h"

#include <cmath>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (const auto v = napkin::core::parseQuantity(text); v && !std::isfinite(*v))
        std::abort(); // a quantity is finite or refused
    return 0;
}
