// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the chart panels share: the QCustomPlot include and colours that follow the widget palette,
// so that a chart reads in light and dark mode alike (KDAB hotspot, FrequencyPage::updateColors).

// qcustomplot.h 2.1 still uses foreach in two header templates, and QT_NO_FOREACH removes the
// keyword. A range-for stands in for it during this one include only.
#if defined(QT_NO_FOREACH) && !defined(foreach)
// A declaration and an expression in a range-for cannot take parentheses: the macro stays bare.
#define foreach(variable, container) for (variable : container) // NOLINT(bugprone-macro-parentheses)
#define NAPKIN_QCP_FOREACH_SHIM
#endif
#include <qcustomplot.h>
#ifdef NAPKIN_QCP_FOREACH_SHIM
#undef foreach
#undef NAPKIN_QCP_FOREACH_SHIM
#endif

#include "buckets.h"

#include <QColor>
#include <QPalette>

#include <array>
#include <cstddef>
#include <iterator>

namespace napkin::charts::chartstyle {

inline bool isDark(const QPalette& palette) { return palette.color(QPalette::Base).lightnessF() < 0.5; }

inline QColor withAlpha(QColor c, double alpha)
{
    c.setAlphaF(float(alpha));
    return c;
}

// Black or white, whichever reads better on `background` (WCAG relative luminance, roughly).
inline QColor textOn(const QColor& background)
{
    const double luminance = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
    return luminance > 0.5 ? QColor(Qt::black) : QColor(Qt::white);
}

// Good and bad news: headroom and memory-bound points keep their meaning in both modes, but the
// dark-mode shades are lighter so that they do not sink into a dark background.
inline QColor good(const QPalette& p) { return isDark(p) ? QColor(0x6c, 0xd0, 0x7a) : QColor(0x1b, 0x7f, 0x2e); }
inline QColor bad(const QPalette& p) { return isDark(p) ? QColor(0xff, 0x7b, 0x6b) : QColor(0xc0, 0x25, 0x1b); }

// Okabe & Ito's colour-blind-safe qualitative palette (Okabe & Ito 2008, "Color Universal Design"),
// one colour a memory bucket in ledger order (core::kMemoryBuckets), with grey for overhead. Dark mode
// uses lighter shades of the same hues so that the deep blue and green still stand out from a dark
// background. The ledger and the per-stage chart share it.
inline QColor bucketColor(int i, bool dark)
{
    static constexpr QRgb light[] = {0x0072B2, 0xE69F00, 0x56B4E9, 0xCC79A7, 0x009E73, 0xF0E442, 0x8C8C8C};
    static constexpr QRgb darkShades[] = {0x4A9FE0, 0xF0B030, 0x86CCF2, 0xDE97C0, 0x2DBE8F, 0xF0E442, 0xA6A6A6};
    static_assert(std::size(light) == std::size_t(core::kMemoryBucketCount) &&
                      std::size(darkShades) == std::size(light),
                  "one colour per memory bucket");
    return QColor(dark ? darkShades[i] : light[i]);
}

// Axes, grid, legend and background from the palette; axis and legend text in the widget's font
// (QCustomPlot copies the font once, when the axis is made: a projector font set later would not
// reach the tick labels).
// The font a chart draws in: its chart widget's (the plot's parent). QApplication::setFont reaches the
// widgets in no set order, so in the chart's FontChange the plot itself may still have the old one.
inline QFont plotFont(const QCustomPlot* plot)
{
    return plot->parentWidget() ? plot->parentWidget()->font() : plot->font();
}

inline void applyPalette(QCustomPlot* plot, const QPalette& palette)
{
    const QFont font = plotFont(plot);
    const QColor fg = palette.color(QPalette::Text);
    const QColor bg = palette.color(QPalette::Base);
    const QPen axisPen(withAlpha(fg, 0.7), 1);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
        axis->setLabelColor(fg);
        axis->setTickLabelColor(fg);
        axis->setLabelFont(font);
        axis->setTickLabelFont(font);
        axis->setBasePen(axisPen);
        axis->setTickPen(axisPen);
        axis->setSubTickPen(axisPen);
        axis->grid()->setPen(QPen(withAlpha(fg, 0.16), 1, Qt::DotLine));
        // Solid and faint: a dotted sub-grid becomes tens of thousands of dashes in a vector PDF.
        axis->grid()->setSubGridPen(QPen(withAlpha(fg, 0.05), 1, Qt::SolidLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    plot->legend->setTextColor(fg);
    plot->legend->setFont(font);
    plot->legend->setBorderPen(QPen(withAlpha(fg, 0.25)));
    plot->legend->setBrush(withAlpha(bg, 0.85));
    plot->setBackground(bg);
}

// Colours a stacked bar (the ledger, the step time): each segment's fill from colourOf(i, dark), an
// outline in the background colour that keeps neighbouring segments apart, and its label in a text
// colour that reads on the fill.
template <std::size_t N, class ColourOf>
void colourStack(const std::array<QCPBars*, N>& bars, const std::array<QCPItemText*, N>& labels,
                 const QPalette& palette, ColourOf colourOf)
{
    const bool dark = isDark(palette);
    const QColor bg = palette.color(QPalette::Base);
    for (std::size_t i = 0; i < N; ++i) {
        const QColor c = colourOf(int(i), dark);
        bars[i]->setPen(QPen(bg, 1));
        bars[i]->setBrush(c);
        labels[i]->setColor(textOn(c));
        // In the plot's font, explicitly: the label that fits is chosen by measuring this font.
        labels[i]->setFont(plotFont(bars[i]->parentPlot()));
    }
}

} // namespace napkin::charts::chartstyle
