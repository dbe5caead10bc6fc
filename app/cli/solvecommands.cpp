// napkin-cli's solvers: search (the fastest parallel layouts that fit) and gpus-for (the fewest GPUs
// that meet a deadline).
#include "clicommon.h"
#include "cli.h"

#include "format.h"
#include "jsonreader.h"
#include "search.h"
#include "validate.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace napkin::cli::detail {

using core::Errors;

namespace {

std::string seconds(double s)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, s >= 1 ? "%.3f s" : "%.1f ms", s >= 1 ? s : s * 1e3);
    return buf;
}

} // namespace

int cmdSearch(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    core::SearchOptions opt;
    if (o.top) {
        const auto v = core::parseQuantity(*o.top);
        if (!v || *v < 1 || *v > 1000 || *v != std::floor(*v)) {
            err << "error: --top: '" << *o.top << "' is not a whole number (allowed: 1 to 1000)\n";
            return InvalidInput;
        }
        opt.top = int(*v);
    }
    opt.searchRecompute = !o.keepRecompute;
    opt.searchZero = !o.keepZero;
    Errors errors;
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : &o.positional[0], errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto r = core::searchLayouts(*sc, opt);
    if (o.format == "json")
        return writeOutput(o, core::searchToJson(r, *sc).dump(1) + "\n", out, err);
    std::string t = "Best layouts for " + sc->model.name + " on " + std::to_string(sc->cluster.gpus) + " x " +
                    sc->gpu->name + ", global batch " + std::to_string(sc->training.globalBatch) + "\n";
    char buf[512];
    std::snprintf(buf, sizeof buf, "%lld layouts evaluated, %lld fit, %lld do not fit, %lld skipped (batch not divisible); %.1f ms\n\n",
                  static_cast<long long>(r.evaluated), static_cast<long long>(r.feasible),
                  static_cast<long long>(r.rejectedMemory), static_cast<long long>(r.rejectedBatch), r.elapsedSeconds * 1e3);
    t += buf;
    if (r.best.empty()) {
        t += "No layout fits. Try more GPUs, a smaller model or a shorter sequence.\n";
        return writeOutput(o, t, out, err);
    }
    t += "  #  tp  pp   v  cp     dp   mb  recompute  zero        step   tokens/s    MFU     memory  why\n";
    int rank = 1;
    for (const auto& x : r.best) {
        const auto& l = x.layout;
        std::snprintf(buf, sizeof buf, "%3d %3d %3d %3d %3d %6lld %4lld  %-9s  %4d  %10s %10.3g  %5.1f%% %10s  %s\n", rank++, l.tp,
                      l.pp, l.virtualStages, l.cp, static_cast<long long>(l.dp), static_cast<long long>(l.microBatch),
                      core::toString(l.recompute), l.zero, seconds(x.time.step).c_str(), x.time.tokensPerSecond,
                      100 * x.time.mfu, core::formatBytes(x.memoryTotal).c_str(), x.why.c_str());
        t += buf;
    }
    t += "\nPredicted step time: per-op roofline + communication + pipeline bubble (optimistic; see "
         "docs/plan-schema.md, predicted step time).\n";
    return writeOutput(o, t, out, err);
}

int cmdGpusFor(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    if (!o.deadlineDays) {
        err << "error: gpus-for needs --deadline-days D (allowed: 0.001 to 100000)\n";
        return InvalidInput;
    }
    const auto days = core::parseQuantity(*o.deadlineDays);
    if (!days || !(*days >= 0.001 && *days <= 100000)) {
        err << "error: --deadline-days: '" << *o.deadlineDays << "' is out of range (allowed: 0.001 to 100000)\n";
        return InvalidInput;
    }
    Errors errors;
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : &o.positional[0], errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto r = core::fewestGpusForDeadline(*sc, *days);
    if (o.format == "json") {
        const nlohmann::json j{{"schema", "napkin.gpus-for/1"},
                               {"deadline_days", *days},
                               {"found", r.found},
                               {"fits_at_some_count", r.everFits},
                               {"smallest_memory_bytes", r.smallestMemory},
                               {"gpus", r.gpus},
                               {"days", r.days},
                               {"memory_bytes", r.memoryTotal},
                               {"time_mode", core::toString(sc->stepTime.mode)},
                               {"layout", {{"tp", sc->parallel.tp}, {"pp", sc->parallel.pp}, {"cp", sc->parallel.cp}}},
                               {"evaluated", r.evaluated}};
        return writeOutput(o, j.dump(1) + "\n", out, err);
    }
    std::string t;
    char buf[512];
    if (!r.found && !r.everFits)
        std::snprintf(buf, sizeof buf,
                      "%s does not fit on %s at any GPU count: at least %s per GPU of %s. More GPUs shard the model states, "
                      "not the activations: try training.recompute, parallel.tp / pp / cp or a smaller micro-batch.\n",
                      sc->model.name.c_str(), sc->gpu->name.c_str(), core::formatBytes(r.smallestMemory).c_str(),
                      core::formatBytes(r.capacity).c_str());
    else if (!r.found)
        std::snprintf(buf, sizeof buf, "No GPU count up to 10,000,000 trains %s within %g days on %s.\n", sc->model.name.c_str(),
                      *days, sc->gpu->name.c_str());
    else
        std::snprintf(buf, sizeof buf,
                      "%lld x %s train %s on %s tokens in %.1f days (deadline %g; %s per GPU; tp %d, pp %d, cp %d; %s "
                      "time)\n",
                      static_cast<long long>(r.gpus), sc->gpu->name.c_str(), sc->model.name.c_str(),
                      core::formatNumber(sc->training.tokens).c_str(), r.days, *days, core::formatBytes(r.memoryTotal).c_str(),
                      sc->parallel.tp, sc->parallel.pp, sc->parallel.cp, core::toString(sc->stepTime.mode));
    t += buf;
    return writeOutput(o, t, out, err);
}

} // namespace napkin::cli::detail

namespace napkin::cli::detail {

int cmdValidate(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json", "md", "svg"}, err))
        return InvalidInput;
    std::vector<core::ValidationCase> loaded;
    const std::vector<core::ValidationCase>* cases = &core::builtinValidationSet();
    if (!o.positional.empty()) { // another set in the same format
        std::string why;
        const auto text = core::readTextFile(o.positional[0], why);
        if (!text) {
            err << "error: validate: " << why << "\n";
            return InvalidInput;
        }
        Errors errors;
        loaded = core::loadValidationSet(*text, errors);
        if (!errors.empty()) {
            printErrors(errors, err);
            return InvalidInput;
        }
        cases = &loaded;
    }
    const auto results = core::runValidation(*cases);
    const auto summary = core::summarize(results);
    std::string text;
    if (o.format == "json")
        text = core::validationToJson(results, summary).dump(1) + "\n";
    else if (o.format == "md")
        text = core::validationToMarkdown(results, summary);
    else if (o.format == "svg")
        text = core::validationToSvg(results, summary);
    else
        text = core::validationToText(results, summary);
    return writeOutput(o, text, out, err);
}

} // namespace napkin::cli::detail
