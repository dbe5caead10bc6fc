// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// memory.timeline as a chart: the most loaded GPU's allocated bytes through one optimizer step,
// stacked as model states, saved activations, temporaries and the runtime's own, against the GPU's
// capacity and the reported peak (allocated + the caching allocator's reserve).

#include "chartwidget.h"

class QCustomPlot;
class QCPItemText;
class QLabel;

namespace napkin::charts {

class TimelineChart : public ChartWidget {
    Q_OBJECT
public:
    static constexpr int LayerCount = 4; // runtime, states, activations, temporaries (bottom up)

    explicit TimelineChart(QWidget* parent = nullptr);

    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }
    // For tests: the plotted points (fraction of the step, allocated bytes) and the headline.
    int pointCount() const;
    double peakAllocated() const;
    QString headline() const;

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void updateColors();
    void redraw();
    void catchUp() const;

    QLabel* m_headline = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPItemText* m_peakLabel = nullptr;
    double m_peak = 0;
    bool m_stale = false; // a plan arrived while the tab was hidden: redraw when shown
    bool m_drawnOnce = false;
};

} // namespace napkin::charts
