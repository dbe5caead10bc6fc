#pragma once
// Charts for reports, drawn by the app's own panels (one chart implementation) into a QPicture so
// that PDF and SVG stay vector.

#include "chartexport.h"
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
using app::pictureToPdf;
using app::pictureToPng;
using app::pictureToSvg;
using app::saveBytes;

} // namespace napkin::report::detail
