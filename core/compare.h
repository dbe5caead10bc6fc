// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Several plans side by side (napkin-cli compare, the comparison reports): one row per plan with the
// headline numbers and the change against the first, as text, Markdown and CSV.

#include "plan.h"

#include <string>
#include <vector>

namespace napkin::core {

struct ComparedPlan {
    std::string label; // the scenario's name, else its file name without .napkin.json
    const Plan* plan = nullptr;
};

// Aligned columns with a header: scenario, memory per GPU, fits, days, GPU-hours, cost; days and cost
// as the change against the first plan ("+12.5%").
std::string compareToText(const std::vector<ComparedPlan>& plans);
std::string compareToMarkdown(const std::vector<ComparedPlan>& plans);
// One row per quantity (section, name, one column per plan, unit), full precision: parameters, every
// memory bucket, total memory, training FLOPs, days, GPU-hours, cost.
std::string compareToCsv(const std::vector<ComparedPlan>& plans);

} // namespace napkin::core
