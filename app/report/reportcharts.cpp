#include "reportcharts.h"

#include "chartexport.h"
#include "chartstyle.h"
#include "ledgerchartpanel.h"
#include "plancontroller.h"
#include "rooflinepanel.h"
#include "timelinepanel.h"

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
    std::unique_ptr<QWidget> panel;
    QCustomPlot* plot = nullptr;
    if (chart == Chart::Ledger) {
        auto* p = new app::LedgerChartPanel(&controller);
        plot = p->plot();
        panel.reset(p);
    } else if (chart == Chart::Timeline) {
        auto* p = new app::TimelinePanel(&controller);
        plot = p->plot();
        panel.reset(p);
    } else {
        auto* p = new app::RooflinePanel(&controller);
        plot = p->plot();
        panel.reset(p);
    }
    panel->resize(size);
    return app::plotPicture(plot, size);
}

} // namespace napkin::report::detail
