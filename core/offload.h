// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Offload: the model states ZeRO-Offload / ZeRO-Infinity keep on the host or NVMe, the activations
// Megatron-Core's CPU offloading moves to the host, the host memory that needs, and what the moves
// and the CPU's optimizer step add to the step time.

#include "plan.h"
#include "scenario.h"

namespace napkin::core {

// PCIe DMA efficiency: NVIDIA's nvbandwidth reports host_to_device_memcpy_ce at 55.6 GB/s on a PCIe
// Gen5 x16 link (NVIDIA technical blog on nvbandwidth), 0.87 of its 64 GB/s per direction; TLP
// headers and flow control cost the rest at every generation (128b/130b encoding from Gen3).
inline constexpr double kPcieDmaEfficiency = 0.87;
// Bytes the CPU Adam update moves per parameter: reads the fp32 parameter, gradient and two moments
// (16 B), writes the parameter and the moments (12 B) and the 16-bit copy sent to the GPU (2 B)
// (DeepSpeed csrc/adam/cpu_adam_impl.cpp Step_AVX); memory-bound on the host's DRAM.
inline constexpr double kCpuAdamBytesPerParam = 30;
// ZeRO-Infinity's pinned staging buffers for NVMe (DeepSpeed config docs): offload_optimizer
// buffer_count 4, offload_param buffer_count 5, each buffer_size 1e8 elements.
inline constexpr double kNvmeBufferElements = 1e8;

// Which model states offload.* keeps off the GPU (one rule for the ledger, its state rates and the
// derivations): ZeRO-Offload moves the master copy and the optimizer states, and the gradients once
// they are sharded (ZeRO-2 or above); parameter offload moves the weights, and the master copy too
// where FSDP2's sharded fp32 parameter is the master.
struct OffloadedStates {
    bool weights = false, gradients = false, master = false, optimizer = false;
};
OffloadedStates offloadedStates(const OffloadConfig& o, double gradientShard, bool weightsAreMaster);

// What a stage's model states look like before offload: its parameters and shard counts.
struct OffloadStates {
    double params = 0;
    double shardG = 1, shardO = 1;
    // Values the rank holds after sharding: params / shardG and params / shardO, or with experts
    // sharded over their own (expert data-parallel) group, the sum of both parts.
    double heldG = 0, heldO = 0;
    double weightBytes = 2;        // bytes per value of the weight dtype
    bool weightsAreMaster = false; // FSDP2: the sharded fp32 parameter is the master copy
};

// Moves the offloaded model states of one stage off the GPU (mem's buckets) into host (or NVMe).
void offloadStates(const OffloadConfig& o, const OffloadStates& s, StageMemory& mem, HostMemory& host);

// Activation offload: of `units` saved units (layers, or checkpoint boundaries, of every micro-batch
// in flight) of `unitBytes` each, the GPU keeps two (the one in use and the one in transfer);
// returns the bytes offloaded and adds them to host (inFlight: the micro-batches among the units).
double offloadActivations(const OffloadConfig& o, double units, double unitBytes, double inFlight, HostMemory& host);

// "12.3 GB": one decimal, locale-independent (the warnings' figures).
std::string gbText(double bytes);

// Host totals, the node's share against cluster.host_memory_bytes, the link's achieved bandwidth,
// and the host_memory_short warning.
void finishHostMemory(const Scenario& sc, Plan& p);

// Seconds per step that offload adds to the predicted step: host-link traffic the GPU's compute does
// not hide, the new parameters' copy after the update, NVMe parameter reads, and the CPU update
// (bound by host DRAM bandwidth; with NVMe states, the slower of it and the state reads/writes).
struct OffloadTime {
    double linkHidden = 0, afterStep = 0, nvmeParams = 0, update = 0;
    double total = 0;
};
OffloadTime offloadSeconds(const Scenario& sc, const Plan& p, double computeSeconds);

} // namespace napkin::core
