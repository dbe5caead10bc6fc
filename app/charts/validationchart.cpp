// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "validationchart.h"

#include "chartstyle.h"

#include <QEvent>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace napkin::charts {

ValidationChart::ValidationChart(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setMinimumSize(320, 200);
}

void ValidationChart::setResults(const std::vector<core::ValidationResult>& results,
                                 const std::set<std::string>& highlighted)
{
    m_results.clear();
    for (const auto& r : results)
        if (r.c && r.failure.empty())
            m_results.push_back(&r);
    m_ids = highlighted;
    redraw();
}

void ValidationChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        redraw();
}

void ValidationChart::redraw()
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_rows.clear();
    m_highlighted = 0;
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    const bool dark = chartstyle::isDark(pal);
    const QColor fg = pal.color(QPalette::Text);
    const QColor others = dark ? QColor(0x4A, 0x9F, 0xE0) : QColor(0x00, 0x72, 0xB2);  // Okabe & Ito blue
    const QColor closest = dark ? QColor(0xF0, 0xB0, 0x30) : QColor(0xD5, 0x5E, 0x00); // vermillion

    const int n = int(m_results.size());
    double lim = 50; // percent either side, widened to the largest error
    for (const auto* r : m_results)
        lim = std::max(lim, std::ceil(std::fabs(100 * r->error) / 10 + 0.5) * 10);
    // The goals' bands: ±25% (faint) and ±10% (stronger), as rectangles across every row.
    for (const auto& [half, alpha] : {std::pair{25.0, 0.07}, std::pair{10.0, 0.12}}) {
        auto* band = new QCPItemRect(m_plot);
        band->topLeft->setCoords(-half, n + 0.5);
        band->bottomRight->setCoords(half, -0.5 + 0.0);
        band->setPen(Qt::NoPen);
        band->setBrush(chartstyle::withAlpha(fg, alpha));
        band->setLayer(QStringLiteral("background"));
    }
    auto* zero = new QCPItemStraightLine(m_plot);
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(0, 1);
    zero->setPen(QPen(chartstyle::withAlpha(fg, 0.6), 1));

    auto dots = [&](const QColor& c, const QString& name) {
        auto* g = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 7));
        g->setName(name);
        return g;
    };
    QCPGraph* rest = dots(others, tr("validated runs"));
    QCPGraph* near = dots(closest, tr("most like this scenario"));
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int i = 0; i < n; ++i) {
        const auto* r = m_results[std::size_t(i)];
        const double y = n - 1 - i; // the first run on top
        const bool hl = m_ids.count(r->c->id) > 0;
        (hl ? near : rest)->addData(100 * r->error, y);
        m_highlighted += hl ? 1 : 0;
        const QString id = QString::fromStdString(r->c->id);
        m_rows << id;
        ticker->addTick(y, id);
    }
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, n - 0.4);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->yAxis->setTickLabelFont(QFont(font().family(), std::max(7, font().pointSize() - 2)));
    m_plot->xAxis->setRange(-lim, lim);
    m_plot->xAxis->setLabel(tr("error = predicted / published − 1 (%): right of 0, Napkin was optimistic"));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace napkin::charts
