// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Compute and time: the headline numbers, each a button that shows its derivation.

#include <QHash>
#include <QWidget>

class QToolButton;

namespace napkin::app {

class PlanController;

class SummaryPanel : public QWidget {
    Q_OBJECT
public:
    explicit SummaryPanel(PlanController* controller, QWidget* parent = nullptr);
    QString text(const QString& quantity) const; // displayed value, for tests
    void updateValues();

protected:
    void changeEvent(QEvent* event) override;

private:
    // Each value sits in a box of fixed size, wide enough for the longest value, so that a new
    // number does not ask the window for a new layout on every slider step.
    void fixValueSizes();
    void styleValues();

    PlanController* m_controller;
    QHash<QString, QToolButton*> m_values;
};

} // namespace napkin::app
