// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Lecture mode offscreen: the presenter's keys move through the walkthrough and each step sets the
// scenario through the PlanController, sliders stay live inside a step, Esc leaves and restores the
// scenario, the PDF handout holds every step; and the reconcile dialog reproduces Korthikanti et al.
// 2022's published MFU. Expected numbers are computed here by hand from the papers' inputs.
#include "chartstyle.h" // qcustomplot.h with the foreach shim
#include "checkpointchart.h"
#include "controlspanel.h"
#include "focusring.h"
#include "ledgerchart.h"
#include "lecturecontroller.h"
#include "lecturepanel.h"
#include "mainwindow.h"
#include "plancontroller.h"
#include "quantityslider.h"
#include "reconciledialog.h"
#include "rooflinechart.h"

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QStyle>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace napkin;
using napkin::app::MainWindow;
using napkin::app::PlanController;

namespace {

int stepIndexOf(const app::LectureController* l, const char* id)
{
    for (int i = 0; i < l->stepCount(); ++i)
        if (l->lecture().steps[std::size_t(i)].id == id)
            return i;
    return -1;
}

QString squeeze(QString s)
{
    for (auto [lig, text] : {std::pair{0xFB00, "ff"}, {0xFB01, "fi"}, {0xFB02, "fl"}, {0xFB03, "ffi"}, {0xFB04, "ffl"}})
        s.replace(QChar(lig), QLatin1String(text));
    s.remove(QRegularExpression(QStringLiteral("\\s+")));
    return s;
}

QString runTool(const char* name, const QStringList& args)
{
    const QString program = QStandardPaths::findExecutable(QLatin1String(name));
    if (program.isEmpty())
        return QString();
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        return QString();
    return QString::fromUtf8(p.readAllStandardOutput());
}

// 6 · P · T / (G · C · MFU) in days (CS336 lecture 2).
double daysByHand(double P, double T, double G, double C, double mfu) { return 6 * P * T / (G * C * mfu) / 86400; }

} // namespace

class TestLectureApp : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_controller = new PlanController;
        m_window = new MainWindow(m_controller);
        m_window->setLectureFullScreen(false);
        m_controller->recomputeNow();
        QString why;
        QVERIFY2(m_window->lecture()->load(QStringLiteral("cs336-lecture2"), &why), qPrintable(why));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
    }
    void cleanup()
    {
        delete m_window;
        delete m_controller;
    }

    void keysMoveThroughTheSteps()
    {
        auto* l = m_window->lecture();
        m_window->startLecture(0);
        QVERIFY(l->isActive());
        QVERIFY(m_window->findChild<QDockWidget*>(QStringLiteral("lectureDock"))->isVisible());
        QCOMPARE(l->stepIndex(), 0);
        QTest::keyClick(m_window, Qt::Key_PageDown);
        QCOMPARE(l->stepIndex(), 1);
        QTest::keyClick(m_window, Qt::Key_Space);
        QCOMPARE(l->stepIndex(), 2);
        QTest::keyClick(m_window, Qt::Key_PageUp);
        QCOMPARE(l->stepIndex(), 1);
        QTest::keyClick(m_window, Qt::Key_End);
        QCOMPARE(l->stepIndex(), l->stepCount() - 1);
        QTest::keyClick(m_window, Qt::Key_PageDown); // past the end: stays
        QCOMPARE(l->stepIndex(), l->stepCount() - 1);
        QTest::keyClick(m_window, Qt::Key_Home);
        QCOMPARE(l->stepIndex(), 0);
        QCOMPARE(m_window->lecturePanel()->titleText(), QStringLiteral("How many bytes is a tensor?"));
    }

    // The lecture layout (issue 20): the step's panel beside the presenter text, the controls, the
    // warnings and the other panels collapsed; View > Whole window (F6) shows them; leaving shows all.
    void lectureLayoutShowsTheStepsPanel()
    {
        auto frame = [this](const QString& title) {
            for (auto* g : m_window->findChildren<QGroupBox*>())
                if (g->title() == title)
                    return g;
            return static_cast<QGroupBox*>(nullptr);
        };
        QGroupBox* roofline = frame(QStringLiteral("Roofline and step time"));
        QGroupBox* ledger = frame(QStringLiteral("Memory per GPU"));
        QGroupBox* warnings = frame(QStringLiteral("Warnings"));
        QVERIFY(roofline && ledger && warnings);
        auto* controls = m_window->findChild<app::ControlsPanel*>();
        QVERIFY(controls);
        QVERIFY(ledger->isVisible() && controls->isVisible());

        m_window->startLecture(stepIndexOf(m_window->lecture(), "roofline-gemm"));
        QVERIFY(roofline->isVisible());
        QVERIFY(!ledger->isVisible());
        QVERIFY(!warnings->isVisible());
        QVERIFY(!controls->isVisible());
        QApplication::processEvents(); // the layouts settle
        const int compactWidth = roofline->width();

        QTest::keyClick(m_window, Qt::Key_F6); // the whole window
        QVERIFY(ledger->isVisible() && warnings->isVisible() && controls->isVisible());
        QApplication::processEvents();
        QVERIFY2(roofline->width() < compactWidth, // the step's panel had the room of the window
                 qPrintable(QStringLiteral("%1 >= %2").arg(roofline->width()).arg(compactWidth)));
        QTest::keyClick(m_window, Qt::Key_F6);
        QVERIFY(!ledger->isVisible() && !controls->isVisible());

        m_window->startLecture(stepIndexOf(m_window->lecture(), "fp16-vs-bf16")); // a dtype step: the summary
        QVERIFY(frame(QStringLiteral("Compute and time"))->isVisible());
        QVERIFY(!roofline->isVisible());

        QTest::keyClick(m_window, Qt::Key_Escape); // leaving the lecture shows everything again
        QVERIFY(!m_window->lecture()->isActive());
        QVERIFY(roofline->isVisible() && ledger->isVisible() && warnings->isVisible() && controls->isVisible());
    }

    // The highlighted panel is drawn at the projector size, never smaller (issue 20: a style-sheet
    // highlight kept the summary's labels and the roofline's annotations at the desktop size).
    void highlightedPanelTakesTheProjectorFont()
    {
        const double desktop = QApplication::font().pointSizeF();
        auto* l = m_window->lecture();
        m_window->startLecture(stepIndexOf(l, "roofline-gemm"));
        QApplication::processEvents();
        const double projector = QApplication::font().pointSizeF();
        QVERIFY2(projector >= desktop + 5, qPrintable(QStringLiteral("%1 -> %2").arg(desktop).arg(projector)));
        QGroupBox* roofline = nullptr;
        for (auto* g : m_window->findChildren<QGroupBox*>())
            if (g->title() == QStringLiteral("Roofline and step time"))
                roofline = g;
        QVERIFY(roofline);
        QVERIFY(roofline->styleSheet().isEmpty()); // the ring is drawn, not styled
        QCOMPARE(roofline->findChildren<app::FocusRing*>().size(), qsizetype(1));
        QCOMPARE(roofline->alignment(), Qt::AlignHCenter); // the title clear of the ring's left edge
        auto* plot = m_window->roofline()->findChild<QCustomPlot*>();
        QVERIFY(plot);
        QCOMPARE(plot->font().pointSizeF(), projector);
        QCOMPARE(plot->xAxis->tickLabelFont().pointSizeF(), projector);
        QCOMPARE(plot->xAxis->labelFont().pointSizeF(), projector);
        // The ceiling and op annotations: 90% of the projector font, not of the desktop one.
        int texts = 0;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) {
                ++texts;
                QVERIFY2(t->font().pointSizeF() >= 0.9 * projector - 1e-9,
                         qPrintable(t->text() + QStringLiteral(": %1 pt").arg(t->font().pointSizeF())));
            }
        QVERIFY(texts > 0);
        // A step on the summary: its labels at the projector size too.
        m_window->startLecture(stepIndexOf(l, "70b-15t-1024-h100"));
        QApplication::processEvents();
        for (auto* g : m_window->findChildren<QGroupBox*>())
            if (g->title() == QStringLiteral("Compute and time")) {
                QCOMPARE(g->findChildren<app::FocusRing*>().size(), qsizetype(1));
                const auto labels = g->findChildren<QLabel*>();
                QVERIFY(!labels.isEmpty());
                for (auto* label : labels)
                    QVERIFY2(label->font().pointSizeF() >= projector,
                             qPrintable(label->text() + QStringLiteral(": %1 pt").arg(label->font().pointSizeF())));
            }
        // Only one ring at a time.
        QCOMPARE(m_window->findChildren<app::FocusRing*>().size(), qsizetype(1));
        QTest::keyClick(m_window, Qt::Key_Escape);
        QCOMPARE(m_window->findChildren<app::FocusRing*>().size(), qsizetype(0));
        QCOMPARE(QApplication::font().pointSizeF(), desktop);
    }

    // Issue 20: at a projector's 1366x768 in the projector font, the ledger's legend rows stand apart
    // inside the plot and its table's columns are as wide as their contents.
    void ledgerLegendAndTableFitTheProjectorFont()
    {
        m_window->resize(1366, 768);
        m_window->show();
        m_window->startLecture(stepIndexOf(m_window->lecture(), "largest-model-12"));
        for (int i = 0; i < 10; ++i)
            QApplication::processEvents();
        QCustomPlot* plot = m_window->ledgerChart()->plot();
        plot->replot();
        QList<QRect> entries;
        for (int i = 0; i < plot->legend->itemCount(); ++i)
            if (auto* item = plot->legend->item(i))
                entries.append(item->outerRect());
        QCOMPARE(entries.size(), qsizetype(7)); // the seven buckets
        for (qsizetype i = 0; i < entries.size(); ++i) {
            QVERIFY2(plot->rect().contains(entries[i]), qPrintable(QString::number(i)));
            for (qsizetype j = i + 1; j < entries.size(); ++j)
                QVERIFY2(!entries[i].intersects(entries[j]), qPrintable(QStringLiteral("%1 %2").arg(i).arg(j)));
        }
        QTableView* table = m_window->ledgerTable();
        QVERIFY(table);
        const QFontMetrics fm(table->font());
        QCOMPARE(fm.height(), QFontMetrics(QApplication::font()).height()); // the projector font
        QVERIFY(table->columnWidth(0) >= fm.horizontalAdvance(QStringLiteral("Optimizer states")));
        m_window->hide();
    }

    // The float-format table at the projector font: no format name or stored value elided
    // ("fp8_…" at 1366x768 before, issue 20). Started before the window shows, as `napkin --lecture`
    // does: the projector font arrives after the table's rows.
    void dtypeTableNamesFitTheProjectorFont()
    {
        m_window->hide();
        m_window->resize(1366, 768);
        m_window->startLecture(stepIndexOf(m_window->lecture(), "bf16-rounding"));
        m_window->show();
        for (int i = 0; i < 10; ++i)
            QApplication::processEvents();
        QTableWidget* table = m_window->lecturePanel()->dtypeTable();
        QVERIFY(table->isVisible());
        QVERIFY(table->rowCount() >= 7);
        const QFontMetrics fm(table->font());
        QVERIFY(table->font().pointSizeF() > m_window->lecturePanel()->font().pointSizeF()); // the body size
        // The item delegate draws text inside the focus-frame margin plus one pixel on each side
        // (QCommonStyle's item view text rectangle).
        const int margin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
        for (int r = 0; r < table->rowCount(); ++r)
            for (int c = 0; c < 2; ++c)
                QVERIFY2(
                    table->columnWidth(c) >= fm.horizontalAdvance(table->item(r, c)->text()) + margin,
                    qPrintable(QStringLiteral("%1: %2 px").arg(table->item(r, c)->text()).arg(table->columnWidth(c))));
        m_window->hide();
    }

    void eachStepSetsItsScenario()
    {
        auto* l = m_window->lecture();
        m_window->startLecture(stepIndexOf(l, "70b-15t-1024-h100"));
        const auto& plan = m_controller->plan();
        QCOMPARE(m_controller->scenario().cluster.gpus, std::int64_t(1024));
        QVERIFY(std::abs(plan.time.days - daysByHand(70e9, 15e12, 1024, 989.5e12, 0.5)) < 1e-9 * plan.time.days);
        QCOMPARE(m_window->highlightedPanel(), QStringLiteral("summary"));
        QCOMPARE(m_controller->selectedQuantity(), QStringLiteral("time.days"));
        QVERIFY(m_window->lecturePanel()->derivationText().contains(QStringLiteral("time.days")));

        QTest::keyClick(m_window, Qt::Key_PageDown); // 40B at 16 bytes a parameter on 8 GPUs
        QCOMPARE(m_controller->scenario().cluster.gpus, std::int64_t(8));
        QCOMPARE(m_window->highlightedPanel(), QStringLiteral("ledger"));
        {
            // Its ledger shows the lesson: the states alone fill the 80 GB (40e9 · 16 / 8), so even
            // one sequence under full recompute overflows.
            const auto& m = m_controller->plan().memory;
            QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates, 40e9 * 16 / 8);
            QCOMPARE(m.capacity, 80e9);
            QVERIFY(!m.fits);
            QCOMPARE(m_controller->scenario().training.microBatch, std::int64_t(1));
        }

        // The 12-byte step: its lesson (53B of states in 640 GB) beside a ledger that fits, as it says:
        // 40B with activations at micro-batch 1 under full recompute and the runtime overhead.
        m_window->startLecture(stepIndexOf(l, "largest-model-12"));
        QVERIFY(m_controller->plan().memory.fits);
        QCOMPARE(m_controller->plan().memory.weights, 40e9 * 2 / 8); // bf16, sharded over 8 (ZeRO-3)
        QVERIFY(m_window->lecturePanel()->numbersText().contains(QStringLiteral("53.33 B")));

        m_window->startLecture(stepIndexOf(l, "7b-ledger"));
        QCOMPARE(m_controller->plan().memory.weights, 7e9 * 2);         // bf16
        QCOMPARE(m_controller->plan().memory.optimizerStates, 7e9 * 8); // two fp32 moments
        QVERIFY(m_window->lecturePanel()->numbersText().contains(QStringLiteral("14.00 GB")));

        m_window->startLecture(stepIndexOf(l, "roofline-gemm"));
        QCOMPARE(m_window->highlightedPanel(), QStringLiteral("roofline"));
        QVERIFY(m_window->roofline()->showSeedOps());

        m_window->startLecture(stepIndexOf(l, "fp16-vs-bf16"));
        auto* table = m_window->lecturePanel()->dtypeTable();
        QVERIFY(table->isVisible());
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("fp16"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("0 (underflow)")); // 1e-8 underflows in fp16
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("bf16"));
        QCOMPARE(table->item(2, 1)->text(), QStringLiteral("1.00117e-08")); // and survives in bf16
        QCOMPARE(table->item(2, 2)->text(), QStringLiteral("0 01100100 0101100"));
        QVERIFY(!m_window->roofline()->showSeedOps());

        m_window->startLecture(stepIndexOf(l, "checkpointing"));
        QVERIFY(m_window->lecturePanel()->checkpointChart()->isVisible());
        QCOMPARE(m_window->lecturePanel()->checkpointChart()->pointCount(), 64);
        // (64/8 + 8) · 32 · 4096 · 2 bytes at the step's k = 8.
        QCOMPARE(m_controller->plan().memory.activations, 16.0 * 32 * 4096 * 2);
    }

    void escapeLeavesAndRestores()
    {
        const auto before = m_controller->document();
        m_window->startLecture(3);
        QVERIFY(m_controller->document() != before);
        QTest::keyClick(m_window, Qt::Key_Escape);
        QVERIFY(!m_window->lecture()->isActive());
        QVERIFY(m_controller->document() == before);
        QVERIFY(!m_window->findChild<QDockWidget*>(QStringLiteral("lectureDock"))->isVisible());
        QCOMPARE(m_window->highlightedPanel(), QString());
        const int step = m_window->lecture()->stepIndex();
        QTest::keyClick(m_window, Qt::Key_PageDown); // no longer the presenter's key
        QCOMPARE(m_window->lecture()->stepIndex(), step);
    }

    void slidersStayLiveInsideAStep()
    {
        auto* l = m_window->lecture();
        const int at = stepIndexOf(l, "70b-15t-1024-h100");
        m_window->startLecture(at);
        QVERIFY(!m_window->lecturePanel()->numbersText().contains(QStringLiteral("the lecture")));
        auto* gpus = m_window->controls()->slider(QStringLiteral("cluster.gpus"));
        QVERIFY(gpus);
        gpus->edit()->setFocus();
        gpus->edit()->selectAll();
        gpus->edit()->setText(QStringLiteral("2048"));
        emit gpus->edit()->editingFinished();
        m_controller->recomputeNow();
        QCOMPARE(l->stepIndex(), at); // still the same step
        QVERIFY(std::abs(m_controller->plan().time.days - daysByHand(70e9, 15e12, 2048, 989.5e12, 0.5)) < 1e-6);
        // The claim no longer holds; the panel says what the lecture said beside the live value.
        QVERIFY(m_window->lecturePanel()->numbersText().contains(QStringLiteral("the lecture: 143.9")));
        // Space typed into a slider's box is text, not "next".
        QTest::keyClick(gpus->edit(), Qt::Key_Space);
        QCOMPARE(l->stepIndex(), at);
    }

    void handoutHoldsEveryStep()
    {
        QTemporaryDir dir;
        const QString pdf = dir.filePath(QStringLiteral("handout.pdf"));
        QCOMPARE(m_window->exportLectureHandout(pdf, false), QString());
        QFile f(pdf);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(5).startsWith("%PDF"));
        const QString info = runTool("pdfinfo", {pdf});
        if (info.isEmpty())
            QSKIP("pdfinfo/pdftotext (poppler-utils) not installed");
        // 13 steps packed onto pages, a step never split (issue 20): 10 A4 pages, not one a step.
        QVERIFY2(info.contains(QRegularExpression(QStringLiteral("Pages:\\s+10\\b"))), qPrintable(info));
        const QString text = squeeze(runTool("pdftotext", {pdf, QStringLiteral("-")}));
        for (const auto& step : m_window->lecture()->lecture().steps)
            QVERIFY2(text.contains(squeeze(QString::fromStdString(step.title))), step.title.c_str());
        // The seeds' numbers, as the handout prints them.
        for (const char* n : {"524,288bytes", "262,144bytes", "143.9", "14.00GB", "56.00GB", "295.37", "0.9995",
                              "120.47", "682.66", "40B", "53.33B", "fp16underflowsyes", "70B-parametermodel"})
            QVERIFY2(text.contains(QLatin1String(n)), n);
    }

    // Korthikanti et al. 2022 (arXiv 2205.05198), Tables 3 and 5: the 22B GPT (48 layers, h = 6144,
    // 64 heads, s = 2048, V = 51200) on 8 A100s (t = 8), global batch 4, 1.10 s per iteration with
    // selective recompute and sequence parallelism: 41.5% MFU. Megatron-LM's FLOPs (Narayanan et al.
    // 2021 eq. 3 without recompute): 72 B s l h² (1 + s/6h + V/12lh).
    void reconcileReproducesKorthikanti22B()
    {
        const nlohmann::json model = {{"kind", "transformer"}, {"layers", 48},           {"d_model", 6144},
                                      {"heads", 64},           {"ffn", 24576},           {"ffn_kind", "gelu"},
                                      {"vocab", 51200},        {"positions", "learned"}, {"max_positions", 2048},
                                      {"norm", "layernorm"},   {"biases", "all"},        {"tied_embeddings", true}};
        m_controller->set(QStringLiteral("model"), model);
        for (const auto& [path, value] :
             std::vector<std::pair<QString, nlohmann::json>>{{QStringLiteral("cluster.gpu"), "a100-sxm4-80gb"},
                                                             {QStringLiteral("cluster.gpus"), 8},
                                                             {QStringLiteral("parallel.tp"), 8},
                                                             {QStringLiteral("parallel.sequence_parallel"), true},
                                                             {QStringLiteral("training.seq_len"), 2048},
                                                             {QStringLiteral("training.micro_batch"), 4},
                                                             {QStringLiteral("training.global_batch"), 4},
                                                             {QStringLiteral("training.recompute"), "selective"},
                                                             {QStringLiteral("flops.convention"), "megatron"}})
            m_controller->set(path, value);
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        app::ReconcileDialog dialog(m_controller);
        dialog.setInputs(QStringLiteral("1.10"), QString(), QString(), QString());
        QCOMPARE(dialog.errorText(), QString());
        const double B = 4, s = 2048, l = 48, h = 6144, V = 51200;
        const double flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
        const double byHand = flops / (1.10 * 8 * 312e12);
        QVERIFY2(std::abs(dialog.mfu() - byHand) < 1e-9, qPrintable(QString::number(dialog.mfu())));
        QVERIFY2(std::abs(dialog.mfu() - 0.415) < 0.005,
                 qPrintable(QString::number(dialog.mfu()))); // the paper's 41.5%
        QVERIFY(dialog.mfuText().startsWith(QStringLiteral("41.")));
        QVERIFY(dialog.hfuText().contains(QLatin1Char('%')));

        // Memory: a run that keeps an fp32 master copy the plan does not count shows it as the first reason.
        const auto& m = m_controller->plan().memory;
        const double predicted = m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations +
                                 m.temporaries + m.overheadWorkspace;
        const double master = 4 * m.paramsPerRank; // fp32, ZeRO-1 over dp = 1
        dialog.setInputs(QStringLiteral("1.10"), QString(), QString::number(predicted + master, 'f', 0), QString());
        QVERIFY(dialog.memoryText().contains(QStringLiteral("gap +")));
        QVERIFY(dialog.reasons()->rowCount() > 0);
        QCOMPARE(dialog.reasons()->item(0, 0)->text(), QStringLiteral("100%"));

        dialog.setInputs(QStringLiteral("-1"), QString(), QString(), QString());
        QVERIFY(dialog.errorText().contains(QStringLiteral("--step-time")));
    }

private:
    PlanController* m_controller = nullptr;
    MainWindow* m_window = nullptr;
};

QTEST_MAIN(TestLectureApp)
#include "tst_lecture_app.moc"
