// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The traffic of one step by parallel dimension: data parallel (ZeRO / FSDP), expert all-to-all,
// context parallel; priced by core/collectives.h over the links the layout uses.
#include "steptime_parts.h"

#include "framework.h"
#include "roofline.h"

#include <algorithm>
#include <cmath>

namespace napkin::core::steptime_detail {

// A group of `ranks` GPUs `stride` apart in Megatron rank order, on nodes of gpn GPUs. Crossing
// nodes, NCCL rings through every NIC the group has in a node: min(NVLink, ranks-per-node × NIC).
Link groupLink(double ranks, double stride, double gpn, double intra, double inter, double eff)
{
    Link l;
    l.ranks = std::max(1.0, ranks);
    l.crossesNodes = ranks > 1 && ranks * stride > gpn;
    const double perNode = l.crossesNodes ? std::max(1.0, std::floor(gpn / stride)) : l.ranks;
    l.nodes = l.crossesNodes ? std::ceil(l.ranks / std::min(perNode, l.ranks)) : 1.0;
    l.nominal = l.crossesNodes ? std::min(intra, perNode * inter) : intra;
    l.busbw = l.nominal * eff;
    return l;
}

namespace {

// The collectives of one step's data-parallel traffic for `params` parameters, by kind.
struct DpParts {
    double allReduce = 0;     // ZeRO-0: once per step
    double reduceScatter = 0; // distributed optimizer / ZeRO-1-2: once per step
    double allGather = 0;     //   and the updated parameters' gather
    double perMicroBatch = 0; // ZeRO-3 / FSDP: gathers and reduce-scatter per micro-batch
    double across = 0;        // HYBRID_SHARD: the replicas' all-reduce of the gradient shards
    void add(const DpParts& o)
    {
        allReduce += o.allReduce, reduceScatter += o.reduceScatter, allGather += o.allGather;
        perMicroBatch += o.perMicroBatch, across += o.across;
    }
};

// trained: the share of the parameters that have gradients (LoRA / QLoRA: the adapters; the frozen
// base is gathered under ZeRO-3 but never reduced or updated). ew: bytes per stored weight.
DpParts dataParallelParts(const Scenario& sc, double params, const Link& dpLink, const Link& innerLink,
                          const Link& replicaLink, bool atPeak, double trained = 1, double ew = 0)
{
    DpParts r;
    if (dpLink.ranks <= 1 || params <= 0)
        return r;
    const double eg = bytesPerValue(sc.precision.gradients) * trained;
    if (ew <= 0)
        ew = bytesPerValue(sc.precision.weights);
    const double ewTrained = bytesPerValue(sc.precision.weights) * trained;
    const int zero = effectiveZeroStage(sc);
    if (zero == 0) {
        r.allReduce = collectiveSeconds(Collective::AllReduce, params * eg, dpLink, atPeak);
    } else if (zero <= 2 && sc.parallel.fsdp != Fsdp::GradOp) {
        // Distributed optimizer / ZeRO-1-2: reduce-scatter the gradients during the last backward,
        // all-gather the updated parameters before (Megatron: during) the next forward.
        r.reduceScatter = collectiveSeconds(Collective::ReduceScatter, params * eg, dpLink, atPeak);
        r.allGather = collectiveSeconds(Collective::AllGather, params * ewTrained, dpLink, atPeak);
    } else {
        // ZeRO-3 / FSDP: gather the parameters for the forward and again for the backward (and for a
        // recomputed forward where the framework re-fetches), reduce-scatter the gradients; per
        // micro-batch. FSDP SHARD_GRAD_OP keeps the gathered parameters until the backward.
        const double gathers = shardedGathersPerMicroBatch(sc);
        const double ag = collectiveSeconds(Collective::AllGather, params * ew, innerLink, atPeak);
        const double rs = collectiveSeconds(Collective::ReduceScatter, params * eg, innerLink, atPeak);
        r.perMicroBatch = gathers * ag + rs;
        // HYBRID_SHARD: the gradient shards are then all-reduced across the replicas.
        r.across = collectiveSeconds(Collective::AllReduce, params * eg / innerLink.ranks, replicaLink, atPeak);
    }
    return r;
}

} // namespace

// Data-parallel traffic of one step (ZeRO / FSDP), and what the framework's overlap leaves exposed.
// With expert parallelism the routed experts' gradients and parameters travel over their own
// expert-data-parallel group (EDP ranks etp · ep apart, Megatron-Core's expert rank order), the rest
// over the dense data-parallel group.
DpTraffic dataParallelTraffic(const Scenario& sc, const Plan& p, const StageWork& w, double stageLayers, double m,
                              double mbRecompute, const Link& dpLink, const Link& innerLink, const Link& replicaLink,
                              const Link& edpLink, bool atPeak)
{
    DpTraffic r;
    const double Pr = p.memory.paramsPerRank > 0 ? p.memory.paramsPerRank : p.params.total;
    const bool experts = p.moe.applies && p.moe.expertRanks > 1 && p.moe.expertParamsPerRank > 0;
    const double Pe = experts ? std::min(Pr, p.moe.expertParamsPerRank) : 0.0;
    const double trained = sc.finetune.peft() ? p.memory.gradientsRate.valuesPerParam : 1.0;
    const double ew = sc.finetune.peft() ? p.memory.weightsRate.bytesPerValue : 0.0;
    DpParts parts = dataParallelParts(sc, Pr - Pe, dpLink, innerLink, replicaLink, atPeak, trained, ew);
    if (Pe > 0) // FSDP shards the experts over their own group (torchtitan): no replicas there
        parts.add(dataParallelParts(sc, Pe, edpLink, edpLink, Link{}, atPeak));
    const auto rules = frameworkRules(sc.stepTime.framework);
    const bool overlap = sc.stepTime.overlapDp;
    const double fwdWindow = stageLayers * w.layerFwd, bwdWindow = stageLayers * w.layerBwd;
    // The first layers' bucket is reduced after the backward ends and the first layer's gather
    // precedes the forward: one layer's share of each collective is never hidden.
    const double firstShare = 1.0 / std::max(1.0, stageLayers);
    auto hide = [&](double t, double window) { return overlap ? std::max(t * firstShare, t - window) : t; };
    const double reductions = rules.reduceScatterEveryMicroBatch ? m : 1.0;
    r.total =
        parts.allReduce + parts.reduceScatter + parts.allGather + m * parts.perMicroBatch + reductions * parts.across;
    const double mbCompute = fwdWindow + bwdWindow + mbRecompute;
    r.exposed = hide(parts.allReduce, bwdWindow) + hide(parts.reduceScatter, bwdWindow) +
                hide(parts.allGather, fwdWindow) + m * hide(parts.perMicroBatch, mbCompute) +
                reductions * hide(parts.across, bwdWindow);
    return r;
}

// Full recompute re-runs the forward's dispatch and combine (Megatron-Core: the MoE layer is inside
// the checkpointed block).
// So does the "moe" recompute module (Megatron-Core checkpoints the whole MoE layer).
bool recomputeMoe(const TrainingConfig& tr)
{
    return tr.recompute == Recompute::Full ||
           (tr.recompute == Recompute::Modules && (tr.recomputeModules & kModuleMoe));
}

ExpertTraffic expertTraffic(const Scenario& sc, const MoeRun& moe, double stageLayers, bool recompute, double intra,
                            double inter, double eff, bool atPeak)
{
    ExpertTraffic r;
    const auto& par = sc.parallel;
    const auto& shape = sc.model.shape;
    if (sc.model.kind != ModelKind::Transformer || !isMoe(shape) || par.ep <= 1)
        return r;
    // Rows a rank routes per micro-batch (plan.moe.routed_tokens × top-k), each d_model values in the
    // activation dtype (moe-notes.md §6.4); the busiest rank receives its load × as many.
    r.bytes = moe.routedTokens * double(shape.moe.topK) * double(shape.dModel) *
              bytesPerValue(sc.precision.activations) * moe.busiestRankLoad;
    // The EP group: ep ranks etp apart (Megatron-Core expert rank order ETP, EP, EDP, PP).
    Link link = groupLink(double(par.ep), double(par.etp), double(std::max(1, par.gpusPerNode)), intra, inter, eff);
    link.nominal = intra;
    link.busbw = intra * eff;
    r.crossesNodes = link.crossesNodes;
    r.ranks = link.ranks;
    r.nodes = link.nodes;
    r.bandwidth = (link.crossesNodes ? inter : intra) * (atPeak ? 1.0 : eff);
    // Node-limited routing (DeepSeek-V3 §3.2.2, DeepEP's dispatch): a token's k experts lie on at most
    // M nodes, one copy crosses to each remote one (M · (nodes - 1) / nodes of them for uniform
    // routing) and NVLink fans it out there: the off-node bytes fall from k copies to M, when the limit
    // binds (M < min(nodes, k); otherwise plan warning ep_node_limit_unused).
    // Megatron-Core's all-to-all dispatcher sends one row per (token, expert) pair (moe/token_dispatcher.py
    // permutes T·k rows before the all-to-all), so the limit saves nothing there.
    double offNode = -1, onNode = -1;
    const double k = double(std::max<std::int64_t>(1, shape.moe.topK)), M = double(par.epNodeLimit);
    if (sc.stepTime.moeDispatcher == MoeDispatcher::DeepEp) {
        const auto copies = deduplicatedCopies(double(shape.moe.experts), k, link.ranks, link.nodes);
        r.nodeLimited = M > 0 && link.nodes > 1 && M < std::min(link.nodes, k);
        const double nodeCopies = r.nodeLimited ? (link.nodes - 1) / link.nodes * M : copies.remoteNodes;
        offNode = link.nodes > 1 ? nodeCopies / k : 0.0;
        onNode = copies.nvlinkRanks / k;
        r.onNodeShare = onNode;
        r.missNode = copies.missNode;
        r.missRank = copies.missRank;
    }
    r.offNodeShare = offNode >= 0 ? offNode : (link.nodes > 1 ? (link.nodes - 1) / link.nodes : 0.0);
    const double one = allToAllSeconds(r.bytes, link, inter, atPeak, offNode, onNode);
    // Forward: dispatch + combine; backward: their gradients; full recompute: the forward's again.
    // FP8 dispatch (DeepSeek-V3 §3.3.3): the forward dispatch and the gradient sent back to the
    // experts (before the down projection's backward) travel in FP8 with a 4-byte scale per 128
    // values; the combine and the gradient returned to the tokens stay in BF16.
    double perLayer = (4 + (recompute ? 2 : 0)) * one;
    if (sc.stepTime.fp8Dispatch) {
        const double fp8 = allToAllSeconds(r.bytes * (1 + 4.0 / 128) / bytesPerValue(sc.precision.activations), link,
                                           inter, atPeak, offNode, onNode);
        perLayer = (2 + (recompute ? 1 : 0)) * (one + fp8);
    }
    const double L = double(shape.layers);
    const double moeShare = L > 0 ? double(moeLayerCount(shape)) / L : 0;
    r.seconds = stageLayers * moeShare * perLayer;
    return r;
}

// Context-parallel traffic of one micro-batch on one stage (parallel.cp_comm): the total and what
// attention does not hide.
CpTraffic contextParallelTraffic(const Scenario& sc, const StageWork& w, double stageLayers, const Link& cpLink,
                                 double inter, bool atPeak)
{
    const auto& tr = sc.training;
    const double cp = sc.parallel.cp, e = bytesPerValue(sc.precision.activations);
    const auto shard = tensorParallelShard(sc.model.shape, sc.parallel.tp);
    const double rows = (double(tr.seqLen) / cp) * double(tr.microBatch), hd = double(shard.headDim);
    const double kv = 2 * rows * double(shard.kvHeads) * hd * e; // this rank's K and V
    const double fwdTimes = tr.recompute == Recompute::None ? 1.0 : 2.0;
    double fwd = 0, bwd = 0;
    bool hidden = false;
    switch (sc.parallel.cpComm) {
    case CpComm::P2p:
        // Ring attention passes K and V around the cp ranks (forward), K, V and dK, dV backward,
        // behind each block's attention (Liu et al. 2023; Megatron-Core context parallel).
        fwd = (cp - 1) * sendRecvSeconds(kv, cpLink, atPeak);
        bwd = 2 * fwd;
        hidden = true;
        break;
    case CpComm::AllGather:
        // Transformer Engine AttnFuncWithCPAndKVAllGather: all-gather K, V before attention;
        // backward gathers them again and reduce-scatters dK, dV. Exposed (Llama 3 §3.3.2).
        fwd = collectiveSeconds(Collective::AllGather, cp * kv, cpLink, atPeak);
        bwd = fwd + collectiveSeconds(Collective::ReduceScatter, cp * kv, cpLink, atPeak);
        break;
    case CpComm::A2a: {
        // DeepSpeed-Ulysses (Jacobs et al. 2023): all-to-all Q, K, V from sequence to head shards
        // before attention and the output back after; backward the mirror (dO in, dQ dK dV out).
        const double out = rows * double(shard.heads) * hd * e;
        fwd = allToAllSeconds(out + kv, cpLink, inter, atPeak) + allToAllSeconds(out, cpLink, inter, atPeak);
        bwd = fwd;
        break;
    }
    }
    CpTraffic t;
    t.total = stageLayers * (fwdTimes * fwd + bwd);
    t.exposed =
        hidden ? stageLayers * (fwdTimes * std::max(0.0, fwd - w.attnFwd) + std::max(0.0, bwd - w.attnBwd)) : t.total;
    return t;
}

} // namespace napkin::core::steptime_detail
