// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Tools > Reconcile a measured run: what the run measured (step time or throughput, peak allocated
// and reserved memory) against the current plan, through core::reconcile (CS336 lecture 2
// exercises 2 and 3): measured MFU and HFU, predicted vs measured memory with the gap, and the
// usual reasons for a gap ranked by how much of it each could explain.

#include <QDialog>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace napkin::app {

class PlanController;

class ReconcileDialog : public QDialog {
    Q_OBJECT
public:
    explicit ReconcileDialog(PlanController* controller, QWidget* parent = nullptr);

    // Inputs as typed (quantities: "2.1", "1.5e5", "61.2G"); empty leaves one out.
    void setInputs(const QString& stepSeconds, const QString& tokensPerSecond, const QString& peakAllocated,
                   const QString& peakReserved);
    // For tests: the shown results.
    QString mfuText() const;
    QString hfuText() const;
    QString memoryText() const;
    QString errorText() const;
    QTableWidget* reasons() const { return m_reasons; }
    double mfu() const { return m_mfu; }

private:
    void update();

    PlanController* m_controller;
    QLineEdit* m_step;
    QLineEdit* m_tokens;
    QLineEdit* m_allocated;
    QLineEdit* m_reserved;
    QLabel* m_error;
    QLabel* m_mfuLabel;
    QLabel* m_hfuLabel;
    QLabel* m_throughput;
    QLabel* m_memory;
    QTableWidget* m_reasons;
    double m_mfu = 0;
};

} // namespace napkin::app
