// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The roofline of the plan's GPU (Williams, Waterman & Patterson 2009) with one point per op of a
// transformer layer, and optionally the seeds' op table (CS336 lecture 2) for comparison.

#include "chartwidget.h"

#include "plan.h"

#include <QPointF>
#include <QVector>

#include <vector>

class QCheckBox;
class QCustomPlot;
class QCPGraph;
class QMouseEvent;

namespace napkin::charts {

class RooflineChart : public ChartWidget {
    Q_OBJECT
public:
    explicit RooflineChart(QWidget* parent = nullptr);
    ~RooflineChart() override;

    // Rebuilds the chart from the plan last set.
    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }

    void setShowSeedOps(bool show);
    bool showSeedOps() const { return m_showSeedOps; }

    // For tests: the points plotted for plan.ops, as (intensity FLOP/byte, attainable FLOP/s),
    // in plan order; and the same for the seeds' overlay (empty while it is hidden).
    int opPointCount() const { return int(m_opPoints.size()); }
    QVector<QPointF> opPoints() const;
    QVector<QPointF> seedOpPoints() const;
    // Measured points of the plan's calibration profile drawn (0 with spec-sheet values).
    int measuredPointCount() const { return m_measuredPointCount; }

protected:
    void changeEvent(QEvent* event) override;

private:
    // A plotted op and where it came from, for the tooltip.
    struct Point {
        core::RooflineOp op;
        bool seed = false;
    };

    void updateColors();
    void showToolTip(QMouseEvent* event);
    QString toolTipText(const Point& p) const;

    void onPlanSet() override;

    std::vector<double> m_drawn; // ceilings and op costs last drawn: skip replots that change nothing
    QCustomPlot* m_plot = nullptr;
    QCheckBox* m_seedBox = nullptr;
    bool m_showSeedOps = false;
    int m_measuredPointCount = 0;
    std::vector<Point> m_opPoints;
    std::vector<Point> m_seedPoints;
};

} // namespace napkin::charts
