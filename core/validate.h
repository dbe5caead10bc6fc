// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Validation against published training runs (resources/validation-runs.json, docs/validation.md):
// each case is a scenario in the predicted mode and the figure its source published, in the source's
// own metric and FLOP convention. error = predicted / published throughput - 1 (positive: Napkin is
// too optimistic); for a published step time, published / predicted - 1.

#include "errors.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

enum class ValidationMetric {
    HardwareTflopsPerGpu, // TFLOP/s per GPU counting recomputation (Megatron-LM papers)
    ModelTflopsPerGpu,    // model FLOPs (no recomputation) per GPU
    Mfu,
    Hfu,
    TokensPerSecondPerGpu,
    TokensPerSecond,
    SamplesPerSecond,
    StepSeconds,
};

struct ValidationCase {
    std::string id, source, sourceGroup, url, convention;
    ValidationMetric metric = ValidationMetric::ModelTflopsPerGpu;
    double published = 0;
    nlohmann::json scenario; // partial napkin.scenario/1, merged over the defaults
    std::vector<std::string> assumptions;
};

struct ValidationResult {
    const ValidationCase* c = nullptr;
    double predicted = 0;
    double error = 0;
    double mfu = 0; // predicted MFU against the spec peak, for the table
    double mfuCeiling = 0;
    // Napkin's memory ledger for the case (the busiest stage) against its GPU's memory: every published
    // run ran, so a case over its capacity is a finding about the ledger or the case's assumptions.
    double memoryPerGpu = 0, capacity = 0;
    bool fits = true;
    std::string gpu;
    std::string failure; // the scenario did not load or the prediction was invalid
};

struct ValidationSummary {
    int n = 0;
    int sources = 0;
    double medianAbsError = 0;
    double maxAbsError = 0;
    double medianError = 0; // signed: the bias
    int overMemory = 0;     // cases Napkin's ledger puts over their GPU's memory
};

const char* toString(ValidationMetric m);

// Strict loader for napkin.validation-set/1 (unknown keys are errors naming their path).
std::vector<ValidationCase> loadValidationSet(std::string_view text, Errors& errors);
// The set compiled into the binary.
const std::vector<ValidationCase>& builtinValidationSet();

std::vector<ValidationResult> runValidation(const std::vector<ValidationCase>& cases);
// runValidation(builtinValidationSet()), run once per process (thread-safe): the accuracy line of
// reports, the executive summary and Help > How accurate is this? share it.
const std::vector<ValidationResult>& builtinValidationResults();
ValidationSummary summarize(const std::vector<ValidationResult>& results);

// napkin.validate/1: cases[] {id, source, url, metric, convention, published, predicted, error,
// memory_per_gpu, memory_capacity, fits, assumptions[]}, summary {n, sources, median_abs_error,
// max_abs_error, median_error, over_memory}.
nlohmann::json validationToJson(const std::vector<ValidationResult>& results, const ValidationSummary& summary);
std::string validationToText(const std::vector<ValidationResult>& results, const ValidationSummary& summary);
std::string validationToMarkdown(const std::vector<ValidationResult>& results, const ValidationSummary& summary);
// Predicted vs published, one point per case on log-log axes with the ±10% and ±25% bands.
std::string validationToSvg(const std::vector<ValidationResult>& results, const ValidationSummary& summary);

} // namespace napkin::core
