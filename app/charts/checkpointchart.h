// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Activation memory over the checkpoint interval k (CS336 lecture 2: O(L/k + k), smallest near
// sqrt(L)), with the scenario's own k and the best k marked. Used by lecture mode and its handout.

#include "lecture.h"

#include <QWidget>

class QCustomPlot;

namespace napkin::charts {

class CheckpointChart : public QWidget {
    Q_OBJECT
public:
    explicit CheckpointChart(QWidget* parent = nullptr);

    // currentK: the scenario's checkpoint interval (0: none marked). Sizes in MB or GB (MiB or GiB
    // with gib), whichever suits the curve.
    void setCurve(const core::ScenarioCheckpointCurve& curve, std::int64_t currentK, bool gib);
    QCustomPlot* plot() const { return m_plot; }
    int pointCount() const;

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateColors();

    QCustomPlot* m_plot;
};

} // namespace napkin::charts
