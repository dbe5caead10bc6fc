// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the GPU, model and precision-plan catalogue loaders.
#include "fuzz_common.h"

#include "catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace napkin;
    if (size == 0)
        return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    core::Errors errors;
    switch (data[0] % 3) {
    case 0: {
        const auto gpus = core::loadGpus(text, errors);
        if (errors.empty())
            for (const auto& g : gpus)
                fuzz::require(g.memoryBytes > 0 && g.bandwidthBytesPerSecond > 0,
                              "accepted a GPU without memory or bandwidth");
        break;
    }
    case 1: {
        const auto models = core::loadModels(text, errors);
        if (errors.empty())
            for (const auto& m : models)
                fuzz::require(std::isfinite(core::countParams(m).total), "model count not finite");
        break;
    }
    default: core::loadPlans(text, errors);
    }
    for (const auto& e : errors)
        fuzz::require(!e.field.empty() || !e.why.empty(), "error without field or reason");
    return 0;
}
