// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "ledgerchart.h"

#include "buckets.h"
#include "chartstyle.h"
#include "stackedbar.h"

#include <QEvent>
#include <QFontMetrics>
#include <QFontMetricsF>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace napkin::charts {

namespace {

// The bar lies on key 0 of the (vertical) key axis; the free bands above and below it hold the
// capacity and headroom labels, so they never cover a segment.
constexpr double BarWidth = 0.5;
constexpr double KeyRange = 0.85;

bool usable(double v) { return std::isfinite(v) && v >= 0; }

} // namespace

LedgerChart::LedgerChart(QWidget* parent)
    : ChartWidget(parent), m_plot(new QCustomPlot(this)), m_values(BucketCount, 0.0)
{
    setAutoFillBackground(true); // updates stop here instead of repainting the window behind
    // Axis-parallel lines gain nothing from antialiasing and cost most of a log-scale grid's drawing.
    m_plot->setNotAntialiasedElements(QCP::aeGrid | QCP::aeSubGrid | QCP::aeAxes | QCP::aeZeroLine);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    // The legend re-wraps to the width (resizeEvent), so the plot need not be as wide as one row of it.
    m_plot->setMinimumSize(240, 140);

    // Horizontal bars: the key axis is the vertical one.
    for (int i = 0; i < BucketCount; ++i) {
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setName(tr(core::kMemoryBuckets[std::size_t(i)].label));
        bars->setWidth(BarWidth);
        bars->setAntialiased(false);
        if (i > 0)
            bars->moveAbove(m_bars[std::size_t(i - 1)]);
        m_bars[std::size_t(i)] = bars;

        auto* label = new QCPItemText(m_plot);
        label->setClipToAxisRect(true);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->setPositionAlignment(Qt::AlignCenter);
        m_segmentLabels[std::size_t(i)] = label;
    }

    m_capacityLine = new QCPItemStraightLine(m_plot);
    m_capacityLabel = new QCPItemText(m_plot);
    m_headroomLabel = new QCPItemText(m_plot);
    for (QCPItemText* label : {m_capacityLabel, m_headroomLabel}) {
        // x follows the capacity in plot coordinates, y sticks to the top or bottom of the axis rect.
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->setClipToAxisRect(false);
        label->setPadding(QMargins(6, 3, 6, 3));
    }
    QFont bold = m_headroomLabel->font();
    bold.setBold(true);
    m_headroomLabel->setFont(bold);

    m_plot->yAxis->setRange(-KeyRange, KeyRange);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    m_plot->xAxis->setRangeLower(0);

    // The legend goes in its own row under the chart: inside the axis rect it would cover the bar.
    m_plot->legend->setVisible(true);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(6, 0, 6, 6));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->legend->setIconSize(20, 12); // swatches: two columns fit a 1024-pixel window's ledger
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(4);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true); // re-flow the entries added above
    connect(m_plot, &QCustomPlot::beforeReplot, this, &LedgerChart::fitLegend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &LedgerChart::showToolTip);
    connect(m_plot, &QCustomPlot::afterLayout, this, &LedgerChart::updateSegmentLabels);

    updateColors();
    updateGraphs();
}

LedgerChart::~LedgerChart() = default;

double LedgerChart::unitBytes() const { return units() == Units::GiB ? 1024.0 * 1024.0 * 1024.0 : 1e9; }

void LedgerChart::updateGraphs()
{
    if (!hasPlan())
        return;
    const core::MemoryLedger& m = currentPlan().memory;
    const double unit = unitBytes();
    const bool gib = units() == Units::GiB;

    double total = 0;
    for (int i = 0; i < BucketCount; ++i) {
        // A missing or nonsensical bucket is drawn as nothing rather than as a NaN-wide bar.
        const double bucket = core::bucketBytes(core::kMemoryBuckets[std::size_t(i)], m);
        const double bytes = usable(bucket) ? bucket : 0.0;
        m_values[i] = bytes;
        m_bars[std::size_t(i)]->setData(QVector<double>{0.0}, QVector<double>{bytes / unit}, true);
        m_segmentLabels[std::size_t(i)]->position->setCoords((total + bytes / 2) / unit, 0);
        total += bytes;
    }

    const double capacity = usable(m.capacity) ? m.capacity : 0.0;
    m_capacityBytes = capacity;
    const auto& hw = currentPlan().hardware;
    const QString gpuName = hw.gpu ? QString::fromStdString(hw.name()) : tr("GPU");
    m_fits = capacity > 0 && total <= capacity;

    const double upper = std::max(total, capacity) * 1.1;
    m_plot->xAxis->setRange(0, upper > 0 ? upper / unit : 1.0);
    m_plot->xAxis->setLabel(gib ? tr("Memory per GPU (GiB)") : tr("Memory per GPU (GB)"));

    auto* ticker = static_cast<QCPAxisTickerText*>(m_plot->yAxis->ticker().data());
    ticker->clear();
    ticker->addTick(0, tr("total\n%1").arg(formatBytes(total)));

    const bool hasCapacity = capacity > 0;
    m_capacityLine->setVisible(hasCapacity);
    m_capacityLabel->setVisible(hasCapacity);
    m_headroomLabel->setVisible(hasCapacity);
    if (hasCapacity) {
        const double x = capacity / unit;
        m_capacityLine->point1->setCoords(x, -1);
        m_capacityLine->point2->setCoords(x, 1);
        // Labels sit on the inner side of the line, so they stay in view when the line is near an edge.
        const Qt::Alignment side = capacity >= 0.45 * upper ? Qt::AlignRight : Qt::AlignLeft;
        m_capacityLabel->position->setCoords(x, 0);
        m_capacityLabel->setPositionAlignment(side | Qt::AlignTop);
        m_capacityLabel->setText(tr("%1: %2").arg(gpuName, formatBytes(capacity)));
        m_capacityBesideLine = side == Qt::AlignRight; // placed for good after layout (updateSegmentLabels)
        m_headroomLabel->position->setCoords(x, 1);
        m_headroomLabel->setPositionAlignment(side | Qt::AlignBottom);
        m_headroomLabel->setText(m_fits ? tr("headroom %1").arg(formatBytes(capacity - total))
                                        : tr("short by %1").arg(formatBytes(total - capacity)));
    }

    updateColors();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LedgerChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    chartstyle::colourStack(m_bars, m_segmentLabels, pal,
                            [](int i, bool dark) { return chartstyle::bucketColor(i, dark); });
    const QColor fg = pal.color(QPalette::Text);
    m_capacityLine->setPen(QPen(fg, 2));
    m_capacityLabel->setColor(fg);
    m_headroomLabel->setColor(m_fits ? chartstyle::good(pal) : chartstyle::bad(pal));
}

void LedgerChart::updateSegmentLabels()
{
    placeCapacityLabel();
    // Runs after each layout pass: only now are the segments' pixel widths known. A label is shown
    // where it fits inside its segment, in full ("13.48 GB") or as the bare number.
    const double unit = unitBytes();
    const double barPixels =
        std::abs(m_plot->yAxis->coordToPixel(BarWidth / 2) - m_plot->yAxis->coordToPixel(-BarWidth / 2));
    QVector<double> inUnits;
    for (double bytes : std::as_const(m_values))
        inUnits.append(bytes / unit);
    stackedbar::fitLabels(m_plot->xAxis, {m_segmentLabels.begin(), m_segmentLabels.end()}, inUnits, barPixels,
                          [&](int i) {
                              const double v = m_values[i] / unit;
                              return QStringList{formatBytes(m_values[i]), QString::number(v, 'f', v < 10 ? 1 : 0)};
                          });
}

void LedgerChart::showToolTip(QMouseEvent* event)
{
    const QPointF pos = event->position();
    const double key = m_plot->yAxis->pixelToCoord(pos.y());
    const double value = m_plot->xAxis->pixelToCoord(pos.x()) * unitBytes();
    double total = 0;
    for (double v : std::as_const(m_values))
        total += v;
    const int i = std::abs(key) <= BarWidth / 2 && total > 0 ? stackedbar::segmentAt(m_values, value) : -1;
    if (i >= 0) {
        QToolTip::showText(event->globalPosition().toPoint(),
                           tr("<b>%1</b><br>%2 (%3% of the total)")
                               .arg(tr(core::kMemoryBuckets[std::size_t(i)].label), formatBytes(m_values[i]),
                                    QString::number(100.0 * m_values[i] / total, 'f', 1)),
                           m_plot);
        return;
    }
    QToolTip::hideText();
}

void LedgerChart::placeCapacityLabel()
{
    // The capacity and headroom labels sit beside the line, level with the bar's top and bottom. Where
    // one would run into the bar (a bar past the line, or ending close to it, as in a narrow or short
    // plot), it moves into the axis title; a title too wide for the plot drops the GPU's name.
    const bool gib = units() == Units::GiB;
    const QString axis = gib ? tr("Memory per GPU (GiB)") : tr("Memory per GPU (GB)");
    if (!m_capacityLine->visible()) {
        m_plot->xAxis->setLabel(axis);
        return;
    }
    double total = 0;
    for (double v : m_values)
        total += v;
    const double unit = unitBytes();
    const double linePx = m_plot->xAxis->coordToPixel(m_capacityLine->point1->coords().x());
    const double barEndPx = m_plot->xAxis->coordToPixel(total / unit);
    auto clear = [&](QCPItemText* label) {
        const double w = QFontMetricsF(label->font()).horizontalAdvance(label->text()) + 10;
        return m_capacityBesideLine && m_fits && linePx - w > barEndPx; // right-aligned, left of the line
    };
    const bool capacityRoom = clear(m_capacityLabel), headroomRoom = clear(m_headroomLabel);
    m_capacityLabel->setVisible(capacityRoom);
    m_headroomLabel->setVisible(headroomRoom);
    // The longest title that fits the plot: the GPU's name goes first, then the long axis name.
    const QString unitName = gib ? QStringLiteral("GiB") : QStringLiteral("GB");
    const QString capacityFull = capacityRoom ? QString() : QStringLiteral(" · ") + m_capacityLabel->text();
    const QString capacityBrief =
        capacityRoom ? QString() : QStringLiteral(" · ") + tr("capacity %1").arg(formatBytes(m_capacityBytes));
    const QString headroom = headroomRoom ? QString() : QStringLiteral(" · ") + m_headroomLabel->text();
    const QStringList candidates{axis + capacityFull + headroom, axis + capacityBrief + headroom,
                                 unitName + capacityBrief + headroom};
    const double width = m_plot->axisRect()->width();
    const QFontMetricsF fm(m_plot->xAxis->labelFont());
    // Last, two lines: the unit and the capacity, then the headroom (a 1024-px window's ledger panel).
    const QString twoLines =
        unitName + capacityBrief + (headroomRoom ? QString() : QStringLiteral("\n") + m_headroomLabel->text());
    QString title = twoLines;
    for (const QString& c : candidates)
        if (fm.horizontalAdvance(c) <= width) {
            title = c;
            break;
        }
    m_plot->xAxis->setLabel(title);
}

void LedgerChart::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    updateMinimumHeight();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// As many legend columns as the widest entry (its swatch, padding and name in the legend's font,
// which grows in lecture mode) allows at the width (this widget's: the plot fills it, and is resized after
// this widget's resizeEvent).
int LedgerChart::legendColumns() const
{
    const QFontMetrics fm(font()); // the legend's font once the plot has followed this widget's
    int widest = 0;
    for (int i = 0; i < m_plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(m_plot->legend->item(i)))
            widest = std::max(widest, fm.horizontalAdvance(item->plottable()->name()));
    const QMargins m = m_plot->legend->margins();
    const int entry = widest + m_plot->legend->iconSize().width() + m_plot->legend->iconTextPadding() + 16 +
                      m_plot->legend->columnSpacing();
    return std::clamp((width() - m.left() - m.right() - 12) / std::max(entry, 1), 1, BucketCount);
}

void LedgerChart::fitLegend()
{
    const int columns = legendColumns();
    if (m_plot->legend->wrap() != columns) {
        m_plot->legend->setWrap(columns);
        m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true); // re-flow the existing entries
    }
}

// Room for every legend row, the two axis lines and a bar tall enough for its labels: a splitter may
// not squeeze the plot below it (QCustomPlot would draw the legend rows over each other). Set from
// resize and font changes, outside a replot, so the layout resizes the plot before it is drawn.
void LedgerChart::updateMinimumHeight()
{
    const QFontMetrics fm(font()); // the legend's font once the plot has followed this widget's
    const int columns = legendColumns();
    const int rows = (m_plot->legend->itemCount() + columns - 1) / columns;
    const QMargins m = m_plot->legend->margins();
    const int line = std::max(fm.height(), m_plot->legend->iconSize().height()) + 4;
    const int needed =
        std::max(140, rows * (line + m_plot->legend->rowSpacing()) + m.top() + m.bottom() + 6 + 3 * fm.height() + 60);
    if (m_plot->minimumHeight() != needed)
        m_plot->setMinimumHeight(needed);
}

void LedgerChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        updateColors();
        if (event->type() == QEvent::FontChange)
            updateMinimumHeight();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

} // namespace napkin::charts
