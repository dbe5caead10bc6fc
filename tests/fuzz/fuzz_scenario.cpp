// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: a scenario file as napkin-cli and the app read it.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace napkin;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    core::Errors errors;
    const auto doc = core::parseScenarioText(text, "fuzz.json", errors);
    if (!doc) {
        fuzz::require(!errors.empty(), "rejected without an error");
        return 0;
    }
    fuzz::evaluate(*doc, /*withFit=*/size % 8 == 0);
    return 0;
}
