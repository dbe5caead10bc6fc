// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "buckets.h"

#include <cassert>

namespace napkin::core {

const MemoryBucket& memoryBucket(Bucket bucket)
{
    const auto& b = kMemoryBuckets[std::size_t(bucket)];
    assert(b.bucket == bucket); // the table is in enum order
    return b;
}

const MemoryBucket& tensorBucket(int index)
{
    assert(index >= 0 && index < kTensorBucketCount);
    for (const auto& b : kMemoryBuckets)
        if (b.stageBytes && index-- == 0)
            return b;
    return kMemoryBuckets.front(); // not reached for a valid index
}

double bucketBytes(const MemoryBucket& bucket, const MemoryLedger& ledger) { return ledger.*bucket.ledgerBytes; }

double bucketBytes(const MemoryBucket& bucket, const StageMemory& stage)
{
    return bucket.stageBytes ? stage.*bucket.stageBytes : 0.0;
}

namespace {

// Summed in ledger order from 0: bit for bit the hand-written w + g + m + o + a + t.
template <class Memory>
double sumTensorBuckets(const Memory& memory)
{
    double sum = 0;
    for (const auto& b : kMemoryBuckets)
        if (b.stageBytes)
            sum += bucketBytes(b, memory);
    return sum;
}

} // namespace

double tensorBytes(const MemoryLedger& ledger) { return sumTensorBuckets(ledger); }
double tensorBytes(const StageMemory& stage) { return sumTensorBuckets(stage); }

const StateRate* bucketRate(const MemoryBucket& bucket, const MemoryLedger& ledger)
{
    return bucket.rate ? &(ledger.*bucket.rate) : nullptr;
}

std::optional<DType> bucketDType(const MemoryBucket& bucket, const PrecisionConfig& precision)
{
    switch (bucket.bucket) {
    case Bucket::Weights: return precision.weights;
    case Bucket::Gradients: return precision.gradients;
    case Bucket::MasterWeights: return precision.master;
    case Bucket::OptimizerStates: return precision.optimizer;
    case Bucket::Activations:
    case Bucket::Temporaries: return precision.activations;
    case Bucket::Overhead: return std::nullopt;
    }
    return std::nullopt;
}

} // namespace napkin::core
