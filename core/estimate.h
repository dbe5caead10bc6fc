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

// What a plan is, for titles when the scenario has no name of its own: "Llama 3 70B, 15 T tokens,
// 1,024 × NVIDIA H100 SXM5 80GB". Recomputed from the scenario every time, so it never goes stale.
std::string derivedPlanName(const Scenario& scenario);

// The FLOPs convention that applies (Auto: PaLM for transformers, 6PT otherwise).
FlopsConvention effectiveConvention(const Scenario& scenario);

} // namespace napkin::core
