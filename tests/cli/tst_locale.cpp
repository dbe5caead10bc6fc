// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Numbers do not change with the user's locale: under a comma-decimal locale (de_DE) the core
// parses "2.5T" as 2.5e12 and prints "989.5", in process and through napkin-cli. ctest runs this
// suite with LC_ALL=de_DE.UTF-8; a machine without that locale fails it (CI installs locales-all):
// a skipped locale test would prove nothing.
#include "estimate.h"
#include "format.h"
#include "jsonreader.h"
#include "scenario.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "clirunner.h"

#include <clocale>
#include <cstdio>

using namespace napkin;

class TestLocale : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // QCoreApplication has already called setlocale(LC_ALL, ""): with LC_ALL=de_DE.UTF-8 the C
        // library now writes decimal commas. Prove it, or fail.
        if (!std::setlocale(LC_ALL, "de_DE.UTF-8"))
            QFAIL("the de_DE.UTF-8 locale is not installed (Debian: apt-get install locales-all); this suite must run "
                  "under it");
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.1f", 2.5);
        QCOMPARE(QByteArray(buf), QByteArray("2,5"));
    }

    void coreParsesAndPrintsWithDecimalPoints()
    {
        QCOMPARE(core::parseQuantity("2.5T").value_or(-1), 2.5e12);
        QCOMPARE(core::parseQuantity("1,024").value_or(-1), 1024.0);
        QVERIFY(!core::parseQuantity("1,5T")); // a decimal comma is an error, never 15T
        QCOMPARE(core::formatBytes(84.5e9), std::string("84.50 GB"));
        QCOMPARE(core::formatNumber(989.5), std::string("989.5"));
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        core::applySet(doc, "training.tokens=2.5T", errors);
        const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
        QVERIFY(errors.empty());
        QCOMPARE(sc.training.tokens, 2.5e12);
        const auto plan = core::estimate(sc);
        const std::string text = core::planToText(plan);
        QVERIFY(text.find("989.5 TFLOP/s") != std::string::npos);
        QVERIFY(text.find("989,5") == std::string::npos);
        const std::string csv = core::planToCsv(plan);
        QVERIFY(csv.find("params,total,6738415616,parameters") != std::string::npos);
        QVERIFY(core::planToJson(plan).dump().find("989500000000000.0") != std::string::npos);
    }

    void cliUnderACommaLocale()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("LC_ALL"), QStringLiteral("de_DE.UTF-8"));
        QTemporaryDir dir;
        const QString md = dir.filePath(QStringLiteral("r.md"));
        // The report: a Markdown report with a decimal quantity failed under de_DE. With
        // napkin-report built, the report with its charts (-o); else the Markdown on stdout.
        QStringList args{QStringLiteral("plan"), QStringLiteral("--set"), QStringLiteral("training.tokens=2.5T"),
                         QStringLiteral("--format"), QStringLiteral("md")};
#ifdef NAPKIN_HAVE_REPORT
        args << QStringLiteral("-o") << md;
#endif
        const CliResult r = runCli(args, env);
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(describe(args, r)));
#ifdef NAPKIN_HAVE_REPORT
        QFile f(md);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray report = f.readAll();
#else
        const QByteArray report = r.out;
#endif
        QVERIFY(report.contains("989.5"));
        QVERIFY(!report.contains("989,5"));
        // CSV fields stay comma-separated with decimal points.
        const QStringList csvArgs{QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("csv")};
        const CliResult c = runCli(csvArgs, env);
        QVERIFY2(c.finished && c.exitCode == 0, qPrintable(describe(csvArgs, c)));
        for (const QByteArray& line : c.out.split('\n'))
            QVERIFY2(line.isEmpty() || line.count(',') >= 3, line.constData());
        QVERIFY(c.out.contains("hardware,peak_flops,989500000000000,FLOP/s"));
        // A decimal comma in a quantity is refused, naming the field.
        const QStringList bad{QStringLiteral("plan"), QStringLiteral("--set"),
                              QStringLiteral("training.tokens=\"1,5T\"")};
        const CliResult b = runCli(bad, env);
        QCOMPARE(b.exitCode, 2);
        QVERIFY(b.err.contains("training.tokens"));
    }

    void cleanupTestCase() { std::setlocale(LC_ALL, "C"); }
};

QTEST_GUILESS_MAIN(TestLocale)
#include "tst_locale.moc"
