// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "chartexport.h"

#include "chartstyle.h"

#include <QBuffer>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace napkin::charts {

QPicture plotPicture(QCustomPlot* plot, QSize size)
{
    const QSize old = plot->size();
    plot->resize(size);
    plot->replot(QCustomPlot::rpImmediateRefresh); // lay out legends for this size
    QPicture picture;
    QCPPainter painter(&picture);
    plot->toPainter(&painter, size.width(), size.height());
    painter.end();
    if (old != size) {
        plot->resize(old);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    return picture;
}

QByteArray pictureToPng(const QPicture& picture, QSize size, qreal scale)
{
    QImage image(size * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.drawPicture(0, 0, picture);
    p.end();
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

QByteArray pictureToSvg(const QPicture& picture, QSize size, const QString& title)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(title);
    // The picture was recorded at the screen's logical 96 dpi; at the generator's default 72 the
    // replay would shrink to three quarters of the canvas.
    svg.setResolution(96);
    svg.setDescription(QStringLiteral("Napkin"));
    QPainter p(&svg);
    p.drawPicture(0, 0, picture);
    p.end();
    return bytes;
}

QByteArray pictureToPdf(const QPicture& picture, QSize size)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QPdfWriter pdf(&buffer);
    // The page is the chart's size in points; the picture replays at its recording resolution (96
    // dpi), scaled so that one chart pixel is one point.
    pdf.setResolution(96);
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setCreator(QStringLiteral("Napkin"));
    QPainter p(&pdf);
    p.scale(96.0 / 72.0, 96.0 / 72.0);
    p.drawPicture(0, 0, picture);
    p.end();
    return bytes;
}

QString saveBytes(const QString& path, const QByteArray& bytes)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
    if (f.write(bytes) != bytes.size() || !f.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, f.errorString());
    return {};
}

QString saveChart(QCustomPlot* plot, const QString& path, QSize size, const QString& title)
{
    const QPicture pic = plotPicture(plot, size);
    const QString lower = path.toLower();
    if (lower.endsWith(QLatin1String(".svg")))
        return saveBytes(path, pictureToSvg(pic, size, title));
    if (lower.endsWith(QLatin1String(".pdf")))
        return saveBytes(path, pictureToPdf(pic, size));
    if (lower.endsWith(QLatin1String(".png")))
        return saveBytes(path, pictureToPng(pic, size));
    return QStringLiteral("%1: unknown chart format (allowed: .png, .svg, .pdf)").arg(path);
}

} // namespace napkin::charts
