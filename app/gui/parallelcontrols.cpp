// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "parallelcontrols.h"

#include "plancontroller.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace napkin::app {

ParallelControls::ParallelControls(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    auto* row = new QWidget;
    auto* form = new QFormLayout(row);
    form->setContentsMargins(0, 0, 0, 0);
    m_fsdp = new QComboBox;
    m_fsdp->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_fsdp->setMinimumContentsLength(12);
    m_fsdp->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    // PyTorch FSDP ShardingStrategy: FULL_SHARD shards parameters, gradients and optimizer states
    // (ZeRO-3), SHARD_GRAD_OP gradients and optimizer states (ZeRO-2), HYBRID_SHARD fully inside a
    // node and replicates across nodes (Zhao et al. 2023, "PyTorch FSDP").
    m_fsdp->addItem(tr("none: use the ZeRO stage"), QStringLiteral("none"));
    m_fsdp->addItem(tr("FULL_SHARD (as ZeRO-3)"), QStringLiteral("full"));
    m_fsdp->addItem(tr("SHARD_GRAD_OP (as ZeRO-2)"), QStringLiteral("grad_op"));
    m_fsdp->addItem(tr("HYBRID_SHARD (ZeRO-3 inside a node)"), QStringLiteral("hybrid"));
    m_fsdp->setToolTip(tr("PyTorch FSDP sharding strategy; choosing one replaces the ZeRO stage (Zhao et al. 2023)."));
    form->addRow(tr("FSDP"), m_fsdp);
    v->addWidget(row);
    m_note = new QLabel;
    m_note->setWordWrap(true);
    m_note->setAutoFillBackground(true);
    v->addWidget(m_note);
    connect(m_fsdp, &QComboBox::activated, this, [this] {
        if (!m_syncing)
            m_controller->set(QStringLiteral("parallel.fsdp"), m_fsdp->currentData().toString().toStdString());
    });
    connect(controller, &PlanController::documentChanged, this, &ParallelControls::syncFromDocument);
    connect(controller, &PlanController::planChanged, this, &ParallelControls::updateNote);
    syncFromDocument();
    updateNote();
}

void ParallelControls::syncFromDocument()
{
    m_syncing = true;
    const auto& doc = m_controller->document();
    QString id = QStringLiteral("none");
    if (const auto pa = doc.find("parallel"); pa != doc.end() && pa->is_object())
        if (const auto f = pa->find("fsdp"); f != pa->end() && f->is_string())
            id = QString::fromStdString(f->get<std::string>());
    const int index = m_fsdp->findData(id);
    if (index >= 0)
        m_fsdp->setCurrentIndex(index);
    m_syncing = false;
}

void ParallelControls::updateNote()
{
    const auto& sc = m_controller->scenario();
    if (sc.parallel.fsdp == core::Fsdp::None) {
        m_note->hide();
        return;
    }
    const std::int64_t dp = m_controller->plan().compute.dataParallel;
    m_note->setText(tr("Sharded as ZeRO-%1 over %2 of the %3 data-parallel ranks")
                        .arg(core::effectiveZeroStage(sc))
                        .arg(core::shardGroupSize(sc, dp))
                        .arg(dp));
    m_note->show();
}

} // namespace napkin::app
