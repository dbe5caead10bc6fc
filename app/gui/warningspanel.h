// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Input errors (the last valid plan stays on screen) and the plan's warnings.

#include <QListWidget>
#include <QStringList>
#include <QTimer>

namespace napkin::app {

class PlanController;

class WarningsPanel : public QListWidget {
    Q_OBJECT
public:
    explicit WarningsPanel(PlanController* controller, QWidget* parent = nullptr);
    void updateItems();

private:
    PlanController* m_controller;
    QStringList m_shown;
    QTimer m_throttle;
};

} // namespace napkin::app
