// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The derivation of the selected number: formula, values substituted, result and source.

#include <QTimer>
#include <QWidget>

class QTextBrowser;

namespace napkin::app {

class PlanController;

class DerivationPanel : public QWidget {
    Q_OBJECT
public:
    explicit DerivationPanel(PlanController* controller, QWidget* parent = nullptr);
    QString html() const;
    void updateText();

private:
    PlanController* m_controller;
    QTextBrowser* m_text;
    QString m_html;
    QTimer m_throttle;
};

} // namespace napkin::app
