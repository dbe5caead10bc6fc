#include "ledgermodel.h"

#include "buckets.h"
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
    const bool mlp = sc.model.kind == core::ModelKind::Mlp;
    for (const auto& b : core::kMemoryBuckets) {
        const auto dtype = core::bucketDType(b, pr);
        const core::StateRate* rate = core::bucketRate(b, m);
        // A model state the plan does not keep (no master copy) reads "none" and 0 bytes per parameter.
        const QString dtypeText = dtype ? dt(*dtype) : rate ? tr("none") : QStringLiteral("—");
        const QString formula = rate ? (dtype ? perParam(*rate) : QStringLiteral("0")) : bucketFormula(b.bucket, mlp, m);
        m_rows.push_back({tr(b.title), dtypeText, formula, core::bucketBytes(b, m), QString::fromLatin1(b.quantity), false, QString()});
        if (b.bucket == core::Bucket::Activations)
            m_rows.back().tensors = tensorsTip(m);
    }
    m_rows.push_back({tr("Total"), QString(), num(m.statesBytesPerParam) + tr(" B/param states"), m.total,
                      QStringLiteral("memory.per_gpu.total"), true, QString()});
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

// The Activations row's tooltip: one layer's saved tensors (memory.activation_tensors), kept ones with
// shape and size, and the ones the recompute policy brings back for the backward.
QString LedgerModel::tensorsTip(const core::MemoryLedger& m) const
{
    const auto& lt = m.layerTensors;
    if (lt.count == 0)
        return {};
    QString kept, dropped;
    for (int i = 0; i < lt.count; ++i) {
        const auto& t = lt.tensors[std::size_t(i)];
        QString shape;
        for (int d = 0; d < t.dims; ++d)
            shape += (d ? QStringLiteral(" × ") : QString()) + num(t.shape[std::size_t(d)]);
        if (t.kept)
            kept += QStringLiteral("<tr><td>%1</td><td>[%2]</td><td>%3</td><td align=\"right\">%4</td></tr>")
                        .arg(QString::fromLatin1(t.name), shape, QString::fromLatin1(t.dtype), m_controller->formatBytes(t.bytes));
        else if ((t.droppedBy & core::kDropNone) == 0)
            dropped += (dropped.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromLatin1(t.name);
    }
    return tr("<b>Saved per layer (recompute %1)</b><table>%2</table>%3<br>Click to see how activations are derived")
        .arg(QString::fromLatin1(core::toString(m.recompute)), kept,
             dropped.isEmpty() ? QString() : tr("Recomputed for the backward: %1").arg(dropped));
}

// The formula column of the buckets that are not stored per parameter.
QString LedgerModel::bucketFormula(core::Bucket bucket, bool mlp, const core::MemoryLedger& m) const
{
    switch (bucket) {
    case core::Bucket::Activations:
        if (mlp)
            return tr("B·D·L");
        return tr("%1 tensors, %2/layer").arg(m.layerTensors.keptCount).arg(m_controller->formatBytes(m.activationsPerLayer));
    case core::Bucket::Temporaries:
        return mlp ? QStringLiteral("—") : m.gatheredWeights > 0 ? tr("logits, loss, gathered") : tr("logits and loss");
    case core::Bucket::Overhead: return tr("context + workspace + comm + reserve");
    default: return QString();
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
        if (!r.tensors.isEmpty())
            return r.tensors;
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
