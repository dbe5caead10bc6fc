// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Parallelism in the app offscreen: the time-mode switch, the FSDP strategy beside the ZeRO stage,
// the step-time chart, the per-stage ledger and "Find best layout" with Apply as one undo step.
#include "controlspanel.h"
#include "layoutsearchdialog.h"
#include "makefitdialog.h"
#include "mainwindow.h"
#include "parallelcontrols.h"
#include "plancontroller.h"
#include "quantityslider.h"
#include "stagemodel.h"
#include "steptimecontrols.h"
#include "steptimechart.h"
#include "summarypanel.h"
#include "derivationpanel.h"
#include "imbalancechart.h"

#include "moe_sweep.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QHeaderView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace napkin;
using napkin::app::MainWindow;
using napkin::app::PlanController;
using napkin::app::StageModel;

namespace {
void choose(QComboBox* box, const QString& id)
{
    QVERIFY2(box->findData(id) >= 0, qPrintable(id));
    box->setCurrentIndex(box->findData(id));
    emit box->activated(box->currentIndex());
}
double stageValue(const StageModel* m, int row, int column)
{
    return m->index(row, column).data(StageModel::ValueRole).toDouble();
}
} // namespace

class TestParallelApp : public QObject {
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }

private slots:
    void init()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_controller = new PlanController;
        m_window = new MainWindow(m_controller);
        m_controller->recomputeNow();
        m_stepTime = m_window->findChild<app::StepTimeControls*>();
        m_parallel = m_window->findChild<app::ParallelControls*>();
        QVERIFY(m_stepTime && m_parallel);
    }
    void cleanup()
    {
        delete m_window;
        delete m_controller;
    }

    void timeModeSwitchChangesPlanAndSummary()
    {
        m_controller->set(QStringLiteral("flops.convention"), "6PT");
        m_controller->recomputeNow();
        auto* mfu = m_window->controls()->slider(QStringLiteral("cluster.mfu"));
        QVERIFY(mfu->isEnabled());
        QCOMPARE(m_controller->plan().time.mode, "mfu");
        // CS336: step = 6PT FLOPs per step / (GPUs · peak · MFU); 6 · 6,738,415,616 params · 1024 · 4096
        // tokens / (64 · 989.5e12 · 0.5) = 5.36 s (Llama 2 7B on H100 SXM, bf16 dense 989.5 TFLOP/s).
        const QString mfuStep = m_window->summary()->text(QStringLiteral("time.step_seconds"));
        QCOMPARE(mfuStep, QStringLiteral("5.36 s"));
        QVERIFY(m_window->stepTime()->headline().contains(QStringLiteral("prediction (the plan uses MFU 0.50)")));
        // An assumed-MFU plan is not timed at spec peak: no empty "at spec peak" row (issue 20).
        QCOMPARE(m_window->stepTime()->rowLabels(), QStringList{QStringLiteral("predicted")});

        choose(m_stepTime->modeCombo(), QStringLiteral("predicted"));
        m_controller->recomputeNow();
        const auto& plan = m_controller->plan();
        QCOMPARE(plan.time.mode, "predicted");
        QCOMPARE(plan.time.stepSeconds, plan.stepTime.step);
        QVERIFY(!mfu->isEnabled()); // the assumed MFU is not an input any more
        QVERIFY(mfu->toolTip().contains(QStringLiteral("Unused")));
        const QString predicted = m_window->summary()->text(QStringLiteral("time.step_seconds"));
        QCOMPARE(predicted, QString::number(plan.stepTime.step, 'g', 3) + QStringLiteral(" s (predicted)"));
        QVERIFY(predicted != mfuStep);
        QVERIFY(m_window->summary()
                    ->text(QStringLiteral("time.hfu"))
                    .startsWith(QString::number(plan.stepTime.mfu, 'f', 2)));
        QVERIFY(m_window->stepTime()->headline().contains(QStringLiteral("Predicted")));
        QCOMPARE(m_window->stepTime()->rowLabels(),
                 (QStringList{QStringLiteral("at spec peak"), QStringLiteral("predicted")}));
        // Clicking the step time shows the predicted derivation (the breakdown's sum).
        m_controller->showDerivation(QStringLiteral("time.step_seconds"));
        QVERIFY(m_window->derivation()->html().contains(QStringLiteral("bubble")));

        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().time.mode, "mfu");
        QCOMPARE(m_stepTime->modeCombo()->currentData().toString(), QStringLiteral("mfu"));
        QVERIFY(mfu->isEnabled());
        QCOMPARE(m_window->summary()->text(QStringLiteral("time.step_seconds")), mfuStep);
    }

    void stepTimeChartEqualsPlanBreakdown_data()
    {
        QTest::addColumn<QString>("layout"); // JSON merged into "parallel"
        QTest::addColumn<QString>("recompute");
        QTest::addColumn<QString>("links"); // expected fragment of the links line
        // Links are achieved bus bandwidths: nominal one-direction rate x 0.8 (collective efficiency).
        // Default: 64 GPUs, 8 per node: DP 64 crosses nodes with 8 ranks per node, so NCCL rings
        // through 8 NICs of 50 GB/s: min(450, 8 x 50) x 0.8 = 320 GB/s.
        QTest::newRow("DP 64") << QStringLiteral("{}") << QStringLiteral("none")
                               << QStringLiteral("DP 64 crosses nodes at 320 GB/s");
        // TP 8 fills a node: NVLink 4 (H100 SXM 900 GB/s bidirectional) = 450 GB/s each way, x 0.8.
        QTest::newRow("TP 8 x PP 2") << QStringLiteral(R"({"tp": 8, "pp": 2})") << QStringLiteral("selective")
                                     << QStringLiteral("TP 8 inside a node at 360 GB/s");
        QTest::newRow("TP 2 x CP 2 x PP 4, full")
            << QStringLiteral(R"({"tp": 2, "cp": 2, "pp": 4, "zero": 0})") << QStringLiteral("full")
            << QStringLiteral("CP 2 inside a node at 360 GB/s");
    }
    void stepTimeChartEqualsPlanBreakdown()
    {
        QFETCH(QString, layout);
        QFETCH(QString, recompute);
        QFETCH(QString, links);
        nlohmann::json doc = m_controller->document();
        doc["parallel"].update(nlohmann::json::parse(layout.toStdString()));
        doc["training"]["recompute"] = recompute.toStdString();
        m_controller->setDocument(doc, QStringLiteral("layout"));
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        const auto& st = m_controller->plan().stepTime;
        QVERIFY(st.valid);
        const QVector<double> bars = m_window->stepTime()->partValues();
        const QVector<double> expected{st.compute, st.recompute, st.tpComm,    st.cpComm,  st.epComm,   st.ppComm,
                                       st.bubble,  st.dpComm,    st.optimizer, st.offload, st.overheads};
        QCOMPARE(bars, expected);
        double sum = 0;
        for (double v : bars)
            sum += v;
        QVERIFY(std::abs(sum - st.step) <= 1e-12 * st.step);
        QVERIFY2(m_window->stepTime()->linksText().contains(links), qPrintable(m_window->stepTime()->linksText()));
        QCOMPARE(recompute == QLatin1String("none"), bars[1] == 0.0); // recompute bar only with recomputation
    }

    // Issue 17's question in the app: full fine-tuning of Llama 2 7B on one RTX 4090 is 87 GB. The
    // button beside the shortfall opens Make it fit with a fitting recipe selected; Apply sets it. Two
    // clicks, one undo step, and the summary then says what trains.
    void makeItFitInTwoClicks()
    {
        nlohmann::json doc = m_controller->document();
        doc["training"]["seq_len"] = 2048;
        doc["training"]["recompute"] = "full";
        doc["training"]["global_batch"] = 8;
        doc["cluster"]["gpu"] = "rtx-4090";
        doc["cluster"]["gpus"] = 1;
        m_controller->setDocument(doc, QStringLiteral("4090"));
        m_controller->recomputeNow();
        QVERIFY(!m_controller->plan().memory.fits);
        QVERIFY(m_window->makeFitButton()->isVisibleTo(m_window));
        QTest::mouseClick(m_window->makeFitButton(), Qt::LeftButton); // click 1
        auto* dialog = m_window->findChild<app::MakeFitDialog*>();
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(!dialog->suggestions().changes.empty());
        QCOMPARE(dialog->table()->currentRow(), 0);
        QVERIFY(dialog->suggestions().changes.front().fits);
        const int undo = m_controller->undoStack()->count();
        QTest::mouseClick(dialog->applyButton(), Qt::LeftButton); // click 2
        m_controller->recomputeNow();
        QVERIFY(m_controller->plan().memory.fits);
        QCOMPARE(m_controller->document()["finetune"]["method"].get<std::string>(), std::string("lora"));
        QCOMPARE(m_controller->undoStack()->count(), undo + 1);
        QVERIFY(!m_window->makeFitButton()->isVisibleTo(m_window));
        QVERIFY(m_window->summary()->text(QStringLiteral("params.trainable")).contains(QStringLiteral("LoRA")));
        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        QVERIFY(!m_controller->plan().memory.fits);
    }

    void imbalanceChartFollowsTheSweep()
    {
        // The dense default: nothing to sweep, and the panel says when it applies.
        auto* panel = m_window->findChild<charts::ImbalanceChart*>();
        QVERIFY(panel);
        QVERIFY(panel->stepSeconds().isEmpty());
        QVERIFY(panel->headline().contains(QStringLiteral("parallel.ep > 1")));
        // Mixtral 8x7B at EP 8 on 16 GPUs: the four points are core's sweep, each a full re-plan.
        nlohmann::json doc = m_controller->document();
        doc["model"] = {{"preset", "mixtral-8x7b"}};
        doc["cluster"]["gpus"] = 16;
        doc["parallel"]["ep"] = 8;
        doc["training"]["recompute"] = "full";
        doc["step_time"]["mode"] = "predicted";
        m_controller->setDocument(doc, QStringLiteral("moe"));
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        const auto sweep = core::imbalanceSweep(m_controller->scenario());
        QCOMPARE(sweep.size(), std::size_t(4));
        QCOMPARE(panel->stepSeconds().size(), 4);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(panel->stepSeconds()[i], sweep[std::size_t(i)].stepSeconds);
            QCOMPARE(panel->memoryBytes()[i], sweep[std::size_t(i)].memoryTotal);
        }
        QCOMPARE(panel->labels().front(), QStringLiteral("1.0"));
        QVERIFY(panel->labels().back().startsWith(QStringLiteral("worst")));
        // The balanced point is the plan itself (imbalance 1.0 is the scenario's default).
        QCOMPARE(panel->stepSeconds().front(), m_controller->plan().stepTime.step);
        QVERIFY(panel->stepSeconds().back() > panel->stepSeconds().front());
    }

    void interNodeBandwidthAndOverlapReachThePlan()
    {
        m_stepTime->interNodeBox()->setValue(100); // GB/s
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().stepTime.interNodeBandwidth, 100e9);
        // DP 64 crosses nodes, 8 ranks per node: min(NVLink 450, 8 x 100) GB/s x 0.8 efficiency.
        QCOMPARE(m_controller->plan().stepTime.dpBandwidth, 360e9);
        const double exposed = m_controller->plan().stepTime.dpComm;
        m_stepTime->overlapCheck()->setChecked(false);
        m_controller->recomputeNow();
        QVERIFY(!m_controller->scenario().stepTime.overlapDp);
        QCOMPARE(m_controller->plan().stepTime.dpComm, m_controller->plan().stepTime.dpCommTotal); // nothing hidden
        QVERIFY(m_controller->plan().stepTime.dpComm >= exposed);
    }

    void stageModelHasOneRowPerStage()
    {
        QAbstractItemModelTester tester(m_window->stageModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto* model = m_window->stageModel();
        QCOMPARE(model->rowCount(), 1);
        nlohmann::json doc = m_controller->document();
        doc["parallel"]["pp"] = 2;
        doc["parallel"]["zero"] = 0;
        m_controller->setDocument(doc, QStringLiteral("pp 2"));
        m_controller->recomputeNow();
        QCOMPARE(model->rowCount(), 2);
        // Llama 2 7B: 32 layers of 4·4096² + 3·4096·11008 + 2·4096 = 202,383,360; embedding and output
        // 32000 · 4096 = 131,072,000 each; final norm 4096 (Touvron et al. 2023).
        QCOMPARE(m_controller->plan().params.total, 6738415616.0);
        QCOMPARE(stageValue(model, 0, StageModel::Params), 16 * 202383360.0 + 131072000.0);
        QCOMPARE(stageValue(model, 1, StageModel::Params), 16 * 202383360.0 + 131072000.0 + 4096.0);
        // bf16-mixed without ZeRO: 2 + 2 + 0 + 2 · 4 bytes per parameter.
        for (int row = 0; row < 2; ++row) {
            const double p = stageValue(model, row, StageModel::Params);
            QCOMPARE(stageValue(model, row, StageModel::Weights), 2 * p);
            QCOMPARE(stageValue(model, row, StageModel::Gradients), 2 * p);
            QCOMPARE(stageValue(model, row, StageModel::Master), 0.0);
            QCOMPARE(stageValue(model, row, StageModel::Optimizer), 8 * p);
            QCOMPARE(stageValue(model, row, StageModel::Tensors),
                     m_controller->plan().memory.perStage[std::size_t(row)].tensors);
        }
        // The unit sits in the header and the cells are bare numbers in it: stage 0's weights are
        // 2 · (16 · 202,383,360 + 131,072,000) = 6,738,391,040 bytes = 6.74 GB; the tooltip says it whole.
        QCOMPARE(m_window->ledgerTabs()->tabText(1), QStringLiteral("Per stage (GB)"));
        QVERIFY(model->headerData(StageModel::Weights, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("in GB")));
        QCOMPARE(model->index(0, StageModel::Weights).data().toString(), QStringLiteral("6.74"));
        QCOMPARE(model->index(0, StageModel::Weights).data(Qt::ToolTipRole).toString(), QStringLiteral("6.74 GB"));
        // 1F1B with m = 1024 / (1 · 32) = 32 micro-batches: stage i holds min(p - i, m) in flight.
        QCOMPARE(stageValue(model, 0, StageModel::InFlight), 2.0);
        QCOMPARE(stageValue(model, 1, StageModel::InFlight), 1.0);
        QCOMPARE(stageValue(model, 1, StageModel::Temporaries) > 0, true); // the logits sit on the last stage
        QCOMPARE(stageValue(model, 0, StageModel::Temporaries), 0.0);
        // The highlighted stage is the one the ledger shows.
        const int loaded = int(m_controller->plan().memory.mostLoadedStage);
        QVERIFY(model->index(loaded, StageModel::Stage).data(StageModel::MostLoadedRole).toBool());
        QVERIFY(!model->index(1 - loaded, StageModel::Stage).data(StageModel::MostLoadedRole).toBool());
        QCOMPARE(stageValue(model, loaded, StageModel::Activations), m_controller->plan().memory.activations);
        // A slider that changes pp resets the rows.
        typeIntoSlider(QStringLiteral("parallel.pp"), QStringLiteral("4"));
        QCOMPARE(model->rowCount(), 4);
        QCOMPARE(stageValue(model, 1, StageModel::Params), 8 * 202383360.0);
    }

    // At 1280x800 every heading of the Per stage table and every stage name shows whole ("ptimizer"
    // and "0 (fir..." before, issue 20): each text fits its section with the style's margins.
    void stageHeadingsFitAt1280()
    {
        nlohmann::json doc = m_controller->document();
        doc["parallel"]["tp"] = 2;
        doc["parallel"]["pp"] = 4;
        m_controller->setDocument(doc, QStringLiteral("layout"));
        m_controller->recomputeNow();
        m_window->resize(1280, 800);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        m_window->ledgerTabs()->setCurrentIndex(1);
        for (int i = 0; i < 10; ++i)
            QApplication::processEvents();
        QTableView* table = m_window->stageTable();
        QVERIFY(table->isVisible());
        auto* header = table->horizontalHeader();
        const int headerMargin = 2 * table->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
        auto* model = m_window->stageModel();
        for (int c = 0; c < model->columnCount(); ++c) {
            const QString text = model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
            QVERIFY2(header->sectionSize(c) >= header->fontMetrics().horizontalAdvance(text) + headerMargin,
                     qPrintable(QStringLiteral("%1: %2 px").arg(text).arg(header->sectionSize(c))));
        }
        const int cellMargin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
        QFont bold = table->font();
        bold.setBold(true); // the most loaded stage's row
        for (int r = 0; r < model->rowCount(); ++r)
            for (int c = 0; c < model->columnCount(); ++c) {
                const QString text = model->index(r, c).data().toString();
                QVERIFY2(table->columnWidth(c) >= QFontMetrics(bold).horizontalAdvance(text) + cellMargin,
                         qPrintable(QStringLiteral("%1: %2 px").arg(text).arg(table->columnWidth(c))));
            }
        m_window->hide();
    }

    void fsdpChoiceNeverProducesAnError_data()
    {
        QTest::addColumn<int>("zero");
        QTest::addColumn<QString>("fsdp");
        QTest::addColumn<bool>("fsdpLast");
        QTest::addColumn<int>("effective"); // ZeRO stage in force (FULL_SHARD = 3, SHARD_GRAD_OP = 2)
        const QStringList fsdps{QStringLiteral("none"), QStringLiteral("full"), QStringLiteral("grad_op"),
                                QStringLiteral("hybrid")};
        const int stage[] = {-1, 3, 2, 3};
        for (int z = 0; z <= 3; ++z)
            for (int f = 0; f < 4; ++f)
                for (bool last : {false, true}) {
                    const int eff = last ? (f == 0 ? z : stage[f]) : z;
                    QTest::addRow("zero %d, %s %s", z, qPrintable(fsdps[f]), last ? "after" : "before")
                        << z << fsdps[f] << last << eff;
                }
    }
    void fsdpChoiceNeverProducesAnError()
    {
        QFETCH(int, zero);
        QFETCH(QString, fsdp);
        QFETCH(bool, fsdpLast);
        QFETCH(int, effective);
        auto* zeroBox = m_window->controls()->combo(QStringLiteral("parallel.zero"));
        const int undoBefore = m_controller->undoStack()->index();
        if (fsdpLast) {
            choose(zeroBox, QString::number(zero));
            m_controller->recomputeNow();
            QVERIFY(!m_controller->hasErrors());
            choose(m_parallel->fsdpCombo(), fsdp);
        } else {
            choose(m_parallel->fsdpCombo(), fsdp);
            m_controller->recomputeNow();
            QVERIFY(!m_controller->hasErrors());
            choose(zeroBox, QString::number(zero));
        }
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        QCOMPARE(core::effectiveZeroStage(m_controller->scenario()), effective);
        // The controls show what is in force: the last choice wins, the other one steps aside.
        QCOMPARE(m_parallel->fsdpCombo()->currentData().toString(), fsdpLast ? fsdp : QStringLiteral("none"));
        QCOMPARE(zeroBox->currentData().toString(),
                 QString::number(fsdpLast && fsdp != QLatin1String("none") ? 0 : zero));
        // Each pick is one undo step that also carries the other field back.
        if (m_controller->undoStack()->index() > undoBefore) {
            while (m_controller->undoStack()->index() > undoBefore)
                m_controller->undoStack()->undo();
            m_controller->recomputeNow();
            QVERIFY(!m_controller->hasErrors());
            QCOMPARE(m_controller->scenario().parallel.zeroStage, 1);
            QCOMPARE(m_controller->scenario().parallel.fsdp, core::Fsdp::None);
        }
    }

    void fsdpRoundTripsThroughAFile()
    {
        choose(m_parallel->fsdpCombo(), QStringLiteral("hybrid"));
        choose(m_stepTime->modeCombo(), QStringLiteral("predicted"));
        m_controller->recomputeNow();
        QVERIFY(!m_controller->hasErrors());
        const auto doc = m_controller->document();
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("fsdp.napkin.json"));
        QVERIFY(m_window->saveFile(file));
        m_controller->newScenario();
        QCOMPARE(m_parallel->fsdpCombo()->currentData().toString(), QStringLiteral("none"));
        QVERIFY(m_window->openFile(file));
        QVERIFY(m_controller->document() == doc);
        QCOMPARE(m_parallel->fsdpCombo()->currentData().toString(), QStringLiteral("hybrid"));
        QCOMPARE(m_stepTime->modeCombo()->currentData().toString(), QStringLiteral("predicted"));
        QCOMPARE(m_controller->scenario().parallel.fsdp, core::Fsdp::Hybrid);
    }

    void applyingASearchRowIsOneUndoStep()
    {
        choose(m_stepTime->modeCombo(), QStringLiteral("predicted"));
        m_controller->recomputeNow();
        const double handPicked = m_controller->plan().stepTime.step; // the default layout fits
        QVERIFY(m_controller->plan().memory.fits);
        auto* dialog = m_window->openLayoutSearch();
        QVERIFY(dialog);
        QVERIFY(dialog->waitForResults());
        const auto& r = dialog->result();
        QVERIFY(r.evaluated > 0);
        QVERIFY(r.feasible > 0 && r.feasible <= r.evaluated);
        QCOMPARE(int(r.best.size()), std::min<int>(10, int(r.feasible)));
        QCOMPARE(dialog->table()->rowCount(), int(r.best.size()));
        QVERIFY(dialog->statusText().contains(QStringLiteral("Evaluated")));
        // The search covers the hand-picked layout: its best is never slower.
        QVERIFY(r.best.front().time.step <= handPicked * (1 + 1e-12));

        const int row = 1;
        const core::LayoutResult chosen = r.best[row];
        QCOMPARE(dialog->table()->item(row, app::LayoutSearchDialog::Tp)->text(), QString::number(chosen.layout.tp));
        const int undoBefore = m_controller->undoStack()->index();
        const auto before = core::layoutOf(m_controller->scenario());
        QVERIFY(dialog->applyRow(row));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->undoStack()->index(), undoBefore + 1);
        const auto after = core::layoutOf(m_controller->scenario());
        QCOMPARE(after.tp, chosen.layout.tp);
        QCOMPARE(after.pp, chosen.layout.pp);
        QCOMPARE(after.virtualStages, chosen.layout.virtualStages);
        QCOMPARE(after.cp, chosen.layout.cp);
        QCOMPARE(after.dp, chosen.layout.dp);
        QCOMPARE(after.microBatch, chosen.layout.microBatch);
        QCOMPARE(after.recompute, chosen.layout.recompute);
        QCOMPARE(after.zero, chosen.layout.zero);
        QCOMPARE(m_controller->plan().stepTime.step, chosen.time.step);
        QCOMPARE(m_controller->plan().time.stepSeconds, chosen.time.step);
        QVERIFY(!dialog->isRunning()); // the layout is the search's output, not its input: no re-run
        // One undo brings the whole previous layout back.
        m_controller->undoStack()->undo();
        m_controller->recomputeNow();
        const auto undone = core::layoutOf(m_controller->scenario());
        QCOMPARE(undone.tp, before.tp);
        QCOMPARE(undone.microBatch, before.microBatch);
        QCOMPARE(undone.zero, before.zero);
        QCOMPARE(m_controller->plan().stepTime.step, handPicked);
        // A double-click applies too.
        emit dialog->table()->cellDoubleClicked(0, 0);
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().stepTime.step, r.best.front().time.step);
    }

    void applyingAnExpertLayoutThatNeedsSequenceParallelismIsNoNewSearch()
    {
        // Megatron-Core runs EP with TP only under sequence parallelism, so applying such a row turns
        // parallel.sequence_parallel on (core::applyLayout); that is the search's own choice, not a
        // new input: the results stay current and no search re-runs.
        nlohmann::json doc = m_controller->document();
        doc["model"] = {{"preset", "qwen3-30b-a3b"}};
        doc["cluster"]["gpus"] = 16;
        doc["training"]["global_batch"] = 64;
        doc["step_time"]["mode"] = "predicted";
        m_controller->setDocument(doc, QStringLiteral("moe"));
        m_controller->recomputeNow();
        QVERIFY(!m_controller->scenario().parallel.sequenceParallel);
        auto* dialog = m_window->openLayoutSearch();
        QVERIFY(dialog->waitForResults());
        const int runs = dialog->runs();
        const bool anyNeedsSp =
            std::any_of(dialog->result().best.begin(), dialog->result().best.end(),
                        [](const core::LayoutResult& x) { return x.layout.ep > 1 && x.layout.tp > 1; });
        QCOMPARE(dialog->statusText().contains(QStringLiteral("run with sequence parallelism")), anyNeedsSp);
        core::Layout l{2, 1, 1, 1, 8, 1, core::Recompute::Full, 1};
        l.ep = 8;
        m_controller->applyLayout(l);
        m_controller->recomputeNow();
        QVERIFY(m_controller->scenario().parallel.sequenceParallel);
        QCOMPARE(m_controller->scenario().parallel.ep, 8);
        QVERIFY(!dialog->isRunning());
        QCOMPARE(dialog->runs(), runs);
        QVERIFY(!dialog->statusText().contains(QStringLiteral("Out of date")));
        // Turning sequence parallelism on by hand under a dense layout is a new input.
        dialog->liveCheck()->setChecked(false);
        nlohmann::json dense = m_controller->document();
        dense["parallel"]["ep"] = 1;
        m_controller->setDocument(dense, QStringLiteral("ep 1"));
        m_controller->recomputeNow();
        QVERIFY(dialog->statusText().contains(QStringLiteral("Out of date")));
    }

    void liveSearchFollowsTheGpuCountCoalesced()
    {
        auto* dialog = m_window->openLayoutSearch();
        QVERIFY(dialog->waitForResults());
        const int runs = dialog->runs();
        // Four GPU counts in one burst (no event loop turn between them, as in a drag): the first
        // starts a search, the other three coalesce into one more.
        for (const char* gpus : {"32", "256", "512", "128"})
            typeIntoSlider(QStringLiteral("cluster.gpus"), QLatin1String(gpus));
        QVERIFY(dialog->isRunning());
        QVERIFY(dialog->waitForResults());
        QCOMPARE(dialog->runs(), runs + 2);
        QVERIFY(!dialog->result().best.empty());
        for (const auto& x : dialog->result().best) // every row is a layout of the 128 GPUs now
            QCOMPARE(std::int64_t(x.layout.tp) * x.layout.pp * x.layout.cp * x.layout.dp, std::int64_t(128));
        QVERIFY(dialog->applyRow(0));
        // Not live: a change marks the results out of date and Apply refuses them.
        dialog->liveCheck()->setChecked(false);
        typeIntoSlider(QStringLiteral("cluster.gpus"), QStringLiteral("64"));
        QVERIFY(!dialog->isRunning());
        QVERIFY(dialog->statusText().contains(QStringLiteral("Out of date")));
        QVERIFY(!dialog->applyRow(0));
    }

    void grabForScreenshots()
    {
        // NAPKIN_GRAB_DIR=dir writes docs/screenshots material: the window at 1920x1080 with the
        // step-time and per-stage tabs showing (TP 2 x PP 4, predicted), and the search dialog.
        nlohmann::json doc = m_controller->document();
        doc["parallel"]["tp"] = 2;
        doc["parallel"]["pp"] = 4;
        doc["step_time"]["mode"] = "predicted";
        m_controller->setDocument(doc, QStringLiteral("layout"));
        m_controller->recomputeNow();
        m_window->chartTabs()->setCurrentWidget(m_window->stepTime());
        m_window->ledgerTabs()->setCurrentIndex(1); // Per stage: the stages chart above the table
        QVERIFY(m_window->stageTable()->isVisibleTo(m_window));
        QCOMPARE(m_window->stageModel()->rowCount(), 4);
        auto* dialog = m_window->openLayoutSearch();
        QVERIFY(dialog->waitForResults());
        const QString dir = qEnvironmentVariable("NAPKIN_GRAB_DIR");
        if (dir.isEmpty())
            return;
        m_window->resize(1920, 1080);
        m_window->show();
        dialog->resize(1280, 420);
        for (int i = 0; i < 5; ++i)
            QApplication::processEvents();
        QVERIFY(m_window->grab().save(dir + QStringLiteral("/parallel-1920x1080.png")));
        QVERIFY(dialog->grab().save(dir + QStringLiteral("/layout-search.png")));
        m_window->setDarkTheme(true);
        for (int i = 0; i < 5; ++i)
            QApplication::processEvents();
        QVERIFY(m_window->grab().save(dir + QStringLiteral("/parallel-dark-1920x1080.png")));
        m_window->setDarkTheme(false);
    }

private:
    void typeIntoSlider(const QString& path, const QString& text)
    {
        auto* s = m_window->controls()->slider(path);
        QVERIFY2(s, qPrintable(path));
        s->edit()->setText(text);
        emit s->edit()->editingFinished();
        m_controller->recomputeNow();
    }

    PlanController* m_controller = nullptr;
    MainWindow* m_window = nullptr;
    app::StepTimeControls* m_stepTime = nullptr;
    app::ParallelControls* m_parallel = nullptr;
};

QTEST_MAIN(TestParallelApp)
#include "tst_parallel_app.moc"
