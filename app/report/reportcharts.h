// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Charts for reports, drawn by napkin_charts (the window's own chart code) into a QPicture so that
// PDF and SVG stay vector.

#include "chartexport.h"
#include "chartunits.h"
#include "report.h"

#include "plan.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <QPicture>

#include <memory>

class QIODevice;
class QPdfWriter;

namespace napkin::report::detail {

// A scenario document evaluated once: the parsed scenario, its plan and what the report needs to
// say where they came from. No window, no controller.
struct Evaluated {
    nlohmann::json document;
    QString baseDir; // resolves the document's relative file paths
    core::Scenario scenario;
    core::Plan plan;
    charts::Units units = charts::Units::GB;
    QString error; // empty when the scenario is valid
};
Evaluated evaluate(const Input& input, bool gib);

// The report PDFs' page: A4 or Letter, 15 mm margins, 96 dpi (so chart layout units are pixels).
std::unique_ptr<QPdfWriter> pdfWriter(QIODevice* device, PageSize page, const QString& title);

QPicture chartPicture(const Evaluated& e, Chart chart, QSize size, bool seedOps = false);
using charts::pictureToPdf;
using charts::pictureToPng;
using charts::pictureToSvg;
using charts::saveBytes;

} // namespace napkin::report::detail
