// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "timelinechart.h"

#include "chartstyle.h"

#include <QEvent>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>

namespace napkin::charts {

namespace {

// Bottom to top; Okabe & Ito 2008 colours as the ledger chart's buckets.
struct Layer {
    const char* name;
    QRgb light, dark;
};
const Layer Layers[TimelineChart::LayerCount] = {
    {QT_TRANSLATE_NOOP("napkin::charts::TimelineChart", "runtime"), 0x8C8C8C, 0xA6A6A6},
    {QT_TRANSLATE_NOOP("napkin::charts::TimelineChart", "model states"), 0x0072B2, 0x4A9FE0},
    {QT_TRANSLATE_NOOP("napkin::charts::TimelineChart", "activations"), 0xE69F00, 0xF0B030},
    {QT_TRANSLATE_NOOP("napkin::charts::TimelineChart", "temporaries"), 0xCC79A7, 0xDE97C0},
};

QString eventLabel(const char* event)
{
    QString s = QString::fromLatin1(event);
    s.replace(QLatin1Char('_'), QLatin1Char(' '));
    return s;
}

} // namespace

TimelineChart::TimelineChart(QWidget* parent) : ChartWidget(parent), m_headline(new QLabel), m_plot(new QCustomPlot)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::RichText);
    connect(m_headline, &QLabel::linkActivated, this, [this](const QString& q) { emit derivationRequested(q); });
    layout->addWidget(m_headline);
    layout->addWidget(m_plot, 1);
    m_plot->setMinimumSize(240, 110);
    for (int i = 0; i < LayerCount; ++i) {
        auto* g = m_plot->addGraph();
        g->setName(tr(Layers[i].name));
        if (i > 0)
            g->setChannelFillGraph(m_plot->graph(i - 1));
    }
    auto* capacity = m_plot->addGraph();
    capacity->setName(tr("GPU memory"));
    auto* reserved = m_plot->addGraph();
    reserved->setName(tr("peak reserved"));
    m_peakLabel = new QCPItemText(m_plot);
    m_peakLabel->position->setAxes(m_plot->xAxis, m_plot->yAxis);
    m_peakLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    m_plot->xAxis->setLabel(tr("fraction of one optimizer step (most loaded GPU)"));
    m_plot->setToolTip(tr(
        "memory.timeline: runtime = CUDA context, workspaces and comm buffers; model states = weights, "
        "gradients, master copy and optimizer states; temporaries = logits and loss, gathered parameters, "
        "buckets, optimizer temporaries. Peak reserved = memory.per_gpu.total (allocated + the allocator's reserve)."));
    m_plot->xAxis->setRange(0, 1);
    // The legend in a row under the axes, clear of the curves.
    m_plot->legend->setVisible(true);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(6, 0, 6, 4));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setWrap(LayerCount + 2);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true); // re-flow the entries added above
    updateColors();
    updateGraphs();
}

// What the chart shows for the current plan, drawn first if the hidden tab fell behind.
void TimelineChart::catchUp() const
{
    if (m_stale)
        const_cast<TimelineChart*>(this)->redraw();
}
int TimelineChart::pointCount() const
{
    catchUp();
    return m_plot->graph(LayerCount - 1)->dataCount();
}
double TimelineChart::peakAllocated() const
{
    catchUp();
    return m_peak;
}
QString TimelineChart::headline() const
{
    catchUp();
    return m_headline->text();
}

void TimelineChart::updateGraphs()
{
    // A hidden tab is not redrawn on every slider step (the live-update budget); it catches up when
    // shown. Reports and tests that read the chart off screen call it with the panel hidden but
    // never shown: they draw on the first call.
    if (!isVisible() && m_drawnOnce) {
        m_stale = true;
        return;
    }
    redraw();
}

void TimelineChart::redraw()
{
    if (!hasPlan())
        return;
    m_drawnOnce = true;
    m_stale = false;
    const auto& m = currentPlan().memory;
    const bool gib = units() == Units::GiB;
    const double unit = gib ? 1073741824.0 : 1e9;
    const QString unitName = gib ? QStringLiteral("GiB") : QStringLiteral("GB");
    QVector<double> x;
    std::array<QVector<double>, LayerCount> y;
    m_peak = 0;
    double peakAt = 0;
    const char* peakEvent = "";
    for (int i = 0; i < m.timelineCount; ++i) {
        const auto& t = m.timeline[std::size_t(i)];
        x << t.at;
        const double layers[LayerCount] = {t.runtime, t.states, t.activations, t.temporaries};
        double sum = 0;
        for (int l = 0; l < LayerCount; ++l) {
            sum += std::isfinite(layers[l]) ? layers[l] : 0.0;
            y[std::size_t(l)] << sum / unit;
        }
        if (t.total > m_peak) {
            m_peak = t.total;
            peakAt = t.at;
            peakEvent = t.event;
        }
    }
    for (int l = 0; l < LayerCount; ++l)
        m_plot->graph(l)->setData(x, y[std::size_t(l)], true);
    m_plot->graph(LayerCount)->setData({0.0, 1.0}, {m.capacity / unit, m.capacity / unit}, true);
    m_plot->graph(LayerCount + 1)->setData({0.0, 1.0}, {m.total / unit, m.total / unit}, true);
    m_peakLabel->position->setCoords(peakAt, m_peak / unit);
    m_peakLabel->setPositionAlignment(Qt::AlignBottom | (peakAt < 0.2   ? Qt::AlignLeft
                                                         : peakAt > 0.8 ? Qt::AlignRight
                                                                        : Qt::AlignHCenter));
    m_peakLabel->setText(tr("peak at %1").arg(eventLabel(peakEvent)));
    m_plot->yAxis->setLabel(unitName);
    // The GPU's capacity on the chart when it is within reach; far above the curve it would flatten
    // it, and the legend gives the figure instead.
    const double top = std::max(m.total, m_peak);
    const bool capacityShown = m.capacity <= 2.5 * top;
    m_plot->yAxis->setRange(0, (capacityShown ? std::max(m.capacity, top) * 1.08 : top * 1.3) / unit);
    m_plot->graph(LayerCount)
        ->setName(capacityShown ? tr("GPU memory")
                                : tr("GPU memory %1 %2 (above)").arg(m.capacity / unit, 0, 'f', 0).arg(unitName));
    m_plot->xAxis->setRange(0, 1);
    const QString link = chartstyle::isDark(palette()) ? QStringLiteral("#86ccf2") : QStringLiteral("#005a9c");
    m_headline->setText(
        tr("Allocated through one step: peak %1 %2 at <a href=\"memory.per_gpu.total\" style=\"color:%3\">%4</a>; "
           "reserved %5 %2 (allocator reserve %6 %2) of %7 %2")
            .arg(m_peak / unit, 0, 'f', 1)
            .arg(unitName, link, eventLabel(m.peakPhase))
            .arg(m.total / unit, 0, 'f', 1)
            .arg(m.overheadAllocator / unit, 0, 'f', 1)
            .arg(m.capacity / unit, 0, 'f', 0));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void TimelineChart::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_stale)
        redraw();
}

void TimelineChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange ||
        event->type() == QEvent::FontChange) {
        updateColors();
        updateGraphs();
    }
}

void TimelineChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    const bool dark = chartstyle::isDark(pal);
    for (int i = 0; i < LayerCount; ++i) {
        const QColor c(dark ? Layers[i].dark : Layers[i].light);
        m_plot->graph(i)->setPen(QPen(c.darker(dark ? 100 : 130), 1.2));
        m_plot->graph(i)->setBrush(chartstyle::withAlpha(c, 0.75));
    }
    m_plot->graph(0)->setBrush(chartstyle::withAlpha(QColor(dark ? Layers[0].dark : Layers[0].light), 0.75));
    m_plot->graph(LayerCount)->setPen(QPen(chartstyle::bad(pal), 1.5, Qt::DashLine));
    m_plot->graph(LayerCount + 1)->setPen(QPen(pal.color(QPalette::Text), 1, Qt::DotLine));
    m_peakLabel->setColor(pal.color(QPalette::Text));
}

} // namespace napkin::charts
