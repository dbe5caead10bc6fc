// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The predicted step time (core/steptime.h) as one horizontal stacked bar: compute, recompute, TP,
// CP and PP traffic, the pipeline bubble, exposed DP traffic and the optimizer update, with the
// predicted MFU, tokens/s and the links each parallel group crosses. Shown in both time modes; in
// the MFU mode it is labelled as a prediction the plan does not use.

#include "chartwidget.h"

#include <QVector>

#include <array>

class QCustomPlot;
class QCPBars;
class QCPItemText;
class QLabel;
class QMouseEvent;

namespace napkin::charts {

class StepTimeChart : public ChartWidget {
    Q_OBJECT
public:
    static constexpr int PartCount = 11;

    explicit StepTimeChart(QWidget* parent = nullptr);
    ~StepTimeChart() override;

    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }
    // The rows' labels, bottom to top ("at spec peak" only where the plan times its layout at peak).
    QStringList rowLabels() const;

    // For tests: the plotted seconds in the order compute, recompute, TP, CP, PP, bubble, DP,
    // optimizer, offload, overheads; the headline and the links line.
    QVector<double> partValues() const { return m_values; }
    QString headline() const;
    QString linksText() const;
    static QString partName(int part);

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateColors();
    void updateSegmentLabels();
    void showToolTip(QMouseEvent* event);

    QLabel* m_headline = nullptr;
    QCustomPlot* m_plot = nullptr;
    QLabel* m_links = nullptr;
    std::array<QCPBars*, PartCount> m_bars{};
    std::array<QCPItemText*, PartCount> m_labels{};
    QVector<double> m_values;
};

} // namespace napkin::charts
