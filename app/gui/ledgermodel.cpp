// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
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
        if (r.offloaded)
            return tr("offloaded: on the host");
        return r.shard > 1 ? tr("%1 × %2 / %3").arg(num(r.valuesPerParam), num(r.bytesPerValue), num(r.shard)) +
                                 QStringLiteral(" = ") + num(r.bytesPerParam)
                           : num(r.bytesPerParam);
    };
    const bool mlp = sc.model.kind == core::ModelKind::Mlp;
    for (const auto& b : core::kMemoryBuckets) {
        const auto dtype = core::bucketDType(b, pr);
        const core::StateRate* rate = core::bucketRate(b, m);
        // A model state the plan does not keep (no master copy) reads "none" and 0 bytes per parameter.
        QString dtypeText = dtype ? dt(*dtype) : rate ? tr("none") : QStringLiteral("—");
        QString formula = rate ? (dtype ? perParam(*rate) : QStringLiteral("0")) : bucketFormula(b.bucket, mlp, m);
        // LoRA / QLoRA: the states exist for the adapters only, the weights mix the base's format and bf16.
        const auto& ft = p.finetune;
        if (ft.adapters > 0 && rate && dtype && !rate->offloaded && b.bucket != core::Bucket::Weights) {
            const double share = m.gradientsRate.valuesPerParam, states = share > 0 ? rate->valuesPerParam / share : 0;
            formula = tr("adapters %1% × %2%3 B")
                          .arg(100 * share, 0, 'f', 2)
                          .arg(states != 1 ? num(states) + QStringLiteral(" × ") : QString(),
                               num(rate->bytesPerValue / rate->shard));
        }
        if (ft.adapters > 0 && b.bucket == core::Bucket::Weights && ft.quantised > 0) {
            formula =
                tr("%1 %2 B, rest %3: mean %4")
                    .arg(ft.baseDtype == std::string_view("int8") ? QStringLiteral("int8") : QStringLiteral("nf4"))
                    .arg(ft.baseBytesPerValue, 0, 'f', 3)
                    .arg(dtypeText)
                    .arg(rate->bytesPerParam, 0, 'f', 3);
            dtypeText = ft.baseDtype == std::string_view("int8") ? QStringLiteral("int8") : QStringLiteral("nf4");
        }
        const bool activations = b.bucket == core::Bucket::Activations && m.layerTensors.count > 0;
        const QString title =
            activations ? (m_expanded ? QStringLiteral("- ") : QStringLiteral("+ ")) + tr(b.title) : tr(b.title);
        m_rows.push_back(
            {title, dtypeText, formula, core::bucketBytes(b, m), QString::fromLatin1(b.quantity), false, QString()});
        if (b.bucket == core::Bucket::Activations)
            m_rows.back().tensors = tensorsTip(m);
        if (b.bucket == core::Bucket::Overhead && m.comm.count > 0) {
            QStringList groups;
            for (int i = 0; i < m.comm.count; ++i) {
                const auto& g = m.comm.groups[std::size_t(i)];
                groups << tr("%1 (%2 ranks, %3): %4")
                              .arg(QString::fromLatin1(g.name).toUpper(), num(g.ranks),
                                   g.p2p ? tr("p2p") : tr("collective"),
                                   m_controller->formatBytes(g.bytes + g.nvlsBytes));
            }
            m_rows.back().tensors =
                tr("<b>NCCL buffers per communicator</b><br>%1<br>Click to see how the overhead is derived")
                    .arg(groups.join(QStringLiteral("<br>")));
        }
        if (activations && m_expanded)
            appendTensorRows(m);
    }
    m_rows.push_back({tr("Total"), QString(), num(m.statesBytesPerParam) + tr(" B/param states"), m.total,
                      QStringLiteral("memory.per_gpu.total"), true, QString()});
    if (m.host.total > 0 || m.host.nvme > 0) {
        Row host{tr("Host (offload)"),
                 QString(),
                 tr("per GPU; %1 per node%2")
                     .arg(m_controller->formatBytes(m.host.perNode),
                          m.host.nvme > 0 ? tr(", NVMe %1").arg(m_controller->formatBytes(m.host.nvme)) : QString()),
                 m.host.total,
                 QStringLiteral("memory.per_gpu.total"),
                 false,
                 QString()};
        host.host = true;
        m_rows.push_back(host);
    }
    m_total = m.total;
    // The rows are always the same buckets: update cells in place (a reset would make the view
    // rebuild everything on every slider step).
    if (previous.size() == m_rows.size() && (previous.isEmpty() || previous.back().host == m_rows.back().host)) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    } else {
        std::swap(previous, m_rows);
        beginResetModel();
        std::swap(previous, m_rows);
        endResetModel();
    }
}

bool LedgerModel::isActivationsRow(int row) const
{
    return row >= 0 && row < m_rows.size() && m_rows[row].quantity == QLatin1String("memory.per_gpu.activations") &&
           !m_rows[row].tensor;
}

void LedgerModel::setActivationsExpanded(bool expanded)
{
    if (expanded == m_expanded)
        return;
    m_expanded = expanded;
    beginResetModel();
    m_rows.clear();
    endResetModel();
    setPlan(m_controller->plan(), m_controller->scenario());
}

// One row per saved tensor of a layer: its name and producing op, dtype, shape per rank, and bytes
// per layer per micro-batch; the ones the recompute policy drops are marked recomputed.
void LedgerModel::appendTensorRows(const core::MemoryLedger& m)
{
    const auto& lt = m.layerTensors;
    for (int i = 0; i < lt.count; ++i) {
        const auto& t = lt.tensors[std::size_t(i)];
        QString shape;
        for (int d = 0; d < t.dims; ++d)
            shape += (d ? QStringLiteral(" × ") : QString()) + num(t.shape[std::size_t(d)]);
        Row r{
            QStringLiteral("    ") + QString::fromLatin1(t.name),
            QString::fromLatin1(t.dtype),
            QStringLiteral("%1 [%2]%3").arg(QString::fromLatin1(t.op), shape, t.kept ? QString() : tr(" · recomputed")),
            t.bytes,
            QStringLiteral("memory.activations_per_layer"),
            false,
            QString()};
        r.tensor = true;
        r.kept = t.kept;
        r.tensors = tr("%1 (%2): %3 per layer per micro-batch, %4")
                        .arg(QString::fromLatin1(t.name), QString::fromLatin1(t.op), m_controller->formatBytes(t.bytes),
                             t.kept ? tr("kept for the backward") : tr("dropped by training.recompute and recomputed"));
        m_rows.push_back(r);
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
                        .arg(QString::fromLatin1(t.name), shape, QString::fromLatin1(t.dtype),
                             m_controller->formatBytes(t.bytes));
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
        return (m.layerTensors.keptCount == 1 ? tr("%1 tensor, %2/layer") : tr("%1 tensors, %2/layer"))
            .arg(m.layerTensors.keptCount)
            .arg(m_controller->formatBytes(m.activationsPerLayer));
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
        case Size:
            return r.tensor ? tr("%1/layer").arg(m_controller->formatBytes(r.bytes))
                            : m_controller->formatBytes(r.bytes);
        case Share:
            if (r.tensor || r.host)
                return QString();
            return m_total > 0 ? QStringLiteral("%1 %").arg(100.0 * r.bytes / m_total, 0, 'f', 1) : QString();
        }
        break;
    case Qt::TextAlignmentRole:
        return index.column() >= Size ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                      : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::FontRole:
        if (r.total || r.tensor || r.host) {
            QFont f;
            f.setBold(r.total);
            f.setItalic(r.host || (r.tensor && !r.kept));
            return f;
        }
        break;
    case Qt::ForegroundRole:
        if (r.tensor && !r.kept)
            return QGuiApplication::palette().brush(QPalette::Disabled, QPalette::Text);
        break;
    case Qt::ToolTipRole:
        if (!r.tensors.isEmpty())
            return r.tensors;
        // The dtype and formula too: a narrow ledger drops those columns (MainWindow::fitLedgerColumns).
        if (!r.dtype.isEmpty() || !r.perParam.isEmpty())
            return tr("%1, %2 · %3\nClick to see how %4 is derived").arg(r.name, r.dtype, r.perParam, r.name.toLower());
        return tr("Click to see how %1 is derived").arg(r.name.toLower());
    case BytesRole: return r.bytes;
    case QuantityRole: return r.quantity;
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
