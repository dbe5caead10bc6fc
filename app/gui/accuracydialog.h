// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Help > How accurate is this?: the validation set (core/validate.h) as a table and a chart, and for
// the current scenario the validated runs most like it with Napkin's error on them (core/accuracy.h).

#include "accuracy.h"

#include <QDialog>

#include <vector>

class QLabel;
class QTableWidget;

namespace napkin::charts {
class ValidationChart;
}

namespace napkin::app {

class PlanController;

class AccuracyDialog : public QDialog {
    Q_OBJECT
public:
    explicit AccuracyDialog(PlanController* controller, QWidget* parent = nullptr);

    // The dialog of `parent` (made once), shown and raised for the current scenario.
    static AccuracyDialog* showFor(PlanController* controller, QWidget* parent);
    // The closest runs for the controller's current scenario.
    void refresh();

    QString summaryText() const;
    QString scenarioText() const;
    QTableWidget* closestTable() const { return m_closest; }
    QTableWidget* allTable() const { return m_all; }
    charts::ValidationChart* chart() const { return m_chart; }
    const core::AccuracyEstimate& estimate() const { return m_estimate; }

private:
    PlanController* m_controller;
    std::vector<core::ValidationResult> m_results; // the built-in set, run once
    core::ValidationSummary m_summary;
    core::AccuracyEstimate m_estimate;
    QLabel* m_summaryLabel;
    QLabel* m_scenarioLabel;
    QTableWidget* m_closest;
    QTableWidget* m_all;
    charts::ValidationChart* m_chart;
};

} // namespace napkin::app
