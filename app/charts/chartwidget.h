// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What every plan chart shares: the plan it draws, the scenario it came from and the units sizes are
// shown in. Charts hold no domain state of their own and know nothing of the window: the app's panels
// call setPlan() when the plan changes, reports call it once. They draw with the shared style
// (chartstyle.h) and turn a click on a number into derivationRequested().

#include "chartunits.h"
#include "plan.h"
#include "scenario.h"

#include <QString>
#include <QWidget>

namespace napkin::charts {

class ChartWidget : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;

    // Draws `plan`, made from `scenario`. The chart keeps references: both must outlive it or the next
    // call (the app's PlanController owns them for the window, a report for its pages).
    void setPlan(const core::Scenario& scenario, const core::Plan& plan, Units units);
    bool hasPlan() const { return m_plan != nullptr; }

    // Redraws from the last plan (a no-op before the first).
    virtual void updateGraphs() = 0;

signals:
    // The user clicked a number: the plan JSON path of its derivation ("time.days").
    void derivationRequested(const QString& quantity);

protected:
    // Called by setPlan(): redraws; a chart that can tell an unchanged picture overrides it.
    virtual void onPlanSet() { updateGraphs(); }
    const core::Plan& currentPlan() const { return *m_plan; }
    const core::Scenario& currentScenario() const { return *m_scenario; }
    Units units() const { return m_units; }
    QString formatBytes(double bytes) const { return charts::formatBytes(bytes, m_units); }

private:
    const core::Scenario* m_scenario = nullptr;
    const core::Plan* m_plan = nullptr;
    Units m_units = Units::GB;
};

} // namespace napkin::charts
