// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// "Make it fit": core::suggestFits on the current scenario (every change a full re-plan), the changes
// in a table, fitting ones first, and Apply (or a double-click) to set a row's keys through the
// PlanController as one undo step. Opened from the button beside the ledger's shortfall.

#include "makefit.h"

#include <QDialog>

class QLabel;
class QPushButton;
class QTableWidget;

namespace napkin::app {

class PlanController;

class MakeFitDialog : public QDialog {
    Q_OBJECT
public:
    enum Column { Fits, Memory, Saved, Step, Change, ColumnCount };

    explicit MakeFitDialog(PlanController* controller, QWidget* parent = nullptr);

    // The dialog of `parent` (made once), shown, raised and filled for the current scenario.
    static MakeFitDialog* showFor(PlanController* controller, QWidget* parent);

    void refresh();
    // Sets row `row`'s keys in the scenario (one undo step); false when there is no such row.
    bool applyRow(int row);

    const core::FitSuggestions& suggestions() const { return m_suggestions; }
    QTableWidget* table() const { return m_table; }
    QPushButton* applyButton() const { return m_apply; }

private:
    PlanController* m_controller;
    QLabel* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QPushButton* m_apply = nullptr;
    core::FitSuggestions m_suggestions;
};

} // namespace napkin::app
