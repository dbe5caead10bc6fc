// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The napkin-probe contract (docs/probe.md) on whatever machine runs the tests: exit codes, the
// profile on stdout, the human line on stderr, usage errors, -o failures that leave nothing behind.
// On a machine without a usable GPU (this project's CI) the status must be one of the "no usable GPU"
// statuses with exit code 3.

#include <nlohmann/json.hpp>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <set>
#include <string>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run probe(const QStringList& args, int timeoutMs = 120000)
{
    QProcess p;
    p.start(QStringLiteral(NAPKIN_PROBE_PATH), args);
    Run r;
    if (!p.waitForFinished(timeoutMs) || p.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// Lines of stderr that are not progress JSON lines.
QList<QByteArray> humanLines(const QByteArray& err)
{
    QList<QByteArray> lines;
    for (const QByteArray& l : err.split('\n'))
        if (!l.isEmpty() && !l.startsWith("{\"event\""))
            lines.push_back(l);
    return lines;
}

const std::set<std::string> kNoGpu = {"no_driver", "driver_too_old", "no_device", "no_kernel_image", "device_busy"};

} // namespace

class TestProbeCli : public QObject {
    Q_OBJECT
private slots:
    void statusContract_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("--list") << QStringList{u"--list"_qs};
        QTest::newRow("default") << QStringList{u"--quick"_qs, u"--no-progress"_qs};
    }
    void statusContract()
    {
        QFETCH(QStringList, args);
        const Run r = probe(args);
        QVERIFY2(r.exitCode >= 0, "napkin-probe crashed or hung");
        const auto j = nlohmann::json::parse(r.out.toStdString()); // throws (test fails) on garbage
        QCOMPARE(j.at("schema").get<std::string>(), std::string("napkin.calibration/2"));
        const std::string status = j.at("status");
        for (const char* key :
             {"message", "probe", "runtime_version", "driver_version", "libraries", "devices", "links"})
            QVERIFY2(j.contains(key), key);
        QVERIFY(j["libraries"].contains("cublaslt") && j["libraries"].contains("nccl"));
        QVERIFY(j["runtime_version"].get<int>() >= 13000);
        const QList<QByteArray> human = humanLines(r.err);
        QCOMPARE(human.size(), 1); // exactly one line for a person
        QVERIFY(human[0].contains(QByteArray::fromStdString(status)));
        if (status == "ok") {
            QCOMPARE(r.exitCode, 0);
            QVERIFY(!j["devices"].empty());
        } else if (kNoGpu.count(status)) {
            QCOMPARE(r.exitCode, 3);
            QVERIFY(j["devices"].empty());
            QVERIFY(!j["message"].get<std::string>().empty());
            QVERIFY(human[0].contains(QByteArray::fromStdString(j["message"].get<std::string>())));
        } else {
            QCOMPARE(status, std::string("error"));
            QCOMPARE(r.exitCode, 1);
        }
    }
    void driverlessMachine()
    {
        // This project's build machines have no driver: say so precisely there.
        if (QFile::exists(u"/dev/nvidiactl"_qs))
            QSKIP("an NVIDIA device node exists: not a driverless machine");
        const Run r = probe({u"--list"_qs});
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j.at("status").get<std::string>(), std::string("no_driver"));
        QCOMPARE(j.at("driver_version").get<int>(), 0);
        QCOMPARE(r.exitCode, 3);
        QVERIFY(r.err.contains("install the NVIDIA driver"));
    }
    void usage_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("--help") << QStringList{u"--help"_qs} << 0;
        QTest::newRow("bad option") << QStringList{u"--bogus"_qs} << 2;
        QTest::newRow("-o without file") << QStringList{u"-o"_qs} << 2;
        QTest::newRow("bad device") << QStringList{u"--device"_qs, u"gpu0"_qs} << 2;
    }
    void usage()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        const Run r = probe(args);
        QCOMPARE(r.exitCode, exitCode);
        if (exitCode == 0) {
            QVERIFY(r.out.contains("Usage: napkin-probe"));
            QVERIFY(r.out.contains("Exit status"));
        } else {
            QVERIFY(r.out.isEmpty()); // no profile on a usage error
            QVERIFY(r.err.startsWith("napkin-probe: error: "));
            QCOMPARE(humanLines(r.err).size(), 1);
        }
    }
    void version()
    {
        const Run r = probe({u"--version"_qs});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("napkin-probe 0."));
    }
    void outputFile()
    {
        QTemporaryDir dir;
        const QString path = QDir(dir.path()).filePath(u"profile.json"_qs);
        const Run r = probe({u"--list"_qs, u"-o"_qs, path});
        QVERIFY(r.exitCode == 0 || r.exitCode == 3);
        QVERIFY(r.out.isEmpty()); // the profile went to the file
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto j = nlohmann::json::parse(f.readAll().toStdString());
        QCOMPARE(j.at("schema").get<std::string>(), std::string("napkin.calibration/2"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{u"profile.json"_qs});
    }
    void unwritableOutput()
    {
        QTemporaryDir dir;
        QFile blocker(QDir(dir.path()).filePath(u"notadir"_qs));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        const QString path = QDir(dir.path()).filePath(u"notadir/profile.json"_qs);
        const Run r = probe({u"--list"_qs, u"-o"_qs, path});
        QCOMPARE(r.exitCode, 1); // I/O error
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.contains("napkin-probe: error: cannot write"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{u"notadir"_qs}); // nothing partial
        const Run missing = probe({u"--list"_qs, u"-o"_qs, u"/nonexistent-napkin-dir/p.json"_qs});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY(!QFile::exists(u"/nonexistent-napkin-dir"_qs));
    }
};

QTEST_GUILESS_MAIN(TestProbeCli)
#include "tst_probecli.moc"
