// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "rooflinechart.h"

#include "calibration.h"
#include "calibrationoverlay.h"
#include "chartstyle.h"
#include "format.h"
#include "roofline.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace napkin::charts {

namespace {

constexpr double Tera = 1e12;

bool positive(double v) { return std::isfinite(v) && v > 0; }
bool plottable(const core::RooflineOp& op) { return positive(op.intensity) && positive(op.attainable); }

// "989", "67", "3.35": three significant digits, no exponent for the magnitudes on this chart.
QString compact(double v) { return v >= 100 ? QString::number(v, 'f', 0) : QString::number(v, 'g', 3); }

double decadeBelow(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeAbove(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

// Memory-bound and compute-bound points: vermillion and blue from Okabe & Ito's colour-blind-safe
// palette, lightened in dark mode.
QColor boundColor(core::Bound b, bool dark)
{
    if (b == core::Bound::Memory)
        return dark ? QColor(0xFF, 0x8F, 0x4D) : QColor(0xD5, 0x5E, 0x00);
    return dark ? QColor(0x56, 0xB4, 0xE9) : QColor(0x00, 0x72, 0xB2);
}

// The seeds' op table (CS336 lecture 2): square bf16 weights of a 4096-wide layer, three batch sizes,
// and the elementwise and BLAS-1/2 ops of the same width. Where each label goes keeps GEMM M=1 and
// matrix-vector, which sit on the same spot (I ≈ 1), apart.
struct SeedOp {
    const char* name;
    core::OpUnit unit;
    core::OpCost cost;
    Qt::Alignment labelSide;
};

std::vector<SeedOp> seedOps()
{
    constexpr double n = 4096, e = 2; // bf16
    const Qt::Alignment belowRight = Qt::AlignLeft | Qt::AlignTop;
    return {
        {"GEMM M=1", core::OpUnit::Tensor, core::gemmCost(1, n, n, e), Qt::AlignRight | Qt::AlignBottom},
        {"GEMM M=128", core::OpUnit::Tensor, core::gemmCost(128, n, n, e), belowRight},
        {"GEMM M=1024", core::OpUnit::Tensor, core::gemmCost(1024, n, n, e), Qt::AlignHCenter | Qt::AlignTop},
        {"ReLU", core::OpUnit::Vector, core::reluCost(n, e), belowRight},
        {"GELU", core::OpUnit::Vector, core::geluCost(n, e), belowRight},
        {"dot product", core::OpUnit::Vector, core::dotCost(n, e), Qt::AlignRight | Qt::AlignBottom},
        {"matrix-vector", core::OpUnit::Vector, core::matvecCost(n, e), belowRight},
    };
}

} // namespace

RooflineChart::RooflineChart(QWidget* parent) : ChartWidget(parent), m_plot(new QCustomPlot(this))
{
    setAutoFillBackground(true); // updates stop here instead of repainting the window behind
    // Axis-parallel lines gain nothing from antialiasing and cost most of a log-scale grid's drawing.
    m_plot->setNotAntialiasedElements(QCP::aeGrid | QCP::aeSubGrid | QCP::aeAxes | QCP::aeZeroLine);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    auto* toolbar = new QHBoxLayout;
    toolbar->setContentsMargins(6, 4, 6, 0);
    m_seedBox = new QCheckBox(tr("Seeds' op table (bf16, n = 4096)"), this);
    m_seedBox->setToolTip(tr("Overlay the lecture's examples: GEMM X[M×4096]·W[4096×4096] at M = 1, 128, 1024, "
                             "ReLU, GELU, dot product and matrix-vector"));
    toolbar->addWidget(m_seedBox);
    toolbar->addStretch();
    layout->addLayout(toolbar);
    layout->addWidget(m_plot, 1);
    m_plot->setMinimumHeight(140); // 1280x720 and 1024x768 windows (issue 20)

    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
        ticker->setLogBase(10);
        ticker->setSubTickCount(8);
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(ticker);
        axis->setNumberFormat(QStringLiteral("g"));
        axis->setNumberPrecision(6);
        axis->grid()->setSubGridVisible(true);
    }
    m_plot->xAxis->setLabel(tr("Arithmetic intensity (FLOP/byte)"));
    m_plot->yAxis->setLabel(tr("Attainable (TFLOP/s)"));
    m_plot->legend->setVisible(true);
    // The legend sits in its own row under the axes: inside them it would hide labels or points.
    auto* legendRow = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(1, 0, legendRow);
    legendRow->setMargins(QMargins(6, 0, 6, 4));
    legendRow->addElement(0, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(2);

    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &RooflineChart::showToolTip);
    connect(m_seedBox, &QCheckBox::toggled, this, &RooflineChart::setShowSeedOps); // tooltip bytes

    updateGraphs();
}

RooflineChart::~RooflineChart() = default;

void RooflineChart::setShowSeedOps(bool show)
{
    if (show == m_showSeedOps)
        return;
    m_showSeedOps = show;
    m_seedBox->setChecked(show);
    updateGraphs();
}

QVector<QPointF> RooflineChart::opPoints() const
{
    QVector<QPointF> out;
    for (const Point& p : m_opPoints)
        out.append(QPointF(p.op.intensity, p.op.attainable));
    return out;
}

QVector<QPointF> RooflineChart::seedOpPoints() const
{
    QVector<QPointF> out;
    for (const Point& p : m_seedPoints)
        out.append(QPointF(p.op.intensity, p.op.attainable));
    return out;
}

void RooflineChart::onPlanSet()
{
    if (!hasPlan())
        return;
    // Many inputs (GPU count, tokens, price, ZeRO stage) leave one layer's roofline unchanged; a
    // replot then costs a millisecond of a slider drag for nothing.
    const core::Plan& plan = currentPlan();
    std::vector<double> drawn{plan.hardware.peakFlops, plan.hardware.vectorFlops, plan.hardware.bandwidth,
                              plan.hardware.peakFlops16};
    drawn.reserve(4 + 2 * plan.ops.size());
    // A calibration profile adds spec ceilings and measured points: its points' rates tell profiles apart.
    double measured = 0;
    if (const auto& cal = plan.hardware.gpu ? plan.hardware.gpu->calibration : nullptr)
        for (const auto& pt : cal->measuredDevice().points)
            measured += pt.flopsPerSecond();
    drawn.push_back(measured);
    for (const auto& op : plan.ops) {
        drawn.push_back(op.flops);
        drawn.push_back(op.bytes);
    }
    if (drawn == m_drawn)
        return;
    m_drawn = std::move(drawn);
    updateGraphs();
}

void RooflineChart::updateGraphs()
{
    if (!hasPlan())
        return;
    const core::Plan& plan = currentPlan();
    const core::HardwareSummary& hw = plan.hardware;
    const QPalette pal = palette();
    const bool dark = chartstyle::isDark(pal);
    const QColor fg = pal.color(QPalette::Text);
    QFont small = font(); // this widget's: the plot may not have the new one yet (chartstyle::plotFont)
    small.setPointSizeF(small.pointSizeF() * 0.9);

    m_plot->clearGraphs();
    m_plot->clearItems();
    chartstyle::applyPalette(m_plot, pal);

    m_opPoints.clear();
    for (const core::RooflineOp& op : plan.ops)
        if (plottable(op)) // a zero or NaN has no place on log axes
            m_opPoints.push_back({op, false});
    m_seedPoints.clear();
    const std::vector<SeedOp> seeds = seedOps();
    if (m_showSeedOps)
        for (const SeedOp& s : seeds)
            if (const core::RooflineOp op = core::makeOp(s.name, core::Pass::Forward, s.unit, s.cost, hw);
                plottable(op))
                m_seedPoints.push_back({op, true});

    // Ceilings. Each is drawn only where the GPU has the number: no bandwidth, no slope.
    const double bw = hw.bandwidth;
    const bool hasPeak = positive(hw.peakFlops), hasBw = positive(bw);
    const double ridge = positive(hw.ridge) ? hw.ridge : (hasPeak && hasBw ? hw.peakFlops / bw : 0.0);
    const bool hasVector = positive(hw.vectorFlops) && hasBw;
    // An FP8 / FP4 recipe keeps attention and the output layer in 16 bits: a second, lower roof.
    const bool twoRoofs =
        hasPeak && hw.lowPrecisionGemms != 0 && positive(hw.peakFlops16) && hw.peakFlops16 < hw.peakFlops;

    // Ranges: whole decades around every point and ceiling corner, with room above the peak for its label.
    double xlo = HUGE_VAL, xhi = 0, ylo = HUGE_VAL, yhi = 0;
    auto include = [&](double x, double y) {
        if (positive(x)) {
            xlo = std::min(xlo, x);
            xhi = std::max(xhi, x);
        }
        if (positive(y)) {
            ylo = std::min(ylo, y / Tera);
            yhi = std::max(yhi, y / Tera);
        }
    };
    for (const auto* points : {&m_opPoints, &m_seedPoints})
        for (const Point& p : *points)
            include(p.op.intensity, p.op.attainable);
    if (hasPeak)
        include(ridge, hw.peakFlops);
    if (hasVector)
        include(hw.vectorFlops / bw, hw.vectorFlops);
    for (const auto& [x, y] : calibrationoverlay::extents(hw))
        include(x, y);
    if (xhi <= 0)
        xlo = 0.1, xhi = 100;
    if (yhi <= 0)
        ylo = 1, yhi = 100;
    xlo = decadeBelow(xlo / 2);
    xhi = decadeAbove(xhi * 3);
    ylo = decadeBelow(ylo / 3);
    // Two roofs take a two-line label above the higher one: one more decade of room for it.
    yhi = decadeAbove(yhi * (twoRoofs ? 12 : 4));
    m_plot->xAxis->setRange(xlo, xhi);
    m_plot->yAxis->setRange(ylo, yhi);

    auto addLine = [&](const QVector<double>& xs, const QVector<double>& ys, const QPen& pen) {
        QCPGraph* g = m_plot->addGraph();
        g->setData(xs, ys, true);
        g->setPen(pen);
        g->removeFromLegend();
        return g;
    };
    auto addText = [&](double x, double y, const QString& text, Qt::Alignment align, const QColor& color) {
        auto* t = new QCPItemText(m_plot);
        t->position->setCoords(x, y);
        t->setPositionAlignment(align);
        t->setText(text);
        t->setColor(color);
        t->setFont(small);
        t->setPadding(QMargins(4, 2, 4, 2));
        return t;
    };

    const QPen roofPen(fg, 2);
    if (hasBw) {
        // Roofline: y = beta · I up to the ridge, then the flat compute ceiling (Williams et al. 2009).
        const double slopeEnd = hasPeak ? ridge : xhi;
        QVector<double> xs{xlo, slopeEnd}, ys{bw * xlo / Tera, bw * slopeEnd / Tera};
        if (hasPeak)
            xs.append(xhi), ys.append(hw.peakFlops / Tera);
        addLine(xs, ys, roofPen);
        // The label sits above the slope, past the middle of its visible part: the seeds' labels
        // crowd the low end.
        const double x0 = std::max(xlo, ylo * Tera / bw);
        const double xl = x0 * std::pow(slopeEnd / x0, 0.55);
        // Extra right and bottom padding keeps the text's corner off the line it labels.
        const bool bwMeasured = hw.gpu && hw.gpu->calibration && hw.gpu->calibration->bandwidthMeasured();
        addText(xl, bw * xl / Tera,
                (bwMeasured ? tr("measured memory %1 TB/s") : tr("memory %1 TB/s")).arg(compact(bw / Tera)),
                Qt::AlignRight | Qt::AlignBottom, fg)
            ->setPadding(QMargins(4, 2, 12, 8));
    } else if (hasPeak) {
        addLine({xlo, xhi}, {hw.peakFlops / Tera, hw.peakFlops / Tera}, roofPen);
    }
    if (hasPeak) {
        // Above the roof and left of the knee nothing can be plotted; right of it the compute-bound
        // ops crowd the roof.
        const double x = hasBw ? ridge : xhi;
        // With two roofs the label takes two lines: on one it ran past the plot's left edge at
        // 1024 x 768 (the knee sits left of the middle for FP8 peaks).
        QCPItemText* peak = addText(
            x, hw.peakFlops / Tera,
            (hw.source().rfind("measured", 0) == 0 ? tr("measured %1 peak %2 TFLOP/s")
                                                   : tr("%1 tensor peak %2 TFLOP/s"))
                    .arg(QString::fromUtf8(hw.computeDtype), compact(hw.peakFlops / Tera)) +
                (twoRoofs ? tr("\nbf16 %1 (dotted: attention, output layer)").arg(compact(hw.peakFlops16 / Tera))
                          : QString()),
            Qt::AlignRight | Qt::AlignBottom, fg);
        peak->setPadding(QMargins(4, 2, 10, 3));
        peak->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (twoRoofs && hasBw) {
        // The 16-bit roof of attention and the output layer.
        QPen dotted(chartstyle::withAlpha(fg, 0.8), 1.5, Qt::DotLine);
        addLine({hw.peakFlops16 / bw, xhi}, {hw.peakFlops16 / Tera, hw.peakFlops16 / Tera}, dotted);
        // Named in the peak's label: the two roofs are too close for a label of their own.
    }
    if (hasVector) {
        QPen dashed(chartstyle::withAlpha(fg, 0.8), 1.5, Qt::DashLine);
        addLine({hw.vectorFlops / bw, xhi}, {hw.vectorFlops / Tera, hw.vectorFlops / Tera}, dashed);
        addText(xhi, hw.vectorFlops / Tera, tr("fp32 vector %1 TFLOP/s").arg(compact(hw.vectorFlops / Tera)),
                Qt::AlignRight | Qt::AlignBottom, chartstyle::withAlpha(fg, 0.85));
    }
    if (hasPeak && hasBw) {
        // The ridge: a marker on the roof, a drop line to the axis, and its value at the foot, where
        // no op can be (below the roof, right of the ridge).
        auto* drop = new QCPItemLine(m_plot);
        drop->start->setCoords(ridge, ylo);
        drop->end->setCoords(ridge, hw.peakFlops / Tera);
        drop->setPen(QPen(chartstyle::withAlpha(fg, 0.5), 1, Qt::DotLine));
        QCPGraph* marker = addLine({ridge}, {hw.peakFlops / Tera}, Qt::NoPen);
        marker->setLineStyle(QCPGraph::lsNone);
        marker->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, fg, fg, 9));
        // Right of the line when it stands in the left half of the axis, else left of it (still below
        // the roof): a ridge near the right edge would push its label out of a narrow plot (issue 20).
        const double at = std::log10(ridge / xlo) / std::log10(xhi / xlo);
        QCPItemText* label = addText(ridge, ylo, tr("ridge %1 FLOP/byte").arg(compact(ridge)),
                                     (at > 0.5 ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom, fg);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(ridge, 1);
    }

    // The plan's ops: forward discs, backward triangles, coloured by what bounds them.
    struct Series {
        core::Pass pass;
        core::Bound bound;
        QString name;
    };
    const Series series[] = {
        {core::Pass::Forward, core::Bound::Memory, tr("forward, memory-bound")},
        {core::Pass::Forward, core::Bound::Compute, tr("forward, compute-bound")},
        {core::Pass::Backward, core::Bound::Memory, tr("backward, memory-bound")},
        {core::Pass::Backward, core::Bound::Compute, tr("backward, compute-bound")},
    };
    for (const Series& s : series) {
        QVector<double> xs, ys;
        for (const Point& p : m_opPoints)
            if (p.op.pass == s.pass && p.op.bound == s.bound)
                xs.append(p.op.intensity), ys.append(p.op.attainable / Tera);
        QCPGraph* g = m_plot->addGraph();
        g->setName(s.name);
        g->setLineStyle(QCPGraph::lsNone);
        g->setAdaptiveSampling(false);
        const QColor c = boundColor(s.bound, dark);
        const bool fwd = s.pass == core::Pass::Forward;
        g->setScatterStyle(QCPScatterStyle(fwd ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssTriangle, c,
                                           chartstyle::withAlpha(c, 0.75), fwd ? 8 : 10));
        g->setData(xs, ys);
        if (xs.isEmpty())
            g->removeFromLegend();
    }

    if (!m_seedPoints.empty()) {
        QVector<double> xs, ys;
        for (const Point& p : m_seedPoints)
            xs.append(p.op.intensity), ys.append(p.op.attainable / Tera);
        QCPGraph* g = m_plot->addGraph();
        g->setName(tr("seeds' op table"));
        g->setLineStyle(QCPGraph::lsNone);
        QCPScatterStyle square(QCPScatterStyle::ssSquare, 10);
        square.setPen(QPen(fg, 1.5));
        square.setBrush(Qt::NoBrush);
        g->setScatterStyle(square);
        g->setData(xs, ys);
        for (const Point& p : m_seedPoints) {
            const auto it = std::find_if(seeds.begin(), seeds.end(),
                                         [&](const SeedOp& s) { return std::string_view(s.name) == p.op.name; });
            addText(p.op.intensity, p.op.attainable / Tera, QString::fromUtf8(p.op.name),
                    it != seeds.end() ? it->labelSide : (Qt::AlignLeft | Qt::AlignTop), chartstyle::withAlpha(fg, 0.85))
                ->setPadding(QMargins(7, 5, 7, 5));
        }
    }

    m_measuredPointCount = calibrationoverlay::draw(m_plot, hw, fg, dark, small);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString RooflineChart::toolTipText(const Point& p) const
{
    const core::RooflineOp& op = p.op;
    const auto num = [](double v) { return QString::fromStdString(core::formatNumber(v)); };
    const QString unit = op.unit == core::OpUnit::Tensor ? tr("tensor") : tr("vector");
    QString head = QStringLiteral("<b>%1</b>, %2")
                       .arg(QString::fromUtf8(op.name).toHtmlEscaped(), QString::fromUtf8(core::toString(op.pass)));
    if (p.seed)
        head += tr(" (seeds' op table)");
    else if (op.count != 1)
        head += tr(" ×%1 per step").arg(num(op.count));
    const auto row = [](const QString& k, const QString& v) {
        return QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(k, v);
    };
    return head + QStringLiteral("<table>") + row(tr("FLOPs"), num(op.flops)) +
           row(tr("bytes"), tr("%1 (%2)").arg(num(op.bytes), formatBytes(op.bytes))) +
           row(tr("intensity"), tr("%1 FLOP/byte").arg(num(op.intensity))) +
           row(tr("bound"), op.bound == core::Bound::Memory ? tr("memory-bound") : tr("compute-bound (%1)").arg(unit)) +
           row(tr("attainable"), tr("%1 TFLOP/s").arg(num(op.attainable / Tera))) +
           row(tr("ideal time"), tr("%1 s").arg(num(op.timeSeconds))) + QStringLiteral("</table>");
}

void RooflineChart::showToolTip(QMouseEvent* event)
{
    // Ops often share a spot (dgrad and wgrad of one GEMM): list every point under the cursor.
    constexpr double Radius = 8;
    const QPointF pos = event->position();
    QStringList parts;
    for (const auto* points : {&m_opPoints, &m_seedPoints}) {
        for (const Point& p : *points) {
            const double dx = m_plot->xAxis->coordToPixel(p.op.intensity) - pos.x();
            const double dy = m_plot->yAxis->coordToPixel(p.op.attainable / Tera) - pos.y();
            if (dx * dx + dy * dy <= Radius * Radius && parts.size() < 4)
                parts.append(toolTipText(p));
        }
    }
    if (parts.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), parts.join(QStringLiteral("<hr>")), m_plot);
}

void RooflineChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        updateColors();
}

void RooflineChart::updateColors()
{
    // Every colour is chosen while building, so a rebuild is the recolouring.
    updateGraphs();
}

} // namespace napkin::charts
