#pragma once
// Charts for reports, drawn by the app's own panels (one chart implementation) into a QPicture so
// that PDF and SVG stay vector.

#include "report.h"

#include <QByteArray>
#include <QPicture>

#include <memory>

namespace napkin::app {
class PlanController;
}

namespace napkin::report::detail {

// A scenario evaluated through a PlanController, as the app does.
struct Evaluated {
    std::unique_ptr<app::PlanController> controller;
    QString error; // empty when the scenario is valid
};
Evaluated evaluate(const Input& input, bool gib);

QPicture chartPicture(app::PlanController& controller, Chart chart, QSize size);
QByteArray pictureToPng(const QPicture& picture, QSize size, qreal scale = 2.0);
QByteArray pictureToSvg(const QPicture& picture, QSize size, const QString& title);
QByteArray pictureToPdf(const QPicture& picture, QSize size);

// Atomic write through QSaveFile; an empty string on success.
QString saveBytes(const QString& path, const QByteArray& bytes);

} // namespace napkin::report::detail
