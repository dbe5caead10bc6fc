// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Mixture-of-experts run properties (training.routing_imbalance, training.moe_capacity_factor,
// precision.expert_weights) resolved for the plan's layout, with their derivations and warnings.
// Formulas: ../reference moe-notes.md §1.5 (SimuMax), §1.8 (torchtitan), §1.9 (DeepSpeed-MoE), §6.2.

#include "estimate_stages.h"
#include "framework.h"

#include <algorithm>
#include <cmath>

namespace napkin::core::detail {

namespace {

void warnUnused(const Scenario& sc, Plan& p)
{
    if (sc.parallel.epUnused > 1)
        p.warnings.push_back({"moe_keys_unused", "parallel.ep " + std::to_string(sc.parallel.epUnused) +
                                                     " has no effect: " + sc.model.name +
                                                     " has no routed experts (ep = 1)"});
    const auto& t = sc.training;
    if (t.routingImbalance != 1 || t.routingImbalanceWorst || t.capacityFactor)
        p.warnings.push_back({"moe_keys_unused", "training.routing_imbalance and training.moe_capacity_factor have no "
                                                 "effect: " +
                                                     sc.model.name + " has no routed experts"});
    if (sc.precision.expertWeights)
        p.warnings.push_back(
            {"moe_keys_unused", "precision.expert_weights has no effect: " + sc.model.name + " has no routed experts"});
    if (sc.parallel.epNodeLimit > 0)
        p.warnings.push_back(
            {"moe_keys_unused", "parallel.ep_node_limit has no effect: " + sc.model.name + " has no routed experts"});
    if (t.moeAuxLoss != MoeAuxLoss::Auto || !sc.stepTime.moeRouterFusionAuto || t.moeRouterFp32)
        p.warnings.push_back({"moe_keys_unused", "training.moe_aux_loss, training.moe_router_dtype and "
                                                 "step_time.moe_router_fusion have no effect: " +
                                                     sc.model.name + " has no router"});
}

} // namespace

MoeTokenShare moeTokenShare(const ParallelConfig& pa)
{
    const double tp = double(std::max(1, pa.tp)), etp = double(std::max(1, pa.etp));
    MoeTokenShare s;
    s.widthScale = tp / etp;
    if (pa.sequenceParallel || tp == 1) { // the expert-TP group's ranks hold different tokens
        s.split = tp;
        s.gather = etp;
    }
    return s;
}

void estimateMoeRun(const Scenario& sc, Plan& p)
{
    auto& m = p.moe;
    const TransformerShape& shape = sc.model.shape;
    if (sc.model.kind != ModelKind::Transformer || !isMoe(shape)) {
        warnUnused(sc, p);
        return;
    }
    const auto& t = sc.training;
    m.applies = true;
    const auto& pa = sc.parallel;
    m.expertRanks = pa.ep;
    m.expertTensorRanks = pa.etp;
    m.expertDataParallel = pa.edp;
    m.crossesNodes = std::int64_t(pa.ep) * pa.etp > pa.gpusPerNode;
    derive(p, "parallel.edp", "{tp} · {cp} · {dp} / ({etp} · {ep})", double(pa.edp), "ranks",
           "Megatron-Core folding: the MoE layers map ETP · EP · EDP · PP onto the GPUs TP · CP · DP · PP cover "
           "(parallel_state.py initialize_model_parallel); the routed experts' gradients and optimizer states shard "
           "over EDP",
           {{"tp", double(pa.tp)},
            {"cp", double(pa.cp)},
            {"dp", double(pa.dp)},
            {"etp", double(pa.etp)},
            {"ep", double(pa.ep)}});
    if (m.crossesNodes)
        p.warnings.push_back(
            {"expert_parallel_crosses_nodes", "parallel.ep · etp = " + std::to_string(pa.ep * pa.etp) +
                                                  " spans more than the " + std::to_string(pa.gpusPerNode) +
                                                  " GPUs of a node: the dispatch and combine all-to-all "
                                                  "leave the node and run over the NICs"});
    const std::int64_t epNodes = (std::int64_t(pa.ep) * pa.etp + pa.gpusPerNode - 1) / std::max(1, pa.gpusPerNode);
    if (pa.epNodeLimit > 0 && pa.epNodeLimit >= std::min<std::int64_t>(epNodes, shape.moe.topK))
        p.warnings.push_back({"ep_node_limit_unused", "parallel.ep_node_limit " + std::to_string(pa.epNodeLimit) +
                                                          " does not bind: the expert-parallel group spans " +
                                                          std::to_string(epNodes) + " node(s) and each token picks " +
                                                          std::to_string(shape.moe.topK) + " experts"});
    else if (pa.epNodeLimit > 0 && sc.stepTime.moeDispatcher == MoeDispatcher::AllToAll)
        p.warnings.push_back(
            {"ep_node_limit_no_dedup", "parallel.ep_node_limit " + std::to_string(pa.epNodeLimit) +
                                           " saves no traffic with step_time.moe_dispatcher alltoall: Megatron-Core's "
                                           "all-to-all sends one row per token and expert; a dispatcher that sends one "
                                           "copy per node (deepep) does"});
    const double E = double(shape.moe.experts), k = double(shape.moe.topK), ep = double(m.expertRanks);
    m.worst = t.routingImbalanceWorst;
    // The worst case: every token of every rank picks its k experts on one rank, which then receives
    // EP · T · min(k, E / EP) rows against the balanced T · k (torchtitan token_dispatcher.py's
    // receive-buffer bound; moe-notes.md §1.8).
    m.routingImbalance = m.worst ? ep * std::min(k, E / ep) / k : t.routingImbalance;
    if (m.worst)
        derive(p, "moe.routing_imbalance", "{ep} · min({top_k}, {experts} / {ep}) / {top_k}", m.routingImbalance, "",
               "worst case: every token's k experts on one expert-parallel rank (torchtitan token_dispatcher.py "
               "receive-buffer bound EP·T·min(k, E_local) over the balanced T·k)",
               {{"ep", ep}, {"top_k", k}, {"experts", E}});
    else
        derive(
            p, "moe.routing_imbalance", "{r}", m.routingImbalance, "",
            "training.routing_imbalance: routed rows of the busiest expert-parallel rank over the mean (1: balanced)",
            {{"r", m.routingImbalance}});
    // One imbalance on one expert rank changes no GPU's load: every GPU holds every expert.
    m.busiestRankLoad = m.expertRanks > 1 ? m.routingImbalance : 1.0;
    // Tokens a rank routes per micro-batch: s / CP of b sequences, and with sequence parallelism its
    // 1 / TP of them (moeTokenShare); each goes to k experts. The capacity is computed from these local
    // rows (moe_utils.get_capacity).
    const double sp = moeTokenShare(pa).split;
    m.routedTokens = double(t.seqLen) / double(std::max(1, pa.cp)) * double(t.microBatch) / sp;
    m.rowsPerExpert = m.routedTokens * k / E;
    derive(p, "moe.rows_per_expert", "{s} / {cp} · {b} / {sp} · {top_k} / {experts}", m.rowsPerExpert, "rows",
           "balanced routing: a rank's T·k routed rows over E experts per micro-batch; sp = tp with sequence "
           "parallelism (SimuMax moe_module.py; moe-notes.md §1.5)",
           {{"s", double(t.seqLen)},
            {"cp", double(std::max(1, pa.cp))},
            {"b", double(t.microBatch)},
            {"sp", sp},
            {"top_k", k},
            {"experts", E}});
    if (t.capacityFactor) {
        m.capacityFactor = *t.capacityFactor;
        m.expertCapacity = std::ceil(m.capacityFactor * m.rowsPerExpert);
        derive(p, "moe.expert_capacity", "ceil({cf} · {rows_per_expert})", m.expertCapacity, "rows",
               "capacity C = ceil(T/E · CF · k): rows past it are dropped, and with padding every expert computes C "
               "rows (DeepSpeed sharded_moe.py _capacity; Megatron-Core moe_utils.get_capacity)",
               {{"cf", m.capacityFactor}, {"rows_per_expert", m.rowsPerExpert}});
    }
    m.expertWeights = info(sc.precision.expertWeights.value_or(sc.precision.weights)).id.data();
    if (requiresSequenceParallel(sc.stepTime.framework, pa.tp, pa.ep) && !pa.sequenceParallel)
        p.warnings.push_back({"moe_tp_without_sp",
                              "Megatron-Core does not run expert parallelism with tensor parallelism unless "
                              "sequence parallelism is on (transformer_config.py raises a ValueError): set "
                              "parallel.sequence_parallel to true, or parallel.tp to 1"});
    if (m.routingImbalance > 1 && m.expertRanks == 1)
        p.warnings.push_back({"routing_imbalance_one_rank",
                              "training.routing_imbalance has no effect on one expert-parallel rank: every GPU holds "
                              "all experts, so an uneven split among them changes no GPU's load (set parallel.ep)"});
}

} // namespace napkin::core::detail
