// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "runner.h"

#include "cudalibs.h"
#include "gemm.h"
#include "kernels.h"
#include "nvml.h"
#include "suite.h"
#include "timing.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <ctime>

#ifndef NAPKIN_PROBE_VERSION
#define NAPKIN_PROBE_VERSION "0.0.0"
#endif

namespace napkin::gpu {

std::string progressLine(int step, int of, const std::string& id)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, R"({"event":"progress","step":%d,"of":%d,"id":"%s","fraction":%.4f})", step, of,
                  id.c_str(), of > 0 ? static_cast<double>(step) / of : 1.0);
    return buf;
}

namespace {

int attribute(cudaDeviceAttr a, int device)
{
    int v = 0;
    return cudaDeviceGetAttribute(&v, a, device) == cudaSuccess ? v : 0;
}

DeviceReport identity(int device)
{
    DeviceReport d;
    d.index = device;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        d.name = prop.name;
        d.uuid = formatUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
        d.memoryBytes = static_cast<double>(prop.totalGlobalMem);
    }
    // CUDA 13 removed cudaDeviceProp::clockRate and friends: attributes (probe-methods.md pitfall 13).
    const int major = attribute(cudaDevAttrComputeCapabilityMajor, device);
    const int minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
    d.computeCapability = std::to_string(major) + "." + std::to_string(minor);
    d.sms = attribute(cudaDevAttrMultiProcessorCount, device);
    d.l2Bytes = attribute(cudaDevAttrL2CacheSize, device);
    d.smClockMaxMhz = attribute(cudaDevAttrClockRate, device) / 1000;           // kHz -> MHz
    d.memoryClockMaxMhz = attribute(cudaDevAttrMemoryClockRate, device) / 1000; // kHz -> MHz
    return d;
}

// A step of the suite: its id and its share of the time cap.
struct Step {
    std::string id;
    double share;
};

std::vector<Step> plannedSteps(bool fp8)
{
    std::vector<Step> s = {{"hbm", 0.06},         {"fma_fp32", 0.02},   {"intensity_sweep", 0.07},
                           {"elementwise", 0.03}, {"host_links", 0.08}, {"gemm_fp32", 0.09},
                           {"gemm_tf32", 0.07},   {"gemm_fp16", 0.07},  {"gemm_bf16", 0.07}};
    if (fp8)
        s.push_back({"gemm_fp8_e4m3", 0.07});
    s.push_back({"gemm_m_sweep", 0.12});
    s.push_back({"gemm_shapes_bf16", 0.12});
    if (fp8)
        s.push_back({"gemm_shapes_fp8_e4m3", 0.10});
    return s;
}

bool sticky(cudaError_t e)
{
    // An error that survives a synchronize has corrupted the context (e.g. an illegal address).
    return e != cudaSuccess && e != cudaErrorMemoryAllocation && e != cudaErrorInvalidValue &&
           cudaDeviceSynchronize() != cudaSuccess;
}

} // namespace

Profile runProbe(const Options& options, const ProgressSink& progress)
{
    const double t0 = nowSeconds();
    const double cap = timeCapSeconds(options);
    Profile p;
    p.probeVersion = NAPKIN_PROBE_VERSION;
    p.mode = options.quick ? "quick" : "full";
    p.startedUtc = isoUtc(static_cast<long long>(std::time(nullptr)));
    cudaRuntimeGetVersion(&p.runtimeVersion);
    cudaDriverGetVersion(&p.driverVersion);
    const CublasLt lt = loadCublasLt();
    const Nccl nccl = loadNccl();
    p.cublaslt = lt.info;
    p.nccl = nccl.info;
    const Nvml nvml;
    p.nvml = nvml.info();
    auto finish = [&](Status s, const std::string& detail) {
        p.status = s;
        p.message = statusMessage(s, p.driverVersion, p.runtimeVersion, detail);
        p.elapsedSeconds = nowSeconds() - t0;
        return p;
    };

    int count = 0;
    const cudaError_t ce = cudaGetDeviceCount(&count);
    const Status first = statusFromDeviceCount(ce, p.driverVersion, count);
    if (first != Status::Ok)
        return finish(first, ce == cudaSuccess ? std::string() : cudaGetErrorName(ce));
    if (options.device >= count)
        return finish(Status::NoDevice,
                      "device " + std::to_string(options.device) + " requested, " + std::to_string(count) + " visible");

    std::vector<int> devices;
    if (options.allDevices)
        for (int d = 0; d < count; ++d)
            devices.push_back(d);
    else
        devices.push_back(options.device);
    if (options.list) {
        for (int d : devices)
            p.devices.push_back(identity(d));
        return finish(Status::Ok, "identities only (--list)");
    }

    // Progress: every planned step of every device, then the all-reduce.
    std::vector<std::vector<Step>> plans;
    int total = 0;
    for (int d : devices) {
        const bool fp8 =
            attribute(cudaDevAttrComputeCapabilityMajor, d) * 10 + attribute(cudaDevAttrComputeCapabilityMinor, d) >=
            89;
        plans.push_back(plannedSteps(fp8));
        total += static_cast<int>(plans.back().size());
    }
    const bool allReduce = count >= 2;
    total += allReduce ? 1 : 0;
    int step = 0;
    auto announce = [&](const std::string& id) {
        ++step;
        if (progress)
            progress(progressLine(step, total, id));
    };
    const double perDevice = cap * (allReduce ? 0.9 : 1.0) / static_cast<double>(devices.size());

    for (size_t di = 0; di < devices.size(); ++di) {
        const int dev = devices[di];
        double devStart = nowSeconds(); // moved on by --soak, which is not in the cap
        DeviceReport rep = identity(dev);
        // First allocation and launch: a missing kernel image or a busy device shows up here.
        cudaError_t e = cudaSetDevice(dev);
        float* probe = nullptr;
        if (e == cudaSuccess)
            e = cudaMalloc(reinterpret_cast<void**>(&probe), 1024 * sizeof(float));
        if (e == cudaSuccess)
            e = kernels::fillConst(probe, 1024, 1.f, 1, nullptr);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (probe)
            cudaFree(probe);
        if (e != cudaSuccess) {
            p.devices.clear();
            return finish(statusFromFirstLaunch(e),
                          std::string("device ") + std::to_string(dev) + ": " + cudaGetErrorName(e));
        }
        DeviceContext ctx;
        ctx.device = dev;
        ctx.sms = rep.sms;
        ctx.l2Bytes = rep.l2Bytes;
        ctx.quick = options.quick;
        ctx.grid = rep.sms * std::max(attribute(cudaDevAttrMaxThreadsPerMultiProcessor, dev) / kernels::kThreads, 1);
        cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking);

        std::string fatal;
        auto remaining = [&] { return perDevice - (nowSeconds() - devStart); };
        auto capFor = [&](double share) { return std::max(0.0, std::min(share * perDevice, remaining() - 0.5)); };
        // Clocks, power and temperature around each step (NVML), when the library loaded.
        Nvml::Sample before;
        auto begin = [&](const std::string& id) {
            announce(id);
            before = nvml.sample(rep.uuid);
        };
        auto end = [&](const std::string& id) {
            const Nvml::Sample after = nvml.sample(rep.uuid);
            if (before.ok && after.ok)
                rep.conditions.push_back(conditionsOf(id, before, after));
        };
        auto handle = [&](const std::string& id, cudaError_t err) {
            if (err == cudaSuccess)
                return;
            if (sticky(err))
                fatal = id + ": " + cudaGetErrorString(err);
            else {
                cudaGetLastError();
                rep.skipped.push_back({id, std::string("CUDA error: ") + cudaGetErrorString(err)});
            }
        };
        {
            StreamArrays arrays;
            size_t freeBytes = 0, totalBytes = 0;
            cudaMemGetInfo(&freeBytes, &totalBytes);
            const cudaError_t ae = arrays.allocate(static_cast<double>(freeBytes), rep.l2Bytes);
            for (const Step& s : plans[di]) {
                if (!fatal.empty())
                    break;
                if (s.id.rfind("gemm", 0) == 0)
                    break; // GEMMs run after the arrays are freed
                begin(s.id);
                if (ae != cudaSuccess) {
                    cudaGetLastError();
                    rep.skipped.push_back({s.id, "cannot allocate the stream arrays"});
                    continue;
                }
                if (capFor(s.share) <= 0) {
                    rep.skipped.push_back({s.id, "time cap reached"});
                    continue;
                }
                if (s.id == "hbm")
                    handle(s.id, measureMemory(ctx, arrays, capFor(s.share), rep));
                else if (s.id == "fma_fp32")
                    handle(s.id, measureFma(ctx, arrays, capFor(s.share), rep));
                else if (s.id == "intensity_sweep")
                    handle(s.id, measureIntensitySweep(ctx, arrays, capFor(s.share), rep));
                else if (s.id == "elementwise")
                    handle(s.id, measureElementwise(ctx, arrays, capFor(s.share), rep));
                else if (s.id == "host_links")
                    handle(s.id, measureHostLinks(ctx, arrays, capFor(s.share), rep));
                end(s.id);
            }
        }
        if (fatal.empty()) {
            GemmBench bench(lt, ctx.stream, ctx.grid);
            if (options.soakSeconds > 0 && bench.error().empty()) {
                const double soakStart = nowSeconds();
                before = nvml.sample(rep.uuid);
                soak(bench, options.soakSeconds);
                end("soak");
                devStart += nowSeconds() - soakStart;
            }
            for (const Step& s : plans[di]) {
                if (s.id.rfind("gemm", 0) != 0 || !fatal.empty())
                    continue;
                begin(s.id);
                if (!bench.error().empty()) {
                    rep.skipped.push_back({s.id, bench.error()});
                    continue;
                }
                if (capFor(s.share) <= 0) {
                    rep.skipped.push_back({s.id, "time cap reached"});
                    continue;
                }
                if (s.id == "gemm_m_sweep")
                    measureMSweep(ctx, bench, capFor(s.share), rep);
                else if (s.id.rfind("gemm_shapes_", 0) == 0)
                    measureShapes(ctx, bench, s.id.substr(12), capFor(s.share), rep);
                else
                    measureGemm(ctx, bench, s.id.substr(5), capFor(s.share), rep);
                if (const cudaError_t le = cudaGetLastError(); le != cudaSuccess)
                    handle(s.id, le);
                end(s.id);
            }
        }
        if (!plans[di].empty() &&
            std::none_of(plans[di].begin(), plans[di].end(), [](const Step& s) { return s.id == "gemm_fp8_e4m3"; }))
            rep.skipped.push_back({"gemm_fp8_e4m3", "fp8 e4m3 GEMMs need compute capability 8.9 or newer"});
        if (ctx.stream)
            cudaStreamDestroy(ctx.stream);
        p.devices.push_back(rep);
        if (!fatal.empty())
            return finish(Status::Error, fatal);
    }
    if (allReduce) {
        announce("nccl_allreduce");
        std::string why;
        measureAllReduce(nccl, count, options.quick, std::max(1.0, cap - (nowSeconds() - t0) - 0.5), p, why);
        if (!why.empty())
            for (DeviceReport& d : p.devices)
                d.skipped.push_back({"nccl_allreduce", why});
    } else {
        for (DeviceReport& d : p.devices)
            d.skipped.push_back({"nccl_allreduce", "one GPU: all-reduce bus bandwidth needs two or more"});
    }
    return finish(Status::Ok, "");
}

} // namespace napkin::gpu
