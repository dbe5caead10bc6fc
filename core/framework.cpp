// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "framework.h"

#include "dtype.h"

namespace napkin::core {

FrameworkRules frameworkRules(Framework f)
{
    FrameworkRules r;
    r.framework = f;
    switch (f) {
    case Framework::Auto:
    case Framework::Megatron:
        r.framework = Framework::Megatron;
        r.version = "Megatron-Core 0.9";
        r.overlapDp = true;
        r.overlapTp = false;
        r.regatherForRecompute = false;
        r.reduceScatterEveryMicroBatch = false;
        r.hopperAttention = AttentionKernel::Flash3;
        r.source = "Megatron-LM docs and examples (--use-distributed-optimizer --overlap-grad-reduce "
                   "--overlap-param-gather; --tp-comm-overlap opt-in); Transformer Engine cuDNN fused attention";
        break;
    case Framework::Torchtitan:
        r.version = "torchtitan 0.1 (FSDP2)";
        r.overlapDp = true;
        r.overlapTp = false;
        r.regatherForRecompute = false;
        r.reduceScatterEveryMicroBatch = true;
        r.fsdpCopies = true;
        r.hopperAttention = AttentionKernel::Flash2;
        r.fusion = KernelFusion::Eager; // training.compile defaults to false (train_configs/*.toml)
        r.source = "Liang et al. 2024 (TorchTitan, arXiv 2410.06511) §2: FSDP2 all-gathers per forward and "
                   "backward, reduce-scatters per backward, implicit prefetch; async TP opt-in; SDPA attention";
        break;
    case Framework::Deepspeed:
        r.version = "DeepSpeed 0.14";
        r.overlapDp = false; // stages 1-2: overlap_comm defaults to false; stage 3 sets it (resolveFramework)
        r.overlapTp = false;
        r.regatherForRecompute = true;
        r.reduceScatterEveryMicroBatch = true;
        r.hopperAttention = AttentionKernel::Flash2;
        r.source = "DeepSpeed ZeRO config (deepspeed/runtime/zero/config.py): overlap_comm false by default, true "
                   "for stage 3; stage 3 re-gathers parameters for recomputation";
        break;
    }
    return r;
}

double shardedGathersPerMicroBatch(const Scenario& sc)
{
    const int zero = effectiveZeroStage(sc);
    const bool gradOp = sc.parallel.fsdp == Fsdp::GradOp;
    if (zero == 0 || (zero <= 2 && !gradOp))
        return 0;
    if (gradOp)
        return 1;
    const bool regather = frameworkRules(sc.stepTime.framework).regatherForRecompute;
    return regather && sc.training.recompute == Recompute::Full ? 3 : 2;
}

double fsdpCopyBytes(const Scenario& sc, double params, double shardRanks, double trained)
{
    const double gathers = shardedGathersPerMicroBatch(sc);
    if (!sc.stepTime.fsdpCopies || shardRanks <= 1 || params <= 0 || gathers == 0)
        return 0;
    // Each copy-out reads the gathered buffer and writes the unsharded parameters in their compute dtype.
    const double ew = bytesPerValue(sc.precision.weights), eg = bytesPerValue(sc.precision.gradients);
    // The copy-in reads gradients in the compute dtype and writes them in the reduce dtype.
    return gathers * 2 * ew * params + (ew + eg) * params * trained;
}

bool userbuffersTpOverlap(const Scenario& sc)
{
    return sc.stepTime.overlapTp && sc.stepTime.framework == Framework::Megatron && sc.parallel.sequenceParallel &&
           sc.parallel.tp > 1;
}

void resolveFramework(Scenario& sc)
{
    auto& st = sc.stepTime;
    if (st.frameworkAuto || st.framework == Framework::Auto)
        st.framework = autoFramework(sc.parallel.fsdp != Fsdp::None, sc.parallel.zeroStage);
    const auto rules = frameworkRules(st.framework);
    if (st.overlapDpAuto)
        st.overlapDp = st.framework == Framework::Deepspeed ? effectiveZeroStage(sc) >= 3 : rules.overlapDp;
    if (st.overlapTpAuto)
        st.overlapTp = rules.overlapTp;
    if (st.fsdpCopiesAuto)
        st.fsdpCopies = rules.fsdpCopies;
    if (st.overlapEpAuto)
        st.overlapEp = false; // opt-in everywhere (Megatron-Core: overlap_moe_expert_parallel_comm = False)
    if (st.kernelFusionAuto || st.kernelFusion == KernelFusion::Auto)
        st.kernelFusion = rules.fusion;
}

Framework autoFramework(bool fsdp, int zeroStage)
{
    if (fsdp)
        return Framework::Torchtitan;
    return zeroStage >= 3 ? Framework::Deepspeed : Framework::Megatron;
}

bool requiresSequenceParallel(Framework framework, int tp, int ep)
{
    return framework == Framework::Megatron && ep > 1 && tp > 1;
}

AttentionKernel attentionKernelFor(const Scenario& sc)
{
    switch (sc.stepTime.attentionKernel) {
    case AttentionKernelChoice::Flash1: return AttentionKernel::Flash1;
    case AttentionKernelChoice::Flash2: return AttentionKernel::Flash2;
    case AttentionKernelChoice::Flash3: return AttentionKernel::Flash3;
    case AttentionKernelChoice::Auto: break;
    }
    return frameworkRules(sc.stepTime.framework).hopperAttention;
}

MoeAuxLoss effectiveMoeAuxLoss(const Scenario& sc)
{
    const auto& m = sc.model.shape.moe;
    if (sc.model.kind != ModelKind::Transformer || m.experts <= 0)
        return MoeAuxLoss::None;
    if (sc.training.moeAuxLoss != MoeAuxLoss::Auto)
        return sc.training.moeAuxLoss;
    return m.scoreCorrectionBias ? MoeAuxLoss::SeqAuxLoss : MoeAuxLoss::AuxLoss;
}

} // namespace napkin::core
