// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Tools > Calibrate this GPU with a fake napkin-probe (NAPKIN_PROBE): a good run streams progress and
// ends with its profile saved and selected (measured values in the plan, the roofline and the
// table); a crash, a hang (short timeout), garbage, a refusal (no_driver, exit 3), Cancel and a
// missing probe each give a clear message and leave the plan as it was.
#include "calibrationdialog.h"
#include "calibrationrunner.h"
#include "catalog.h"
#include "controlspanel.h"
#include "mainwindow.h"
#include "plancontroller.h"
#include "rooflinechart.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace napkin;
using app::CalibrationRunner;
using Outcome = app::CalibrationRunner::Outcome;

namespace {
const QString kGoodProfile = QStringLiteral(NAPKIN_TEST_DATA "/calibration/good_h100.json");
}

class TestCalibrationApp : public QObject {
    Q_OBJECT
private:
    app::PlanController* m_controller = nullptr;
    app::MainWindow* m_window = nullptr;

    // Runs the fake probe in `mode` through the dialog; returns the runner's outcome.
    Outcome run(const char* mode, int timeoutMs = 10000)
    {
        qputenv("FAKE_PROBE_MODE", mode);
        auto* dialog = m_window->openCalibration();
        dialog->runner()->setTimeout(timeoutMs);
        QSignalSpy done(dialog->runner(), &CalibrationRunner::finished);
        dialog->startCalibration();
        if (done.isEmpty())
            [&] { QVERIFY(done.wait(15000)); }();
        return dialog->runner()->outcome();
    }

    QStringList storedFiles() const
    {
        return QDir(CalibrationRunner::profileDir()).entryList({QStringLiteral("*.json")}, QDir::Files);
    }

    void verifyPlanUnchanged()
    {
        m_controller->recomputeNow();
        QCOMPARE(m_controller->document()["cluster"]["gpu"].get<std::string>(), std::string("h100-sxm"));
        QCOMPARE(m_controller->plan().hardware.bandwidth, 3.35e12); // H100 SXM sheet
        QCOMPARE(m_controller->plan().hardware.peakFlops, 989.5e12);
        QVERIFY(!m_controller->hasErrors());
        QVERIFY(storedFiles().isEmpty());
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // profiles under ~/.qttest, not the user's data
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        QCoreApplication::setApplicationName(QStringLiteral("napkin-calibration-test"));
    }
    void init()
    {
        QDir(CalibrationRunner::profileDir()).removeRecursively();
        qputenv("NAPKIN_PROBE", FAKE_PROBE_PATH);
        qputenv("FAKE_PROBE_PROFILE", kGoodProfile.toUtf8());
        m_controller = new app::PlanController;
        m_window = new app::MainWindow(m_controller);
        m_controller->recomputeNow();
    }
    void cleanup()
    {
        delete m_window;
        delete m_controller;
        QDir(CalibrationRunner::profileDir()).removeRecursively();
    }

    void goodProfileIsSavedAndSelected()
    {
        auto* dialog = m_window->openCalibration();
        QSignalSpy progress(dialog->runner(), &CalibrationRunner::progress);
        QCOMPARE(run("good"), Outcome::Saved);
        // Progress from the probe's stderr JSON lines: 0 (start), 0, 0.25, 0.5, 0.75, 1.
        QVERIFY2(progress.size() >= 5, qPrintable(QString::number(progress.size())));
        QCOMPARE(progress.last().at(0).toDouble(), 1.0);
        QCOMPARE(dialog->progressBar()->value(), 1000);

        const QString saved = dialog->runner()->savedPath();
        QVERIFY(saved.startsWith(CalibrationRunner::profileDir() + u'/'));
        QVERIFY(QFile::exists(saved));
        QCOMPARE(storedFiles().size(), 1);
        QVERIFY2(dialog->messageText().contains(QStringLiteral("NVIDIA H100 80GB HBM3 (measured)")),
                 qPrintable(dialog->messageText()));

        // Selected: the plan uses the hand-set measured values (hbm_triad 2.93e12 B/s, gemm_bf16 7.9e14).
        const std::string id = "calibration:" + saved.toStdString();
        QCOMPARE(m_controller->document()["cluster"]["gpu"].get<std::string>(), id);
        QCOMPARE(m_controller->plan().hardware.achievableBandwidth, 2.93e12);
        QCOMPARE(m_controller->plan().hardware.achievableFlops, 7.9e14);
        QCOMPARE(m_controller->plan().hardware.gpu->origin, std::string("measured"));
        auto* gpuCombo = m_window->controls()->combo(QStringLiteral("cluster.gpu"));
        QCOMPARE(gpuCombo->currentData().toString(), QString::fromStdString(id));
        QVERIFY(gpuCombo->currentText().contains(QStringLiteral("(measured)")));

        // The table: measured vs spec with the achieved share (bf16 790 / 989.5 = 79.8%).
        QTableWidget* table = dialog->table();
        QCOMPARE(table->rowCount(), 10);
        bool found = false;
        for (int r = 0; r < table->rowCount(); ++r)
            if (table->item(r, 0)->text().startsWith(QStringLiteral("dense bf16 peak"))) {
                found = true;
                QCOMPARE(table->item(r, 1)->text(), QStringLiteral("790 TFLOP/s"));
                QCOMPARE(table->item(r, 2)->text(), QStringLiteral("989.5 TFLOP/s"));
                QCOMPARE(table->item(r, 3)->text(), QStringLiteral("79.8%"));
            }
        QVERIFY(found);
        // The roofline draws the profile's 14 measured points (7 M-sweep, 5 intensity, 2 elementwise).
        QCOMPARE(m_window->roofline()->measuredPointCount(), 14);

        // A new window lists the stored profile after the catalogue.
        const auto stored = CalibrationRunner::storedProfiles();
        QCOMPARE(stored.size(), 1);
        QCOMPARE(stored.front().path, saved);
    }

    void failuresKeepThePlan_data()
    {
        QTest::addColumn<QByteArray>("mode");
        QTest::addColumn<int>("timeoutMs");
        QTest::addColumn<int>("outcome");
        QTest::addColumn<QString>("message");
        QTest::newRow("crash") << QByteArray("crash") << 10000 << int(Outcome::Crashed)
                               << QStringLiteral("napkin-probe crashed");
        QTest::newRow("garbage") << QByteArray("garbage") << 10000 << int(Outcome::Garbage)
                                 << QStringLiteral("printed no valid profile: profile: invalid JSON");
        QTest::newRow("no_driver, exit 3")
            << QByteArray("no_driver") << 10000 << int(Outcome::Refused)
            << QStringLiteral("The probe did not measure (no_driver): No NVIDIA driver found");
        QTest::newRow("hang, timeout") << QByteArray("hang") << 700 << int(Outcome::TimedOut)
                                       << QStringLiteral("did not finish within 0.7 s and was stopped");
    }
    void failuresKeepThePlan()
    {
        QFETCH(QByteArray, mode);
        QFETCH(int, timeoutMs);
        QFETCH(int, outcome);
        QFETCH(QString, message);
        QCOMPARE(int(run(mode.constData(), timeoutMs)), outcome);
        auto* dialog = m_window->openCalibration();
        QVERIFY2(dialog->messageText().contains(message), qPrintable(dialog->messageText()));
        QVERIFY2(dialog->messageText().contains(QStringLiteral("The current plan is unchanged")),
                 qPrintable(dialog->messageText()));
        verifyPlanUnchanged();
        QVERIFY(dialog->calibrateButton()->isEnabled());
        QVERIFY(!dialog->cancelButton()->isEnabled());
    }

    // The probe runs out of process: while it hangs, the event loop runs, the progress bar shows its
    // last line (step 1 of 4) and an edit made meanwhile is planned.
    void windowStaysResponsive()
    {
        int progressSeen = -1;
        double microBatchPlanned = 0;
        QTimer::singleShot(300, m_controller, [&] {
            progressSeen = m_window->openCalibration()->progressBar()->value();
            m_controller->set(QStringLiteral("training.micro_batch"), 2);
            m_controller->recomputeNow();
            microBatchPlanned = double(m_controller->scenario().training.microBatch);
        });
        QCOMPARE(run("hang", 1500), Outcome::TimedOut);
        QCOMPARE(progressSeen, 250);
        QCOMPARE(microBatchPlanned, 2.0);
        QCOMPARE(m_controller->document()["training"]["micro_batch"].get<int>(), 2);
        verifyPlanUnchanged();
    }

    void cancel()
    {
        qputenv("FAKE_PROBE_MODE", "slow");
        auto* dialog = m_window->openCalibration();
        QSignalSpy progress(dialog->runner(), &CalibrationRunner::progress);
        QSignalSpy done(dialog->runner(), &CalibrationRunner::finished);
        dialog->startCalibration();
        QVERIFY(dialog->cancelButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(progress.size() >= 3, 10000); // the probe's own lines, not just "starting"
        QTest::mouseClick(dialog->cancelButton(), Qt::LeftButton);
        QVERIFY(done.wait(10000));
        QCOMPARE(dialog->runner()->outcome(), Outcome::Cancelled);
        QVERIFY(dialog->messageText().startsWith(QStringLiteral("Calibration cancelled")));
        verifyPlanUnchanged();
    }

    void missingProbe()
    {
        qputenv("NAPKIN_PROBE", "/nonexistent/napkin-probe");
        QCOMPARE(run("good"), Outcome::NotFound);
        QVERIFY2(m_window->openCalibration()->messageText().contains(QStringLiteral("could not be started")),
                 qPrintable(m_window->openCalibration()->messageText()));
        verifyPlanUnchanged();
    }

    // After a good run, a failing one keeps the measured plan (the last good state).
    void failureAfterSuccessKeepsTheProfile()
    {
        QCOMPARE(run("good"), Outcome::Saved);
        const auto gpu = m_controller->document()["cluster"]["gpu"];
        QCOMPARE(run("crash"), Outcome::Crashed);
        QVERIFY(m_controller->document()["cluster"]["gpu"] == gpu);
        QCOMPARE(m_controller->plan().hardware.achievableFlops, 7.9e14);
        QCOMPARE(storedFiles().size(), 1);
    }

    void profileIsReadOncePerChange()
    {
        // The controller caches the profile's text: a recompute does not re-read it, an edited file is
        // read again (size or time stamp), and a deleted one is an error on cluster.gpu.
        QTemporaryDir tmp;
        const QString file = tmp.filePath(QStringLiteral("p.json"));
        QVERIFY(QFile::copy(kGoodProfile, file));
        auto doc = m_controller->document();
        doc["cluster"]["gpu"] = "calibration:" + file.toStdString();
        m_controller->setDocument(doc, QStringLiteral("profile"));
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().hardware.achievableBandwidth, 2.93e12);
        // Scale every HBM result (best, median, samples) by 0.8 and write the file back.
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        auto json = nlohmann::json::parse(f.readAll().toStdString());
        f.close();
        for (auto& r : json["devices"][0]["results"])
            if (r["id"].get<std::string>().rfind("hbm_", 0) == 0) {
                r["best"] = r["best"].get<double>() * 0.8;
                r["median"] = r["median"].get<double>() * 0.8;
                for (auto& x : r["samples"])
                    x = x.get<double>() * 0.8;
            }
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QByteArray::fromStdString(json.dump(2) + "\n\n")); // another size: seen within one time-stamp tick
        f.close();
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().hardware.achievableBandwidth, 2.93e12 * 0.8);
        QVERIFY(QFile::remove(file));
        m_controller->recomputeNow();
        QVERIFY(m_controller->hasErrors());
        QCOMPARE(m_controller->errors().front().field, std::string("cluster.gpu"));
    }

    void chooserListsStoredProfiles()
    {
        QVERIFY(QDir().mkpath(CalibrationRunner::profileDir()));
        const QString file = CalibrationRunner::profileDir() + QStringLiteral("/lab-h100.json");
        QVERIFY(QFile::copy(kGoodProfile, file));
        QFile bad(CalibrationRunner::profileDir() + QStringLiteral("/broken.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly) && bad.write("{\"schema\":") > 0);
        bad.close();
        app::MainWindow window(m_controller);
        auto* combo = window.controls()->combo(QStringLiteral("cluster.gpu"));
        const int index = combo->findData(QStringLiteral("calibration:") + file);
        QVERIFY(index >= int(core::builtinCatalog().gpus.size())); // after the catalogue
        QCOMPARE(combo->itemText(index), QStringLiteral("NVIDIA H100 80GB HBM3 (measured) · lab-h100"));
        QCOMPARE(combo->findText(QStringLiteral("broken"), Qt::MatchContains), -1); // invalid files are not listed
        combo->setCurrentIndex(index);
        emit combo->activated(index);
        m_controller->recomputeNow();
        QCOMPARE(m_controller->plan().hardware.achievableBandwidth, 2.93e12);
    }
};

QTEST_MAIN(TestCalibrationApp)
#include "tst_calibration_app.moc"
