// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "format_memory.h"

namespace napkin::core {

nlohmann::json timelineJson(const MemoryLedger& m)
{
    auto a = nlohmann::json::array();
    for (int i = 0; i < m.timelineCount; ++i) {
        const auto& t = m.timeline[std::size_t(i)];
        a.push_back({{"event", t.event},
                     {"at", t.at},
                     {"states", t.states},
                     {"activations", t.activations},
                     {"temporaries", t.temporaries},
                     {"runtime", t.runtime},
                     {"allocated", t.total}});
    }
    return a;
}

nlohmann::json commBuffersJson(const CommBuffers& c)
{
    auto groups = nlohmann::json::array();
    for (int i = 0; i < c.count; ++i) {
        const auto& g = c.groups[std::size_t(i)];
        groups.push_back({{"group", g.name},
                          {"ranks", g.ranks},
                          {"crosses_nodes", g.crossesNodes},
                          {"kind", g.p2p ? "p2p" : "collective"},
                          {"channels", g.channels},
                          {"connections", g.connections},
                          {"bytes", g.bytes},
                          {"nvls_bytes", g.nvlsBytes}});
    }
    return {{"groups", std::move(groups)},
            {"nccl", c.nccl},
            {"ddp_buckets", c.ddpBuckets},
            {"reduce_bucket", c.reduceBucket},
            {"reduce_scatter", c.reduceScatter},
            {"total", c.total},
            {"given", c.given}};
}

nlohmann::json hostMemoryJson(const HostMemory& h)
{
    return {{"per_gpu",
             {{"weights", h.weights},
              {"gradients", h.gradients},
              {"master_weights", h.master},
              {"optimizer_states", h.optimizer},
              {"activations", h.activations},
              {"pinned_buffers", h.pinnedBuffers},
              {"total", h.total}}},
            {"paged_optimizer_per_gpu", h.pagedOptimizer},
            {"nvme_per_gpu", h.nvme},
            {"per_node", h.perNode},
            {"capacity_per_node", h.capacityPerNode > 0 ? nlohmann::json(h.capacityPerNode) : nlohmann::json(nullptr)},
            {"fits", h.fits},
            {"pcie_bytes_per_step", h.pcieBytesPerStep},
            {"nvme_bytes_per_step", h.nvmeBytesPerStep},
            {"pcie_bandwidth", h.pcieBandwidth}};
}

} // namespace napkin::core
