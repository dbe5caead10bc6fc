// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Measured GEMM shapes (napkin.calibration/2 gemm_shapes points, version-1 gemm_m_sweep) drive the
// step time (core/achievable.h measuredGemmRate): exact at a measured shape, the built-in curve far
// from every one, and a profile whose GEMMs run slower lowers the predicted MFU by what they add.
#include "testsupport.h"

#include "achievable.h"
#include "calibration.h"
#include "catalog.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

using namespace napkin;

namespace {

// A flat curve of 1e15 FLOP/s, so that each correction is rate / 1e15.
double flat(double, double, double, const void*) { return 1e15; }

// good_h100.json as version 2 with these GEMM points (m, n, k, FLOP/s) in bf16, and no others.
core::GpuSpec profileWith(const std::vector<std::array<double, 4>>& gemms)
{
    auto doc = nlohmann::json::parse(test::calibrationFixture("good_h100.json"));
    doc["schema"] = "napkin.calibration/2";
    auto& points = doc["devices"][0]["points"];
    points = nlohmann::json::array();
    for (const auto& g : gemms) {
        const double flops = 2 * g[0] * g[1] * g[2];
        points.push_back({{"series", "gemm_shapes"},
                          {"label", "x"},
                          {"dtype", "bf16"},
                          {"flops", flops},
                          {"bytes", 2 * (g[0] * g[2] + g[2] * g[1] + g[0] * g[1])},
                          {"seconds", flops / g[3]},
                          {"size", {{"m", g[0]}, {"n", g[1]}, {"k", g[2]}}}});
    }
    core::Errors errors;
    const auto p = core::loadCalibrationProfile(doc.dump(), core::builtinCatalog(), errors);
    if (!p || !errors.empty())
        qFatal("profile rejected: %s", errors.empty() ? "?" : core::describe(errors.front()).c_str());
    return core::calibratedGpu(*p, "shapes.json", core::builtinCatalog());
}

core::Plan planOn(const core::GpuSpec& gpu)
{
    // One H100, Llama 3 8B at micro-batch 2 x 4096: every layer GEMM compute-bound, no communication.
    auto sc = test::scenario({"step_time.mode=predicted", "model.preset=llama-3-8b", "training.micro_batch=2",
                              "training.seq_len=4096", "cluster.gpus=1", "training.recompute=none"});
    sc.gpu = std::make_shared<core::GpuSpec>(gpu);
    return core::estimate(sc);
}

bool layerGemm(const core::RooflineOp& op)
{
    return op.kind == core::OpKind::Gemm && op.batch <= 1 && op.groupedShare == 0 &&
           op.achievableSeconds > op.bytes / 2.93e12 * 1.01; // compute-bound at the profile's bandwidth
}

} // namespace

class TestGemmShapes : public QObject {
    Q_OBJECT
private slots:
    void interpolationByHand()
    {
        const std::vector<core::MeasuredGemm> pts = {{1024, 1024, 1024, 0.5e15}, {8192, 8192, 8192, 0.8e15}};
        // At a measured shape: its measurement.
        QCOMPARE(core::measuredGemmRate(1024, 1024, 1024, pts, 1e15, flat, nullptr), 0.5e15);
        QCOMPARE(core::measuredGemmRate(8192, 8192, 8192, pts, 1e15, flat, nullptr), 0.8e15);
        // Between them, 2048^3: squared log2-distances 3 (1 in each of m, n, k) and 12; weights 1/3^2,
        // 1/12^2 and the curve's 1/16: exp((ln 0.5 / 9 + ln 0.8 / 144) / (1/9 + 1/144 + 1/16)).
        const double w1 = 1.0 / 9, w2 = 1.0 / 144, w0 = 1.0 / 16;
        const double expect = 1e15 * std::exp((w1 * std::log(0.5) + w2 * std::log(0.8)) / (w0 + w1 + w2));
        QCOMPARE(core::measuredGemmRate(2048, 2048, 2048, pts, 1e15, flat, nullptr), expect);
        // Far from both (a factor 2^10 in m): d^2 = 100 and 13^2 + 3^2 + 3^2 = 187, almost the curve.
        const double v1 = 1.0 / (100.0 * 100.0), v2 = 1.0 / (187.0 * 187.0);
        const double far = 1e15 * std::exp((v1 * std::log(0.5) + v2 * std::log(0.8)) / (w0 + v1 + v2));
        QCOMPARE(core::measuredGemmRate(1, 1024, 1024, pts, 1e15, flat, nullptr), far);
        QVERIFY(far / 1e15 > 0.998);
        // Never above the fastest of the measurements and the cap.
        const std::vector<core::MeasuredGemm> fast = {{4096, 4096, 4096, 3e15}};
        QCOMPARE(core::measuredGemmRate(4096, 4096, 4096, fast, 1e15, flat, nullptr), 3e15);
        QVERIFY(core::measuredGemmRate(4096, 4096, 2048, fast, 1e15, flat, nullptr) <= 3e15);
    }

    // napkin-probe's full run on an H200 after a 180 s soak (docs/measurements/h200-2026-12-04c): Llama 3
    // 8B at micro-batch 2 x 4096 runs exactly the sweep's h = 4096, T = 8192 shapes, so its forward GEMMs
    // take the measured rates: qkv (8192 x 6144 x 4096) 692.3 TFLOP/s, fc1 (8192 x 28672 x 4096) 697.4,
    // fc2 (8192 x 4096 x 14336) 718.7, logits (8192 x 128256 x 4096) 701.0; proj (8192 x 4096 x 4096),
    // also measured by the M-sweep, the geometric mean of both.
    void measuredH200DrivesLlama8b()
    {
        core::Errors errors;
        const auto p = core::loadCalibrationProfile(test::calibrationFixture("h200_measured_v2.json"),
                                                    core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        QCOMPARE(p->schemaVersion, 2);
        auto rateOf = [&](const std::string& series, const std::string& label, const std::string& dtype) {
            for (const auto& pt : p->devices[0].points)
                if (pt.series == series && pt.label == label && pt.dtype == dtype)
                    return pt.flopsPerSecond();
            return 0.0;
        };
        const auto gpu = core::calibratedGpu(*p, "h200.json", core::builtinCatalog());
        QVERIFY(gpu.calibration->warnings.empty()); // sw_power_cap only: the board at its limit, no fault
        // The profile's eight GEMM steps: SM 1,305 (fp8) to 1,890 MHz (fp32), 807 W at most (fp8, the
        // energy counter's average over the step), 60 C (fp16).
        QCOMPARE(core::calibrationConditionsSummary(*gpu.calibration),
                 std::string("During the GEMMs: SM clock 1305-1890 MHz, up to 807 W and 60 C; clock limited by "
                             "sw_power_cap"));
        auto sc = test::scenario({"step_time.mode=predicted", "model.preset=llama-3-8b", "training.micro_batch=2",
                                  "training.seq_len=4096", "cluster.gpus=1"});
        sc.gpu = std::make_shared<core::GpuSpec>(gpu);
        const auto plan = core::estimate(sc);
        auto forward = [&](std::string_view name) {
            for (const auto& op : plan.ops)
                if (op.name == name && op.pass == core::Pass::Forward)
                    return op.flops / op.achievableSeconds;
            return 0.0;
        };
        QCOMPARE(forward("qkv_proj"), rateOf("gemm_shapes", "qkv h=4096 T=8192", "bf16"));
        QCOMPARE(forward("mlp_gate_up"), rateOf("gemm_shapes", "fc1 h=4096 T=8192", "bf16"));
        QCOMPARE(forward("mlp_down"), rateOf("gemm_shapes", "fc2 h=4096 T=8192", "bf16"));
        QCOMPARE(forward("logits"), rateOf("gemm_shapes", "logits h=4096 T=8192", "bf16"));
        QCOMPARE(forward("out_proj"), std::sqrt(rateOf("gemm_shapes", "proj h=4096 T=8192", "bf16") *
                                                rateOf("gemm_m_sweep", "M=8192", "bf16")));
        QVERIFY(std::fabs(forward("mlp_gate_up") / 697.4e12 - 1) < 1e-3);
    }

    // The catalogue's sustained shares (resources/gpus.json, H200 and the GH100 parts at 700 W) are the
    // geometric mean, over the soaked run's 30 transformer shapes, of the measured rate against the
    // catalogue figure carried to that shape by the shape curve: recomputed here from the profile.
    void sustainedShareIsTheMeasuredOne()
    {
        core::Errors errors;
        const auto p = core::loadCalibrationProfile(test::calibrationFixture("h200_measured_v2.json"),
                                                    core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        const auto& h200 = *core::builtinCatalog().gpu("h200-sxm");
        auto share = [&](const char* dtype, double figure, const std::array<double, 3>& at) {
            const double atEff = core::gemmShapeEfficiency(at[0], at[1], at[2], 1, 132, 90);
            double logSum = 0;
            int n = 0;
            for (const auto& pt : p->devices[0].points)
                if (pt.series == "gemm_shapes" && pt.dtype == dtype) {
                    const double eff = core::gemmShapeEfficiency(pt.m, pt.n, pt.k, 1, 132, 90);
                    logSum += std::log(pt.flopsPerSecond() / std::min(figure, figure * eff / atEff));
                    ++n;
                }
            return n == 30 ? std::exp(logSum / n) : 0.0;
        };
        const double bf16 = share("bf16", h200.achievableMatmulFlops, h200.achievableMatmulShape);
        const double fp8 = share("fp8_e4m3", h200.achievableMatmulFp8Flops, h200.achievableMatmulFp8Shape);
        QVERIFY2(std::fabs(bf16 - h200.sustainedShare16) < 5e-4, std::to_string(bf16).c_str());
        QVERIFY2(std::fabs(fp8 - h200.sustainedShareFp8) < 5e-4, std::to_string(fp8).c_str());
        for (const char* id : {"h100-sxm", "h100-sxm-96gb", "h800-sxm"}) { // same GH100 at 700 W: assumed
            QCOMPARE(core::builtinCatalog().gpu(id)->sustainedShare16, h200.sustainedShare16);
            QCOMPARE(core::builtinCatalog().gpu(id)->sustainedShareFp8, h200.sustainedShareFp8);
        }
    }

    // The shares from published measurements (gpus.json sustained_source) are their stated derivation:
    // a sustained rate over the shape curve through the catalogue's burst figure, at the sustained
    // measurement's shape. B200: mamf-finder's MSMF (stas00/ml-engineering fast-mamf 082816f9), bf16
    // 1456.3 TFLOP/s at 9472 x 8192 x 20480, fp8 2795.7 at 9472 x 8192 x 16384. A100: Azure ND A100 v4
    // cuBLASLt FP16 after 10,000 warm-ups, 253.7 at 8192^3 and 256.5 at 16384^3 (geometric mean).
    void publishedSustainedSharesAreTheirDerivation()
    {
        const auto& cat = core::builtinCatalog();
        auto curve = [](const core::GpuSpec& g, double figure, const std::array<double, 3>& at, double m, double n,
                        double k) {
            const double atEff = core::gemmShapeEfficiency(at[0], at[1], at[2], 1, g.smCount, g.computeCapability);
            const double eff = core::gemmShapeEfficiency(m, n, k, 1, g.smCount, g.computeCapability);
            return std::min(figure, figure * eff / atEff);
        };
        const auto& b200 = *cat.gpu("b200");
        const double bf16 =
            1456.3e12 / curve(b200, b200.achievableMatmulFlops, b200.achievableMatmulShape, 9472, 8192, 20480);
        const double fp8 =
            2795.7e12 / curve(b200, b200.achievableMatmulFp8Flops, b200.achievableMatmulFp8Shape, 9472, 8192, 16384);
        QVERIFY2(std::fabs(bf16 - b200.sustainedShare16) < 5e-4, std::to_string(bf16).c_str());
        QVERIFY2(std::fabs(fp8 - b200.sustainedShareFp8) < 5e-4, std::to_string(fp8).c_str());
        for (const char* id : {"a100-sxm4-80gb", "a100-sxm4-40gb"}) { // same GA100 at 400 W
            const auto& a100 = *cat.gpu(id);
            auto at = [&](double side) {
                return curve(a100, a100.achievableMatmulFlops, a100.achievableMatmulShape, side, side, side);
            };
            const double share = std::sqrt(253.7e12 / at(8192) * (256.5e12 / at(16384)));
            QVERIFY2(std::fabs(share - a100.sustainedShare16) < 5e-3, std::to_string(share).c_str()); // 0.94 stored
        }
        QCOMPARE(cat.gpu("gb200")->sustainedShare16, 1.0); // not measured (1,200 W: not the B200's)
    }

    // A version-1 profile's M-sweep ("M=128", N = K = 4096) carries its shape; a version-1 point with a
    // "size" is an error (version 2 only), as is a version-2 key such as "conditions".
    void versionOneStillLoads()
    {
        core::Errors errors;
        const auto p =
            core::loadCalibrationProfile(test::calibrationFixture("good_h100.json"), core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        QCOMPARE(p->schemaVersion, 1);
        const auto& pt = p->devices[0].points[2];
        QCOMPARE(pt.label, std::string("M=128"));
        QCOMPARE(pt.m, 128.0);
        QCOMPARE(pt.n, 4096.0);
        QCOMPARE(pt.k, 4096.0);
        QCOMPARE(p->devices[0].points[7].m, 0.0); // intensity sweep: no shape

        auto doc = nlohmann::json::parse(test::calibrationFixture("good_h100.json"));
        doc["devices"][0]["points"][0]["size"] = {{"m", 1}, {"n", 4096}, {"k", 4096}};
        doc["devices"][0]["conditions"] = nlohmann::json::array();
        errors.clear();
        QVERIFY(!core::loadCalibrationProfile(doc.dump(), core::builtinCatalog(), errors));
        QCOMPARE(errors.size(), size_t(2));
        QCOMPARE(errors[0].field, std::string("devices[0].points[0].size"));
        QCOMPARE(errors[1].field, std::string("devices[0].conditions"));
    }

    // Throttled by heat: a warning; held at the power limit (a sustained GEMM's normal state): none.
    void throttledRunIsFlagged()
    {
        auto doc = nlohmann::json::parse(test::calibrationFixture("good_h100.json"));
        doc["schema"] = "napkin.calibration/2";
        doc["devices"][0]["conditions"] = {{{"step", "gemm_bf16"},
                                            {"sm_clock_mhz", 1410},
                                            {"temperature_c", 88},
                                            {"power_w", 700},
                                            {"throttle", {"sw_power_cap"}}}};
        core::Errors errors;
        auto p = core::loadCalibrationProfile(doc.dump(), core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        QVERIFY(core::calibratedGpu(*p, "a.json", core::builtinCatalog()).calibration->warnings.empty());
        doc["devices"][0]["conditions"][0]["throttle"] = {"sw_power_cap", "hw_thermal_slowdown"};
        p = core::loadCalibrationProfile(doc.dump(), core::builtinCatalog(), errors);
        QVERIFY(p && errors.empty());
        const auto warnings = core::calibratedGpu(*p, "a.json", core::builtinCatalog()).calibration->warnings;
        QCOMPARE(warnings.size(), size_t(1));
        QCOMPARE(warnings[0].code, std::string("calibration_throttled"));
        QVERIFY(warnings[0].message.find("hw_thermal_slowdown, SM 1410 MHz, 88 C) during gemm_bf16") !=
                std::string::npos);
    }

    // The goal of issue 18: a profile whose GEMMs run at a fraction f of the built-in curve at the plan's
    // own shapes makes each of those GEMMs 1/f as long, and the step's compute grows by (1/f - 1) of
    // their time: f = 0.5 adds exactly 4x what f = 0.8 adds; MFU falls accordingly.
    void slowerMeasuredGemmsLowerMfu()
    {
        const auto base = planOn(profileWith({}));
        QVERIFY(base.stepTime.valid);
        std::vector<std::array<double, 4>> at80, at50;
        std::vector<std::size_t> idx;
        for (std::size_t i = 0; i < base.ops.size(); ++i) {
            const auto& op = base.ops[i];
            if (!layerGemm(op))
                continue;
            const double rate = op.flops / op.achievableSeconds;
            at80.push_back({op.m, op.n, op.k, 0.8 * rate});
            at50.push_back({op.m, op.n, op.k, 0.5 * rate});
            idx.push_back(i);
        }
        QVERIFY(idx.size() >= 4); // qkv, proj, fc1, fc2 at least (forward, backward)
        const auto slow80 = planOn(profileWith(at80));
        const auto slow50 = planOn(profileWith(at50));
        for (std::size_t i : idx) {
            QCOMPARE(slow80.ops[i].achievableSeconds, base.ops[i].achievableSeconds / 0.8);
            QCOMPARE(slow50.ops[i].achievableSeconds, base.ops[i].achievableSeconds / 0.5);
            QVERIFY(std::string_view(slow80.ops[i].efficiencySource).find("napkin-probe's measured GEMM shapes") !=
                    std::string_view::npos);
        }
        const double d80 = slow80.stepTime.compute - base.stepTime.compute;
        const double d50 = slow50.stepTime.compute - base.stepTime.compute;
        QVERIFY(d80 > 0);
        QCOMPARE(d50 / d80, 4.0);
        QVERIFY(slow80.time.mfu < base.time.mfu && slow50.time.mfu < slow80.time.mfu);
        QCOMPARE(slow80.time.mfu / base.time.mfu, base.stepTime.step / slow80.stepTime.step);
    }
};

QTEST_APPLESS_MAIN(TestGemmShapes)
#include "tst_gemm_shapes.moc"
