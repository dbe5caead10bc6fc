// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartpanels.h"

#include "plancontroller.h"

namespace napkin::app {

void connectChart(charts::ChartWidget* chart, PlanController* controller)
{
    const auto redraw = [chart, controller] {
        chart->setPlan(controller->scenario(), controller->plan(), controller->units());
    };
    QObject::connect(controller, &PlanController::planChanged, chart, redraw);
    QObject::connect(controller, &PlanController::unitsChanged, chart, redraw);
    QObject::connect(chart, &charts::ChartWidget::derivationRequested, controller, &PlanController::showDerivation);
    redraw();
}

} // namespace napkin::app
