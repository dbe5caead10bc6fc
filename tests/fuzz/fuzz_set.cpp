// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: napkin-cli's --set PATH=VALUE overrides, one per input line.
#include "fuzz_common.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace napkin;
    std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json doc = core::defaultScenarioJson();
    core::Errors errors;
    std::istringstream lines(text);
    int n = 0;
    for (std::string line; std::getline(lines, line) && n < 16; ++n)
        core::applySet(doc, line, errors);
    if (!errors.empty()) {
        for (const auto& e : errors)
            fuzz::require(core::describe(e).find('\n') == std::string::npos, "--set error spans lines");
        return 0;
    }
    fuzz::evaluate(doc);
    return 0;
}
