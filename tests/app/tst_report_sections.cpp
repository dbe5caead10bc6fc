// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The report sections a plan has only sometimes (issue 20), read back from the PDF with pdftotext.
#include "reportsupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace napkin::test::reports;

class TestReportSections : public QObject {
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }

private slots:
    // The parallel layout, the per-stage ledger and the predicted step time appear when the plan has
    // them (issue 20): TP 2 × PP 4 on 64 GPUs leaves DP = 64 / (2 · 4) = 8; four stages.
    void layoutSectionsWhenThePlanHasThem()
    {
        if (tool("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: cannot read the PDF's text");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const json pipeline{{"cluster", {{"gpus", 64}}},
                            {"parallel", {{"tp", 2}, {"pp", 4}, {"zero", 1}}},
                            {"step_time", {{"mode", "predicted"}}}};
        const QString path = dir.filePath(QStringLiteral("pipeline.pdf"));
        QCOMPARE(report::writeReport(inputOf(pipeline), report::Format::Pdf, path, report::Options{}), QString());
        const QString text = squeeze(runTool(tool("pdftotext"), {path, QStringLiteral("-")}));
        for (const char* needle : {"Parallel layout", "64 = TP 2 × PP 4 × CP 1 × DP 8", "Memory per pipeline stage",
                                   "Predicted step time", "MFU predicted", "ZeRO stage 1"})
            QVERIFY2(text.contains(squeeze(QString::fromUtf8(needle))), needle);
        QVERIFY2(!text.contains(squeeze(QStringLiteral("MFU assumed"))), "a predicted plan says MFU assumed");
        const core::Plan plan = corePlan(inputOf(pipeline).document);
        QCOMPARE(plan.memory.perStage.size(), std::size_t(4));
        // The most loaded stage named in the caption.
        QVERIFY(text.contains(squeeze(QStringLiteral("Stage %1 is the most loaded").arg(plan.memory.mostLoadedStage))));

        // The per-stage chart of the same plan: four columns ("chart stages" in the CLI).
        QCOMPARE(report::chartFromName(QStringLiteral("stages")), report::Chart::Stages);
        QCOMPARE(report::chartTitle(report::Chart::Stages), QStringLiteral("Memory per pipeline stage"));
        const QString svg = dir.filePath(QStringLiteral("stages.svg"));
        QCOMPARE(report::writeChart(inputOf(pipeline), report::Chart::Stages, report::ChartFormat::Svg, svg,
                                    QSize(900, 360)),
                 QString());
        const QString drawn = QString::fromUtf8(readAll(svg));
        QVERIFY(drawn.contains(QStringLiteral("most loaded")));
        QVERIFY(drawn.contains(QStringLiteral("pipeline stage")));

        // One GPU, the MFU mode: none of the three.
        const QString single = dir.filePath(QStringLiteral("single.pdf"));
        QCOMPARE(report::writeReport(inputOf(json{{"cluster", {{"gpus", 1}}}}), report::Format::Pdf, single,
                                     report::Options{}),
                 QString());
        const QString singleText = squeeze(runTool(tool("pdftotext"), {single, QStringLiteral("-")}));
        for (const char* absent : {"Parallel layout", "Memory per pipeline stage", "Predicted step time"})
            QVERIFY2(!singleText.contains(squeeze(QLatin1String(absent))), absent);
    }
};

QTEST_MAIN(TestReportSections)
#include "tst_report_sections.moc"
