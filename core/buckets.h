// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The memory ledger's buckets, listed once. Every writer of a ledger (plan JSON, text, Markdown and
// CSV, the ledger table and chart, the per-stage table, reports, reconcile) iterates this table
// instead of naming the buckets itself, so a new bucket (or one that moves to the host) is one row.

#include "plan.h"
#include "scenario.h"

#include <array>
#include <optional>

namespace napkin::core {

enum class Bucket { Weights, Gradients, MasterWeights, OptimizerStates, Activations, Temporaries, Overhead };

// Where a bucket's bytes live during the step. Everything is on the GPU today; offloading (ZeRO-Offload,
// activation offload) will put some on the host.
enum class Residence { Gpu, Host };

struct MemoryBucket {
    Bucket bucket;
    const char* id;       // plan-JSON key in memory.per_gpu and memory.per_stage[]: "master_weights"
    const char* quantity; // the derivation's quantity (plan-JSON path): "memory.per_gpu.master_weights"
    const char* label;    // as users read it in running text, CLI tables and the chart legend: "master weights"
    const char* title;    // a table row's title: "Master weights"
    const char* heading;  // a narrow column's heading (the per-stage table): "Master"
    const char* symbol;   // its symbol in memory.per_gpu.total's formula: "master"
    const char* holds;    // one line: what the bucket holds
    const char* formula;  // derivation formula (the general case; estimate names the special cases beside it)
    Residence residence;
    double MemoryLedger::*ledgerBytes;
    double StageMemory::*stageBytes; // nullptr: not a per-stage tensor bucket (runtime overhead)
    StateRate MemoryLedger::*rate;   // nullptr: not a model state stored per parameter
};

// Ledger order: the model states, then what the step creates, then the runtime's own.
inline constexpr std::array<MemoryBucket, 7> kMemoryBuckets{{
    {Bucket::Weights, "weights", "memory.per_gpu.weights", "weights", "Weights", "Weights", "weights",
     "the parameters in the weight dtype (with per-tensor scales), sharded by ZeRO-3 / FSDP full shard",
     "({P} · {bytes} + {scales}) / {shard}", Residence::Gpu, &MemoryLedger::weights, &StageMemory::weights,
     &MemoryLedger::weightsRate},
    {Bucket::Gradients, "gradients", "memory.per_gpu.gradients", "gradients", "Gradients", "Grads", "gradients",
     "one gradient per parameter in the gradient dtype, sharded from ZeRO-2", "{P} · {bytes} / {shard}", Residence::Gpu,
     &MemoryLedger::gradients, &StageMemory::gradients, &MemoryLedger::gradientsRate},
    {Bucket::MasterWeights, "master_weights", "memory.per_gpu.master_weights", "master weights", "Master weights",
     "Master", "master", "the optimizer's higher-precision copy of the parameters (none in pure low precision)",
     "{P} · {bytes} / {shard}", Residence::Gpu, &MemoryLedger::masterWeights, &StageMemory::master,
     &MemoryLedger::masterRate},
    {Bucket::OptimizerStates, "optimizer_states", "memory.per_gpu.optimizer_states", "optimizer states",
     "Optimizer states", "Optimizer", "optimizer",
     "the optimizer's per-parameter states (Adam's two moments), sharded from ZeRO-1",
     "{P} · {states} · {bytes} / {shard}", Residence::Gpu, &MemoryLedger::optimizerStates, &StageMemory::optimizer,
     &MemoryLedger::optimizerRate},
    {Bucket::Activations, "activations", "memory.per_gpu.activations", "activations", "Activations", "Activations",
     "activations", "what the forward pass saves for the backward, for every micro-batch in flight",
     "{L_stage} · {in_flight} · ({s} · {b} · ({per_token} + {per_score} · {a} · {s}) + {stats}) + {outside}",
     Residence::Gpu, &MemoryLedger::activations, &StageMemory::activations, nullptr},
    {Bucket::Temporaries, "temporaries", "memory.per_gpu.temporaries", "temporaries", "Temporaries", "Temporaries",
     "temporaries",
     "the logits and the fp32 loss path on the last pipeline stage, and the parameters ZeRO-3 / FSDP "
     "holds all-gathered",
     "{s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered}", Residence::Gpu, &MemoryLedger::temporaries,
     &StageMemory::temporaries, nullptr},
    {Bucket::Overhead, "overhead", "memory.per_gpu.overhead", "overhead", "Runtime overhead", "Overhead", "overhead",
     "the CUDA context, library workspaces, NCCL buffers and the caching allocator's reserve",
     "{context} + {workspace} + {comm} + {fraction} · {tensors}", Residence::Gpu, &MemoryLedger::overhead, nullptr,
     nullptr},
}};

inline constexpr int kMemoryBucketCount = int(kMemoryBuckets.size());

// The tensor buckets: those kept per pipeline stage (all but the runtime overhead).
inline constexpr int kTensorBucketCount = [] {
    int n = 0;
    for (const auto& b : kMemoryBuckets)
        n += b.stageBytes != nullptr ? 1 : 0;
    return n;
}();

const MemoryBucket& memoryBucket(Bucket bucket);
// The index-th tensor bucket in ledger order, 0 <= index < kTensorBucketCount.
const MemoryBucket& tensorBucket(int index);

// The bucket's bytes in a ledger, or in one pipeline stage (0 for a bucket not kept per stage).
double bucketBytes(const MemoryBucket& bucket, const MemoryLedger& ledger);
double bucketBytes(const MemoryBucket& bucket, const StageMemory& stage);

// The sum of the tensor buckets (every bucket kept per stage, in ledger order): what the runtime
// overhead's allocator reserve is a fraction of.
double tensorBytes(const MemoryLedger& ledger);
double tensorBytes(const StageMemory& stage);

// How a model-state bucket is stored per parameter; nullptr for the others.
const StateRate* bucketRate(const MemoryBucket& bucket, const MemoryLedger& ledger);

// The number format a bucket's tensors are stored in: nullopt for a plan with no master copy and for
// the runtime overhead (no one tensor type). Temporaries are logits in the activation dtype.
std::optional<DType> bucketDType(const MemoryBucket& bucket, const PrecisionConfig& precision);

} // namespace napkin::core
