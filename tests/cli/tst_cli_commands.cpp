// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli's command line as CLI11 declares it (issue 13): per-command --help, options of other
// commands refused, --opt=value everywhere, --check's exit 3, the man page, and the batch that
// gpus-for keeps fixed unless told otherwise.
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <QTemporaryDir>

#include "clirunner.h"

namespace {

QJsonObject json(const CliResult& r) { return QJsonDocument::fromJson(r.out).object(); }

} // namespace

class TestCliCommands : public QObject {
    Q_OBJECT
private slots:
    void everyCommandHasItsHelp_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("option"); // one option its help must list
        QTest::newRow("plan") << QStringLiteral("plan") << QStringLiteral("--check");
        QTest::newRow("compare") << QStringLiteral("compare") << QStringLiteral("--format");
        QTest::newRow("chart") << QStringLiteral("chart") << QStringLiteral("--size");
        QTest::newRow("fit") << QStringLiteral("fit") << QStringLiteral("--set");
        QTest::newRow("search") << QStringLiteral("search") << QStringLiteral("--top");
        QTest::newRow("gpus-for") << QStringLiteral("gpus-for") << QStringLiteral("--batch");
        QTest::newRow("validate") << QStringLiteral("validate") << QStringLiteral("--format");
        QTest::newRow("op") << QStringLiteral("op") << QStringLiteral("--dtype");
        QTest::newRow("presets") << QStringLiteral("presets") << QStringLiteral("--format");
        QTest::newRow("dtype") << QStringLiteral("dtype") << QStringLiteral("--format");
        QTest::newRow("reconcile") << QStringLiteral("reconcile") << QStringLiteral("--peak-allocated");
    }
    void everyCommandHasItsHelp()
    {
        QFETCH(QString, command);
        QFETCH(QString, option);
        const QStringList args{command, QStringLiteral("--help")};
        const CliResult r = runCli(args);
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(describe(args, r)));
        QVERIFY(r.out.contains((QStringLiteral("napkin-cli ") + command).toUtf8()));
        QVERIFY2(r.out.contains(option.toUtf8()), r.out.constData());
        QVERIFY(r.err.isEmpty());
    }

    void otherCommandsOptionsAreRefused()
    {
        // `plan --top 3` used to be accepted and ignored.
        const QStringList args{QStringLiteral("plan"), QStringLiteral("--top"), QStringLiteral("3")};
        const CliResult r = runCli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.startsWith("error: ") && r.err.contains("--top") && r.err.count('\n') == 1, r.err.constData());
    }

    void equalsFormWorksEverywhere()
    {
        // `--m=5` was refused while `--format=json` worked.
        const CliResult r =
            runCli({QStringLiteral("op"), QStringLiteral("gemm"), QStringLiteral("--m=5"), QStringLiteral("--k=4096"),
                    QStringLiteral("--n=4096"), QStringLiteral("--format=json")});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r).value(QStringLiteral("flops")).toDouble(), 2.0 * 5 * 4096 * 4096);
    }

    void reconcileTakesEitherMeasurement()
    {
        // --step-time or --tokens-per-second: either is enough, neither is an error naming both.
        QCOMPARE(
            runCli({QStringLiteral("reconcile"), QStringLiteral("--tokens-per-second"), QStringLiteral("1M")}).exitCode,
            0);
        QCOMPARE(runCli({QStringLiteral("reconcile"), QStringLiteral("--step-time=4.2")}).exitCode, 0);
        const CliResult none = runCli({QStringLiteral("reconcile")});
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains("--step-time") && none.err.contains("--tokens-per-second"), none.err.constData());
        const CliResult size = runCli({QStringLiteral("reconcile"), QStringLiteral("--step-time"), QStringLiteral("4"),
                                       QStringLiteral("--peak-allocated"), QStringLiteral("74G")});
        QCOMPARE(size.exitCode, 2); // a size needs a byte unit: 74G is not one
        QVERIFY2(size.err.contains("--peak-allocated") && size.err.contains("GiB"), size.err.constData());
        const CliResult batch = runCli({QStringLiteral("gpus-for"), QStringLiteral("--deadline-days"),
                                        QStringLiteral("10"), QStringLiteral("--batch"), QStringLiteral("grow")});
        QCOMPARE(batch.exitCode, 2);
        QVERIFY2(batch.err.contains("--batch") && batch.err.contains("fixed, scale"), batch.err.constData());
    }

    void checkExitsThreeWhenItDoesNotFit()
    {
        // Without --check the status stays 0, so existing scripts keep working.
        const QStringList big{QStringLiteral("plan"), QStringLiteral("--set"),
                              QStringLiteral("model.preset=llama-2-70b"), QStringLiteral("--set"),
                              QStringLiteral("cluster.gpus=1")};
        QCOMPARE(runCli(big).exitCode, 0);
        QCOMPARE(runCli(QStringList(big) << QStringLiteral("--check")).exitCode, 3);
        QCOMPARE(runCli({QStringLiteral("plan"), QStringLiteral("--check")}).exitCode, 0); // the default fits
        QStringList fit = big;
        fit[0] = QStringLiteral("fit");
        QCOMPARE(runCli(QStringList(fit) << QStringLiteral("--check")).exitCode, 3);
        const QStringList never{QStringLiteral("gpus-for"), QStringLiteral("--deadline-days"), QStringLiteral("0.001"),
                                QStringLiteral("--check")};
        QCOMPARE(runCli(never).exitCode, 3);
    }

    void gpusForKeepsTheBatch()
    {
        // Llama 2 7B, micro-batch 1, global batch 1,024: at most 1,024 data-parallel ranks. A
        // one-hour deadline needs more; the answer says so instead of growing the batch.
        const QStringList args{QStringLiteral("gpus-for"), QStringLiteral("--deadline-days"), QStringLiteral("0.04"),
                               QStringLiteral("--format"), QStringLiteral("json")};
        const CliResult r = runCli(args);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(args, r)));
        const QJsonObject j = json(r);
        QCOMPARE(j.value(QStringLiteral("found")).toBool(), false);
        QCOMPARE(j.value(QStringLiteral("batch_limited")).toBool(), true);
        QCOMPARE(j.value(QStringLiteral("data_parallel_limit")).toInt(), 1024);
        QCOMPARE(j.value(QStringLiteral("gpus_at_limit")).toInt(), 1024);
        const CliResult text =
            runCli({QStringLiteral("gpus-for"), QStringLiteral("--deadline-days"), QStringLiteral("0.04")});
        QVERIFY2(text.out.contains("data parallelism stops at 1,024 ranks"), text.out.constData());
        // --batch scale may grow it, and the plan at that count says the batch was scaled.
        const CliResult scaled = runCli(QStringList(args) << QStringLiteral("--batch") << QStringLiteral("scale"));
        const QJsonObject s = json(scaled);
        QVERIFY(s.value(QStringLiteral("found")).toBool());
        QVERIFY(s.value(QStringLiteral("gpus")).toInt() > 1024);
        const CliResult plan = runCli({QStringLiteral("plan"), QStringLiteral("--set"),
                                       QStringLiteral("cluster.gpus=%1").arg(s.value(QStringLiteral("gpus")).toInt())});
        QVERIFY2(plan.out.contains("batch              SCALED: global batch 1,024 requested"), plan.out.constData());
        QVERIFY(plan.out.contains("batch_scaled"));
    }

    void gpusForShardsTheStatesBeforeGivingUp()
    {
        // Llama 2 70B at ZeRO 0 never fits an 80 GB GPU (fp32 Adam states replicated); with the
        // states sharded it does: gpus-for says at which stage.
        const QStringList args{QStringLiteral("gpus-for"),
                               QStringLiteral("--set"),
                               QStringLiteral("model.preset=llama-2-70b"),
                               QStringLiteral("--set"),
                               QStringLiteral("parallel.zero=0"),
                               QStringLiteral("--set"),
                               QStringLiteral("training.recompute=\"full\""),
                               QStringLiteral("--deadline-days"),
                               QStringLiteral("365"),
                               QStringLiteral("--format"),
                               QStringLiteral("json")};
        const CliResult r = runCli(args);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(args, r)));
        const QJsonObject j = json(r);
        QVERIFY(j.value(QStringLiteral("found")).toBool());
        QVERIFY(j.value(QStringLiteral("zero_changed")).toBool());
        QVERIFY(j.value(QStringLiteral("layout")).toObject().value(QStringLiteral("zero")).toInt() >= 1);
    }

    void manPageFromTheSameDefinitions()
    {
        const CliResult r = runCli({QStringLiteral("--man")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith(".TH NAPKIN-CLI 1"));
        for (const char* s : {".SS plan", ".SS gpus\\-for", "\\-\\-deadline\\-days", "\\-\\-check", ".SH EXIT STATUS"})
            QVERIFY2(r.out.contains(s), s);
    }

    // compare (issue 20): a header, the scenario's name (else the file's), Δ against the first. The
    // same GPUs at twice the count halve the days: Δ days = -50.0%, Δ cost = +0.0% (same GPU-hours).
    void compareHasHeaderNamesAndDeltas()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto write = [&](const QString& name, const QByteArray& text) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        };
        write(QStringLiteral("a.napkin.json"), R"({"schema": "napkin.scenario/1", "name": "baseline"})");
        write(QStringLiteral("double.napkin.json"), R"({"schema": "napkin.scenario/1", "cluster": {"gpus": 128}})");
        const QStringList files{dir.filePath(QStringLiteral("a.napkin.json")),
                                dir.filePath(QStringLiteral("double.napkin.json"))};
        const auto r = runCli(QStringList{QStringLiteral("compare")} + files);
        QVERIFY2(r.exitCode == 0, qPrintable(describe(QStringList{QStringLiteral("compare")} + files, r)));
        const QStringList lines = QString::fromUtf8(r.out).split(u'\n');
        QVERIFY(lines[0].startsWith(QStringLiteral("scenario")) && lines[0].contains(QStringLiteral("Δ days")));
        QVERIFY(lines[1].startsWith(QStringLiteral("baseline")));
        QVERIFY(lines[2].startsWith(QStringLiteral("double")));
        QVERIFY2(lines[2].contains(QStringLiteral("-50.0%")) && lines[2].contains(QStringLiteral("+0.0%")),
                 qPrintable(lines[2]));
        const auto md =
            runCli(QStringList{QStringLiteral("compare"), QStringLiteral("--format"), QStringLiteral("md")} + files);
        QCOMPARE(md.exitCode, 0);
        QVERIFY(md.out.startsWith("| scenario |"));
        const auto csv =
            runCli(QStringList{QStringLiteral("compare"), QStringLiteral("--format"), QStringLiteral("csv")} + files);
        QCOMPARE(csv.exitCode, 0);
        QVERIFY(csv.out.startsWith("section,name,baseline,double,unit\n"));
    }
};

QTEST_GUILESS_MAIN(TestCliCommands)
#include "tst_cli_commands.moc"
