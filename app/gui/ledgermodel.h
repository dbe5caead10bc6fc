// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The memory ledger as a table: bucket, dtype, bytes per parameter or formula, size, share.

#include "buckets.h"
#include "plan.h"
#include "scenario.h"

#include <QAbstractTableModel>
#include <QVector>

namespace napkin::app {

class PlanController;

class LedgerModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Bucket, DType, PerParam, Size, Share, ColumnCount };
    enum Role { BytesRole = Qt::UserRole + 1, QuantityRole };

    explicit LedgerModel(PlanController* controller, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    void setPlan(const core::Plan& plan, const core::Scenario& scenario);

    // The Activations row expands into one row per saved tensor of a layer (memory.activation_tensors)
    // below it; clicking its Bucket cell toggles it.
    bool activationsExpanded() const { return m_expanded; }
    void setActivationsExpanded(bool expanded);
    bool isActivationsRow(int row) const;
    bool isTensorRow(int row) const { return row >= 0 && row < m_rows.size() && m_rows[row].tensor; }

private:
    struct Row {
        QString name;
        QString dtype;
        QString perParam;
        double bytes = 0;
        QString quantity; // plan JSON path for the derivation
        bool total = false;
        QString tensors;     // the Activations row's saved tensors (tooltip)
        bool tensor = false; // a saved tensor below the expanded Activations row (bytes per layer)
        bool kept = true;
        bool host = false; // the offloaded bytes on the host (memory.host)
    };
    void appendTensorRows(const core::MemoryLedger& m);
    QString tensorsTip(const core::MemoryLedger& m) const;
    QString bucketFormula(core::Bucket bucket, bool mlp, const core::MemoryLedger& m) const;

    PlanController* m_controller;
    QVector<Row> m_rows;
    double m_total = 0;
    bool m_expanded = false;
};

} // namespace napkin::app
