// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "memory_timeline.h"

#include <algorithm>
#include <cmath>

namespace napkin::core::detail {

namespace {

struct TimelineWriter {
    MemoryLedger& m;
    double states, runtime;
    void add(const char* event, double at, double activations, double temporaries)
    {
        if (m.timelineCount >= kTimelineCapacity)
            return;
        TimelinePoint& t = m.timeline[std::size_t(m.timelineCount++)];
        t = {event, at, states, activations, temporaries, runtime, states + activations + temporaries + runtime};
    }
};

} // namespace

// The 1F1B schedule seen from one stage (Narayanan et al. 2021 §2.2.1): n = the micro-batches in
// flight run their forwards (the ramp to the peak), the remaining m - n alternate one forward and one
// backward (in flight stays at n), the last n backwards drain. The forward is a third of a
// micro-batch's compute and the backward two thirds plus the recomputed forward (6PT split); the
// optimizer step (and offload's CPU update) closes the step. `at` is the fraction of the step.
void estimateTimeline(const Scenario& sc, Plan& p)
{
    auto& m = p.memory;
    const StepPhases& ph = m.phases;
    m.timelineCount = 0;
    const auto& st = p.stepTime;
    const double step = st.valid ? st.step : 0;
    const double optimizer = st.valid ? st.optimizer + st.offload : 0;
    const double optShare = step > 0 ? std::min(1.0, optimizer / step) : 0.0;
    const double computeShare = 1 - optShare;
    const double mb = double(std::max<std::int64_t>(1, p.compute.accumulationSteps));
    const double n = std::min(mb, std::max(1.0, std::ceil(ph.inFlight)));
    const double recomputeRatio = st.valid && st.compute > 0 ? st.recompute / st.compute : 0.0;
    const double perMb = computeShare / mb;
    const double fwd = perMb / (3 + 3 * recomputeRatio);
    const double rampEnd = n * fwd, steadyEnd = rampEnd + (mb - n) * perMb;
    // The runtime's own bytes: the overhead less the allocator's reserve (not allocated memory).
    TimelineWriter w{m, ph.states, m.overhead - m.overheadAllocator};
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    w.add("step_start", 0, 0, 0);
    if (ph.gathered > 0)
        w.add("forward_start", 0, 0, ph.gathered);
    w.add("forward_end", rampEnd, ph.saved, ph.gathered);
    if (!isMlp && ph.loss > 0)
        w.add("loss", rampEnd, ph.saved, ph.gathered + ph.loss + ph.bucket);
    w.add("backward_start", rampEnd, ph.saved + ph.working, ph.gathered + ph.bucket + ph.reduceScatter);
    if (mb > n)
        w.add("steady_state_end", steadyEnd, ph.saved + ph.working, ph.gathered + ph.bucket + ph.reduceScatter);
    w.add("backward_end", computeShare, 0, ph.bucket);
    if (ph.optimizerTemp > 0 || optShare > 0) {
        w.add("optimizer_step", computeShare, 0, ph.optimizerTemp);
        w.add("optimizer_end", 1, 0, ph.optimizerTemp);
    }
    w.add("step_end", 1, 0, 0);
}

} // namespace napkin::core::detail
