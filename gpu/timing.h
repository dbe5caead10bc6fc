// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// CUDA-event timing of batches of launches (probe-methods.md section 2: warm-ups, then events around
// back-to-back launches long enough to dwarf launch overhead, several samples).

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

namespace napkin::gpu {

struct TimingPlan {
    int warmups = 3;
    int samples = 7; // wanted; fewer when capSeconds runs out (at least minSamples)
    int minSamples = 3;
    double minBatchSeconds = 0.005; // each sample times enough launches to last this long
    double capSeconds = 1.0;        // timing of this measurement stops after this much wall time
    int maxBatch = 1000;
};

/** Runs `launch` (which enqueues one launch on `stream` and returns its launch status) as the plan says
 *  and appends the seconds per launch of each sample to `secondsPerLaunch`. */
cudaError_t timeLaunches(const std::function<cudaError_t()>& launch, cudaStream_t stream, const TimingPlan& plan,
                         std::vector<double>& secondsPerLaunch);

/** Wall-clock seconds since an arbitrary start (steady clock). */
double nowSeconds();

} // namespace napkin::gpu
