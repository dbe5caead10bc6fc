// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The memory-bucket table (core/buckets.h) against the plan schema (docs/plan-schema.md §4) it
// stands for: keys, ledger order, derivations, and the accessors reading the right field.
#include "testsupport.h"

#include "buckets.h"
#include "format.h"

#include <set>
#include <string>

using namespace napkin;

class TestBuckets : public QObject {
    Q_OBJECT
private slots:
    void keysInLedgerOrder()
    {
        // docs/plan-schema.md §4: memory.per_gpu, in ledger order.
        const char* const expected[] = {"weights",     "gradients",   "master_weights", "optimizer_states",
                                        "activations", "temporaries", "overhead"};
        QCOMPARE(core::kMemoryBucketCount, int(std::size(expected)));
        for (int i = 0; i < core::kMemoryBucketCount; ++i) {
            const auto& b = core::kMemoryBuckets[std::size_t(i)];
            QCOMPARE(std::string(b.id), std::string(expected[i]));
            QCOMPARE(std::string(b.quantity), "memory.per_gpu." + std::string(expected[i]));
            QCOMPARE(int(b.bucket), i);
            QCOMPARE(&core::memoryBucket(b.bucket), &b);
            QVERIFY(b.residence == core::Residence::Gpu); // no offload yet
            QVERIFY(*b.label && *b.title && *b.heading && *b.symbol && *b.holds && *b.formula);
        }
    }

    void tensorBucketsAreAllButOverhead()
    {
        QCOMPARE(core::kTensorBucketCount, 6);
        for (int i = 0; i < core::kTensorBucketCount; ++i)
            QCOMPARE(&core::tensorBucket(i), &core::kMemoryBuckets[std::size_t(i)]);
        QVERIFY(core::memoryBucket(core::Bucket::Overhead).stageBytes == nullptr);
    }

    void accessorsReadTheirOwnField()
    {
        core::MemoryLedger m;
        m.weights = 1;
        m.gradients = 2;
        m.masterWeights = 4;
        m.optimizerStates = 8;
        m.activations = 16;
        m.temporaries = 32;
        m.overhead = 64;
        m.weightsRate.bytesPerParam = 0.5;
        m.optimizerRate.bytesPerParam = 12;
        core::StageMemory s{0, 100, 200, 400, 800, 1600, 3200, 0, 0};
        double want = 1;
        for (const auto& b : core::kMemoryBuckets) {
            QCOMPARE(core::bucketBytes(b, m), want);
            QCOMPARE(core::bucketBytes(b, s), b.stageBytes ? 100 * want : 0.0);
            want *= 2;
        }
        QCOMPARE(core::tensorBytes(m), 63.0);
        QCOMPARE(core::tensorBytes(s), 6300.0);
        QCOMPARE(core::bucketRate(core::memoryBucket(core::Bucket::Weights), m)->bytesPerParam, 0.5);
        QCOMPARE(core::bucketRate(core::memoryBucket(core::Bucket::OptimizerStates), m)->bytesPerParam, 12.0);
        QVERIFY(!core::bucketRate(core::memoryBucket(core::Bucket::Activations), m));
    }

    void dtypes()
    {
        const auto sc = test::scenario({"precision.plan=fp8-mixed"});
        const auto& pr = sc.precision;
        QVERIFY(pr.master && pr.weights != pr.optimizer);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::Weights), pr) == pr.weights);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::Gradients), pr) == pr.gradients);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::MasterWeights), pr) == pr.master);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::OptimizerStates), pr) == pr.optimizer);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::Activations), pr) == pr.activations);
        QVERIFY(core::bucketDType(core::memoryBucket(core::Bucket::Temporaries), pr) == pr.activations);
        QVERIFY(!core::bucketDType(core::memoryBucket(core::Bucket::Overhead), pr));
        const auto noMaster = test::scenario({"precision.plan=bf16-mixed"});
        QVERIFY(!noMaster.precision.master);
        QVERIFY(!core::bucketDType(core::memoryBucket(core::Bucket::MasterWeights), noMaster.precision));
    }

    // Every bucket has its derivation in a plan, and the total's formula sums them by symbol.
    void derivationsAndTotal()
    {
        const auto plan = core::estimate(test::scenario({}));
        std::set<std::string> quantities;
        for (const auto& d : plan.derivations)
            quantities.insert(d.quantity);
        for (const auto& b : core::kMemoryBuckets)
            QVERIFY2(quantities.count(b.quantity), b.quantity);
        for (const auto& d : plan.derivations)
            if (std::string(d.quantity) == "memory.per_gpu.total")
                QCOMPARE(
                    core::formulaText(d),
                    std::string("weights + gradients + master + optimizer + activations + temporaries + overhead"));
        const auto& m = plan.memory;
        QCOMPARE(m.total, m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations +
                              m.temporaries + m.overhead);
    }
};

QTEST_GUILESS_MAIN(TestBuckets)
#include "tst_buckets.moc"
