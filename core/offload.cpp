// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "offload.h"

#include <algorithm>
#include <charconv>
#include <string>

namespace napkin::core {

std::string gbText(double bytes)
{
    // std::to_chars: locale-independent and far cheaper than printf's %f (estimate() runs per slider step).
    char buf[48];
    const auto r = std::to_chars(buf, buf + sizeof buf - 4, bytes / 1e9, std::chars_format::fixed, 1);
    return std::string(buf, r.ec == std::errc() ? r.ptr : buf) + " GB";
}

OffloadedStates offloadedStates(const OffloadConfig& o, double gradientShard, bool weightsAreMaster)
{
    OffloadedStates s;
    const bool states = o.optimizer != OffloadTarget::None, params = o.params != OffloadTarget::None;
    s.optimizer = states;
    s.master = states || (params && weightsAreMaster);
    s.gradients = states && gradientShard > 1;
    s.weights = params;
    return s;
}

namespace {

void toTarget(OffloadTarget t, double bytes, double& hostBucket, HostMemory& host, bool states = false)
{
    if (t == OffloadTarget::Nvme) {
        host.nvme += bytes;
        if (states)
            host.nvmeStates += bytes;
    } else
        hostBucket += bytes;
}

} // namespace

void offloadStates(const OffloadConfig& o, const OffloadStates& s, StageMemory& mem, HostMemory& host)
{
    const OffloadedStates off = offloadedStates(o, s.shardG, s.weightsAreMaster);
    if (off.optimizer) {
        // ZeRO-Offload (Ren et al. 2021 §4.1): fp32 master copy and the moments on the CPU, which
        // runs the update (an fp32 copy even where the plan keeps no master).
        toTarget(o.optimizer, mem.master > 0 ? mem.master : s.heldO * 4, host.master, host, true);
        toTarget(o.optimizer, mem.optimizer, host.optimizer, host, true);
        mem.master = 0;
        mem.optimizer = 0;
        if (o.optimizer == OffloadTarget::Nvme)
            host.pinnedBuffers += 4 * kNvmeBufferElements * 4;
    }
    if (off.gradients) {
        // With ZeRO-2 the reduced gradient shards go to the host, in fp32 for the CPU update.
        host.gradients += s.heldG * 4;
        mem.gradients = 0;
    }
    if (off.weights) {
        // ZeRO-Infinity offload_param / FSDP CPUOffload: the parameter shards live on the host and are
        // copied in before each all-gather. FSDP2's shard is the fp32 master itself.
        toTarget(o.params, mem.weights, host.weights, host);
        mem.weights = 0;
        if (off.master && !off.optimizer && mem.master > 0) {
            toTarget(o.params, mem.master, host.master, host);
            mem.master = 0;
        }
        if (o.params == OffloadTarget::Nvme)
            host.pinnedBuffers += 5 * kNvmeBufferElements * s.weightBytes;
    }
}

double offloadActivations(const OffloadConfig& o, double units, double unitBytes, double inFlight, HostMemory& host)
{
    if (!o.activations || units <= 2)
        return 0;
    // Megatron-Core's CPU offloading (--cpu-offloading): a layer's saved tensors go to the host after
    // its forward and come back ahead of its backward; double buffering keeps two on the GPU.
    const double moved = (units - 2) * unitBytes;
    host.activations += moved;
    host.activationsPerMicroBatch = moved / std::max(1.0, inFlight);
    return moved;
}

namespace {

// The GPUs that share one node's host memory and DRAM bandwidth.
double gpusOnANode(const Scenario& sc)
{
    return double(std::min<std::int64_t>(sc.cluster.gpus, std::max(1, sc.parallel.gpusPerNode)));
}

// Bytes each offload moves per step per GPU, and the seconds that cannot overlap the GPU's work.
struct Traffic {
    double pcie = 0, nvme = 0;
    double hidden = 0;     // host-link bytes that overlap compute (prefetch, write-back)
    double afterStep = 0;  // host-link bytes after the CPU update (the new parameters)
    double cpuUpdate = 0;  // seconds of the CPU optimizer step
    double nvmeStates = 0; // seconds reading and writing the states on NVMe
    double nvmeParams = 0; // NVMe bytes of parameter reads (overlap compute)
};

Traffic offloadTraffic(const Scenario& sc, const Plan& p)
{
    Traffic t;
    const auto& o = sc.offload;
    const auto& m = p.memory;
    const double microBatches = double(std::max<std::int64_t>(1, p.compute.accumulationSteps));
    const double Pr = m.paramsPerRank > 0 ? m.paramsPerRank : p.params.total;
    const double shardO = std::max(1.0, m.optimizerRate.shard), shardG = std::max(1.0, m.gradientsRate.shard);
    const double shardW = std::max(1.0, m.weightsRate.shard);
    const double bw = bytesPerValue(sc.precision.weights), bg = bytesPerValue(sc.precision.gradients);
    if (o.optimizer != OffloadTarget::None) {
        // Gradients stream to the host during the backward; after the CPU update the new 16-bit
        // parameters come back before the next forward (Ren et al. 2021 §4.1, without DPU).
        const double grads = Pr / shardG * bg, params = Pr / shardO * bw;
        t.hidden += grads;
        t.afterStep += params;
        t.pcie += grads + params;
        const double hostBw =
            sc.cluster.hostMemoryBandwidth > 0 ? sc.cluster.hostMemoryBandwidth : kDefaultHostMemoryBandwidth;
        t.cpuUpdate = Pr / shardO * kCpuAdamBytesPerParam / (hostBw / gpusOnANode(sc));
        if (o.optimizer == OffloadTarget::Nvme && o.nvmeBandwidth > 0) {
            t.nvme += 2 * m.host.nvmeStates;
            t.nvmeStates = 2 * m.host.nvmeStates / o.nvmeBandwidth;
        }
    }
    if (o.params != OffloadTarget::None) {
        // Each micro-batch's forward and backward copy every parameter shard in before its all-gather.
        const double perStep = 2 * microBatches * Pr / shardW * bw;
        t.pcie += perStep;
        t.hidden += perStep;
        if (o.params == OffloadTarget::Nvme) {
            t.nvme += perStep;
            t.nvmeParams = perStep;
        }
    }
    if (o.activations) {
        // Out after the forward, back before the backward, for every micro-batch.
        const double perStep = 2 * microBatches * m.host.activationsPerMicroBatch;
        t.pcie += perStep;
        t.hidden += perStep;
    }
    return t;
}

} // namespace

void finishHostMemory(const Scenario& sc, Plan& p)
{
    auto& h = p.memory.host;
    h.total = h.weights + h.gradients + h.master + h.optimizer + h.activations + h.pinnedBuffers;
    h.perNode = h.total * gpusOnANode(sc);
    h.capacityPerNode = sc.cluster.hostMemoryBytes;
    h.fits = h.capacityPerNode <= 0 || h.perNode <= h.capacityPerNode;
    // The host link per direction (the catalogue's figure is both directions) at the DMA efficiency,
    // or offload.pcie_bandwidth.
    const auto& gpu = *sc.gpu;
    h.pcieBandwidth =
        sc.offload.pcieBandwidth > 0 ? sc.offload.pcieBandwidth : gpu.hostLinkBytesPerSecond / 2 * kPcieDmaEfficiency;
    if (!sc.offload.any())
        return;
    const Traffic t = offloadTraffic(sc, p);
    h.pcieBytesPerStep = t.pcie;
    h.nvmeBytesPerStep = t.nvme;
    if (!h.fits)
        p.warnings.push_back({"host_memory_short", "offload needs " + gbText(h.perNode) + " of host memory per node (" +
                                                       gbText(h.total) + " per GPU) but cluster.host_memory_bytes is " +
                                                       gbText(h.capacityPerNode)});
    if (h.pcieBandwidth <= 0)
        p.warnings.push_back({"no_host_link", gpu.name +
                                                  " has no published host-link bandwidth: offload traffic is not "
                                                  "timed; set offload.pcie_bandwidth"});
}

OffloadTime offloadSeconds(const Scenario& sc, const Plan& p, double computeSeconds)
{
    OffloadTime r;
    if (!sc.offload.any())
        return r;
    const Traffic t = offloadTraffic(sc, p);
    const double link = p.memory.host.pcieBandwidth;
    if (link > 0) {
        r.linkHidden = std::max(0.0, t.hidden / link - computeSeconds);
        r.afterStep = t.afterStep / link;
    }
    const double nvme = sc.offload.nvmeBandwidth;
    if (nvme > 0 && t.nvmeParams > 0)
        r.nvmeParams = std::max(0.0, t.nvmeParams / nvme - computeSeconds);
    // ZeRO-Infinity reads and writes the states from NVMe in chunks the CPU updates in turn: the
    // slower of the two binds.
    r.update = std::max(t.cpuUpdate, t.nvmeStates);
    r.total = r.linkHidden + r.afterStep + r.nvmeParams + r.update;
    return r;
}

} // namespace napkin::core
