// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace napkin::gpu {

double nowSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

struct Events {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    ~Events()
    {
        if (start)
            cudaEventDestroy(start);
        if (stop)
            cudaEventDestroy(stop);
    }
};

cudaError_t timeBatch(const std::function<cudaError_t()>& launch, cudaStream_t stream, Events& ev, int batch,
                      double& seconds)
{
    cudaError_t e = cudaEventRecord(ev.start, stream);
    for (int i = 0; e == cudaSuccess && i < batch; ++i)
        e = launch();
    if (e == cudaSuccess)
        e = cudaEventRecord(ev.stop, stream);
    if (e == cudaSuccess)
        e = cudaEventSynchronize(ev.stop);
    float ms = 0;
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, ev.start, ev.stop);
    seconds = ms * 1e-3;
    return e;
}

} // namespace

cudaError_t timeLaunches(const std::function<cudaError_t()>& launch, cudaStream_t stream, const TimingPlan& plan,
                         std::vector<double>& secondsPerLaunch)
{
    const double t0 = nowSeconds();
    Events ev;
    cudaError_t e = cudaEventCreate(&ev.start);
    if (e == cudaSuccess)
        e = cudaEventCreate(&ev.stop);
    for (int i = 0; e == cudaSuccess && i < plan.warmups; ++i)
        e = launch();
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    // One timed launch sizes the batch.
    double one = 0;
    if (e == cudaSuccess)
        e = timeBatch(launch, stream, ev, 1, one);
    if (e != cudaSuccess)
        return e;
    const int batch =
        one > 0 ? std::clamp(static_cast<int>(std::ceil(plan.minBatchSeconds / one)), 1, plan.maxBatch) : plan.maxBatch;
    for (int s = 0; s < plan.samples; ++s) {
        if (s >= plan.minSamples && nowSeconds() - t0 > plan.capSeconds)
            break;
        double t = 0;
        e = timeBatch(launch, stream, ev, batch, t);
        if (e != cudaSuccess)
            return e;
        secondsPerLaunch.push_back(t / batch);
    }
    return cudaSuccess;
}

} // namespace napkin::gpu
