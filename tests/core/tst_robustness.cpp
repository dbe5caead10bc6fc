// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Hostile and extreme input: fuzz regressions, numeric edges, and a sweep of random valid scenarios.
#include "testsupport.h"

#include "format.h"
#include "jsonreader.h"

#include <QDir>

#include <fstream>
#include <random>
#include <sstream>

using namespace napkin;

namespace {
std::string readFile(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool allFinite(const nlohmann::json& j)
{
    if (j.is_number_float())
        return std::isfinite(j.get<double>());
    if (j.is_structured())
        for (const auto& x : j)
            if (!allFinite(x))
                return false;
    return true;
}
} // namespace

class TestRobustness : public QObject {
    Q_OBJECT
private slots:
    void fuzzRegressions_data()
    {
        QTest::addColumn<QString>("file");
        const QDir dir(QStringLiteral(NAPKIN_TEST_DATA "/fuzz_regressions"));
        for (const auto& f : dir.entryList({QStringLiteral("*.json")}, QDir::Files))
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void fuzzRegressions()
    {
        // Each file once crashed a loader (libFuzzer found it): now it is an error that names a field.
        QFETCH(QString, file);
        const std::string text = readFile(file);
        core::Errors errors;
        if (file.contains(QStringLiteral("/hf_"))) {
            const auto cfg = core::parseJsonLimited(text, "config.json", errors);
            if (!cfg.is_discarded())
                core::modelFromHfConfig(cfg, "config.json", errors);
        } else {
            const auto doc = core::parseScenarioText(text, "scenario.json", errors);
            if (doc)
                core::parseScenario(*doc, core::builtinCatalog(), errors);
        }
        QVERIFY(!errors.empty());
        QVERIFY(!core::describe(errors.front()).empty());
    }

    void numericEdges_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<QString>("errorField"); // empty: valid, with a finite plan
        // clang-format off
        QTest::newRow("1e30 parameters") << QStringLiteral("model.params=1e30") << QStringLiteral("model.params");
        QTest::newRow("1 token") << QStringLiteral("training.tokens=1") << QString();
        QTest::newRow("1e6 GPUs") << QStringLiteral("cluster.gpus=1000000") << QString();
        QTest::newRow("negative zero tokens") << QStringLiteral("training.tokens=-0.0") << QStringLiteral("training.tokens");
        QTest::newRow("tokens 1e400") << QStringLiteral("training.tokens=1e400") << QStringLiteral("training.tokens");
        QTest::newRow("tokens nan string") << QStringLiteral("training.tokens=\"nan\"") << QStringLiteral("training.tokens");
        QTest::newRow("mfu inf string") << QStringLiteral("cluster.mfu=\"inf\"") << QStringLiteral("cluster.mfu");
        // clang-format on
        QTest::newRow("huge element counts")
            << QStringLiteral("model={\"kind\": \"transformer\", \"layers\": 100000, \"d_model\": 16777216, \"heads\": "
                              "65536, \"ffn\": 16777216, \"vocab\": 1073741824}")
            << QString();
        QTest::newRow("longest sequence, largest batch")
            << QStringLiteral(
                   "training.seq_len=16777216\ntraining.micro_batch=1073741824\ntraining.global_batch=1073741824")
            << QString();
        // clang-format off
        QTest::newRow("tiny model") << QStringLiteral("model.params=1000") << QString();
        QTest::newRow("imbalance huge") << QStringLiteral("model.preset=deepseek-v3\ntraining.routing_imbalance=1024") << QString();
        // clang-format on
        QTest::newRow("imbalance past the range")
            << QStringLiteral("model.preset=deepseek-v3\ntraining.routing_imbalance=1025")
            << QStringLiteral("training.routing_imbalance");
        // clang-format off
        QTest::newRow("capacity tiny") << QStringLiteral("model.preset=mixtral-8x7b\ntraining.moe_capacity_factor=1e-9\ntraining.seq_len=1") << QString();
        QTest::newRow("capacity nan") << QStringLiteral("training.moe_capacity_factor=\"nan\"") << QStringLiteral("training.moe_capacity_factor");
        // clang-format on
    }
    void numericEdges()
    {
        QFETCH(QString, set);
        QFETCH(QString, errorField);
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        for (const auto& s : set.split(QLatin1Char('\n')))
            core::applySet(doc, s.toStdString(), errors);
        const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
        if (!errorField.isEmpty()) {
            QVERIFY(!errors.empty());
            QCOMPARE(QString::fromStdString(errors.front().field), errorField);
            return;
        }
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        const auto plan = core::estimate(sc);
        QVERIFY(allFinite(core::planToJson(plan)));
        QVERIFY(plan.time.seconds > 0 && std::isfinite(plan.time.seconds));
    }

    void randomValidScenariosHoldInvariants()
    {
        std::mt19937_64 rng(20261129);
        const auto& cat = core::builtinCatalog();
        auto pick = [&](std::size_t n) { return std::size_t(rng() % n); };
        auto logUniform = [&](double lo, double hi) {
            return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
        };
        const char* optimizers[] = {"sgd",   "momentum", "adagrad",   "rmsprop", "adam",
                                    "adamw", "lion",     "adafactor", "muon"};
        const char* recompute[] = {"none", "selective", "full"};
        const char* conventions[] = {"auto", "6PT", "palm", "megatron", "megatron-core"};
        const char* expertDtypes[] = {"auto", "bf16", "fp8_e4m3", "mxfp4", "nvfp4"};
        const char* fsdp[] = {"none", "full", "grad_op", "hybrid"};
        int valid = 0, predicted = 0;
        for (int i = 0; i < 1500; ++i) {
            nlohmann::json doc = core::defaultScenarioJson();
            if (rng() % 3 == 0)
                doc["model"] = {{"params", std::round(logUniform(1e6, 2e12))}};
            else
                doc["model"] = {{"preset", cat.models[pick(cat.models.size())].id}};
            doc["training"]["seq_len"] = std::int64_t(logUniform(16, 1 << 17));
            const auto micro = std::int64_t(logUniform(1, 64));
            doc["training"]["micro_batch"] = micro;
            doc["training"]["global_batch"] = micro * std::int64_t(logUniform(1, 1024));
            doc["training"]["tokens"] = logUniform(1, 1e14);
            doc["training"]["recompute"] = recompute[pick(3)];
            doc["training"]["flash_attention"] = rng() % 2 == 0;
            doc["precision"]["plan"] = cat.plans[pick(cat.plans.size())].id;
            doc["optimizer"]["name"] = optimizers[pick(9)];
            doc["cluster"]["gpu"] = cat.gpus[pick(cat.gpus.size())].id;
            doc["cluster"]["gpus"] = std::int64_t(logUniform(1, 1e5));
            doc["cluster"]["mfu"] = std::uniform_real_distribution<double>(0.01, 1.0)(rng);
            doc["parallel"]["zero"] = int(pick(4));
            if (doc["parallel"]["zero"] == 0 && rng() % 2 == 0)
                doc["parallel"]["fsdp"] = fsdp[pick(4)];
            doc["step_time"]["mode"] = rng() % 2 == 0 ? "predicted" : "mfu";
            doc["step_time"]["inter_node_bandwidth"] = logUniform(1e9, 1e12);
            doc["step_time"]["overlap_dp"] = rng() % 2 == 0;
            doc["parallel"]["gpus_per_node"] = std::int64_t(1) << pick(5);
            doc["flops"]["convention"] = conventions[pick(5)];
            // Mixture-of-experts run keys: on a dense model they warn, on an MoE model they resolve.
            if (rng() % 3 == 0)
                doc["training"]["routing_imbalance"] =
                    rng() % 4 == 0 ? nlohmann::json("worst") : nlohmann::json(logUniform(1, 64));
            if (rng() % 3 == 0)
                doc["training"]["moe_capacity_factor"] = logUniform(0.05, 16);
            if (rng() % 3 == 0)
                doc["precision"]["expert_weights"] = expertDtypes[pick(5)];
            core::Errors errors;
            const auto sc = core::parseScenario(doc, cat, errors);
            if (!errors.empty()) {
                // Only cross-field limits may refuse these (seq_len past a learned table, global batch
                // below the micro-batch, a compute dtype the GPU lacks).
                for (const auto& e : errors)
                    QVERIFY2(e.field == "training.seq_len" || e.field == "training.global_batch" ||
                                 e.field == "precision.compute",
                             core::describe(e).c_str());
                continue;
            }
            ++valid;
            const auto p = core::estimate(sc);
            const auto& m = p.memory;
            QVERIFY2(allFinite(core::planToJson(p)), doc.dump().c_str());
            const double sum = m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations +
                               m.temporaries + m.overhead;
            QVERIFY(std::abs(m.total - sum) <= 1e-9 * m.total);
            QCOMPARE(m.fits, m.total <= m.capacity);
            QVERIFY(p.compute.hardwareFlops >= p.compute.trainingFlops);
            QVERIFY(p.time.hfu >= p.time.mfu);
            // The step-time prediction is computed in both modes; its parts sum to the step.
            if (p.stepTime.valid) {
                const auto& b = p.stepTime;
                const double parts = b.compute + b.recompute + b.tpComm + b.cpComm + b.epComm + b.ppComm + b.bubble +
                                     b.dpComm + b.optimizer + b.launch + b.gradClip + b.checkpointSave + b.commSmShare +
                                     b.fsdpCopies;
                QVERIFY(std::abs(b.overheads - (b.launch + b.gradClip + b.checkpointSave + b.commSmShare +
                                                b.fsdpCopies)) <= 1e-12 * b.step);
                // No predicted MFU above the bound the achievable GEMM rate sets (time.mfu_ceiling).
                if (std::string_view(p.time.mode) == "predicted")
                    QVERIFY2(p.time.mfu <= p.time.mfuCeiling * (1 + 1e-9), doc.dump().c_str());
                QVERIFY2(std::isfinite(b.step) && b.step > 0 && std::abs(b.step - parts) <= 1e-9 * b.step,
                         doc.dump().c_str());
                QVERIFY2(b.mfu > 0 && b.hfu >= b.mfu * (1 - 1e-12), doc.dump().c_str());
                if (std::string_view(p.time.mode) == "predicted") {
                    ++predicted;
                    QCOMPARE(p.time.stepSeconds, b.step);
                }
            }
        }
        QVERIFY2(predicted > 300, qPrintable(QString::number(predicted)));
        QVERIFY2(valid > 900, qPrintable(QString::number(valid)));
    }
};

QTEST_GUILESS_MAIN(TestRobustness)
#include "tst_robustness.moc"
