// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Tools > Find best layout: core::searchLayouts on the current scenario in a worker thread, the top
// ten layouts in a table (fastest first, with why each wins or loses), and Apply (or a double-click)
// to set a row's layout through the PlanController as one undo step. With "Re-run as the scenario
// changes" the search follows the sliders; a change during a run is coalesced into one more run.

#include "search.h"

#include <nlohmann/json.hpp>

#include <QDialog>
#include <QStringList>

#include <memory>

class QCheckBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QThread;

namespace napkin::app {

class PlanController;

// A read-only table of results, one selectable row each, a tooltip per column (the layout search and
// Make it fit).
QTableWidget* resultsTable(const QStringList& headers, const QStringList& tips);
// Sizes every column of a resultsTable but the last to its contents; the last keeps the width left.
void fitResultsColumns(QTableWidget* table);

class LayoutSearchDialog : public QDialog {
    Q_OBJECT
public:
    enum Column {
        Rank,
        Tp,
        Pp,
        Virtual,
        Cp,
        Dp,
        Ep,
        MicroBatch,
        Recompute,
        Zero,
        Step,
        TokensPerSecond,
        Mfu,
        Memory,
        Why,
        ColumnCount
    };

    explicit LayoutSearchDialog(PlanController* controller, QWidget* parent = nullptr);
    ~LayoutSearchDialog() override;

    // The dialog of `parent` (made once), shown, raised and searching the current scenario.
    static LayoutSearchDialog* showFor(PlanController* controller, QWidget* parent);

    // Starts a search of the controller's scenario; while one runs, asks for one more afterwards.
    void search();
    bool isRunning() const { return m_worker != nullptr; }
    // Tests: runs the event loop until no search runs or is pending (false on timeout).
    bool waitForResults(int timeoutMs = 30000);
    // Applies row `row` of the results (one undo step); false when there is no such row or the
    // results no longer describe the scenario.
    bool applyRow(int row);

    const core::SearchResult& result() const { return *m_result; }
    QTableWidget* table() const { return m_table; }
    QCheckBox* liveCheck() const { return m_live; }
    QString statusText() const;
    int runs() const { return m_runs; }

signals:
    void searchFinished();

private:
    void onFinished();
    void onPlanChanged();
    void fillTable();
    void updateButtons();
    static nlohmann::json searchKey(const nlohmann::json& document);

    PlanController* m_controller;
    QLabel* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QPushButton* m_apply = nullptr;
    QPushButton* m_again = nullptr;
    QCheckBox* m_live = nullptr;
    QCheckBox* m_uneven = nullptr;
    QThread* m_worker = nullptr;
    std::shared_ptr<core::SearchResult> m_result;  // shown
    std::shared_ptr<core::SearchResult> m_running; // filled by the worker
    nlohmann::json m_resultKey;                    // the search inputs the shown result belongs to
    nlohmann::json m_runningKey;
    bool m_pending = false;
    bool m_stale = true;
    int m_runs = 0;
};

} // namespace napkin::app
