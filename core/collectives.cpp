// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "collectives.h"

#include <algorithm>
#include <cmath>

namespace napkin::core {

namespace {

// NCCL 2.7 src/graph/tuning.cc, microseconds. Protocols LL, LL128, Simple.
constexpr double kBaseRing[3] = {3.6, 10.0, 8.4};
constexpr double kBaseTree[3] = {4.4, 4.4, 0.0};
constexpr double kHopRingNvl[3] = {0.47, 1.9, 3.4};
constexpr double kHopRingNet[3] = {2.7, 4.0, 9.6};
constexpr double kHopTreeNvl[3] = {0.52, 1.2, 28};
constexpr double kHopTreeNet[3] = {5.0, 8.5, 50};
// Bus bandwidth per protocol relative to Simple: LL moves 8 bytes of which 4 are data (1/4 across
// nodes or for all-reduce, NCCL's own factor), LL128 120 of 128 bytes (0.92), intra-node only.
constexpr double kLlShare = 0.25, kLl128Share = 0.92;

double steps(Collective c, double n) { return c == Collective::AllReduce ? 2 * (n - 1) : n - 1; }

} // namespace

double collectiveSeconds(Collective c, double bytes, const Link& link, bool atPeak)
{
    const double n = link.ranks;
    if (n <= 1 || bytes <= 0)
        return 0;
    const double bw = atPeak ? link.nominal : link.busbw;
    if (bw <= 0)
        return 0;
    const double volume = steps(c, n) / n * bytes; // bytes each rank sends
    if (atPeak)
        return volume / bw;
    double best = 1e300;
    const double nodes = std::max(1.0, link.nodes);
    const double interSteps = c == Collective::AllReduce ? 2 * (nodes - 1) : nodes - 1;
    for (int p = 0; p < 3; ++p) {
        if (p == 1 && link.crossesNodes)
            continue; // LL128 over the network was not enabled by default
        const double share = p == 0 ? kLlShare : (p == 1 ? kLl128Share : 1.0);
        // Ring: intra-node hops at NVLink latency, the node-crossing ones at network latency.
        const double intraSteps = steps(c, n) - (link.crossesNodes ? interSteps : 0);
        const double ringLat =
            kBaseRing[p] + intraSteps * kHopRingNvl[p] + (link.crossesNodes ? interSteps * kHopRingNet[p] : 0);
        best = std::min(best, ringLat * 1e-6 + volume / (bw * share));
        if (c == Collective::AllReduce && link.crossesNodes && p != 1) {
            // Tree all-reduce between nodes: latency grows with log2(nodes) (NCCL 2.4+ double binary tree).
            const double perNode = n / nodes;
            const double treeLat =
                kBaseTree[p] + 2 * ((perNode - 1) * kHopTreeNvl[p] + std::log2(nodes) * kHopTreeNet[p]);
            best = std::min(best, treeLat * 1e-6 + volume / (bw * share));
        }
    }
    return best;
}

double allToAllSeconds(double bytes, const Link& link, double interNominal, bool atPeak, double offNodeShare,
                       double onNodeShare)
{
    const double n = link.ranks;
    if (bytes <= 0 || n <= 1 || link.nominal <= 0)
        return 0;
    const double e = atPeak ? 1.0 : link.busbw / link.nominal;
    const double remote = (n - 1) / n * bytes;
    double t = (onNodeShare >= 0 ? onNodeShare * bytes : remote) / (link.nominal * e);
    if (link.crossesNodes && link.nodes > 1 && interNominal > 0) {
        // Each rank's peers off its node hold (nodes - 1) / nodes of the group: that share uses the NIC.
        const double offNode = (offNodeShare >= 0 ? offNodeShare : (link.nodes - 1) / link.nodes) * bytes;
        const double onNode = onNodeShare >= 0 ? onNodeShare * bytes : remote - offNode;
        t = std::max(offNode / (interNominal * e), onNode / (link.nominal * e));
    }
    if (atPeak)
        return t;
    // NCCL groups the sends and receives (ncclGroupStart/End): they run concurrently, one Simple hop.
    return t + (link.crossesNodes ? kHopRingNet[2] : kHopRingNvl[2]) * 1e-6;
}

// DeepEP's dispatch (github deepseek-ai/DeepEP, get_dispatch_layout: num_tokens_per_rank,
// is_token_in_rank; its internode kernels; NVIDIA's HybridEP, Megatron-Core's flex dispatcher) sends a
// token once to each rank that holds any of its k experts, and across nodes once to each remote node,
// over RDMA to the rank of the same local index, which forwards it over NVLink to that node's target
// ranks (DeepSeek-V3 §3.2.2). With the E experts spread evenly and the k experts of a token drawn
// without repetition (balanced routing), a given set of c experts holds none of them with probability
// Π_{i<k} (E - c - i) / (E - i). Expected copies per token: (N - 1)(1 - P_node) through the NIC and,
// over NVLink, (G - 1)(1 - P_rank) sent directly to the node's other ranks plus as many forwarded on
// arrival (each of the N - 1 remote nodes' copies fans out to its other G - 1 ranks): N (G - 1)(1 - P_rank).
DedupCopies deduplicatedCopies(double experts, double k, double ranks, double nodes)
{
    auto miss = [&](double held) {
        double pr = 1;
        for (int i = 0; i < int(k); ++i)
            pr *= std::max(0.0, (experts - held - i) / (experts - i));
        return pr;
    };
    DedupCopies c;
    const double N = std::max(1.0, nodes), G = ranks / N;
    if (ranks <= 1 || experts <= 0)
        return c;
    c.missNode = miss(experts / N);
    c.missRank = miss(experts / ranks);
    c.remoteNodes = (N - 1) * (1 - c.missNode);
    c.nvlinkRanks = N * (G - 1) * (1 - c.missRank);
    return c;
}

double sendRecvSeconds(double bytes, const Link& link, bool atPeak)
{
    const double bw = atPeak ? link.nominal : link.busbw;
    if (bytes <= 0 || bw <= 0)
        return 0;
    if (atPeak)
        return bytes / bw;
    const double hop = (link.crossesNodes ? kHopRingNet[2] : kHopRingNvl[2]) * 1e-6;
    return hop + bytes / bw;
}

double allReduceSeconds(double bytes, double ranks, double bandwidth)
{
    if (ranks <= 1 || bandwidth <= 0)
        return 0;
    return 2 * (ranks - 1) / ranks * bytes / bandwidth;
}

double allGatherSeconds(double bytes, double ranks, double bandwidth)
{
    if (ranks <= 1 || bandwidth <= 0)
        return 0;
    return (ranks - 1) / ranks * bytes / bandwidth;
}

} // namespace napkin::core
