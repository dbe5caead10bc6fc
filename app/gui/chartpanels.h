// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The window's charts are napkin_charts widgets that follow the PlanController: they redraw when the
// plan or the units change, and a click on a number opens its derivation.

#include "chartwidget.h"

namespace napkin::app {

class PlanController;

// Sets the controller's current plan on `chart` now and whenever it or the units change; connects
// the chart's derivation requests to the controller. Returns `chart`.
template <class Chart>
Chart* followPlan(Chart* chart, PlanController* controller);

void connectChart(charts::ChartWidget* chart, PlanController* controller);

template <class Chart>
Chart* followPlan(Chart* chart, PlanController* controller)
{
    connectChart(chart, controller);
    return chart;
}

} // namespace napkin::app
