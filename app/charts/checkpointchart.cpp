// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "checkpointchart.h"

#include "chartstyle.h"

#include <QEvent>
#include <QVBoxLayout>

#include <algorithm>

namespace napkin::charts {

CheckpointChart::CheckpointChart(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this))
{
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->addWidget(m_plot);
    m_plot->addGraph(); // the curve
    m_plot->addGraph(); // the scenario's k
    m_plot->addGraph(); // the best k
    m_plot->graph(1)->setLineStyle(QCPGraph::lsNone);
    m_plot->graph(2)->setLineStyle(QCPGraph::lsNone);
    m_plot->graph(0)->setName(tr("L/k boundaries + k layers"));
    m_plot->graph(1)->setName(tr("this scenario's k"));
    m_plot->graph(2)->setName(tr("smallest"));
    m_plot->xAxis->setLabel(tr("checkpoint every k layers"));
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    setMinimumHeight(260);
    updateColors();
}

int CheckpointChart::pointCount() const { return m_plot->graph(0)->dataCount(); }

void CheckpointChart::setCurve(const core::ScenarioCheckpointCurve& curve, std::int64_t currentK, bool gib)
{
    const double largest = curve.bytes.empty() ? 0.0 : *std::max_element(curve.bytes.begin(), curve.bytes.end());
    const bool small = largest < (gib ? 1073741824.0 : 1e9);
    const double unitBytes = gib ? (small ? 1048576.0 : 1073741824.0) : (small ? 1e6 : 1e9);
    const QString unitName = gib ? (small ? QStringLiteral("MiB") : QStringLiteral("GiB"))
                                 : (small ? QStringLiteral("MB") : QStringLiteral("GB"));
    QVector<double> ks, ys;
    for (std::size_t i = 0; i < curve.bytes.size(); ++i) {
        ks << double(i + 1);
        ys << curve.bytes[i] / unitBytes;
    }
    m_plot->graph(0)->setData(ks, ys, true);
    m_plot->graph(1)->data()->clear();
    if (currentK >= 1 && currentK <= std::int64_t(curve.bytes.size()))
        m_plot->graph(1)->setData({double(currentK)}, {curve.bytes[std::size_t(currentK - 1)] / unitBytes}, true);
    m_plot->graph(2)->data()->clear();
    if (curve.bestK > 0)
        m_plot->graph(2)->setData({double(curve.bestK)}, {curve.bestBytes / unitBytes}, true);
    m_plot->yAxis->setLabel(unitName);
    m_plot->rescaleAxes();
    const auto yr = m_plot->yAxis->range();
    m_plot->yAxis->setRange(0, yr.upper * 1.7); // room for the legend above the curve
    m_plot->xAxis->setRange(0.5, std::max(2.0, double(curve.bytes.size()) + 0.5));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void CheckpointChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange) {
        updateColors();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void CheckpointChart::updateColors()
{
    const QPalette pal = palette();
    chartstyle::applyPalette(m_plot, pal);
    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.8);
    m_plot->legend->setFont(small);
    const bool dark = chartstyle::isDark(pal);
    const QColor line = dark ? QColor(0x7f, 0xb8, 0xff) : QColor(0x1f, 0x5f, 0xb4);
    m_plot->graph(0)->setPen(QPen(line, 2));
    m_plot->graph(1)->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(chartstyle::bad(pal), 2), Qt::NoBrush, 12));
    m_plot->graph(2)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, chartstyle::good(pal), 8));
}

} // namespace napkin::charts
