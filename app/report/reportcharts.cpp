#include "reportcharts.h"

#include "chartstyle.h"
#include "ledgerchartpanel.h"
#include "plancontroller.h"
#include "rooflinepanel.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

namespace napkin::report::detail {

Evaluated evaluate(const Input& input, bool gib)
{
    Evaluated e;
    e.controller = std::make_unique<app::PlanController>();
    e.controller->setUnits(gib ? app::PlanController::Units::GiB : app::PlanController::Units::GB);
    core::Errors errors;
    core::parseScenario(input.document, core::builtinCatalog(), errors, input.baseDir.toStdString());
    if (!errors.empty()) {
        e.error = (input.label.isEmpty() ? QString() : input.label + QStringLiteral(": ")) +
                  QString::fromStdString(core::describe(errors.front()));
        return e;
    }
    const QString pseudoFile = input.baseDir.isEmpty() ? QString() : input.baseDir + QStringLiteral("/scenario.napkin.json");
    if (!e.controller->resetDocument(input.document, pseudoFile))
        e.error = input.label + QStringLiteral(": invalid scenario");
    return e;
}

QPicture chartPicture(app::PlanController& controller, Chart chart, QSize size)
{
    QPicture picture;
    std::unique_ptr<QWidget> panel;
    QCustomPlot* plot = nullptr;
    if (chart == Chart::Ledger) {
        auto* p = new app::LedgerChartPanel(&controller);
        plot = p->plot();
        panel.reset(p);
    } else {
        auto* p = new app::RooflinePanel(&controller);
        plot = p->plot();
        panel.reset(p);
    }
    panel->resize(size);
    plot->resize(size);
    plot->replot(QCustomPlot::rpImmediateRefresh); // lays out legends for this size
    QCPPainter painter(&picture);
    plot->toPainter(&painter, size.width(), size.height());
    painter.end();
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
    pdf.setResolution(72); // one unit = one point = one chart pixel
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setCreator(QStringLiteral("Napkin"));
    QPainter p(&pdf);
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

} // namespace napkin::report::detail
