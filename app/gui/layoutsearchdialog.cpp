// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "layoutsearchdialog.h"

#include "plancontroller.h"
#include "quantityslider.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>

namespace napkin::app {

QTableWidget* resultsTable(const QStringList& headers, const QStringList& tips)
{
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setHorizontalHeaderLabels(headers);
    for (int c = 0; c < int(headers.size()) && c < int(tips.size()); ++c)
        t->horizontalHeaderItem(c)->setToolTip(tips[c]);
    t->verticalHeader()->hide();
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setAlternatingRowColors(true);
    // The last column (why, what changes) takes the width left and wraps; rows grow to hold it, so no
    // column hides behind a horizontal scroll bar (issue 20). The others are sized to their contents.
    t->setWordWrap(true);
    t->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    t->horizontalHeader()->setStretchLastSection(true);
    t->horizontalHeader()->setSectionResizeMode(int(headers.size()) - 1, QHeaderView::Stretch);
    t->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return t;
}

void fitResultsColumns(QTableWidget* table)
{
    // resizeColumnsToContents would size the stretched last column too, wider than the view.
    for (int c = 0; c + 1 < table->columnCount(); ++c)
        table->resizeColumnToContents(c);
}

namespace {
// etp 0 in a layout keeps the scenario's, which "auto" resolves to tp.
int effectiveEtp(const core::Layout& l) { return l.etp > 0 ? l.etp : l.tp; }

bool sameLayout(const core::Layout& a, const core::Layout& b)
{
    return a.tp == b.tp && a.pp == b.pp && a.virtualStages == b.virtualStages && a.cp == b.cp && a.dp == b.dp &&
           a.ep == b.ep && effectiveEtp(a) == effectiveEtp(b) && a.microBatch == b.microBatch &&
           a.recompute == b.recompute && a.zero == b.zero && a.schedule == b.schedule &&
           a.firstStageLayers == b.firstStageLayers && a.lastStageLayers == b.lastStageLayers;
}
} // namespace

LayoutSearchDialog::LayoutSearchDialog(PlanController* controller, QWidget* parent)
    : QDialog(parent), m_controller(controller), m_result(std::make_shared<core::SearchResult>())
{
    setWindowTitle(tr("Find best layout"));
    auto* v = new QVBoxLayout(this);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    v->addWidget(m_status);
    const QStringList headers{tr("#"),    tr("TP"),       tr("PP"),          tr("v"),         tr("CP"),
                              tr("DP"),   tr("EP"),       tr("Micro-batch"), tr("Recompute"), tr("ZeRO"),
                              tr("Step"), tr("Tokens/s"), tr("MFU"),         tr("Memory"),    tr("Why")};
    const QStringList tips{
        tr("Rank by predicted step time"),
        tr("Tensor-parallel ranks"),
        tr("Pipeline stages (uneven: the first and last stage's layers in brackets)"),
        tr("Virtual stages per pipeline rank (interleaved schedule), or \"dual\" for DualPipe"),
        tr("Context-parallel ranks"),
        tr("Data-parallel replicas: GPUs / (TP · PP · CP)"),
        tr("Expert-parallel ranks (mixtures of experts): each holds experts / EP of every MoE layer"),
        tr("Sequences per micro-batch"),
        tr("Activation recomputation"),
        tr("ZeRO stage (FSDP off)"),
        tr("Predicted seconds per optimizer step (core/steptime.h)"),
        tr("Global batch tokens / step time"),
        tr("Model FLOPs / (GPUs · peak · step)"),
        tr("Most loaded rank's memory, overhead included"),
        tr("Why it wins, or what costs it against #1")};
    m_table = resultsTable(headers, tips);
    v->addWidget(m_table, 1);

    auto* buttons = new QHBoxLayout;
    m_live = new QCheckBox(tr("Re-run as the scenario changes"));
    m_live->setChecked(true);
    m_live->setToolTip(
        tr("Search again whenever an input other than the layout changes (the GPU count, the model, the batch)."));
    buttons->addWidget(m_live);
    m_uneven = new QCheckBox(tr("Uneven stages"));
    m_uneven->setToolTip(
        tr("Also try pipeline depths that do not divide the layers, with fewer layers on the first and "
           "last stage (Llama 3.1 405B: 126 layers on 16 stages as 7 + 14 x 8 + 7). Many more layouts: slower."));
    buttons->addWidget(m_uneven);
    buttons->addStretch(1);
    m_again = new QPushButton(tr("Search again"));
    m_again->setToolTip(tr("Search the current scenario now."));
    m_apply = new QPushButton(tr("Apply"));
    m_apply->setDefault(true);
    m_apply->setToolTip(tr("Set the selected layout in the scenario (one undo step); a double-click does the same."));
    auto* close = new QPushButton(tr("Close"));
    buttons->addWidget(m_again);
    buttons->addWidget(m_apply);
    buttons->addWidget(close);
    v->addLayout(buttons);

    connect(m_again, &QPushButton::clicked, this, &LayoutSearchDialog::search);
    connect(m_apply, &QPushButton::clicked, this, [this] { applyRow(m_table->currentRow()); });
    connect(close, &QPushButton::clicked, this, &QDialog::close);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { applyRow(row); });
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &LayoutSearchDialog::updateButtons);
    connect(m_uneven, &QCheckBox::toggled, this, &LayoutSearchDialog::search);
    connect(m_live, &QCheckBox::toggled, this, [this](bool on) {
        if (on && m_stale)
            search();
    });
    connect(controller, &PlanController::planChanged, this, &LayoutSearchDialog::onPlanChanged);
    connect(controller, &PlanController::unitsChanged, this, &LayoutSearchDialog::fillTable);
    resize(1100, 430);
    updateButtons();
}

LayoutSearchDialog::~LayoutSearchDialog()
{
    if (m_worker) { // a search takes well under a second: let it end rather than kill it
        m_worker->wait();
        delete m_worker;
    }
}

LayoutSearchDialog* LayoutSearchDialog::showFor(PlanController* controller, QWidget* parent)
{
    auto* d = parent ? parent->findChild<LayoutSearchDialog*>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
    if (!d)
        d = new LayoutSearchDialog(controller, parent);
    d->show();
    d->raise();
    d->activateWindow();
    if (d->m_stale)
        d->search();
    return d;
}

nlohmann::json LayoutSearchDialog::searchKey(const nlohmann::json& document)
{
    // The search's inputs: the document less what the search chooses itself (core/search.cpp
    // varies every layout field, recompute and ZeRO/FSDP) and the time mode it overrides.
    nlohmann::json key = document;
    for (const char* k : {"tp", "pp", "virtual_stages", "pipeline_schedule", "first_stage_layers", "last_stage_layers",
                          "pipeline_layout", "cp", "dp", "ep", "etp", "zero", "fsdp"})
        if (key.contains("parallel") && key["parallel"].is_object())
            key["parallel"].erase(k);
    // Sequence parallelism off, or on because the layout needs it (Megatron-Core with EP and TP:
    // core::applyLayout turns it on), is the search's own choice too: applying such a row is not a
    // new input.
    if (key.contains("parallel") && key["parallel"].is_object()) {
        const auto sp = key["parallel"].find("sequence_parallel");
        if (sp != key["parallel"].end() &&
            (!sp->is_boolean() || !sp->get<bool>() || core::documentRequiresSequenceParallel(document)))
            key["parallel"].erase(sp);
    }
    for (const char* k : {"micro_batch", "recompute"})
        if (key.contains("training") && key["training"].is_object())
            key["training"].erase(k);
    if (key.contains("step_time") && key["step_time"].is_object())
        key["step_time"].erase("mode");
    key.erase("name");
    return key;
}

void LayoutSearchDialog::search()
{
    if (m_controller->hasErrors()) {
        m_pending = false;
        m_status->setText(tr("The inputs have errors; fix them to search: %1")
                              .arg(QString::fromStdString(core::describe(m_controller->errors().front()))));
        return;
    }
    if (m_worker) { // coalesce: one more run when this one ends, however many changes arrive
        m_pending = true;
        return;
    }
    m_pending = false;
    m_runningKey = searchKey(m_controller->document());
    m_running = std::make_shared<core::SearchResult>();
    const core::Scenario scenario = m_controller->scenario();
    auto out = m_running;
    core::SearchOptions options;
    options.unevenStages = m_uneven->isChecked();
    m_worker = QThread::create([scenario, out, options] { *out = core::searchLayouts(scenario, options); });
    connect(m_worker, &QThread::finished, this, &LayoutSearchDialog::onFinished);
    m_status->setText(tr("Searching the layouts of %1 GPUs…").arg(m_controller->scenario().cluster.gpus));
    m_worker->start();
    updateButtons();
}

void LayoutSearchDialog::onFinished()
{
    if (!m_worker)
        return;
    m_worker->deleteLater();
    m_worker = nullptr;
    m_result = std::move(m_running);
    m_resultKey = std::move(m_runningKey);
    m_stale = m_resultKey != searchKey(m_controller->document());
    ++m_runs;
    fillTable();
    if (m_pending)
        search();
    emit searchFinished();
}

void LayoutSearchDialog::onPlanChanged()
{
    if (searchKey(m_controller->document()) == m_resultKey) {
        m_stale = false;
        fillTable(); // the current layout's row may have changed
        return;
    }
    m_stale = true;
    if (m_live->isChecked() && isVisible())
        search();
    else
        fillTable();
}

QString LayoutSearchDialog::statusText() const { return m_status->text(); }

void LayoutSearchDialog::fillTable()
{
    const auto& r = *m_result;
    const auto& sc = m_controller->scenario();
    QString status =
        tr("Evaluated %1 layouts of %2 on %3 GPUs; %4 fit (%5 over memory, %6 skipped: the global batch of "
           "%7 is not a multiple of micro-batch × DP) in %8 ms. Ranked by predicted step time at a fixed global batch.")
            .arg(formatCount(double(r.evaluated)), QString::fromStdString(sc.model.name))
            .arg(sc.cluster.gpus)
            .arg(formatCount(double(r.feasible)), formatCount(double(r.rejectedMemory)),
                 formatCount(double(r.rejectedBatch)))
            .arg(sc.training.globalBatch)
            .arg(r.elapsedSeconds * 1e3, 0, 'f', 1);
    if (const auto& now = m_controller->plan().stepTime; now.valid)
        status += tr(" The scenario's layout now: %1 s, %2 tokens/s%3.")
                      .arg(now.step, 0, 'f', now.step < 100 ? 3 : 0)
                      .arg(formatCount(std::round(now.tokensPerSecond)),
                           m_controller->plan().memory.fits ? QString() : tr(", and it does not fit"));
    if (m_runs > 0 && r.best.empty())
        status += tr(" No layout fits: try more GPUs, recompute, or a smaller micro-batch.");
    if (!sc.parallel.sequenceParallel && std::any_of(r.best.begin(), r.best.end(), [&sc](const core::LayoutResult& x) {
            return core::sequenceParallelFor(sc, x.layout);
        }))
        status += tr(" Rows with EP > 1 and TP > 1 run with sequence parallelism (Megatron-Core requires it); "
                     "Apply turns it on.");
    if (m_stale && m_runs > 0)
        status = tr("<b>Out of date</b>: the scenario changed since this search; Search again. ") + status;
    m_status->setText(m_runs > 0 ? status : tr("Searching…"));

    const core::Layout current = core::layoutOf(sc);
    const int selected = m_table->currentRow();
    m_table->setRowCount(int(r.best.size()));
    for (int i = 0; i < int(r.best.size()); ++i) {
        const auto& x = r.best[std::size_t(i)];
        const auto& l = x.layout;
        const QString cells[ColumnCount] = {
            QString::number(i + 1), QString::number(l.tp),
            l.firstStageLayers > 0
                ? QStringLiteral("%1 (%2/%3)").arg(l.pp).arg(l.firstStageLayers).arg(l.lastStageLayers)
                : QString::number(l.pp),
            l.schedule == core::PipelineSchedule::DualPipe ? tr("dual") : QString::number(l.virtualStages),
            QString::number(l.cp), QString::number(l.dp),
            // Expert tensor parallelism beside EP where it differs from TP (Megatron-Core's default).
            l.ep > 1 && effectiveEtp(l) != l.tp ? tr("%1 (etp %2)").arg(l.ep).arg(effectiveEtp(l))
                                                : QString::number(l.ep),
            QString::number(l.microBatch), QString::fromLatin1(core::toString(l.recompute)), QString::number(l.zero),
            QStringLiteral("%1 s").arg(x.time.step, 0, 'f', x.time.step < 100 ? 3 : 0),
            formatCount(std::round(x.time.tokensPerSecond)), QString::number(x.time.mfu, 'f', 3),
            m_controller->formatBytes(x.memoryTotal), QString::fromStdString(x.why)};
        const bool isCurrent = sc.parallel.fsdp == core::Fsdp::None && sameLayout(l, current);
        const QString tip =
            tr("%1\ncompute %2 s, recompute %3 s, TP %4 s, CP %5 s, PP %6 s, bubble %7 s, DP %8 s, optimizer %9 s")
                .arg(QString::fromStdString(x.why))
                .arg(x.time.compute, 0, 'g', 3)
                .arg(x.time.recompute, 0, 'g', 3)
                .arg(x.time.tpComm, 0, 'g', 3)
                .arg(x.time.cpComm, 0, 'g', 3)
                .arg(x.time.ppComm, 0, 'g', 3)
                .arg(x.time.bubble, 0, 'g', 3)
                .arg(x.time.dpComm, 0, 'g', 3)
                .arg(x.time.optimizer, 0, 'g', 3) +
            (isCurrent ? tr("\nThis is the scenario's layout now.") : QString());
        for (int c = 0; c < ColumnCount; ++c) {
            auto* item = m_table->item(i, c);
            if (!item) {
                item = new QTableWidgetItem;
                m_table->setItem(i, c, item);
            }
            item->setText(cells[c]);
            item->setToolTip(tip);
            item->setTextAlignment(c == Recompute || c == Why ? Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter)
                                                              : Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
            QFont f = item->font();
            f.setBold(isCurrent);
            item->setFont(f);
        }
    }
    fitResultsColumns(m_table);
    if (selected < 0 && !r.best.empty())
        m_table->selectRow(0);
    updateButtons();
}

void LayoutSearchDialog::updateButtons()
{
    m_apply->setEnabled(!m_stale && m_table->currentRow() >= 0 && m_table->currentRow() < int(m_result->best.size()));
}

bool LayoutSearchDialog::applyRow(int row)
{
    if (m_stale || row < 0 || row >= int(m_result->best.size()))
        return false;
    m_controller->applyLayout(m_result->best[std::size_t(row)].layout);
    return true;
}

bool LayoutSearchDialog::waitForResults(int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (m_worker || m_pending) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        QThread::msleep(2);
    }
    return true;
}

} // namespace napkin::app
