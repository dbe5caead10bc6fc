// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "imbalancechart.h"

#include "chartstyle.h"

#include "moe_sweep.h"

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace napkin::charts {

ImbalanceChart::ImbalanceChart(QWidget* parent) : ChartWidget(parent), m_headline(new QLabel), m_plot(new QCustomPlot)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_headline->setWordWrap(true);
    layout->addWidget(m_headline);
    layout->addWidget(m_plot, 1);
    m_plot->setMinimumSize(240, 110);
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setName(tr("step time (predicted)"));
    m_bars->setWidth(0.5);
    m_memoryGraph = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_memoryGraph->setName(tr("memory per GPU"));
    m_memoryGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
    m_capacity = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_capacity->setName(tr("GPU memory"));
    m_plot->yAxis->setLabel(tr("step (s)"));
    m_plot->yAxis2->setVisible(true);
    for (QCPAxis* axis : {m_plot->yAxis, m_plot->yAxis2}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> log(new QCPAxisTickerLog);
        log->setSubTickCount(8);
        axis->setTicker(log);
        axis->setNumberFormat(QStringLiteral("g"));
        axis->setNumberPrecision(4); // 0.1, 10, 1000: plain numbers
    }
    m_plot->xAxis->setLabel(tr("routing imbalance: busiest expert rank's tokens / the mean"));
    m_plot->setToolTip(
        tr("moe.imbalance_sweep: the scenario re-planned with training.routing_imbalance 1.0, 1.2, 1.5 and "
           "the worst case (every token of the EP group routed to one rank). The busiest expert rank sets "
           "the pace of every MoE layer and holds the most dispatched rows; early in training, before "
           "the router balances, the worst case is what runs out of memory."));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    updateColors();
    updateGraphs();
}

QString ImbalanceChart::headline() const { return m_headline->text(); }

void ImbalanceChart::updateGraphs()
{
    if (!hasPlan())
        return;
    const auto points = core::imbalanceSweep(currentScenario());
    m_step.clear();
    m_memory.clear();
    m_labels.clear();
    QVector<double> keys;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto& p = points[i];
        const double x = double(i + 1);
        keys.push_back(x);
        m_step.push_back(p.stepSeconds);
        m_memory.push_back(p.memoryTotal);
        const QString label =
            p.label == "worst" ? tr("worst (%1)").arg(p.imbalance, 0, 'g', 3) : QString::fromStdString(p.label);
        m_labels.push_back(label);
        ticker->addTick(x, label);
    }
    const double capacity = currentPlan().memory.capacity;
    QVector<double> memoryUnits;
    const double unit = 1e9; // the axis in GB; tooltips and the headline follow the unit setting
    for (double b : m_memory)
        memoryUnits.push_back(b / unit);
    m_memoryGraph->setData(keys, memoryUnits, true);
    m_capacity->setData({0.4, double(points.size()) + 0.6}, {capacity / unit, capacity / unit}, true);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(0.4, double(std::max<std::size_t>(points.size(), 1)) + 0.6);
    // Logarithmic axes: the worst case (every token of the EP group on one rank) is tens of times the
    // balanced step and memory, and the 1.0 / 1.2 / 1.5 differences must stay readable beside it.
    double stepMin = 0, stepMax = 0;
    for (double t : m_step)
        if (t > 0) {
            stepMin = stepMin > 0 ? std::min(stepMin, t) : t;
            stepMax = std::max(stepMax, t);
        }
    if (stepMax <= 0)
        stepMin = 0.1, stepMax = 1;
    m_plot->yAxis->setRange(stepMin / 2, stepMax * 2);
    // QCPBars draws from its base value to base + value: on a logarithmic axis the base must be
    // above zero, so the bars hold value - base and end at the value.
    const double base = stepMin / 2;
    m_bars->setBaseValue(base);
    QVector<double> heights;
    for (double t : m_step)
        heights.push_back(std::max(0.0, t - base));
    m_bars->setData(keys, heights, true);
    double memMin = capacity / unit, memMax = capacity / unit;
    for (double m : memoryUnits)
        if (m > 0)
            memMin = std::min(memMin, m), memMax = std::max(memMax, m);
    if (!(memMin > 0))
        memMin = 1, memMax = std::max(memMax, 10.0);
    m_plot->yAxis2->setRange(memMin / 2, memMax * 2);
    m_plot->yAxis2->setLabel(tr("memory per GPU (GB)"));
    if (points.empty()) {
        m_headline->setText(
            tr("Routing imbalance applies to mixtures of experts with expert parallelism (parallel.ep > 1)."));
    } else {
        const auto& a = points.front();
        const auto& w = points.back();
        QString text = a.stepSeconds > 0 ? tr("Step %1 s balanced, %2 s at the worst case; ")
                                               .arg(a.stepSeconds, 0, 'g', 4)
                                               .arg(w.stepSeconds, 0, 'g', 4)
                                         : tr("Step time: set step_time.mode to predicted; ");
        text += tr("memory %1 → %2 per GPU (%3)")
                    .arg(formatBytes(a.memoryTotal), formatBytes(w.memoryTotal),
                         w.fits ? tr("fits even at the worst case") : tr("the worst case does not fit"));
        m_headline->setText(text);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImbalanceChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        updateColors();
}

void ImbalanceChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    const bool dark = chartstyle::isDark(pal);
    const QColor bar(dark ? 0xC2548A : 0x882255); // EP's colour in the step-time chart
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(chartstyle::withAlpha(bar, 0.8));
    const QColor mem(dark ? 0xF0B030 : 0xE69F00);
    m_memoryGraph->setPen(QPen(mem, 2));
    m_capacity->setPen(QPen(chartstyle::bad(pal), 1.5, Qt::DashLine));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace napkin::charts
