// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Memory per pipeline stage: one stacked column a stage (the tensor buckets of the ledger, in its
// colours), the room the GPU leaves for tensors once the runtime's overhead is taken, and the most
// loaded stage marked: the one the ledger describes (core::MemoryLedger::perStage).

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

class StagesChart : public ChartWidget {
    Q_OBJECT
public:
    explicit StagesChart(QWidget* parent = nullptr);
    ~StagesChart() override;

    void updateGraphs() override;
    QCustomPlot* plot() const { return m_plot; }

    // For tests: the plotted bytes of tensor bucket `bucket` (core::tensorBucket order) per stage.
    QVector<double> stageValues(int bucket) const { return m_values[std::size_t(bucket)]; }
    // The room for tensors the dashed line marks, in bytes: capacity - the ledger's runtime overhead.
    double tensorRoom() const { return m_room; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateColors();
    void showToolTip(QMouseEvent* event);

    QCustomPlot* m_plot = nullptr;
    std::array<QCPBars*, core::kTensorBucketCount> m_bars{};
    std::array<QVector<double>, core::kTensorBucketCount> m_values; // bytes, per stage
    QCPItemStraightLine* m_roomLine = nullptr;
    QCPItemText* m_roomLabel = nullptr;
    QCPItemText* m_mostLoaded = nullptr;
    double m_room = 0;
};

} // namespace napkin::charts
