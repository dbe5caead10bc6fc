// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Every pipeline stage's tensors on one of its ranks (core MemoryLedger::perStage): parameters,
// weights, gradients, master weights, optimizer states, activations, temporaries, their total and
// the micro-batches in flight at the stage's peak. The most loaded stage (the one the ledger shows)
// is highlighted.

#include "plan.h"

#include <QAbstractTableModel>

#include <vector>

namespace napkin::core {
struct MemoryBucket;
}

namespace napkin::app {

class PlanController;

class StageModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Stage,
        Params,
        Weights,
        Gradients,
        Master,
        Optimizer,
        Activations,
        Temporaries,
        Tensors,
        InFlight,
        ColumnCount
    };
    enum Role { ValueRole = Qt::UserRole + 1, MostLoadedRole };

    explicit StageModel(PlanController* controller, QObject* parent = nullptr);

    QString unitName() const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setPlan(const core::Plan& plan);
    int mostLoadedStage() const { return m_mostLoaded; }

private:
    static const core::MemoryBucket* bucketOf(int column); // nullptr: not a bucket's column
    double value(const core::StageMemory& s, int column) const;

    PlanController* m_controller;
    std::vector<core::StageMemory> m_stages;
    int m_mostLoaded = 0;
};

} // namespace napkin::app
