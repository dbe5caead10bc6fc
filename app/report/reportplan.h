// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The report sections a plan has only sometimes (issue 20): the executive summary (always; page 1),
// the parallel layout (more than one GPU), memory per pipeline stage (pp > 1) and the predicted step
// time (step_time.mode predicted).

#include "reportcontent.h"
#include "sensitivity.h"

#include <optional>
#include <vector>

namespace napkin::report::detail {

Section summarySection(const Evaluated& c, const Options& o, const std::vector<core::Sensitivity>& sensitivities);
// Each only when the plan has it: more than one GPU; pp > 1; the predicted step-time mode.
std::optional<Section> layoutSection(const Evaluated& c);
std::optional<Section> stagesSection(const Evaluated& c, const Options& o);
std::optional<Section> stepTimeSection(const Evaluated& c);

} // namespace napkin::report::detail
