// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cudalibs.h"
#include "kernels.h"
#include "runner.h"
#include "stats.h"
#include "timing.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

namespace napkin::gpu {

void measureAllReduce(const Nccl& nccl, int devices, bool quick, double capSeconds, Profile& out,
                      std::string& skippedReason)
{
    if (devices < 2) {
        skippedReason = "one GPU: all-reduce bus bandwidth needs two or more";
        return;
    }
    if (!nccl.info.loaded) {
        skippedReason = "NCCL not loaded: " + nccl.info.error;
        return;
    }
    const double t0 = nowSeconds();
    // 1 MiB .. 1 GiB in x4 steps (64 MiB in quick mode); fp32 sums.
    std::vector<size_t> sizes;
    for (size_t b = size_t(1) << 20; b <= (size_t(quick ? 64 : 1024) << 20); b *= 4)
        sizes.push_back(b);
    const size_t maxBytes = sizes.back();
    std::vector<ncclComm_t> comms(static_cast<size_t>(devices), nullptr);
    std::vector<float*> send(comms.size(), nullptr), recv(comms.size(), nullptr);
    std::vector<cudaStream_t> streams(comms.size(), nullptr);
    auto cleanup = [&] {
        for (size_t r = 0; r < comms.size(); ++r) {
            cudaSetDevice(static_cast<int>(r));
            if (comms[r])
                nccl.commDestroy(comms[r]);
            if (send[r])
                cudaFree(send[r]);
            if (recv[r])
                cudaFree(recv[r]);
            if (streams[r])
                cudaStreamDestroy(streams[r]);
        }
    };
    std::vector<int> list(comms.size());
    for (int r = 0; r < devices; ++r)
        list[static_cast<size_t>(r)] = r;
    cudaError_t e = cudaSuccess;
    for (int r = 0; r < devices && e == cudaSuccess; ++r) {
        const size_t i = static_cast<size_t>(r);
        e = cudaSetDevice(r);
        if (e == cudaSuccess)
            e = cudaMalloc(reinterpret_cast<void**>(&send[i]), maxBytes);
        if (e == cudaSuccess)
            e = cudaMalloc(reinterpret_cast<void**>(&recv[i]), maxBytes);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking);
        // nccl-tests -c: rank r holds r + 1, so every sum is n(n + 1)/2
        if (e == cudaSuccess)
            e = kernels::fillConst(send[i], static_cast<long long>(maxBytes / 4), static_cast<float>(r + 1), 1024,
                                   streams[i]);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(streams[i]);
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        skippedReason = std::string("buffers: ") + cudaGetErrorString(e);
        cleanup();
        return;
    }
    if (const ncclResult_t nr = nccl.commInitAll(comms.data(), devices, list.data()); nr != ncclSuccess) {
        skippedReason = std::string("ncclCommInitAll: ") + nccl.getErrorString(nr);
        std::fill(comms.begin(), comms.end(), nullptr);
        cleanup();
        return;
    }
    auto allReduce = [&](size_t bytes) {
        nccl.groupStart();
        ncclResult_t nr = ncclSuccess;
        for (size_t r = 0; r < comms.size() && nr == ncclSuccess; ++r)
            nr = nccl.allReduce(send[r], recv[r], bytes / 4, ncclFloat, ncclSum, comms[r], streams[r]);
        const ncclResult_t g = nccl.groupEnd();
        return nr == ncclSuccess ? g : nr;
    };
    auto syncAll = [&] {
        cudaError_t s = cudaSuccess;
        for (size_t r = 0; r < streams.size() && s == cudaSuccess; ++r) {
            cudaSetDevice(static_cast<int>(r));
            s = cudaStreamSynchronize(streams[r]);
        }
        return s;
    };
    Link link;
    link.id = "nccl_allreduce";
    link.ranks = devices;
    const int rankSum = devices * (devices + 1) / 2; // 1 + 2 + ... + devices, a whole number
    const float expected = static_cast<float>(rankSum);
    bool verified = true;
    for (size_t bytes : sizes) {
        if (nowSeconds() - t0 > capSeconds)
            break;
        // nccl-tests recipe: warm-ups, then a host clock around `iters` all-reduces and a stream sync.
        const int warmups = 5, iters = quick ? 10 : 20;
        bool ok = true;
        for (int w = 0; w < warmups && ok; ++w)
            ok = allReduce(bytes) == ncclSuccess;
        ok = ok && syncAll() == cudaSuccess;
        const double start = nowSeconds();
        for (int it = 0; it < iters && ok; ++it)
            ok = allReduce(bytes) == ncclSuccess;
        ok = ok && syncAll() == cudaSuccess;
        const double seconds = (nowSeconds() - start) / iters;
        if (!ok) {
            skippedReason = "an all-reduce failed";
            break;
        }
        for (size_t r = 0; r < comms.size(); ++r) { // every rank's result is n(n+1)/2
            cudaSetDevice(static_cast<int>(r));
            unsigned long long* bad = nullptr;
            unsigned long long host = 1;
            if (cudaMalloc(reinterpret_cast<void**>(&bad), sizeof *bad) == cudaSuccess) {
                // Everything on the rank's non-blocking stream (a plain cudaMemset/cudaMemcpy is not ordered with it).
                cudaMemsetAsync(bad, 0, sizeof *bad, streams[r]);
                kernels::countMismatches(recv[r], static_cast<long long>(bytes / 4), 0.f, expected, bad, 1024,
                                         streams[r]);
                cudaMemcpyAsync(&host, bad, sizeof host, cudaMemcpyDeviceToHost, streams[r]);
                cudaStreamSynchronize(streams[r]);
                cudaFree(bad);
            }
            verified = verified && host == 0;
        }
        const double algbw = static_cast<double>(bytes) / seconds;
        link.points.push_back({static_cast<double>(bytes), seconds, algbw, allReduceBusBw(algbw, devices)});
    }
    cleanup();
    if (!verified) {
        skippedReason = "all-reduce results were wrong; points dropped";
        return;
    }
    if (!link.points.empty())
        out.links.push_back(link);
}

} // namespace napkin::gpu
