// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reconcile.h"

#include "buckets.h"
#include "estimate.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace napkin::core {

namespace {
bool positive(const std::optional<double>& v) { return v && std::isfinite(*v) && *v > 0; }
} // namespace

Reconciliation reconcile(const Scenario& sc, const Plan& plan, const Measurement& meas, Errors& errors)
{
    Reconciliation r;
    auto bad = [&](const char* field, double v, const char* allowed) {
        errors.push_back({field, fmt::format("{:.6g}", v), "must be a positive, finite number", allowed});
    };
    if (meas.stepSeconds && !positive(meas.stepSeconds))
        bad("--step-time", *meas.stepSeconds, "seconds greater than 0");
    if (meas.tokensPerSecond && !positive(meas.tokensPerSecond))
        bad("--tokens-per-second", *meas.tokensPerSecond, "tokens/s greater than 0");
    if (meas.peakAllocatedBytes && !positive(meas.peakAllocatedBytes))
        bad("--peak-allocated", *meas.peakAllocatedBytes, "bytes greater than 0");
    if (meas.peakReservedBytes && !positive(meas.peakReservedBytes))
        bad("--peak-reserved", *meas.peakReservedBytes, "bytes greater than 0");
    if (!meas.stepSeconds && !meas.tokensPerSecond)
        errors.push_back({"--step-time", "", "a step time or a throughput is needed",
                          "--step-time SECONDS or --tokens-per-second N"});
    if (meas.peakReservedBytes && meas.peakAllocatedBytes && *meas.peakReservedBytes < *meas.peakAllocatedBytes)
        errors.push_back({"--peak-reserved", std::to_string(*meas.peakReservedBytes),
                          "is below --peak-allocated: the allocator reserves at least what it hands out",
                          "at least the peak allocated bytes"});
    if (!errors.empty())
        return r;

    // Throughput: tokens per step / step time, or as given (whole job).
    const auto& c = plan.compute;
    r.tokensPerSecond = meas.tokensPerSecond ? *meas.tokensPerSecond : c.tokensPerStep / *meas.stepSeconds;
    r.stepSeconds = c.tokensPerStep / r.tokensPerSecond;
    if (meas.tokensPerSecond && meas.stepSeconds && std::abs(*meas.stepSeconds - r.stepSeconds) > 0.05 * r.stepSeconds)
        r.warnings.emplace_back("the step time and the throughput disagree by more than 5% for this batch; "
                                "the throughput is used");
    // CS336 lecture 2: MFU = model FLOPs / (time × GPUs × dense peak); HFU counts recomputation.
    const double G = double(sc.cluster.gpus), C = plan.hardware.peakFlops;
    const double recomputePerToken =
        c.trainingFlops > 0 ? (c.hardwareFlops - c.trainingFlops) / (c.trainingFlops / c.flopsPerToken) : 0;
    r.achievedFlopsPerGpu = c.flopsPerToken * r.tokensPerSecond / G;
    r.mfu = r.achievedFlopsPerGpu / C;
    r.hfu = (c.flopsPerToken + recomputePerToken) * r.tokensPerSecond / (G * C);
    if (r.mfu > 1)
        r.warnings.emplace_back(
            "measured MFU above 1: the GPU count, the batch or the dense peak does not match the run");

    if (meas.peakAllocatedBytes) {
        const auto& m = plan.memory;
        r.hasMemory = true;
        r.peakAllocated = *meas.peakAllocatedBytes;
        r.peakReserved = meas.peakReservedBytes.value_or(0);
        // The caching allocator hands out tensors and library workspaces, PyTorch DDP's buckets and
        // the CUDA graphs' pool; the CUDA context, NCCL's buffers and its own reserve are outside
        // max_memory_allocated().
        r.predictedAllocated = tensorBytes(m) + m.overheadWorkspace + m.comm.ddpBuckets + m.overheadCudaGraphs;
        r.gapBytes = r.peakAllocated - r.predictedAllocated;
        r.gapFraction = r.gapBytes / r.predictedAllocated;

        // Every size below is this rank's, read from the plan's own ledger: its parameters after
        // TP and PP, and each state's ZeRO/FSDP shard (one home for the sharding rules: the ledger).
        const double Pr = m.paramsPerRank > 0 ? m.paramsPerRank : plan.params.total;
        const double shardO = std::max(1.0, m.optimizerRate.shard), shardG = std::max(1.0, m.gradientsRate.shard);
        const double bg = bytesPerValue(sc.precision.gradients);
        std::vector<GapReason> reasons;
        if (r.gapBytes > 0) {
            if (!sc.precision.master)
                reasons.push_back({"an fp32 master copy of the weights that the plan does not count", 4 * Pr / shardO});
            if (bg < 4)
                reasons.push_back({"gradients kept or accumulated in fp32 (main grads)", (4 - bg) * Pr / shardG});
            if (sc.cluster.gpus > 1 && m.comm.ddpBuckets <= 0) // not already in the plan (memory.comm_buffers)
                reasons.push_back({"a second copy of the gradients in DDP's communication buckets", bg * Pr / shardG});
            if (sc.model.kind != ModelKind::Mlp) {
                // What the ledger would hold without recomputation and FlashAttention: re-plan, so the
                // per-stage layers, TP/SP/CP shards and in-flight micro-batches are the estimate's own.
                Scenario eager = sc;
                eager.training.recompute = Recompute::None;
                eager.training.flashAttention = false;
                const double eagerActivations = estimate(eager).memory.activations;
                if (eagerActivations > m.activations)
                    reasons.push_back({"autograd's saved intermediates: attention scores or recomputation the run "
                                       "does not do (unfused attention, no checkpointing)",
                                       eagerActivations - m.activations});
                const double tp = double(std::max(1, sc.parallel.tp));
                reasons.push_back(
                    {"temporaries: the fp32 logits gradient beside the loss buffers (last pipeline stage)",
                     double(sc.training.seqLen) / std::max(1, sc.parallel.cp) * double(sc.training.microBatch) *
                         std::ceil(double(sc.model.shape.vocab) / tp) * 4});
            }
            reasons.push_back(
                {"optimizer step temporaries (foreach Adam keeps one fp32 parameter-sized buffer)", 4 * Pr / shardO});
        } else if (r.gapBytes < 0) {
            if (sc.precision.master)
                reasons.push_back({"the plan counts an fp32 master copy the run does not keep", m.masterWeights});
            if (!sc.training.flashAttention && sc.model.kind != ModelKind::Mlp)
                reasons.push_back({"the run uses fused attention (FlashAttention / SDPA), which stores no scores",
                                   m.activations * 0.5});
            reasons.push_back({"activation checkpointing or offloading in the run", m.activations});
        }
        const double gap = std::abs(r.gapBytes);
        for (auto& g : reasons)
            g.explainsFraction = gap > 0 ? std::min(g.bytes, gap) / gap : 0;
        std::stable_sort(reasons.begin(), reasons.end(), [](const GapReason& a, const GapReason& b) {
            return a.explainsFraction > b.explainsFraction;
        });
        r.reasons = std::move(reasons);
        if (meas.peakReservedBytes && r.peakReserved > r.peakAllocated)
            r.warnings.push_back("reserved exceeds allocated by " +
                                 std::to_string(int(std::round((r.peakReserved - r.peakAllocated) / 1e6))) +
                                 " MB: the caching allocator's blocks and fragmentation (plan reserve: " +
                                 std::to_string(int(std::round(m.overheadAllocator / 1e6))) + " MB)");
    }
    return r;
}

nlohmann::json reconciliationToJson(const Reconciliation& r, const Plan& plan)
{
    nlohmann::json j;
    j["schema"] = "napkin.reconcile/1";
    j["measured"] = {{"tokens_per_second", r.tokensPerSecond},
                     {"step_seconds", r.stepSeconds},
                     {"mfu", r.mfu},
                     {"hfu", r.hfu},
                     {"model_flops_per_second_per_gpu", r.achievedFlopsPerGpu}};
    j["predicted"] = {{"mfu_assumed", plan.time.mfu},
                      {"step_seconds_at_assumed_mfu", plan.time.stepSeconds},
                      {"flops_per_token", plan.compute.flopsPerToken},
                      {"convention", plan.compute.convention},
                      {"peak_flops", plan.hardware.peakFlops}};
    j["formulas"] = {{"mfu", "flops_per_token · tokens_per_second / (gpus · peak_flops)"},
                     {"hfu", "(flops_per_token + recompute_per_token) · tokens_per_second / (gpus · peak_flops)"},
                     {"source", "CS336 lecture 2 (MFU); Chowdhery et al. 2022 App. B (HFU)"}};
    if (r.hasMemory) {
        nlohmann::json reasons = nlohmann::json::array();
        for (const auto& g : r.reasons)
            reasons.push_back({{"reason", g.reason}, {"bytes", g.bytes}, {"explains_fraction", g.explainsFraction}});
        j["memory"] = {{"predicted_allocated_bytes", r.predictedAllocated},
                       {"peak_allocated_bytes", r.peakAllocated},
                       {"peak_reserved_bytes", r.peakReserved},
                       {"gap_bytes", r.gapBytes},
                       {"gap_fraction", r.gapFraction},
                       {"reasons", reasons}};
    }
    j["warnings"] = r.warnings;
    return j;
}

} // namespace napkin::core
