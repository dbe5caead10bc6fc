// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop app's command line, run as a separate process: a bad --scenario with --screenshot
// is an error on stderr and exit 2 (it used to wait forever on a dialog nobody could see), and
// --help needs no display.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {

struct Run {
    bool finished = false;
    int exitCode = -1;
    QByteArray out, err;
};

Run runApp(const QStringList& args, const QProcessEnvironment& env)
{
    Run r;
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NAPKIN_APP_PATH), args);
    if (!p.waitForStarted(10000))
        return r;
    r.finished = p.waitForFinished(30000);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QProcessEnvironment headless()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    return env;
}

} // namespace

class TestAppCli : public QObject {
    Q_OBJECT
private slots:
    void badScenarioWithScreenshotExits2_data()
    {
        QTest::addColumn<QByteArray>("content"); // empty: the file does not exist
        QTest::addColumn<QByteArray>("named");   // what stderr must name
        // clang-format off
        QTest::newRow("truncated JSON") << QByteArray(R"({"training": {"tokens": )") << QByteArray("bad.napkin.json");
        QTest::newRow("unknown key") << QByteArray(R"({"training": {"tokenz": 1e12}})") << QByteArray("training.tokenz");
        QTest::newRow("out of range") << QByteArray(R"({"cluster": {"gpus": 0}})") << QByteArray("cluster.gpus");
        QTest::newRow("missing file") << QByteArray() << QByteArray("bad.napkin.json");
        // clang-format on
    }
    void badScenarioWithScreenshotExits2()
    {
        QFETCH(QByteArray, content);
        QFETCH(QByteArray, named);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("bad.napkin.json"));
        if (!content.isEmpty()) {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const QString png = dir.filePath(QStringLiteral("out.png"));
        const Run r = runApp({QStringLiteral("--scenario"), file, QStringLiteral("--screenshot"), png}, headless());
        QVERIFY2(r.finished, "napkin did not exit within 30 s");
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith("error: "), r.err.constData());
        QVERIFY2(r.err.contains(named), r.err.constData());
        QVERIFY2(!r.err.contains("[json.exception"), r.err.constData()); // the library's id is not the user's business
        QVERIFY2(r.err.count('\n') == 1, r.err.constData());             // one line: no Qt warnings around it
        QVERIFY(!QFile::exists(png));
    }

    void helpNeedsNoDisplay()
    {
        const Run r = runApp({QStringLiteral("--help")}, headless());
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("--scenario") && r.out.contains("--screenshot"), r.out.constData());
        const Run v = runApp({QStringLiteral("--version")}, headless());
        QCOMPARE(v.exitCode, 0);
        QVERIFY(!v.out.trimmed().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAppCli)
#include "tst_app_cli.moc"
