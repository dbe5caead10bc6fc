// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Charts out of the window: a QCustomPlot drawn into a QPicture (so PDF and SVG stay vector), and
// that picture as PNG, SVG or PDF bytes. Used by the charts' context menus and by the reports.

#include <QByteArray>
#include <QPicture>
#include <QSize>
#include <QString>

class QCustomPlot;

namespace napkin::charts {

QPicture plotPicture(QCustomPlot* plot, QSize size);
QByteArray pictureToPng(const QPicture& picture, QSize size, qreal scale = 2.0);
QByteArray pictureToSvg(const QPicture& picture, QSize size, const QString& title);
QByteArray pictureToPdf(const QPicture& picture, QSize size);

// Atomic write through QSaveFile; an empty string on success, else a message naming the path.
QString saveBytes(const QString& path, const QByteArray& bytes);
// Writes the plot as PNG, SVG or PDF by the file's extension.
QString saveChart(QCustomPlot* plot, const QString& path, QSize size, const QString& title);

} // namespace napkin::charts
