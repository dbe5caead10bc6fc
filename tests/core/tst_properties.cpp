// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Properties that must hold for any plan.
#include "testsupport.h"

using namespace napkin;
using napkin::test::scenario;

class TestProperties : public QObject {
    Q_OBJECT
private slots:
    void totalIsTheSumOfBuckets_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("recompute");
        QTest::addColumn<int>("zero");
        for (const char* p : {"gpt2-small", "llama-2-7b", "llama-3-70b", "qwen2.5-7b", "chinchilla-70b"})
            for (const char* r : {"none", "selective", "full"})
                for (int z : {0, 3})
                    QTest::newRow(
                        qPrintable(QStringLiteral("%1 %2 zero%3").arg(QLatin1String(p), QLatin1String(r)).arg(z)))
                        << QString::fromLatin1(p) << QString::fromLatin1(r) << z;
    }
    void totalIsTheSumOfBuckets()
    {
        QFETCH(QString, preset);
        QFETCH(QString, recompute);
        QFETCH(int, zero);
        const auto p = core::estimate(
            scenario({"model.preset=" + preset.toStdString(), "training.seq_len=1024",
                      "training.recompute=" + recompute.toStdString(), "parallel.zero=" + std::to_string(zero)}));
        const auto& m = p.memory;
        const double sum =
            m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations + m.temporaries + m.overhead;
        NAPKIN_COMPARE_REL(m.total, sum, 1e-12);
        QCOMPARE(m.headroom, m.capacity - m.total);
        QCOMPARE(m.fits, m.total <= m.capacity);
        for (double v : {m.weights, m.gradients, m.activations, m.temporaries, m.overhead, p.time.days, p.cost.usd})
            QVERIFY(std::isfinite(v) && v >= 0);
    }

    void memoryGrowsWithParametersBatchAndSequence()
    {
        double prev = 0;
        for (double params : {1e8, 1e9, 7e9, 70e9}) {
            const double t = core::estimate(scenario({"model.params=" + std::to_string(params)})).memory.total;
            QVERIFY(t > prev);
            prev = t;
        }
        prev = 0;
        for (int b : {1, 2, 4, 8}) {
            const double t = core::estimate(scenario({"training.micro_batch=" + std::to_string(b)})).memory.total;
            QVERIFY(t > prev);
            prev = t;
        }
        prev = 0;
        for (int s : {512, 1024, 2048, 4096}) {
            for (const char* flash : {"true", "false"}) {
                (void)flash;
            }
            const double t = core::estimate(scenario({"training.seq_len=" + std::to_string(s)})).memory.total;
            QVERIFY(t > prev);
            prev = t;
        }
    }

    void zeroStagesOrder()
    {
        for (const char* plan : {"bf16-mixed", "bf16-mixed-master", "megatron", "fp32"}) {
            double prev = 1e300;
            for (int z = 0; z <= 3; ++z) {
                const auto m = core::estimate(scenario({std::string("precision.plan=") + plan, "cluster.gpus=16",
                                                        "parallel.zero=" + std::to_string(z)}))
                                   .memory;
                const double states = m.weights + m.gradients + m.masterWeights + m.optimizerStates;
                QVERIFY2(states <= prev, plan);
                prev = states;
            }
        }
    }

    void timeHalvesWhenGpusDouble()
    {
        for (int g : {8, 64, 1024}) {
            const auto a =
                core::estimate(scenario({"cluster.gpus=" + std::to_string(g), "training.global_batch=4096"}));
            const auto b =
                core::estimate(scenario({"cluster.gpus=" + std::to_string(2 * g), "training.global_batch=4096"}));
            NAPKIN_COMPARE_REL(b.time.seconds, a.time.seconds / 2, 1e-12);
            NAPKIN_COMPARE_REL(b.time.gpuHours, a.time.gpuHours, 1e-12);
        }
    }

    void recomputationTradesMemoryForFlops()
    {
        const auto none = core::estimate(scenario({"training.recompute=none", "training.flash_attention=false"}));
        const auto sel = core::estimate(scenario({"training.recompute=selective", "training.flash_attention=false"}));
        const auto full = core::estimate(scenario({"training.recompute=full", "training.flash_attention=false"}));
        QVERIFY(none.memory.activations > sel.memory.activations);
        QVERIFY(sel.memory.activations > full.memory.activations);
        QVERIFY(none.compute.hardwareFlops < sel.compute.hardwareFlops);
        QVERIFY(sel.compute.hardwareFlops < full.compute.hardwareFlops);
        QCOMPARE(none.compute.trainingFlops, full.compute.trainingFlops); // model FLOPs do not change
        QVERIFY(full.time.hfu > full.time.mfu);
    }

    void everyHeadlineNumberHasADerivation()
    {
        const auto p = core::estimate(scenario({}));
        for (const char* q :
             {"params.total", "memory.per_gpu.weights", "memory.per_gpu.gradients", "memory.per_gpu.master_weights",
              "memory.per_gpu.optimizer_states", "memory.per_gpu.activations", "memory.per_gpu.temporaries",
              "memory.per_gpu.overhead", "memory.per_gpu.total", "compute.flops_per_token", "compute.training_flops",
              "time.seconds", "time.days", "time.gpu_hours", "cost.usd", "cost.energy_kwh", "hardware.peak_flops",
              "hardware.ridge"}) {
            const auto it = std::find_if(p.derivations.begin(), p.derivations.end(),
                                         [&](const core::Derivation& d) { return std::string(d.quantity) == q; });
            QVERIFY2(it != p.derivations.end(), q);
            QVERIFY2(std::string(it->source).size() > 0, q);
        }
    }

    void derivationsSubstituteEveryTerm()
    {
        // Every {symbol} of every formula has its term (derive() keeps at most 12: a formula that
        // needs more would show an unsubstituted name), on plans that exercise most branches.
        const std::vector<core::Plan> plans = {
            core::estimate(scenario({})),
            core::estimate(
                scenario({"model.preset=deepseek-v3", "flops.convention=megatron-core", "step_time.mode=predicted"})),
            core::estimate(scenario({"model.preset=gpt-oss-120b", "precision.expert_weights=mxfp4",
                                     "training.moe_capacity_factor=1.25", "training.routing_imbalance=\"worst\""})),
            core::estimate(scenario({"model.preset=llama-3-70b", "parallel.tp=8", "parallel.pp=4", "cluster.gpus=256",
                                     "training.recompute=full", "step_time.mode=predicted", "parallel.zero=3"})),
            core::estimate(scenario({"model.preset=mixtral-8x7b", "parallel.zero=0", "parallel.fsdp=full",
                                     "step_time.framework=torchtitan", "offload.optimizer=cpu"}))};
        for (const auto& p : plans)
            for (const auto& d : p.derivations) {
                const std::string f = d.formula;
                for (std::size_t open = f.find('{'); open != std::string::npos; open = f.find('{', open + 1)) {
                    const std::string name = f.substr(open + 1, f.find('}', open) - open - 1);
                    bool found = false;
                    for (int i = 0; i < d.termCount; ++i)
                        found = found || name == d.terms[std::size_t(i)].symbol;
                    QVERIFY2(found, (std::string(d.quantity) + ": {" + name + "} has no term").c_str());
                }
            }
    }

    void rooflineOpsAreConsistent()
    {
        const auto p = core::estimate(scenario({}));
        QVERIFY(p.ops.size() > 20);
        for (const auto& op : p.ops) {
            QVERIFY(op.flops > 0 && op.bytes > 0);
            QCOMPARE(op.intensity, op.flops / op.bytes);
            QCOMPARE(op.timeSeconds, std::max(op.flops / op.ceiling, op.bytes / p.hardware.bandwidth));
        }
        // Per layer, backward GEMM FLOPs are twice the forward ones (dgrad + wgrad).
        double fwd = 0, bwd = 0;
        for (const auto& op : p.ops)
            if (std::string(op.name).rfind("mlp_", 0) == 0 || std::string(op.name).rfind("qkv", 0) == 0 ||
                std::string(op.name).rfind("out_proj", 0) == 0)
                (op.pass == core::Pass::Forward ? fwd : bwd) += op.flops;
        QCOMPARE(bwd, 2 * fwd);
    }
};

QTEST_GUILESS_MAIN(TestProperties)
#include "tst_properties.moc"
