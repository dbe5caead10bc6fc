// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Calibration kernels of napkin-probe (see kernels.h and docs/probe.md). One translation unit on
// purpose: it is the only file nvcc compiles, once per listed architecture.

#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

namespace napkin::gpu::kernels {

int eltBytes(Elt e)
{
    switch (e) {
    case Elt::F32: return 4;
    case Elt::F16: return 2;
    case Elt::BF16: return 2;
    case Elt::FP8E4M3: return 1;
    }
    return 0;
}

double streamPattern(long long i) { return static_cast<double>(i & 1023); }

namespace {

__device__ __forceinline__ float pattern(long long i) { return static_cast<float>(i & 1023); }

__device__ __forceinline__ long long globalId()
{
    return blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ long long gridStride() { return static_cast<long long>(gridDim.x) * blockDim.x; }

__global__ void initStreamK(float4* a, float4* b, float4* c, long long n4)
{
    for (long long i = globalId(); i < n4; i += gridStride()) {
        const long long e = 4 * i;
        a[i] = make_float4(pattern(e), pattern(e + 1), pattern(e + 2), pattern(e + 3));
        b[i] = make_float4(0.f, 0.f, 0.f, 0.f);
        c[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

__global__ void copyK(const float4* __restrict__ a, float4* __restrict__ c, long long n4)
{
    for (long long i = globalId(); i < n4; i += gridStride())
        c[i] = a[i];
}

__global__ void scaleK(const float4* __restrict__ c, float4* __restrict__ b, float s, long long n4)
{
    for (long long i = globalId(); i < n4; i += gridStride()) {
        const float4 v = c[i];
        b[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
    }
}

__global__ void triadK(const float4* __restrict__ a, const float4* __restrict__ b, float4* __restrict__ c, float s,
                       long long n4)
{
    for (long long i = globalId(); i < n4; i += gridStride()) {
        const float4 x = a[i];
        const float4 y = b[i];
        c[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
    }
}

__device__ void blockAddDouble(double v, double* target)
{
    __shared__ double partial[kThreads / 32];
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0;
        for (int w = 0; w < kThreads / 32; ++w)
            s += partial[w];
        atomicAdd(target, s);
    }
}

__global__ void readSumK(const float4* __restrict__ a, long long n4, double* sum)
{
    double acc = 0;
    for (long long i = globalId(); i < n4; i += gridStride()) {
        const float4 v = a[i];
        acc += static_cast<double>((v.x + v.y) + (v.z + v.w)); // exact: integers below 2^12
    }
    blockAddDouble(acc, sum);
}

__global__ void countMismatchesK(const float* __restrict__ x, long long n, float factor, float addend,
                                 unsigned long long* bad)
{
    unsigned long long local = 0;
    for (long long i = globalId(); i < n; i += gridStride())
        local += x[i] != factor * pattern(i) + addend ? 1ULL : 0ULL;
    if (local)
        atomicAdd(bad, local);
}

#define NAPKIN_FMA8(a, b)                                                                                              \
    x0 = fmaf(x0, a, b);                                                                                               \
    x1 = fmaf(x1, a, b);                                                                                               \
    x2 = fmaf(x2, a, b);                                                                                               \
    x3 = fmaf(x3, a, b);                                                                                               \
    x4 = fmaf(x4, a, b);                                                                                               \
    x5 = fmaf(x5, a, b);                                                                                               \
    x6 = fmaf(x6, a, b);                                                                                               \
    x7 = fmaf(x7, a, b)

__global__ void fmaPeakK(float* out, int iterations, float a, float b)
{
    float x0 = 0.f, x1 = 1.f, x2 = 2.f, x3 = 3.f, x4 = 4.f, x5 = 5.f, x6 = 6.f, x7 = 7.f;
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int u = 0; u < 16; ++u) {
            NAPKIN_FMA8(a, b);
        }
    }
    out[globalId()] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
}
#undef NAPKIN_FMA8

template <int F>
__global__ void intensityK(const float4* __restrict__ in, float4* __restrict__ out, float a, float b, long long n4)
{
    for (long long i = globalId(); i < n4; i += gridStride()) {
        float4 v = in[i];
#pragma unroll
        for (int f = 0; f < F; ++f) {
            v.x = fmaf(v.x, a, b);
            v.y = fmaf(v.y, a, b);
            v.z = fmaf(v.z, a, b);
            v.w = fmaf(v.w, a, b);
        }
        out[i] = v;
    }
}

__device__ __forceinline__ float activationInput(long long i) { return (pattern(i) - 512.f) / 64.f; }

__global__ void initActivationK(__nv_bfloat162* x, long long n2)
{
    for (long long i = globalId(); i < n2; i += gridStride())
        x[i] = __floats2bfloat162_rn(activationInput(2 * i), activationInput(2 * i + 1));
}

__device__ __forceinline__ float reluF(float x) { return fmaxf(x, 0.f); }
__device__ __forceinline__ float geluTanhF(float x)
{
    // GELU, tanh form (Hendrycks & Gimpel 2016): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    return 0.5f * x * (1.f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

template <bool Gelu>
__global__ void activationK(const uint4* __restrict__ in, uint4* __restrict__ out, long long n8)
{
    for (long long i = globalId(); i < n8; i += gridStride()) {
        uint4 v = in[i];
        __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float2 f = __bfloat1622float2(h[k]);
            h[k] = Gelu ? __floats2bfloat162_rn(geluTanhF(f.x), geluTanhF(f.y))
                        : __floats2bfloat162_rn(reluF(f.x), reluF(f.y));
        }
        out[i] = v;
    }
}

__global__ void countActivationK(const __nv_bfloat16* __restrict__ out, bool isGelu, long long n,
                                 unsigned long long* bad)
{
    unsigned long long local = 0;
    for (long long i = globalId(); i < n; i += gridStride()) {
        const float x = __bfloat162float(__float2bfloat16_rn(activationInput(i)));
        const float y = __bfloat162float(out[i]);
        if (isGelu) {
            const float ref = 0.5f * x * (1.f + erff(x * 0.70710678f)); // erf form, independent of geluTanhF
            local += fabsf(y - ref) <= 0.02f + 1e-2f * fabsf(ref) ? 0ULL : 1ULL;
        } else {
            local += y == (x > 0.f ? x : 0.f) ? 0ULL : 1ULL;
        }
    }
    if (local)
        atomicAdd(bad, local);
}

__device__ __forceinline__ float hashUniform(long long i, std::uint32_t seed)
{
    // splitmix64 finaliser (Steele et al. 2014), top 24 bits -> [-1, 1)
    unsigned long long z = static_cast<unsigned long long>(i) + 0x9E3779B97F4A7C15ULL * (seed + 1ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<float>(z >> 40) * (2.f / 16777216.f) - 1.f;
}

__global__ void fillRandomK(void* p, int e, long long n, std::uint32_t seed)
{
    for (long long i = globalId(); i < n; i += gridStride()) {
        const float v = hashUniform(i, seed);
        switch (static_cast<Elt>(e)) {
        case Elt::F32: static_cast<float*>(p)[i] = v; break;
        case Elt::F16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
        case Elt::BF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
        case Elt::FP8E4M3: static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v); break;
        }
    }
}

__global__ void gatherToFloatK(const void* src, int e, const long long* idx, int n, float* out)
{
    for (long long j = globalId(); j < n; j += gridStride()) {
        const long long i = idx[j];
        float v = 0.f;
        switch (static_cast<Elt>(e)) {
        case Elt::F32: v = static_cast<const float*>(src)[i]; break;
        case Elt::F16: v = __half2float(static_cast<const __half*>(src)[i]); break;
        case Elt::BF16: v = __bfloat162float(static_cast<const __nv_bfloat16*>(src)[i]); break;
        case Elt::FP8E4M3: v = static_cast<float>(static_cast<const __nv_fp8_e4m3*>(src)[i]); break;
        }
        out[j] = v;
    }
}

__global__ void fillConstK(float* p, long long n, float v)
{
    for (long long i = globalId(); i < n; i += gridStride())
        p[i] = v;
}

bool badGrid(int grid) { return grid <= 0; }

} // namespace

cudaError_t initStream(float* a, float* b, float* c, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    initStreamK<<<grid, kThreads, 0, stream>>>(reinterpret_cast<float4*>(a), reinterpret_cast<float4*>(b),
                                               reinterpret_cast<float4*>(c), n / 4);
    return cudaGetLastError();
}

cudaError_t copy(const float* a, float* c, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    copyK<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<float4*>(c), n / 4);
    return cudaGetLastError();
}

cudaError_t scale(const float* c, float* b, float s, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    scaleK<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(c), reinterpret_cast<float4*>(b), s, n / 4);
    return cudaGetLastError();
}

cudaError_t triad(const float* a, const float* b, float* c, float s, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    triadK<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b),
                                          reinterpret_cast<float4*>(c), s, n / 4);
    return cudaGetLastError();
}

cudaError_t readSum(const float* a, long long n, double* sum, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    readSumK<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(a), n / 4, sum);
    return cudaGetLastError();
}

cudaError_t countMismatches(const float* x, long long n, float factor, float addend, unsigned long long* bad, int grid,
                            cudaStream_t stream)
{
    if (n <= 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    countMismatchesK<<<grid, kThreads, 0, stream>>>(x, n, factor, addend, bad);
    return cudaGetLastError();
}

cudaError_t fmaPeak(float* out, int iterations, float a, float b, int grid, cudaStream_t stream)
{
    if (iterations <= 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    fmaPeakK<<<grid, kThreads, 0, stream>>>(out, iterations, a, b);
    return cudaGetLastError();
}

cudaError_t intensity(int fmas, const float* in, float* out, float a, float b, long long n, int grid,
                      cudaStream_t stream)
{
    if (n <= 0 || n % 4 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    const auto* i4 = reinterpret_cast<const float4*>(in);
    auto* o4 = reinterpret_cast<float4*>(out);
    const long long n4 = n / 4;
    switch (fmas) {
    case 1: intensityK<1><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 2: intensityK<2><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 4: intensityK<4><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 8: intensityK<8><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 16: intensityK<16><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 32: intensityK<32><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 64: intensityK<64><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 128: intensityK<128><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    case 256: intensityK<256><<<grid, kThreads, 0, stream>>>(i4, o4, a, b, n4); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t initActivationInput(void* x, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 8 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    initActivationK<<<grid, kThreads, 0, stream>>>(static_cast<__nv_bfloat162*>(x), n / 2);
    return cudaGetLastError();
}

cudaError_t relu(const void* in, void* out, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 8 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    activationK<false><<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), n / 8);
    return cudaGetLastError();
}

cudaError_t gelu(const void* in, void* out, long long n, int grid, cudaStream_t stream)
{
    if (n <= 0 || n % 8 != 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    activationK<true><<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), n / 8);
    return cudaGetLastError();
}

cudaError_t countActivationMismatches(const void* out, bool isGelu, long long n, unsigned long long* bad, int grid,
                                      cudaStream_t stream)
{
    if (n <= 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    countActivationK<<<grid, kThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(out), isGelu, n, bad);
    return cudaGetLastError();
}

cudaError_t fillRandom(void* p, Elt e, long long n, std::uint32_t seed, int grid, cudaStream_t stream)
{
    if (n <= 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    fillRandomK<<<grid, kThreads, 0, stream>>>(p, static_cast<int>(e), n, seed);
    return cudaGetLastError();
}

cudaError_t gatherToFloat(const void* src, Elt e, const long long* idx, int n, float* out, cudaStream_t stream)
{
    if (n <= 0)
        return cudaErrorInvalidValue;
    const int grid = (n + kThreads - 1) / kThreads;
    gatherToFloatK<<<grid, kThreads, 0, stream>>>(src, static_cast<int>(e), idx, n, out);
    return cudaGetLastError();
}

cudaError_t fillConst(float* p, long long n, float v, int grid, cudaStream_t stream)
{
    if (n <= 0 || badGrid(grid))
        return cudaErrorInvalidValue;
    fillConstK<<<grid, kThreads, 0, stream>>>(p, n, v);
    return cudaGetLastError();
}

} // namespace napkin::gpu::kernels
