// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "search.h"

#include "estimate.h"
#include "framework.h"
#include "format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>
#include <tuple>

namespace napkin::core {

std::pair<int, int> unevenEndStages(std::int64_t layers, std::int64_t pp)
{
    if (pp < 2 || layers < pp || layers % pp == 0)
        return {0, 0};
    if (pp == 2)
        return {int(layers / 2), int(layers - layers / 2)};
    const std::int64_t k = (layers + pp - 1) / pp, ends = layers - (pp - 2) * k;
    if (ends < 2 || ends > 2 * k)
        return {0, 0};
    return {int(ends / 2), int(ends - ends / 2)};
}

void applyLayout(Scenario& sc, const Layout& l)
{
    sc.parallel.tp = l.tp;
    if (l.firstStageLayers > 0) { // the search's own uneven stages
        sc.parallel.firstStageLayers = l.firstStageLayers;
        sc.parallel.lastStageLayers = l.lastStageLayers;
        sc.parallel.pipelineLayout.clear();
    } else if (sc.parallel.pp != l.pp) { // uneven stages were stated for another pipeline depth
        sc.parallel.firstStageLayers = sc.parallel.lastStageLayers = 0;
        sc.parallel.pipelineLayout.clear();
    }
    sc.parallel.pp = l.pp;
    sc.parallel.virtualStages = l.virtualStages;
    sc.parallel.schedule = resolvedSchedule(l.schedule, l.virtualStages);
    sc.parallel.cp = l.cp;
    sc.parallel.dp = l.dp;
    // Expert layout: ep as chosen; etp as chosen (an etp equal to tp stays "auto" where it was), else
    // "auto" follows tp; EDP = tp · cp · dp / (etp · ep) (as loaded).
    sc.parallel.ep = std::max(1, l.ep);
    if (l.etp > 0 && !(l.etp == l.tp && sc.parallel.etpAuto)) {
        sc.parallel.etp = l.etp;
        sc.parallel.etpAuto = false;
    } else if (sc.parallel.etpAuto) {
        sc.parallel.etp = l.tp;
    }
    sc.parallel.edp = expertDataParallelSize(sc.parallel);
    sc.parallel.zeroStage = l.zero;
    sc.parallel.fsdp = Fsdp::None;
    sc.training.microBatch = l.microBatch;
    sc.training.recompute = l.recompute;
    resolveFramework(sc); // framework = auto follows the ZeRO stage, as when the layout is loaded
    // A layout Megatron-Core would refuse without sequence parallelism runs with it.
    if (requiresSequenceParallel(sc.stepTime.framework, l.tp, l.ep))
        sc.parallel.sequenceParallel = true;
}

void applyLayout(nlohmann::json& doc, const Layout& l)
{
    auto& pa = doc["parallel"];
    const bool ppChanged = !pa.contains("pp") || !pa["pp"].is_number_integer() || pa["pp"].get<int>() != l.pp;
    pa["tp"] = l.tp;
    pa["pp"] = l.pp;
    pa["virtual_stages"] = l.virtualStages;
    if (l.schedule == PipelineSchedule::DualPipe)
        pa["pipeline_schedule"] = "dualpipe";
    else if (pa.contains("pipeline_schedule"))
        pa["pipeline_schedule"] = "auto";
    pa["cp"] = l.cp;
    if (l.ep > 1 || pa.contains("ep"))
        pa["ep"] = l.ep;
    // The same etp rule as the scenario overload: an etp equal to tp stays "auto" where it was.
    const bool etpAuto = !pa.contains("etp") || pa["etp"].is_string() || pa["etp"].is_null();
    if (l.etp > 0 && !(l.etp == l.tp && etpAuto))
        pa["etp"] = l.etp;
    if (pa.contains("dp") &&
        !(pa["dp"].is_string() || pa["dp"].is_null())) // "auto" stays: tp · pp · cp · dp = GPUs already
        pa["dp"] = l.dp;
    if (l.firstStageLayers > 0) {
        pa["first_stage_layers"] = l.firstStageLayers;
        pa["last_stage_layers"] = l.lastStageLayers;
        pa.erase("pipeline_layout");
    } else if (ppChanged) { // uneven stages were stated for another pipeline depth
        for (const char* k : {"first_stage_layers", "last_stage_layers", "pipeline_layout"})
            pa.erase(k);
    }
    pa["zero"] = l.zero;
    pa["fsdp"] = "none";
    if (requiresSequenceParallel(documentFramework(doc), l.tp, l.ep))
        pa["sequence_parallel"] = true;
    doc["training"]["micro_batch"] = l.microBatch;
    doc["training"]["recompute"] = toString(l.recompute);
}

Framework documentFramework(const nlohmann::json& doc)
{
    // resolveFramework on the document: an explicit step_time.framework, else autoFramework.
    if (const auto st = doc.find("step_time"); st != doc.end() && st->is_object()) {
        if (const auto fw = st->find("framework"); fw != st->end() && fw->is_string() && *fw != "auto") {
            for (const Framework f : {Framework::Megatron, Framework::Torchtitan, Framework::Deepspeed})
                if (*fw == toString(f))
                    return f;
        }
    }
    const auto pa = doc.find("parallel");
    if (pa == doc.end() || !pa->is_object())
        return autoFramework(false, 0);
    const auto fsdp = pa->find("fsdp"), zero = pa->find("zero");
    return autoFramework(fsdp != pa->end() && fsdp->is_string() && *fsdp != "none",
                         zero != pa->end() && zero->is_number_integer() ? zero->get<int>() : 0);
}

bool documentRequiresSequenceParallel(const nlohmann::json& doc)
{
    const auto pa = doc.find("parallel");
    if (pa == doc.end() || !pa->is_object())
        return false;
    auto count = [&](const char* key) {
        const auto v = pa->find(key);
        return v != pa->end() && v->is_number_integer() ? v->get<int>() : 1;
    };
    return requiresSequenceParallel(documentFramework(doc), count("tp"), count("ep"));
}

bool sequenceParallelFor(const Scenario& sc, const Layout& l)
{
    Scenario applied = sc;
    applyLayout(applied, l);
    return applied.parallel.sequenceParallel;
}

Layout layoutOf(const Scenario& sc)
{
    Layout l;
    l.tp = sc.parallel.tp;
    l.pp = sc.parallel.pp;
    l.virtualStages = sc.parallel.virtualStages;
    l.schedule = sc.parallel.schedule;
    l.firstStageLayers = sc.parallel.firstStageLayers;
    l.lastStageLayers = sc.parallel.lastStageLayers;
    l.ep = sc.parallel.ep;
    l.etp = sc.parallel.etp;
    l.cp = sc.parallel.cp;
    l.dp = sc.parallel.dp;
    l.microBatch = sc.training.microBatch;
    l.recompute = sc.training.recompute;
    l.zero = effectiveZeroStage(sc);
    return l;
}

namespace {

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t cap)
{
    std::vector<std::int64_t> d;
    for (std::int64_t i = 1; i <= n && i <= cap; ++i)
        if (n % i == 0)
            d.push_back(i);
    return d;
}

struct Component {
    const char* name;
    double StepTimeBreakdown::*field;
};
constexpr std::array<Component, 9> kComponents{{{"compute", &StepTimeBreakdown::compute},
                                                {"recomputation", &StepTimeBreakdown::recompute},
                                                {"tensor-parallel traffic", &StepTimeBreakdown::tpComm},
                                                {"context-parallel traffic", &StepTimeBreakdown::cpComm},
                                                {"expert all-to-all", &StepTimeBreakdown::epComm},
                                                {"pipeline sends", &StepTimeBreakdown::ppComm},
                                                {"pipeline bubble", &StepTimeBreakdown::bubble},
                                                {"data-parallel traffic", &StepTimeBreakdown::dpComm},
                                                {"optimizer update", &StepTimeBreakdown::optimizer}}};

std::string explainBest(const LayoutResult& r)
{
    // The two largest parts of the step, and the memory it leaves.
    std::array<std::pair<double, const char*>, kComponents.size()> parts{};
    for (std::size_t i = 0; i < kComponents.size(); ++i)
        parts[i] = {r.time.*(kComponents[i].field), kComponents[i].name};
    std::sort(parts.begin(), parts.end(), [](auto a, auto b) { return a.first > b.first; });
    return fmt::format("fastest: {} {:.0f}% of the step, {} {:.0f}%; {} of memory to spare", parts[0].second,
                       100 * parts[0].first / r.time.step, parts[1].second, 100 * parts[1].first / r.time.step,
                       formatBytes(r.headroom));
}

std::string explainAgainst(const LayoutResult& r, const LayoutResult& best)
{
    // The part of the step that grew most against the best layout.
    double worst = 0;
    const char* name = "compute";
    for (const auto& c : kComponents) {
        const double d = r.time.*(c.field) - best.time.*(c.field);
        if (d > worst) {
            worst = d;
            name = c.name;
        }
    }
    const double slower = r.time.step / best.time.step - 1;
    if (slower < 1e-3) {
        const double more = r.memoryTotal - best.memoryTotal;
        return fmt::format("ties with #1 (within 0.1%); {} {} memory per GPU", formatBytes(std::fabs(more)),
                           more >= 0 ? "more" : "less");
    }
    return fmt::format("+{:.1f}% step time vs #1: more {} (+{:.3g} s)", 100 * slower, name, worst);
}

const char* recomputeName(Recompute r) { return toString(r); }

bool isMixture(const Scenario& sc)
{
    return sc.model.kind == ModelKind::Transformer && isMoe(sc.model.shape) && sc.model.shape.moe.experts > 0;
}

// Expert tensor-parallel sizes to try: tp (Megatron-Core's default, "auto") and 1 (each expert whole
// on its rank; MoE parallel folding lets the expert layers use another TP size than attention,
// megatron/core/transformer/moe/README.md), each dividing the expert FFN (checkExpertLayout). The
// scenario's own etp alone where the search keeps the stated layout. {0} for a dense model.
std::vector<int> expertTensorRanks(const Scenario& base, std::int64_t tp, bool explore)
{
    if (!isMixture(base))
        return {0};
    std::vector<int> out;
    const auto add = [&](std::int64_t etp) {
        if (etp >= 1 && base.model.shape.moe.expertFfn % etp == 0 &&
            std::find(out.begin(), out.end(), int(etp)) == out.end())
            out.push_back(int(etp));
    };
    if (!explore) {
        add(base.parallel.etpAuto ? tp : std::max(1, base.parallel.etp));
        return out;
    }
    add(tp);
    add(1);
    return out;
}

// Expert-parallel sizes a layout can take with that etp (the loader's rules, core/scenario_sections.cpp
// checkExpertLayout): ep divides the experts, ep · etp divides tp · cp · dp. {1} for a dense model.
std::vector<std::int64_t> expertRanks(const Scenario& base, std::int64_t tp, std::int64_t cp, std::int64_t dp,
                                      std::int64_t etp)
{
    if (!isMixture(base))
        return {1};
    const auto& shape = base.model.shape;
    std::vector<std::int64_t> out;
    for (const auto ep : divisors(shape.moe.experts, shape.moe.experts))
        if ((tp * cp * dp) % (ep * etp) == 0)
            out.push_back(ep);
    return out;
}

} // namespace

namespace {

// What every block of the search shares: the candidate values and the rules, fixed by the scenario.
struct SearchSpace {
    const Scenario* base = nullptr;
    const SearchOptions* opt = nullptr;
    std::int64_t layers = 1, globalBatch = 1;
    bool isMlp = false, tryDualPipe = false, keepFsdp = false;
    std::vector<Recompute> recomputes;
    std::vector<int> zeros;
};

// One block of the search: the layouts of one (tp, cp, pp), planned on the calling thread.
struct SearchBlock {
    std::int64_t tp = 1, cp = 1, pp = 1;
    // Results with their place in the enumeration, so that blocks merged in any order give the list
    // one thread gives (fastest first, earlier layouts first among equal steps).
    std::vector<std::pair<std::int64_t, LayoutResult>> kept;
    std::int64_t evaluated = 0, feasible = 0, rejectedMemory = 0, rejectedBatch = 0;
};

void searchBlock(const SearchSpace& space, SearchBlock& block)
{
    const Scenario& base = *space.base;
    const SearchOptions& opt = *space.opt;
    Scenario sc = base;
    sc.stepTime.mode = TimeMode::Predicted;
    const std::int64_t tp = block.tp, cp = block.cp, pp = block.pp, globalBatch = space.globalBatch;
    std::int64_t order = 0;
    // Returns whether the layout fits.
    auto consider = [&](const Layout& l) {
        applyLayout(sc, l);
        if (space.keepFsdp)
            sc.parallel.fsdp = base.parallel.fsdp, sc.parallel.zeroStage = base.parallel.zeroStage;
        resolveFramework(sc);                 // framework = auto follows the ZeRO stage, as when the layout is applied
        const Plan p = estimateForSearch(sc); // stops at the ledger when the layout does not fit
        ++block.evaluated;
        ++order;
        if (!p.memory.fits) {
            ++block.rejectedMemory;
            return false;
        }
        if (!p.stepTime.valid)
            return true;
        ++block.feasible;
        auto& kept = block.kept;
        const double step = p.stepTime.step;
        if (int(kept.size()) >= opt.top && step >= kept.back().second.time.step)
            return true;
        LayoutResult r;
        r.layout = l;
        r.layout.zero = effectiveZeroStage(sc);
        r.time = p.stepTime;
        r.memoryTotal = p.memory.total;
        r.headroom = p.memory.headroom;
        r.accumulationSteps = p.compute.accumulationSteps;
        const auto at = std::upper_bound(kept.begin(), kept.end(), step,
                                         [](double s, const auto& x) { return s < x.second.time.step; });
        kept.insert(at, {order, std::move(r)});
        if (int(kept.size()) > opt.top)
            kept.pop_back();
        return true;
    };

    const std::int64_t dp = base.cluster.gpus / (tp * cp * pp);
    const auto uneven = unevenEndStages(space.layers, pp); // pp does not divide the layers
    std::vector<std::int64_t> vs{1};
    if (pp > 1 && uneven.first == 0)
        vs = divisors(space.layers / pp, opt.maxVirtualStages);
    std::vector<std::int64_t> mbs; // micro-batches whose global batch divides
    for (std::int64_t mb = 1; mb <= opt.maxMicroBatch; mb *= 2) {
        if (globalBatch % (mb * dp) != 0)
            ++block.rejectedBatch;
        else
            mbs.push_back(mb);
    }
    if (mbs.empty())
        return;
    std::vector<std::pair<int, std::int64_t>> experts; // (etp, ep) pairs
    for (const int etp : expertTensorRanks(base, tp, opt.searchExpertTensor))
        for (const auto ep : expertRanks(base, tp, cp, dp, std::max(1, etp)))
            experts.emplace_back(etp, ep);
    for (const auto v : vs)
        for (const auto schedule : {PipelineSchedule::OneFOneB, PipelineSchedule::DualPipe}) {
            if (schedule == PipelineSchedule::DualPipe && (v > 1 || !space.tryDualPipe || pp < 2 || pp % 2 != 0))
                continue;
            for (const auto& [etp, ep] : experts)
                for (const auto rc : space.recomputes)
                    for (const int z : space.zeros) {
                        if (dp == 1 && z > 0 && opt.searchZero)
                            continue; // nothing to shard over: identical to ZeRO-0
                        // Micro-batches innermost, smallest first: a layout's memory grows with its
                        // micro-batch (activations ∝ b · min(pp, m), and b · m is the fixed batch per
                        // replica once m < pp), so once one does not fit no larger one does; those are
                        // counted as planned and rejected.
                        for (std::size_t i = 0; i < mbs.size(); ++i) {
                            const std::int64_t mb = mbs[i];
                            // DualPipe: an even number of at least 2 · pp micro-batches
                            // (checkPipelineSchedule).
                            const std::int64_t m = globalBatch / (mb * dp);
                            if (schedule == PipelineSchedule::DualPipe && !dualPipeMicroBatchesOk(m, pp))
                                continue;
                            Layout l{int(tp), int(pp), int(v), int(cp), dp, mb, rc, z};
                            l.ep = int(ep);
                            l.etp = etp;
                            l.schedule = schedule;
                            l.firstStageLayers = uneven.first;
                            l.lastStageLayers = uneven.second;
                            if (!consider(l)) {
                                for (std::size_t j = i + 1; j < mbs.size(); ++j) {
                                    const std::int64_t mj = globalBatch / (mbs[j] * dp);
                                    if (schedule == PipelineSchedule::DualPipe && !dualPipeMicroBatchesOk(mj, pp))
                                        continue;
                                    ++block.evaluated;
                                    ++block.rejectedMemory;
                                }
                                break;
                            }
                        }
                    }
        }
}

} // namespace

SearchResult searchLayouts(const Scenario& base, const SearchOptions& opt)
{
    const auto t0 = std::chrono::steady_clock::now();
    SearchResult out;
    SearchSpace space;
    space.base = &base;
    space.opt = &opt;
    space.isMlp = base.model.kind == ModelKind::Mlp;
    const std::int64_t G = base.cluster.gpus;
    const auto& shape = base.model.shape;
    const std::int64_t heads = space.isMlp ? 1 : shape.heads;
    const std::int64_t kv = space.isMlp ? 1 : std::max<std::int64_t>(1, shape.kvHeads);
    space.layers = space.isMlp ? 1 : shape.layers;
    const std::int64_t seq = space.isMlp ? 1 : base.training.seqLen;
    space.globalBatch = base.training.globalBatch;

    // The same constraints the scenario loader checks (core/scenario.cpp).
    std::vector<std::int64_t> tps;
    for (auto t : divisors(heads, heads))
        if ((kv % t == 0 || t % kv == 0) && G % t == 0)
            tps.push_back(t);
    std::vector<std::int64_t> cps;
    for (auto c : divisors(seq, opt.maxContextParallel))
        if ((c & (c - 1)) == 0) // powers of two, as ring attention implementations require
            cps.push_back(c);
    space.recomputes = opt.searchRecompute
                           ? std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full}
                           : std::vector<Recompute>{base.training.recompute};
    if (opt.searchZero)
        space.zeros = {0, 1, 2, 3};
    else
        space.zeros = {effectiveZeroStage(base)};
    space.keepFsdp = !opt.searchZero;
    space.tryDualPipe = base.parallel.schedule == PipelineSchedule::DualPipe || (!space.isMlp && isMixture(base));

    // Pipeline depths: the divisors of the layers (even stages), and the powers of two up to 64 that
    // do not divide them, with uneven end stages (unevenEndStages) as Megatron-LM allows.
    std::vector<std::int64_t> depths = divisors(space.layers, space.layers);
    if (!space.isMlp && opt.unevenStages)
        for (std::int64_t pp = 2; pp <= std::min<std::int64_t>(64, space.layers / 2); pp *= 2)
            if (space.layers % pp != 0 && unevenEndStages(space.layers, pp).first > 0)
                depths.push_back(pp);
    std::vector<SearchBlock> blocks;
    for (const auto tp : tps)
        for (const auto cp : cps)
            for (const auto pp : depths)
                if (G % (tp * cp * pp) == 0)
                    blocks.push_back({tp, cp, pp, {}, 0, 0, 0, 0});

    // The blocks are independent: planned on up to opt.threads threads (0: one per hardware thread),
    // each taking the next block in turn. Planning is pure (core keeps no mutable state).
    const unsigned hw = std::max(1U, std::thread::hardware_concurrency());
    const std::size_t threads =
        std::min<std::size_t>(blocks.size(), opt.threads > 0 ? std::size_t(opt.threads) : std::size_t(hw));
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < blocks.size(); i = next++)
            searchBlock(space, blocks[i]);
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t)
        pool.emplace_back(worker);
    worker();
    for (auto& t : pool)
        t.join();

    // Merged in enumeration order: the fastest first, the earlier layout first among equal steps.
    std::vector<std::tuple<double, std::size_t, std::int64_t, LayoutResult*>> all;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        auto& blk = blocks[b];
        out.evaluated += blk.evaluated;
        out.feasible += blk.feasible;
        out.rejectedMemory += blk.rejectedMemory;
        out.rejectedBatch += blk.rejectedBatch;
        for (auto& [order, r] : blk.kept)
            all.emplace_back(r.time.step, b, order, &r);
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
        return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
               std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
    });
    for (std::size_t i = 0; i < all.size() && int(i) < opt.top; ++i)
        out.best.push_back(std::move(*std::get<3>(all[i])));
    for (std::size_t i = 0; i < out.best.size(); ++i)
        out.best[i].why = i == 0 ? explainBest(out.best[0]) : explainAgainst(out.best[i], out.best[0]);
    out.elapsedSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

namespace {

GpuCountResult gpusForOneStage(const Scenario& base, double deadlineDays, BatchPolicy batch)
{
    GpuCountResult r;
    Scenario sc = base;
    auto& par = sc.parallel;
    const std::int64_t tpcp = std::int64_t(std::max(1, par.tp)) * std::max(1, par.cp);
    const std::int64_t mp = tpcp * std::max(1, par.pp);
    constexpr std::int64_t kMaxGpus = 10000000;
    const std::int64_t mb = std::max<std::int64_t>(1, sc.training.microBatch);
    r.dpLimit = batch == BatchPolicy::Fixed ? std::max<std::int64_t>(1, sc.training.globalBatch / mb) : kMaxGpus;
    // Expert parallelism: ep · etp must divide tp · cp · dp (Megatron-Core's folding rule, as the
    // loader checks), so dp steps in units of q = ep · etp / gcd(ep · etp, tp · cp); EDP follows.
    const std::int64_t fold = std::int64_t(std::max(1, par.ep)) * std::max(1, par.etp);
    const std::int64_t q = fold / std::gcd(fold, tpcp);
    // DualPipe needs an even number of at least 2 · pp micro-batches (checkPipelineSchedule): a dp
    // that breaks it fails, so the count found may not be the smallest but is a valid layout.
    const bool dual = par.schedule == PipelineSchedule::DualPipe;
    if (dual && batch == BatchPolicy::Fixed)
        r.dpLimit =
            std::max<std::int64_t>(1, std::min(r.dpLimit, sc.training.globalBatch / (mb * 2 * std::max(1, par.pp))));
    const std::int64_t kLimit = std::max<std::int64_t>(1, r.dpLimit / q);
    auto ok = [&](std::int64_t k, double* days, double* mem) {
        const std::int64_t dp = k * q;
        sc.cluster.gpus = dp * mp;
        par.dp = dp;
        par.edp = expertDataParallelSize(par);
        if (dual) {
            const std::int64_t m = (sc.training.globalBatch + mb * dp - 1) / (mb * dp);
            if (!dualPipeMicroBatchesOk(m, par.pp))
                return false;
        }
        const Plan p = estimate(sc);
        ++r.evaluated;
        if (days)
            *days = p.time.days;
        if (mem)
            *mem = p.memory.total;
        r.everFits = r.everFits || p.memory.fits;
        r.smallestMemory = r.smallestMemory > 0 ? std::min(r.smallestMemory, p.memory.total) : p.memory.total;
        r.capacity = p.memory.capacity;
        return p.memory.fits && p.time.days <= deadlineDays;
    };
    std::int64_t hi = 1, lo = 0; // in units of q: lo fails (or is 0), hi is tried next
    while (!ok(hi, nullptr, nullptr)) {
        lo = hi;
        if (hi >= kLimit) { // the batch would have to grow: stop and say so
            if (batch == BatchPolicy::Fixed && hi * q * mp <= kMaxGpus) {
                r.batchLimited = true;
                r.gpusAtLimit = kLimit * q * mp;
                double mem = 0;
                ok(kLimit, &r.daysAtLimit, &mem);
            }
            return r;
        }
        if (hi * q * mp > kMaxGpus)
            return r;
        hi = std::min(hi * 2, kLimit);
    }
    while (hi - lo > 1) { // lo fails, hi passes
        const std::int64_t mid = lo + (hi - lo) / 2;
        (ok(mid, nullptr, nullptr) ? hi : lo) = mid;
    }
    ok(hi, &r.days, &r.memoryTotal);
    r.found = true;
    r.gpus = hi * q * mp;
    return r;
}

} // namespace

GpuCountResult fewestGpusForDeadline(const Scenario& base, double deadlineDays, BatchPolicy batch)
{
    GpuCountResult r = gpusForOneStage(base, deadlineDays, batch);
    if (r.found || r.everFits || base.parallel.fsdp != Fsdp::None)
        return r;
    // Never fits: shard the model states further (ZeRO 1, 2, 3) before giving up, as a user would.
    for (int stage = base.parallel.zeroStage + 1; stage <= 3; ++stage) {
        Scenario sharded = base;
        sharded.parallel.zeroStage = stage;
        resolveFramework(sharded); // auto picks the framework from the ZeRO stage
        GpuCountResult s = gpusForOneStage(sharded, deadlineDays, batch);
        s.evaluated += r.evaluated;
        if (s.everFits) {
            s.zeroStage = stage;
            return s;
        }
        r = s;
    }
    return r;
}

nlohmann::json searchToJson(const SearchResult& r, const Scenario& sc)
{
    using nlohmann::json;
    json results = json::array();
    int rank = 1;
    for (const auto& x : r.best) {
        const auto& l = x.layout;
        const auto& t = x.time;
        results.push_back({{"rank", rank++},
                           {"layout",
                            {{"tp", l.tp},
                             {"pp", l.pp},
                             {"virtual_stages", l.virtualStages},
                             {"pipeline_schedule", toString(resolvedSchedule(l.schedule, l.virtualStages))},
                             {"first_stage_layers", l.firstStageLayers},
                             {"last_stage_layers", l.lastStageLayers},
                             {"cp", l.cp},
                             {"dp", l.dp},
                             {"ep", l.ep},
                             {"etp", l.etp > 0 ? l.etp : l.tp},
                             {"sequence_parallel", sequenceParallelFor(sc, l)},
                             {"micro_batch", l.microBatch},
                             {"recompute", recomputeName(l.recompute)},
                             {"zero", l.zero}}},
                           {"step_seconds", t.step},
                           {"tokens_per_second", t.tokensPerSecond},
                           {"mfu", t.mfu},
                           {"hfu", t.hfu},
                           {"accumulation_steps", x.accumulationSteps},
                           {"memory_bytes", x.memoryTotal},
                           {"headroom_bytes", x.headroom},
                           {"breakdown", stepTimeToJson(t)},
                           {"why", x.why}});
    }
    return {{"schema", "napkin.search/1"},
            {"scenario", sc.name},
            {"model", sc.model.name},
            {"gpu", sc.gpu->id},
            {"gpus", sc.cluster.gpus},
            {"global_batch", sc.training.globalBatch},
            {"evaluated", r.evaluated},
            {"feasible", r.feasible},
            {"rejected", {{"does_not_fit", r.rejectedMemory}, {"batch_not_divisible", r.rejectedBatch}}},
            {"elapsed_seconds", r.elapsedSeconds},
            {"source", "predicted step time (core/steptime.h): each op at its achievable rate, alpha-beta collectives, "
                       "the framework's overlap rules and the pipeline bubble; its error against published runs: "
                       "napkin-cli validate (docs/validation.md)"},
            {"results", results}};
}

} // namespace napkin::core
