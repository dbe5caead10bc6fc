// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "stagemodel.h"

#include "buckets.h"
#include "chartunits.h"
#include "plancontroller.h"
#include "quantityslider.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

namespace napkin::app {

StageModel::StageModel(PlanController* controller, QObject* parent)
    : QAbstractTableModel(parent), m_controller(controller)
{
    connect(controller, &PlanController::planChanged, this, &StageModel::setPlan);
    connect(controller, &PlanController::unitsChanged, this, [this] {
        emit headerDataChanged(Qt::Horizontal, Weights, Tensors); // the tooltips name the unit
        if (!m_stages.empty())
            emit dataChanged(index(0, Weights), index(rowCount() - 1, Tensors));
    });
    setPlan(controller->plan());
}

// The unit the byte columns are shown in (the window's: GB or GiB); the tab's title names it too.
QString StageModel::unitName() const
{
    return m_controller->units() == charts::Units::GiB ? QStringLiteral("GiB") : QStringLiteral("GB");
}

int StageModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_stages.size()); }
int StageModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

void StageModel::setPlan(const core::Plan& plan)
{
    const auto& stages = plan.memory.perStage;
    const int mostLoaded = int(plan.memory.mostLoadedStage);
    if (stages.size() == m_stages.size()) {
        // Same number of stages (a slider that leaves pp alone): update the cells in place.
        m_stages = stages;
        m_mostLoaded = mostLoaded;
        if (!m_stages.empty())
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    m_stages = stages;
    m_mostLoaded = mostLoaded;
    endResetModel();
}

// The tensor buckets' columns, Weights to Temporaries, in the ledger order of core::kMemoryBuckets.
const core::MemoryBucket* StageModel::bucketOf(int column)
{
    static_assert(Tensors - Weights == core::kTensorBucketCount, "one column per tensor bucket");
    return column >= Weights && column < Tensors ? &core::tensorBucket(column - Weights) : nullptr;
}

double StageModel::value(const core::StageMemory& s, int column) const
{
    if (const core::MemoryBucket* b = bucketOf(column))
        return core::bucketBytes(*b, s);
    switch (column) {
    case Params: return s.params;
    case Tensors: return s.tensors;
    case InFlight: return s.inFlight;
    }
    return 0;
}

QVariant StageModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount)
        return {};
    const auto& s = m_stages[std::size_t(index.row())];
    const int row = index.row(), last = rowCount() - 1;
    const bool loaded = row == m_mostLoaded;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Stage:
            return row == 0 && last > 0      ? tr("%1 (first)").arg(row)
                   : row == last && last > 0 ? tr("%1 (last)").arg(row)
                                             : QString::number(row);
        case Params: return formatCount(s.params);
        case InFlight: return QString::number(s.inFlight, 'g', 3);
        default: // the unit is in the header: short cells that fit side by side (issue 20)
            return QString::number(value(s, index.column()) / charts::unitBytes(m_controller->units()), 'f', 2);
        }
    case Qt::TextAlignmentRole:
        return index.column() == Stage ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                       : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (loaded) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case Qt::BackgroundRole:
        if (loaded) {
            QColor c = QGuiApplication::palette().color(QPalette::Highlight);
            c.setAlphaF(0.25f);
            return QBrush(c);
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() >= Weights && index.column() <= Tensors)
            return m_controller->formatBytes(value(s, index.column()));
        if (loaded)
            return tr("The most loaded stage: the memory ledger above describes this one.");
        if (row == 0)
            return tr("The first stage holds the embedding and the most micro-batches in flight (1F1B).");
        if (row == last)
            return tr("The last stage holds the output layer and the logits.");
        return tr("A middle stage: its layers only, min(p - i, m) micro-batches in flight (Narayanan et al. 2021).");
    case ValueRole: return index.column() == Stage ? QVariant(row) : QVariant(value(s, index.column()));
    case MostLoadedRole: return loaded;
    }
    return {};
}

QVariant StageModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == InFlight)
        return tr("Micro-batches whose activations the stage holds at its peak: min(p - i, m) in 1F1B.");
    if (role == Qt::ToolTipRole && section == Tensors)
        return tr("Sum of the tensor buckets, before the runtime overhead, in %1.").arg(unitName());
    if (role == Qt::ToolTipRole && bucketOf(section))
        return tr("%1 per GPU of the stage, in %2.").arg(tr(bucketOf(section)->title), unitName());
    if (role != Qt::DisplayRole)
        return {};
    if (const core::MemoryBucket* b = bucketOf(section)) {
        // Ten columns share the ledger panel's width (about 560 px at 1280x800): the three long
        // headings are abbreviated as people write them ("ptimizer" was all that showed, issue 20);
        // the tooltip names the bucket in full.
        switch (b->bucket) {
        case core::Bucket::OptimizerStates: return tr("Optim.");
        case core::Bucket::Activations: return tr("Activ.");
        case core::Bucket::Temporaries: return tr("Temp.");
        default: return tr(b->heading);
        }
    }
    switch (section) {
    case Stage: return tr("Stage");
    case Params: return tr("Params");
    case Tensors: return tr("Tensors");
    case InFlight: return tr("In flight");
    }
    return {};
}

} // namespace napkin::app
