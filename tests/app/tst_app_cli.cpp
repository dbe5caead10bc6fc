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

    // Issue 20: every tab and dialog can be opened by name for a screenshot; a name not listed is an
    // error that lists the allowed ones.
    void tabsAndDialogsByName()
    {
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("out.png"));
        auto pngSize = [&] {
            QFile f(png);
            if (!f.open(QIODevice::ReadOnly))
                return QSize();
            const QByteArray h = f.read(24); // PNG signature, IHDR length and type, width, height
            auto be32 = [&](int at) {
                return int((uchar(h[at]) << 24) | (uchar(h[at + 1]) << 16) | (uchar(h[at + 2]) << 8) |
                           uchar(h[at + 3]));
            };
            return h.size() == 24 && h.startsWith("\x89PNG") ? QSize(be32(16), be32(20)) : QSize();
        };
        const Run bad =
            runApp({QStringLiteral("--tab"), QStringLiteral("stage"), QStringLiteral("--screenshot"), png}, headless());
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains("--tab stage: expected one of ledger, stages, roofline, steptime"),
                 bad.err.constData());
        const Run badDialog = runApp(
            {QStringLiteral("--dialog"), QStringLiteral("serch"), QStringLiteral("--screenshot"), png}, headless());
        QCOMPARE(badDialog.exitCode, 2);
        QVERIFY2(
            badDialog.err.contains("--dialog serch: expected one of search, fit, accuracy, calibration, reconcile, "
                                   "dtype"),
            badDialog.err.constData());
        QVERIFY(!QFile::exists(png));

        const Run tab = runApp({QStringLiteral("--tab"), QStringLiteral("stages"), QStringLiteral("--set"),
                                QStringLiteral("parallel.pp=4"), QStringLiteral("--screenshot"), png,
                                QStringLiteral("--size"), QStringLiteral("1024x768")},
                               headless());
        QVERIFY2(tab.exitCode == 0, tab.err.constData());
        QCOMPARE(pngSize(), QSize(1024, 768)); // the window
        // The projectors' sizes: the window's minimum fits each (it used to hold 1280x720 at 825 lines).
        for (const QSize size : {QSize(1280, 720), QSize(1366, 768), QSize(1920, 1080)}) {
            const Run w = runApp({QStringLiteral("--screenshot"), png, QStringLiteral("--size"),
                                  QStringLiteral("%1x%2").arg(size.width()).arg(size.height())},
                                 headless());
            QVERIFY2(w.exitCode == 0, w.err.constData());
            QCOMPARE(pngSize(), size);
        }
        // A dialog's screenshot is the dialog, not the window behind it.
        const Run dtype = runApp({QStringLiteral("--dialog"), QStringLiteral("dtype"), QStringLiteral("--screenshot"),
                                  png, QStringLiteral("--size"), QStringLiteral("1024x768")},
                                 headless());
        QVERIFY2(dtype.exitCode == 0, dtype.err.constData());
        const QSize d = pngSize();
        QVERIFY(d.isValid() && d != QSize(1024, 768) && d.width() <= 1024);
    }

    void helpNeedsNoDisplay()
    {
        const Run r = runApp({QStringLiteral("--help")}, headless());
        QVERIFY(r.finished);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("--scenario") && r.out.contains("--screenshot"), r.out.constData());
        QVERIFY2(r.out.contains("--tab") && r.out.contains("--dialog"), r.out.constData());
        const Run v = runApp({QStringLiteral("--version")}, headless());
        QCOMPARE(v.exitCode, 0);
        QVERIFY(!v.out.trimmed().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestAppCli)
#include "tst_app_cli.moc"
