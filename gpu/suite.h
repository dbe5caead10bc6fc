// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The per-device measurements of napkin-probe (docs/probe.md): each appends results, points or a
// skipped entry to a DeviceReport. Device-side failures come back as cudaError_t; the runner decides
// whether the device is still usable.

#include "gemm.h"
#include "profile.h"
#include "timing.h"

#include <cuda_runtime_api.h>

#include <string>

namespace napkin::gpu {

struct DeviceContext {
    int device = 0;
    int sms = 0;
    int grid = 0; // blocks of the grid-stride kernels: SMs x (max threads per SM / 256)
    double l2Bytes = 0;
    cudaStream_t stream = nullptr;
    bool quick = false;
};

/** The three float arrays of the memory suite, sized as max(8 x L2, 1 GiB) each, capped so that all three
 *  stay within 60 % of free memory. */
struct StreamArrays {
    float* a = nullptr;
    float* b = nullptr;
    float* c = nullptr;
    long long n = 0; // elements per array, a multiple of 1024
    ~StreamArrays();
    cudaError_t allocate(double freeBytes, double l2Bytes);
};

/** HBM copy, scale, triad, read and cudaMemcpyAsync D2D. */
cudaError_t measureMemory(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out);
/** CUDA-core fp32 FMA peak (fma_fp32). */
cudaError_t measureFma(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out);
/** Intensity sweep 0.25 .. 64 FLOP/byte (intensity_sweep points). */
cudaError_t measureIntensitySweep(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out);
/** bf16 ReLU and GELU (elementwise points). */
cudaError_t measureElementwise(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out);
/** Pinned and pageable H2D / D2H. */
cudaError_t measureHostLinks(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out);
/** One dense GEMM result (gemm_<dtype>): 4096^3 and 8192^3 (8192^3 only in quick mode); the faster kept. */
void measureGemm(const DeviceContext& ctx, GemmBench& bench, const std::string& dtype, double capSeconds,
                 DeviceReport& out);
/** bf16 M-sweep, K = N = 4096, M = 1 .. 8192 (gemm_m_sweep points). */
void measureMSweep(const DeviceContext& ctx, GemmBench& bench, double capSeconds, DeviceReport& out);
/** bf16 8192^3 GEMMs back to back for `seconds` (no result): brings the board to the clock and
 *  temperature of sustained work before the GEMM steps (--soak). */
void soak(GemmBench& bench, double seconds);
/** The GEMMs of a transformer layer (transformerGemmShapes) in `dtype` (gemm_shapes points with {m, n, k}). */
void measureShapes(const DeviceContext& ctx, GemmBench& bench, const std::string& dtype, double capSeconds,
                   DeviceReport& out);

} // namespace napkin::gpu
