// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// memory.timeline: the most loaded stage's allocated GPU bytes through one optimizer step, from the
// phases the ledger's peak is chosen among (memory.peak_phase), on the predicted step's clock.

#include "plan.h"
#include "scenario.h"

namespace napkin::core::detail {

// Fills plan.memory.timeline once the step time is known (estimate.cpp calls it last).
void estimateTimeline(const Scenario& sc, Plan& p);

} // namespace napkin::core::detail
