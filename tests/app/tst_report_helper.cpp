// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli hands PDF, HTML and charts to napkin-report (app/cli/reportclient.h,
// app/report/reportrequest.h): found beside an installed napkin-cli (bin/../libexec/napkin), named by
// NAPKIN_REPORT, or missing with a clear error; a bad request names its field; nothing half-written;
// with no display it picks the offscreen platform itself.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString err;
};

Run run(const QString& program, const QStringList& args, const QProcessEnvironment& env)
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(60000))
        return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QProcessEnvironment environment(const QString& reportHelper)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    if (reportHelper.isNull())
        env.remove(QStringLiteral("NAPKIN_REPORT"));
    else
        env.insert(QStringLiteral("NAPKIN_REPORT"), reportHelper);
    return env;
}

QByteArray head(const QString& path, int n)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.read(n) : QByteArray();
}

const QString Cli = QStringLiteral(NAPKIN_CLI_PATH);
const QString Helper = QStringLiteral(NAPKIN_REPORT_PATH);

} // namespace

class TestReportHelper : public QObject {
    Q_OBJECT
private slots:
    // As installed: bin/napkin-cli finds libexec/napkin/napkin-report with no NAPKIN_REPORT.
    void installedLayout()
    {
        QTemporaryDir prefix;
        QVERIFY(prefix.isValid());
        QVERIFY(QDir(prefix.path()).mkpath(QStringLiteral("bin")));
        QVERIFY(QDir(prefix.path()).mkpath(QStringLiteral("libexec/napkin")));
        const QString cli = prefix.filePath(QStringLiteral("bin/napkin-cli"));
        QVERIFY(QFile::copy(Cli, cli));
        QVERIFY(QFile::copy(Helper, prefix.filePath(QStringLiteral("libexec/napkin/napkin-report"))));
        const QString out = prefix.filePath(QStringLiteral("ledger.svg"));
        const Run r = run(cli,
                          {QStringLiteral("chart"), QStringLiteral("ledger"), QStringLiteral("--format"),
                           QStringLiteral("svg"), QStringLiteral("-o"), out},
                          environment(QString()));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(head(out, 200).contains("<svg") || head(out, 200).contains("<?xml"));
    }

    // chart steptime (issue 20): the predicted step as a PNG of exactly --size pixels at --scale 1.
    void stepTimeChart()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("step.png"));
        const Run r = run(Cli,
                          {QStringLiteral("chart"), QStringLiteral("steptime"), QStringLiteral("--set"),
                           QStringLiteral("step_time.mode=predicted"), QStringLiteral("--format"),
                           QStringLiteral("png"), QStringLiteral("--size"), QStringLiteral("640x300"),
                           QStringLiteral("--scale"), QStringLiteral("1"), QStringLiteral("-o"), out},
                          environment(Helper));
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QImage(out).size(), QSize(640, 300));
    }

    // Without --format a chart takes -o's extension (.svg, .PDF), else PNG; --format text stays an
    // error that names the field.
    void chartFormatFromTheExtension()
    {
        QTemporaryDir dir;
        const struct {
            const char* file;
            QByteArray magic;
        } cases[] = {{"a.svg", "<svg"}, {"b.PDF", "%PDF"}, {"c.png", "\x89PNG"}, {"d", "\x89PNG"}};
        for (const auto& c : cases) {
            const QString out = dir.filePath(QString::fromLatin1(c.file));
            const Run r = run(Cli, {QStringLiteral("chart"), QStringLiteral("ledger"), QStringLiteral("-o"), out},
                              environment(Helper));
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            QVERIFY2(head(out, 400).contains(c.magic), c.file);
        }
        const Run bad = run(Cli,
                            {QStringLiteral("chart"), QStringLiteral("ledger"), QStringLiteral("--format"),
                             QStringLiteral("text"), QStringLiteral("-o"), dir.filePath(QStringLiteral("e.png"))},
                            environment(Helper));
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.contains(QLatin1String("--format")), qPrintable(bad.err));
    }

    // NAPKIN_REPORT names a program that is not there: exit 1, the message says what to do, no file.
    void missingHelper()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("plan.pdf"));
        const Run r = run(
            Cli, {QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("pdf"), QStringLiteral("-o"), out},
            environment(dir.filePath(QStringLiteral("no-such-napkin-report"))));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QLatin1String("napkin-report")) && r.err.contains(QLatin1String("NAPKIN_REPORT")),
                 qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(out));
    }

    // The CLI's own checks come first: a bad --size never reaches the helper.
    void cliValidatesFirst()
    {
        QTemporaryDir dir;
        const Run r = run(Cli,
                          {QStringLiteral("chart"), QStringLiteral("ledger"), QStringLiteral("--format"),
                           QStringLiteral("png"), QStringLiteral("--size"), QStringLiteral("10x10"),
                           QStringLiteral("-o"), dir.filePath(QStringLiteral("x.png"))},
                          environment(dir.filePath(QStringLiteral("absent"))));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QLatin1String("--size")), qPrintable(r.err));
    }

    void badRequests_data()
    {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<QString>("field");
        const QByteArray input = R"("inputs": [{"document": {"schema": "napkin.scenario/1"}}])";
        QTest::newRow("not json") << QByteArray("{") << QStringLiteral("not JSON");
        QTest::newRow("schema") << QByteArray(R"({"schema": "napkin.plan/1"})") << QStringLiteral("schema");
        QTest::newRow("no output")
            << QByteArray(R"({"schema": "napkin.report-request/1", "job": "report", "format": "pdf", )" + input + "}")
            << QStringLiteral("output");
        QTest::newRow("no inputs")
            << QByteArray(R"({"schema": "napkin.report-request/1", "job": "report", "format": "pdf", "output": "OUT"})")
            << QStringLiteral("inputs");
        QTest::newRow("job")
            << QByteArray(
                   R"({"schema": "napkin.report-request/1", "job": "poster", "format": "pdf", "output": "OUT", )" +
                   input + "}")
            << QStringLiteral("job = poster");
        QTest::newRow("page")
            << QByteArray(
                   R"({"schema": "napkin.report-request/1", "job": "report", "format": "pdf", "output": "OUT", )" +
                   input + R"(, "options": {"page": "a3"}})")
            << QStringLiteral("options.page = a3");
        QTest::newRow("chart size")
            << QByteArray(
                   R"({"schema": "napkin.report-request/1", "job": "chart", "chart": "ledger", "format": "png", "size": [50, 50], "output": "OUT", )" +
                   input + "}")
            << QStringLiteral("size = 50x50");
        QTest::newRow("chart kind")
            << QByteArray(
                   R"({"schema": "napkin.report-request/1", "job": "chart", "chart": "pie", "format": "png", "size": [900, 260], "output": "OUT", )" +
                   input + "}")
            << QStringLiteral("chart = pie");
    }
    // napkin-report on a bad request: exit 2, one line naming the field, nothing written.
    void badRequests()
    {
        QFETCH(QByteArray, request);
        QFETCH(QString, field);
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("out.file"));
        request.replace("OUT", out.toUtf8());
        const QString file = dir.filePath(QStringLiteral("request.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(request);
        f.close();
        const Run r = run(Helper, {file}, environment(QString()));
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.startsWith(QLatin1String("error: ")) && r.err.contains(field), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(out));
    }

    // napkin-cli without a display: it must pick the offscreen platform itself.
    void cliHeadless_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("out");
        QTest::addColumn<QByteArray>("magic");
        QTest::newRow("plan pdf") << QStringList{QStringLiteral("plan"), QStringLiteral("--format"),
                                                 QStringLiteral("pdf")}
                                  << QStringLiteral("plan.pdf") << QByteArray("%PDF");
        QTest::newRow("plan pdf letter") << QStringList{QStringLiteral("plan"), QStringLiteral("--format"),
                                                        QStringLiteral("pdf"), QStringLiteral("--page"),
                                                        QStringLiteral("letter")}
                                         << QStringLiteral("letter.pdf") << QByteArray("%PDF");
        QTest::newRow("plan html") << QStringList{QStringLiteral("plan"), QStringLiteral("--format"),
                                                  QStringLiteral("html")}
                                   << QStringLiteral("plan.html") << QByteArray("<!DOCTYPE html>");
        QTest::newRow("chart png") << QStringList{QStringLiteral("chart"), QStringLiteral("roofline"),
                                                  QStringLiteral("--format"), QStringLiteral("png")}
                                   << QStringLiteral("roofline.png") << QByteArray("\x89PNG");
        QTest::newRow("chart timeline scale 1")
            << QStringList{QStringLiteral("chart"),   QStringLiteral("timeline"), QStringLiteral("--format"),
                           QStringLiteral("png"),     QStringLiteral("--size"),   QStringLiteral("640x360"),
                           QStringLiteral("--scale"), QStringLiteral("1")}
            << QStringLiteral("timeline.png") << QByteArray("\x89PNG");
    }
    void cliHeadless()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, out);
        QFETCH(QByteArray, magic);
        const QString pdfinfo = QStandardPaths::findExecutable(QStringLiteral("pdfinfo"));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(out);
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* var : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QLatin1String(var));
        p.setProcessEnvironment(env);
        p.start(Cli, args + QStringList{QStringLiteral("-o"), path});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(p.exitCode() == 0, qPrintable(err));
        QVERIFY2(head(path, int(magic.size())) == magic, qPrintable(path));
        if (out == QLatin1String("letter.pdf") && !pdfinfo.isEmpty()) {
            QProcess info;
            info.start(pdfinfo, {path});
            QVERIFY(info.waitForFinished(60000));
            QVERIFY(QString::fromUtf8(info.readAllStandardOutput())
                        .contains(QLatin1String("(letter)"), Qt::CaseInsensitive));
        }
        if (out == QLatin1String("timeline.png")) // --size 640x360 --scale 1: exactly those pixels
            QCOMPARE(QImage(path).size(), QSize(640, 360));
    }
};

QTEST_GUILESS_MAIN(TestReportHelper)
#include "tst_report_helper.moc"
