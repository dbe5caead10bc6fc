// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "fit.h"

#include "estimate.h"

#include <cmath>

namespace napkin::core {

FitResult fit(const Scenario& sc)
{
    FitResult r;
    const Plan base = estimate(sc);
    r.statesBytesPerParam = base.memory.statesBytesPerParam;
    r.totalCapacity = double(sc.cluster.gpus) * sc.gpu->memoryBytes;
    r.statesOnlyMaxParams = r.statesBytesPerParam > 0 ? r.totalCapacity / r.statesBytesPerParam : 0;

    // Largest derived-shape model that fits with everything counted: memory grows with P, so
    // bisect on log P.
    Scenario probe = sc;
    auto fitsWith = [&](double params) {
        probe.model.kind = ModelKind::ParamsOnly;
        probe.model.givenParams = std::round(params);
        probe.model.shape = deriveShape(probe.model.givenParams);
        if (probe.training.checkpointEvery > probe.model.shape.layers)
            probe.training.checkpointEvery = 0;
        return estimate(probe).memory.fits;
    };
    if (sc.model.kind != ModelKind::Mlp) {
        double lo = 1e6, hi = std::max(2e6, r.statesOnlyMaxParams * 1.01);
        if (fitsWith(lo)) {
            for (int i = 0; i < 60 && hi / lo > 1.0001; ++i) {
                const double mid = std::sqrt(lo * hi);
                (fitsWith(mid) ? lo : hi) = mid;
            }
            r.withActivationsMaxParams = std::round(lo);
            r.withActivationsShape = deriveShape(r.withActivationsMaxParams);
        }
    }

    // Largest micro-batch: activations grow linearly with it.
    Scenario mb = sc;
    auto fitsBatch = [&](std::int64_t b) {
        mb.training.microBatch = b;
        mb.training.globalBatch = std::max(sc.training.globalBatch, b * std::max<std::int64_t>(1, sc.parallel.dp));
        const auto plan = estimate(mb);
        if (b == 1)
            r.memoryAtOne = plan.memory.total;
        return plan.memory.fits;
    };
    if (fitsBatch(1)) {
        std::int64_t lo = 1, hi = 2;
        while (hi <= (1LL << 30) && fitsBatch(hi)) {
            lo = hi;
            hi *= 2;
        }
        while (hi - lo > 1) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            (fitsBatch(mid) ? lo : hi) = mid;
        }
        r.maxMicroBatch = lo;
    }
    return r;
}

nlohmann::json fitToJson(const FitResult& r, const Scenario& sc)
{
    using nlohmann::json;
    json j;
    j["schema"] = "napkin.fit/1";
    j["states_only"] = {{"max_params", r.statesOnlyMaxParams},
                        {"bytes_per_param", r.statesBytesPerParam},
                        {"gpus", sc.cluster.gpus},
                        {"capacity_per_gpu", sc.gpu->memoryBytes},
                        {"formula", "gpus · capacity / bytes_per_param"},
                        {"source", "CS336 lecture 2: model states only, ideal sharding, no activations or overhead"}};
    json shape = nullptr;
    if (r.withActivationsMaxParams > 0) {
        const auto& s = r.withActivationsShape;
        shape = {{"layers", s.layers}, {"d_model", s.dModel}, {"heads", s.heads}, {"ffn", s.ffn}, {"vocab", s.vocab}};
    }
    j["with_activations"] = {
        {"max_params", r.withActivationsMaxParams},
        {"derived_shape", shape},
        {"zero", sc.parallel.zeroStage},
        {"seq_len", sc.training.seqLen},
        {"micro_batch", sc.training.microBatch},
        {"source", "largest derived-shape model whose full ledger fits (bisection on memory.fits)"}};
    j["max_micro_batch"] = {{"value", r.maxMicroBatch},
                            {"fits_at_one", r.maxMicroBatch >= 1},
                            {"memory_at_one", r.memoryAtOne},
                            {"model", sc.model.name},
                            {"source", "largest micro-batch whose full ledger fits (activations grow linearly)"}};
    return j;
}

} // namespace napkin::core
