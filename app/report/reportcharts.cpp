// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportcharts.h"

#include "chartstyle.h"
#include "ledgerchart.h"
#include "rooflinechart.h"
#include "stageschart.h"
#include "steptimechart.h"
#include "timelinechart.h"

#include "catalog.h"
#include "errors.h"
#include "estimate.h"

#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>

#include <memory>

namespace napkin::report::detail {

Evaluated evaluate(const Input& input, bool gib)
{
    Evaluated e;
    e.document = input.document;
    e.baseDir = input.baseDir;
    e.units = gib ? charts::Units::GiB : charts::Units::GB;
    core::Errors errors;
    e.scenario = core::parseScenario(input.document, core::builtinCatalog(), errors, input.baseDir.toStdString());
    if (!errors.empty()) {
        e.error = (input.label.isEmpty() ? QString() : input.label + QStringLiteral(": ")) +
                  QString::fromStdString(core::describe(errors.front()));
        return e;
    }
    e.plan = core::estimate(e.scenario);
    return e;
}

std::unique_ptr<QPdfWriter> pdfWriter(QIODevice* device, PageSize page, const QString& title)
{
    auto pdf = std::make_unique<QPdfWriter>(device);
    pdf->setResolution(96);
    pdf->setPageSize(QPageSize(page == PageSize::Letter ? QPageSize::Letter : QPageSize::A4));
    pdf->setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    pdf->setTitle(title);
    pdf->setCreator(QStringLiteral("Napkin"));
    return pdf;
}

QPicture chartPicture(const Evaluated& e, Chart chart, QSize size, bool seedOps)
{
    std::unique_ptr<charts::ChartWidget> widget;
    QCustomPlot* plot = nullptr;
    if (chart == Chart::Ledger) {
        auto* c = new charts::LedgerChart;
        plot = c->plot();
        widget.reset(c);
    } else if (chart == Chart::StepTime) {
        auto* c = new charts::StepTimeChart;
        plot = c->plot();
        widget.reset(c);
    } else if (chart == Chart::Stages) {
        auto* c = new charts::StagesChart;
        plot = c->plot();
        widget.reset(c);
    } else if (chart == Chart::Timeline) {
        auto* c = new charts::TimelineChart;
        plot = c->plot();
        widget.reset(c);
    } else {
        auto* c = new charts::RooflineChart;
        c->setShowSeedOps(seedOps);
        plot = c->plot();
        widget.reset(c);
    }
    widget->resize(size);
    widget->setPlan(e.scenario, e.plan, e.units);
    return charts::plotPicture(plot, size);
}

} // namespace napkin::report::detail
