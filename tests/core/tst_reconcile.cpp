// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Reconciling a measured run with its plan (CS336 lecture 2 exercises 2 and 3).
#include "testsupport.h"

#include "reconcile.h"

using namespace napkin;
using napkin::test::scenario;

class TestReconcile : public QObject {
    Q_OBJECT
private slots:
    void measuredMfuFromStepTime()
    {
        // 7B under 6PT on 8 H100s (989.5 TFLOP/s dense bf16), 64 sequences of 4096 per step, 2 s a step:
        // 262,144 tokens / 2 s = 131,072 tokens/s; MFU = 6 · 7e9 · 131072 / (8 · 989.5e12).
        const auto sc = scenario({"model.params=7e9", "flops.convention=6PT", "cluster.gpus=8", "training.seq_len=4096",
                                  "training.micro_batch=1", "training.global_batch=64"});
        const auto plan = core::estimate(sc);
        core::Errors errors;
        core::Measurement m;
        m.stepSeconds = 2.0;
        const auto r = core::reconcile(sc, plan, m, errors);
        QVERIFY(errors.empty());
        QCOMPARE(r.tokensPerSecond, 131072.0);
        NAPKIN_COMPARE_REL(r.mfu, 6 * 7e9 * 131072 / (8 * 989.5e12), 1e-12);
        QCOMPARE(r.hfu, r.mfu); // no recomputation
        // With full recompute the hardware does one more forward pass: HFU = MFU · 8/6.
        const auto full = scenario({"model.params=7e9", "flops.convention=6PT", "cluster.gpus=8",
                                    "training.seq_len=4096", "training.global_batch=64", "training.recompute=full"});
        const auto rf = core::reconcile(full, core::estimate(full), m, errors);
        NAPKIN_COMPARE_REL(rf.hfu / rf.mfu, 8.0 / 6.0, 1e-12);
    }

    void throughputOverridesStepTime()
    {
        const auto sc = scenario({"model.params=7e9", "flops.convention=6PT", "cluster.gpus=8"});
        core::Errors errors;
        core::Measurement m;
        m.tokensPerSecond = 1e5;
        const auto r = core::reconcile(sc, core::estimate(sc), m, errors);
        QVERIFY(errors.empty());
        NAPKIN_COMPARE_REL(r.mfu, 6 * 7e9 * 1e5 / (8 * 989.5e12), 1e-12);
    }

    void memoryGapAndReasons()
    {
        // 1e9 parameters, bf16-mixed (no master), one GPU: an fp32 master copy is 4 GB, and a run that
        // keeps one shows a gap it explains entirely.
        const auto sc =
            scenario({"model.params=1e9", "cluster.gpus=1", "training.seq_len=1024", "training.global_batch=8"});
        const auto plan = core::estimate(sc);
        core::Errors errors;
        core::Measurement m;
        m.stepSeconds = 1.0;
        const auto& mem = plan.memory;
        const double predicted = mem.weights + mem.gradients + mem.masterWeights + mem.optimizerStates +
                                 mem.activations + mem.temporaries + mem.overheadWorkspace;
        m.peakAllocatedBytes = predicted + 4e9;
        m.peakReservedBytes = predicted + 5e9;
        const auto r = core::reconcile(sc, plan, m, errors);
        QVERIFY(errors.empty());
        QCOMPARE(r.predictedAllocated, predicted);
        QCOMPARE(r.gapBytes, 4e9);
        QVERIFY(!r.reasons.empty());
        QCOMPARE(r.reasons.front().explainsFraction, 1.0);
        const auto master = std::find_if(r.reasons.begin(), r.reasons.end(), [](const core::GapReason& g) {
            return g.reason.find("master") != std::string::npos;
        });
        QVERIFY(master != r.reasons.end());
        QCOMPARE(master->bytes, 4e9);
        for (std::size_t i = 1; i < r.reasons.size(); ++i)
            QVERIFY(r.reasons[i - 1].explainsFraction >= r.reasons[i].explainsFraction);
        QVERIFY(!r.warnings.empty()); // reserved above allocated
    }

    void gapReasonsAreThisRanksSizes_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::addColumn<double>("gradShard"); // the gradients' ZeRO/FSDP shard the reasons must use
        // clang-format off
        QTest::newRow("TP 8, PP 4") << QStringList{QStringLiteral("parallel.tp=8"), QStringLiteral("parallel.pp=4")} << 1.0;
        QTest::newRow("ZeRO-3") << QStringList{QStringLiteral("parallel.zero=3")} << 64.0;
        QTest::newRow("FSDP full") << QStringList{QStringLiteral("parallel.zero=0"), QStringLiteral("parallel.fsdp=\"full\"")} << 64.0;
        QTest::newRow("TP 8 + ZeRO-1") << QStringList{QStringLiteral("parallel.tp=8"), QStringLiteral("parallel.zero=1")} << 1.0;
        // clang-format on
    }
    void gapReasonsAreThisRanksSizes()
    {
        // issue 13: reconcile re-derived sharding and explained gaps with whole-model sizes ("fp32 main
        // grads 141 GB" on a GPU holding 4.5 GB). Each reason is now this rank's, from the ledger.
        QFETCH(QStringList, sets);
        QFETCH(double, gradShard);
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        for (const auto& s : {"model.preset=llama-2-70b", "cluster.gpus=64", "training.recompute=\"full\""})
            core::applySet(doc, s, errors);
        for (const auto& s : sets)
            core::applySet(doc, s.toStdString(), errors);
        const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        const auto plan = core::estimate(sc);
        core::Measurement m;
        m.stepSeconds = 10.0;
        m.peakAllocatedBytes = plan.memory.total + 30e9; // a large gap, so every positive reason is listed
        const auto r = core::reconcile(sc, plan, m, errors);
        QVERIFY(errors.empty());
        // The rank's parameters: a 70B model split 8 × 4 ways holds about 1/32 of it, whole otherwise.
        const double Pr = plan.memory.paramsPerRank;
        const bool split = sets.contains(QStringLiteral("parallel.pp=4"));
        QVERIFY(split ? Pr < plan.params.total / 28 : Pr == plan.params.total || Pr < plan.params.total / 7);
        bool sawMainGrads = false;
        for (const auto& g : r.reasons)
            if (g.reason.find("main grads") != std::string::npos) {
                // bf16 gradients held in fp32 add 2 bytes to each 2-byte gradient: as much again as
                // the ledger's own gradient bucket, and the gradients' shard as stated per row.
                QCOMPARE(g.bytes, plan.memory.gradients);
                QCOMPARE(g.bytes, 2 * Pr / gradShard);
                sawMainGrads = true;
            }
        QVERIFY(sawMainGrads);
        // The activations reason is a re-plan's own ledger: the no-recompute, unfused plan minus this one.
        core::Scenario eager = sc;
        eager.training.recompute = core::Recompute::None;
        eager.training.flashAttention = false;
        const auto saved = std::find_if(r.reasons.begin(), r.reasons.end(), [](const core::GapReason& g) {
            return g.reason.find("saved intermediates") != std::string::npos;
        });
        QVERIFY(saved != r.reasons.end());
        QCOMPARE(saved->bytes, core::estimate(eager).memory.activations - plan.memory.activations);
    }

    void badMeasurementsNameTheirFlag_data()
    {
        QTest::addColumn<double>("step");
        QTest::addColumn<double>("allocated");
        QTest::addColumn<double>("reserved");
        QTest::addColumn<QString>("flag");
        QTest::newRow("zero step") << 0.0 << -1.0 << -1.0 << QStringLiteral("--step-time");
        QTest::newRow("negative step") << -3.0 << -1.0 << -1.0 << QStringLiteral("--step-time");
        QTest::newRow("zero allocated") << 1.0 << 0.0 << -1.0 << QStringLiteral("--peak-allocated");
        QTest::newRow("reserved below allocated") << 1.0 << 10e9 << 5e9 << QStringLiteral("--peak-reserved");
    }
    void badMeasurementsNameTheirFlag()
    {
        QFETCH(double, step);
        QFETCH(double, allocated);
        QFETCH(double, reserved);
        QFETCH(QString, flag);
        const auto sc = scenario({});
        core::Measurement m;
        m.stepSeconds = step;
        if (allocated >= 0)
            m.peakAllocatedBytes = allocated;
        if (reserved >= 0)
            m.peakReservedBytes = reserved;
        core::Errors errors;
        core::reconcile(sc, core::estimate(sc), m, errors);
        QVERIFY(!errors.empty());
        QCOMPARE(QString::fromStdString(errors.front().field), flag);
    }
};

QTEST_GUILESS_MAIN(TestReconcile)
#include "tst_reconcile.moc"
