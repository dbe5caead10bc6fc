// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Help > How accurate is this? (app/gui/accuracydialog.h): the validation summary, the runs most like
// the scenario (a validated run's own scenario finds itself first) and the chart's rows and highlights.
#include "accuracydialog.h"
#include "catalog.h"
#include "mainwindow.h"
#include "plancontroller.h"
#include "validationchart.h"

#include <QTableWidget>
#include <QTest>

using namespace napkin;

class TestAccuracyApp : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest")); }

    void validatedRunFindsItself()
    {
        app::PlanController controller;
        const auto& c = core::builtinValidationSet().front();
        auto doc = core::mergeScenario(core::defaultScenarioJson(), c.scenario);
        doc["step_time"]["mode"] = "predicted";
        if (!c.convention.empty())
            doc["flops"]["convention"] = c.convention;
        controller.setDocument(doc, QStringLiteral("validated run"));
        controller.recomputeNow();
        app::MainWindow window(&controller);
        auto* d = window.openAccuracy();
        QVERIFY(d);
        const int n = int(core::builtinValidationSet().size());
        QVERIFY(d->summaryText().contains(QStringLiteral("against %1 published training runs").arg(n)));
        QCOMPARE(d->closestTable()->rowCount(), 5);
        QCOMPARE(d->closestTable()->item(0, 0)->text(), QString::fromStdString(c.id));
        QVERIFY(d->scenarioText().contains(QStringLiteral("5 most similar")));
        QCOMPARE(d->allTable()->rowCount(), n);
        QCOMPARE(d->chart()->highlightedCount(), 5);
        QCOMPARE(d->chart()->rows().front(), QString::fromStdString(c.id));
        // A second open is the same dialog, refreshed for the scenario now.
        controller.set(QStringLiteral("cluster.gpu"), "a100-sxm4-80gb");
        controller.recomputeNow();
        QCOMPARE(window.openAccuracy(), d);
        QVERIFY(d->closestTable()->item(0, 1)->text().contains(QStringLiteral("A100")));
        if (const QByteArray dir = qgetenv("NAPKIN_SHOT_DIR"); !dir.isEmpty()) {
            d->resize(980, 900);
            d->chart()->resize(960, 800);
            d->chart()->grab().save(QString::fromUtf8(dir) + QStringLiteral("/accuracy-chart.png"));
        }
    }
};

QTEST_MAIN(TestAccuracyApp)
#include "tst_accuracy_app.moc"
