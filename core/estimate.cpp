// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "estimate.h"

#include "achievable.h"
#include "calibration.h"
#include "estimate_stages.h"
#include "format.h"
#include "memory_timeline.h"

#include <algorithm>

namespace napkin::core {

const char* const kSourceGpu = "@gpu";
const char* const kSourceGpuMemory = "@gpu-memory";
const char* const kSourceGpuTdp = "@gpu-tdp";
const char* const kSourceGpuAchievable = "@gpu-achievable";
const char* const kSourceGpuAchievableBandwidth = "@gpu-achievable-bandwidth";

std::string HardwareSummary::source() const
{
    // The spec sheet's peak, also with a calibration profile (the measured rate is achievable_flops).
    if (const auto& cal = gpu->calibration) {
        if (cal->spec)
            return cal->spec->origin + ": " + cal->spec->sourceFlops;
        const auto dtype = parseDType(computeDtype);
        return cal->peakSource(info(dtype.value_or(DType::Bf16)).peak) + " (no catalogue GPU matched: no spec sheet)";
    }
    return gpu->origin + ": " + gpu->sourceFlops;
}

std::string HardwareSummary::bandwidthSource() const
{
    if (const auto& cal = gpu->calibration) {
        if (cal->spec)
            return cal->spec->origin + ": " + cal->spec->sourceBandwidth;
        return cal->bandwidthSource() + " (no catalogue GPU matched: no spec sheet)";
    }
    return gpu->origin + ": " + gpu->sourceBandwidth;
}

std::string HardwareSummary::achievableFlopsSource() const
{
    if (const auto& cal = gpu->calibration) {
        const auto dtype = parseDType(computeDtype);
        const auto col = info(dtype.value_or(DType::Bf16)).peak;
        if (cal->peakMeasured(col))
            return cal->peakSource(col);
        if (cal->spec)
            return "not measured in the profile; catalogue: " + cal->spec->sourceAchievable;
    }
    return "catalogue: " + gpu->sourceAchievable;
}

std::string HardwareSummary::achievableBandwidthSource() const
{
    if (const auto& cal = gpu->calibration) {
        if (cal->bandwidthMeasured())
            return cal->bandwidthSource();
        if (cal->spec)
            return "not measured in the profile; catalogue: " + cal->spec->sourceAchievable;
    }
    return "catalogue: " + gpu->sourceAchievable;
}

std::string HardwareSummary::memorySource() const
{
    // A profile keeps the catalogue's capacity (calibration.h); without a catalogue match the
    // driver's total memory is used.
    if (const auto& cal = gpu->calibration)
        return cal->spec ? cal->spec->origin + ": " + cal->spec->sourceMemory
                         : cal->citation() + ": " + gpu->sourceMemory;
    return gpu->origin + ": " + gpu->sourceMemory;
}

std::string HardwareSummary::tdpSource() const
{
    if (const auto& cal = gpu->calibration)
        return cal->spec ? cal->spec->origin + ": " + cal->spec->sourceTdp : std::string("not published");
    return gpu->origin + ": " + gpu->sourceTdp;
}

FlopsConvention effectiveConvention(const Scenario& sc)
{
    if (sc.flops != FlopsConvention::Auto)
        return sc.flops;
    return sc.model.kind == ModelKind::Transformer ? FlopsConvention::Palm : FlopsConvention::SixPT;
}

namespace detail {

Derivation& derive(Plan& p, const char* quantity, const char* formula, double value, const char* unit,
                   const char* source, std::initializer_list<Term> terms)
{
    thread_local Derivation scratch; // the layout search's plans keep no derivations
    Derivation& d = p.recordDerivations ? p.derivations.emplace_back() : (scratch = Derivation{}); // built in place
    d.quantity = quantity;
    d.formula = formula;
    d.value = value;
    d.unit = unit;
    d.source = source;
    for (const auto& t : terms)
        if (d.termCount < int(d.terms.size()))
            d.terms[std::size_t(d.termCount++)] = t;
    return d;
}

Layout layoutOf(const Scenario& sc)
{
    const auto& par = sc.parallel;
    return {std::max(1, par.tp), std::max(1, par.pp), std::max(1, par.cp), std::max(1, par.virtualStages)};
}

void estimateHardware(const Scenario& sc, Plan& p)
{
    const auto& pr = sc.precision;
    auto& hw = p.hardware;
    const GpuSpec& gpu = *sc.gpu;
    hw.gpu = sc.gpu;
    hw.computeDtype = info(pr.compute).id.data();
    resolveHardwareRates(hw, gpu, pr.compute); // spec peak and bandwidth; achievable rates beside them
    hw.vectorFlops = gpu.peak(PeakColumn::Fp32);
    hw.ridge = hw.bandwidth > 0 ? hw.peakFlops / hw.bandwidth : 0;
    hw.memoryBytes = gpu.memoryBytes;
    hw.tdpWatts = gpu.tdpWatts;
    applyPowerLimit(hw, gpu, pr.compute, sc.cluster.powerLimitWatts);
    hw.peakFlops16 = hw.peakFlops;
    hw.achievableFlops16 = hw.achievableFlops;
    hw.recipe = toString(pr.recipe);
    hw.lowPrecisionGemms = pr.recipe != LowPrecisionRecipe::None ? pr.lowPrecisionGemms : std::uint8_t(0);
    if (pr.recipe != LowPrecisionRecipe::None) {
        // The ops the recipe keeps in 16 bits (attention, the output layer) run at the BF16 rates.
        HardwareSummary h16;
        h16.gpu = sc.gpu;
        h16.tdpWatts = gpu.tdpWatts;
        resolveHardwareRates(h16, gpu, DType::Bf16);
        applyPowerLimit(h16, gpu, DType::Bf16, sc.cluster.powerLimitWatts);
        hw.peakFlops16 = h16.peakFlops;
        hw.achievableFlops16 = h16.achievableFlops;
    }
    derive(p, "hardware.peak_flops", "{C}", hw.peakFlops, "FLOP/s", kSourceGpu, {{"C", hw.peakFlops}});
    if (hw.sustainedShare < 1)
        derive(p, "hardware.achievable_flops", "{C_fig} · {s_sustained}", hw.achievableFlops, "FLOP/s",
               kSourceGpuAchievable,
               {{"C_fig", hw.achievableFlops / hw.sustainedShare}, {"s_sustained", hw.sustainedShare}});
    else
        derive(p, "hardware.achievable_flops", "{C_ach}", hw.achievableFlops, "FLOP/s", kSourceGpuAchievable,
               {{"C_ach", hw.achievableFlops}});
    derive(p, "hardware.achievable_bandwidth", "{beta_ach}", hw.achievableBandwidth, "B/s",
           kSourceGpuAchievableBandwidth, {{"beta_ach", hw.achievableBandwidth}});
    if (hw.powerLimitWatts > 0)
        derive(p, "hardware.clock_factor", "({P_cap} / {P_tdp})^(1/3)", hw.clockFactor, "",
               "dynamic power P = C·V²·f with V rising linearly with f over the DVFS range, so the clock a power cap "
               "sustains falls as P^(1/3) (static power ignored: an upper bound on the clock); scales the achievable "
               "tensor and vector rates, not HBM bandwidth (the memory clock is not capped)",
               {{"P_cap", hw.powerLimitWatts}, {"P_tdp", hw.tdpWatts}});
    derive(p, "hardware.ridge", "{C} / {beta}", hw.ridge, "FLOP/byte",
           "CS336 lecture 2: accelerator intensity = peak FLOP/s / memory bandwidth",
           {{"C", hw.peakFlops}, {"beta", hw.bandwidth}});
}

void appendClosingWarnings(const Scenario& sc, Plan& p)
{
    const GpuSpec& gpu = *sc.gpu;
    if (gpu.calibration)
        p.warnings.insert(p.warnings.end(), gpu.calibration->warnings.begin(), gpu.calibration->warnings.end());
    if (p.hardware.tdpWatts <= 0)
        p.warnings.push_back({"no_tdp", gpu.name + " has no published TDP: energy is not estimated"});
    if (p.compute.steps < 1)
        p.warnings.push_back({"fewer_tokens_than_a_step",
                              "training.tokens is less than one global batch of tokens: the plan has under one step"});

    // Trained weights stored in 8 bits or fewer with no higher-precision master copy: no published
    // recipe trains so (FP8 recipes keep bf16 / fp32 master weights: Transformer Engine, DeepSeek-V3
    // §3.3; LoRA keeps its adapters in 16 bits); the updates would vanish below the format's spacing.
    const auto& pr = sc.precision;
    const bool lowWeights = bytesPerValue(pr.weights) < 2 || bytesPerValue(pr.gradients) < 2;
    if (lowWeights && !pr.master)
        p.warnings.push_back(
            {"unpublished_precision",
             std::string("precision: weights ") + std::string(info(pr.weights).id) + ", gradients " +
                 std::string(info(pr.gradients).id) +
                 " with no master copy is not a recipe anyone trains with: small updates round away in "
                 "8-bit storage (FP8 recipes keep a bf16 or fp32 master copy). For a memory cut that "
                 "trains, see napkin-cli suggest: LoRA / QLoRA, 8-bit optimizer states, ZeRO"});
    for (const auto& note : sc.aliasNotes)
        p.warnings.push_back({"alias", note});
    if (p.params.derivedShape)
        p.warnings.push_back(
            {"derived_shape", "activations and the roofline use a derived shape: " + sc.model.shapeNote});
}

} // namespace detail

namespace {

// The stages every plan runs first, in plan order: hardware, parameters, batch, the MoE layout and
// the memory ledger. Each stage appends its derivations and warnings after the previous one's.
Plan planThroughMemory(const Scenario& sc, bool recordDerivations)
{
    Plan p;
    p.recordDerivations = recordDerivations;
    if (recordDerivations)
        p.derivations.reserve(32);
    p.ops.reserve(40);
    p.scenarioName = sc.name;
    p.modelName = sc.model.name;
    p.nameTokens = sc.training.tokens;
    p.nameGpus = sc.cluster.gpus;
    detail::estimateHardware(sc, p);
    detail::estimateParams(sc, p);
    detail::estimateBatch(sc, p);
    detail::estimateMoeRun(sc, p);
    detail::estimateMemory(sc, p);
    return p;
}

} // namespace

Plan estimate(const Scenario& sc)
{
    Plan p = planThroughMemory(sc, true);
    const double recomputePerToken = detail::estimateFlops(sc, p);
    detail::estimateRoofline(sc, p);
    detail::estimateTimeAndCost(sc, recomputePerToken, p);
    detail::estimateTimeline(sc, p);
    detail::appendClosingWarnings(sc, p);
    return p;
}

Plan estimateForSearch(const Scenario& sc)
{
    Plan p = planThroughMemory(sc, false);
    if (!p.memory.fits)
        return p;
    const double recomputePerToken = detail::estimateFlops(sc, p);
    detail::estimateRoofline(sc, p);
    detail::estimateTimeAndCost(sc, recomputePerToken, p, false);
    return p;
}

} // namespace napkin::core
