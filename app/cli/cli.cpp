// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli.h"

#include "clicommon.h"
#include "output.h"

#include "catalog.h"
#include "compare.h"
#include "dtypeexplain.h"
#include "reconcile.h"
#include "estimate.h"
#include "moe_sweep.h"
#include "fit.h"
#include "jsonreader.h"
#include "format.h"
#include "roofline.h"
#include "scenario.h"
#include "sensitivity.h"
#include "summary.h"
#include "validate.h"

#include "reportclient.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <clocale>
#include <cstring>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace napkin::cli {

using core::Errors;
using nlohmann::json;

// Shared with the other command files through clicommon.h.
namespace detail {

void printErrors(const Errors& errors, std::ostream& err)
{
    for (const auto& e : errors)
        err << "error: " << core::describe(e) << "\n";
}

// Builds the scenario: defaults, then the file, then each --set, then strict parsing.
std::optional<core::Scenario> loadScenario(const Options& o, const std::string* file, Errors& errors)
{
    json doc = core::defaultScenarioJson();
    std::string baseDir;
    if (file) {
        std::string why;
        const auto text = core::readTextFile(*file, why);
        if (!text) {
            errors.push_back({"SCENARIO", *file, why, "a readable napkin.scenario/1 JSON file"});
            return std::nullopt;
        }
        const auto merged = core::parseScenarioText(*text, *file, errors);
        if (!merged)
            return std::nullopt;
        doc = *merged;
        const auto slash = file->rfind('/');
        if (slash != std::string::npos)
            baseDir = file->substr(0, slash);
    }
    for (const auto& s : o.sets)
        core::applySet(doc, s, errors);
    if (!errors.empty())
        return std::nullopt;
    auto sc = core::parseScenario(doc, core::builtinCatalog(), errors, baseDir);
    if (!errors.empty())
        return std::nullopt;
    return sc;
}

int writeOutput(const Options& o, const std::string& text, std::ostream& out, std::ostream& err)
{
    if (o.output.empty()) {
        out << text;
        return Ok;
    }
    const auto why = writeFileAtomically(o.output, text);
    if (!why.empty()) {
        err << "error: -o " << why << "\n";
        return InternalError;
    }
    return Ok;
}

bool checkFormat(const Options& o, std::initializer_list<const char*> allowed, std::ostream& err)
{
    std::string list;
    for (const char* a : allowed) {
        if (o.format == a)
            return true;
        list += (list.empty() ? "" : ", ") + std::string(a);
    }
    err << "error: --format = " << o.format << ": unknown format (allowed: " << list << ")\n";
    return false;
}

// Where a scenario file's relative paths (hf_config, calibration:FILE) resolve: its folder.
std::string absoluteDir(const std::string* file)
{
    if (!file)
        return {};
    std::error_code ec;
    const auto path = std::filesystem::absolute(*file, ec);
    return ec ? std::string() : path.parent_path().string();
}

// The scenario's name for a comparison column: the file name without .napkin.json / .json.
std::string scenarioLabel(const std::string& file)
{
    std::string l = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
    for (const std::string ext : {".napkin.json", ".json"})
        if (l.size() > ext.size() && l.compare(l.size() - ext.size(), ext.size(), ext) == 0) {
            l.resize(l.size() - ext.size());
            break;
        }
    return l;
}

// The report options of a napkin.report-request/1 (app/report/reportrequest.h).
json reportOptions(const Options& o, Errors& errors)
{
    json r = {{"gib", o.gib}, {"version", NAPKIN_VERSION}, {"page", "a4"}};
    if (o.title)
        r["title"] = *o.title;
    if (o.page) {
        if (*o.page == "a4" || *o.page == "A4")
            r["page"] = "a4";
        else if (*o.page == "letter" || *o.page == "Letter")
            r["page"] = "letter";
        else
            errors.push_back({"--page", *o.page, "unknown page size", "a4, letter"});
    }
    return r;
}

json reportInput(const json& doc, const std::string& label, const std::string* file)
{
    return {{"document", doc}, {"label", label}, {"base_dir", absoluteDir(file)}};
}

// PDF, HTML and Markdown with chart images: napkin-report writes them (app/cli/reportclient.h).
int writeReportFile(const Options& o, const json& doc, const std::string* file, std::ostream& err)
{
    Errors errors;
    const auto options = reportOptions(o, errors);
    if (o.output.empty())
        errors.push_back({"-o", "", "a " + o.format + " report needs an output file", "-o FILE"});
    if (!errors.empty()) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const json request = {{"schema", "napkin.report-request/1"},
                          {"job", "report"},
                          {"format", o.format},
                          {"output", o.output},
                          {"options", options},
                          {"inputs", json::array({reportInput(doc, "", file)})}};
    return runReportHelper(request, err);
}

// The scenario document (defaults, file, --set) without parsing it; nullopt with errors.
std::optional<json> scenarioDocument(const Options& o, const std::string* file, Errors& errors)
{
    json doc = core::defaultScenarioJson();
    if (file) {
        std::string why;
        const auto text = core::readTextFile(*file, why);
        if (!text) {
            errors.push_back({"SCENARIO", *file, why, "a readable napkin.scenario/1 JSON file"});
            return std::nullopt;
        }
        const auto merged = core::parseScenarioText(*text, *file, errors);
        if (!merged)
            return std::nullopt;
        doc = *merged;
    }
    for (const auto& s : o.sets)
        core::applySet(doc, s, errors);
    if (!errors.empty())
        return std::nullopt;
    return doc;
}

int cmdPlan(const Options& o, std::ostream& out, std::ostream& err)
{
    // Markdown to a file comes with chart images beside it: napkin-report draws those.
    const bool report = o.format == "pdf" || o.format == "html" || (o.format == "md" && !o.output.empty());
    if (!checkFormat(o, {"text", "json", "md", "csv", "pdf", "html"}, err))
        return InvalidInput;
    if (o.positional.size() > 1) {
        err << "error: plan takes at most one scenario file\n";
        return InvalidInput;
    }
    Errors errors;
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : o.positional.data(), errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto plan = core::estimate(*sc);
    if (report) {
        Errors derrs;
        const std::string* file = o.positional.empty() ? nullptr : o.positional.data();
        const auto doc = scenarioDocument(o, file, derrs);
        return checked(o, doc ? writeReportFile(o, *doc, file, err) : (printErrors(derrs, err), int(InvalidInput)),
                       !plan.memory.fits);
    }
    std::string text;
    // A mixture of experts with expert parallelism: the plan at imbalance 1.0 / 1.2 / 1.5 / worst.
    const auto sweep = core::imbalanceSweep(*sc);
    if (o.format == "json") {
        auto j = core::planToJson(plan);
        if (!sweep.empty())
            j["moe"]["imbalance_sweep"] = core::imbalanceSweepJson(sweep);
        text = j.dump(1) + "\n";
    } else if (o.format == "md") {
        // The executive summary and what would change the answer, as the Markdown report has them.
        Errors derrs;
        const std::string* file = o.positional.empty() ? nullptr : o.positional.data();
        const auto doc = scenarioDocument(o, file, derrs);
        const std::string baseDir =
            file && file->rfind('/') != std::string::npos ? file->substr(0, file->rfind('/')) : std::string();
        const auto sens = doc ? core::sensitivities(*doc, 3, baseDir) : std::vector<core::Sensitivity>{};
        const auto accuracy = core::accuracyFor(*sc, core::builtinValidationResults(), 5);
        text = core::planMarkdownWithSummary(*sc, plan, sens, &accuracy, [](double b) { return core::formatBytes(b); });
    } else if (o.format == "csv")
        text = core::planToCsv(plan, *sc);
    else
        text = core::planToText(plan) + core::imbalanceSweepText(sweep);
    return checked(o, writeOutput(o, text, out, err), !plan.memory.fits);
}

int cmdFit(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    Errors errors;
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : o.positional.data(), errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto r = core::fit(*sc);
    if (o.format == "json")
        return checked(o, writeOutput(o, core::fitToJson(r, *sc).dump(1) + "\n", out, err), r.maxMicroBatch < 1);
    std::string t = "Fit on " + std::to_string(sc->cluster.gpus) + " x " + sc->gpu->name + " (" +
                    core::formatBytes(sc->gpu->memoryBytes) + " each)\n";
    t +=
        "  model states only, ideal sharding: " + core::humanNumber(r.statesOnlyMaxParams, core::Quantity::Parameters) +
        " (" + core::formatNumber(r.statesBytesPerParam) + " bytes/param)\n";
    t += "  with activations and overhead:     " +
         core::humanNumber(r.withActivationsMaxParams, core::Quantity::Parameters) + " (ZeRO " +
         std::to_string(sc->parallel.zeroStage) + ", seq " + std::to_string(sc->training.seqLen) + ", micro-batch " +
         std::to_string(sc->training.microBatch) + ")\n";
    if (r.maxMicroBatch >= 1)
        t += "  largest micro-batch for " + sc->model.name + ": " + std::to_string(r.maxMicroBatch) + "\n";
    else // never "largest micro-batch: 0"
        t += "  " + sc->model.name + " does not fit even at micro-batch 1 (" + core::formatBytes(r.memoryAtOne) +
             " per GPU of " + core::formatBytes(sc->gpu->memoryBytes) +
             "): shard the states (parallel.zero, fsdp), recompute, or add tp / pp\n";
    return checked(o, writeOutput(o, t, out, err), r.maxMicroBatch < 1);
}

int cmdOp(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    Errors errors;
    if (o.positional.empty()) {
        err << "error: op needs a kind (allowed: gemm, relu, gelu, dot, matvec)\n";
        return InvalidInput;
    }
    const std::string kind = o.positional[0];
    auto num = [&](const std::optional<std::string>& v, const char* flag) -> double {
        if (!v) {
            errors.push_back({flag, "", "missing", "a positive integer up to 1e12"});
            return 0;
        }
        const auto d = core::parseQuantity(*v);
        if (!d || *d < 1 || *d > 1e12 || *d != std::floor(*d)) {
            errors.push_back({flag, *v, "must be a positive integer", "1 to 1e12"});
            return 0;
        }
        return *d;
    };
    const auto dt = core::parseDType(o.dtype.value_or("bf16"));
    if (!dt || !core::info(*dt).storable)
        errors.push_back({"--dtype", o.dtype.value_or(""), "unknown storage dtype",
                          "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4, mxfp4"});
    core::OpCost cost;
    core::OpUnit unit = core::OpUnit::Vector;
    const double e = dt ? core::bytesPerValue(*dt) : 2.0;
    if (kind == "gemm") {
        const double m = num(o.m, "--m"), k = num(o.k, "--k"), n = num(o.n, "--n");
        cost = core::gemmCost(m, k, n, e, o.exact);
        unit = core::OpUnit::Tensor;
    } else if (kind == "relu" || kind == "gelu" || kind == "dot" || kind == "matvec") {
        const double n = num(o.n, "--n");
        cost = kind == "relu"   ? core::reluCost(n, e)
               : kind == "gelu" ? core::geluCost(n, e)
               : kind == "dot"  ? core::dotCost(n, e)
                                : core::matvecCost(n, e);
    } else {
        errors.push_back({"op", kind, "unknown operation", "gemm, relu, gelu, dot, matvec"});
    }
    Options so = o;
    if (dt && kind == "gemm" && core::info(*dt).storable)
        so.sets.push_back(std::string("precision.compute=") + std::string(core::info(*dt).id));
    std::optional<core::Scenario> sc;
    if (errors.empty())
        sc = loadScenario(so, o.positional.size() > 1 ? &o.positional[1] : nullptr, errors);
    if (!errors.empty() || !sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto plan = core::estimate(*sc);
    const auto op = core::makeOp(kind.c_str(), core::Pass::Forward, unit, cost, plan.hardware);
    json j = {{"op", kind},
              {"dtype", core::info(*dt).id},
              {"flops", op.flops},
              {"bytes", op.bytes},
              {"intensity", op.intensity},
              {"bound", core::toString(op.bound)},
              {"unit", unit == core::OpUnit::Tensor ? "tensor" : "vector"},
              {"ceiling_flops", op.ceiling},
              {"attainable_flops", op.attainable},
              {"time_s", op.timeSeconds},
              {"ridge", op.ceiling / plan.hardware.bandwidth},
              {"bandwidth", plan.hardware.bandwidth},
              {"gpu", plan.hardware.name()},
              {"source", "CS336 lecture 2 op table; roofline t >= max(F/C, Q/beta)"}};
    if (o.format == "json")
        return writeOutput(o, j.dump(1) + "\n", out, err);
    std::string t = kind + " (" + std::string(core::info(*dt).id) + ") on " + plan.hardware.name() + "\n";
    t += "  FLOPs       " + core::formatNumber(op.flops) + "\n  bytes       " + core::formatNumber(op.bytes) +
         "\n  intensity   " + core::formatNumber(op.intensity) + " FLOP/byte (ridge " +
         core::formatNumber(op.ceiling / plan.hardware.bandwidth) + ")\n  bound       " + core::toString(op.bound) +
         "\n  attainable  " + core::formatNumber(op.attainable / 1e12) + " TFLOP/s\n  ideal time  " +
         core::formatNumber(op.timeSeconds) + " s\n";
    return writeOutput(o, t, out, err);
}

int cmdCompare(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json", "md", "csv", "html", "pdf"}, err))
        return InvalidInput;
    if (o.positional.size() < 2) {
        err << "error: compare needs at least two scenario files (allowed: compare A.json B.json ...)\n";
        return InvalidInput;
    }
    Errors errors;
    std::vector<json> docs;
    for (const auto& f : o.positional) {
        auto doc = scenarioDocument(o, &f, errors);
        if (doc) {
            Errors perr;
            core::parseScenario(*doc, core::builtinCatalog(), perr,
                                f.rfind('/') == std::string::npos ? std::string() : f.substr(0, f.rfind('/')));
            for (auto& e : perr)
                e.field = f + ": " + e.field;
            errors.insert(errors.end(), perr.begin(), perr.end());
            docs.push_back(*doc);
        }
    }
    if (!errors.empty()) {
        printErrors(errors, err);
        return InvalidInput;
    }
    auto baseDir = [&](std::size_t i) {
        const auto slash = o.positional[i].rfind('/');
        return slash == std::string::npos ? std::string() : o.positional[i].substr(0, slash);
    };
    // The scenario's own name when it has one, else the file name (scenarioLabel).
    auto label = [&](std::size_t i) {
        const auto n = docs[i].find("name");
        return n != docs[i].end() && n->is_string() && !n->get<std::string>().empty() ? n->get<std::string>()
                                                                                      : scenarioLabel(o.positional[i]);
    };
    // Text, JSON, CSV and Markdown to stdout (or -o) from the core; PDF, HTML and Markdown to a file
    // with chart images from napkin-report.
    if (o.format == "text" || o.format == "json" || o.format == "csv" || (o.format == "md" && o.output.empty())) {
        json j = {{"schema", "napkin.compare/1"}, {"plans", json::array()}};
        std::vector<core::Plan> plans;
        plans.reserve(docs.size()); // compared points into it
        std::vector<core::ComparedPlan> compared;
        for (std::size_t i = 0; i < docs.size(); ++i) {
            Errors e2;
            const auto sc = core::parseScenario(docs[i], core::builtinCatalog(), e2, baseDir(i));
            plans.push_back(core::estimate(sc));
            auto pj = core::planToJson(plans.back());
            pj["label"] = label(i);
            j["plans"].push_back(pj);
            compared.push_back({label(i), &plans.back()});
        }
        const std::string text = o.format == "json"  ? j.dump(1) + "\n"
                                 : o.format == "csv" ? core::compareToCsv(compared)
                                 : o.format == "md"  ? core::compareToMarkdown(compared)
                                                     : core::compareToText(compared);
        return writeOutput(o, text, out, err);
    }
    const auto options = reportOptions(o, errors);
    if (o.output.empty())
        errors.push_back({"-o", "", "a " + o.format + " comparison needs an output file", "-o FILE"});
    if (!errors.empty()) {
        printErrors(errors, err);
        return InvalidInput;
    }
    json inputs = json::array();
    for (std::size_t i = 0; i < docs.size(); ++i)
        inputs.push_back(reportInput(docs[i], label(i), &o.positional[i]));
    return runReportHelper({{"schema", "napkin.report-request/1"},
                            {"job", "comparison"},
                            {"format", o.format},
                            {"output", o.output},
                            {"options", options},
                            {"inputs", inputs}},
                           err);
}

int cmdChart(const Options& o, std::ostream& err)
{
    Errors errors;
    const std::vector<std::string> kinds{"ledger", "roofline", "timeline", "steptime", "stages"};
    if (o.positional.empty() || std::find(kinds.begin(), kinds.end(), o.positional[0]) == kinds.end())
        errors.push_back({"chart", o.positional.empty() ? "" : o.positional[0], "unknown chart",
                          "ledger, roofline, timeline, steptime, stages"});
    std::string format = o.format; // PNG, png: as the file extension may be written
    for (auto& c : format)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    if (format.empty()) { // no --format: -o's extension, else png
        const auto dot = o.output.rfind('.');
        std::string ext = dot == std::string::npos ? std::string() : o.output.substr(dot + 1);
        for (auto& c : ext)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        format = ext == "svg" || ext == "pdf" ? ext : "png";
    }
    if (format != "png" && format != "svg" && format != "pdf")
        errors.push_back({"--format", o.format, "unknown chart format", "png, svg, pdf"});
    if (o.output.empty())
        errors.push_back({"-o", "", "a chart needs an output file", "-o FILE"});
    const std::string kind = o.positional.empty() ? std::string() : o.positional[0];
    int w = 900, h = kind == "ledger"                         ? 260
                     : kind == "timeline" || kind == "stages" ? 360
                     : kind == "steptime"                     ? 300
                                                              : 480;
    if (o.size) {
        const auto x = o.size->find('x');
        w = x == std::string::npos ? 0 : std::atoi(o.size->substr(0, x).c_str());
        h = x == std::string::npos ? 0 : std::atoi(o.size->substr(x + 1).c_str());
        if (w < 200 || h < 120 || w > 8000 || h > 8000)
            errors.push_back({"--size", *o.size, "out of range", "WxH from 200x120 to 8000x8000"});
    }
    const std::string* file = o.positional.size() > 1 ? &o.positional[1] : nullptr;
    const auto doc = errors.empty() ? scenarioDocument(o, file, errors) : std::nullopt;
    if (!doc || !errors.empty()) {
        printErrors(errors, err);
        return InvalidInput;
    }
    return runReportHelper({{"schema", "napkin.report-request/1"},
                            {"job", "chart"},
                            {"format", format},
                            {"output", o.output},
                            {"chart", kind},
                            {"size", {w, h}},
                            {"scale", o.scale},
                            {"inputs", json::array({reportInput(*doc, "", file)})}},
                           err);
}

} // namespace detail

int run(int argc, char** argv, std::ostream& out, std::ostream& err)
{
    using namespace detail;
    try {
        Options o;
        if (const int status = parseCommandLine(argc, argv, o, out, err); status >= 0)
            return status; // --help, --version, --man, or a command-line error
        if (o.command == "plan")
            return cmdPlan(o, out, err);
        if (o.command == "fit")
            return cmdFit(o, out, err);
        if (o.command == "search")
            return cmdSearch(o, out, err);
        if (o.command == "suggest")
            return cmdSuggest(o, out, err);
        if (o.command == "gpus-for")
            return cmdGpusFor(o, out, err);
        if (o.command == "validate")
            return cmdValidate(o, out, err);
        if (o.command == "op")
            return cmdOp(o, out, err);
        if (o.command == "presets")
            return cmdPresets(o, out, err);
        if (o.command == "dtype")
            return cmdDtype(o, out, err);
        if (o.command == "reconcile")
            return cmdReconcile(o, out, err);
        if (o.command == "compare")
            return cmdCompare(o, out, err);
        if (o.command == "chart")
            return cmdChart(o, err);
        err << "error: unknown command '" << o.command << "'\n"; // parseCommandLine knows every command
        return InternalError;
    } catch (const std::exception& e) {
        err << "internal error: " << e.what() << "\n";
        return InternalError;
    }
}

} // namespace napkin::cli
