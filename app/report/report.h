// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Budget reports: PDF (vector charts, A4 or Letter), one self-contained HTML file, Markdown with
// chart images beside it, CSV and JSON; comparisons of several scenarios; charts alone as PNG, SVG
// or PDF. Headless: needs a QApplication (offscreen is fine), no window. Every write is atomic.

#include <nlohmann/json.hpp>

#include <QSize>
#include <QString>

#include <vector>

namespace napkin::report {

enum class Format { Pdf, Html, Markdown, Csv, Json };
enum class Chart { Ledger, Roofline, Timeline, StepTime, Stages };
// "ledger", "roofline", "timeline" (memory.timeline), "steptime" (the predicted step), "stages" (memory per pipeline
// stage); Ledger for anything else.
Chart chartFromName(const QString& name);
QString chartTitle(Chart chart);
enum class ChartFormat { Png, Svg, Pdf };
enum class PageSize { A4, Letter };

struct Options {
    PageSize page = PageSize::A4;
    bool gib = false;      // sizes in GiB instead of GB
    QString title;         // default: the scenario's name
    QString napkinVersion; // printed in the header
};

// A scenario document (the napkin.scenario/1 schema, defaults merged) and how to call it.
struct Input {
    nlohmann::json document;
    QString label;   // column title in comparisons
    QString baseDir; // resolves relative hf_config paths
};

// Parses "pdf", "html", "md", "csv", "json" (and "png", "svg" for charts); false when unknown.
bool parseFormat(const QString& text, Format* out);
bool parseChartFormat(const QString& text, ChartFormat* out);

// Each returns an empty string on success, else a message naming the path or the input; nothing is
// left half-written. A Markdown report writes OUT and OUT-stem-ledger.png / -roofline.png beside it.
QString writeReport(const Input& input, Format format, const QString& outPath, const Options& options);
QString writeComparison(const std::vector<Input>& inputs, Format format, const QString& outPath,
                        const Options& options);
// size: the chart's layout in units; a PNG has size × scale pixels (vector formats ignore scale).
QString writeChart(const Input& input, Chart chart, ChartFormat format, const QString& outPath, QSize size,
                   double scale = 2.0);

// The report as bytes, for tests and the app's preview.
QByteArray renderReport(const Input& input, Format format, const Options& options, QString* error);

} // namespace napkin::report
