// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Calibration profiles (napkin.calibration/1): strict loading of hostile profiles, device-name
// matching, and a hand-set H100 profile whose measured values must reach the plan exactly.
#include "testsupport.h"

#include "calibration.h"
#include "format.h"

using namespace napkin;

namespace {

bool hasWarning(const core::Plan& p, const std::string& code)
{
    for (const auto& w : p.warnings)
        if (w.code == code)
            return true;
    return false;
}

// The good profile with one result changed (by JSON pointer), as text.
std::string goodWith(const std::string& pointer, const nlohmann::json& value)
{
    auto doc = nlohmann::json::parse(test::calibrationFixture("good_h100.json"));
    doc[nlohmann::json::json_pointer(pointer)] = value;
    return doc.dump();
}

constexpr const char* kGood = "cluster.gpu=calibration:calibration/good_h100.json";

} // namespace

class TestCalibration : public QObject {
    Q_OBJECT
private slots:
    // The hand-set profile (good_h100.json): hbm_triad 2.93e12 B/s is the best verified of copy, scale and triad
    // (hbm_read, 3.00e12, is read-only: shown, not the ceiling) bandwidth kernels; gemm_* best values per dtype.
    void measuredPeaks_data()
    {
        QTest::addColumn<QString>("compute");
        QTest::addColumn<double>("peak");
        QTest::addColumn<QString>("result");
        QTest::newRow("bf16") << "bf16" << 7.9e14 << "gemm_bf16";
        QTest::newRow("fp16") << "fp16" << 7.95e14 << "gemm_fp16";
        QTest::newRow("tf32") << "tf32" << 3.8e14 << "gemm_tf32";
        QTest::newRow("fp32") << "fp32" << 5.1e13 << "gemm_fp32";
        QTest::newRow("fp8") << "fp8_e4m3" << 1.45e15 << "gemm_fp8_e4m3";
    }
    void measuredPeaks()
    {
        QFETCH(QString, compute);
        QFETCH(double, peak);
        QFETCH(QString, result);
        const auto sc = test::scenario({kGood, "precision.compute=" + compute.toStdString()});
        const auto plan = core::estimate(sc);
        // The measured peak is the achievable rate; the spec sheet's stays the peak (MFU is against it).
        QCOMPARE(plan.hardware.achievableFlops, peak);
        QCOMPARE(plan.hardware.achievableBandwidth, 2.93e12);
        const auto& h100 = *core::builtinCatalog().gpu("h100-sxm");
        const auto col = core::info(*core::parseDType(compute.toStdString())).peak;
        QCOMPARE(plan.hardware.peakFlops, h100.peak(col));
        QCOMPARE(plan.hardware.bandwidth, 3.35e12);
        QCOMPARE(plan.hardware.vectorFlops, 5.1e13); // gemm_fp32 replaces the fp32 column
        // Ridge I* = C / beta (Williams et al. 2009) of the spec sheet.
        NAPKIN_COMPARE_REL(plan.hardware.ridge, h100.peak(col) / 3.35e12, 1e-12);
        QCOMPARE(sc.gpu->origin, std::string("measured"));
        const auto source = plan.hardware.achievableFlopsSource();
        QVERIFY2(source.rfind("measured by napkin-probe (calibration/good_h100.json): " + result.toStdString(), 0) == 0,
                 source.c_str());
        QVERIFY2(plan.hardware.source().rfind("spec sheet", 0) == 0, plan.hardware.source().c_str());
        // Every tensor-core op of the roofline runs against the spec peak; its achievable time uses
        // the measured rate. An FP8 recipe keeps attention and the output layer in BF16: their ceiling
        // is the BF16 peak (core/lowprecision.h).
        for (const auto& op : plan.ops)
            if (op.unit == core::OpUnit::Tensor)
                QCOMPARE(op.ceiling, op.highPrecision ? h100.peak(core::PeakColumn::Bf16) : h100.peak(col));
    }

    void planCitesTheProfile()
    {
        const auto spec = core::estimate(test::scenario({}));
        const auto plan = core::estimate(test::scenario({kGood}));
        // time = F / (G · C · MFU) keeps the spec sheet's C (MFU is against it); the measured rates
        // reach the predicted step time through the achievable rates.
        NAPKIN_COMPARE_REL(plan.time.seconds / spec.time.seconds, 1.0, 1e-12);
        NAPKIN_COMPARE_REL(plan.hardware.ridge, 989.5e12 / 3.35e12, 1e-12);
        QCOMPARE(plan.memory.capacity, 80e9); // capacity stays the catalogue's 80 GB
        QVERIFY(!hasWarning(plan, "calibration_memory_differs"));
        QVERIFY(!hasWarning(plan, "calibration_unknown_device"));
        const std::string cite = "measured by napkin-probe (calibration/good_h100.json)";
        const auto* a = test::derivation(plan, "hardware.achievable_flops");
        QVERIFY(a);
        QVERIFY2(core::sourceText(*a, plan).find(cite) != std::string::npos, core::sourceText(*a, plan).c_str());
        const auto* mc = test::derivation(plan, "time.mfu_ceiling");
        QVERIFY(!mc); // MFU mode: no ceiling derivation
        const auto predicted = core::estimate(test::scenario({kGood, "step_time.mode=predicted"}));
        const auto specPredicted = core::estimate(test::scenario({"step_time.mode=predicted"}));
        // The hand-set profile's 790 TFLOP/s is above the catalogue's sustained 696 (MAMF 794.5 x 0.876
        // at the 700 W limit) and its bandwidth 2.93 TB/s near the catalogue's 2.97: a faster step, but
        // not by the whole 790 / 695 (attention, memory-bound ops and the M-sweep's 751 and 770 TFLOP/s
        // at M = 4096 and 8192, which correct the layer GEMMs down, do not speed up).
        const double ratio = predicted.time.stepSeconds / specPredicted.time.stepSeconds;
        QVERIFY2(ratio > 696.0e12 / 790e12 && ratio < 1.0, std::to_string(ratio).c_str());
        const auto* c = test::derivation(predicted, "time.mfu_ceiling");
        QVERIFY(c);
        QVERIFY2(core::sourceText(*c, predicted).find("C_ach " + cite) != std::string::npos,
                 core::sourceText(*c, predicted).c_str());
        // The spec plan cites no probe.
        QVERIFY(core::sourceText(*test::derivation(spec, "time.seconds"), spec).find("napkin-probe") ==
                std::string::npos);

        const auto j = core::planToJson(plan);
        QCOMPARE(j["hardware"]["origin"].get<std::string>(), std::string("measured"));
        QVERIFY(j["hardware"]["source"].get<std::string>().rfind("spec sheet", 0) == 0);
        QVERIFY(j["hardware"]["achievable_flops_source"].get<std::string>().rfind("measured", 0) == 0);
        QCOMPARE(j["hardware"]["bandwidth"].get<double>(), 3.35e12);
        QCOMPARE(j["hardware"]["achievable_bandwidth"].get<double>(), 2.93e12);
        QCOMPARE(j["hardware"]["id"].get<std::string>(), std::string("calibration:calibration/good_h100.json"));
        const auto& cal = j["hardware"]["calibration"];
        QCOMPARE(cal["device"].get<std::string>(), std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(cal["matched_gpu"].get<std::string>(), std::string("h100-sxm"));
        QCOMPARE(cal["profile"].get<std::string>(), std::string("calibration/good_h100.json"));
        QCOMPARE(cal["points"].size(), std::size_t(14));
        const auto specJson = core::planToJson(spec);
        QCOMPARE(specJson["hardware"]["origin"].get<std::string>(), std::string("spec sheet"));
        QVERIFY(!specJson["hardware"].contains("calibration"));
    }

    // Measured vs spec with the achieved share (H100 SXM sheet: 3.35e12 B/s, 989.5e12 bf16).
    void rows_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<double>("measured");
        QTest::addColumn<double>("spec");
        QTest::addColumn<double>("achieved");
        QTest::addColumn<bool>("planned");
        QTest::newRow("bandwidth") << "bandwidth" << 2.93e12 << 3.35e12 << 0.8746268656716418 << true;
        QTest::newRow("bf16") << "bf16" << 7.9e14 << 989.5e12 << 0.7983830217281455 << true;
        QTest::newRow("fp8") << "fp8" << 1.45e15 << 1979e12 << 0.7326932794340576 << true;
        QTest::newRow("fp4 (no such mode)") << "fp4" << 0.0 << 0.0 << 0.0 << false;
        QTest::newRow("fma_fp32") << "fma_fp32" << 5.9e13 << 67e12 << 0.8805970149253731 << false;
        QTest::newRow("memcpy_d2d") << "memcpy_d2d" << 2.7e12 << 3.35e12 << 0.8059701492537313 << false;
        QTest::newRow("host link") << "host_link" << 5.3e10 << 128e9 << 0.4140625 << true;
    }
    void rows()
    {
        QFETCH(QString, key);
        QFETCH(double, measured);
        QFETCH(double, spec);
        QFETCH(double, achieved);
        QFETCH(bool, planned);
        const auto sc = test::scenario({kGood});
        QVERIFY(sc.gpu->calibration);
        const auto rows = core::calibrationRows(*sc.gpu->calibration);
        const auto it =
            std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.key == key.toStdString(); });
        QVERIFY(it != rows.end());
        QCOMPARE(it->measured, measured);
        QCOMPARE(it->spec, spec);
        NAPKIN_COMPARE_REL(it->achieved(), achieved, 1e-12);
        QCOMPARE(it->planned, planned);
    }

    void pointsKept()
    {
        core::Errors errors;
        const auto p =
            core::loadCalibrationProfile(test::calibrationFixture("good_h100.json"), core::builtinCatalog(), errors);
        QVERIFY2(p, errors.empty() ? "" : core::describe(errors.front()).c_str());
        const auto& dev = p->devices.at(0);
        QCOMPARE(dev.points.size(), std::size_t(14));
        QCOMPARE(dev.results.size(), std::size_t(14));
        // M=128: 2·128·4096·4096 FLOPs over 2·(128·4096 + 4096·4096 + 128·4096) bytes = 120.4706 FLOP/byte.
        const auto& m128 = dev.points.at(2);
        QCOMPARE(m128.label, std::string("M=128"));
        NAPKIN_COMPARE_REL(m128.intensity(), 4294967296.0 / 35651584.0, 1e-12);
        NAPKIN_COMPARE_REL(m128.flopsPerSecond(), 4294967296.0 / 1.3e-5, 1e-12);
        QCOMPARE(dev.skipped.size(), std::size_t(1));
        QCOMPARE(p->probeMode, std::string("quick"));
    }

    // An unverified GEMM keeps the spec value, labelled "spec"; unverified bandwidth kernels are skipped.
    void unverifiedFallsBackToSpec()
    {
        core::Errors errors;
        auto text = goodWith("/devices/0/results/8/verified", false); // gemm_bf16
        text = nlohmann::json::parse(text).dump();
        auto doc = nlohmann::json::parse(text);
        doc["devices"][0]["results"][2]["verified"] = false; // hbm_triad: hbm_copy 2.90e12 is then the best
        const auto p = core::loadCalibrationProfile(doc.dump(), core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        const auto g = core::calibratedGpu(*p, "x.json", core::builtinCatalog());
        QCOMPARE(g.peak(core::PeakColumn::Bf16), 989.5e12);
        QCOMPARE(g.peak(core::PeakColumn::Fp16), 7.95e14);
        QCOMPARE(g.bandwidthBytesPerSecond, 2.9e12); // not hbm_read's 3.00e12: read-only, never the ceiling
        QVERIFY(g.calibration->peakSource(core::PeakColumn::Bf16).rfind("spec (not measured in x.json)", 0) == 0);
        QCOMPARE(g.calibration->bandwidthResult, std::string("hbm_copy"));
    }

    void deviceNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("id");
        // clang-format off
        QTest::newRow("H100 SXM") << "NVIDIA H100 80GB HBM3" << "h100-sxm";
        QTest::newRow("H100 PCIe") << "NVIDIA H100 PCIe" << "h100-pcie";
        QTest::newRow("H100 NVL") << "NVIDIA H100 NVL" << "h100-nvl";
        QTest::newRow("H200") << "NVIDIA H200" << "h200-sxm";
        QTest::newRow("H200 NVL (another part)") << "NVIDIA H200 NVL" << "";
        QTest::newRow("GH200 (not in the catalogue)") << "NVIDIA GH200 480GB" << "";
        QTest::newRow("A100 SXM 80") << "NVIDIA A100-SXM4-80GB" << "a100-sxm4-80gb";
        QTest::newRow("A100 SXM 40") << "NVIDIA A100-SXM4-40GB" << "a100-sxm4-40gb";
        QTest::newRow("A100 PCIe 80") << "NVIDIA A100 80GB PCIe" << "a100-pcie-80gb";
        QTest::newRow("A100 PCIe 40 (not in the catalogue)") << "NVIDIA A100-PCIE-40GB" << "";
        QTest::newRow("V100") << "Tesla V100-SXM2-32GB" << "v100-sxm2-32gb";
        QTest::newRow("B200") << "NVIDIA B200" << "b200";
        QTest::newRow("L40S") << "NVIDIA L40S" << "l40s";
        QTest::newRow("L4") << "NVIDIA L4" << "l4";
        QTest::newRow("A10") << "NVIDIA A10" << "a10";
        QTest::newRow("RTX 4090") << "NVIDIA GeForce RTX 4090" << "rtx-4090";
        QTest::newRow("unknown") << "NVIDIA Hopper Engineering Sample" << "";
        // clang-format on
    }
    void deviceNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, id);
        QCOMPARE(QString::fromStdString(std::string(core::catalogGpuForDevice(name.toStdString()))), id);
    }
    void patternTableNamesCatalogueGpus()
    {
        for (const auto& p : core::deviceNamePatterns())
            QVERIFY2(core::builtinCatalog().gpu(p.gpuId), std::string(p.gpuId).c_str());
    }

    void flaggedNotRejected_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("warning");
        // clang-format off
        QTest::newRow("unknown device") << "unknown_device.json" << "calibration_unknown_device";
        QTest::newRow("A100 with 42 GB") << "a100_memory_differs.json" << "calibration_memory_differs";
        // clang-format on
    }
    void flaggedNotRejected()
    {
        QFETCH(QString, file);
        QFETCH(QString, warning);
        const auto sc = test::scenario({"cluster.gpu=calibration:calibration/" + file.toStdString()});
        const auto plan = core::estimate(sc);
        QVERIFY(hasWarning(plan, warning.toStdString()));
        QCOMPARE(plan.hardware.achievableBandwidth, 2.93e12);
        QCOMPARE(plan.hardware.achievableFlops, 7.9e14);
    }
    void unknownDeviceUsesItsOwnMemory()
    {
        const auto plan = core::estimate(test::scenario({"cluster.gpu=calibration:calibration/unknown_device.json"}));
        QCOMPARE(plan.memory.capacity, 84987740160.0); // the profile's memory_bytes
        QVERIFY(hasWarning(plan, "no_tdp"));
    }

    // Each hostile profile is rejected with one error naming the JSON path inside the profile, and
    // through a scenario with an error naming cluster.gpu.
    void hostile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("why");
        // clang-format off
        QTest::newRow("wrong schema") << "wrong_schema.json" << "schema" << "unsupported schema";
        QTest::newRow("status no_driver") << "no_driver.json" << "status" << "no_driver): No NVIDIA driver found";
        QTest::newRow("NaN as a string") << "nan_string.json" << "devices[0].results[3].best" << "must be a JSON number";
        QTest::newRow("1e999") << "nan_1e999.json" << "profile" << "1e999";
        QTest::newRow("negative") << "negative.json" << "devices[0].results[8].median" << "out of range";
        QTest::newRow("missing best") << "missing_best.json" << "devices[0].results[8].best" << "missing required number";
        QTest::newRow("best < median") << "best_below_median.json" << "devices[0].results[8].best" << "below the median";
        QTest::newRow("sample > best") << "sample_above_best.json" << "devices[0].results[8].samples[1]" << "above best";
        QTest::newRow("10x bandwidth") << "absurd_bandwidth.json" << "devices[0].results[0].best" << "physically absurd";
        QTest::newRow("unknown key") << "unknown_key.json" << "devices[0].results[0].colour" << "unknown key";
        QTest::newRow("deep nesting") << "deep_nesting.json" << "profile" << "nested deeper than 64";
        QTest::newRow("huge memory") << "huge_numbers.json" << "devices[0].memory_bytes" << "physically absurd";
        QTest::newRow("wrong type") << "wrong_types.json" << "devices[0].results[8].verified" << "must be a boolean";
        QTest::newRow("empty file") << "empty.json" << "profile" << "is empty";
        QTest::newRow("truncated file") << "truncated.json" << "profile" << "invalid JSON";
        // clang-format on
    }
    void hostile()
    {
        QFETCH(QString, file);
        QFETCH(QString, field);
        QFETCH(QString, why);
        core::Errors errors;
        const auto p =
            core::loadCalibrationProfile(test::calibrationFixture(file.toStdString()), core::builtinCatalog(), errors);
        QVERIFY(!p);
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(errors[0].field), field);
        QVERIFY2(errors[0].why.find(why.toStdString()) != std::string::npos, core::describe(errors[0]).c_str());

        const auto scErrors = test::scenarioErrors({"cluster.gpu=calibration:calibration/" + file.toStdString()});
        QVERIFY(!scErrors.empty());
        QCOMPARE(scErrors[0].field, std::string("cluster.gpu"));
        const auto line = core::describe(scErrors[0]);
        const std::string named = field == QStringLiteral("profile") ? "profile: " : "profile " + field.toStdString();
        QVERIFY2(line.find(named) != std::string::npos, line.c_str());
        QVERIFY2(line.find(why.toStdString()) != std::string::npos, line.c_str());
    }

    void absurdNamesTheLimit()
    {
        core::Errors errors;
        core::loadCalibrationProfile(test::calibrationFixture("absurd_bandwidth.json"), core::builtinCatalog(), errors);
        QCOMPARE(errors.size(), std::size_t(1));
        // Best catalogue bandwidth: GB200, 8e12 B/s; 3x is 2.4e13.
        QCOMPARE(errors[0].allowed, std::string("greater than 0 up to 2.4e+13"));
        QVERIFY(errors[0].why.find("NVIDIA GB200") != std::string::npos);
    }

    void scenarioFileErrors_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<QString>("why");
        // clang-format off
        QTest::newRow("missing file") << "cluster.gpu=calibration:calibration/nope.json" << "cannot open file";
        QTest::newRow("no file") << "cluster.gpu=calibration:" << "names no profile file";
        QTest::newRow("unknown id lists calibration") << "cluster.gpu=h900" << "unknown GPU";
        // clang-format on
    }
    void scenarioFileErrors()
    {
        QFETCH(QString, set);
        QFETCH(QString, why);
        const auto errors = test::scenarioErrors({set.toStdString()});
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors[0].field, std::string("cluster.gpu"));
        QVERIFY2(errors[0].why.find(why.toStdString()) != std::string::npos, core::describe(errors[0]).c_str());
        QVERIFY(errors[0].allowed.find("calibration:FILE") != std::string::npos);
    }

    // A profile that measured fp8 but not fp4: nvfp4 compute has no rate on the H100 either way.
    void unmeasuredMissingColumnIsAnError()
    {
        const auto errors = test::scenarioErrors({kGood, "precision.compute=nvfp4"});
        QVERIFY(!errors.empty());
        QCOMPARE(errors[0].field, std::string("precision.compute"));
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
