// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// A loaded calibration profile as people read it: the measured-vs-spec rows, the board's conditions
// during the GEMMs, and hardware.calibration of the plan JSON.
#include "calibration.h"

#include <fmt/format.h>

#include <algorithm>

namespace napkin::core {

std::vector<CalibrationRow> calibrationRows(const Calibration& cal)
{
    const CalibrationDevice& dev = cal.measuredDevice();
    const GpuSpec* spec = cal.spec ? &*cal.spec : nullptr;
    auto measured = [&](std::string_view id) {
        const auto* r = dev.result(id);
        return r && r->verified ? r->best : 0.0;
    };
    std::vector<CalibrationRow> rows;
    {
        CalibrationRow r{"bandwidth",
                         "memory bandwidth",
                         "B/s",
                         cal.bandwidthResult,
                         0,
                         spec ? spec->bandwidthBytesPerSecond : 0,
                         cal.bandwidthMeasured()};
        r.measured = cal.bandwidthMeasured() ? measured(cal.bandwidthResult) : 0;
        rows.push_back(r);
    }
    static constexpr std::pair<PeakColumn, const char*> columns[] = {
        {PeakColumn::Fp32, "fp32"}, {PeakColumn::Tf32, "tf32"}, {PeakColumn::Fp16, "fp16"},
        {PeakColumn::Bf16, "bf16"}, {PeakColumn::Fp8, "fp8"},   {PeakColumn::Fp4, "fp4"}};
    for (const auto& [column, name] : columns) {
        const std::size_t c = std::size_t(column);
        std::string id;
        for (const auto& g : calibrationGemmIds())
            if (g.column == column)
                id = std::string(g.id);
        CalibrationRow r{name,
                         std::string("dense ") + name + " peak",
                         "FLOP/s",
                         cal.peakResult[c],
                         cal.peakMeasured(column) ? measured(cal.peakResult[c]) : 0,
                         spec ? spec->peak(column) : 0,
                         cal.peakMeasured(column)};
        if (r.result.empty())
            r.result = id.empty() ? "" : id; // named even when not measured, for the table
        rows.push_back(r);
    }
    rows.push_back({"fma_fp32", "CUDA-core fp32 (FMA)", "FLOP/s", "fma_fp32", measured("fma_fp32"),
                    spec ? spec->peak(PeakColumn::Fp32) : 0, false});
    rows.push_back({"memcpy_d2d", "device-to-device copy", "B/s", "memcpy_d2d", measured("memcpy_d2d"),
                    spec ? spec->bandwidthBytesPerSecond : 0, false});
    rows.push_back({"host_link", "host to device (pinned)", "B/s", "h2d_pinned", measured("h2d_pinned"),
                    spec ? spec->hostLinkBytesPerSecond : 0, !cal.hostLinkResult.empty()});
    return rows;
}

std::string calibrationConditionsSummary(const Calibration& cal)
{
    int lo = 0, hi = 0, temp = 0;
    double watts = 0;
    std::vector<std::string> why;
    for (const auto& c : cal.measuredDevice().conditions) {
        if (c.step.rfind("gemm", 0) != 0 || c.smClockMhz <= 0)
            continue;
        lo = lo == 0 ? c.smClockMhz : std::min(lo, c.smClockMhz);
        hi = std::max(hi, c.smClockMhz);
        watts = std::max(watts, c.powerWatts);
        temp = std::max(temp, c.temperatureC);
        for (const auto& w : c.throttle)
            if (std::find(why.begin(), why.end(), w) == why.end())
                why.push_back(w);
    }
    if (hi == 0)
        return "";
    std::string reasons;
    for (const auto& w : why)
        reasons += (reasons.empty() ? "" : ", ") + w;
    return fmt::format("During the GEMMs: SM clock {}{} MHz, up to {:.0f} W and {} C; clock limited by {}", lo,
                       lo == hi ? std::string() : fmt::format("-{}", hi), watts, temp,
                       reasons.empty() ? std::string("nothing") : reasons);
}

nlohmann::json calibrationToJson(const Calibration& cal)
{
    using nlohmann::json;
    const CalibrationDevice& dev = cal.measuredDevice();
    auto orNull = [](double v) { return v > 0 ? json(v) : json(nullptr); };
    json rows = json::array();
    for (const auto& r : calibrationRows(cal))
        rows.push_back({{"key", r.key},
                        {"quantity", r.quantity},
                        {"unit", r.unit},
                        {"result", r.result},
                        {"measured", orNull(r.measured)},
                        {"spec", orNull(r.spec)},
                        {"used", r.planned ? "measured" : "spec"},
                        {"achieved", orNull(r.achieved())}});
    json results = json::array();
    for (const auto& r : dev.results)
        results.push_back({{"id", r.id},
                           {"kind", r.kind},
                           {"best", r.best},
                           {"median", r.median},
                           {"samples", r.samples.size()},
                           {"verified", r.verified}});
    json points = json::array();
    for (const auto& p : dev.points) {
        json j{{"series", p.series},
               {"label", p.label},
               {"intensity", p.intensity()},
               {"flops_per_second", p.flopsPerSecond()}};
        if (p.m > 0) {
            j["dtype"] = p.dtype;
            j["size"] = {{"m", p.m}, {"n", p.n}, {"k", p.k}};
        }
        points.push_back(j);
    }
    json conditions = json::array();
    for (const auto& c : dev.conditions)
        conditions.push_back({{"step", c.step},
                              {"sm_clock_mhz", c.smClockMhz},
                              {"power_w", c.powerWatts},
                              {"temperature_c", c.temperatureC},
                              {"throttle", c.throttle}});
    return {{"profile", cal.path},
            {"citation", cal.citation()},
            {"device", dev.name},
            {"uuid", dev.uuid},
            {"compute_capability", dev.computeCapability},
            {"memory_bytes", dev.memoryBytes},
            {"matched_gpu", cal.spec ? json(cal.spec->id) : json(nullptr)},
            {"probe_version", cal.profile.probeVersion},
            {"probe_mode", cal.profile.probeMode},
            {"started_utc", cal.profile.startedUtc},
            {"rows", rows},
            {"results", results},
            {"points", points},
            {"conditions", conditions}};
}

} // namespace napkin::core
