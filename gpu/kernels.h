// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Calibration kernels of napkin-probe. Host-callable launch wrappers, usable from plain C++ (no
// CUDA syntax here). Every wrapper checks its arguments, launches on `stream` and returns the launch
// status (cudaGetLastError), never throws.

#include <cstdint>

#include <cuda_runtime_api.h>

namespace napkin::gpu::kernels {

/** Element types of the GEMM operands (cuBLASLt's CUDA_R_32F, _16F, _16BF, _8F_E4M3). */
enum class Elt : int { F32 = 0, F16 = 1, BF16 = 2, FP8E4M3 = 3 };

/** Bytes of one element. */
int eltBytes(Elt e);

/** Threads per block of every kernel here. */
inline constexpr int kThreads = 256;

/** The value every stream array starts from: element i holds float(i mod 1024) (exact in fp32). */
double streamPattern(long long i);

// --- Memory bandwidth (BabelStream kernels with 16-byte float4 accesses, grid-stride).
//     n is the element count of each float array and must be a multiple of 4.
cudaError_t initStream(float* a, float* b, float* c, long long n, int grid, cudaStream_t stream);
cudaError_t copy(const float* a, float* c, long long n, int grid, cudaStream_t stream);           // c = a
cudaError_t scale(const float* c, float* b, float s, long long n, int grid, cudaStream_t stream); // b = s c
cudaError_t triad(const float* a, const float* b, float* c, float s, long long n, int grid,
                  cudaStream_t stream); // c = a + s b
/** Adds the sum of a[0..n) to *sum (fp64 accumulation, exact for the stream pattern). */
cudaError_t readSum(const float* a, long long n, double* sum, int grid, cudaStream_t stream);
/** Adds to *bad the count of i with x[i] != factor * pattern(i) + addend (exact comparison). */
cudaError_t countMismatches(const float* x, long long n, float factor, float addend, unsigned long long* bad, int grid,
                            cudaStream_t stream);

// --- CUDA-core arithmetic.
/** FMAs per thread per loop iteration of fmaPeak (8 independent chains x 16 unrolled). */
inline constexpr int kFmaPerIteration = 128;
/** Each of grid * kThreads threads runs `iterations` x 128 FMAs x = x * a + b on 8 chains started at
 *  0..7 and stores their sum to out[thread]. With a = 1 the result is 28 + 8 * 16 * iterations * b. */
cudaError_t fmaPeak(float* out, int iterations, float a, float b, int grid, cudaStream_t stream);
/** out[i] = in[i] after `fmas` FMAs (v = v * a + b); fmas in {1, 2, 4, ..., 256}. Per element 2*fmas
 *  FLOP and 8 bytes (4 read + 4 written): intensity fmas / 4 FLOP/byte (mixbench). */
cudaError_t intensity(int fmas, const float* in, float* out, float a, float b, long long n, int grid,
                      cudaStream_t stream);

// --- Elementwise bf16 activations (8 values per 16-byte access); n a multiple of 8.
/** x[i] = bf16((pattern(i) - 512) / 64), i.e. -8 .. 7.98. */
cudaError_t initActivationInput(void* x, long long n, int grid, cudaStream_t stream);
cudaError_t relu(const void* in, void* out, long long n, int grid, cudaStream_t stream);
/** tanh-approximated GELU (Hendrycks & Gimpel 2016), computed in fp32. */
cudaError_t gelu(const void* in, void* out, long long n, int grid, cudaStream_t stream);
/** Counts outputs that differ from the activation of the input pattern (relu exactly; gelu against the
 *  erf form with |err| <= 0.02 + 1e-2 |y|: bf16 rounding plus the tanh approximation). */
cudaError_t countActivationMismatches(const void* out, bool isGelu, long long n, unsigned long long* bad, int grid,
                                      cudaStream_t stream);

// --- GEMM operands and checks.
/** p[i] = dtype(uniform(-1, 1)) from a hash of (i, seed): random, never constant. */
cudaError_t fillRandom(void* p, Elt e, long long n, std::uint32_t seed, int grid, cudaStream_t stream);
/** out[j] = float(src[idx[j]]) for j < n (every supported type converts to fp32 exactly). */
cudaError_t gatherToFloat(const void* src, Elt e, const long long* idx, int n, float* out, cudaStream_t stream);
/** p[i] = v. */
cudaError_t fillConst(float* p, long long n, float v, int grid, cudaStream_t stream);

} // namespace napkin::gpu::kernels
