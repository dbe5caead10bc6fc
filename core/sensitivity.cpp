#include "sensitivity.h"

#include "estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace napkin::core {

namespace {
std::string num(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e7)
        return fmt::format("{:.0f}", v);
    return fmt::format("{:.3g}", v);
}
} // namespace

std::vector<Sensitivity> sensitivities(const Scenario& base, std::size_t count)
{
    const Plan before = estimate(base);
    std::vector<Sensitivity> out;
    auto consider = [&](const char* input, const std::string& change, const std::function<void(Scenario&)>& edit) {
        Scenario s = base;
        edit(s);
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
    const auto& t = base.training;
    auto batchFor = [](Scenario& s) { s.training.globalBatch = std::max(s.training.globalBatch, s.training.microBatch); };
    consider("training.micro_batch", num(double(t.microBatch)) + " → " + num(double(2 * t.microBatch)),
             [&](Scenario& s) { s.training.microBatch *= 2; batchFor(s); });
    if (t.microBatch > 1)
        consider("training.micro_batch", num(double(t.microBatch)) + " → " + num(double(t.microBatch / 2)),
                 [&](Scenario& s) { s.training.microBatch /= 2; });
    if (base.model.kind != ModelKind::Mlp) {
        const bool learned = base.model.shape.positions == PositionKind::Learned;
        if (!learned || 2 * t.seqLen <= base.model.shape.maxPositions)
            consider("training.seq_len", num(double(t.seqLen)) + " → " + num(double(2 * t.seqLen)),
                     [&](Scenario& s) { s.training.seqLen *= 2; });
        if (t.seqLen > 1)
            consider("training.seq_len", num(double(t.seqLen)) + " → " + num(double(t.seqLen / 2)),
                     [&](Scenario& s) { s.training.seqLen /= 2; });
        if (t.recompute != Recompute::Full)
            consider("training.recompute", std::string(toString(t.recompute)) + " → full",
                     [&](Scenario& s) { s.training.recompute = Recompute::Full; });
        if (!t.flashAttention)
            consider("training.flash_attention", "false → true", [&](Scenario& s) { s.training.flashAttention = true; });
    }
    consider("cluster.gpus", num(double(base.cluster.gpus)) + " → " + num(double(2 * base.cluster.gpus)),
             [&](Scenario& s) { s.cluster.gpus *= 2; });
    if (base.cluster.gpus > 1)
        consider("cluster.gpus", num(double(base.cluster.gpus)) + " → " + num(double(base.cluster.gpus / 2)),
                 [&](Scenario& s) { s.cluster.gpus /= 2; });
    if (base.parallel.zeroStage < 3)
        consider("parallel.zero", num(base.parallel.zeroStage) + " → " + num(base.parallel.zeroStage + 1),
                 [&](Scenario& s) { s.parallel.zeroStage += 1; });
    // One step down: 0.1 lower, or half when MFU is already that low.
    const double mfuDown = base.cluster.mfu > 0.2 ? base.cluster.mfu - 0.1 : base.cluster.mfu / 2;
    consider("cluster.mfu", num(base.cluster.mfu) + " → " + num(mfuDown), [&](Scenario& s) { s.cluster.mfu = mfuDown; });
    consider("training.tokens", num(t.tokens) + " → " + num(2 * t.tokens), [&](Scenario& s) { s.training.tokens *= 2; });
    std::stable_sort(out.begin(), out.end(), [](const Sensitivity& a, const Sensitivity& b) { return a.score > b.score; });
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
