// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "steptimechart.h"

#include "chartstyle.h"
#include "stackedbar.h"

#include <QEvent>
#include <QFontMetrics>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace napkin::charts {

namespace {

constexpr double BarWidth = 0.5;
constexpr double KeyRange = 0.9;

struct Part {
    const char* name;
    const char* why; // one sentence for the tooltip
    double core::StepTimeBreakdown::*field;
};
// The order of StepTimeBreakdown and of the time.step_seconds derivation (core/estimate_time.cpp).
const Part Parts[StepTimeChart::PartCount] = {
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "compute"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Forward and backward of every micro-batch, each op at its achievable rate."),
     &core::StepTimeBreakdown::compute},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "recompute"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Forward work done again for activation recomputation (selective or full)."),
     &core::StepTimeBreakdown::recompute},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "TP"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Tensor-parallel all-reduces (or all-gather + reduce-scatter with SP), not overlapped."),
     &core::StepTimeBreakdown::tpComm},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "CP"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Context-parallel K/V ring traffic that attention does not hide."),
     &core::StepTimeBreakdown::cpComm},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "EP"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Expert-parallel dispatch and combine all-to-all of the MoE layers (busiest rank), exposed: all "
                       "of it, or with DualPipe what the paired chunk does not hide."),
     &core::StepTimeBreakdown::epComm},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "PP"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Pipeline point-to-point sends of activations and their gradients."),
     &core::StepTimeBreakdown::ppComm},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "bubble"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "Idle pipeline: (p - 1)/v micro-batch slots (Narayanan et al. "
                                                        "2021); DualPipe (p/2 - 1)(F&B + B - 3W) (DeepSeek-V3)."),
     &core::StepTimeBreakdown::bubble},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "DP"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Data-parallel gradient and parameter traffic not hidden behind the backward pass."),
     &core::StepTimeBreakdown::dpComm},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "optimizer"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Optimizer update: the states read and written once at achievable HBM bandwidth."),
     &core::StepTimeBreakdown::optimizer},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "offload"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Offload: host-link and NVMe traffic not hidden, and the optimizer update on the CPU."),
     &core::StepTimeBreakdown::offload},
    {QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart", "overheads"),
     QT_TRANSLATE_NOOP("napkin::charts::StepTimeChart",
                       "Kernel launches, gradient clipping and checkpoint saves; data loading is assumed hidden."),
     &core::StepTimeBreakdown::overheads},
};

// Okabe & Ito 2008 (as the ledger chart), grey for the idle bubble; lighter shades in dark mode.
QColor partColor(int i, bool dark)
{
    // Okabe-Ito order, EP in Tol's wine between CP and PP.
    static const QRgb light[StepTimeChart::PartCount] = {0x0072B2, 0x56B4E9, 0xE69F00, 0xF0E442, 0x882255, 0xCC79A7,
                                                         0x8C8C8C, 0x009E73, 0xD55E00, 0x7B3294, 0x000000};
    static const QRgb darkShades[StepTimeChart::PartCount] = {
        0x4A9FE0, 0x86CCF2, 0xF0B030, 0xF0E442, 0xC2548A, 0xDE97C0, 0xA6A6A6, 0x2DBE8F, 0xFF8A3D, 0xB68ACB, 0xE0E0E0};
    return QColor(dark ? darkShades[i] : light[i]);
}

QString seconds(double s)
{
    if (s >= 100)
        return QStringLiteral("%1 s").arg(s, 0, 'f', 0);
    if (s >= 0.1)
        return QStringLiteral("%1 s").arg(s, 0, 'g', 3);
    return QStringLiteral("%1 ms").arg(1e3 * s, 0, 'g', 3);
}

} // namespace

StepTimeChart::StepTimeChart(QWidget* parent)
    : ChartWidget(parent), m_headline(new QLabel), m_plot(new QCustomPlot(this)), m_links(new QLabel),
      m_values(PartCount, 0.0)
{
    setAutoFillBackground(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->setSpacing(2);
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::RichText);
    m_headline->setToolTip(tr("Click the step time for its derivation."));
    connect(m_headline, &QLabel::linkActivated, this, [this](const QString& q) { emit derivationRequested(q); });
    m_links->setWordWrap(true);
    m_links->setToolTip(tr("Megatron rank order (TP, CP, DP, PP from the innermost): a group crosses nodes once it "
                           "spans more than gpus_per_node."));
    layout->addWidget(m_headline);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_links);
    m_plot->setMinimumSize(240, 110);
    m_plot->setNotAntialiasedElements(QCP::aeGrid | QCP::aeSubGrid | QCP::aeAxes | QCP::aeZeroLine);

    for (int i = 0; i < PartCount; ++i) {
        auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
        bars->setName(tr(Parts[i].name));
        bars->setWidth(BarWidth);
        bars->setAntialiased(false);
        if (i > 0)
            bars->moveAbove(m_bars[std::size_t(i - 1)]);
        m_bars[std::size_t(i)] = bars;
        auto* label = new QCPItemText(m_plot);
        label->setClipToAxisRect(true);
        label->position->setAxes(m_plot->xAxis, m_plot->yAxis);
        label->setPositionAlignment(Qt::AlignCenter);
        m_labels[std::size_t(i)] = label;
    }
    // Two rows: the prediction at achievable rates (key 1) above the same layout at the spec
    // sheet's peaks on nominal links (key 0, time.breakdown_at_peak).
    m_plot->yAxis->setRange(-KeyRange + 0.3, 1 + KeyRange - 0.3);
    m_plot->yAxis->setTickLength(0, 0);
    m_plot->yAxis->setSubTicks(false);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTick(1, tr("predicted"));
    ticker->addTick(0, tr("at spec peak"));
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->xAxis->setLabel(tr("Seconds per optimizer step (slowest pipeline stage)"));

    m_plot->legend->setVisible(true);
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(6, 0, 6, 4));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->legend->setWrap(PartCount);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] {
        const int columns = std::clamp(m_plot->width() / 110, 2, PartCount);
        if (m_plot->legend->wrap() != columns) {
            m_plot->legend->setWrap(columns);
            m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true);
        }
    });

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &StepTimeChart::showToolTip);
    connect(m_plot, &QCustomPlot::mousePress, this,
            [this] { emit derivationRequested(QStringLiteral("time.step_seconds")); });
    connect(m_plot, &QCustomPlot::afterLayout, this, &StepTimeChart::updateSegmentLabels);
    updateColors();
    updateGraphs();
}

StepTimeChart::~StepTimeChart() = default;

QString StepTimeChart::partName(int part) { return part >= 0 && part < PartCount ? tr(Parts[part].name) : QString(); }
QString StepTimeChart::headline() const { return m_headline->text(); }
QString StepTimeChart::linksText() const { return m_links->text(); }
QStringList StepTimeChart::rowLabels() const
{
    const auto ticker = m_plot->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    return ticker ? QStringList(ticker->ticks().values()) : QStringList();
}

void StepTimeChart::updateGraphs()
{
    if (!hasPlan())
        return;
    const auto& plan = currentPlan();
    const auto& st = plan.stepTime;
    const auto& sc = currentScenario();
    double total = 0;
    const auto& peak = plan.stepTimeAtPeak;
    for (int i = 0; i < PartCount; ++i) {
        const double v = st.valid ? st.*(Parts[i].field) : 0.0;
        const double pv = peak.valid ? peak.*(Parts[i].field) : 0.0;
        m_values[i] = std::isfinite(v) && v > 0 ? v : 0.0; // never a NaN-wide bar
        m_bars[std::size_t(i)]->setData(QVector<double>{0.0, 1.0},
                                        QVector<double>{std::isfinite(pv) && pv > 0 ? pv : 0.0, m_values[i]}, true);
        m_labels[std::size_t(i)]->position->setCoords(total + m_values[i] / 2, 1);
        total += m_values[i];
    }
    m_plot->xAxis->setRange(0, total > 0 ? total * 1.02 : 1.0);
    // The spec-peak row only where the plan has it: a plan on an assumed MFU times its layout at
    // achievable rates for this chart but not at peak (core estimate_time.cpp), and an empty row
    // labelled "at spec peak" read as a zero.
    auto ticker = m_plot->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    if (ticker && int(ticker->ticks().size()) != (peak.valid ? 2 : 1)) {
        ticker->clear();
        ticker->addTick(1, tr("predicted"));
        if (peak.valid)
            ticker->addTick(0, tr("at spec peak"));
    }
    m_plot->yAxis->setRange(peak.valid ? -KeyRange + 0.3 : 1 - KeyRange + 0.3, 1 + KeyRange - 0.3);

    // The step time is a link to its derivation, in a colour that reads on the theme's background
    // (a label keeps the link colour of its first layout otherwise).
    const QString link = chartstyle::isDark(palette()) ? QStringLiteral("#86ccf2") : QStringLiteral("#005a9c");
    const QString step =
        QStringLiteral("<a href=\"time.step_seconds\" style=\"color:%1\">%2</a>").arg(link, seconds(st.step));
    const QString numbers = tr("step %1 · MFU %2 (HFU %3, ceiling %5) · %4 tokens/s%6")
                                .arg(step)
                                .arg(st.mfu, 0, 'f', 2)
                                .arg(st.hfu, 0, 'f', 2)
                                .arg(formatCount(std::round(st.tokensPerSecond)))
                                .arg(st.executedFlops > 0 && plan.hardware.peakFlops > 0
                                         ? plan.compute.flopsPerStep / st.executedFlops *
                                               plan.hardware.achievableFlops / plan.hardware.peakFlops
                                         : 0.0,
                                     0, 'f', 2)
                                .arg(peak.valid ? tr(" · at spec peak %1").arg(seconds(peak.step)) : QString());
    if (!st.valid)
        m_headline->setText(tr("<b>No step-time prediction</b> for this plan (no layer ops to time)."));
    else if (plan.time.mode == std::string_view("predicted"))
        m_headline->setText(tr("<b>Predicted</b>: %1").arg(numbers));
    else
        m_headline->setText(
            tr("<b>prediction (the plan uses MFU %1)</b>: %2").arg(sc.cluster.mfu, 0, 'f', 2).arg(numbers));

    // Which links each parallel group uses: sizes from the scenario and plan, bandwidths from core.
    struct Group {
        const char* name;
        std::int64_t size;
        double bandwidth;
        bool crosses;
    };
    const Group groups[] = {{"TP", sc.parallel.tp, st.tpBandwidth, st.tpCrossesNodes},
                            {"CP", sc.parallel.cp, st.cpBandwidth, st.cpCrossesNodes},
                            {"DP", plan.compute.dataParallel, st.dpBandwidth, st.dpCrossesNodes},
                            {"PP", sc.parallel.pp, st.ppBandwidth, st.ppCrossesNodes}};
    QStringList links;
    for (const auto& g : groups)
        if (g.size > 1)
            links << tr("%1 %2 %3 at %4 GB/s")
                         .arg(QLatin1String(g.name))
                         .arg(g.size)
                         .arg(g.crosses ? tr("crosses nodes") : tr("inside a node"))
                         .arg(g.bandwidth / 1e9, 0, 'f', g.bandwidth < 1e10 ? 1 : 0);
    m_links->setText(links.isEmpty() ? tr("One GPU: no communication.")
                                     : tr("Links (one direction, per GPU, %1 GPUs per node): %2")
                                           .arg(sc.parallel.gpusPerNode)
                                           .arg(links.join(QStringLiteral("; "))));
    updateColors();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StepTimeChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    chartstyle::colourStack(m_bars, m_labels, pal, [](int i, bool dark) { return partColor(i, dark); });
}

void StepTimeChart::updateSegmentLabels()
{
    // After layout the pixel widths are known: label a segment where its text fits inside it.
    const double barPixels =
        std::abs(m_plot->yAxis->coordToPixel(1 + BarWidth / 2) - m_plot->yAxis->coordToPixel(1 - BarWidth / 2));
    stackedbar::fitLabels(m_plot->xAxis, {m_labels.begin(), m_labels.end()}, m_values, barPixels, [this](int i) {
        return QStringList{tr("%1 %2").arg(tr(Parts[i].name), seconds(m_values[i])), seconds(m_values[i])};
    });
}

void StepTimeChart::showToolTip(QMouseEvent* event)
{
    const QPointF pos = event->position();
    const double key = m_plot->yAxis->pixelToCoord(pos.y());
    const double x = m_plot->xAxis->pixelToCoord(pos.x());
    double total = 0;
    for (double v : std::as_const(m_values))
        total += v;
    const int i =
        std::abs(key - 1) <= BarWidth / 2 && total > 0 ? stackedbar::segmentAt(m_values, x) : -1; // the predicted row
    if (i >= 0) {
        QToolTip::showText(event->globalPosition().toPoint(),
                           tr("<b>%1</b>: %2 (%3% of the step)<br>%4<br><i>Click for the derivation.</i>")
                               .arg(tr(Parts[i].name), seconds(m_values[i]),
                                    QString::number(100.0 * m_values[i] / total, 'f', 1), tr(Parts[i].why)),
                           m_plot);
        return;
    }
    QToolTip::hideText();
}

void StepTimeChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        updateGraphs(); // colours, and the headline's link colour
}

} // namespace napkin::charts
