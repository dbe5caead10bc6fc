// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "suite.h"

#include "kernels.h"
#include "stats.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace napkin::gpu {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr float kTriadScalar = 3.f;        // BabelStream's scalar is 0.4; 3 keeps every value an exact integer
constexpr float kFmaAddend = 1.f / 1024.f; // exact in fp32: the chains stay exact (see kernels.h)
constexpr int kFmaIterations = 4096;       // 4096 x 128 FMAs per thread: ~5 ms on an H100 at 8 x SMs blocks

TimingPlan planFor(const DeviceContext& ctx, double capSeconds)
{
    TimingPlan p;
    p.warmups = 3;
    p.samples = ctx.quick ? 5 : 7;
    p.minSamples = 3;
    p.minBatchSeconds = ctx.quick ? 0.004 : 0.010;
    p.capSeconds = capSeconds;
    return p;
}

// Runs `check` (a kernel adding mismatches to a device counter) and returns the count, or -1 on error.
long long mismatches(cudaStream_t stream, const std::function<cudaError_t(unsigned long long*)>& check,
                     cudaError_t& err)
{
    unsigned long long* bad = nullptr;
    unsigned long long host = 0;
    err = cudaMalloc(reinterpret_cast<void**>(&bad), sizeof *bad);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(bad, 0, sizeof *bad, stream);
    if (err == cudaSuccess)
        err = check(bad);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&host, bad, sizeof host, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    if (bad)
        cudaFree(bad);
    return err == cudaSuccess ? static_cast<long long>(host) : -1;
}

Result bandwidthResult(const std::string& id, const std::string& dtype, const std::vector<double>& seconds,
                       double bytesPerLaunch, long long elements, const std::string& counted, const std::string& detail)
{
    Result r;
    r.id = id;
    r.kind = "bandwidth";
    r.dtype = dtype;
    std::vector<double> rates;
    rates.reserve(seconds.size());
    for (double s : seconds)
        rates.push_back(bytesPerLaunch / s);
    r.stats = rateStats(rates);
    r.size = {{"elements", elements}};
    r.sizeBytes = bytesPerLaunch;
    r.bytesCounted = counted;
    r.detail = detail;
    return r;
}

double minOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

} // namespace

StreamArrays::~StreamArrays()
{
    for (float* p : {a, b, c})
        if (p)
            cudaFree(p);
}

cudaError_t StreamArrays::allocate(double freeBytes, double l2Bytes)
{
    // Each array >= max(8 x L2, 1 GiB) so that the L2 cannot hold it (probe-methods.md pitfall 2),
    // all three within 60 % of free memory.
    const double want = std::max(8 * l2Bytes, kGiB);
    const double bytes = std::min(want, 0.2 * freeBytes);
    n = static_cast<long long>(bytes / 4) / 1024 * 1024;
    if (n < 1024)
        return cudaErrorMemoryAllocation;
    const size_t sz = static_cast<size_t>(n) * sizeof(float);
    cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&a), sz);
    if (e == cudaSuccess)
        e = cudaMalloc(reinterpret_cast<void**>(&b), sz);
    if (e == cudaSuccess)
        e = cudaMalloc(reinterpret_cast<void**>(&c), sz);
    return e;
}

cudaError_t measureMemory(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out)
{
    const long long n = s.n;
    const double each = capSeconds / 5;
    const TimingPlan plan = planFor(ctx, each);
    cudaError_t e = kernels::initStream(s.a, s.b, s.c, n, ctx.grid, ctx.stream);
    if (e != cudaSuccess)
        return e;
    const std::string how = "16-byte float4 grid-stride kernel, " + std::to_string(ctx.grid) + " blocks x 256 threads";

    struct K {
        const char* id;
        Kernel kind;
        float factor; // the checked array holds factor * pattern
        std::function<cudaError_t()> launch;
        const float* checked;
        const char* formula;
    };
    const std::vector<K> ks = {
        {"hbm_copy", Kernel::Copy, 1.f, [&] { return kernels::copy(s.a, s.c, n, ctx.grid, ctx.stream); }, s.c,
         "c = a; bytes = 2 n 4"},
        {"hbm_scale", Kernel::Scale, kTriadScalar,
         [&] { return kernels::scale(s.c, s.b, kTriadScalar, n, ctx.grid, ctx.stream); }, s.b,
         "b = 3 c; bytes = 2 n 4"},
        {"hbm_triad", Kernel::Triad, 1.f + kTriadScalar * kTriadScalar,
         [&] { return kernels::triad(s.a, s.b, s.c, kTriadScalar, n, ctx.grid, ctx.stream); }, s.c,
         "c = a + 3 b; bytes = 3 n 4"},
    };
    for (const K& k : ks) {
        std::vector<double> secs;
        if ((e = timeLaunches(k.launch, ctx.stream, plan, secs)) != cudaSuccess)
            return e;
        Result r = bandwidthResult(k.id, "fp32", secs, bytesMoved(k.kind, n, 4), n, "read+write",
                                   std::string(k.formula) + "; " + how);
        const long long bad = mismatches(
            ctx.stream,
            [&](unsigned long long* b) {
                return kernels::countMismatches(k.checked, n, k.factor, 0.f, b, ctx.grid, ctx.stream);
            },
            e);
        if (e != cudaSuccess)
            return e;
        r.verified = bad == 0;
        out.results.push_back(r);
    }

    // Read-only reduction: the fp64 sum of a, checked exactly against the closed form.
    double* sum = nullptr;
    if ((e = cudaMalloc(reinterpret_cast<void**>(&sum), sizeof(double))) != cudaSuccess)
        return e;
    std::vector<double> secs;
    e = timeLaunches([&] { return kernels::readSum(s.a, n, sum, ctx.grid, ctx.stream); }, ctx.stream, plan, secs);
    double got = -1;
    if (e == cudaSuccess)
        e = cudaMemsetAsync(sum, 0, sizeof(double), ctx.stream);
    if (e == cudaSuccess)
        e = kernels::readSum(s.a, n, sum, ctx.grid, ctx.stream);
    if (e == cudaSuccess) // on ctx.stream: a plain cudaMemcpy is not ordered after a non-blocking stream
        e = cudaMemcpyAsync(&got, sum, sizeof got, cudaMemcpyDeviceToHost, ctx.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(ctx.stream);
    cudaFree(sum);
    if (e != cudaSuccess)
        return e;
    Result rr = bandwidthResult("hbm_read", "fp32", secs, bytesMoved(Kernel::Read, n, 4), n, "read",
                                "sum of a (fp64 accumulation); bytes = n 4 read, no writes; " + how);
    rr.verified = got == streamPatternSum(n);
    out.results.push_back(rr);

    // Copy engine: cudaMemcpyAsync device to device (nvbandwidth style), bytes read + written.
    const size_t bytes = static_cast<size_t>(n) * 4;
    secs.clear();
    e = timeLaunches([&] { return cudaMemcpyAsync(s.c, s.a, bytes, cudaMemcpyDeviceToDevice, ctx.stream); }, ctx.stream,
                     plan, secs);
    if (e != cudaSuccess)
        return e;
    Result rm = bandwidthResult("memcpy_d2d", "", secs, bytesMoved(Kernel::MemcpyD2D, n, 4), n, "read+write",
                                "cudaMemcpyAsync device to device; bytes = 2 x buffer (read + write)");
    const long long bad = mismatches(
        ctx.stream,
        [&](unsigned long long* b) { return kernels::countMismatches(s.c, n, 1.f, 0.f, b, ctx.grid, ctx.stream); }, e);
    if (e != cudaSuccess)
        return e;
    rm.verified = bad == 0;
    out.results.push_back(rm);
    return cudaSuccess;
}

cudaError_t measureFma(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out)
{
    const int grid = 8 * ctx.sms; // probe-methods.md section 2 row 4: 8 x SMs blocks of 256 threads
    const long long threads = static_cast<long long>(grid) * kernels::kThreads;
    if (threads > s.n)
        return cudaErrorMemoryAllocation;
    std::vector<double> secs;
    cudaError_t e =
        timeLaunches([&] { return kernels::fmaPeak(s.c, kFmaIterations, 1.f, kFmaAddend, grid, ctx.stream); },
                     ctx.stream, planFor(ctx, capSeconds), secs);
    if (e != cudaSuccess)
        return e;
    // x_c = c + steps * b for chains c = 0..7 (a = 1), all exact: sum = 28 + 8 * steps / 1024.
    const double steps = static_cast<double>(kFmaIterations) * kernels::kFmaPerIteration / 8;
    const float expected = static_cast<float>(28.0 + 8.0 * steps * kFmaAddend);
    const long long bad = mismatches(
        ctx.stream,
        [&](unsigned long long* b) {
            return kernels::countMismatches(s.c, threads, 0.f, expected, b, ctx.grid, ctx.stream);
        },
        e);
    if (e != cudaSuccess)
        return e;
    const double flops = 2.0 * threads * kFmaIterations * kernels::kFmaPerIteration; // an FMA is 2 FLOP
    Result r;
    r.id = "fma_fp32";
    r.kind = "flops";
    r.dtype = "fp32";
    std::vector<double> rates;
    rates.reserve(secs.size());
    for (double t : secs)
        rates.push_back(flops / t);
    r.stats = rateStats(rates);
    r.size = {{"threads", threads},
              {"fma_per_thread", static_cast<long long>(kFmaIterations) * kernels::kFmaPerIteration}};
    r.sizeBytes = static_cast<double>(threads) * 4;
    r.verified = bad == 0;
    r.detail =
        "8 independent fmaf chains per thread, " + std::to_string(grid) + " blocks x 256 threads; FLOP = 2 x FMAs";
    out.results.push_back(r);
    return cudaSuccess;
}

cudaError_t measureIntensitySweep(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out)
{
    const long long n = s.n;
    const std::vector<double> intensities = {0.25, 0.5, 1, 2, 4, 8, 16, 32, 64};
    TimingPlan plan = planFor(ctx, capSeconds / static_cast<double>(intensities.size()));
    plan.samples = 3;
    bool allOk = true;
    for (double target : intensities) {
        const int f = fmasForIntensity(target);
        std::vector<double> secs;
        cudaError_t e =
            timeLaunches([&] { return kernels::intensity(f, s.a, s.c, 1.f, kFmaAddend, n, ctx.grid, ctx.stream); },
                         ctx.stream, plan, secs);
        if (e != cudaSuccess)
            return e;
        const float addend = static_cast<float>(f) * kFmaAddend; // exact: p + f/1024
        const long long bad = mismatches(
            ctx.stream,
            [&](unsigned long long* b) {
                return kernels::countMismatches(s.c, n, 1.f, addend, b, ctx.grid, ctx.stream);
            },
            e);
        if (e != cudaSuccess)
            return e;
        if (bad != 0) {
            allOk = false;
            continue;
        }
        Point p;
        p.series = "intensity_sweep";
        char label[32];
        std::snprintf(label, sizeof label, "I=%g", target);
        p.label = label;
        p.dtype = "fp32";
        p.flops = flopsOf(Kernel::Intensity, n, f);
        p.bytes = bytesMoved(Kernel::Intensity, n, 4);
        p.seconds = minOf(secs);
        out.points.push_back(p);
    }
    if (!allOk)
        out.skipped.push_back({"intensity_sweep", "some points failed their device-side check and were dropped"});
    return cudaSuccess;
}

cudaError_t measureElementwise(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out)
{
    const long long n = 2 * s.n; // bf16 values in one float array
    cudaError_t e = kernels::initActivationInput(s.b, n, ctx.grid, ctx.stream);
    if (e != cudaSuccess)
        return e;
    const TimingPlan plan = planFor(ctx, capSeconds / 2);
    for (bool isGelu : {false, true}) {
        std::vector<double> secs;
        e = timeLaunches(
            [&] {
                return isGelu ? kernels::gelu(s.b, s.c, n, ctx.grid, ctx.stream)
                              : kernels::relu(s.b, s.c, n, ctx.grid, ctx.stream);
            },
            ctx.stream, plan, secs);
        if (e != cudaSuccess)
            return e;
        const long long bad = mismatches(
            ctx.stream,
            [&](unsigned long long* b) {
                return kernels::countActivationMismatches(s.c, isGelu, n, b, ctx.grid, ctx.stream);
            },
            e);
        if (e != cudaSuccess)
            return e;
        const Kernel k = isGelu ? Kernel::Gelu : Kernel::Relu;
        if (bad != 0) {
            out.skipped.push_back({isGelu ? "gelu" : "relu", "output failed the device-side check"});
            continue;
        }
        out.points.push_back(
            {"elementwise", isGelu ? "gelu" : "relu", "bf16", flopsOf(k, n), bytesMoved(k, n, 2), minOf(secs)});
    }
    return cudaSuccess;
}

cudaError_t measureHostLinks(const DeviceContext& ctx, StreamArrays& s, double capSeconds, DeviceReport& out)
{
    // 256 MiB (64 MiB quick), within one stream array; xorshift pattern checked after the round trip.
    const size_t bytes =
        std::min<size_t>(static_cast<size_t>(ctx.quick ? 64 : 256) << 20, static_cast<size_t>(s.n) * 4);
    const size_t words = bytes / 4;
    TimingPlan plan = planFor(ctx, capSeconds / 4);
    plan.warmups = 4; // nvbandwidth: 4 warm-ups
    plan.samples = ctx.quick ? 3 : 5;
    std::vector<std::uint32_t> pattern(words);
    std::uint32_t x = 2463534242u;
    for (auto& w : pattern) { // Marsaglia 2003 xorshift32
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        w = x;
    }
    for (bool pinned : {true, false}) {
        std::uint32_t* src = nullptr;
        std::uint32_t* dst = nullptr;
        std::vector<std::uint32_t> pageSrc, pageDst;
        cudaError_t e = cudaSuccess;
        if (pinned) {
            e = cudaMallocHost(reinterpret_cast<void**>(&src), bytes);
            if (e == cudaSuccess)
                e = cudaMallocHost(reinterpret_cast<void**>(&dst), bytes);
        } else {
            pageSrc = pattern;
            pageDst.assign(words, 0u); // touched, so the first copy does not pay for page faults
            src = pageSrc.data();
            dst = pageDst.data();
        }
        if (e == cudaSuccess && pinned)
            std::copy(pattern.begin(), pattern.end(), src);
        std::vector<double> up, down;
        if (e == cudaSuccess)
            e = timeLaunches([&] { return cudaMemcpyAsync(s.a, src, bytes, cudaMemcpyHostToDevice, ctx.stream); },
                             ctx.stream, plan, up);
        if (e == cudaSuccess)
            e = timeLaunches([&] { return cudaMemcpyAsync(dst, s.a, bytes, cudaMemcpyDeviceToHost, ctx.stream); },
                             ctx.stream, plan, down);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(ctx.stream);
        const bool ok = e == cudaSuccess && std::equal(pattern.begin(), pattern.end(), dst);
        if (pinned) {
            if (src)
                cudaFreeHost(src);
            if (dst)
                cudaFreeHost(dst);
        }
        if (e == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            out.skipped.push_back({pinned ? "h2d_pinned" : "h2d_pageable", "cannot allocate host memory"});
            continue;
        }
        if (e != cudaSuccess)
            return e;
        const std::string kind = pinned ? "pinned" : "pageable";
        const std::string how = "cudaMemcpyAsync of " + std::to_string(bytes >> 20) + " MiB " + kind + " host memory";
        Result h = bandwidthResult("h2d_" + kind, "", up, static_cast<double>(bytes), static_cast<long long>(bytes),
                                   "one direction", how);
        Result d = bandwidthResult("d2h_" + kind, "", down, static_cast<double>(bytes), static_cast<long long>(bytes),
                                   "one direction", how);
        h.verified = d.verified = ok; // the pattern survived host -> device -> host
        out.results.push_back(h);
        out.results.push_back(d);
    }
    return cudaSuccess;
}

void measureGemm(const DeviceContext& ctx, GemmBench& bench, const std::string& dtype, double capSeconds,
                 DeviceReport& out)
{
    std::vector<long long> sizes = ctx.quick ? std::vector<long long>{8192} : std::vector<long long>{4096, 8192};
    Result best;
    std::string lastError;
    for (long long sz : sizes) {
        GemmSpec spec;
        spec.dtype = dtype;
        spec.m = spec.n = spec.k = sz;
        spec.algorithms = ctx.quick ? 4 : 8;
        spec.timing = planFor(ctx, capSeconds / static_cast<double>(sizes.size()));
        spec.timing.warmups = ctx.quick ? 3 : 10;
        const GemmMeasurement g = bench.run(spec);
        if (!g.ok) {
            lastError = g.error;
            continue;
        }
        const double flops = gemmFlops(sz, sz, sz);
        std::vector<double> rates;
        for (double t : g.seconds)
            rates.push_back(flops / t);
        Result r;
        r.id = "gemm_" + dtype;
        r.kind = "flops";
        r.dtype = dtype;
        r.stats = rateStats(rates);
        r.size = {{"m", sz}, {"n", sz}, {"k", sz}};
        const double ab = dtype == "fp8_e4m3" ? 1 : (dtype == "fp32" || dtype == "tf32" ? 4 : 2);
        const double cd = dtype == "fp32" || dtype == "tf32" ? 4 : 2;
        r.sizeBytes = 2.0 * sz * sz * ab + 1.0 * sz * sz * cd;
        r.verified = g.verified;
        r.maxRelErr = g.maxRelErr;
        r.detail = g.detail + "; FLOP = 2 m n k";
        // Keep the verified, faster shape (MAMF: the best shape differs by GPU).
        if (best.id.empty() || (r.verified && !best.verified) ||
            (r.verified == best.verified && r.stats.best > best.stats.best))
            best = r;
    }
    if (best.id.empty())
        out.skipped.push_back({"gemm_" + dtype, lastError});
    else
        out.results.push_back(best);
}

void measureMSweep(const DeviceContext& ctx, GemmBench& bench, double capSeconds, DeviceReport& out)
{
    constexpr long long kN = 4096, kK = 4096;
    std::vector<long long> ms;
    for (long long m = 1; m <= 8192; m *= 2)
        ms.push_back(m);
    std::string failed;
    for (long long m : ms) {
        GemmSpec spec;
        spec.dtype = "bf16";
        spec.m = m;
        spec.n = kN;
        spec.k = kK;
        spec.algorithms = ctx.quick ? 2 : 4;
        spec.verify = false;
        spec.rotateAboveBytes = 2 * ctx.l2Bytes;
        spec.timing = planFor(ctx, capSeconds / static_cast<double>(ms.size()));
        spec.timing.samples = 3;
        spec.timing.minBatchSeconds = 0.002;
        const GemmMeasurement g = bench.run(spec);
        if (!g.ok) {
            failed = g.error;
            continue;
        }
        // bf16: read A (m k) and B (k n), write D (m n), 2 bytes each.
        out.points.push_back({"gemm_m_sweep", "M=" + std::to_string(m), "bf16", gemmFlops(m, kN, kK),
                              2.0 * (m * kK + kK * kN + m * kN), minOf(g.seconds), m, kN, kK});
    }
    if (!failed.empty())
        out.skipped.push_back({"gemm_m_sweep", "some points did not run: " + failed});
}

void soak(GemmBench& bench, double seconds)
{
    GemmSpec spec;
    spec.dtype = "bf16";
    spec.m = spec.n = spec.k = 8192;
    spec.algorithms = 1;
    spec.verify = false;
    spec.timing.warmups = 0;
    spec.timing.samples = 1000000; // until the cap
    spec.timing.minSamples = 1;
    spec.timing.minBatchSeconds = 0.1;
    spec.timing.capSeconds = seconds;
    bench.run(spec);
}

void measureShapes(const DeviceContext& ctx, GemmBench& bench, const std::string& dtype, double capSeconds,
                   DeviceReport& out)
{
    const std::vector<GemmShape> shapes = transformerGemmShapes(ctx.quick);
    const double t0 = nowSeconds();
    const double ab = dtype == "fp8_e4m3" ? 1 : 2, cd = 2; // fp8 GEMMs write bf16 (gemm.cpp)
    std::string failed;
    int skippedForTime = 0;
    for (const GemmShape& sh : shapes) {
        const double left = capSeconds - (nowSeconds() - t0);
        if (left <= 0) {
            ++skippedForTime;
            continue;
        }
        GemmSpec spec;
        spec.dtype = dtype;
        spec.m = sh.m;
        spec.n = sh.n;
        spec.k = sh.k;
        spec.algorithms = ctx.quick ? 2 : 4;
        spec.verify = false; // the square GEMMs of the same dtype are verified (gemm_<dtype>)
        spec.rotateAboveBytes = 2 * ctx.l2Bytes;
        spec.timing = planFor(ctx, capSeconds / static_cast<double>(shapes.size()));
        spec.timing.samples = 3;
        spec.timing.minBatchSeconds = 0.002;
        const GemmMeasurement g = bench.run(spec);
        if (!g.ok) {
            failed = sh.label + ": " + g.error;
            continue;
        }
        out.points.push_back({"gemm_shapes", sh.label, dtype, gemmFlops(double(sh.m), double(sh.n), double(sh.k)),
                              ab * double(sh.m * sh.k + sh.k * sh.n) + cd * double(sh.m * sh.n), minOf(g.seconds), sh.m,
                              sh.n, sh.k});
    }
    const std::string id = "gemm_shapes_" + dtype;
    if (!failed.empty())
        out.skipped.push_back({id, "some shapes did not run (last: " + failed + ")"});
    if (skippedForTime > 0)
        out.skipped.push_back({id, std::to_string(skippedForTime) + " shapes left out: time cap reached"});
}

} // namespace napkin::gpu
