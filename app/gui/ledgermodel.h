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

private:
    struct Row {
        QString name;
        QString dtype;
        QString perParam;
        double bytes = 0;
        QString quantity; // plan JSON path for the derivation
        bool total = false;
        QString tensors; // the Activations row's saved tensors (tooltip)
    };
    QString tensorsTip(const core::MemoryLedger& m) const;
    QString bucketFormula(core::Bucket bucket, bool mlp, const core::MemoryLedger& m) const;

    PlanController* m_controller;
    QVector<Row> m_rows;
    double m_total = 0;
};

} // namespace napkin::app
