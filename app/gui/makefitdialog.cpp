// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "makefitdialog.h"

#include "format.h"
#include "layoutsearchdialog.h"
#include "plancontroller.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace napkin::app {

MakeFitDialog::MakeFitDialog(PlanController* controller, QWidget* parent) : QDialog(parent), m_controller(controller)
{
    setWindowTitle(tr("Make it fit"));
    auto* v = new QVBoxLayout(this);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    v->addWidget(m_status);
    const QStringList tips{tr("Whether the plan fits the GPU after the change"),
                           tr("Most loaded GPU after the change, overhead included"),
                           tr("Memory per GPU the change saves"),
                           tr("Predicted seconds per optimizer step after the change, and the difference"),
                           tr("What changes: the scenario keys it sets are in the tooltip")};
    m_table = resultsTable({tr("Fits"), tr("Memory per GPU"), tr("Saved"), tr("Step (change)"), tr("Change")}, tips);
    v->addWidget(m_table, 1);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    m_apply = new QPushButton(tr("Apply"));
    m_apply->setDefault(true);
    m_apply->setToolTip(tr("Set the selected change in the scenario (one undo step); a double-click does the same."));
    auto* close = new QPushButton(tr("Close"));
    buttons->addWidget(m_apply);
    buttons->addWidget(close);
    v->addLayout(buttons);
    connect(close, &QPushButton::clicked, this, &QDialog::close);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (applyRow(m_table->currentRow()))
            QDialog::close();
    });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (applyRow(row))
            QDialog::close();
    });
    resize(900, 380);
}

MakeFitDialog* MakeFitDialog::showFor(PlanController* controller, QWidget* parent)
{
    auto* d = parent ? parent->findChild<MakeFitDialog*>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
    if (!d)
        d = new MakeFitDialog(controller, parent);
    d->refresh();
    d->show();
    d->raise();
    d->activateWindow();
    return d;
}

void MakeFitDialog::refresh()
{
    m_suggestions = core::suggestFits(m_controller->document(), m_controller->baseDir().toStdString());
    const auto& s = m_suggestions;
    auto qs = [](const std::string& t) { return QString::fromStdString(t); };
    if (!s.valid)
        m_status->setText(tr("The scenario has errors: fix them first."));
    else
        m_status->setText((s.baselineFits ? tr("%1 per GPU fits the %2 (%3).")
                                                .arg(m_controller->formatBytes(s.baselineTotal), qs(s.gpuName),
                                                     m_controller->formatBytes(s.capacity))
                                          : tr("%1 per GPU; the %2 has %3: short by %4.")
                                                .arg(m_controller->formatBytes(s.baselineTotal), qs(s.gpuName),
                                                     m_controller->formatBytes(s.capacity),
                                                     m_controller->formatBytes(s.baselineTotal - s.capacity))) +
                          QLatin1Char(' ') +
                          tr("Each change below is the scenario re-planned in full; fitting ones first, those that "
                             "keep your training and "
                             "hardware before LoRA, more GPUs or another GPU."));
    m_table->setRowCount(int(s.changes.size()));
    int row = 0;
    for (const auto& c : s.changes) {
        QString keys;
        for (const auto& [k, v] : c.set.items())
            keys += (keys.isEmpty() ? QString() : QStringLiteral("\n")) + qs(k) + QLatin1Char('=') +
                    qs(v.is_string() ? v.get<std::string>() : v.dump());
        const QString step = QStringLiteral("%1 (%2%3)")
                                 .arg(qs(core::humanNumber(c.stepSeconds, core::Quantity::Seconds)),
                                      c.stepSecondsDelta < 0 ? QStringLiteral("−") : QStringLiteral("+"),
                                      qs(core::humanNumber(std::abs(c.stepSecondsDelta), core::Quantity::Seconds)));
        const QString cells[ColumnCount] = {c.fits ? tr("yes") : tr("no"), m_controller->formatBytes(c.total),
                                            m_controller->formatBytes(c.memorySaved), step, qs(c.description)};
        for (int col = 0; col < ColumnCount; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setToolTip(tr("Sets:\n%1").arg(keys));
            m_table->setItem(row, col, item);
        }
        ++row;
    }
    fitResultsColumns(m_table);
    if (!s.changes.empty())
        m_table->selectRow(0);
    m_apply->setEnabled(!s.changes.empty());
}

bool MakeFitDialog::applyRow(int row)
{
    if (row < 0 || row >= int(m_suggestions.changes.size()))
        return false;
    const auto& c = m_suggestions.changes[std::size_t(row)];
    nlohmann::json doc = m_controller->document();
    core::Errors errors;
    for (const auto& [k, v] : c.set.items())
        core::setPath(doc, k, v, errors);
    if (!errors.empty())
        return false;
    m_controller->setDocument(doc, tr("Make it fit: %1").arg(QString::fromStdString(c.description)));
    return true;
}

} // namespace napkin::app
