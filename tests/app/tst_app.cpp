// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The desktop app offscreen: controls drive the ledger, typed text, errors, files, undo, import.
#include "chartexport.h"
#include "chartstyle.h"
#include "controlspanel.h"
#include "derivationpanel.h"
#include "dtypedialog.h"
#include "jsonreader.h"
#include "ledgerchart.h"
#include "rooflinechart.h"
#include "ledgermodel.h"
#include "mainwindow.h"
#include "timelinechart.h"
#include "plancontroller.h"
#include "quantityslider.h"
#include "steptimecontrols.h"
#include "summarypanel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDropEvent>
#include <QFileInfo>
#include <QImage>
#include <QCheckBox>
#include <QLabel>
#include <QTableWidget>
#include <QLineEdit>
#include <QMimeData>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace napkin;
using napkin::app::LedgerModel;
using napkin::app::MainWindow;
using napkin::app::PlanController;

namespace {
// Bytes shown in a row of the ledger model (BytesRole), by bucket row.
double rowBytes(const LedgerModel* m, int row)
{
    return m->index(row, LedgerModel::Size).data(LedgerModel::BytesRole).toDouble();
}
enum Row { Weights, Gradients, Master, Optimizer, Activations, Temporaries, Overhead, Total };

void typeInto(QLineEdit* edit, const QString& text)
{
    edit->setFocus();
    edit->selectAll();
    edit->setText(text);
    emit edit->editingFinished();
}
} // namespace

class TestApp : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_controller = new PlanController;
        m_window = new MainWindow(m_controller);
        m_controller->recomputeNow();
    }
    void cleanup()
    {
        delete m_window;
        delete m_controller;
    }

    void ledgerModelPassesTester()
    {
        QAbstractItemModelTester tester(m_window->ledgerModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        m_controller->set(QStringLiteral("training.micro_batch"), 2);
        m_controller->recomputeNow();
        QCOMPARE(m_window->ledgerModel()->rowCount(), 8);
    }

    // Clicking the Activations row's bucket cell lists one layer's saved tensors below it (bytes per
    // layer per micro-batch, the recomputed ones marked), the model still valid; clicking again folds it.
    void activationsRowExpandsIntoItsTensors()
    {
        auto* model = m_window->ledgerModel();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto& lt = m_controller->plan().memory.layerTensors;
        QVERIFY(lt.count > 0);
        QVERIFY(model->isActivationsRow(Activations));
        QVERIFY(model->index(Activations, LedgerModel::Bucket).data().toString().startsWith(QStringLiteral("+ ")));
        auto* view = m_window->ledgerTable();
        QCOMPARE(view->model(), static_cast<QAbstractItemModel*>(model));
        emit view->clicked(model->index(Activations, LedgerModel::Bucket));
        QVERIFY(model->activationsExpanded());
        // The click also opens the derivation, which names the tensors it sums.
        QVERIFY2(m_window->derivation()->html().contains(QStringLiteral("Per layer")),
                 qPrintable(m_window->derivation()->html()));
        QVERIFY(m_window->derivation()->html().contains(QLatin1String(lt.tensors[0].name)));
        QCOMPARE(model->rowCount(), 8 + lt.count);
        for (int i = 0; i < lt.count; ++i) {
            const int row = Activations + 1 + i;
            QVERIFY(model->isTensorRow(row));
            QCOMPARE(rowBytes(model, row), lt.tensors[std::size_t(i)].bytes);
            QVERIFY(model->index(row, LedgerModel::Size).data().toString().endsWith(QStringLiteral("/layer")));
            QVERIFY(model->index(row, LedgerModel::Bucket)
                        .data()
                        .toString()
                        .contains(QLatin1String(lt.tensors[std::size_t(i)].name)));
        }
        // Still the ledger's total in the Total row, which moved down.
        QCOMPARE(rowBytes(model, Total + lt.count), m_controller->plan().memory.total);
        // A recompute policy marks the dropped tensors.
        m_controller->set(QStringLiteral("training.recompute"), "full");
        m_controller->recomputeNow();
        QVERIFY(model->index(Activations + 2, LedgerModel::PerParam)
                    .data()
                    .toString()
                    .contains(QStringLiteral("recomputed")));
        emit view->clicked(model->index(Activations, LedgerModel::Bucket));
        QVERIFY(!model->activationsExpanded());
        QCOMPARE(model->rowCount(), 8);
    }

    // The "Memory through the step" tab draws memory.timeline: one point per event, its highest
    // point the ledger's total less the allocator's reserve.
    void timelineTabDrawsTheTimeline()
    {
        const auto& m = m_controller->plan().memory;
        QCOMPARE(m_window->timeline()->pointCount(), m.timelineCount);
        QCOMPARE(m_window->timeline()->peakAllocated(), m.total - m.overheadAllocator);
        QVERIFY(m_window->timeline()->headline().contains(QStringLiteral("loss")));
        m_controller->set(QStringLiteral("offload.optimizer"), "cpu");
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(), "offload.optimizer cpu with ZeRO-1 is valid");
        QCOMPARE(m_window->timeline()->peakAllocated(),
                 m_controller->plan().memory.total - m_controller->plan().memory.overheadAllocator);
        // The host row appears under the total with what the host holds.
        QCOMPARE(m_window->ledgerModel()->rowCount(), 9);
        QCOMPARE(rowBytes(m_window->ledgerModel(), 8), m_controller->plan().memory.host.total);
    }

    void microBatchSliderChangesActivationsOnly()
    {
        auto* model = m_window->ledgerModel();
        const double w = rowBytes(model, Weights), a = rowBytes(model, Activations), t = rowBytes(model, Temporaries);
        auto* s = m_window->controls()->slider(QStringLiteral("training.micro_batch"));
        QVERIFY(s);
        s->slider()->setValue(s->positionFor(4)); // as a drag would
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().training.microBatch, std::int64_t(4));
        QCOMPARE(rowBytes(model, Weights), w);
        QVERIFY(std::abs(rowBytes(model, Activations) - 4 * a) < 4 * a * 0.02); // 4x, less the fixed outside term
        QCOMPARE(rowBytes(model, Temporaries), 4 * t);
        QCOMPARE(rowBytes(model, Total), m_controller->plan().memory.total);
    }

    void gpuSliderShardsOptimizerStates()
    {
        auto* model = m_window->ledgerModel();
        const double o = rowBytes(model, Optimizer), g = rowBytes(model, Gradients);
        auto* s = m_window->controls()->slider(QStringLiteral("cluster.gpus"));
        typeInto(s->edit(), QStringLiteral("128"));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().cluster.gpus, std::int64_t(128));
        QCOMPARE(rowBytes(model, Optimizer), o / 2); // ZeRO-1 over 128 instead of 64
        QCOMPARE(rowBytes(model, Gradients), g);
    }

    void sequenceSliderChangesActivationsAndTemporaries()
    {
        auto* model = m_window->ledgerModel();
        const double t = rowBytes(model, Temporaries);
        typeInto(m_window->controls()->slider(QStringLiteral("training.seq_len"))->edit(), QStringLiteral("2Ki"));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().training.seqLen, std::int64_t(2048));
        QCOMPARE(rowBytes(model, Temporaries), t / 2);
    }

    void eachSliderChangesTheRightCells_data()
    {
        // Which ledger rows a one-step change of each input must move (and which it must not):
        // weights, gradients, master, optimizer, activations, temporaries; plus whether the days
        // and the roofline's points move.
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("changed"); // W G M O A T, '.' = unchanged
        QTest::addColumn<bool>("daysMove");
        QTest::addColumn<bool>("rooflineMoves");
        // clang-format off
        QTest::newRow("micro-batch") << QStringLiteral("training.micro_batch") << QStringLiteral("2") << QStringLiteral("....AT") << false << true;
        QTest::newRow("sequence") << QStringLiteral("training.seq_len") << QStringLiteral("2048") << QStringLiteral("....AT") << true << true;
        QTest::newRow("GPUs (ZeRO-1 shards optimizer states)") << QStringLiteral("cluster.gpus") << QStringLiteral("32") << QStringLiteral("...O..") << true << false;
        QTest::newRow("parameters") << QStringLiteral("model.params") << QStringLiteral("13B") << QStringLiteral("WG.OA.") << true << true; // same 32k vocabulary: logits unchanged
        QTest::newRow("tokens") << QStringLiteral("training.tokens") << QStringLiteral("4T") << QStringLiteral("......") << true << false;
        QTest::newRow("MFU") << QStringLiteral("cluster.mfu") << QStringLiteral("0.4") << QStringLiteral("......") << true << false;
        QTest::newRow("global batch") << QStringLiteral("training.global_batch") << QStringLiteral("2048") << QStringLiteral("......") << false << false;
        // clang-format on
    }
    void eachSliderChangesTheRightCells()
    {
        QFETCH(QString, path);
        QFETCH(QString, text);
        QFETCH(QString, changed);
        QFETCH(bool, daysMove);
        QFETCH(bool, rooflineMoves);
        auto* model = m_window->ledgerModel();
        QVector<double> before;
        for (int r = Weights; r <= Temporaries; ++r)
            before << rowBytes(model, r);
        const double days = m_controller->plan().time.days;
        const auto points = m_window->roofline()->opPoints();
        const auto bars = m_window->ledgerChart()->bucketValues();
        auto* s = m_window->controls()->slider(path);
        QVERIFY(s);
        typeInto(s->edit(), text);
        m_controller->recomputeNow();
        QVERIFY(!m_controller->hasErrors());
        for (int r = Weights; r <= Temporaries; ++r) {
            const bool moved = rowBytes(model, r) != before[r];
            QVERIFY2(moved == (changed[r] != QLatin1Char('.')),
                     qPrintable(QStringLiteral("row %1 %2")
                                    .arg(r)
                                    .arg(moved ? QStringLiteral("moved") : QStringLiteral("did not move"))));
        }
        QCOMPARE(m_controller->plan().time.days != days, daysMove);
        QCOMPARE(m_window->roofline()->opPoints() != points, rooflineMoves);
        // The chart follows the table exactly.
        const auto after = m_window->ledgerChart()->bucketValues();
        for (int r = Weights; r <= Temporaries; ++r)
            QCOMPARE(after[r], rowBytes(model, r));
        QCOMPARE(after != bars, changed != QStringLiteral("......"));
    }

    void typedSuffixesParse_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("value");
        QTest::newRow("7B params") << QStringLiteral("model.params") << QStringLiteral("7B") << 7e9;
        QTest::newRow("15T tokens") << QStringLiteral("training.tokens") << QStringLiteral("15T") << 15e12;
        QTest::newRow("2e12 tokens") << QStringLiteral("training.tokens") << QStringLiteral("2e12") << 2e12;
        QTest::newRow("4k gpus") << QStringLiteral("cluster.gpus") << QStringLiteral("4k") << 4000.0;
        QTest::newRow("1,024 batch") << QStringLiteral("training.global_batch") << QStringLiteral("1,024") << 1024.0;
    }
    void typedSuffixesParse()
    {
        QFETCH(QString, path);
        QFETCH(QString, text);
        QFETCH(double, value);
        typeInto(m_window->controls()->slider(path)->edit(), text);
        m_controller->recomputeNow();
        QVERIFY(!m_controller->hasErrors());
        const auto& sc = m_controller->scenario();
        const double got = path == QLatin1String("model.params")      ? m_controller->plan().params.total
                           : path == QLatin1String("training.tokens") ? sc.training.tokens
                           : path == QLatin1String("cluster.gpus")    ? double(sc.cluster.gpus)
                                                                      : double(sc.training.globalBatch);
        QCOMPARE(got, value);
    }

    void invalidTextShowsErrorAndKeepsPlan()
    {
        const double before = m_controller->plan().compute.trainingFlops;
        auto* s = m_window->controls()->slider(QStringLiteral("training.tokens"));
        typeInto(s->edit(), QStringLiteral("lots"));
        QVERIFY(!s->errorLabel()->isHidden());
        QVERIFY(s->errorLabel()->text().contains(QStringLiteral("not a number")));
        typeInto(s->edit(), QStringLiteral("1e20"));
        QVERIFY(s->errorLabel()->text().contains(QStringLiteral("must be from")));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().compute.trainingFlops, before);
        // An invalid document (from a file or undo) keeps the last plan and reports the field.
        QSignalSpy errors(m_controller, &PlanController::errorsChanged);
        m_controller->set(QStringLiteral("cluster.gpus"), 0);
        m_controller->recomputeNow();
        QVERIFY(m_controller->hasErrors());
        QCOMPARE(m_controller->errors().front().field, std::string("cluster.gpus"));
        QCOMPARE(m_controller->plan().compute.trainingFlops, before);
        QVERIFY(errors.count() >= 1);
    }

    void burstsAreCoalesced()
    {
        QSignalSpy spy(m_controller, &PlanController::planChanged);
        auto* s = m_window->controls()->slider(QStringLiteral("training.micro_batch"));
        for (int p = 0; p < 200; p += 10)
            s->slider()->setValue(p); // a drag: many value changes in one event-loop turn
        QCOMPARE(spy.count(), 0);
        QTRY_COMPARE(spy.count(), 1);
    }

    void undoRedo()
    {
        auto* s = m_window->controls()->slider(QStringLiteral("training.micro_batch"));
        for (int b : {2, 4, 8})
            typeInto(s->edit(), QString::number(b));
        m_controller->set(QStringLiteral("cluster.gpus"), 16);
        m_controller->recomputeNow();
        auto* undo = m_controller->undoStack();
        QCOMPARE(undo->count(), 2); // edits of one field merge into one step
        undo->undo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().cluster.gpus, std::int64_t(64));
        QCOMPARE(s->value(), 8.0);
        undo->undo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().training.microBatch, std::int64_t(1));
        QCOMPARE(s->value(), 1.0); // the control follows
        undo->redo();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->scenario().training.microBatch, std::int64_t(8));
    }

    void openSaveRoundTrip()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("run.napkin.json"));
        auto* c = m_window->controls();
        c->combo(QStringLiteral("precision.plan"))
            ->setCurrentIndex(c->combo(QStringLiteral("precision.plan"))->findData(QStringLiteral("megatron")));
        emit c->combo(QStringLiteral("precision.plan"))->activated(0);
        typeInto(c->slider(QStringLiteral("training.seq_len"))->edit(), QStringLiteral("8192"));
        typeInto(c->slider(QStringLiteral("cluster.mfu"))->edit(), QStringLiteral("0.42"));
        c->combo(QStringLiteral("cluster.gpu"))
            ->setCurrentIndex(c->combo(QStringLiteral("cluster.gpu"))->findData(QStringLiteral("b200")));
        emit c->combo(QStringLiteral("cluster.gpu"))->activated(0);
        m_controller->recomputeNow();
        QVERIFY(m_controller->isModified());
        const auto doc = m_controller->document();
        QVERIFY(m_window->saveFile(file));
        QVERIFY(!m_controller->isModified());
        m_controller->newScenario();
        QCOMPARE(m_controller->scenario().cluster.gpuId, std::string("h100-sxm"));
        QVERIFY(m_window->openFile(file));
        QVERIFY(m_controller->document() == doc);
        QCOMPARE(m_controller->scenario().precision.plan, std::string("megatron"));
        QCOMPARE(c->combo(QStringLiteral("cluster.gpu"))->currentData().toString(), QStringLiteral("b200"));
        QCOMPARE(c->slider(QStringLiteral("cluster.mfu"))->value(), 0.42);
        // The file holds only what differs from the defaults, and napkin-cli reads it.
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto saved = nlohmann::json::parse(f.readAll().toStdString());
        QVERIFY(!saved.contains("overhead"));
        QVERIFY(saved["training"]["seq_len"] == 8192);
    }

    void openSaveRoundTripsEveryControl()
    {
        // Move every control off its default (a valid combination), save, start over, open: each
        // control shows its value again and the document is the same.
        auto* c = m_window->controls();
        const QList<QPair<QString, QString>> sliders{
            {QStringLiteral("training.tokens"), QStringLiteral("3T")},
            {QStringLiteral("training.seq_len"), QStringLiteral("2048")},
            {QStringLiteral("training.micro_batch"), QStringLiteral("2")},
            {QStringLiteral("training.global_batch"), QStringLiteral("512")},
            {QStringLiteral("cluster.gpus"), QStringLiteral("128")},
            {QStringLiteral("cluster.mfu"), QStringLiteral("0.45")},
            {QStringLiteral("cluster.price_per_gpu_hour"), QStringLiteral("3.1")},
            {QStringLiteral("parallel.tp"), QStringLiteral("2")},
            {QStringLiteral("parallel.pp"), QStringLiteral("2")},
            {QStringLiteral("parallel.cp"), QStringLiteral("2")}};
        for (const auto& [path, text] : sliders) {
            QVERIFY2(c->slider(path), qPrintable(path));
            typeInto(c->slider(path)->edit(), text);
        }
        const QList<QPair<QString, QString>> combos{
            {QStringLiteral("training.recompute"), QStringLiteral("selective")},
            {QStringLiteral("precision.plan"), QStringLiteral("bf16-mixed-master")},
            {QStringLiteral("precision.activations"), QStringLiteral("fp16")},
            {QStringLiteral("optimizer.name"), QStringLiteral("lion")},
            {QStringLiteral("cluster.gpu"), QStringLiteral("h200-sxm")},
            {QStringLiteral("parallel.zero"), QStringLiteral("2")},
            {QStringLiteral("flops.convention"), QStringLiteral("megatron")}};
        for (const auto& [path, id] : combos) {
            auto* box = c->combo(path);
            QVERIFY2(box, qPrintable(path));
            box->setCurrentIndex(box->findData(id));
            QVERIFY2(box->currentIndex() >= 0, qPrintable(path));
            emit box->activated(box->currentIndex());
        }
        c->flashCheck()->setChecked(false);
        // Step time: predicted mode, 25 GB/s between nodes, DP traffic not overlapped.
        auto* stepTime = m_window->findChild<app::StepTimeControls*>();
        QVERIFY(stepTime);
        stepTime->modeCombo()->setCurrentIndex(stepTime->modeCombo()->findData(QStringLiteral("predicted")));
        emit stepTime->modeCombo()->activated(stepTime->modeCombo()->currentIndex());
        stepTime->interNodeBox()->setValue(25);
        stepTime->overlapCheck()->setChecked(false);
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        QCOMPARE(m_controller->scenario().stepTime.interNodeBandwidth, 25e9);
        const auto doc = m_controller->document();
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("all.napkin.json"));
        QVERIFY(m_window->saveFile(file));
        m_controller->newScenario();
        QVERIFY(m_controller->document() != doc);
        QVERIFY(m_window->openFile(file));
        QVERIFY(m_controller->document() == doc);
        for (const auto& [path, text] : sliders)
            QCOMPARE(c->slider(path)->value(), core::parseQuantity(text.toStdString()).value());
        for (const auto& [path, id] : combos)
            QCOMPARE(c->combo(path)->currentData().toString(), id);
        QVERIFY(!c->flashCheck()->isChecked());
        QCOMPARE(stepTime->modeCombo()->currentData().toString(), QStringLiteral("predicted"));
        QCOMPARE(stepTime->interNodeBox()->value(), 25.0);
        QVERIFY(!stepTime->overlapCheck()->isChecked());
        QCOMPARE(m_controller->plan().time.mode, "predicted");
    }

    void quantityStringsShowWhatThePlanUses()
    {
        // issue 13: a file with quantity strings showed the defaults in the boxes while the panels
        // computed with the file's values. Every control must show what the loaded plan uses.
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("strings.napkin.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"training": {"tokens": "15T", "seq_len": "8Ki", "global_batch": "2k", "micro_batch": "2",
                    "recompute": "full", "checkpoint_every": "4"},
                    "cluster": {"gpus": "1,024", "mfu": "0.45", "price_per_gpu_hour": "2.25"},
                    "parallel": {"tp": "8", "pp": "2"},
                    "step_time": {"inter_node_bandwidth": "25G"}})");
        f.close();
        QVERIFY(m_window->openFile(file));
        QVERIFY2(!m_controller->hasErrors(),
                 m_controller->hasErrors() ? core::describe(m_controller->errors().front()).c_str() : "");
        const auto& sc = m_controller->scenario();
        auto* c = m_window->findChild<app::ControlsPanel*>();
        QVERIFY(c);
        QCOMPARE(sc.training.tokens, 15e12);
        QCOMPARE(c->slider(QStringLiteral("training.tokens"))->value(), sc.training.tokens);
        QCOMPARE(c->slider(QStringLiteral("training.seq_len"))->value(), double(sc.training.seqLen));
        QCOMPARE(c->slider(QStringLiteral("training.seq_len"))->value(), 8192.0);
        QCOMPARE(c->slider(QStringLiteral("training.global_batch"))->value(), double(sc.training.globalBatch));
        QCOMPARE(c->slider(QStringLiteral("training.micro_batch"))->value(), double(sc.training.microBatch));
        QCOMPARE(c->slider(QStringLiteral("cluster.gpus"))->value(), 1024.0);
        QCOMPARE(c->slider(QStringLiteral("cluster.mfu"))->value(), sc.cluster.mfu);
        QCOMPARE(c->slider(QStringLiteral("cluster.price_per_gpu_hour"))->value(), sc.cluster.pricePerGpuHour);
        QCOMPARE(c->slider(QStringLiteral("parallel.tp"))->value(), double(sc.parallel.tp));
        QCOMPARE(c->slider(QStringLiteral("parallel.pp"))->value(), double(sc.parallel.pp));
        auto* stepTime = m_window->findChild<app::StepTimeControls*>();
        QCOMPARE(stepTime->interNodeBox()->value(), sc.stepTime.interNodeBandwidth / 1e9);
        // Every slider against the parsed scenario value of its path, read back from the document
        // the way the core reads it.
        const auto& doc = m_controller->document();
        for (const char* path :
             {"training.tokens", "training.seq_len", "training.global_batch", "training.micro_batch", "cluster.gpus",
              "cluster.mfu", "cluster.price_per_gpu_hour", "parallel.tp", "parallel.pp"}) {
            const auto dot = std::string_view(path).find('.');
            const auto& v = doc[std::string(path, dot)][std::string(path + dot + 1)];
            QCOMPARE(c->slider(QString::fromLatin1(path))->value(), core::jsonQuantity(v).value());
        }
    }

    void openRejectsInvalidFileAndKeepsScenario()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("bad.napkin.json"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"cluster": {"gpus": -3}})");
        f.close();
        QString error;
        QVERIFY(!m_controller->open(file, &error));
        QVERIFY(error.contains(QStringLiteral("cluster.gpus")));
        QCOMPARE(m_controller->scenario().cluster.gpus, std::int64_t(64));
    }

    void hfImportByFileAndDrop()
    {
        const QString cfg = QStringLiteral(NAPKIN_TEST_DATA "/hf/qwen2.5-7b.json");
        QString error;
        QVERIFY2(m_controller->importHfConfig(cfg, &error), qPrintable(error));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 7615616512.0);
        // Drop a config.json onto the window.
        const QString mistral = QStringLiteral(NAPKIN_TEST_DATA "/hf/mistral-7b.json");
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(mistral)});
        QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        // QApplication::notify only delivers drops that come from a drag in progress; hand the
        // event to the window's event() as the drag machinery would.
        QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        static_cast<QObject*>(m_window)->event(&enter);
        QVERIFY(enter.isAccepted());
        static_cast<QObject*>(m_window)->event(&drop);
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 7241732096.0);
        // A broken config is refused with the field named, and nothing changes.
        QVERIFY(
            !m_controller->importHfConfig(QStringLiteral(NAPKIN_TEST_DATA "/hf/llama_no_hidden_size.json"), &error));
        QVERIFY(error.contains(QStringLiteral("hidden_size")));
        QCOMPARE(m_controller->plan().params.total, 7241732096.0);
    }

    void seedPresets()
    {
        m_window->applySeedPreset(0);
        m_controller->recomputeNow();
        QVERIFY(std::abs(m_controller->plan().time.days - 143.9) < 0.1);
        m_window->applySeedPreset(2);
        m_controller->recomputeNow();
        const auto& m = m_controller->plan().memory;
        QCOMPARE(m.weights, 14e9);
        QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates, 84e9);
        m_window->applySeedPreset(3);
        m_controller->recomputeNow();
        const auto& t = m_controller->plan().memory;
        QCOMPARE(t.weights + t.gradients + t.masterWeights + t.optimizerStates + t.activations, 496.0);
    }

    void summaryShowsDerivationOnClick()
    {
        QSignalSpy spy(m_controller, &PlanController::derivationRequested);
        m_controller->showDerivation(QStringLiteral("time.days"));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(m_controller->selectedQuantity(), QStringLiteral("time.days"));
        QVERIFY(!m_window->summary()->text(QStringLiteral("time.days")).isEmpty());
    }

    void exportReportAndCharts()
    {
        QTemporaryDir dir;
        for (const char* ext : {"pdf", "html", "md", "csv", "json"}) {
            const QString f = dir.filePath(QStringLiteral("report.") + QLatin1String(ext));
            QCOMPARE(m_window->exportReport(f, false, QStringLiteral("Test")), QString());
            QVERIFY2(QFileInfo(f).size() > 100, ext);
        }
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("report-ledger.png"))));
        QVERIFY(!m_window->exportReport(dir.filePath(QStringLiteral("report.docx")), false, {}).isEmpty());
        for (const char* ext : {"png", "svg", "pdf"}) {
            const QString f = dir.filePath(QStringLiteral("chart.") + QLatin1String(ext));
            QCOMPARE(
                napkin::charts::saveChart(m_window->roofline()->plot(), f, QSize(600, 400), QStringLiteral("Roofline")),
                QString());
            QVERIFY(QFileInfo(f).size() > 100);
        }
        QImage png(dir.filePath(QStringLiteral("chart.png")));
        QCOMPARE(png.size(), QSize(1200, 800)); // 2x for sharp text
    }

    void autosaveRecoversUnsavedWork()
    {
        QStandardPaths::setTestModeEnabled(true); // autosave under ~/.qttest, not the user's data
        QFile::remove(PlanController::autosaveFile());
        m_controller->set(QStringLiteral("cluster.gpus"), 256);
        m_controller->recomputeNow();
        QVERIFY(m_controller->autosaveNow());
        QVERIFY(QFileInfo::exists(PlanController::autosaveFile()));
        const auto doc = m_controller->document();
        // A new session after a kill: the work comes back, marked unsaved.
        PlanController next;
        MainWindow window(&next);
        QVERIFY(window.restoreSession());
        QVERIFY(next.document() == doc);
        QVERIFY(next.isModified());
        QCOMPARE(next.scenario().cluster.gpus, std::int64_t(256));
        // Saving clears the autosave.
        QTemporaryDir dir;
        QVERIFY(window.saveFile(dir.filePath(QStringLiteral("r.napkin.json"))));
        QVERIFY(!QFileInfo::exists(PlanController::autosaveFile()));
    }

    void saveToUnwritablePathKeepsEverything()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("keep.napkin.json"));
        QVERIFY(m_controller->save(file, nullptr));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        m_controller->set(QStringLiteral("cluster.gpus"), 8);
        // A path under a regular file cannot be created (ENOTDIR), even for root.
        QString error;
        QVERIFY(!m_controller->save(file + QStringLiteral("/inside.napkin.json"), &error));
        QVERIFY(error.contains(QStringLiteral("inside.napkin.json")));
        QVERIFY(m_controller->isModified()); // nothing was lost: still unsaved
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    void architectureFields()
    {
        // Tying Llama 2 7B's embeddings removes the separate output layer: V · d = 32000 · 4096.
        auto* tied = m_window->controls()->combo(QStringLiteral("model.tied_embeddings"));
        QVERIFY(tied);
        tied->setCurrentIndex(tied->findData(QStringLiteral("true")));
        emit tied->activated(tied->currentIndex());
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 6738415616.0 - 32000.0 * 4096);
        // q/k/v biases add (H + 2 KV) · hd = 3 · 4096 per layer.
        auto* biases = m_window->controls()->combo(QStringLiteral("model.biases"));
        biases->setCurrentIndex(biases->findData(QStringLiteral("qkv")));
        emit biases->activated(biases->currentIndex());
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 6738415616.0 - 32000.0 * 4096 + 32.0 * 3 * 4096);
        // On a bare parameter count, an architecture field turns it into a custom transformer.
        m_controller->set(QStringLiteral("model.params"), 7e9);
        m_controller->recomputeNow();
        auto* norm = m_window->controls()->combo(QStringLiteral("model.norm"));
        norm->setCurrentIndex(norm->findData(QStringLiteral("layernorm")));
        emit norm->activated(norm->currentIndex());
        m_controller->recomputeNow();
        QVERIFY(!m_controller->hasErrors());
        QCOMPARE(m_controller->scenario().model.kind, core::ModelKind::Transformer);
        QCOMPARE(m_controller->scenario().model.shape.norm, core::NormKind::LayerNorm);
    }

    void expertsSliderMakesAMixture()
    {
        // Llama 2 7B given 8 experts: top 2 of 8 experts of its own FFN width (11008) on every layer.
        // Per layer the MLP's 3 · 4096 · 11008 becomes 8 of them plus a 4096 · 8 router; active: 2.
        auto* experts = m_window->controls()->slider(QStringLiteral("model.moe.experts"));
        QVERIFY(experts);
        emit experts->valueEdited(8);
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(), "experts slider left an invalid scenario");
        const double mlp = 3.0 * 4096 * 11008, router = 4096.0 * 8;
        QCOMPARE(m_controller->scenario().model.shape.moe.topK, std::int64_t(2));
        QCOMPARE(m_controller->plan().params.total, 6738415616.0 + 32 * (7 * mlp + router));
        QCOMPARE(m_controller->plan().params.active, 6738415616.0 + 32 * (mlp + router));
        // Back to 0 experts: the dense model's count again.
        emit experts->valueEdited(0);
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 6738415616.0);
    }

    void latentAttentionFields()
    {
        // Llama 2 7B switched to latent attention starts from DeepSeek-V3's sizes (q rank 1536, kv rank
        // 512, 128 + 64 / 128 per head). Per layer (32 heads, d 4096): q 4096 · 1536 + 1536 (norm) +
        // 1536 · 32 · 192 = 15,730,176; kv 4096 · (512 + 64) + 512 + 512 · 32 · 256 = 6,554,112; out
        // 32 · 128 · 4096 = 16,777,216: 39,061,504 against MHA's 4 · 4096² = 67,108,864.
        auto* attention = m_window->controls()->combo(QStringLiteral("model.attention"));
        QVERIFY(attention);
        auto* kvRank = m_window->controls()->slider(QStringLiteral("model.kv_lora_rank"));
        QVERIFY(kvRank);
        // The collapsed Architecture group disables its whole body: ask each slider about itself.
        auto enabled = [](QWidget* w) { return w->isEnabledTo(w->parentWidget()); };
        QVERIFY(!enabled(kvRank));
        attention->setCurrentIndex(attention->findData(QStringLiteral("mla")));
        emit attention->activated(attention->currentIndex());
        m_controller->recomputeNow();
        QVERIFY2(!m_controller->hasErrors(), "latent attention left an invalid scenario");
        const double perLayer =
            4096.0 * 1536 + 1536 + 1536.0 * 32 * 192 + 4096.0 * 576 + 512 + 512.0 * 32 * 256 + 32.0 * 128 * 4096;
        QCOMPARE(m_controller->plan().params.total, 6738415616.0 - 32 * (4 * 4096.0 * 4096 - perLayer));
        QVERIFY(enabled(kvRank));
        QVERIFY(!enabled(m_window->controls()->slider(QStringLiteral("model.kv_heads"))));
        // A smaller latent: kv 256 saves 4096 · 256 + 256 + 256 · 32 · 256 per layer.
        emit kvRank->valueEdited(256);
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total,
                 6738415616.0 - 32 * (4 * 4096.0 * 4096 - perLayer) - 32 * (4096.0 * 256 + 256 + 256.0 * 32 * 256));
        // Back to multi-head attention: Llama 2 7B again.
        attention->setCurrentIndex(attention->findData(QStringLiteral("mha")));
        emit attention->activated(attention->currentIndex());
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().params.total, 6738415616.0);
        QVERIFY(!enabled(kvRank));
    }

    void dtypeExplorer()
    {
        napkin::app::DtypeDialog d;
        d.setValueText(QStringLiteral("1e-8"));
        auto* t = d.table();
        QCOMPARE(t->rowCount(), 7);
        QCOMPARE(t->item(1, 0)->text(), QStringLiteral("fp16"));
        QCOMPARE(t->item(1, 2)->text(), QStringLiteral("0")); // 1e-8 underflows in fp16
        QVERIFY(t->item(1, 5)->text().contains(QStringLiteral("underflow")));
        QVERIFY(t->item(2, 2)->text().toDouble() > 0); // and survives in bf16
        d.setValueText(QStringLiteral("1.001"));
        QCOMPARE(t->item(2, 2)->text(), QStringLiteral("1")); // bf16: 1 + 0.001 is 1
        QCOMPARE(t->item(0, 1)->text(), QStringLiteral("0 | 01111111 | 00000000010000011000101"));
        d.setValueText(QStringLiteral("lots"));
        QVERIFY(!d.errorText().isEmpty());
        QCOMPARE(t->item(2, 2)->text(), QStringLiteral("1")); // the last table stays
    }

    void unitsToggle()
    {
        QCOMPARE(m_controller->formatBytes(80e9), QStringLiteral("80.00 GB"));
        m_controller->setUnits(PlanController::Units::GiB);
        QCOMPARE(m_controller->formatBytes(80e9), QStringLiteral("74.51 GiB"));
        QVERIFY(
            m_window->ledgerModel()->index(Total, LedgerModel::Size).data().toString().endsWith(QStringLiteral("GiB")));
    }

private:
    PlanController* m_controller = nullptr;
    MainWindow* m_window = nullptr;
};

QTEST_MAIN(TestApp)
#include "tst_app.moc"
