// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// CS336 lecture 2 worked examples (tests/data/golden.json, CS-1 .. CS-17).
#include "testsupport.h"

#include "dtype.h"
#include "fit.h"
#include "roofline.h"

using namespace napkin;
using napkin::test::golden;
using napkin::test::scenario;

class TestSeeds : public QObject {
    Q_OBJECT
private slots:
    void cs1_cs2_seventyBillionOnFifteenTrillion()
    {
        const auto& g = golden()["seeds"];
        const auto plan =
            core::estimate(scenario({R"(model={"params": 70e9})", "training.tokens=15e12", "cluster.gpu=h100-sxm",
                                     "cluster.gpus=1024", "cluster.mfu=0.5", "flops.convention=6PT"}));
        NAPKIN_COMPARE_REL(plan.compute.trainingFlops, g["cs1_training_flops"]["expected"].get<double>(), 1e-12);
        NAPKIN_COMPARE_REL(plan.time.days, g["cs2_days"]["expected"].get<double>(), g["cs2_days"]["tol"].get<double>());
        QCOMPARE(plan.hardware.peakFlops, 989.5e12);
    }

    void cs3_cs4_fitOnEightGpus_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<double>("expected");
        const auto& g = golden()["seeds"];
        QTest::newRow("CS-3 fp32, 16 B/param")
            << QStringLiteral("fp32") << g["cs3_max_params_fp32"]["expected"].get<double>();
        QTest::newRow("CS-4 bf16-mixed, 12 B/param")
            << QStringLiteral("bf16-mixed") << g["cs4_max_params_bf16_mixed"]["expected"].get<double>();
    }
    void cs3_cs4_fitOnEightGpus()
    {
        QFETCH(QString, plan);
        QFETCH(double, expected);
        const auto r =
            core::fit(scenario({"cluster.gpu=h100-sxm", "cluster.gpus=8", "precision.plan=" + plan.toStdString()}));
        NAPKIN_COMPARE_REL(r.statesOnlyMaxParams, expected, 1e-3);
        // The full ledger (activations, overhead) always leaves room for less.
        QVERIFY(r.withActivationsMaxParams > 0);
        QVERIFY(r.withActivationsMaxParams < r.statesOnlyMaxParams);
    }

    void cs5_sevenBillionLedger()
    {
        const auto& g = golden()["seeds"]["cs5_ledger_7b"];
        const auto plan =
            core::estimate(scenario({R"(model={"params": 7e9})", "precision.plan=bf16-mixed", "cluster.gpus=1"}));
        const auto& m = plan.memory;
        QCOMPARE(m.weights, g["weights"].get<double>());
        QCOMPARE(m.gradients, g["gradients"].get<double>());
        QCOMPARE(m.optimizerStates, 2 * g["adam_moment"].get<double>());
        QCOMPARE(m.masterWeights, 0.0);
        QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates, g["total"].get<double>());
        QCOMPARE(m.statesBytesPerParam, 12.0);
    }

    void cs5b_withMasterCopy()
    {
        const auto plan = core::estimate(
            scenario({R"(model={"params": 7e9})", "precision.plan=bf16-mixed-master", "cluster.gpus=1"}));
        const auto& m = plan.memory;
        QCOMPARE(m.masterWeights, 28e9);
        QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates,
                 golden()["seeds"]["cs5b_with_master"]["total"].get<double>());
    }

    void cs6_cs7_toyLedger()
    {
        const auto& g = golden()["seeds"]["cs6_toy"];
        const auto plan = core::estimate(
            scenario({R"(model={"kind": "mlp", "width": 4, "layers": 2, "head": true})", "training.micro_batch=2",
                      "training.global_batch=2", "precision.plan=fp32", "optimizer.name=adagrad", "cluster.gpus=1"}));
        QCOMPARE(plan.params.total, g["params"].get<double>());
        const auto& m = plan.memory;
        QCOMPARE(m.activations, 4.0 * g["activation_values"].get<double>());
        QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations,
                 g["total_bytes"].get<double>());
        QCOMPARE(m.temporaries, 0.0);
        // CS-7: 6 · B · params per step.
        QCOMPARE(plan.compute.flopsPerStep, golden()["seeds"]["cs7_toy_flops_per_step"].get<double>());
    }

    void cs8_ridge()
    {
        const auto plan = core::estimate(scenario({"cluster.gpu=h100-sxm", "precision.compute=bf16"}));
        NAPKIN_COMPARE_REL(plan.hardware.ridge, golden()["seeds"]["cs8_h100_ridge"]["expected"].get<double>(), 1e-3);
    }

    void cs9_gemmIntensity_data()
    {
        QTest::addColumn<double>("m");
        QTest::addColumn<double>("expected");
        for (const auto& c : golden()["seeds"]["cs9_gemm_intensity"])
            QTest::newRow(qPrintable(QStringLiteral("M=%1").arg(c["m"].get<double>())))
                << c["m"].get<double>() << c["expected"].get<double>();
    }
    void cs9_gemmIntensity()
    {
        QFETCH(double, m);
        QFETCH(double, expected);
        const auto c = core::gemmCost(m, 4096, 4096, 2);
        NAPKIN_COMPARE_REL(c.flops / c.bytes, expected, 1e-3);
    }

    void cs10_to_cs14_opTable()
    {
        const auto& g = golden()["seeds"];
        const double n = 1e6;
        auto intensity = [](core::OpCost c) { return c.flops / c.bytes; };
        QCOMPARE(intensity(core::reluCost(n, 2)), g["cs10_relu"].get<double>());
        QCOMPARE(intensity(core::geluCost(n, 2)), g["cs11_gelu"].get<double>());
        NAPKIN_COMPARE_REL(intensity(core::dotCost(g["cs12_dot"]["n"].get<double>(), 2)),
                           g["cs12_dot"]["expected"].get<double>(), 1e-3);
        NAPKIN_COMPARE_REL(intensity(core::matvecCost(g["cs13_matvec"]["n"].get<double>(), 2)),
                           g["cs13_matvec"]["expected"].get<double>(), 1e-3);
        // CS-14: n²(2n − 1) FLOPs over 6n² bytes ≈ n/3, compute-bound on the H100 (ridge 295).
        const double sq = g["cs14_square"]["n"].get<double>();
        const auto c = core::gemmCost(sq, sq, sq, 2, /*exactAdds=*/true);
        NAPKIN_COMPARE_REL(intensity(c), g["cs14_square"]["expected"].get<double>(), 1e-3);
        const auto plan = core::estimate(scenario({"cluster.gpu=h100-sxm"}));
        QCOMPARE(core::makeOp("square", core::Pass::Forward, core::OpUnit::Tensor, c, plan.hardware).bound,
                 core::Bound::Compute);
        QCOMPARE(
            core::makeOp("relu", core::Pass::Forward, core::OpUnit::Vector, core::reluCost(n, 2), plan.hardware).bound,
            core::Bound::Memory);
    }

    void cs15_tensorBytes()
    {
        const auto& g = golden()["seeds"]["cs15_tensor"];
        double elements = 1;
        for (const auto& d : g["shape"])
            elements *= d.get<double>();
        QCOMPARE(elements, g["elements"].get<double>());
        QCOMPARE(elements * core::bytesPerValue(core::DType::Fp32), g["fp32_bytes"].get<double>());
        QCOMPARE(elements * core::bytesPerValue(core::DType::Bf16), g["bf16_bytes"].get<double>());
    }

    void cs16_dtypeFacts()
    {
        const auto& g = golden()["seeds"]["cs16_dtypes"];
        auto bits = [](core::DType t) {
            const auto& i = core::info(t);
            return nlohmann::json::array({i.signBits, i.exponentBits, i.mantissaBits});
        };
        QCOMPARE(bits(core::DType::Fp32), g["fp32"]);
        QCOMPARE(bits(core::DType::Fp16), g["fp16"]);
        QCOMPARE(bits(core::DType::Bf16), g["bf16"]);
        QCOMPARE(core::info(core::DType::Fp8E4m3).maxFinite, g["e4m3_max"].get<double>());
        QCOMPARE(core::info(core::DType::Fp8E5m2).maxFinite, g["e5m2_max"].get<double>());
        QCOMPARE(core::roundToFormat(core::DType::Fp16, 1e-8), 0.0); // below fp16's smallest subnormal 5.96e-8 / 2
        QVERIFY(core::roundToFormat(core::DType::Bf16, 1e-8) > 0.0);
        NAPKIN_COMPARE_REL(core::roundToFormat(core::DType::Bf16, 1e-8), 1e-8, 1.0 / 128);
        QCOMPARE(core::roundToFormat(core::DType::Bf16, 1.0 + 0.001), 1.0); // seeds: 1 + 0.001 is 1 in bf16
    }

    void cs17_checkpointingChain()
    {
        // A chain of L = 64 equal layers (the lecture's deep linear model): checkpointing every k
        // layers stores ceil(L/k) + k layer activations, O(L/k + k), smallest at k = sqrt(L) = 8.
        auto activations = [&](int k) {
            return core::estimate(
                       scenario({R"(model={"kind": "mlp", "width": 1024, "layers": 64})", "training.recompute=full",
                                 "training.micro_batch=8", "training.global_batch=512",
                                 "training.checkpoint_every=" + std::to_string(k)}))
                .memory.activations;
        };
        const double perLayer = 8 * 1024 * 2; // B · D · bf16
        QCOMPARE(activations(8), (8 + 8) * perLayer);
        QCOMPARE(activations(1), (64 + 1) * perLayer);
        QCOMPARE(activations(64), (1 + 64) * perLayer);
        for (int k : {1, 2, 4, 16, 32, 64})
            QVERIFY2(activations(k) > activations(8), qPrintable(QStringLiteral("k=%1 beats k=sqrt(L)").arg(k)));
        // Without checkpointing all L are kept; the default k is round(sqrt(L)).
        const auto plan =
            core::estimate(scenario({R"(model={"kind": "mlp", "width": 1024, "layers": 64})", "training.recompute=full",
                                     "training.micro_batch=8", "training.global_batch=512"}));
        QCOMPARE(plan.memory.checkpointEvery, std::int64_t(8));
        // Recompute adds one forward pass, O(L) work: hardware FLOPs = model FLOPs · 8/6 under 6PT.
        NAPKIN_COMPARE_REL(plan.compute.hardwareFlops / plan.compute.trainingFlops, 8.0 / 6.0, 1e-12);
        // A transformer's boundary (2sbh) is smaller than a layer's working set, so its optimum k is
        // below sqrt(L); the plan says where.
        const auto t = core::estimate(scenario({"model.preset=llama-2-7b", "training.recompute=full"}));
        const auto it = std::find_if(t.derivations.begin(), t.derivations.end(), [](const core::Derivation& d) {
            return std::string(d.quantity) == "memory.checkpoint_best_k";
        });
        QVERIFY(it != t.derivations.end());
        QVERIFY(it->value > 1 && it->value < std::sqrt(32.0));
    }
};

QTEST_GUILESS_MAIN(TestSeeds)
#include "tst_seeds.moc"
