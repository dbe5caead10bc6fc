// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The per-GPU memory ledger as one horizontal stacked bar against the GPU's capacity.

#include "chartwidget.h"

#include "buckets.h"

#include <QVector>

#include <array>

class QCustomPlot;
class QCPBars;
class QCPItemStraightLine;
class QCPItemText;
class QMouseEvent;

namespace napkin::charts {

class LedgerChart : public ChartWidget {
    Q_OBJECT
public:
    static constexpr int BucketCount = core::kMemoryBucketCount;

    explicit LedgerChart(QWidget* parent = nullptr);
    ~LedgerChart() override;

    // Rebuilds the chart from the plan and units last set.
    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }

    // For tests: the plotted bucket sizes in bytes, in ledger order (core::kMemoryBuckets).
    QVector<double> bucketValues() const { return m_values; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateColors();
    void fitLegend();
    int legendColumns() const;
    void updateMinimumHeight();
    void updateSegmentLabels();
    void showToolTip(QMouseEvent* event);
    void placeCapacityLabel();
    double unitBytes() const;

    QCustomPlot* m_plot = nullptr;
    std::array<QCPBars*, BucketCount> m_bars{};
    std::array<QCPItemText*, BucketCount> m_segmentLabels{};
    QCPItemStraightLine* m_capacityLine = nullptr;
    QCPItemText* m_capacityLabel = nullptr;
    QCPItemText* m_headroomLabel = nullptr;
    QVector<double> m_values; // bytes
    bool m_fits = true;
    bool m_capacityBesideLine = true; // the line is right of the middle: its label goes left of it
    double m_capacityBytes = 0;       // the GPU's capacity the line marks
};

} // namespace napkin::charts
