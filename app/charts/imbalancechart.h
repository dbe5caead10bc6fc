// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Routing imbalance of a mixture of experts with expert parallelism (core/moe_sweep.h): the
// predicted step time (bars) and the per-GPU memory (line, with the GPU's capacity) at an imbalance
// of 1.0, 1.2, 1.5 and the worst case, each a full re-plan of the scenario. Empty, with a line that
// says when it applies, for dense models and ep = 1.

#include "chartwidget.h"

#include <QVector>

class QCustomPlot;
class QCPBars;
class QCPGraph;
class QLabel;

namespace napkin::charts {

class ImbalanceChart : public ChartWidget {
    Q_OBJECT
public:
    explicit ImbalanceChart(QWidget* parent = nullptr);

    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }

    // For tests: the plotted points (seconds, bytes), their labels and the headline.
    QVector<double> stepSeconds() const { return m_step; }
    QVector<double> memoryBytes() const { return m_memory; }
    QStringList labels() const { return m_labels; }
    QString headline() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateColors();

    QLabel* m_headline = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPBars* m_bars = nullptr;
    QCPGraph* m_memoryGraph = nullptr;
    QCPGraph* m_capacity = nullptr;
    QVector<double> m_step, m_memory;
    QStringList m_labels;
};

} // namespace napkin::charts
