// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli's solvers: search (the fastest parallel layouts that fit) and gpus-for (the fewest GPUs
// that meet a deadline).
#include "clicommon.h"
#include "cli.h"

#include "format.h"
#include "jsonreader.h"
#include "makefit.h"
#include "search.h"
#include "validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace napkin::cli::detail {

using core::Errors;

namespace {

std::string seconds(double s) { return s >= 1 ? fmt::format("{:.3f} s", s) : fmt::format("{:.1f} ms", s * 1e3); }

} // namespace

int cmdSuggest(const Options& o, std::ostream& out, std::ostream& err)
{
    if (!checkFormat(o, {"text", "json"}, err))
        return InvalidInput;
    Errors errors;
    const std::string* file = o.positional.empty() ? nullptr : o.positional.data();
    if (!loadScenario(o, file, errors)) { // strict parse first: errors name the field
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto doc = scenarioDocument(o, file, errors);
    std::string baseDir;
    if (file && file->rfind('/') != std::string::npos)
        baseDir = file->substr(0, file->rfind('/'));
    const auto r = core::suggestFits(*doc, baseDir);
    const bool none = !r.baselineFits &&
                      std::none_of(r.changes.begin(), r.changes.end(), [](const core::FitChange& c) { return c.fits; });
    const std::string text =
        o.format == "json" ? core::fitSuggestionsToJson(r).dump(1) + "\n" : core::fitSuggestionsText(r);
    return checked(o, writeOutput(o, text, out, err), none);
}

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
    opt.searchExpertTensor = !o.keepEtp;
    opt.unevenStages = o.unevenStages;
    Errors errors;
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : o.positional.data(), errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    const auto r = core::searchLayouts(*sc, opt);
    if (o.format == "json")
        return checked(o, writeOutput(o, core::searchToJson(r, *sc).dump(1) + "\n", out, err), r.best.empty());
    std::string t = "Best layouts for " + sc->model.name + " on " + std::to_string(sc->cluster.gpus) + " x " +
                    sc->gpu->name + ", global batch " + std::to_string(sc->training.globalBatch) + "\n";
    t += fmt::format("{} layouts evaluated, {} fit, {} do not fit, {} skipped (batch not divisible); {:.1f} ms\n\n",
                     r.evaluated, r.feasible, r.rejectedMemory, r.rejectedBatch, r.elapsedSeconds * 1e3);
    if (r.best.empty()) {
        t += "No layout fits. Try more GPUs, a smaller model or a shorter sequence.\n";
        return checked(o, writeOutput(o, t, out, err), true);
    }
    // v: interleaved chunks per stage, or "dual" for DualPipe (parallel.pipeline_schedule).
    // pp: uneven stages as "16 (2/3)": the first and last stage's layers (parallel.first/last_stage_layers).
    // ep: expert tensor parallelism as "8 (etp 1)" where it differs from tp (parallel.etp).
    t += "  #  tp        pp    v  cp     dp         ep   mb  recompute  zero        step   tokens/s    MFU     memory  "
         "why\n";
    int rank = 1;
    for (const auto& x : r.best) {
        const auto& l = x.layout;
        const std::string v =
            l.schedule == core::PipelineSchedule::DualPipe ? std::string("dual") : std::to_string(l.virtualStages);
        const std::string pp = l.firstStageLayers > 0
                                   ? fmt::format("{} ({}/{})", l.pp, l.firstStageLayers, l.lastStageLayers)
                                   : std::to_string(l.pp);
        const int etp = l.etp > 0 ? l.etp : l.tp;
        const std::string ep = l.ep > 1 && etp != l.tp ? fmt::format("{} (etp {})", l.ep, etp) : std::to_string(l.ep);
        t += fmt::format(
            "{:3} {:3} {:>9} {:>4} {:3} {:6} {:>10} {:4}  {:<9}  {:4}  {:>10} {:10.3g}  {:5.1f}% {:>10}  {}\n", rank++,
            l.tp, pp, v, l.cp, l.dp, ep, l.microBatch, core::toString(l.recompute), l.zero, seconds(x.time.step),
            x.time.tokensPerSecond, 100 * x.time.mfu, core::formatBytes(x.memoryTotal), x.why);
    }
    if (!sc->parallel.sequenceParallel && std::any_of(r.best.begin(), r.best.end(), [&](const auto& x) {
            return core::sequenceParallelFor(*sc, x.layout);
        }))
        t += "\nLayouts with ep > 1 and tp > 1 run with sequence parallelism (parallel.sequence_parallel = true): "
             "Megatron-Core requires it.\n";
    t += "\nPredicted step time: each op at its achievable rate, alpha-beta collectives, the framework's overlap and "
         "the pipeline bubble; its error against published runs: napkin-cli validate (docs/validation.md).\n";
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
    const auto sc = loadScenario(o, o.positional.empty() ? nullptr : o.positional.data(), errors);
    if (!sc) {
        printErrors(errors, err);
        return InvalidInput;
    }
    core::BatchPolicy policy = core::BatchPolicy::Fixed;
    if (o.batch && *o.batch == "scale")
        policy = core::BatchPolicy::Scale;
    else if (o.batch && *o.batch != "fixed") {
        err << "error: --batch: '" << *o.batch << "' is not a batch policy (allowed: fixed, scale)\n";
        return InvalidInput;
    }
    const auto r = core::fewestGpusForDeadline(*sc, *days, policy);
    const int zero = r.zeroStage >= 0 ? r.zeroStage : sc->parallel.zeroStage;
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
                               {"layout",
                                {{"tp", sc->parallel.tp},
                                 {"pp", sc->parallel.pp},
                                 {"cp", sc->parallel.cp},
                                 {"ep", sc->parallel.ep},
                                 {"pipeline_schedule", core::toString(sc->parallel.schedule)},
                                 {"zero", zero}}},
                               {"zero_changed", r.zeroStage >= 0},
                               {"batch", policy == core::BatchPolicy::Fixed ? "fixed" : "scale"},
                               {"data_parallel_limit", r.dpLimit},
                               {"batch_limited", r.batchLimited},
                               {"gpus_at_limit", r.gpusAtLimit},
                               {"days_at_limit", r.daysAtLimit},
                               {"evaluated", r.evaluated}};
        return checked(o, writeOutput(o, j.dump(1) + "\n", out, err), !r.found);
    }
    std::string t;
    const std::string zeroNote =
        r.zeroStage >= 0 ? fmt::format(" (at ZeRO {}: it never fits at ZeRO {})", r.zeroStage, sc->parallel.zeroStage)
                         : "";
    if (!r.found && !r.everFits)
        t += fmt::format(
            "{} does not fit on {} at any GPU count, even with the model states sharded (ZeRO up to 3): at least {} "
            "per GPU of {}. More GPUs shard the model states, not the activations: try training.recompute, "
            "parallel.tp / pp / cp or a smaller micro-batch.\n",
            sc->model.name, sc->gpu->name, core::formatBytes(r.smallestMemory), core::formatBytes(r.capacity));
    else if (!r.found && r.batchLimited)
        t += fmt::format(
            "Not within {:g} days at global batch {}: data parallelism stops at {} ranks (global_batch / micro_batch), "
            "{} GPUs, which take {:.1f} days{}. More would grow the batch (--batch scale), or raise "
            "training.global_batch, tp, pp or cp.\n",
            *days, core::formatGrouped(double(sc->training.globalBatch)), core::formatGrouped(double(r.dpLimit)),
            core::formatGrouped(double(r.gpusAtLimit)), r.daysAtLimit, zeroNote);
    else if (!r.found)
        t += fmt::format("No GPU count up to 10,000,000 trains {} within {:g} days on {}{}.\n", sc->model.name, *days,
                         sc->gpu->name, zeroNote);
    else
        t += fmt::format(
            "{} x {} train {} on {} tokens in {:.1f} days (deadline {:g}; {} per GPU; tp {}, pp {}, cp {}{}, ZeRO {}; "
            "{} "
            "time){}\n",
            core::formatGrouped(double(r.gpus)), sc->gpu->name, sc->model.name, core::formatCount(sc->training.tokens),
            r.days, *days, core::formatBytes(r.memoryTotal), sc->parallel.tp, sc->parallel.pp, sc->parallel.cp,
            sc->parallel.ep > 1
                ? fmt::format(", ep {} (the GPU count keeps ep x etp dividing tp x cp x dp)", sc->parallel.ep)
                : std::string(),
            zero, core::toString(sc->stepTime.mode), zeroNote);
    return checked(o, writeOutput(o, t, out, err), !r.found);
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
