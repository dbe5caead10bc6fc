// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Every resource file loads and validates; an unknown key fails with its name.
#include "testsupport.h"

#include "catalog.h"

#include <fstream>
#include <sstream>

using namespace napkin;

namespace {
nlohmann::json embedded(const char* name) { return nlohmann::json::parse(core::embeddedResource(name)); }
} // namespace

class TestCatalog : public QObject {
    Q_OBJECT
private slots:
    void embeddedResourcesLoad()
    {
        core::Errors errors;
        const auto gpus = core::loadGpus(core::embeddedResource("gpus.json"), errors);
        const auto models = core::loadModels(core::embeddedResource("models.json"), errors);
        const auto plans = core::loadPlans(core::embeddedResource("plans.json"), errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        QVERIFY(gpus.size() >= 23);
        QVERIFY(models.size() >= 15);
        QVERIFY(plans.size() >= 4);
        QVERIFY(core::defaultScenarioJson().is_object());
        core::defaultScenario(); // throws if invalid
    }

    void loadsFromAStream()
    {
        std::istringstream in{std::string(core::embeddedResource("plans.json"))};
        core::Errors errors;
        QCOMPARE(core::loadPlans(in, errors).size(), core::builtinCatalog().plans.size());
        QVERIFY(errors.empty());
    }

    void everyGpuFromTheSpecSheet_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("memoryGb");
        QTest::addColumn<double>("bandwidthTbps");
        QTest::addColumn<double>("tensorTflops"); // dense bf16 (fp16 on V100)
        // Main table of the project's GPU spec notes (dense, no 2:4 sparsity).
        QTest::newRow("V100") << QStringLiteral("v100-sxm2-32gb") << 32.0 << 0.9 << 125.0;
        QTest::newRow("A100 40GB") << QStringLiteral("a100-sxm4-40gb") << 40.0 << 1.555 << 312.0;
        QTest::newRow("A100 80GB") << QStringLiteral("a100-sxm4-80gb") << 80.0 << 2.039 << 312.0;
        QTest::newRow("A100 PCIe") << QStringLiteral("a100-pcie-80gb") << 80.0 << 1.935 << 312.0;
        QTest::newRow("H100 SXM") << QStringLiteral("h100-sxm") << 80.0 << 3.35 << 989.5;
        QTest::newRow("H100 PCIe") << QStringLiteral("h100-pcie") << 80.0 << 2.0 << 756.0;
        QTest::newRow("H100 NVL") << QStringLiteral("h100-nvl") << 94.0 << 3.9 << 835.5;
        QTest::newRow("H200") << QStringLiteral("h200-sxm") << 141.0 << 4.8 << 989.4;
        QTest::newRow("B200") << QStringLiteral("b200") << 180.0 << 7.7 << 2250.0;
        QTest::newRow("GB200") << QStringLiteral("gb200") << 186.0 << 8.0 << 2500.0;
        QTest::newRow("L40S") << QStringLiteral("l40s") << 48.0 << 0.864 << 362.05;
        QTest::newRow("L4") << QStringLiteral("l4") << 24.0 << 0.3 << 121.0;
        QTest::newRow("A10") << QStringLiteral("a10") << 24.0 << 0.6 << 125.0;
        QTest::newRow("RTX 3090") << QStringLiteral("rtx-3090") << 24.0 << 0.936 << 71.0;
        QTest::newRow("RTX 4090") << QStringLiteral("rtx-4090") << 24.0 << 1.008 << 165.2;
        QTest::newRow("RTX 5090") << QStringLiteral("rtx-5090") << 32.0 << 1.792 << 209.5;
        QTest::newRow("MI250X") << QStringLiteral("mi250x") << 128.0 << 3.2768 << 383.0;
        QTest::newRow("MI300X") << QStringLiteral("mi300x") << 192.0 << 5.3 << 1307.4;
        QTest::newRow("MI325X") << QStringLiteral("mi325x") << 256.0 << 6.0 << 1307.4;
        QTest::newRow("TPU v4") << QStringLiteral("tpu-v4") << 34.359738368 << 1.2 << 275.0;
        QTest::newRow("TPU v5e") << QStringLiteral("tpu-v5e") << 16.0 << 0.819 << 197.0;
        QTest::newRow("TPU v5p") << QStringLiteral("tpu-v5p") << 95.0 << 2.765 << 459.0;
        QTest::newRow("TPU v6e") << QStringLiteral("tpu-v6e") << 32.0 << 1.638 << 918.0;
    }
    void everyGpuFromTheSpecSheet()
    {
        QFETCH(QString, id);
        QFETCH(double, memoryGb);
        QFETCH(double, bandwidthTbps);
        QFETCH(double, tensorTflops);
        const auto* g = core::builtinCatalog().gpu(id.toStdString());
        QVERIFY2(g, "missing from resources/gpus.json");
        NAPKIN_COMPARE_REL(g->memoryBytes / 1e9, memoryGb, 1e-9);
        NAPKIN_COMPARE_REL(g->bandwidthBytesPerSecond / 1e12, bandwidthTbps, 1e-9);
        const double tensor =
            g->peak(core::PeakColumn::Bf16) > 0 ? g->peak(core::PeakColumn::Bf16) : g->peak(core::PeakColumn::Fp16);
        NAPKIN_COMPARE_REL(tensor / 1e12, tensorTflops, 1e-9);
        QVERIFY(!g->sourceFlops.empty());
        QVERIFY(!g->sourceMemory.empty());
        QVERIFY(!g->sourceBandwidth.empty());
    }

    void densePeaksAreNotSparse()
    {
        // No dense bf16 figure may be the sparse headline (H100 SXM 1979, H200 1979, B200 4500).
        QVERIFY(core::builtinCatalog().gpu("h100-sxm")->peak(core::PeakColumn::Bf16) < 1.0e15);
        QVERIFY(core::builtinCatalog().gpu("h200-sxm")->peak(core::PeakColumn::Bf16) < 1.0e15);
        QVERIFY(core::builtinCatalog().gpu("b200")->peak(core::PeakColumn::Bf16) < 3.0e15);
        QVERIFY(core::builtinCatalog().gpu("h100-sxm")->sparseListed);
    }

    void unknownKeyFailsWithItsName_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("path"); // JSON pointer to an object that gets an extra key
        QTest::newRow("gpu entry") << QStringLiteral("gpus.json") << QStringLiteral("/gpus/0");
        QTest::newRow("gpu peaks") << QStringLiteral("gpus.json") << QStringLiteral("/gpus/3/dense_flops_per_second");
        QTest::newRow("gpu sources") << QStringLiteral("gpus.json") << QStringLiteral("/gpus/1/sources");
        QTest::newRow("gpus top level") << QStringLiteral("gpus.json") << QStringLiteral("");
        QTest::newRow("model entry") << QStringLiteral("models.json") << QStringLiteral("/models/5");
        QTest::newRow("plan entry") << QStringLiteral("plans.json") << QStringLiteral("/plans/2");
    }
    void unknownKeyFailsWithItsName()
    {
        QFETCH(QString, file);
        QFETCH(QString, path);
        auto doc = embedded(file.toUtf8().constData());
        doc[nlohmann::json::json_pointer(path.toStdString())]["bogus_key"] = 1;
        core::Errors errors;
        const std::string text = doc.dump();
        if (file == QStringLiteral("gpus.json"))
            core::loadGpus(text, errors);
        else if (file == QStringLiteral("models.json"))
            core::loadModels(text, errors);
        else
            core::loadPlans(text, errors);
        QCOMPARE(errors.size(), std::size_t(1));
        QVERIFY2(errors.front().field.find("bogus_key") != std::string::npos, errors.front().field.c_str());
        QCOMPARE(errors.front().why, std::string("unknown key"));
    }

    void invalidCatalogueValues()
    {
        auto doc = embedded("gpus.json");
        doc["gpus"][0]["memory_bytes"] = -5;
        doc["gpus"][1]["id"] = doc["gpus"][2]["id"];
        core::Errors errors;
        core::loadGpus(doc.dump(), errors);
        QCOMPARE(errors.size(), std::size_t(2));
        QCOMPARE(errors[0].field, std::string("gpus[0].memory_bytes"));
        QCOMPARE(errors[1].why, std::string("duplicate id"));

        auto plans = embedded("plans.json");
        plans["plans"][0]["weights"] = "tf32";
        errors.clear();
        core::loadPlans(plans.dump(), errors);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].field, std::string("plans[0].weights"));

        errors.clear();
        core::loadModels("{not json", errors);
        QCOMPARE(errors.size(), std::size_t(1));
    }

    // The sustained shares (resources/gpus.json achievable.matmul_{bf16,fp8}_sustained_share, measured
    // by napkin-probe on a GPU held at its power limit): a share is in (0, 1] and says where it was
    // measured; each hostile value is one error naming its key.
    void hostileSustainedShares_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value"); // JSON; "remove" deletes the key
        QTest::addColumn<QString>("field"); // suffix of the error's field ("" = loads)
        QTest::addColumn<QString>("why");
        QTest::newRow("above 1") << "matmul_bf16_sustained_share"
                                 << "1.2"
                                 << "achievable.matmul_bf16_sustained_share"
                                 << "must be a share";
        QTest::newRow("zero") << "matmul_fp8_sustained_share"
                              << "0"
                              << "achievable.matmul_fp8_sustained_share"
                              << "must be a share";
        QTest::newRow("negative") << "matmul_bf16_sustained_share"
                                  << "-0.5"
                                  << "achievable.matmul_bf16_sustained_share"
                                  << "must be a share";
        QTest::newRow("string") << "matmul_fp8_sustained_share"
                                << "\"0.9\""
                                << "achievable.matmul_fp8_sustained_share"
                                << "must be a share";
        QTest::newRow("no source") << "sustained_source"
                                   << "remove"
                                   << "achievable.sustained_source"
                                   << "is missing";
        QTest::newRow("null share") << "matmul_bf16_sustained_share"
                                    << "null"
                                    << ""
                                    << "";
    }
    void hostileSustainedShares()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, field);
        QFETCH(QString, why);
        auto doc = embedded("gpus.json");
        std::size_t at = 0;
        while (doc["gpus"][at]["id"] != "h200-sxm")
            ++at;
        auto& achievable = doc["gpus"][at]["achievable"];
        QVERIFY(achievable.contains(key.toStdString()));
        if (value == QStringLiteral("remove"))
            achievable.erase(key.toStdString());
        else
            achievable[key.toStdString()] = nlohmann::json::parse(value.toStdString());
        core::Errors errors;
        const auto gpus = core::loadGpus(doc.dump(), errors);
        if (field.isEmpty()) {
            QVERIFY(errors.empty());
            QCOMPARE(gpus[at].sustainedShare16, 1.0); // null: the catalogue figure as it stands
            QCOMPARE(gpus[at].sustainedShareFp8, core::builtinCatalog().gpu("h200-sxm")->sustainedShareFp8);
            return;
        }
        QCOMPARE(errors.size(), std::size_t(1));
        const std::string want = "gpus[" + std::to_string(at) + "]." + field.toStdString();
        QCOMPARE(errors.front().field, want);
        QCOMPARE(errors.front().why, why.toStdString());
    }

    void namedPlansBytesPerParam_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<double>("bytesWithAdam");
        QTest::newRow("fp32") << QStringLiteral("fp32") << 16.0;
        QTest::newRow("bf16-mixed") << QStringLiteral("bf16-mixed") << 12.0;
        QTest::newRow("bf16-mixed-master") << QStringLiteral("bf16-mixed-master") << 16.0;
        QTest::newRow("megatron") << QStringLiteral("megatron") << 18.0;
    }
    void namedPlansBytesPerParam()
    {
        QFETCH(QString, plan);
        QFETCH(double, bytesWithAdam);
        const auto p =
            core::estimate(napkin::test::scenario({"precision.plan=" + plan.toStdString(), "optimizer.name=adamw"}));
        QCOMPARE(p.memory.statesBytesPerParam, bytesWithAdam);
    }
};

QTEST_GUILESS_MAIN(TestCatalog)
#include "tst_catalog.moc"
