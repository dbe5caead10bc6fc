// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// estimate(Scenario) -> Plan: the one place every number Napkin shows is computed.

#include "plan.h"
#include "scenario.h"

namespace napkin::core {

// Marker for Derivation::source: "the GPU's spec-sheet (or calibration) source", rendered from
// Plan::hardware.source.
extern const char* const kSourceGpu;
extern const char* const kSourceGpuMemory;
extern const char* const kSourceGpuTdp;
extern const char* const kSourceGpuAchievable;
extern const char* const kSourceGpuAchievableBandwidth;

Plan estimate(const Scenario& scenario);

// What the layout search needs of a plan, sooner: the same stages as estimate() up to the memory
// ledger, and when it fits the FLOPs, roofline and predicted step time (without the spec-peak
// comparison, the memory timeline, the closing warnings or the derivations). Every number it holds
// equals estimate()'s; a plan that does not fit stops after the ledger (memory.fits false).
Plan estimateForSearch(const Scenario& scenario);

// The FLOPs convention that applies (Auto: PaLM for transformers, 6PT otherwise).
FlopsConvention effectiveConvention(const Scenario& scenario);

} // namespace napkin::core
