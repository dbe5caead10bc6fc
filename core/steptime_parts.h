// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Internal to the step-time model (steptime.cpp, steptime_comm.cpp): the work of one pipeline stage
// and the traffic each parallel dimension adds to it. Not part of core's interface.
#include "collectives.h"
#include "plan.h"
#include "scenario.h"

namespace napkin::core::steptime_detail {

// Forward work of one group of ops: time, kernel launches, executed FLOPs.
struct Work {
    double t = 0, kernels = 0, exec = 0;
    void add(double time, double k, double x) { t += time, kernels += k, exec += x; }
};

struct StageWork {
    Work opGemm, mlp, norm; // forward: op-policy GEMM share, the MLP module, the layer norms
    double layerFwd = 0, layerBwd = 0, attnFwd = 0, attnBwd = 0, gemmFwd = 0, gemmBwd = 0, head = 0;
    double kernelsFwd = 0, kernelsBwd = 0, kernelsHead = 0;
    double execFwd = 0, execBwd = 0, execAttnFwd = 0, execGemmFwd = 0, execHead = 0;
    double kernelsGemmFwd = 0, kernelsAttnFwd = 0;
    double fusedAttnFwd = 0;                      // forward time of fused attention kernels (OpKind::Attention)
    double wgrad = 0, headBwd = 0, headWgrad = 0; // weight-gradient GEMMs per layer; the head's backward, its wgrad
    Work act, router, qkv, rope; // forward: the MLP's activation, the router, the QKV projections, RoPE
};

// A group of `ranks` GPUs `stride` apart in Megatron rank order, on nodes of gpn GPUs. Crossing
// nodes, NCCL rings through every NIC the group has in a node: min(NVLink, ranks-per-node × NIC).
Link groupLink(double ranks, double stride, double gpn, double intra, double inter, double eff);

struct ExpertTraffic {
    double seconds = 0;   // per micro-batch on the slowest stage
    double bytes = 0;     // one all-to-all's receive volume on the busiest rank
    double bandwidth = 0; // achieved rate of the link that bounds it
    bool crossesNodes = false;
    double offNodeShare = 0; // share of the bytes that leaves the node
    double onNodeShare = -1; // share that crosses NVLink under a de-duplicating dispatcher (-1: the rest)
    double ranks = 0, nodes = 0;
    double missNode = 1, missRank = 1; // deduplicatedCopies' probabilities (deepep)
    bool nodeLimited = false;          // parallel.ep_node_limit binds and sets the off-node copies
};

struct DpTraffic {
    double total = 0, exposed = 0;
};

// Data-parallel traffic of one step (ZeRO / FSDP), and what the framework's overlap leaves exposed.
// With expert parallelism the routed experts' gradients and parameters travel over their own
// expert-data-parallel group (EDP ranks etp · ep apart, Megatron-Core's expert rank order), the rest
// over the dense data-parallel group.
DpTraffic dataParallelTraffic(const Scenario& sc, const Plan& p, const StageWork& w, double stageLayers, double m,
                              double mbRecompute, const Link& dpLink, const Link& innerLink, const Link& replicaLink,
                              const Link& edpLink, bool atPeak);

// Full recompute re-runs the forward's dispatch and combine (Megatron-Core: the MoE layer is inside
// the checkpointed block).
// So does the "moe" recompute module (Megatron-Core checkpoints the whole MoE layer).
bool recomputeMoe(const TrainingConfig& tr);

// The expert all-to-all of one micro-batch on the slowest stage (dispatch and combine per MoE layer).
ExpertTraffic expertTraffic(const Scenario& sc, const MoeRun& moe, double stageLayers, bool recompute, double intra,
                            double inter, double eff, bool atPeak);

// Context-parallel traffic of one micro-batch on one stage (parallel.cp_comm): the total and what
// attention does not hide.
struct CpTraffic {
    double total = 0, exposed = 0;
};
CpTraffic contextParallelTraffic(const Scenario& sc, const StageWork& w, double stageLayers, const Link& cpLink,
                                 double inter, bool atPeak);

} // namespace napkin::core::steptime_detail
