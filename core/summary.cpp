// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "summary.h"

#include "calibration.h"
#include "format.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace napkin::core {

namespace {

std::string grouped(double v) { return formatGrouped(v); }

// Warnings that stop or break the plan, most severe first; any other warning ranks after them.
constexpr std::array<std::string_view, 5> kSevereWarnings{"does_not_fit", "host_memory_short", "batch_not_divisible",
                                                          "fewer_tokens_than_a_step", "no_host_link"};

} // namespace

// As papers write them (Narayanan et al. 2021; DeepSeek-V3 §3.2.1).
const char* scheduleName(PipelineSchedule s)
{
    switch (s) {
    case PipelineSchedule::OneFOneB: return "1F1B";
    case PipelineSchedule::Interleaved: return "interleaved 1F1B";
    case PipelineSchedule::DualPipe: return "DualPipe";
    }
    return toString(s);
}

std::string layoutLine(const Scenario& sc, const Plan& plan)
{
    const auto& pa = sc.parallel;
    std::string s = fmt::format("TP {} × PP {} × CP {} × DP {} = {} GPUs", pa.tp, pa.pp, pa.cp,
                                grouped(double(plan.compute.dataParallel)), grouped(double(sc.cluster.gpus)));
    if (sc.cluster.gpus > 1)
        s += fmt::format(" ({} per node)", pa.gpusPerNode);
    if (plan.moe.applies)
        s += fmt::format("; experts EP {} × ETP {} × EDP {}", plan.moe.expertRanks, plan.moe.expertTensorRanks,
                         plan.moe.expertDataParallel);
    if (pa.fsdp != Fsdp::None)
        s += fmt::format("; FSDP {}", toString(pa.fsdp));
    else if (pa.zeroStage > 0)
        s += fmt::format("; ZeRO-{}", pa.zeroStage);
    if (pa.sequenceParallel)
        s += "; sequence parallel";
    s += fmt::format("; micro-batch {}, global batch {} ({} accumulation step{})", sc.training.microBatch,
                     grouped(double(plan.compute.effectiveGlobalBatch)),
                     grouped(double(plan.compute.accumulationSteps)), plan.compute.accumulationSteps == 1 ? "" : "s");
    if (pa.pp > 1) {
        s += fmt::format("; {} schedule", scheduleName(pa.schedule));
        if (pa.virtualStages > 1)
            s += fmt::format(", {} virtual stages", pa.virtualStages);
    }
    return s;
}

SummaryRow mainRisk(const Plan& plan, const std::vector<Sensitivity>& sensitivities,
                    const std::function<std::string(double)>& bytes)
{
    for (const auto code : kSevereWarnings)
        for (const auto& w : plan.warnings)
            if (w.code == code)
                return {"Main risk", w.message, true};
    if (!plan.warnings.empty())
        return {"Main risk", plan.warnings.front().message, false};
    if (!sensitivities.empty()) {
        const auto& s = sensitivities.front();
        std::string text = fmt::format("most sensitive input: {} {} moves memory per GPU {} → {}", s.input, s.change,
                                       bytes(s.memoryBefore), bytes(s.memoryAfter));
        if (s.fitsAfter != s.fitsBefore)
            text += s.fitsAfter ? " (then it fits)" : " (then it no longer fits)";
        text += fmt::format(" and the time {} → {} days", fmt::format("{:.1f}", s.daysBefore),
                            fmt::format("{:.1f}", s.daysAfter));
        return {"Main risk", text, s.fitsBefore && !s.fitsAfter};
    }
    return {"Main risk", "none found: no warning, and no single input step changes the answer", false};
}

std::vector<SummaryRow> executiveSummary(const Scenario& sc, const Plan& plan,
                                         const std::vector<Sensitivity>& sensitivities,
                                         const AccuracyEstimate* accuracy,
                                         const std::function<std::string(double)>& bytes)
{
    const auto& m = plan.memory;
    const auto& t = plan.time;
    std::vector<SummaryRow> rows;
    if (m.fits)
        rows.push_back(
            {"Verdict",
             fmt::format("fits: {} per GPU of {}, headroom {}", bytes(m.total), bytes(m.capacity), bytes(m.headroom)),
             false});
    else
        rows.push_back({"Verdict",
                        fmt::format("does not fit: {} per GPU of {}, short by {}", bytes(m.total), bytes(m.capacity),
                                    bytes(-m.headroom)),
                        true});

    const bool predicted = sc.stepTime.mode == TimeMode::Predicted;
    // MFU is against the spec sheet's dense peak in both modes (docs/plan-schema.md).
    rows.push_back(
        {"Time",
         fmt::format("{} ({}) {}", humanNumber(t.days, Quantity::Days), humanNumber(t.seconds, Quantity::Seconds),
                     predicted ? fmt::format("at a predicted step of {} (MFU {:.2f}, predicted)",
                                             humanNumber(t.stepSeconds, Quantity::Seconds), t.mfu)
                               : fmt::format("at an assumed MFU of {:.2f}", sc.cluster.mfu)),
         false});

    const auto& hw = plan.hardware;
    std::string figures = "spec sheet figures";
    if (const auto& cal = hw.gpu->calibration)
        figures = "measured by napkin-probe (" + cal->path + ")";
    rows.push_back(
        {"GPUs",
         fmt::format("{} × {} ({} TFLOP/s dense {}, {} TB/s): {}", grouped(double(sc.cluster.gpus)), hw.name(),
                     formatNumber(hw.peakFlops / 1e12), hw.computeDtype, formatNumber(hw.bandwidth / 1e12), figures),
         false});
    rows.push_back({"GPU-hours", humanNumber(t.gpuHours, Quantity::GpuHours), false});
    rows.push_back({"Cost",
                    sc.cluster.pricePerGpuHour > 0
                        ? fmt::format("{} at ${:.2f} per GPU-hour", humanNumber(plan.cost.usd, Quantity::Usd),
                                      sc.cluster.pricePerGpuHour)
                        : std::string("not estimated: no price per GPU-hour (cluster.price_per_gpu_hour)"),
                    false});
    rows.push_back({"Energy",
                    plan.cost.energyKwh > 0
                        ? humanNumber(plan.cost.energyKwh, Quantity::EnergyKwh) + " (the GPUs at TDP: an upper bound)"
                        : std::string("not estimated: the GPU has no published TDP"),
                    false});
    rows.push_back({"Layout", layoutLine(sc, plan), false});
    rows.push_back(mainRisk(plan, sensitivities, bytes));
    if (accuracy)
        rows.push_back({"Accuracy of the time",
                        accuracyText(*accuracy) + (predicted ? std::string()
                                                             : std::string(" These errors are of the predicted step "
                                                                           "time; this plan assumes its MFU.")),
                        false});
    return rows;
}

std::string planMarkdownWithSummary(const Scenario& sc, const Plan& plan, const std::vector<Sensitivity>& sensitivities,
                                    const AccuracyEstimate* accuracy, const std::function<std::string(double)>& bytes)
{
    auto cell = [](std::string text) { // a table cell: its pipes escaped
        for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2))
            text.insert(at, "\\");
        return text;
    };
    std::string summary = "## Summary\n\n| | |\n|---|---|\n";
    for (const auto& r : executiveSummary(sc, plan, sensitivities, accuracy, bytes)) {
        std::string value = cell(r.value);
        if (!value.empty() && value[0] >= 'a' && value[0] <= 'z') // sentence bodies, capitalised as a table shows them
            value[0] = char(value[0] - 'a' + 'A');
        summary += "| " + r.label + " | " + (r.bad ? "**" + value + "**" : value) + " |\n";
    }
    std::string md = planToMarkdown(plan);
    const std::size_t titleEnd = md.find("\n\n");
    md.insert(titleEnd == std::string::npos ? md.size() : titleEnd + 2, summary + "\n");
    md += "\n## What would change the answer\n\n| input | change | memory per GPU | days |\n|---|---|---:|---:|\n";
    for (const auto& s : sensitivities)
        md += fmt::format("| {} | {} | {} → {} | {:.1f} → {:.1f} |\n", s.input, s.change, bytes(s.memoryBefore),
                          bytes(s.memoryAfter), s.daysBefore, s.daysAfter);
    return md;
}

} // namespace napkin::core
