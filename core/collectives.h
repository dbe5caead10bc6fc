// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Collectives with a latency and a bandwidth term (α–β), as NCCL's own tuning model prices them
// (NVIDIA/nccl src/graph/tuning.cc, NCCL 2.7: per-protocol base latency + per-step hardware latency,
// bus bandwidth per protocol; the library picks the fastest algorithm and protocol per call).
//
//   ring all-reduce        t = lat + 2(n-1)/n · bytes / busbw,  lat = base + 2(n-1) · hop
//   tree all-reduce        t = lat + 2(n-1)/n · bytes / busbw,  lat = base + 2((n/nodes - 1) hop_nvl
//                                                                   + log2(nodes) hop_net)
//   all-gather, reduce-scatter (ring)  t = lat + (n-1)/n · bytes / busbw, lat = base + (n-1) · hop
//   send/recv              t = hop + bytes / busbw
//
// bytes: the full buffer (nccl-tests doc/PERFORMANCE.md conventions). busbw: the link's nominal
// one-direction rate × an achieved-bandwidth efficiency (collective_efficiency).

namespace napkin::core {

struct Link {
    double busbw = 0;   // achieved bytes/s per rank, one direction
    double nominal = 0; // nominal bytes/s per rank, one direction (before efficiency)
    bool crossesNodes = false;
    double ranks = 1; // ranks in the group
    double nodes = 1; // nodes the group spans
};

enum class Collective { AllReduce, AllGather, ReduceScatter };

// Seconds for one collective of `bytes` (full buffer) over the group. atPeak: nominal bandwidth and
// no latency (the roofline-style bound that time.breakdown_at_peak uses).
double collectiveSeconds(Collective c, double bytes, const Link& link, bool atPeak = false);
double sendRecvSeconds(double bytes, const Link& link, bool atPeak = false);

// All-to-all of a rank's `bytes` (what it sends, the same it receives) over the group, as NCCL runs
// it (ncclSend/ncclRecv to every peer, one step): (n-1)/n of the bytes leave the rank; inside a node
// at the NVLink rate, across nodes the (nodes-1)/nodes share that leaves the node goes through the
// rank's own NIC (SimuMax network model, moe-notes.md §1.5), the rest over NVLink at the same time.
// Latency: one Simple-protocol hop (the grouped sends run concurrently). link.nominal: the NVLink
// rate; interNominal: the NIC's.
// offNodeShare: the share of `bytes` that leaves the node (default, negative: (nodes - 1) / nodes);
// onNodeShare: the share that crosses NVLink (default, negative: the remote rest, (n - 1) / n minus
// the off-node share). A dispatcher that sends one copy per remote node (DeepEP) lowers the first and
// forwards over NVLink on arrival (expertTraffic in core/steptime.cpp).
double allToAllSeconds(double bytes, const Link& link, double interNominal, bool atPeak = false,
                       double offNodeShare = -1, double onNodeShare = -1);

// Expected copies of one token a de-duplicating expert dispatcher (DeepEP, HybridEP) sends, for E
// experts spread evenly over `ranks` ranks on `nodes` nodes and k experts per token: remoteNodes through
// the NIC, nvlinkRanks over NVLink (sent to the node's other ranks and forwarded on arrival). Megatron-Core's
// all-to-all dispatcher sends k copies instead. Definition and sources in core/collectives.cpp.
struct DedupCopies {
    double remoteNodes = 0;
    double nvlinkRanks = 0;
    double missNode = 1; // chance a given node's experts hold none of a token's k
    double missRank = 1; // the same for one rank's experts
};
DedupCopies deduplicatedCopies(double experts, double k, double ranks, double nodes);

// Legacy helpers (no latency): 2(n-1)/n · bytes / bw and (n-1)/n · bytes / bw.
double allReduceSeconds(double bytes, double ranks, double bandwidth);
double allGatherSeconds(double bytes, double ranks, double bandwidth);

} // namespace napkin::core
