// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Host-side pieces of napkin_gpu against independently known values: the cudaError -> status table of
// probe-methods.md section 2, exit codes, sample statistics, nccl-tests' busbw, bytes per kernel
// (BabelStream weights), the JSON writer (and Napkin's loader reading it back), options, atomic writes,
// the transformer GEMM shapes, NVML conditions.

#include "calibration.h"
#include "nvml.h"
#include "options.h"
#include "profile.h"
#include "runner.h"
#include "stats.h"
#include "status.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <cmath>

using namespace napkin::gpu;

class TestProbeHost : public QObject {
    Q_OBJECT
private slots:
    void statusFromCount_data()
    {
        QTest::addColumn<int>("err");
        QTest::addColumn<int>("driver");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("exit");
        // driver_types.h codes; probe-methods.md section 2 table
        QTest::newRow("success") << 0 << 13000 << 2 << "ok" << 0;
        QTest::newRow("success, zero devices") << 0 << 13000 << 0 << "no_device" << 3;
        QTest::newRow("100 no device") << 100 << 13000 << 0 << "no_device" << 3;
        QTest::newRow("35, no driver") << 35 << 0 << 0 << "no_driver" << 3;
        QTest::newRow("35, old driver") << 35 << 12040 << 0 << "driver_too_old" << 3;
        QTest::newRow("46 exclusive") << 46 << 13000 << 0 << "device_busy" << 3;
        QTest::newRow("209 no image") << 209 << 13000 << 0 << "no_kernel_image" << 3;
        QTest::newRow("34 stub libcuda") << 34 << 0 << 0 << "error" << 1;
        QTest::newRow("803 driver mismatch") << 803 << 13000 << 0 << "error" << 1;
        QTest::newRow("804 compat") << 804 << 13000 << 0 << "error" << 1;
        QTest::newRow("999 unknown") << 999 << 13000 << 0 << "error" << 1;
    }
    void statusFromCount()
    {
        QFETCH(int, err);
        QFETCH(int, driver);
        QFETCH(int, count);
        QFETCH(QString, status);
        QFETCH(int, exit);
        const Status s = statusFromDeviceCount(err, driver, count);
        QCOMPARE(QString::fromLatin1(statusName(s)), status);
        QCOMPARE(exitCodeFor(s), exit);
    }
    void statusFromLaunch()
    {
        QCOMPARE(statusFromFirstLaunch(0), Status::Ok);
        QCOMPARE(statusFromFirstLaunch(209), Status::NoKernelImage);
        QCOMPARE(statusFromFirstLaunch(200), Status::NoKernelImage);
        QCOMPARE(statusFromFirstLaunch(46), Status::DeviceBusy);
        QCOMPARE(statusFromFirstLaunch(2), Status::Error); // out of memory at the first allocation
    }
    void messages()
    {
        const std::string m = statusMessage(Status::NoDriver, 0, 13000);
        QVERIFY(m.find("CUDA 13.0") != std::string::npos);
        QVERIFY(m.find("install") != std::string::npos);
        QVERIFY(m.find('\n') == std::string::npos);
        const std::string old = statusMessage(Status::DriverTooOld, 12040, 13000, "cudaErrorInsufficientDriver");
        QVERIFY(old.find("CUDA 12.4") != std::string::npos);
        QVERIFY(old.find("(cudaErrorInsufficientDriver)") != std::string::npos);
    }

    void stats_data()
    {
        QTest::addColumn<QList<double>>("rates");
        QTest::addColumn<double>("best");
        QTest::addColumn<double>("median");
        QTest::addColumn<int>("kept");
        QTest::newRow("odd") << QList<double>{3, 1, 2} << 3.0 << 2.0 << 3;
        QTest::newRow("even") << QList<double>{4, 1, 3, 2} << 4.0 << 2.5 << 4;
        QTest::newRow("one") << QList<double>{7} << 7.0 << 7.0 << 1;
        QTest::newRow("drops nan, inf, 0, negative") << QList<double>{5, NAN, INFINITY, 0, -1, 1} << 5.0 << 3.0 << 2;
        QTest::newRow("empty") << QList<double>{} << 0.0 << 0.0 << 0;
    }
    void stats()
    {
        QFETCH(QList<double>, rates);
        QFETCH(double, best);
        QFETCH(double, median);
        QFETCH(int, kept);
        const Stats s = rateStats(std::vector<double>(rates.begin(), rates.end()));
        QCOMPARE(s.best, best);
        QCOMPARE(s.median, median);
        QCOMPARE(static_cast<int>(s.samples.size()), kept);
    }

    void busbw_data()
    {
        QTest::addColumn<double>("algbw");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<double>("busbw");
        // nccl-tests doc/PERFORMANCE.md: busbw = algbw * 2(n-1)/n
        QTest::newRow("1 rank") << 100.0 << 1 << 0.0;
        QTest::newRow("2 ranks") << 100.0 << 2 << 100.0;
        QTest::newRow("4 ranks") << 100.0 << 4 << 150.0;
        QTest::newRow("8 ranks") << 100.0 << 8 << 175.0;
        QTest::newRow("8 ranks, 274 GB/s") << 274e9 << 8 << 479.5e9; // Azure H200 NVLS busbw ~480 GB/s
    }
    void busbw()
    {
        QFETCH(double, algbw);
        QFETCH(int, ranks);
        QFETCH(double, busbw);
        QCOMPARE(allReduceBusBw(algbw, ranks), busbw);
    }

    void bytes_data()
    {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<double>("n");
        QTest::addColumn<double>("elt");
        QTest::addColumn<double>("bytes");
        // BabelStream weights: copy/scale 2 arrays, triad 3, dot (here read) 1 per array read
        QTest::newRow("copy 1 GiB fp32") << int(Kernel::Copy) << 268435456.0 << 4.0 << 2147483648.0;
        QTest::newRow("scale") << int(Kernel::Scale) << 1000.0 << 4.0 << 8000.0;
        QTest::newRow("triad") << int(Kernel::Triad) << 1000.0 << 4.0 << 12000.0;
        QTest::newRow("read") << int(Kernel::Read) << 1000.0 << 4.0 << 4000.0;
        QTest::newRow("memcpy d2d counts read + write") << int(Kernel::MemcpyD2D) << 1000.0 << 4.0 << 8000.0;
        QTest::newRow("relu bf16") << int(Kernel::Relu) << 1000.0 << 2.0 << 4000.0;
        QTest::newRow("gelu bf16") << int(Kernel::Gelu) << 1000.0 << 2.0 << 4000.0;
        QTest::newRow("intensity fp32") << int(Kernel::Intensity) << 1000.0 << 4.0 << 8000.0;
    }
    void bytes()
    {
        QFETCH(int, kernel);
        QFETCH(double, n);
        QFETCH(double, elt);
        QFETCH(double, bytes);
        QCOMPARE(bytesMoved(static_cast<Kernel>(kernel), n, elt), bytes);
    }
    void flops()
    {
        QCOMPARE(flopsOf(Kernel::Relu, 1000), 1000.0);
        QCOMPARE(flopsOf(Kernel::Gelu, 1000), 20000.0); // CS336 lecture 2: ~20 ops per value
        QCOMPARE(flopsOf(Kernel::Intensity, 1000, 256), 512000.0);
        QCOMPARE(gemmFlops(8192, 8192, 8192), 1099511627776.0); // 2 * 2^39
        // Intensity sweep ends: 0.25 FLOP/B = 1 FMA per 8 bytes, 64 FLOP/B = 256 FMAs
        QCOMPARE(fmasForIntensity(0.25), 1);
        QCOMPARE(fmasForIntensity(1), 4);
        QCOMPARE(fmasForIntensity(64), 256);
        QCOMPARE(2.0 * fmasForIntensity(64) / bytesMoved(Kernel::Intensity, 1, 4), 64.0);
    }
    void patternSum()
    {
        QCOMPARE(streamPatternSum(0), 0.0);
        QCOMPARE(streamPatternSum(4), 6.0);         // 0+1+2+3
        QCOMPARE(streamPatternSum(1024), 523776.0); // 1023*1024/2
        QCOMPARE(streamPatternSum(2048 + 3), 2 * 523776.0 + 3.0);
    }
    void gemmError()
    {
        QCOMPARE(gemmRelativeError(10.5, 10.0, 100.0), 0.005);
        QCOMPARE(gemmRelativeError(1.0, 0.0, 0.0), 1.0);
        QVERIFY(std::isinf(gemmRelativeError(NAN, 1.0, 1.0)));
        QCOMPARE(gemmTolerance("fp32"), 1e-4);
        QCOMPARE(gemmTolerance("bf16"), 2e-2);
        QCOMPARE(gemmTolerance("fp8_e4m3"), 5e-2);
    }

    void json()
    {
        Profile p;
        p.status = Status::Ok;
        p.message = "measured";
        p.probeVersion = "0.1.0";
        p.mode = "quick";
        p.startedUtc = isoUtc(0);
        p.elapsedSeconds = 9.5;
        p.runtimeVersion = 13000;
        p.driverVersion = 13000;
        p.cublaslt = {true, 130000, ""};
        p.nccl = {false, 0, "libnccl.so.2: cannot open shared object file"};
        DeviceReport d;
        d.index = 0;
        d.name = "NVIDIA H200";
        const unsigned char uuid[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0, 1, 2, 3, 4, 5, 6, 7};
        d.uuid = formatUuid(uuid);
        d.computeCapability = "9.0";
        d.sms = 132;
        d.memoryBytes = 150e9;
        d.l2Bytes = 52428800;
        d.smClockMaxMhz = 1980;
        d.memoryClockMaxMhz = 3201;
        Result r;
        r.id = "gemm_bf16";
        r.kind = "flops";
        r.dtype = "bf16";
        r.stats = rateStats({7.8e14, 7.9e14});
        r.size = {{"m", 8192}, {"n", 8192}, {"k", 8192}};
        r.sizeBytes = 402653184;
        r.verified = true;
        r.maxRelErr = 0.002;
        r.detail = "cuBLASLt TN";
        d.results.push_back(r);
        d.points.push_back({"gemm_m_sweep", "M=128", "bf16", 4.29e9, 3.4e7, 1.1e-5});
        d.skipped.push_back({"nccl_allreduce", "one GPU"});
        p.devices.push_back(d);
        p.links.push_back({"nccl_allreduce", 8, {{1048576, 2.1e-5, 5.0e10, 8.75e10}}});

        const auto j = nlohmann::json::parse(toJson(p));
        QCOMPARE(j["schema"].get<std::string>(), std::string("napkin.calibration/2"));
        QCOMPARE(j["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(j["probe"]["mode"].get<std::string>(), std::string("quick"));
        QCOMPARE(j["probe"]["started_utc"].get<std::string>(), std::string("1970-01-01T00:00:00Z"));
        QCOMPARE(j["probe"]["elapsed_seconds"].get<double>(), 9.5);
        QCOMPARE(j["runtime_version"].get<int>(), 13000);
        QCOMPARE(j["libraries"]["cublaslt"]["loaded"].get<bool>(), true);
        QCOMPARE(j["libraries"]["nccl"]["loaded"].get<bool>(), false);
        QVERIFY(!j["libraries"]["nccl"]["error"].get<std::string>().empty());
        const auto& dev = j["devices"][0];
        QCOMPARE(dev["uuid"].get<std::string>(), std::string("GPU-12345678-9abc-def0-0001-020304050607"));
        QCOMPARE(dev["compute_capability"].get<std::string>(), std::string("9.0"));
        QCOMPARE(dev["clocks_mhz"]["sm_max"].get<int>(), 1980);
        QCOMPARE(dev["l2_bytes"].get<double>(), 52428800.0);
        const auto& res = dev["results"][0];
        QCOMPARE(res["unit"].get<std::string>(), std::string("FLOP/s"));
        QCOMPARE(res["best"].get<double>(), 7.9e14);
        QCOMPARE(res["median"].get<double>(), 7.85e14);
        QCOMPARE(res["samples"].size(), size_t(2));
        QCOMPARE(res["size"]["k"].get<int>(), 8192);
        QCOMPARE(res["verified"].get<bool>(), true);
        QCOMPARE(res["max_rel_err"].get<double>(), 0.002);
        QCOMPARE(dev["points"][0]["series"].get<std::string>(), std::string("gemm_m_sweep"));
        QCOMPARE(dev["points"][0]["seconds"].get<double>(), 1.1e-5);
        QCOMPARE(dev["skipped"][0]["id"].get<std::string>(), std::string("nccl_allreduce"));
        QCOMPARE(j["links"][0]["ranks"].get<int>(), 8);
        QCOMPARE(j["links"][0]["points"][0]["busbw"].get<double>(), 8.75e10);
        // Key order follows docs/calibration-schema.md
        std::vector<std::string> keys;
        for (auto it = j.begin(); it != j.end(); ++it)
            keys.push_back(it.key());
        QCOMPARE(keys.size(), size_t(9));
        const std::vector<std::string> schemaKeys = {"devices", "driver_version",  "libraries", "links", "message",
                                                     "probe",   "runtime_version", "schema",    "status"};
        QCOMPARE(keys, schemaKeys); // nlohmann::json (not ordered) iterates sorted
    }
    // The probe's version-2 document read back by Napkin's own loader: the contract between them.
    void roundTripThroughNapkin()
    {
        Profile p;
        p.status = Status::Ok;
        p.message = "measured";
        p.probeVersion = "0.2.0";
        p.startedUtc = isoUtc(0);
        p.cublaslt = {true, 130000, ""};
        p.nvml = {true, 0, ""};
        DeviceReport d;
        d.name = "NVIDIA H200";
        d.computeCapability = "9.0";
        d.sms = 132;
        d.memoryBytes = 150e9;
        Result r;
        r.id = "hbm_read";
        r.kind = "bandwidth";
        r.dtype = "fp32";
        r.stats = rateStats({4.5e12, 4.59e12});
        r.bytesCounted = "read";
        r.verified = true;
        d.results.push_back(r);
        d.points.push_back(
            {"gemm_shapes", "fc1 h=4096 T=8192", "bf16", gemmFlops(8192, 28672, 4096), 1e9, 2.6e-3, 8192, 28672, 4096});
        d.points.push_back(
            {"gemm_m_sweep", "M=128", "bf16", gemmFlops(128, 4096, 4096), 3.4e7, 1.1e-5, 128, 4096, 4096});
        Nvml::Sample before, after;
        before.atSeconds = 10;
        before.energyMilliJoules = 1000000;
        after.atSeconds = 12;
        after.energyMilliJoules = 2400000; // 1400 J over 2 s: 700 W average
        after.smClockMhz = 1755;
        after.powerWatts = 690;
        after.temperatureC = 61;
        after.reasons = 0x4 | 0x1; // sw power cap (and idle, which is not a slowdown)
        d.conditions.push_back(conditionsOf("gemm_shapes_bf16", before, after));
        p.devices.push_back(d);

        napkin::core::Errors errors;
        const auto loaded = napkin::core::loadCalibrationProfile(toJson(p), napkin::core::builtinCatalog(), errors);
        const std::string why = errors.empty() ? std::string() : napkin::core::describe(errors.front());
        QVERIFY2(loaded && errors.empty(), why.c_str());
        QCOMPARE(loaded->schemaVersion, 2);
        const auto& dev = loaded->devices[0];
        QCOMPARE(dev.points[0].m, 8192.0);
        QCOMPARE(dev.points[0].n, 28672.0);
        QCOMPARE(dev.points[0].k, 4096.0);
        QCOMPARE(dev.points[1].m, 128.0);
        QCOMPARE(dev.conditions.size(), size_t(1));
        QCOMPARE(dev.conditions[0].step, std::string("gemm_shapes_bf16"));
        QCOMPARE(dev.conditions[0].powerWatts, 700.0);
        QVERIFY(dev.conditions[0].powerAveraged);
        QCOMPARE(dev.conditions[0].smClockMhz, 1755);
        QCOMPARE(dev.conditions[0].throttle, std::vector<std::string>{"sw_power_cap"});
        QCOMPARE(dev.results[0].bytesCounted, std::string("read"));
    }

    void conditionsWithoutEnergyCounter()
    {
        Nvml::Sample before, after;
        before.atSeconds = 1;
        after.atSeconds = 3;
        after.powerWatts = 512.5;
        after.reasons = 0x40 | 0x8; // hw thermal slowdown, hw slowdown
        const Conditions c = conditionsOf("hbm", before, after);
        QCOMPARE(c.powerWatts, 512.5); // the reading at the end
        QVERIFY(!c.powerAveraged);
        QCOMPARE(c.throttle, (std::vector<std::string>{"hw_slowdown", "hw_thermal_slowdown"}));
        QVERIFY(throttleReasonNames(0x1 | 0x10).empty()); // idle and sync boost do not slow a measurement
    }

    // Llama 3 proportions (Llama 3 paper, Table 3): the 8B layer at h = 4096 has QKV N = 4096 + 2 x 8 x 128
    // = 6144, FFN 14336 (fc1 fused gate and up: 28672), vocabulary 128256.
    void transformerShapes()
    {
        const auto quick = transformerGemmShapes(true);
        QCOMPARE(quick.size(), size_t(5));
        QCOMPARE(quick[0].label, std::string("qkv h=4096 T=8192"));
        QCOMPARE((std::array<long long, 3>{quick[0].m, quick[0].n, quick[0].k}),
                 (std::array<long long, 3>{8192, 6144, 4096}));
        QCOMPARE((std::array<long long, 3>{quick[2].m, quick[2].n, quick[2].k}),
                 (std::array<long long, 3>{8192, 28672, 4096}));
        QCOMPARE((std::array<long long, 3>{quick[3].m, quick[3].n, quick[3].k}),
                 (std::array<long long, 3>{8192, 4096, 14336}));
        QCOMPARE((std::array<long long, 3>{quick[4].m, quick[4].n, quick[4].k}),
                 (std::array<long long, 3>{8192, 128256, 4096}));
        const auto full = transformerGemmShapes(false);
        QCOMPARE(full.size(), size_t(30));
        for (const auto& sh : full) // FP8 cuBLASLt GEMMs need every dimension a multiple of 16
            QVERIFY2(sh.m % 16 == 0 && sh.n % 16 == 0 && sh.k % 16 == 0, sh.label.c_str());
    }

    void progress()
    {
        const auto j = nlohmann::json::parse(progressLine(3, 12, "hbm"));
        QCOMPARE(j["event"].get<std::string>(), std::string("progress"));
        QCOMPARE(j["step"].get<int>(), 3);
        QCOMPARE(j["of"].get<int>(), 12);
        QCOMPARE(j["id"].get<std::string>(), std::string("hbm"));
        QCOMPARE(j["fraction"].get<double>(), 0.25);
    }

    void options_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<bool>("ok");
        QTest::newRow("none") << QStringList{} << true;
        QTest::newRow("quick -o") << QStringList{u"--quick"_qs, u"-o"_qs, u"p.json"_qs} << true;
        QTest::newRow("device 1") << QStringList{u"--device"_qs, u"1"_qs} << true;
        QTest::newRow("device -1") << QStringList{u"--device"_qs, u"-1"_qs} << false;
        QTest::newRow("device x") << QStringList{u"--device"_qs, u"x"_qs} << false;
        QTest::newRow("-o without file") << QStringList{u"-o"_qs} << false;
        QTest::newRow("-o empty") << QStringList{u"-o"_qs, QString()} << false;
        QTest::newRow("unknown") << QStringList{u"--fast"_qs} << false;
        QTest::newRow("time limit 0.5") << QStringList{u"--time-limit"_qs, u"0.5"_qs} << false;
        QTest::newRow("time limit 30") << QStringList{u"--time-limit"_qs, u"30"_qs} << true;
        QTest::newRow("soak 120") << QStringList{u"--soak"_qs, u"120"_qs} << true;
        QTest::newRow("soak 0") << QStringList{u"--soak"_qs, u"0"_qs} << false;
        QTest::newRow("soak missing") << QStringList{u"--soak"_qs} << false;
    }
    void options()
    {
        QFETCH(QStringList, args);
        QFETCH(bool, ok);
        std::vector<std::string> a;
        for (const QString& s : args)
            a.push_back(s.toStdString());
        Options o;
        std::string error;
        QCOMPARE(parseOptions(a, o, error), ok);
        QCOMPARE(error.empty(), ok);
    }
    void optionValues()
    {
        Options o;
        std::string error;
        QVERIFY(parseOptions({"--quick", "--device", "2", "-o", "x.json"}, o, error));
        QVERIFY(o.quick);
        QCOMPARE(o.device, 2);
        QCOMPARE(o.output, std::string("x.json"));
        QCOMPARE(timeCapSeconds(o), 10.0);
        o.quick = false;
        QCOMPARE(timeCapSeconds(o), 60.0);
        QVERIFY(parseOptions({"--soak", "90"}, o, error));
        QCOMPARE(o.soakSeconds, 90.0);
        QCOMPARE(timeCapSeconds(o), 60.0); // the soak is not in the cap
        QVERIFY(!parseOptions({"--soak", "5000"}, o, error));
        QCOMPARE(error, std::string("--soak: '5000' is not a number of seconds from 1 to 3600"));
    }

    void atomicWrite()
    {
        QTemporaryDir dir;
        const std::string path = QDir(dir.path()).filePath(u"p.json"_qs).toStdString();
        std::string error;
        QVERIFY(writeFileAtomically(path, "{\"a\":1}\n", error));
        QVERIFY(writeFileAtomically(path, "{\"a\":2}\n", error));
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("{\"a\":2}\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1); // no temporary left behind
        // A parent that is a file: fails with a message, creates nothing.
        const std::string bad = QDir(dir.path()).filePath(u"p.json/x.json"_qs).toStdString();
        QVERIFY(!writeFileAtomically(bad, "x", error));
        QVERIFY(error.find("p.json/x.json") != std::string::npos);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestProbeHost)
#include "tst_probehost.moc"
