// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "stageschart.h"

#include "chartstyle.h"

#include <QEvent>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace napkin::charts {

namespace {

constexpr double BarWidth = 0.6;

// The ledger's colour of tensor bucket i (its place in core::kMemoryBuckets).
int ledgerIndex(int tensorIndex) { return int(&core::tensorBucket(tensorIndex) - core::kMemoryBuckets.data()); }

double usable(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

} // namespace

StagesChart::StagesChart(QWidget* parent) : ChartWidget(parent), m_plot(new QCustomPlot(this))
{
    setAutoFillBackground(true);
    m_plot->setNotAntialiasedElements(QCP::aeGrid | QCP::aeSubGrid | QCP::aeAxes | QCP::aeZeroLine);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setMinimumSize(240, 110);
    QCPBars* below = nullptr;
    for (int i = 0; i < core::kTensorBucketCount; ++i) {
        auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(QLatin1String(core::tensorBucket(i).label));
        bars->setWidth(BarWidth);
        if (below)
            bars->moveAbove(below);
        below = bars;
        m_bars[std::size_t(i)] = bars;
    }
    m_roomLine = new QCPItemStraightLine(m_plot);
    m_roomLabel = new QCPItemText(m_plot);
    m_roomLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_roomLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_roomLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_mostLoaded = new QCPItemText(m_plot);
    m_mostLoaded->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    m_plot->yAxis->setRangeLower(0);
    m_plot->xAxis->setLabel(tr("pipeline stage (first to last)"));
    // The legend in its own row under the chart, as the ledger's.
    m_plot->legend->setVisible(true);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(6, 0, 6, 6));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->legend->setWrap(3);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &StagesChart::showToolTip);
    updateColors();
}

StagesChart::~StagesChart() = default;

void StagesChart::updateGraphs()
{
    if (!hasPlan())
        return;
    const auto& m = currentPlan().memory;
    const double unit = unitBytes(units());
    const auto& stages = m.perStage;
    QVector<double> keys;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    // At most ~16 tick labels: PP 64 labels every fourth stage.
    const std::size_t every = std::max<std::size_t>(1, (stages.size() + 15) / 16);
    for (std::size_t s = 0; s < stages.size(); ++s) {
        keys.push_back(double(s));
        if (s % every == 0 || std::int64_t(s) == m.mostLoadedStage)
            ticker->addTick(double(s), QString::number(s));
    }
    double top = 0;
    for (int i = 0; i < core::kTensorBucketCount; ++i) {
        auto& values = m_values[std::size_t(i)];
        values.clear();
        QVector<double> heights;
        for (const auto& stage : stages) {
            values.push_back(usable(core::bucketBytes(core::tensorBucket(i), stage)));
            heights.push_back(values.back() / unit);
        }
        m_bars[std::size_t(i)]->setData(keys, heights, true);
        // Buckets no stage holds stay out of the legend.
        const bool any = std::any_of(values.begin(), values.end(), [](double v) { return v > 0; });
        m_bars[std::size_t(i)]->setVisible(any);
        if (any)
            m_bars[std::size_t(i)]->addToLegend();
        else
            m_bars[std::size_t(i)]->removeFromLegend();
    }
    for (const auto& stage : stages)
        top = std::max(top, usable(stage.tensors));
    // The room a stage's tensors have: memory.tensor_room, the GPU's capacity less the runtime's own
    // overhead (core/estimate_memory.cpp, with its derivation).
    m_room = usable(m.tensorRoom);
    m_roomLine->point1->setCoords(0, m_room / unit);
    m_roomLine->point2->setCoords(1, m_room / unit);
    m_roomLabel->position->setCoords(0.995, m_room / unit);
    m_roomLabel->setText(
        tr("GPU memory %1 less the runtime overhead %2").arg(formatBytes(m.capacity), formatBytes(m.overhead)));
    const double most =
        stages.empty()
            ? 0
            : usable(
                  stages[std::size_t(std::clamp<std::int64_t>(m.mostLoadedStage, 0, std::int64_t(stages.size()) - 1))]
                      .tensors);
    m_mostLoaded->position->setCoords(double(m.mostLoadedStage), most / unit);
    m_mostLoaded->setText(tr("most loaded"));
    m_mostLoaded->setVisible(stages.size() > 1);
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setRange(-0.6, double(std::max<std::size_t>(stages.size(), 1)) - 0.4);
    m_plot->yAxis->setRange(0, std::max({top, m_room, 1.0}) * 1.18 / unit);
    m_plot->yAxis->setLabel(tr("tensors per GPU (%1)").arg(units() == Units::GiB ? tr("GiB") : tr("GB")));
    updateColors();
}

void StagesChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    const bool dark = chartstyle::isDark(pal);
    const QColor bg = pal.color(QPalette::Base);
    for (int i = 0; i < core::kTensorBucketCount; ++i) {
        m_bars[std::size_t(i)]->setPen(QPen(bg, 1));
        m_bars[std::size_t(i)]->setBrush(chartstyle::bucketColor(ledgerIndex(i), dark));
    }
    const bool fits = !hasPlan() || currentPlan().memory.fits;
    const QColor line = fits ? pal.color(QPalette::Text) : chartstyle::bad(pal);
    m_roomLine->setPen(QPen(line, 1.5, Qt::DashLine));
    m_roomLabel->setColor(line);
    m_roomLabel->setFont(font());
    m_mostLoaded->setColor(pal.color(QPalette::Text));
    m_mostLoaded->setFont(font());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StagesChart::showToolTip(QMouseEvent* event)
{
    if (!hasPlan())
        return;
    const auto& stages = currentPlan().memory.perStage;
    const double x = m_plot->xAxis->pixelToCoord(event->position().x());
    const auto s = std::llround(x);
    if (s < 0 || s >= std::int64_t(stages.size()) || std::fabs(x - double(s)) > BarWidth / 2) {
        QToolTip::hideText();
        return;
    }
    const auto& stage = stages[std::size_t(s)];
    QString text = tr("<b>Stage %1</b>: %2 parameters, %3 micro-batches in flight<br>")
                       .arg(s)
                       .arg(stage.params, 0, 'g', 4)
                       .arg(stage.inFlight, 0, 'g', 3);
    for (int i = 0; i < core::kTensorBucketCount; ++i)
        text += QStringLiteral("%1: %2<br>")
                    .arg(QLatin1String(core::tensorBucket(i).title), formatBytes(m_values[std::size_t(i)][s]));
    text += tr("<b>Tensors: %1</b> (memory.per_stage[%2])").arg(formatBytes(stage.tensors)).arg(s);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void StagesChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        updateColors();
}

} // namespace napkin::charts
