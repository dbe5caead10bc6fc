#include "ledgermodel.h"

#include "format.h"
#include "plancontroller.h"

#include <QBrush>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

namespace napkin::app {

namespace {
QString dt(core::DType t) { return QString::fromLatin1(core::info(t).id.data(), qsizetype(core::info(t).id.size())); }
QString num(double v) { return QString::fromStdString(core::formatNumber(v)); }
} // namespace

LedgerModel::LedgerModel(PlanController* controller, QObject* parent)
    : QAbstractTableModel(parent), m_controller(controller)
{
    connect(controller, &PlanController::planChanged, this,
            [this](const core::Plan& p) { setPlan(p, m_controller->scenario()); });
    connect(controller, &PlanController::unitsChanged, this, [this] {
        if (!m_rows.isEmpty())
            emit dataChanged(index(0, Size), index(rowCount() - 1, Size));
    });
    setPlan(controller->plan(), controller->scenario());
}

int LedgerModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int LedgerModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

void LedgerModel::setPlan(const core::Plan& p, const core::Scenario& sc)
{
    QVector<Row> previous;
    previous.swap(m_rows);
    const auto& m = p.memory;
    const auto& pr = sc.precision;
    // Bytes per parameter of each state bucket as core stored it (values × bytes / ZeRO-FSDP shard).
    auto perParam = [](const core::StateRate& r) {
        return r.shard > 1 ? tr("%1 × %2 / %3").arg(num(r.valuesPerParam)).arg(num(r.bytesPerValue)).arg(num(r.shard)) +
                                 QStringLiteral(" = ") + num(r.bytesPerParam)
                           : num(r.bytesPerParam);
    };
    m_rows.push_back({tr("Weights"), dt(pr.weights), perParam(m.weightsRate), m.weights,
                      QStringLiteral("memory.per_gpu.weights")});
    m_rows.push_back({tr("Gradients"), dt(pr.gradients), perParam(m.gradientsRate), m.gradients,
                      QStringLiteral("memory.per_gpu.gradients")});
    m_rows.push_back({tr("Master weights"), pr.master ? dt(*pr.master) : tr("none"),
                      pr.master ? perParam(m.masterRate) : QStringLiteral("0"), m.masterWeights,
                      QStringLiteral("memory.per_gpu.master_weights")});
    m_rows.push_back({tr("Optimizer states"), dt(pr.optimizer), perParam(m.optimizerRate),
                      m.optimizerStates, QStringLiteral("memory.per_gpu.optimizer_states")});
    const bool mlp = sc.model.kind == core::ModelKind::Mlp;
    m_rows.push_back({tr("Activations"), dt(pr.activations),
                      mlp ? tr("B·D·L") : tr("Korthikanti, %1 per layer").arg(m_controller->formatBytes(m.activationsPerLayer)),
                      m.activations, QStringLiteral("memory.per_gpu.activations")});
    m_rows.push_back({tr("Temporaries"), dt(pr.activations), mlp ? QStringLiteral("—") : tr("s·b·V·(e + 4)"), m.temporaries,
                      QStringLiteral("memory.per_gpu.temporaries")});
    m_rows.push_back({tr("Runtime overhead"), QStringLiteral("—"), tr("context + workspace + comm + reserve"), m.overhead,
                      QStringLiteral("memory.per_gpu.overhead")});
    m_rows.push_back({tr("Total"), QString(), num(m.statesBytesPerParam) + tr(" B/param states"), m.total,
                      QStringLiteral("memory.per_gpu.total"), true});
    m_total = m.total;
    // The rows are always the same buckets: update cells in place (a reset would make the view
    // rebuild everything on every slider step).
    if (previous.size() == m_rows.size()) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    } else {
        std::swap(previous, m_rows);
        beginResetModel();
        std::swap(previous, m_rows);
        endResetModel();
    }
}

QVariant LedgerModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Row& r = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Bucket: return r.name;
        case DType: return r.dtype;
        case PerParam: return r.perParam;
        case Size: return m_controller->formatBytes(r.bytes);
        case Share: return m_total > 0 ? QStringLiteral("%1 %").arg(100.0 * r.bytes / m_total, 0, 'f', 1) : QString();
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() >= Size ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::FontRole:
        if (r.total) {
            QFont f;
            f.setBold(true);
            return f;
        }
        break;
    case Qt::ToolTipRole:
        return tr("Click to see how %1 is derived").arg(r.name.toLower());
    case BytesRole:
        return r.bytes;
    case QuantityRole:
        return r.quantity;
    }
    return {};
}

QVariant LedgerModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Bucket: return tr("Bucket");
    case DType: return tr("dtype");
    case PerParam: return tr("Bytes/param or formula");
    case Size: return tr("Per GPU");
    case Share: return tr("Share");
    }
    return {};
}

} // namespace napkin::app
