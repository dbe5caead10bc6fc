// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "accuracydialog.h"

#include "layoutsearchdialog.h"
#include "plancontroller.h"
#include "validationchart.h"

#include <QHeaderView>
#include <QLabel>
#include <QScreen>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

namespace napkin::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString percent(double e)
{
    return QStringLiteral("%1%2%").arg(e >= 0 ? QStringLiteral("+") : QString()).arg(100 * e, 0, 'f', 1);
}

void setRow(QTableWidget* t, int row, const QStringList& cells, const QString& tip)
{
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        item->setToolTip(tip);
        t->setItem(row, c, item);
    }
}

} // namespace

AccuracyDialog::AccuracyDialog(PlanController* controller, QWidget* parent)
    : QDialog(parent), m_controller(controller), m_summaryLabel(new QLabel), m_scenarioLabel(new QLabel),
      m_chart(new charts::ValidationChart)
{
    setWindowTitle(tr("How accurate is this?"));
    m_results = core::builtinValidationResults();
    m_summary = core::summarize(m_results);

    auto* v = new QVBoxLayout(this);
    for (QLabel* l : {m_summaryLabel, m_scenarioLabel}) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        v->addWidget(l);
    }
    m_summaryLabel->setText(summaryText());

    auto* tabs = new QTabWidget;
    m_closest = resultsTable(
        {tr("Run"), tr("GPU"), tr("Error"), tr("Alike")},
        {tr("The validated run (resources/validation-runs.json); its source in the tooltip"), tr("The run's GPU"),
         tr("Predicted / published throughput − 1: positive, the real run was slower than Napkin predicts"),
         tr("What the run shares with this scenario")});
    m_closest->setWordWrap(true);
    m_all = resultsTable(
        {tr("Run"), tr("GPU"), tr("Metric"), tr("Published"), tr("Predicted"), tr("Error"), tr("Memory"), tr("Source")},
        {tr("The validated run"), tr("The run's GPU"), tr("The published metric, in its source's convention"),
         tr("The published figure"), tr("Napkin's prediction of the same metric"),
         tr("Predicted / published − 1 (for a step time: published / predicted − 1)"),
         tr("Napkin's memory per GPU for the run (the busiest stage) against the GPU's memory: every published run "
            "ran, so one over is a finding about the ledger or the run's stated layout"),
         tr("The source")});
    // One line a run: the long source text elides in its column and reads whole in the tooltip.
    m_all->setWordWrap(false);
    m_all->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_all->setRowCount(int(m_results.size()));
    for (int i = 0; i < int(m_results.size()); ++i) {
        const auto& r = m_results[std::size_t(i)];
        const QString tip =
            qs(r.c->source) + QStringLiteral("\n") + qs(r.c->url) +
            (r.c->assumptions.empty() ? QString() : QStringLiteral("\n") + qs(r.c->assumptions.front()));
        setRow(m_all, i,
               {qs(r.c->id), qs(r.gpu), QLatin1String(core::toString(r.c->metric)),
                QString::number(r.c->published, 'g', 4),
                r.failure.empty() ? QString::number(r.predicted, 'g', 4) : qs(r.failure),
                r.failure.empty() ? percent(r.error) : QString(),
                r.failure.empty() ? tr("%1 of %2 GB%3")
                                        .arg(r.memoryPerGpu / 1e9, 0, 'f', 1)
                                        .arg(r.capacity / 1e9, 0, 'f', 0)
                                        .arg(r.fits ? QString() : tr(" (over)"))
                                  : QString(),
                qs(r.c->source)},
               tip);
    }
    tabs->addTab(m_closest, tr("Most like this scenario"));
    tabs->addTab(m_chart, tr("Predicted vs published"));
    tabs->addTab(m_all, tr("All validated runs"));
    fitResultsColumns(m_all);
    for (int c : {0, 1}) // run ids and GPU names elide past this; the whole name is in the tooltip
        m_all->setColumnWidth(c, std::min(m_all->columnWidth(c), c == 0 ? 300 : 190));
    v->addWidget(tabs, 1);
    auto* where =
        new QLabel(tr("How each run was entered and why published and predicted figures differ: docs/validation.md."));
    where->setWordWrap(true);
    v->addWidget(where);
    // Wide enough that every column of the full table shows, but never wider than the screen (a
    // 1024 x 768 projector): the table then scrolls sideways instead.
    const QRect avail = screen()->availableGeometry();
    resize(std::min(1180, avail.width() - 40), std::min(640, avail.height() - 40));
    refresh();
}

AccuracyDialog* AccuracyDialog::showFor(PlanController* controller, QWidget* parent)
{
    auto* d = parent ? parent->findChild<AccuracyDialog*>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
    if (!d)
        d = new AccuracyDialog(controller, parent);
    d->refresh();
    d->show();
    d->raise();
    d->activateWindow();
    return d;
}

QString AccuracyDialog::summaryText() const
{
    return tr("Napkin's predicted step time was checked against %1 published training runs from %2 sources: median "
              "|error| "
              "%3%, largest %4%, median error %5 (positive: the published runs were slower than predicted).")
        .arg(m_summary.n)
        .arg(m_summary.sources)
        .arg(100 * m_summary.medianAbsError, 0, 'f', 1)
        .arg(100 * m_summary.maxAbsError, 0, 'f', 1)
        .arg(percent(m_summary.medianError));
}

QString AccuracyDialog::scenarioText() const
{
    return tr("For this scenario: %1").arg(qs(core::accuracyText(m_estimate)));
}

void AccuracyDialog::refresh()
{
    m_estimate = core::accuracyFor(m_controller->scenario(), m_results, 5);
    m_scenarioLabel->setText(QStringLiteral("<b>%1</b>").arg(scenarioText().toHtmlEscaped()));
    m_closest->setRowCount(int(m_estimate.closest.size()));
    std::set<std::string> ids;
    for (int i = 0; i < int(m_estimate.closest.size()); ++i) {
        const auto& s = m_estimate.closest[std::size_t(i)];
        const auto& r = *s.result;
        ids.insert(r.c->id);
        QStringList alike;
        for (const auto& a : s.alike)
            alike << qs(a);
        setRow(m_closest, i, {qs(r.c->id), qs(r.gpu), percent(r.error), alike.join(QStringLiteral(", "))},
               tr("similarity %1 of 8.5").arg(s.score, 0, 'f', 2) + QStringLiteral("\n") + qs(r.c->source) +
                   QStringLiteral("\n") + qs(r.c->url));
    }
    fitResultsColumns(m_closest);
    m_closest->resizeRowsToContents();
    m_chart->setResults(m_results, ids);
}

} // namespace napkin::app
