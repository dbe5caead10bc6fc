// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The executive summary of a plan (issue 20): what a compute committee reads first. One row per
// fact, each a label and a sentence with its numbers; every front end lays the rows out its own way
// (page 1 of the PDF and HTML reports, the top of the Markdown report).

#include "accuracy.h"
#include "plan.h"
#include "scenario.h"
#include "sensitivity.h"

#include <functional>
#include <string>
#include <vector>

namespace napkin::core {

struct SummaryRow {
    std::string label; // "Verdict", "Time", "GPUs", ...
    std::string value;
    bool bad = false; // a verdict that does not fit, a risk that stops the plan
};

// "1F1B", "interleaved 1F1B", "DualPipe": a schedule as papers write it.
const char* scheduleName(PipelineSchedule s);

// The parallel layout in one line: "TP 8 × PP 16 × CP 1 × DP 128 = 16,384 GPUs (8 per node); ZeRO-1;
// micro-batch 1, global batch 2,048 (16 accumulation steps); 1F1B schedule, 4 virtual stages".
// Experts (EP × ETP × EDP) when the model routes tokens.
std::string layoutLine(const Scenario& sc, const Plan& plan);

// The main risk: the most severe warning (does not fit, host memory short, a batch that does not
// divide, ... in that order; else the first warning), else the input the plan is most sensitive to
// (sensitivities' first entry), else "none found".
SummaryRow mainRisk(const Plan& plan, const std::vector<Sensitivity>& sensitivities,
                    const std::function<std::string(double)>& bytes);

// Verdict, Time, GPUs (and whether their figures are the spec sheet's or measured), GPU-hours, Cost,
// Energy, Layout, Main risk and, when `accuracy` is given, how accurate the time is.
// bytes: the front end's byte formatter (GB or GiB).
std::vector<SummaryRow> executiveSummary(const Scenario& sc, const Plan& plan,
                                         const std::vector<Sensitivity>& sensitivities,
                                         const AccuracyEstimate* accuracy,
                                         const std::function<std::string(double)>& bytes);

// The plan as Markdown (planToMarkdown) with the executive summary under its title and the inputs
// that would change the answer at the end: what `napkin-cli plan --format md` prints and what the
// Markdown report holds (the report adds its chart images). bytes formats a size in the caller's unit.
std::string planMarkdownWithSummary(const Scenario& sc, const Plan& plan, const std::vector<Sensitivity>& sensitivities,
                                    const AccuracyEstimate* accuracy, const std::function<std::string(double)>& bytes);

} // namespace napkin::core
