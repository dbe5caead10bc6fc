// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportrequest.h"

#include "report.h"

#include <QFileInfo>

namespace napkin::report {

namespace {

using nlohmann::json;

QString str(const json& j, const char* key, const QString& fallback = {})
{
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? QString::fromStdString(it->get<std::string>()) : fallback;
}

bool readOptions(const json& request, Options* o, QString* message)
{
    const json options = request.value("options", json::object());
    if (!options.is_object()) {
        *message = QStringLiteral("options: must be an object");
        return false;
    }
    const QString page = str(options, "page", QStringLiteral("a4")).toLower();
    if (page == QLatin1String("a4"))
        o->page = PageSize::A4;
    else if (page == QLatin1String("letter"))
        o->page = PageSize::Letter;
    else {
        *message = QStringLiteral("options.page = %1: unknown page size (allowed: a4, letter)").arg(page);
        return false;
    }
    o->gib = options.value("gib", false);
    o->title = str(options, "title");
    o->napkinVersion = str(options, "version");
    return true;
}

bool readInputs(const json& request, std::vector<Input>* inputs, QString* message)
{
    const auto it = request.find("inputs");
    if (it == request.end() || !it->is_array() || it->empty()) {
        *message = QStringLiteral("inputs: must be a non-empty array of {document, label, base_dir}");
        return false;
    }
    for (const auto& in : *it) {
        if (!in.is_object() || !in.contains("document") || !in["document"].is_object()) {
            *message = QStringLiteral("inputs[%1].document: must be a scenario object").arg(inputs->size());
            return false;
        }
        inputs->push_back({in["document"], str(in, "label"), str(in, "base_dir")});
    }
    return true;
}

int runChart(const json& request, const Input& input, const QString& output, QString* message)
{
    ChartFormat format = ChartFormat::Png;
    if (!parseChartFormat(str(request, "format"), &format)) {
        *message =
            QStringLiteral("format = %1: unknown chart format (allowed: png, svg, pdf)").arg(str(request, "format"));
        return RequestInvalid;
    }
    const QString kind = str(request, "chart");
    if (kind != QLatin1String("ledger") && kind != QLatin1String("roofline") && kind != QLatin1String("timeline") &&
        kind != QLatin1String("steptime") && kind != QLatin1String("stages")) {
        *message = QStringLiteral("chart = %1: unknown chart (allowed: ledger, roofline, timeline, steptime, stages)")
                       .arg(kind);
        return RequestInvalid;
    }
    const json size = request.value("size", json::array());
    if (!size.is_array() || size.size() != 2 || !size[0].is_number_integer() || !size[1].is_number_integer()) {
        *message = QStringLiteral("size: must be [width, height]");
        return RequestInvalid;
    }
    const QSize s(size[0].get<int>(), size[1].get<int>());
    if (s.width() < 200 || s.height() < 120 || s.width() > 8000 || s.height() > 8000) {
        *message =
            QStringLiteral("size = %1x%2: out of range (allowed: 200x120 to 8000x8000)").arg(s.width()).arg(s.height());
        return RequestInvalid;
    }
    const double scale = request.value("scale", 2.0);
    if (!(scale >= 0.25 && scale <= 8)) {
        *message = QStringLiteral("scale = %1: out of range (allowed: 0.25 to 8)").arg(scale);
        return RequestInvalid;
    }
    *message = writeChart(input, chartFromName(kind), format, output, s, scale);
    if (message->isEmpty())
        return RequestOk;
    return message->startsWith(QLatin1String("cannot write")) ? RequestFailed : RequestInvalid;
}

} // namespace

int runRequest(const json& request, QString* message)
{
    if (!request.is_object() || request.value("schema", std::string()) != "napkin.report-request/1") {
        *message = QStringLiteral("schema: not a napkin.report-request/1 document");
        return RequestInvalid;
    }
    const QString job = str(request, "job");
    const QString output = str(request, "output");
    if (output.isEmpty()) {
        *message = QStringLiteral("output: a file name is needed");
        return RequestInvalid;
    }
    std::vector<Input> inputs;
    if (!readInputs(request, &inputs, message))
        return RequestInvalid;
    if (job == QLatin1String("chart"))
        return runChart(request, inputs.front(), output, message);

    Options options;
    if (!readOptions(request, &options, message))
        return RequestInvalid;
    Format format = Format::Pdf;
    if (!parseFormat(str(request, "format"), &format)) {
        *message = QStringLiteral("format = %1: unknown report format (allowed: pdf, html, md, csv, json)")
                       .arg(str(request, "format"));
        return RequestInvalid;
    }
    if (job == QLatin1String("report"))
        *message = writeReport(inputs.front(), format, output, options);
    else if (job == QLatin1String("comparison"))
        *message = writeComparison(inputs, format, output, options);
    else {
        *message = QStringLiteral("job = %1: unknown job (allowed: report, comparison, chart)").arg(job);
        return RequestInvalid;
    }
    return message->isEmpty() ? RequestOk : RequestFailed;
}

} // namespace napkin::report
