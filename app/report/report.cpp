// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "report.h"

#include "reportcharts.h"
#include "reportcontent.h"

#include "buckets.h"
#include "compare.h"
#include "format.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPageLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>

namespace napkin::report {

using namespace detail;

Chart chartFromName(const QString& name)
{
    if (name == QLatin1String("roofline"))
        return Chart::Roofline;
    if (name == QLatin1String("timeline"))
        return Chart::Timeline;
    if (name == QLatin1String("steptime"))
        return Chart::StepTime;
    if (name == QLatin1String("stages"))
        return Chart::Stages;
    return Chart::Ledger;
}

QString chartTitle(Chart chart)
{
    switch (chart) {
    case Chart::Ledger: return QStringLiteral("Memory per GPU");
    case Chart::Roofline: return QStringLiteral("Roofline");
    case Chart::Timeline: return QStringLiteral("Memory through one step");
    case Chart::StepTime: return QStringLiteral("Predicted step time");
    case Chart::Stages: return QStringLiteral("Memory per pipeline stage");
    }
    return {};
}

namespace {

const char* kCss = R"(
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; max-width: 980px; margin: 24px auto; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 22px; border-bottom: 1px solid #ccc; }
h2 { break-after: avoid; page-break-after: avoid; } svg, tr { break-inside: avoid; page-break-inside: avoid; }
table.t { border-collapse: collapse; font-size: 13px; margin: 6px 0; } table.t th { background: #eef1f5; text-align: left; }
table.t td, table.t th { border: 1px solid #c8ccd2; padding: 3px 6px; vertical-align: top; }
p.ok { color: #1b5e20; } p.bad { color: #b71c1c; } svg { max-width: 100%; height: auto; }
)";

QSize chartSize(Chart c)
{
    switch (c) {
    case Chart::Ledger: return {900, 260};
    case Chart::Timeline: return {900, 360};
    case Chart::StepTime: return {900, 300};
    case Chart::Stages: return {900, 360};
    case Chart::Roofline: break;
    }
    return {900, 480};
}

// Lays the sections out on pages: text through QTextDocument, charts as vector pictures, a block
// never split across a page unless it is taller than a page.
QByteArray renderPdf(const std::vector<Section>& sections, const std::vector<const Evaluated*>& plans, const Options& o)
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const auto writer = pdfWriter(&buffer, o.page, o.title.isEmpty() ? QStringLiteral("Napkin report") : o.title);
    QPdfWriter& pdf = *writer;
    QPainter painter(&pdf);
    const QRect page = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const double W = page.width(), H = page.height();
    double y = 0;
    auto place = [&](double h) {
        if (y > 0 && y + h > H) {
            pdf.newPage();
            y = 0;
        }
    };
    // keepWith: the height of what must follow on the same page (a section's chart after its heading
    // and caption: issue 20 found "Roofline of one layer" at a page's foot, its chart overleaf).
    auto drawHtml = [&](const QString& html, double keepWith) {
        QTextDocument doc;
        QFont f(QStringLiteral("DejaVu Sans"));
        f.setPointSizeF(9);
        doc.setDefaultFont(f);
        doc.setDefaultStyleSheet(
            QStringLiteral("h1 { font-size: 16pt; } h2 { font-size: 12pt; } th { background-color: #eef1f5; }"
                           " p.ok { color: #1b5e20; } p.bad { color: #b71c1c; }"));
        doc.setHtml(html);
        doc.setTextWidth(W);
        double h = doc.size().height();
        if (h <= H) {
            place(h + keepWith <= H ? h + keepWith : h);
            painter.save();
            painter.translate(0, y);
            doc.drawContents(&painter);
            painter.restore();
            y += h;
            return;
        }
        // Taller than a page: slice it page by page.
        double offset = 0;
        while (offset < h) {
            if (y > 0) {
                pdf.newPage();
                y = 0;
            }
            const double slice = std::min(H, h - offset);
            painter.save();
            painter.translate(0, -offset);
            doc.drawContents(&painter, QRectF(0, offset, W, slice));
            painter.restore();
            offset += slice;
            y = slice;
        }
    };
    std::size_t chartIndex = 0;
    for (const auto& s : sections) {
        const QSize size = s.chart.isEmpty() ? QSize() : chartSize(chartFromName(s.chart));
        const double scale = s.chart.isEmpty() ? 0.0 : W / size.width();
        drawHtml((s.title.isEmpty() ? QString() : QStringLiteral("<h2>") + esc(s.title) + QStringLiteral("</h2>")) +
                     s.html,
                 s.chart.isEmpty() ? 0.0 : size.height() * scale + 8);
        if (!s.chart.isEmpty()) {
            const Chart kind = chartFromName(s.chart);
            const auto* evaluated = plans[std::min(chartIndex, plans.size() - 1)];
            if (plans.size() > 1)
                ++chartIndex; // comparisons: one ledger chart per scenario, in order
            const QPicture pic = chartPicture(*evaluated, kind, size);
            place(size.height() * scale + 8);
            painter.save();
            painter.translate(0, y + 4);
            painter.scale(scale, scale);
            painter.drawPicture(0, 0, pic);
            painter.restore();
            y += size.height() * scale + 8;
        }
        if (s.pageBreakAfter && &s != &sections.back()) { // the executive summary: page 1 by itself
            pdf.newPage();
            y = 0;
        }
    }
    painter.end();
    return bytes;
}

QString inlineSvg(const Evaluated& c, Chart chart)
{
    const QSize size = chartSize(chart);
    QString svg = QString::fromUtf8(pictureToSvg(chartPicture(c, chart, size), size, chartTitle(chart)));
    const auto start = svg.indexOf(QStringLiteral("<svg"));
    return start >= 0 ? svg.mid(start) : svg;
}

QByteArray renderHtml(const std::vector<Section>& sections, const std::vector<const Evaluated*>& plans,
                      const Options& o)
{
    QString body;
    std::size_t chartIndex = 0;
    for (const auto& s : sections) {
        if (!s.title.isEmpty())
            body += QStringLiteral("<h2>") + esc(s.title) + QStringLiteral("</h2>\n");
        body += s.html + QStringLiteral("\n");
        if (!s.chart.isEmpty()) {
            const auto* evaluated = plans[std::min(chartIndex, plans.size() - 1)];
            if (plans.size() > 1)
                ++chartIndex;
            body += QStringLiteral("<div class=\"chart\">") + inlineSvg(*evaluated, chartFromName(s.chart)) +
                    QStringLiteral("</div>\n");
        }
        if (s.pageBreakAfter) // printed, the executive summary is a page by itself
            body += QStringLiteral("<div style=\"page-break-after: always\"></div>\n");
    }
    const QString title = o.title.isEmpty() ? QStringLiteral("Napkin report") : o.title;
    // Well-formed XHTML so that any XML parser reads it (no named entities beyond the XML five).
    const QString html =
        QStringLiteral(
            "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
            "<meta charset=\"utf-8\"/>\n<title>%1</title>\n<style>%2</style>\n</head>\n<body>\n%3</body>\n</html>\n")
            .arg(esc(title), QString::fromLatin1(kCss), body);
    return html.toUtf8();
}

QString stemOf(const QString& path)
{
    const QFileInfo fi(path);
    QString base = fi.fileName();
    if (base.endsWith(QLatin1String(".md")))
        base.chop(3);
    return fi.dir().filePath(base);
}

// The comparison as CSV: core::compareToCsv, as napkin-cli compare --format csv prints it.
QByteArray compareCsv(const std::vector<const Evaluated*>& cs, const QStringList& labels)
{
    std::vector<core::ComparedPlan> plans;
    for (std::size_t i = 0; i < cs.size(); ++i)
        plans.push_back({labels.value(int(i)).toStdString(), &cs[i]->plan});
    return QByteArray::fromStdString(core::compareToCsv(plans));
}

} // namespace

bool parseFormat(const QString& text, Format* out)
{
    const QString t = text.toLower();
    if (t == QLatin1String("pdf"))
        *out = Format::Pdf;
    else if (t == QLatin1String("html"))
        *out = Format::Html;
    else if (t == QLatin1String("md") || t == QLatin1String("markdown"))
        *out = Format::Markdown;
    else if (t == QLatin1String("csv"))
        *out = Format::Csv;
    else if (t == QLatin1String("json"))
        *out = Format::Json;
    else
        return false;
    return true;
}

bool parseChartFormat(const QString& text, ChartFormat* out)
{
    const QString t = text.toLower();
    if (t == QLatin1String("png"))
        *out = ChartFormat::Png;
    else if (t == QLatin1String("svg"))
        *out = ChartFormat::Svg;
    else if (t == QLatin1String("pdf"))
        *out = ChartFormat::Pdf;
    else
        return false;
    return true;
}

QByteArray renderReport(const Input& input, Format format, const Options& givenOptions, QString* error)
{
    auto e = evaluate(input, givenOptions.gib);
    Options options = givenOptions;
    if (options.title.isEmpty() && e.error.isEmpty()) // the scenario's own name, else what the plan is
        options.title = QString::fromStdString(e.plan.title());
    if (!e.error.isEmpty()) {
        if (error)
            *error = e.error;
        return {};
    }
    const std::vector<const Evaluated*> cs{&e};
    switch (format) {
    case Format::Pdf: return renderPdf(reportSections(e, options), cs, options);
    case Format::Html: return renderHtml(reportSections(e, options), cs, options);
    case Format::Markdown:
        return reportMarkdown(e, options, QStringLiteral("ledger.png"), QStringLiteral("roofline.png")).toUtf8();
    case Format::Csv: return QByteArray::fromStdString(core::planToCsv(e.plan, e.scenario));
    case Format::Json: return QByteArray::fromStdString(core::planToJson(e.plan).dump(1) + "\n");
    }
    return {};
}

QString writeReport(const Input& input, Format format, const QString& outPath, const Options& options)
{
    if (format != Format::Markdown) {
        QString error;
        const QByteArray bytes = renderReport(input, format, options, &error);
        return error.isEmpty() ? saveBytes(outPath, bytes) : error;
    }
    auto e = evaluate(input, options.gib);
    if (!e.error.isEmpty())
        return e.error;
    if (!QFileInfo(outPath).absoluteDir().exists() || QFileInfo(outPath).isDir())
        return QStringLiteral("cannot write %1: no such directory, or it is a directory").arg(outPath);
    const QString stem = stemOf(outPath);
    const QString ledger = stem + QStringLiteral("-ledger.png"), roofline = stem + QStringLiteral("-roofline.png");
    const QSize ls = chartSize(Chart::Ledger), rs = chartSize(Chart::Roofline);
    if (auto err = saveBytes(ledger, pictureToPng(chartPicture(e, Chart::Ledger, ls), ls)); !err.isEmpty())
        return err;
    if (auto err = saveBytes(roofline, pictureToPng(chartPicture(e, Chart::Roofline, rs), rs)); !err.isEmpty())
        return err;
    const QString md = reportMarkdown(e, options, QFileInfo(ledger).fileName(), QFileInfo(roofline).fileName());
    QString why = saveBytes(outPath, md.toUtf8());
    if (!why.isEmpty()) { // all or nothing: no charts without their report
        QFile::remove(ledger);
        QFile::remove(roofline);
    }
    return why;
}

QString writeComparison(const std::vector<Input>& inputs, Format format, const QString& outPath, const Options& options)
{
    if (inputs.size() < 2)
        return QStringLiteral("compare needs at least two scenarios");
    std::vector<Evaluated> evaluated;
    evaluated.reserve(inputs.size()); // cs points into it
    std::vector<const Evaluated*> cs;
    QStringList labels;
    for (const auto& in : inputs) {
        evaluated.push_back(evaluate(in, options.gib));
        if (!evaluated.back().error.isEmpty())
            return evaluated.back().error;
        cs.push_back(&evaluated.back());
        labels << in.label;
    }
    QByteArray bytes;
    switch (format) {
    case Format::Pdf: bytes = renderPdf(comparisonSections(cs, labels, options), cs, options); break;
    case Format::Html: bytes = renderHtml(comparisonSections(cs, labels, options), cs, options); break;
    case Format::Markdown: bytes = comparisonMarkdown(cs, labels, options).toUtf8(); break;
    case Format::Csv: bytes = compareCsv(cs, labels); break;
    case Format::Json: {
        nlohmann::json j = {{"schema", "napkin.compare/1"}, {"plans", nlohmann::json::array()}};
        for (int i = 0; i < int(cs.size()); ++i) {
            auto p = core::planToJson(cs[std::size_t(i)]->plan);
            p["label"] = labels.value(i).toStdString();
            j["plans"].push_back(p);
        }
        bytes = QByteArray::fromStdString(j.dump(1) + "\n");
        break;
    }
    }
    return saveBytes(outPath, bytes);
}

QString writeChart(const Input& input, Chart chart, ChartFormat format, const QString& outPath, QSize size,
                   double scale)
{
    auto e = evaluate(input, false);
    if (!e.error.isEmpty())
        return e.error;
    if (!size.isValid() || size.width() < 200 || size.height() < 120 || size.width() > 8000 || size.height() > 8000)
        return QStringLiteral("chart size %1x%2 out of range (200x120 to 8000x8000)")
            .arg(size.width())
            .arg(size.height());
    const QPicture pic = chartPicture(e, chart, size);
    const QString title = chartTitle(chart);
    switch (format) {
    case ChartFormat::Png: return saveBytes(outPath, pictureToPng(pic, size, scale));
    case ChartFormat::Svg: return saveBytes(outPath, pictureToSvg(pic, size, title));
    case ChartFormat::Pdf: return saveBytes(outPath, pictureToPdf(pic, size));
    }
    return {};
}

} // namespace napkin::report
