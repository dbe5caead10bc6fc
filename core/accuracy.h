// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// How far to trust the predicted step time of one scenario: the validated runs (validate.h) most like
// it (the same GPU, a model of similar size, dense or mixture of experts, a similar parallel layout
// and precision) and the error Napkin made on them. For Help > How accurate is this? and the reports.
// A reading of the validation set, not a correction: nothing here changes a prediction.

#include "scenario.h"
#include "validate.h"

#include <string>
#include <vector>

namespace napkin::core {

struct SimilarRun {
    const ValidationResult* result = nullptr;
    double score = 0;               // higher is closer (similarityScore)
    std::vector<std::string> alike; // what it shares: "same GPU", "size 65B vs 70B", "tp > 1", ...
};

struct AccuracyEstimate {
    std::vector<SimilarRun> closest; // best first
    // Signed errors (predicted / published - 1) of the closest runs: their range and median. A
    // positive error means Napkin predicted a faster run than the published one.
    double low = 0, high = 0, median = 0;
    bool valid = false; // at least one closest run without a failure
};

// How alike a scenario and a validated run are. Each criterion adds to the score: same GPU model
// (3), model size (2 at equal size, 0 at 10x apart: log10 distance), dense vs MoE (1 when equal),
// GPU count (1 at equal count, 0 at 100x apart), tensor parallel and pipeline parallel used or not
// (0.5 each when equal), an FP8/FP4 recipe or not (0.5 when equal).
double similarityScore(const Scenario& a, const Scenario& b, std::vector<std::string>* alike = nullptr);

// The n validated runs most like `sc`, with their error band. `results` from runValidation (the
// cases' scenarios are parsed again here, merged over the defaults as runValidation does).
AccuracyEstimate accuracyFor(const Scenario& sc, const std::vector<ValidationResult>& results, int n = 5);

// "Napkin's error on the 5 most similar validated runs: +12% to +31% (median +19%)".
std::string accuracyText(const AccuracyEstimate& a);

} // namespace napkin::core
