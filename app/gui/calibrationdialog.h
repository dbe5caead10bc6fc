// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Hardware > Calibrate this GPU: runs napkin-probe (CalibrationRunner) with a progress bar, Cancel
// and a timeout while the window stays responsive; a good profile is saved and selected as the
// plan's GPU. The table shows the profile in use: measured vs spec with the achieved share
// (core::calibrationRows, the numbers of the plan JSON's hardware.calibration).

#include "calibrationrunner.h"

#include <QDialog>

class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace napkin::app {

class PlanController;

class CalibrationDialog : public QDialog {
    Q_OBJECT
public:
    explicit CalibrationDialog(PlanController* controller, QWidget* parent = nullptr);

    CalibrationRunner* runner() const { return m_runner; }
    // For tests: what the dialog shows.
    QString messageText() const;
    QProgressBar* progressBar() const { return m_progress; }
    QTableWidget* table() const { return m_table; }
    QPushButton* calibrateButton() const { return m_calibrate; }
    QPushButton* cancelButton() const { return m_cancel; }

    void startCalibration();

signals:
    // A new profile was saved and selected (path: absolute file, label: for the GPU chooser).
    void profileSaved(const QString& path, const QString& label);

private:
    void onFinished(CalibrationRunner::Outcome outcome, const QString& message);
    void updateTable();

    PlanController* m_controller;
    CalibrationRunner* m_runner;
    QLabel* m_probe;
    QLabel* m_step;
    QLabel* m_message;
    QLabel* m_tableTitle;
    QLabel* m_conditions = nullptr; // NVML clocks and power during the GEMM steps (profile version 2)
    QProgressBar* m_progress;
    QTableWidget* m_table;
    QPushButton* m_calibrate;
    QPushButton* m_cancel;
};

} // namespace napkin::app
