// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reconciledialog.h"

#include "format.h"
#include "jsonreader.h"
#include "plancontroller.h"
#include "reconcile.h"

#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace napkin::app {

ReconcileDialog::ReconcileDialog(PlanController* controller, QWidget* parent)
    : QDialog(parent), m_controller(controller), m_step(new QLineEdit), m_tokens(new QLineEdit),
      m_allocated(new QLineEdit), m_reserved(new QLineEdit), m_error(new QLabel), m_mfuLabel(new QLabel),
      m_hfuLabel(new QLabel), m_throughput(new QLabel), m_memory(new QLabel), m_reasons(new QTableWidget)
{
    setWindowTitle(tr("Reconcile a measured run"));
    auto* v = new QVBoxLayout(this);
    auto* intro =
        new QLabel(tr("Enter what the run measured. MFU and HFU use the plan's FLOPs per token, tokens per step "
                      "and GPU count; the memory is compared with torch.cuda.max_memory_allocated() on one GPU. "
                      "Numbers accept suffixes: 2.1, 1.5e5, 61.2G."));
    intro->setWordWrap(true);
    v->addWidget(intro);
    auto* form = new QFormLayout;
    m_step->setPlaceholderText(tr("seconds per optimizer step"));
    m_tokens->setPlaceholderText(tr("optional: whole-job tokens/s (overrides the step time)"));
    m_allocated->setPlaceholderText(tr("optional: bytes, e.g. 61.2G"));
    m_reserved->setPlaceholderText(tr("optional: bytes (torch.cuda.max_memory_reserved())"));
    form->addRow(tr("Step time (s)"), m_step);
    form->addRow(tr("Throughput (tokens/s)"), m_tokens);
    form->addRow(tr("Peak allocated (bytes)"), m_allocated);
    form->addRow(tr("Peak reserved (bytes)"), m_reserved);
    v->addLayout(form);
    m_error->setStyleSheet(QStringLiteral("color: #d32f2f;"));
    m_error->setWordWrap(true);
    v->addWidget(m_error);
    auto* results = new QFormLayout;
    QFont bold = font();
    bold.setBold(true);
    for (auto* l : {m_mfuLabel, m_hfuLabel, m_throughput, m_memory}) {
        l->setFont(bold);
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    results->addRow(tr("Measured MFU"), m_mfuLabel);
    results->addRow(tr("Measured HFU"), m_hfuLabel);
    results->addRow(tr("Throughput"), m_throughput);
    results->addRow(tr("Memory"), m_memory);
    v->addLayout(results);
    m_reasons->setColumnCount(3);
    m_reasons->setHorizontalHeaderLabels({tr("Could explain"), tr("Size"), tr("Reason for the gap")});
    m_reasons->verticalHeader()->hide();
    m_reasons->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_reasons->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_reasons->horizontalHeader()->setStretchLastSection(true);
    v->addWidget(m_reasons);
    for (auto* e : {m_step, m_tokens, m_allocated, m_reserved})
        connect(e, &QLineEdit::textChanged, this, &ReconcileDialog::update);
    connect(controller, &PlanController::planChanged, this, &ReconcileDialog::update);
    resize(820, 520);
    update();
}

void ReconcileDialog::setInputs(const QString& stepSeconds, const QString& tokensPerSecond,
                                const QString& peakAllocated, const QString& peakReserved)
{
    const QSignalBlocker b1(m_step), b2(m_tokens), b3(m_allocated), b4(m_reserved);
    m_step->setText(stepSeconds);
    m_tokens->setText(tokensPerSecond);
    m_allocated->setText(peakAllocated);
    m_reserved->setText(peakReserved);
    update();
}

QString ReconcileDialog::mfuText() const { return m_mfuLabel->text(); }
QString ReconcileDialog::hfuText() const { return m_hfuLabel->text(); }
QString ReconcileDialog::memoryText() const { return m_memory->text(); }
QString ReconcileDialog::errorText() const { return m_error->text(); }

void ReconcileDialog::update()
{
    core::Measurement m;
    QStringList problems;
    // Sizes read as sizes ("74 GiB", "80GB"; a bare B is a byte), counts as quantities ("1.2M").
    auto read = [&](QLineEdit* e, const QString& flag, std::optional<double>& out, bool bytes) {
        const QString t = e->text().trimmed();
        if (t.isEmpty())
            return;
        if (const auto v = bytes ? core::parseBytes(t.toStdString()) : core::parseQuantity(t.toStdString()))
            out = *v;
        else
            problems << (bytes ? tr("%1 = %2: not a size (%3)").arg(flag, t, QString::fromLatin1(core::kByteSuffixes))
                               : tr("%1 = %2: not a number").arg(flag, t));
    };
    read(m_step, QStringLiteral("step time"), m.stepSeconds, false);
    read(m_tokens, QStringLiteral("throughput"), m.tokensPerSecond, false);
    read(m_allocated, QStringLiteral("peak allocated"), m.peakAllocatedBytes, true);
    read(m_reserved, QStringLiteral("peak reserved"), m.peakReservedBytes, true);
    core::Errors errors;
    core::Reconciliation r;
    if (problems.isEmpty()) {
        if (m_controller->hasErrors())
            problems << tr("The scenario has errors: %1")
                            .arg(QString::fromStdString(core::describe(m_controller->errors().front())));
        else
            r = core::reconcile(m_controller->scenario(), m_controller->plan(), m, errors);
    }
    for (const auto& e : errors)
        problems << QString::fromStdString(core::describe(e));
    m_reasons->setRowCount(0);
    m_mfu = 0;
    if (!problems.isEmpty()) {
        m_error->setText(problems.join(QLatin1Char('\n')));
        for (auto* l : {m_mfuLabel, m_hfuLabel, m_throughput, m_memory})
            l->setText(QStringLiteral("–"));
        return;
    }
    m_error->setText(QString::fromStdString([&] {
        std::string w;
        for (const auto& s : r.warnings)
            w += (w.empty() ? "" : "\n") + s;
        return w;
    }()));
    const auto& plan = m_controller->plan();
    m_mfu = r.mfu;
    // CS336 lecture 2: MFU = model FLOPs per token · tokens/s / (GPUs · dense peak).
    m_mfuLabel->setText(tr("%1%  = %2 FLOP/token · %3 tokens/s / (%4 GPUs · %5 FLOP/s); the plan assumes %6%")
                            .arg(QString::number(100 * r.mfu, 'f', 1),
                                 QString::fromStdString(core::formatNumber(plan.compute.flopsPerToken)),
                                 QString::fromStdString(core::formatNumber(r.tokensPerSecond)),
                                 QString::number(m_controller->scenario().cluster.gpus),
                                 QString::fromStdString(core::formatNumber(plan.hardware.peakFlops)),
                                 QString::number(100 * plan.time.mfu, 'f', 1)));
    m_hfuLabel->setText(tr("%1%  (counts recomputed FLOPs; Chowdhery et al. 2022, Korthikanti et al. 2022)")
                            .arg(QString::number(100 * r.hfu, 'f', 1)));
    m_throughput->setText(tr("%1 tokens/s, %2 s per step of %3 tokens")
                              .arg(QString::fromStdString(core::formatNumber(r.tokensPerSecond)),
                                   QString::fromStdString(core::formatNumber(r.stepSeconds)),
                                   QString::fromStdString(core::formatNumber(plan.compute.tokensPerStep))));
    if (!r.hasMemory) {
        m_memory->setText(tr("enter the peak allocated bytes to compare memory"));
        return;
    }
    QString mem =
        tr("predicted %1 allocated, measured %2: gap %3%4 (%5%)")
            .arg(m_controller->formatBytes(r.predictedAllocated), m_controller->formatBytes(r.peakAllocated),
                 r.gapBytes >= 0 ? QStringLiteral("+") : QStringLiteral("−"),
                 m_controller->formatBytes(std::fabs(r.gapBytes)), QString::number(100 * r.gapFraction, 'f', 1));
    if (r.peakReserved > 0)
        mem += tr("; reserved %1").arg(m_controller->formatBytes(r.peakReserved));
    m_memory->setText(mem);
    m_reasons->setRowCount(int(r.reasons.size()));
    for (int i = 0; i < int(r.reasons.size()); ++i) {
        const auto& g = r.reasons[std::size_t(i)];
        const QString cells[] = {QString::number(100 * g.explainsFraction, 'f', 0) + QLatin1Char('%'),
                                 m_controller->formatBytes(g.bytes), QString::fromStdString(g.reason)};
        for (int c = 0; c < 3; ++c)
            m_reasons->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
}

} // namespace napkin::app
