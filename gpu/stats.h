// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Pure arithmetic of the probe: sample statistics, bytes each kernel moves, NCCL bus bandwidth,
// GEMM verification error. No CUDA here, so the tests check it on any machine.

#include <string>
#include <vector>

namespace napkin::gpu {

/** best (largest), median and every sample of a set of rates. */
struct Stats {
    double best = 0;
    double median = 0;
    std::vector<double> samples;
};

/** Statistics of positive, finite rates; non-finite or non-positive samples are dropped.
 *  Median: middle value, mean of the two middle values for an even count. Empty -> all zero. */
Stats rateStats(const std::vector<double>& rates);

/** Kernels whose bytes are counted (docs/probe.md). */
enum class Kernel { Copy, Scale, Triad, Read, MemcpyD2D, Relu, Gelu, Intensity };

/** Bytes one launch moves over `n` elements of `elementBytes` each (read + write):
 *  copy, scale 2 arrays (BabelStream weights), triad 3, read 1, cudaMemcpy D2D 2 (one read, one write),
 *  relu/gelu 2, intensity sweep 2. */
double bytesMoved(Kernel k, double n, double elementBytes);

/** FLOP of one elementwise launch over n values: relu 1 per value, gelu 20 (CS336 lecture 2's convention,
 *  the same as napkin_core's roofline); the intensity sweep 2 per FMA. Copy kernels: 0. */
double flopsOf(Kernel k, double n, int fmasPerElement = 0);

/** All-reduce bus bandwidth: algbw * 2(n-1)/n (nccl-tests doc/PERFORMANCE.md); 0 for one rank. */
double allReduceBusBw(double algbwBytesPerSecond, int ranks);

/** Dense GEMM FLOP: 2 m n k (one multiply and one add per term). */
double gemmFlops(double m, double n, double k);

/** Error of one GEMM output relative to the magnitude of its terms:
 *  |got - ref| / sum_k |a_k b_k| (the componentwise backward-error scale of a dot product, Higham 2002
 *  section 3.1). Returns +inf for a non-finite got. sumAbs 0 -> |got - ref|. */
double gemmRelativeError(double got, double ref, double sumAbs);

/** Tolerance of gemmRelativeError per dtype name: fp32 1e-4, tf32 1e-2, fp16 1e-2, bf16 2e-2,
 *  fp8_e4m3 5e-2 (output rounding plus input rounding of tf32; probe-methods.md section 2 table row 3). */
double gemmTolerance(const std::string& dtype);

/** Intensity sweep: FMAs per element for a target FLOP/byte with 8 bytes per fp32 element (mixbench):
 *  intensity = 2 f / 8. 0.25 -> 1, 64 -> 256. */
int fmasForIntensity(double flopPerByte);

/** Sum of the stream pattern float(i mod 1024) over i < n, exactly. */
double streamPatternSum(long long n);

/** One GEMM of a transformer layer as napkin-probe times it (series gemm_shapes). */
struct GemmShape {
    std::string label; // "fc1 h=4096 T=8192"
    long long m = 0, n = 0, k = 0;
};

/** The forward GEMMs of a Llama-style layer (GQA with 8 KV heads of 128, SwiGLU FFN 3.5 h, vocabulary
 *  128256) for hidden widths h and T tokens per micro-batch (M = T): qkv (N = h + 2048, K = h), proj
 *  (N = K = h), fc1 (gate and up fused: N = 7 h, K = h), fc2 (N = h, K = 3.5 h), logits (N = 128256,
 *  K = h). Full: h in {2048, 4096, 8192} x T in {2048, 8192}; quick: h = 4096, T = 8192. */
std::vector<GemmShape> transformerGemmShapes(bool quick);

} // namespace napkin::gpu
