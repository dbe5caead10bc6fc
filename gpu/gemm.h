// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Dense GEMM through cuBLASLt (loaded with dlopen): random operands, the best of several heuristic
// algorithms, CUDA-event timing, and verification of sampled outputs against an fp64 host dot product.

#include "cudalibs.h"
#include "timing.h"

#include <string>
#include <vector>

namespace napkin::gpu {

struct GemmSpec {
    std::string dtype; // fp32, tf32, fp16, bf16, fp8_e4m3
    long long m = 0, n = 0, k = 0;
    int algorithms = 8; // heuristic candidates asked for and timed (LtSgemmSimpleAutoTuning)
    bool verify = true;
    // Operand sets rotated through between launches so that together they exceed this many bytes
    // (twice the L2): a small-M GEMM's B would otherwise be served from L2 (probe-methods.md pitfall 2).
    // 0: one set.
    double rotateAboveBytes = 0;
    TimingPlan timing;
};

struct GemmMeasurement {
    bool ok = false;
    std::string error;           // why not, when !ok
    std::vector<double> seconds; // per launch, one per sample, with the best algorithm
    int algorithmsTimed = 0;
    int operandSets = 1; // rotated A/B sets timed
    bool verified = false;
    double maxRelErr = 0;
    std::string detail;
};

class GemmBench {
public:
    GemmBench(const CublasLt& lt, cudaStream_t stream, int fillGrid);
    ~GemmBench();
    GemmBench(const GemmBench&) = delete;
    GemmBench& operator=(const GemmBench&) = delete;

    /** Empty when the handle and the 32 MiB workspace exist. */
    const std::string& error() const { return m_error; }
    GemmMeasurement run(const GemmSpec& spec);

private:
    const CublasLt& m_lt;
    cudaStream_t m_stream;
    int m_fillGrid;
    cublasLtHandle_t m_handle = nullptr;
    void* m_workspace = nullptr;
    std::string m_error;
};

} // namespace napkin::gpu
