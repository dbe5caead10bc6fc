// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "warningspanel.h"

#include "plancontroller.h"

namespace napkin::app {

WarningsPanel::WarningsPanel(PlanController* controller, QWidget* parent)
    : QListWidget(parent), m_controller(controller)
{
    setWordWrap(true);
    setAlternatingRowColors(true);
    m_throttle.setSingleShot(true);
    m_throttle.setInterval(100); // follows a slider drag at most every 100 ms
    connect(&m_throttle, &QTimer::timeout, this, &WarningsPanel::updateItems);
    connect(controller, &PlanController::planChanged, this, [this] {
        if (!m_throttle.isActive())
            m_throttle.start();
    });
    connect(controller, &PlanController::errorsChanged, this, &WarningsPanel::updateItems);
    updateItems();
}

void WarningsPanel::updateItems()
{
    QStringList lines;
    for (const auto& e : m_controller->errors())
        lines << QString::fromStdString(core::describe(e));
    for (const auto& w : m_controller->plan().warnings)
        lines << QString::fromStdString(w.message);
    if (lines == m_shown && count() > 0)
        return; // unchanged: no relayout while a slider is dragged
    m_shown = lines;
    clear();
    for (const auto& e : m_controller->errors()) {
        auto* item = new QListWidgetItem(tr("Error: %1").arg(QString::fromStdString(core::describe(e))), this);
        item->setForeground(QColor(0xd3, 0x2f, 0x2f));
    }
    for (const auto& w : m_controller->plan().warnings) {
        auto* item = new QListWidgetItem(QString::fromStdString(w.message), this);
        item->setToolTip(QString::fromStdString(w.code));
        if (w.code == "does_not_fit")
            item->setForeground(QColor(0xd3, 0x2f, 0x2f));
    }
    if (count() == 0)
        addItem(tr("No warnings: the plan fits and its inputs are consistent."));
}

} // namespace napkin::app
