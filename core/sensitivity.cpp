// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "sensitivity.h"

#include "catalog.h"
#include "estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace napkin::core {

namespace {
std::string num(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e7)
        return fmt::format("{:.0f}", v);
    return fmt::format("{:.3g}", v);
}
} // namespace

std::vector<Sensitivity> sensitivities(const nlohmann::json& doc, std::size_t count, const std::string& baseDir,
                                       const FileReader& reader)
{
    Errors errors;
    const Scenario base = parseScenario(doc, builtinCatalog(), errors, baseDir, reader);
    if (!errors.empty())
        return {};
    const Plan before = estimate(base);
    std::vector<Sensitivity> out;
    // Each change is a list of PATH=VALUE assignments on the document.
    auto consider = [&](const char* input, const std::string& change, std::initializer_list<std::string> sets) {
        nlohmann::json d = doc;
        Errors e;
        for (const auto& s : sets)
            applySet(d, s, e);
        const Scenario s = parseScenario(d, builtinCatalog(), e, baseDir, reader);
        if (!e.empty())
            return; // not a valid scenario at that value: no line
        const Plan after = estimate(s);
        Sensitivity x;
        x.input = input;
        x.change = change;
        x.memoryBefore = before.memory.total;
        x.memoryAfter = after.memory.total;
        x.daysBefore = before.time.days;
        x.daysAfter = after.time.days;
        x.fitsBefore = before.memory.fits;
        x.fitsAfter = after.memory.fits;
        const double dm = std::fabs(x.memoryAfter - x.memoryBefore) / x.memoryBefore;
        const double dd = std::fabs(x.daysAfter - x.daysBefore) / x.daysBefore;
        x.score = std::max(dm, dd) + (x.fitsAfter != x.fitsBefore ? 1.0 : 0.0);
        if (std::isfinite(x.score) && x.score > 1e-9)
            out.push_back(x);
    };
    auto set = [](const char* path, double v) { return std::string(path) + "=" + fmt::format("{:.17g}", v); };
    // Half of a count, rounded down: batches, lengths and GPU counts stay whole numbers.
    auto halved = [](std::int64_t n) {
        const std::int64_t half = n / 2;
        return double(half);
    };
    const auto& t = base.training;
    const double mb = double(t.microBatch), gb = double(t.globalBatch);
    // A larger micro-batch needs a global batch of at least that many sequences.
    consider("training.micro_batch", num(mb) + " → " + num(2 * mb),
             {set("training.micro_batch", 2 * mb), set("training.global_batch", std::max(gb, 2 * mb))});
    if (t.microBatch > 1)
        consider("training.micro_batch", num(mb) + " → " + num(halved(t.microBatch)),
                 {set("training.micro_batch", halved(t.microBatch))});
    if (base.model.kind != ModelKind::Mlp) {
        const double sl = double(t.seqLen);
        const bool learned = base.model.shape.positions == PositionKind::Learned;
        if (!learned || 2 * t.seqLen <= base.model.shape.maxPositions) // no position table rows past max_positions
            consider("training.seq_len", num(sl) + " → " + num(2 * sl), {set("training.seq_len", 2 * sl)});
        if (t.seqLen > 1)
            consider("training.seq_len", num(sl) + " → " + num(halved(t.seqLen)),
                     {set("training.seq_len", halved(t.seqLen))});
        if (t.recompute != Recompute::Full)
            consider("training.recompute", std::string(toString(t.recompute)) + " → full",
                     {"training.recompute=\"full\""});
        if (!t.flashAttention)
            consider("training.flash_attention", "false → true", {"training.flash_attention=true"});
    }
    // The data-parallel size follows the GPU count (the layout's tp, pp and cp stay).
    const double G = double(base.cluster.gpus);
    consider("cluster.gpus", num(G) + " → " + num(2 * G), {set("cluster.gpus", 2 * G), "parallel.dp=\"auto\""});
    if (base.cluster.gpus > 1)
        consider("cluster.gpus", num(G) + " → " + num(halved(base.cluster.gpus)),
                 {set("cluster.gpus", halved(base.cluster.gpus)), "parallel.dp=\"auto\""});
    if (base.parallel.zeroStage < 3 && base.parallel.fsdp == Fsdp::None)
        consider("parallel.zero", num(base.parallel.zeroStage) + " → " + num(base.parallel.zeroStage + 1),
                 {set("parallel.zero", base.parallel.zeroStage + 1)});
    if (base.stepTime.mode == TimeMode::Mfu) { // predicted: MFU is an output, not an input
        // One step down: 0.1 lower, or half when MFU is already that low.
        const double mfuDown = base.cluster.mfu > 0.2 ? base.cluster.mfu - 0.1 : base.cluster.mfu / 2;
        consider("cluster.mfu", num(base.cluster.mfu) + " → " + num(mfuDown), {set("cluster.mfu", mfuDown)});
    }
    consider("training.tokens", num(t.tokens) + " → " + num(2 * t.tokens), {set("training.tokens", 2 * t.tokens)});
    std::stable_sort(out.begin(), out.end(),
                     [](const Sensitivity& a, const Sensitivity& b) { return a.score > b.score; });
    // One line per input: its strongest change.
    std::vector<Sensitivity> top;
    for (const auto& s : out) {
        if (top.size() == count)
            break;
        if (std::none_of(top.begin(), top.end(), [&](const Sensitivity& x) { return x.input == s.input; }))
            top.push_back(s);
    }
    return top;
}

} // namespace napkin::core
