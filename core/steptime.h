#pragma once
// Predicted step time: per-op roofline times of one rank + communication over the interconnect + the
// pipeline bubble. The seeds assume an MFU; this predicts one from the layout.
//
// Model (one optimizer step, the slowest pipeline stage, Megatron rank order TP < CP < DP < PP):
//   t_mb   = L/p · (t_fwd + t_bwd + t_recompute) + t_logits(last stage) + TP + exposed CP + PP sends
//   step   = (m + (p - 1)/v) · t_mb + exposed DP traffic + optimizer update
// where m = micro-batches per step per replica (Narayanan et al. 2021 §2.2: bubble (p - 1)/(v·m)).
//
// Optimistic where it says so: every op runs at its roofline bound (tensor cores at the dense peak, or
// the probe's measured peak when a calibration profile is in use); collectives run at the link's full
// one-direction bandwidth with no latency term; TP communication is not overlapped but nothing else
// stalls; the CP ring hides behind attention; data loading, kernel launches and stragglers cost nothing.

#include "plan.h"
#include "scenario.h"

namespace napkin::core {

// Needs plan.ops (one rank's layer, see estimate), plan.memory, plan.compute and plan.hardware.
StepTimeBreakdown predictStepTime(const Scenario& scenario, const Plan& plan);

// Ring collectives over n ranks, bytes = the full buffer (nccl-tests doc/PERFORMANCE.md):
//   all-reduce 2(n-1)/n · bytes / bw; all-gather and reduce-scatter (n-1)/n · bytes / bw.
double allReduceSeconds(double bytes, double ranks, double bandwidth);
double allGatherSeconds(double bytes, double ranks, double bandwidth);

} // namespace napkin::core
