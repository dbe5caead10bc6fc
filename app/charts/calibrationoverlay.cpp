// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "calibrationoverlay.h"

#include "calibration.h"
#include "chartstyle.h"

#include <qcustomplot.h>

#include <cmath>
#include <string_view>

namespace napkin::charts::calibrationoverlay {

namespace {

constexpr double Tera = 1e12;

bool positive(double v) { return std::isfinite(v) && v > 0; }

const core::Calibration* calibrationOf(const core::HardwareSummary& hw)
{
    return hw.gpu && hw.gpu->calibration ? hw.gpu->calibration.get() : nullptr;
}

// The spec sheet's peak for the plan's compute dtype and its bandwidth (0 when unknown).
std::pair<double, double> specCeilings(const core::HardwareSummary& hw, const core::Calibration& cal)
{
    if (!cal.spec)
        return {0, 0};
    const auto dtype = core::parseDType(hw.computeDtype);
    return {dtype ? cal.spec->peak(core::info(*dtype).peak) : 0.0, cal.spec->bandwidthBytesPerSecond};
}

struct SeriesStyle {
    std::string_view series;
    const char* name;
    QCPScatterStyle::ScatterShape shape;
    QColor light, dark; // Okabe & Ito's palette: bluish green, reddish purple, orange
};

const SeriesStyle kSeries[] = {
    {"gemm_m_sweep", QT_TRANSLATE_NOOP("RooflineChart", "measured GEMM M-sweep (bf16)"), QCPScatterStyle::ssCrossCircle,
     QColor(0x00, 0x9E, 0x73), QColor(0x4F, 0xD1, 0xA8)},
    {"intensity_sweep", QT_TRANSLATE_NOOP("RooflineChart", "measured intensity sweep (FMA)"), QCPScatterStyle::ssPlus,
     QColor(0xCC, 0x79, 0xA7), QColor(0xE8, 0xA6, 0xCB)},
    {"elementwise", QT_TRANSLATE_NOOP("RooflineChart", "measured elementwise (ReLU, GELU)"), QCPScatterStyle::ssStar,
     QColor(0xE6, 0x9F, 0x00), QColor(0xF5, 0xC2, 0x4C)},
};

} // namespace

std::vector<std::pair<double, double>> extents(const core::HardwareSummary& hw)
{
    std::vector<std::pair<double, double>> out;
    const auto* cal = calibrationOf(hw);
    if (!cal)
        return out;
    const auto [peak, bw] = specCeilings(hw, *cal);
    if (positive(peak) && positive(bw))
        out.emplace_back(peak / bw, peak);
    for (const auto& p : cal->measuredDevice().points)
        if (positive(p.intensity()) && positive(p.flopsPerSecond()))
            out.emplace_back(p.intensity(), p.flopsPerSecond());
    return out;
}

int draw(QCustomPlot* plot, const core::HardwareSummary& hw, const QColor& fg, bool dark, const QFont& small)
{
    const auto* cal = calibrationOf(hw);
    if (!cal)
        return 0;
    const double xlo = plot->xAxis->range().lower, xhi = plot->xAxis->range().upper;
    const auto [peak, bw] = specCeilings(hw, *cal);
    // The spec roof, dashed: y = beta_spec · I up to the spec ridge, then the spec peak.
    if (positive(peak) && positive(bw) && (peak != hw.peakFlops || bw != hw.bandwidth)) {
        const double ridge = peak / bw;
        QCPGraph* g = plot->addGraph();
        g->setData({xlo, ridge, xhi}, {bw * xlo / Tera, peak / Tera, peak / Tera}, true);
        g->setPen(QPen(chartstyle::withAlpha(fg, 0.6), 1.5, Qt::DashLine));
        g->setName(QCoreApplication::translate("RooflineChart", "spec sheet: %1 TFLOP/s, %2 TB/s")
                       .arg(peak / Tera, 0, 'g', 4)
                       .arg(bw / Tera, 0, 'g', 3));
        auto* t = new QCPItemText(plot);
        t->position->setCoords(xhi, peak / Tera);
        t->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        t->setText(QCoreApplication::translate("RooflineChart", "spec %1 TFLOP/s").arg(peak / Tera, 0, 'g', 4));
        t->setColor(chartstyle::withAlpha(fg, 0.75));
        t->setFont(small);
        t->setPadding(QMargins(4, 3, 10, 2));
    }
    int drawn = 0;
    for (const auto& s : kSeries) {
        QVector<double> xs, ys;
        for (const auto& p : cal->measuredDevice().points)
            if (p.series == s.series && positive(p.intensity()) && positive(p.flopsPerSecond()))
                xs.append(p.intensity()), ys.append(p.flopsPerSecond() / Tera);
        if (xs.isEmpty())
            continue;
        QCPGraph* g = plot->addGraph();
        g->setName(QCoreApplication::translate("RooflineChart", s.name));
        g->setLineStyle(s.series == "elementwise" ? QCPGraph::lsNone : QCPGraph::lsLine);
        const QColor c = dark ? s.dark : s.light;
        g->setPen(QPen(chartstyle::withAlpha(c, 0.6), 1));
        QCPScatterStyle style(s.shape, 9);
        style.setPen(QPen(c, 1.8));
        g->setScatterStyle(style);
        g->setData(xs, ys);
        drawn += int(xs.size());
    }
    return drawn;
}

} // namespace napkin::charts::calibrationoverlay
