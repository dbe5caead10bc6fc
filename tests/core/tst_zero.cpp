// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// ZeRO (Rajbhandari et al. 2019, §3) worked example: Ψ = 7.5B, N_d = 64 (tests/data/golden.json).
#include "testsupport.h"

using namespace napkin;
using napkin::test::golden;

class TestZero : public QObject {
    Q_OBJECT
private slots:
    void workedExample_data()
    {
        QTest::addColumn<int>("stage");
        QTest::addColumn<double>("expectedGb");
        const auto& g = golden()["zero_example"];
        for (int s = 0; s < 4; ++s)
            QTest::newRow(qPrintable(QStringLiteral("stage %1").arg(s)))
                << s << g["stage_gb"][std::size_t(s)].get<double>();
    }
    void workedExample()
    {
        QFETCH(int, stage);
        QFETCH(double, expectedGb);
        const auto& g = golden()["zero_example"];
        // The paper's K = 12: fp32 master + Adam m + v; 2-byte parameters and gradients.
        const auto plan = core::estimate(
            napkin::test::scenario({R"(model={"params": 7.5e9})", "precision.plan=bf16-mixed-master",
                                    "optimizer.name=adam", "cluster.gpus=" + std::to_string(g["dp"].get<int>()),
                                    "parallel.zero=" + std::to_string(stage), "training.global_batch=64"}));
        const auto& m = plan.memory;
        const double states = (m.weights + m.gradients + m.masterWeights + m.optimizerStates) / 1e9;
        QVERIFY2(std::abs(states - expectedGb) <= g["tol_abs_gb"].get<double>(),
                 qPrintable(QStringLiteral("got %1 GB, want %2").arg(states).arg(expectedGb)));
    }

    void megatronPlanIsEighteenBytes()
    {
        const auto plan = core::estimate(napkin::test::scenario({"precision.plan=megatron", "cluster.gpus=1"}));
        QCOMPARE(plan.memory.statesBytesPerParam, 18.0);
    }

    void optimizerStateCounts_data()
    {
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<double>("states");
        // CS336 lecture 2 lattice and the issue's list.
        QTest::newRow("sgd") << QStringLiteral("sgd") << 0.0;
        QTest::newRow("momentum") << QStringLiteral("momentum") << 1.0;
        QTest::newRow("adagrad") << QStringLiteral("adagrad") << 1.0;
        QTest::newRow("rmsprop") << QStringLiteral("rmsprop") << 1.0;
        QTest::newRow("adam") << QStringLiteral("adam") << 2.0;
        QTest::newRow("adamw") << QStringLiteral("adamw") << 2.0;
        QTest::newRow("lion") << QStringLiteral("lion") << 1.0;
        QTest::newRow("muon") << QStringLiteral("muon") << 1.0;
    }
    void optimizerStateCounts()
    {
        QFETCH(QString, optimizer);
        QFETCH(double, states);
        const auto plan =
            core::estimate(napkin::test::scenario({R"(model={"params": 1e9})", "precision.plan=fp32", "cluster.gpus=1",
                                                   "optimizer.name=" + optimizer.toStdString()}));
        QCOMPARE(plan.memory.optimizerStates, 1e9 * 4 * states);
    }

    void adafactorIsFactored()
    {
        // Toy model D = 4, L = 2, head: two 4x4 matrices (4 + 4 each) and a 4x1 head (4 + 1): 21 values.
        const auto plan = core::estimate(napkin::test::scenario(
            {R"(model={"kind": "mlp", "width": 4, "layers": 2, "head": true})", "precision.plan=fp32", "cluster.gpus=1",
             "optimizer.name=adafactor", "training.micro_batch=2", "training.global_batch=2"}));
        QCOMPARE(plan.memory.optimizerStates, 21.0 * 4);
    }

    void blockScaledWeights()
    {
        // NVFP4: 0.5 byte per value + one E4M3 byte per 16 values = 0.5625 B/param, plus 4 bytes per tensor.
        const auto sc =
            napkin::test::scenario({"model.preset=llama-2-7b", "precision.weights=nvfp4", "cluster.gpus=1"});
        const auto plan = core::estimate(sc);
        const double P = 6738415616.0;
        const double tensors = 32 * 7 + 2; // q, k, v, o, gate, up, down per layer + embedding + head
        QCOMPARE(plan.memory.weights, P * 0.5625 + 4 * tensors);
    }
};

QTEST_GUILESS_MAIN(TestZero)
#include "tst_zero.moc"
