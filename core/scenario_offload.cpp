// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The scenario's offload section (ZeRO-Offload, ZeRO-Infinity, activation offload) and the host
// keys of the cluster section it needs, with the checks that span sections.

#include "jsonreader.h"
#include "scenario_sections.h"

namespace napkin::core {

const char* toString(OffloadTarget t)
{
    switch (t) {
    case OffloadTarget::None: return "none";
    case OffloadTarget::Cpu: return "cpu";
    case OffloadTarget::Nvme: return "nvme";
    }
    return "none";
}

namespace detail {

void readOffload(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "offload", errors);
    auto& o = sc.offload;
    const std::vector<std::pair<std::string_view, OffloadTarget>> targets{
        {"none", OffloadTarget::None}, {"cpu", OffloadTarget::Cpu}, {"nvme", OffloadTarget::Nvme}};
    o.optimizer = r.choice<OffloadTarget>("optimizer", targets).value_or(OffloadTarget::None);
    o.params = r.choice<OffloadTarget>("params", targets).value_or(OffloadTarget::None);
    o.activations = r.choice<bool>("activations", {{"none", false}, {"cpu", true}}).value_or(false);
    if (const auto* c = r.child("nvme_bandwidth"); c && !c->is_null())
        o.nvmeBandwidth = r.number("nvme_bandwidth", 1e6, 1e12).value_or(0);
    if (const auto* c = r.child("pcie_bandwidth"); c && !(c->is_string() && c->get<std::string>() == "auto")) {
        if (c->is_string())
            r.error("pcie_bandwidth", shortDump(*c), "must be a number or \"auto\"",
                    "bytes/s one direction, 1e8 to 1e12, or \"auto\" (the GPU's host link at the DMA efficiency)");
        else
            o.pcieBandwidth = r.number("pcie_bandwidth", 1e8, 1e12).value_or(0);
    }
    const bool nvme = o.optimizer == OffloadTarget::Nvme || o.params == OffloadTarget::Nvme;
    if (nvme && o.nvmeBandwidth <= 0)
        r.error("nvme_bandwidth", "null", "required when offload.optimizer or offload.params is \"nvme\"",
                "bytes/s per GPU that its NVMe share reads or writes, 1e6 to 1e12");
    r.finish();
}

void readClusterHost(ObjectReader& r, ClusterConfig& c)
{
    if (const auto* m = r.child("host_memory_bytes"); m && !m->is_null())
        c.hostMemoryBytes = r.bytes("host_memory_bytes", 1e9, 1e15).value_or(0);
    if (const auto* b = r.child("host_memory_bandwidth"); b && !(b->is_string() && b->get<std::string>() == "auto")) {
        if (b->is_string())
            r.error("host_memory_bandwidth", shortDump(*b), "must be a number or \"auto\"",
                    "bytes/s per node, 1e9 to 1e14, or \"auto\" (two sockets of eight DDR5-4800 channels)");
        else
            c.hostMemoryBandwidth = r.number("host_memory_bandwidth", 1e9, 1e14).value_or(0);
    }
}

// Parameter offload needs sharded parameters: ZeRO-Infinity's offload_param is a ZeRO-3 option and
// FSDP's CPUOffload moves the flat parameter shards.
void checkOffload(const Scenario& sc, Errors& errors)
{
    const auto& o = sc.offload;
    if (o.params != OffloadTarget::None && effectiveZeroStage(sc) < 3)
        errors.push_back({"offload.params", std::string(toString(o.params)),
                          "needs sharded parameters (ZeRO-3 / FSDP full shard): DeepSpeed's offload_param is a stage-3 "
                          "option and FSDP's CPUOffload moves parameter shards",
                          "\"none\", or parallel.zero 3 / parallel.fsdp \"full\" or \"hybrid\""});
    if (o.optimizer != OffloadTarget::None && effectiveZeroStage(sc) < 1 && sc.parallel.dp > 1)
        errors.push_back({"offload.optimizer", std::string(toString(o.optimizer)),
                          "ZeRO-Offload partitions the offloaded states over the data-parallel ranks (ZeRO-1 or above)",
                          "\"none\", or parallel.zero 1 to 3 / a parallel.fsdp strategy"});
    if (o.any() && sc.model.kind == ModelKind::Mlp)
        errors.push_back({"offload", "", "the toy model keeps everything on the GPU", "offload.* \"none\""});
}

} // namespace detail
} // namespace napkin::core
