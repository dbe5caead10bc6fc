// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "makefit.h"

#include "estimate.h"
#include "format.h"
#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

namespace napkin::core {

namespace {

using nlohmann::json;

struct Candidate {
    std::string description;
    json set = json::object();
};

struct Outcome {
    double total = 0, capacity = 0, step = 0;
    std::int64_t gpus = 0;
    std::string gpuName;
    bool fits = false;
};

// The document with the candidate's keys set (setPath: the same rules as --set), re-planned in full.
std::optional<Outcome> replan(json doc, const json& set, const std::string& baseDir, bool predicted)
{
    Errors errors;
    for (const auto& [path, value] : set.items())
        setPath(doc, path, value, errors);
    if (predicted)
        setPath(doc, "step_time.mode", "predicted", errors);
    if (!errors.empty())
        return std::nullopt;
    const Scenario sc = parseScenario(doc, builtinCatalog(), errors, baseDir);
    if (!errors.empty())
        return std::nullopt;
    const Plan p = estimate(sc);
    Outcome o;
    o.total = p.memory.total;
    o.capacity = p.memory.capacity;
    o.fits = p.memory.fits;
    o.step = p.time.stepSeconds;
    o.gpus = sc.cluster.gpus;
    o.gpuName = sc.gpu->name;
    return o;
}

json merged(json a, const json& b)
{
    for (const auto& [k, v] : b.items())
        a[k] = v;
    return a;
}

// Mixtures of experts: spread the expert weights over more ranks without new GPUs. EP = k for every
// k above the scenario's that divides the experts with ep · etp dividing tp · cp · dp (Megatron-Core's
// folding rule, as the loader checks: core/scenario_checks.cpp checkExpertLayout), and etp = tp
// where the experts are whole on each rank. Expert weights shrink by the new ep · etp, their
// gradients and optimizer states with EDP = tp · cp · dp / (ep · etp) under ZeRO / the distributed
// optimizer; the all-to-all and its cost follow in the re-plan.
void expertCandidates(const Scenario& sc, const Plan& p, std::vector<Candidate>& out)
{
    const auto& shape = sc.model.shape;
    if (sc.model.kind != ModelKind::Transformer || !isMoe(shape) || shape.moe.experts <= 0)
        return;
    const std::int64_t ranks =
        std::int64_t(std::max(1, sc.parallel.tp)) * std::max(1, sc.parallel.cp) * p.compute.dataParallel;
    const std::int64_t ep = std::max(1, sc.parallel.ep), etp = std::max(1, sc.parallel.etp);
    for (std::int64_t k = ep + 1; k <= shape.moe.experts && k * etp <= ranks; ++k)
        if (shape.moe.experts % k == 0 && ranks % (k * etp) == 0)
            out.push_back({fmt::format("expert parallelism EP = {} (each rank holds {} of the {} experts; expert "
                                       "data parallel {})",
                                       k, shape.moe.experts / k, shape.moe.experts, ranks / (k * etp)),
                           {{"parallel.ep", k}}});
    const std::int64_t tp = std::max(1, sc.parallel.tp);
    if (etp < tp && ranks % (ep * tp) == 0 && shape.moe.expertFfn % tp == 0)
        out.push_back({fmt::format("expert tensor parallelism ETP = {} (each expert's matrices split over the "
                                   "tensor-parallel ranks, as Megatron-Core's default)",
                                   tp),
                       {{"parallel.etp", tp}}});
}

// What a demanding user would try, in the order of what it costs: memory-only levers first, then the
// fine-tuning methods, offload, more GPUs, a larger GPU.
std::vector<Candidate> candidates(const Scenario& sc, const Plan& p, const std::string& currentGpu)
{
    std::vector<Candidate> out;
    const auto& tr = sc.training;
    if (tr.microBatch > 1)
        out.push_back({"micro-batch 1 (more accumulation steps, same global batch)", {{"training.micro_batch", 1}}});
    if (sc.model.kind != ModelKind::Mlp) {
        if (tr.recompute == Recompute::None)
            out.push_back({"selective recomputation (the attention core)", {{"training.recompute", "selective"}}});
        if (tr.recompute != Recompute::Full)
            out.push_back({"full recomputation (only each layer's input kept)", {{"training.recompute", "full"}}});
    }
    const int zero = effectiveZeroStage(sc);
    // ZeRO shards over the ranks that reduce the gradients: data × context parallel.
    const int cp = std::max(1, sc.parallel.cp);
    const std::int64_t group = gradientGroupSize(sc, p.compute.dataParallel);
    if (group > 1 && sc.parallel.fsdp == Fsdp::None)
        for (int z = std::max(1, zero + 1); z <= 3; ++z)
            out.push_back({fmt::format("ZeRO-{} (shard {} over the {} {} ranks)", z,
                                       z == 1   ? "optimizer states"
                                       : z == 2 ? "optimizer states and gradients"
                                                : "all model states",
                                       group, cp > 1 ? "data- and context-parallel" : "data-parallel"),
                           {{"parallel.zero", z}}});
    expertCandidates(sc, p, out);
    if (!sc.precision.optimizerInt8Blockwise && p.memory.optimizerStates > 0)
        out.push_back(
            {"8-bit optimizer states (bitsandbytes blockwise int8)", {{"precision.optimizer", "int8_blockwise"}}});
    const auto& shape = sc.model.shape;
    const bool adaptable = sc.model.kind != ModelKind::Mlp && !isMoe(shape) && shape.attention != AttentionKind::Mla;
    if (sc.finetune.method == FinetuneMethod::Full && adaptable && !sc.offload.any()) {
        out.push_back(
            {"LoRA instead of full fine-tuning: r = 16 on every linear layer, base frozen in bf16",
             {{"finetune.method", "lora"}, {"finetune.lora_rank", 16}, {"finetune.lora_targets", "all-linear"}}});
        out.push_back(
            {"QLoRA instead of full fine-tuning: NF4 base, r = 64 on every linear layer, paged optimizer",
             {{"finetune.method", "qlora"}, {"finetune.lora_rank", 64}, {"finetune.lora_targets", "all-linear"}}});
    } else if (sc.finetune.method == FinetuneMethod::Lora) {
        out.push_back({"QLoRA: the same adapters over an NF4 base", {{"finetune.method", "qlora"}}});
    }
    if (!sc.finetune.peft() && sc.offload.optimizer == OffloadTarget::None) {
        json set{{"offload.optimizer", "cpu"}};
        if (group > 1 && zero == 0)
            set["parallel.zero"] = 1;
        out.push_back({"ZeRO-Offload: optimizer states and master weights on the CPU", set});
    }
    if (!sc.offload.activations && sc.model.kind != ModelKind::Mlp && !sc.finetune.peft())
        out.push_back({"activation offload to the CPU", {{"offload.activations", "cpu"}}});
    for (const std::int64_t k : {2, 4, 8}) {
        json set{{"cluster.gpus", sc.cluster.gpus * k}};
        if (sc.parallel.fsdp == Fsdp::None && zero < 3)
            set["parallel.zero"] = 3;
        out.push_back(
            {fmt::format("{} GPUs with ZeRO-3 (model states sharded {} ways more)", sc.cluster.gpus * k, k), set});
    }
    // Larger GPUs of the catalogue, smallest first (evaluated in turn; two that fit are kept).
    std::vector<const GpuSpec*> larger;
    for (const auto& g : builtinCatalog().gpus)
        if (g.memoryBytes > sc.gpu->memoryBytes && g.id != currentGpu && g.vendor == sc.gpu->vendor)
            larger.push_back(&g);
    std::sort(larger.begin(), larger.end(),
              [](const GpuSpec* a, const GpuSpec* b) { return a->memoryBytes < b->memoryBytes; });
    for (const auto* g : larger)
        out.push_back(
            {"a larger GPU: " + g->name + " (" + formatBytes(g->memoryBytes) + ")", {{"cluster.gpu", g->id}}});
    return out;
}

bool isGpuChange(const json& set) { return set.contains("cluster.gpu"); }

// How far a change moves from the user's plan, in the order the users weigh it: 0 keeps the
// training and the hardware (micro-batch, recompute, ZeRO, 8-bit states, offload), 1 changes what
// trains (LoRA / QLoRA instead of full fine-tuning), 2 adds GPUs, 3 changes the GPU.
int tier(const json& set)
{
    if (set.contains("cluster.gpu"))
        return 3;
    if (set.contains("cluster.gpus"))
        return 2;
    return set.contains("finetune.method") ? 1 : 0;
}

// Fitting changes first; then the smallest departure (tier); then the fewest GPU-seconds per step;
// then the most memory saved.
bool better(const FitChange& a, const FitChange& b)
{
    if (a.fits != b.fits)
        return a.fits;
    if (tier(a.set) != tier(b.set))
        return tier(a.set) < tier(b.set);
    const double ga = a.stepSeconds * double(a.gpus), gb = b.stepSeconds * double(b.gpus);
    if (ga != gb)
        return ga < gb;
    return a.memorySaved > b.memorySaved;
}

} // namespace

FitSuggestions suggestFits(const nlohmann::json& doc, const std::string& baseDir, int limit)
{
    FitSuggestions r;
    Errors errors;
    const Scenario sc = parseScenario(doc, builtinCatalog(), errors, baseDir);
    if (!errors.empty())
        return r;
    r.valid = true;
    const Plan p = estimate(sc);
    // Step times come from the predicted step (recomputation and offload cost time there, not under an
    // assumed MFU); a GPU the step model cannot predict keeps the scenario's own mode.
    r.predicted = replan(doc, json::object(), baseDir, true).has_value();
    const auto base = replan(doc, json::object(), baseDir, r.predicted);
    r.baselineFits = p.memory.fits;
    r.baselineTotal = p.memory.total;
    r.capacity = p.memory.capacity;
    r.baselineStep = base ? base->step : p.time.stepSeconds;
    r.baselineGpus = sc.cluster.gpus;
    r.gpuName = sc.gpu->name;
    r.title = p.title();
    auto make = [&](const Candidate& c, const Outcome& o) {
        FitChange f;
        f.description = c.description;
        f.set = c.set;
        f.total = o.total;
        f.capacity = o.capacity;
        f.memorySaved = r.baselineTotal - o.total;
        f.stepSeconds = o.step;
        f.stepSecondsDelta = o.step - r.baselineStep;
        f.gpus = o.gpus;
        f.gpuName = o.gpuName;
        f.fits = o.fits;
        return f;
    };
    const auto cands = candidates(sc, p, sc.gpu->id);
    std::vector<FitChange> singles;
    int largerKept = 0;
    for (const auto& c : cands) {
        if (isGpuChange(c.set) && (largerKept >= 2 || r.baselineFits)) // a larger GPU only for a plan that is short
            continue;
        const auto o = replan(doc, c.set, baseDir, r.predicted);
        if (!o)
            continue;
        if (isGpuChange(c.set)) {
            if (!o->fits)
                continue;
            ++largerKept;
        } else if (r.baselineTotal - o->total < 0.005 * r.baselineTotal) {
            continue; // saves (almost) nothing
        }
        singles.push_back(make(c, *o));
    }
    std::vector<FitChange> all = singles;
    const bool anyFits = std::any_of(singles.begin(), singles.end(), [](const FitChange& f) { return f.fits; });
    if (!anyFits && !r.baselineFits) {
        // No single change is enough: combine memory savers greedily (the combination that saves most
        // first, up to three), within the user's training and hardware first, then adding GPUs, then
        // with a change of method; every fitting combination met on the way is kept.
        auto greedy = [&](auto allowed) {
            std::vector<const FitChange*> savers;
            for (const auto& f : singles)
                if (allowed(tier(f.set)))
                    savers.push_back(&f);
            Candidate combined{"", json::object()};
            for (std::size_t depth = 0; depth < 3 && depth < savers.size(); ++depth) {
                const FitChange* bestNext = nullptr;
                Outcome bestOutcome;
                for (const FitChange* sv : savers) {
                    bool clash = false;
                    for (const auto& [k, v] : sv->set.items())
                        clash = clash || combined.set.contains(k);
                    if (clash)
                        continue;
                    const json set = merged(combined.set, sv->set);
                    const auto o = replan(doc, set, baseDir, r.predicted);
                    if (!o)
                        continue;
                    const bool seen =
                        std::any_of(all.begin(), all.end(), [&](const FitChange& f) { return f.set == set; });
                    if (depth > 0 && o->fits && !seen)
                        all.push_back(make({combined.description + " + " + sv->description, set}, *o));
                    if (!bestNext || o->total < bestOutcome.total) {
                        bestNext = sv;
                        bestOutcome = *o;
                    }
                }
                if (!bestNext || bestOutcome.fits)
                    break;
                combined.description += (combined.description.empty() ? "" : " + ") + bestNext->description;
                combined.set = merged(combined.set, bestNext->set);
            }
        };
        greedy([](int t) { return t == 0; });
        greedy([](int t) { return t == 0 || t == 2; });
        greedy([](int t) { return t <= 2; });
    }
    std::stable_sort(all.begin(), all.end(), better);
    if (int(all.size()) > limit)
        all.resize(std::size_t(limit));
    r.changes = std::move(all);
    return r;
}

nlohmann::json fitSuggestionsToJson(const FitSuggestions& s)
{
    json changes = json::array();
    for (const auto& c : s.changes)
        changes.push_back({{"description", c.description},
                           {"set", c.set},
                           {"memory_saved_bytes", c.memorySaved},
                           {"total_bytes", c.total},
                           {"capacity_bytes", c.capacity},
                           {"step_seconds", c.stepSeconds},
                           {"step_seconds_delta", c.stepSecondsDelta},
                           {"gpus", c.gpus},
                           {"gpu", c.gpuName},
                           {"fits", c.fits}});
    return {{"schema", "napkin.suggest/1"},
            {"scenario", s.title},
            {"fits", s.baselineFits},
            {"total_bytes", s.baselineTotal},
            {"capacity_bytes", s.capacity},
            {"step_seconds", s.baselineStep},
            {"gpus", s.baselineGpus},
            {"gpu", s.gpuName},
            {"step_time_mode", s.predicted ? "predicted" : "scenario"},
            {"changes", changes}};
}

std::string fitSuggestionsText(const FitSuggestions& s)
{
    std::string t = "Make it fit: " + s.title + "\n";
    t += fmt::format("  now: {} per GPU on {} x {} ({}), {:.3g} s per step{}\n", formatBytes(s.baselineTotal),
                     s.baselineGpus, s.gpuName,
                     s.baselineFits ? "fits" : "short by " + formatBytes(s.baselineTotal - s.capacity), s.baselineStep,
                     s.predicted ? " (predicted)" : "");
    if (s.changes.empty()) {
        t += s.baselineFits ? "  It fits already; no change saves memory.\n"
                            : "  No change Napkin knows brings it under capacity.\n";
        return t;
    }
    t += "\n  fits  memory/GPU      saved  step (change)         change\n";
    for (const auto& c : s.changes) {
        std::string sets;
        for (const auto& [k, v] : c.set.items())
            sets += (sets.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
        const std::string step = fmt::format("{:.3g} s ({}{:.3g} s)", c.stepSeconds, c.stepSecondsDelta < 0 ? "-" : "+",
                                             std::abs(c.stepSecondsDelta));
        t += fmt::format("  {:<4}  {:>10}  {:>9}  {:<20}  {}\n        --set {}\n", c.fits ? "yes" : "no",
                         formatBytes(c.total), formatBytes(c.memorySaved), step, c.description, sets);
    }
    return t;
}

} // namespace napkin::core
