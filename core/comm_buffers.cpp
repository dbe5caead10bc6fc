// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "comm_buffers.h"

#include <algorithm>

namespace napkin::core {

namespace {

// NVLink SHARP needs NVSwitch multicast: Hopper or later SXM boards (NVLink 4 or 5 to an NVSwitch),
// not PCIe cards with bridges (NCCL's nvlsSupport probes CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED).
bool hasNvls(const GpuSpec& gpu)
{
    return gpu.vendor == "NVIDIA" && gpu.computeCapability >= 90 && gpu.interconnectName.rfind("NVLink ", 0) == 0 &&
           gpu.interconnectName.size() > 7 && gpu.interconnectName[7] >= '4' && gpu.interconnectName[7] <= '9';
}

// A group of `ranks` GPUs whose members are `stride` ranks apart in the Megatron order (TP innermost).
CommGroup collectiveGroup(const char* name, double ranks, double stride, double gpusPerNode, bool nvls)
{
    CommGroup g;
    g.name = name;
    g.ranks = ranks;
    g.crossesNodes = ranks * stride > gpusPerNode;
    g.channels = kNcclCollChannels;
    // Ring and tree each connect to their neighbours: two buffer sets per channel on each rank
    // (sjeaugey, NVIDIA/nccl#986: "Ring ... only has 2 connections regardless of the scale").
    g.connections = 2;
    g.bytes = g.channels * g.connections * kNcclConnectionBytes;
    // NVLS within the node: one head per local rank of the group.
    const double local = std::min(ranks, std::max(1.0, gpusPerNode / stride));
    if (nvls && local > 1)
        g.nvlsBytes = kNcclNvlsChannels * 2 * kNcclNvlsBufferBytes * local;
    return g;
}

// Point-to-point: each peer gets a send and a receive connection on every p2p channel.
CommGroup p2pGroup(const char* name, double peers, bool crossesNodes)
{
    CommGroup g;
    g.name = name;
    g.ranks = peers;
    g.crossesNodes = crossesNodes;
    g.p2p = true;
    g.channels = crossesNodes ? kNcclP2pChannelsPerPeerInter : kNcclP2pChannelsPerPeerIntra;
    g.connections = 2 * peers;
    g.bytes = g.channels * g.connections * kNcclConnectionBytes;
    return g;
}

} // namespace

CommBuffers commBuffers(const Scenario& sc, std::int64_t dataParallel)
{
    CommBuffers c;
    const auto& par = sc.parallel;
    const double tp = std::max(1, par.tp), cp = std::max(1, par.cp), pp = std::max(1, par.pp);
    const double dp = double(std::max<std::int64_t>(1, dataParallel));
    const double grads = double(gradientGroupSize(sc, dataParallel));
    const double gpn = double(std::max(1, par.gpusPerNode));
    // TPUs run XLA collectives over ICI, not NCCL: no buffers counted.
    const bool nccl = sc.gpu->vendor == "NVIDIA" || sc.gpu->vendor == "AMD"; // RCCL keeps NCCL's buffer design
    const bool nvls = hasNvls(*sc.gpu);
    auto add = [&c](const CommGroup& g) {
        if (c.count < int(c.groups.size()))
            c.groups[std::size_t(c.count++)] = g;
        c.nccl += g.bytes + g.nvlsBytes;
    };
    if (nccl && sc.cluster.gpus > 1) {
        if (tp > 1)
            add(collectiveGroup("tp", tp, 1, gpn, nvls));
        // Context parallelism passes K and V around a ring of point-to-point sends (Megatron-Core / TE).
        if (cp > 1)
            add(p2pGroup("cp", 2, cp * tp > gpn));
        // The gradient group spans the context-parallel ranks too (gradientGroupSize).
        if (grads > 1)
            add(collectiveGroup("dp", grads, tp, gpn, nvls));
        // A middle stage sends to the next and receives from the previous one; both directions in the
        // backward. The neighbour is tp · cp · dp ranks away.
        if (pp > 1)
            add(p2pGroup("pp", 2, tp * cp * dp >= gpn));
    }
    // PyTorch DDP (gradient_as_bucket_view=False, its default) copies every gradient into an
    // all-reduce bucket: a second copy of the gradients (torch.nn.parallel.DistributedDataParallel
    // docs). Megatron's DDP writes gradients straight into its contiguous grad buffer (none extra).
    c.ddpCopiesGradients = sc.stepTime.framework == Framework::Torchtitan && effectiveZeroStage(sc) == 0 && grads > 1;
    if (sc.stepTime.framework == Framework::Deepspeed && effectiveZeroStage(sc) >= 1 && grads > 1)
        c.reduceBucket = kDeepSpeedReduceBucketElements * bytesPerValue(sc.precision.gradients);
    return c;
}

void finishCommBuffers(const Scenario& sc, double gradientBytes, CommBuffers& c)
{
    c.ddpBuckets = c.ddpCopiesGradients ? gradientBytes : 0.0;
    c.given = sc.overhead.commBufferBytes.has_value();
    c.total = c.given ? *sc.overhead.commBufferBytes : c.nccl + c.ddpBuckets;
}

} // namespace napkin::core
