// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// GPU memory the communication runtime holds on the reported rank: NCCL's buffers for each
// communicator it belongs to (TP, CP, DP, PP), NVLink SHARP buffers on NVSwitch systems, and the
// data-parallel framework's gradient buckets. Replaces a single comm-buffer guess with one figure
// per group, each with its derivation (memory.comm_buffers in the plan).

#include "plan.h"
#include "scenario.h"

namespace napkin::core {

// NCCL's buffers per connection, one set per protocol (NVIDIA/nccl src/include/device.h):
// LL 8 lines/thread · 512 threads · 8 steps · 16 B = 524,288; LL128 120 elements/thread · 640
// threads · 8 steps · 8 B = 4,915,200; Simple NCCL_BUFFSIZE 4 MiB = 4,194,304.
inline constexpr double kNcclConnectionBytes = 524288.0 + 4915200.0 + 4194304.0;
// Channels NCCL opens on an 8-GPU H100 node ("24 coll channels, 16 nvls channels, 32 p2p channels,
// 32 p2p channels per peer", NCCL 2.2x INIT log on p5.48xlarge); across nodes its p2p uses 2
// channels per peer ("2 p2p channels per peer", NCCL_NCHANNELS_PER_NET_PEER's default).
inline constexpr double kNcclCollChannels = 24;
inline constexpr double kNcclP2pChannelsPerPeerIntra = 32;
inline constexpr double kNcclP2pChannelsPerPeerInter = 2;
inline constexpr double kNcclNvlsChannels = 16;
// NVLS buffers: channels · 2 (reduce and broadcast) · NCCL_NVLS_CHUNKSIZE 128 KiB · NCCL_STEPS 8 per
// head, one head per rank of the node (src/transport/nvls.cc ncclNvlsBufferSetup).
inline constexpr double kNcclNvlsBufferBytes = 131072.0 * 8;
// DeepSpeed ZeRO's reduce_bucket_size default: 5e8 elements (DeepSpeed config docs); backward()
// allocates one ipg_buffer of that many elements in the 16-bit dtype (runtime/zero/stage_1_and_2.py).
inline constexpr double kDeepSpeedReduceBucketElements = 5e8;
// CUDA graphs captured per layer keep the forward's temporaries allocated: activations ~20% larger
// (NVIDIA NeMo docs, features/optimizations/cudagraphs.md, Megatron-Core's CudaGraphManager).
inline constexpr double kCudaGraphActivationFraction = 0.20;

// The communicators of the layout and their buffers, and the framework's buckets.
CommBuffers commBuffers(const Scenario& sc, std::int64_t dataParallel);
// Once the rank's gradients are known: PyTorch DDP's buckets copy them; the total counted as comm
// buffers (overhead.comm_buffer_bytes, when given, replaces it).
void finishCommBuffers(const Scenario& sc, double gradientBytes, CommBuffers& c);

} // namespace napkin::core
