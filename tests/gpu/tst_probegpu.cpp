// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Label `gpu`: the real suite in --quick mode on the local GPU; every kernel's output verified and its
// figures bounded by plausible limits. QSKIPs with the probe's own reason where no GPU is usable, and
// then exits with kSkipReturnCode, which CTest's SKIP_RETURN_CODE turns into "Skipped" (not "Passed").

#include <nlohmann/json.hpp>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <string>

namespace {

// Dense bf16 peak (FLOP/s) and memory bandwidth (B/s) from vendor spec sheets, for the bounds.
struct Spec {
    const char* token;
    double bf16;
    double bandwidth;
};
const Spec kSpecs[] = {
    {"H200", 989e12, 4.8e12},       // NVIDIA H200 datasheet (SXM)
    {"H100 PCIe", 756e12, 2.0e12},  // H100 datasheet, PCIe
    {"H100", 989e12, 3.35e12},      // H100 datasheet, SXM
    {"A100", 312e12, 2.04e12},      // A100 datasheet (80 GB SXM bandwidth as the upper bound)
    {"L4", 121e12, 0.30e12},        // L4 datasheet (dense)
    {"RTX 4090", 165e12, 1.008e12}, // Ada whitepaper, fp32 accumulate
};

// Automake's "skipped" code; tests/gpu/CMakeLists.txt sets it as the test's SKIP_RETURN_CODE.
constexpr int kSkipReturnCode = 77;

const Spec* specFor(const std::string& name)
{
    for (const Spec& s : kSpecs)
        if (name.find(s.token) != std::string::npos)
            return &s;
    return nullptr;
}

} // namespace

class TestProbeGpu : public QObject {
    Q_OBJECT
public:
    // True when initTestCase skipped the whole suite because the probe found no usable GPU.
    bool noGpu() const { return m_noGpu; }

private:
    nlohmann::json m_profile;
    bool m_noGpu = false;
    const nlohmann::json* result(const std::string& id) const
    {
        for (const auto& r : m_profile["devices"][0]["results"])
            if (r["id"] == id)
                return &r;
        return nullptr;
    }
private slots:
    void initTestCase()
    {
        QTemporaryDir dir;
        const QString path = QDir(dir.path()).filePath(u"quick.json"_qs);
        QProcess p;
        p.start(QStringLiteral(NAPKIN_PROBE_PATH), {u"--quick"_qs, u"--no-progress"_qs, u"-o"_qs, path});
        QVERIFY2(p.waitForFinished(110000), "napkin-probe --quick did not finish in 110 s");
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QFile f(path);
        QVERIFY2(f.open(QIODevice::ReadOnly), p.readAllStandardError().constData());
        m_profile = nlohmann::json::parse(f.readAll().toStdString());
        if (p.exitCode() == 3) {
            m_noGpu = true;
            const std::string why = "no usable GPU: " + m_profile["status"].get<std::string>() + ": " +
                                    m_profile["message"].get<std::string>();
            QSKIP(why.c_str());
        }
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(m_profile["status"].get<std::string>(), std::string("ok"));
        QVERIFY(m_profile["probe"]["elapsed_seconds"].get<double>() < 30); // quick: <= 10 s on H100-class
    }
    void everyResultVerifiedAndConsistent()
    {
        const auto& results = m_profile["devices"][0]["results"];
        QVERIFY(results.size() >= 10);
        for (const auto& r : results) {
            const std::string id = r["id"];
            QVERIFY2(r["verified"].get<bool>(), id.c_str());
            const double best = r["best"], median = r["median"];
            QVERIFY2(best >= median && median > 0, id.c_str());
            for (const auto& s : r["samples"])
                QVERIFY2(s.get<double>() > 0 && s.get<double>() <= best, id.c_str());
        }
        for (const char* id :
             {"hbm_copy", "hbm_scale", "hbm_triad", "hbm_read", "memcpy_d2d", "fma_fp32", "gemm_fp32", "gemm_tf32",
              "gemm_fp16", "gemm_bf16", "h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"})
            QVERIFY2(result(id), id);
    }
    void gemmWithinSpec()
    {
        const auto* g = result("gemm_bf16");
        QVERIFY(g);
        const double best = (*g)["best"];
        const Spec* s = specFor(m_profile["devices"][0]["name"]);
        if (!s) {
            QVERIFY(best > 1e12 && best < 3e15); // unknown GPU: between 1 TFLOP/s and 3 PFLOP/s
            return;
        }
        QVERIFY2(best >= 0.3 * s->bf16 && best <= 1.0 * s->bf16, std::to_string(best).c_str());
        QVERIFY((*g)["max_rel_err"].get<double>() <= 2e-2);
    }
    void bandwidthWithinSpec()
    {
        const auto* c = result("hbm_copy");
        QVERIFY(c);
        const double best = (*c)["best"];
        const Spec* s = specFor(m_profile["devices"][0]["name"]);
        if (!s)
            QVERIFY(best > 1e10 && best < 2e13);
        else
            QVERIFY2(best >= 0.3 * s->bandwidth && best <= 1.0 * s->bandwidth, std::to_string(best).c_str());
        const auto* h2d = result("h2d_pinned");
        QVERIFY(h2d);
        // Host link: above 1 GB/s, below 500 GB/s (PCIe 5 x16 is 64 GB/s; Grace Hopper C2C 450 GB/s)
        QVERIFY((*h2d)["best"].get<double>() > 1e9 && (*h2d)["best"].get<double>() < 5e11);
    }
    void points()
    {
        std::map<std::string, int> counts;
        for (const auto& p : m_profile["devices"][0]["points"]) {
            counts[p["series"]]++;
            QVERIFY(p["flops"].get<double>() > 0 && p["bytes"].get<double>() > 0 && p["seconds"].get<double>() > 0);
        }
        QCOMPARE(counts["gemm_m_sweep"], 14);   // M = 1, 2, 4, ..., 8192
        QCOMPARE(counts["intensity_sweep"], 9); // 0.25 .. 64 FLOP/byte
        QCOMPARE(counts["elementwise"], 2);     // relu, gelu
        QCOMPARE(counts["gemm_shapes"], 5);     // quick: qkv, proj, fc1, fc2, logits at h = 4096, T = 8192
        for (const auto& p : m_profile["devices"][0]["points"])
            if (p["series"] == "gemm_shapes")
                QVERIFY(p["size"]["m"].get<long long>() == 8192);
    }
    // NVML (the driver's libnvidia-ml.so.1) loads wherever the driver does: clocks and power per step.
    void conditions()
    {
        QVERIFY(m_profile["libraries"]["nvml"]["loaded"].get<bool>());
        const auto& c = m_profile["devices"][0]["conditions"];
        QVERIFY(c.size() >= 8);
        for (const auto& x : c)
            QVERIFY(x["sm_clock_mhz"].get<int>() > 100 && x["power_w"].get<double>() > 0);
    }
};

// QTEST_GUILESS_MAIN, but a run that skipped for want of a GPU exits with kSkipReturnCode: a skip
// in initTestCase would otherwise exit 0 and read as "Passed" in CTest.
int main(int argc, char* argv[])
{
    QCoreApplication app(argc, argv);
    TestProbeGpu test;
    QTEST_SET_MAIN_SOURCE_PATH
    const int rc = QTest::qExec(&test, argc, argv);
    return rc == 0 && test.noGpu() ? kSkipReturnCode : rc;
}
#include "tst_probegpu.moc"
