// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "calibration.h"

#include "jsonreader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cmath>

namespace napkin::core {

namespace {

using nlohmann::json;

std::string num(double v) { return fmt::format("{:.4g}", v); }

// Physically absurd: more than 3x the best GPU of the catalogue for the same quantity
// (docs/calibration-schema.md, Validation).
constexpr double kAbsurdFactor = 3.0;

struct Limit {
    double value = 0;     // the catalogue's best
    std::string holder;   // its GPU's name
    std::string quantity; // "memory bandwidth", "dense bf16 peak", ...
    double cap() const { return kAbsurdFactor * value; }
};

struct Limits {
    Limit bandwidth, hostLink, interconnect, memory, anyPeak;
    std::array<Limit, 6> peak;
};

Limits catalogueLimits(const Catalog& catalog)
{
    Limits l;
    static constexpr const char* columns[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
    l.bandwidth.quantity = "memory bandwidth";
    l.hostLink.quantity = "host-link bandwidth";
    l.interconnect.quantity = "interconnect bandwidth";
    l.memory.quantity = "memory size";
    l.anyPeak.quantity = "dense peak (any dtype)";
    for (std::size_t c = 0; c < l.peak.size(); ++c)
        l.peak[c].quantity = std::string("dense ") + columns[c] + " peak";
    auto raise = [](Limit& lim, double v, const std::string& name) {
        if (v > lim.value) {
            lim.value = v;
            lim.holder = name;
        }
    };
    for (const auto& g : catalog.gpus) {
        raise(l.bandwidth, g.bandwidthBytesPerSecond, g.name);
        raise(l.hostLink, g.hostLinkBytesPerSecond, g.name);
        raise(l.interconnect, g.interconnectBytesPerSecond, g.name);
        raise(l.memory, g.memoryBytes, g.name);
        for (std::size_t c = 0; c < l.peak.size(); ++c) {
            raise(l.peak[c], g.denseFlopsPerSecond[c], g.name);
            raise(l.anyPeak, g.denseFlopsPerSecond[c], g.name);
        }
    }
    // A column no catalogue GPU has (none today) falls back to the best of any column.
    for (auto& p : l.peak)
        if (p.value <= 0)
            p = l.anyPeak;
    return l;
}

// Result ids the planner reads (calibration-schema.md, "Result ids Napkin reads").
// hbm_read is read-only: shown, not the ceiling of ops that read and write (norms, activations, adds).
constexpr std::string_view kBandwidthIds[] = {"hbm_copy", "hbm_scale", "hbm_triad"};
constexpr std::string_view kHostIds[] = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"};

template <std::size_t N>
bool among(std::string_view id, const std::string_view (&ids)[N])
{
    return std::find(std::begin(ids), std::end(ids), id) != std::end(ids);
}

// The limit a result's rate is checked against, and the kind its id requires ("" = any).
const Limit& limitFor(const Limits& l, const std::string& id, const std::string& kind, std::string_view& requiredKind)
{
    requiredKind = {};
    if (among(id, kBandwidthIds) || id == "hbm_read" || id == "memcpy_d2d") {
        requiredKind = "bandwidth";
        return l.bandwidth;
    }
    if (among(id, kHostIds)) {
        requiredKind = "bandwidth";
        return l.hostLink;
    }
    if (id == "fma_fp32") {
        requiredKind = "flops";
        return l.peak[std::size_t(PeakColumn::Fp32)];
    }
    for (const auto& g : calibrationGemmIds())
        if (g.id == id) {
            requiredKind = "flops";
            return l.peak[std::size_t(g.column)];
        }
    // Unknown ids are kept (later probes may measure more), checked against the widest limit of their kind.
    if (kind == "bandwidth")
        return l.bandwidth.value >= l.interconnect.value ? l.bandwidth : l.interconnect;
    return l.anyPeak;
}

// A JSON number (never a quantity string, a boolean or null-as-zero) in [min, max]; max >= 1e300
// means "any finite number".
std::optional<double> strictNumber(ObjectReader& r, std::string_view key, double min, double max, bool required,
                                   bool minExclusive = false)
{
    const std::string allowed =
        max >= 1e300
            ? std::string(minExclusive ? "a finite number greater than " : "a finite number from ") + num(min)
            : (minExclusive ? "greater than " : "") + num(min) + (minExclusive ? " up to " : " to ") + num(max);
    const auto* v = r.child(key);
    if (!v || v->is_null()) {
        if (required)
            r.error(key, "", "missing required number", allowed);
        return std::nullopt;
    }
    if (!v->is_number()) {
        r.error(key, shortDump(*v), "must be a JSON number", allowed);
        return std::nullopt;
    }
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < min || d > max || (minExclusive && d <= min)) {
        r.error(key, num(d), "out of range", allowed);
        return std::nullopt;
    }
    return d;
}

std::optional<std::int64_t> strictInteger(ObjectReader& r, std::string_view key, std::int64_t min, std::int64_t max,
                                          bool required)
{
    const auto* v = r.child(key);
    if (v && !v->is_null() && !v->is_number()) {
        r.error(key, shortDump(*v), "must be a JSON integer",
                "an integer from " + std::to_string(min) + " to " + std::to_string(max));
        return std::nullopt;
    }
    return r.integer(key, min, max, required);
}

// A finite, positive rate no more than 3x the catalogue's best for its quantity.
std::optional<double> rate(ObjectReader& r, std::string_view key, const Limit& limit, bool required = true)
{
    const auto v = strictNumber(r, key, 0, 1e300, required, true);
    if (v && *v > limit.cap()) {
        r.error(key, num(*v),
                "physically absurd: more than 3x the best catalogue " + limit.quantity + " (" + num(limit.value) +
                    ", " + limit.holder + ")",
                "greater than 0 up to " + num(limit.cap()));
        return std::nullopt;
    }
    return v;
}

const json* array(ObjectReader& r, std::string_view key, bool required)
{
    const auto* v = r.child(key);
    if (!v || v->is_null()) {
        if (required)
            r.error(key, "", "missing required array", "[...]");
        return nullptr;
    }
    if (!v->is_array()) {
        r.error(key, shortDump(*v), "must be an array", "[...]");
        return nullptr;
    }
    return v;
}

std::string item(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

CalibrationResult readResult(const json& node, const std::string& path, const Limits& limits, Errors& errors)
{
    CalibrationResult res;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return res;
    res.id = r.string("id", true).value_or("");
    if (res.id.empty() && r.has("id"))
        r.error("id", "\"\"", "must not be empty", "a result id, e.g. hbm_copy or gemm_bf16");
    res.kind = r.choice<std::string>("kind", {{"bandwidth", "bandwidth"}, {"flops", "flops"}}, true).value_or("");
    std::string_view requiredKind;
    const Limit& limit = limitFor(limits, res.id, res.kind, requiredKind);
    if (!requiredKind.empty() && !res.kind.empty() && res.kind != requiredKind)
        r.error("kind", "\"" + res.kind + "\"", "result " + res.id + " is a " + std::string(requiredKind) + " result",
                std::string(requiredKind));
    if (const auto unit = r.string("unit", true); unit && !res.kind.empty()) {
        const std::string want = res.kind == "bandwidth" ? "B/s" : "FLOP/s";
        if (*unit != want)
            r.error("unit", shortDump(*unit), "does not match kind " + res.kind, want);
        res.unit = *unit;
    }
    res.dtype = r.string("dtype").value_or("");
    const auto best = rate(r, "best", limit);
    const auto median = rate(r, "median", limit);
    res.best = best.value_or(0);
    res.median = median.value_or(0);
    // best >= median > 0 (calibration-schema.md "A result").
    if (best && median && *best < *median)
        r.error("best", num(*best), "is below the median " + num(*median), "at least the median");
    if (const auto* s = array(r, "samples", true)) {
        if (s->empty())
            r.error("samples", "[]", "holds no sample", "every timed sample, at least one");
        for (std::size_t i = 0; i < s->size(); ++i) {
            const auto& x = (*s)[i];
            const std::string field = item(r.fieldPath("samples"), i);
            if (!x.is_number() || !std::isfinite(x.get<double>()) || x.get<double>() <= 0) {
                errors.push_back({field, shortDump(x), "must be a finite positive number", "greater than 0"});
                continue;
            }
            const double v = x.get<double>();
            if (best && v > *best) {
                errors.push_back({field, num(v), "is above best " + num(*best), "at most best"});
                continue;
            }
            res.samples.push_back(v);
        }
    }
    if (const auto* size = r.child("size"); size && !size->is_null()) {
        if (!size->is_object())
            r.error("size", shortDump(*size), "must be an object of dimensions", "{\"m\": 8192, ...}");
        else
            for (const auto& [k, v] : size->items())
                if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || v.get<double>() > 1e15)
                    errors.push_back({r.fieldPath("size") + "." + k, shortDump(v), "must be a dimension",
                                      "a number from 0 to 1e15"});
    }
    res.sizeBytes = strictNumber(r, "size_bytes", 0, 1e15, false).value_or(0);
    res.bytesCounted =
        r.choice<std::string>(
             "bytes_counted",
             {{"", ""}, {"read+write", "read+write"}, {"read", "read"}, {"one direction", "one direction"}})
            .value_or("");
    res.verified = r.boolean("verified", true).value_or(false);
    res.maxRelErr = strictNumber(r, "max_rel_err", 0, 1e6, false).value_or(0);
    res.detail = r.string("detail").value_or("");
    r.finish();
    return res;
}

CalibrationPoint readPoint(const json& node, const std::string& path, const Limits& limits, int version, Errors& errors)
{
    CalibrationPoint p;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return p;
    p.series = r.string("series", true).value_or("");
    p.label = r.string("label").value_or("");
    p.dtype = r.string("dtype").value_or("");
    const auto flops = strictNumber(r, "flops", 0, 1e300, true, true);
    const auto bytes = strictNumber(r, "bytes", 0, 1e300, true, true);
    const auto seconds = strictNumber(r, "seconds", 0, 1e300, true, true);
    if (version >= 2) {
        if (const auto* size = r.child("size"); size && !size->is_null()) {
            ObjectReader sr(*size, r.fieldPath("size"), errors);
            p.m = double(strictInteger(sr, "m", 1, 100000000, true).value_or(0));
            p.n = double(strictInteger(sr, "n", 1, 100000000, true).value_or(0));
            p.k = double(strictInteger(sr, "k", 1, 100000000, true).value_or(0));
            sr.finish();
        }
    }
    r.finish();
    // Version 1 wrote the M-sweep's shape only in its label ("M=128"; N = K = 4096, calibration-schema.md).
    if (p.m == 0 && p.series == "gemm_m_sweep" && p.label.rfind("M=", 0) == 0) {
        char* end = nullptr;
        const double m = std::strtod(p.label.c_str() + 2, &end);
        if (end && *end == '\0' && m >= 1) {
            p.m = m;
            p.n = p.k = 4096;
        }
    }
    if (flops && seconds && *flops / *seconds > limits.anyPeak.cap())
        errors.push_back({path, num(*flops / *seconds) + " FLOP/s",
                          "physically absurd: flops / seconds is more than 3x the best catalogue dense peak (" +
                              num(limits.anyPeak.value) + ", " + limits.anyPeak.holder + ")",
                          "up to " + num(limits.anyPeak.cap()) + " FLOP/s"});
    if (flops && bytes && !std::isfinite(*flops / *bytes))
        errors.push_back({path, num(*flops) + " FLOP / " + num(*bytes) + " bytes",
                          "intensity flops / bytes is not finite", "a finite FLOP/byte"});
    // The byte rate is not capped: the small sizes of a sweep run from L2, above HBM bandwidth.
    p.flops = flops.value_or(0);
    p.bytes = bytes.value_or(0);
    p.seconds = seconds.value_or(0);
    return p;
}

CalibrationConditions readConditions(const json& node, const std::string& path, Errors& errors)
{
    CalibrationConditions c;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return c;
    c.step = r.string("step", true).value_or("");
    c.smClockMhz = int(strictInteger(r, "sm_clock_mhz", 0, 100000, false).value_or(0));
    c.memoryClockMhz = int(strictInteger(r, "memory_clock_mhz", 0, 100000, false).value_or(0));
    c.powerWatts = strictNumber(r, "power_w", 0, 100000, false).value_or(0);
    c.powerAveraged = r.boolean("power_averaged").value_or(false);
    c.powerLimitWatts = strictNumber(r, "power_limit_w", 0, 100000, false).value_or(0);
    c.temperatureC = int(strictInteger(r, "temperature_c", 0, 200, false).value_or(0));
    if (const auto* t = array(r, "throttle", false))
        for (std::size_t i = 0; i < t->size(); ++i) {
            if ((*t)[i].is_string())
                c.throttle.push_back((*t)[i].get<std::string>());
            else
                errors.push_back({item(r.fieldPath("throttle"), i), shortDump((*t)[i]), "must be a string",
                                  "a clock-limiting reason, e.g. sw_power_cap"});
        }
    r.finish();
    return c;
}

CalibrationDevice readDevice(const json& node, const std::string& path, const Limits& limits, int version,
                             Errors& errors)
{
    CalibrationDevice d;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return d;
    d.index = int(strictInteger(r, "index", 0, 4095, true).value_or(0));
    d.name = r.string("name", true).value_or("");
    if (d.name.empty() && r.has("name"))
        r.error("name", "\"\"", "must not be empty", "the CUDA device name");
    d.uuid = r.string("uuid").value_or("");
    d.computeCapability = r.string("compute_capability").value_or("");
    d.sms = int(strictInteger(r, "sms", 1, 100000, false).value_or(0));
    d.memoryBytes = rate(r, "memory_bytes", limits.memory).value_or(0);
    d.l2Bytes = strictNumber(r, "l2_bytes", 0, 1e12, false).value_or(0);
    if (const auto* c = r.child("clocks_mhz"); c && !c->is_null()) {
        ObjectReader cr(*c, r.fieldPath("clocks_mhz"), errors);
        d.smClockMhz = int(strictInteger(cr, "sm_max", 0, 100000, false).value_or(0));
        d.memoryClockMhz = int(strictInteger(cr, "memory_max", 0, 100000, false).value_or(0));
        cr.finish();
    }
    if (const auto* a = array(r, "results", true))
        for (std::size_t i = 0; i < a->size(); ++i)
            d.results.push_back(readResult((*a)[i], item(r.fieldPath("results"), i), limits, errors));
    if (const auto* a = array(r, "points", false))
        for (std::size_t i = 0; i < a->size(); ++i)
            d.points.push_back(readPoint((*a)[i], item(r.fieldPath("points"), i), limits, version, errors));
    if (version >= 2)
        if (const auto* a = array(r, "conditions", false))
            for (std::size_t i = 0; i < a->size(); ++i)
                d.conditions.push_back(readConditions((*a)[i], item(r.fieldPath("conditions"), i), errors));
    if (const auto* a = array(r, "skipped", false))
        for (std::size_t i = 0; i < a->size(); ++i) {
            ObjectReader sr((*a)[i], item(r.fieldPath("skipped"), i), errors);
            CalibrationSkip s;
            s.id = sr.string("id", true).value_or("");
            s.reason = sr.string("reason", true).value_or("");
            sr.finish();
            d.skipped.push_back(std::move(s));
        }
    r.finish();
    return d;
}

CalibrationLink readLink(const json& node, const std::string& path, const Limits& limits, Errors& errors)
{
    CalibrationLink link;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return link;
    link.id = r.string("id", true).value_or("");
    link.ranks = int(strictInteger(r, "ranks", 1, 10000000, true).value_or(0));
    if (const auto* a = array(r, "points", true))
        for (std::size_t i = 0; i < a->size(); ++i) {
            ObjectReader pr((*a)[i], item(r.fieldPath("points"), i), errors);
            CalibrationLinkPoint p;
            p.bytes = strictNumber(pr, "bytes", 0, 1e300, true, true).value_or(0);
            p.seconds = strictNumber(pr, "seconds", 0, 1e300, true, true).value_or(0);
            p.algbw = rate(pr, "algbw", limits.interconnect).value_or(0);
            p.busbw = rate(pr, "busbw", limits.interconnect).value_or(0);
            pr.finish();
            link.points.push_back(p);
        }
    r.finish();
    return link;
}

void readLibraries(const json& node, Errors& errors)
{
    // Library names are data (cublaslt, nccl, nvml, ...); each entry has a fixed shape.
    if (!node.is_object()) {
        errors.push_back({"libraries", shortDump(node), "must be an object", "{\"cublaslt\": {...}, \"nccl\": {...}}"});
        return;
    }
    for (const auto& [name, lib] : node.items()) {
        ObjectReader r(lib, "libraries." + name, errors);
        r.boolean("loaded", true);
        strictInteger(r, "version", 0, 1000000000, false);
        r.string("error");
        r.finish();
    }
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (auto& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string> tokens(std::string_view name)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : name) {
        if (c == ' ' || c == '-' || c == '_' || c == '(' || c == ')' || c == '/' || c == ',') {
            if (!cur.empty())
                out.push_back(lower(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    if (!cur.empty())
        out.push_back(lower(cur));
    return out;
}

} // namespace

const std::vector<CalibrationGemmId>& calibrationGemmIds()
{
    static const std::vector<CalibrationGemmId> ids{{"gemm_fp32", "fp32", PeakColumn::Fp32},
                                                    {"gemm_tf32", "tf32", PeakColumn::Tf32},
                                                    {"gemm_fp16", "fp16", PeakColumn::Fp16},
                                                    {"gemm_bf16", "bf16", PeakColumn::Bf16},
                                                    {"gemm_fp8_e4m3", "fp8_e4m3", PeakColumn::Fp8}};
    return ids;
}

std::string_view calibrationGemmDtype(PeakColumn column)
{
    for (const auto& g : calibrationGemmIds())
        if (g.column == column)
            return g.dtype;
    return {};
}

const CalibrationResult* CalibrationDevice::result(std::string_view id) const
{
    for (const auto& r : results)
        if (r.id == id)
            return &r;
    return nullptr;
}

std::string Calibration::citation() const { return "measured by napkin-probe (" + path + ")"; }

std::string Calibration::peakSource(PeakColumn c) const
{
    const auto& id = peakResult[std::size_t(c)];
    if (!id.empty()) {
        const auto* r = measuredDevice().result(id);
        std::string s =
            citation() + ": " + id + ", best of " + std::to_string(r ? r->samples.size() : 0) + " samples, verified";
        if (r && !r->detail.empty())
            s += " (" + r->detail + ")";
        return s;
    }
    if (spec)
        return "spec (not measured in " + path + "): " + spec->origin + ": " + spec->sourceFlops;
    return "spec: unknown (not measured in " + path + ", device not in the catalogue)";
}

std::string Calibration::bandwidthSource() const
{
    if (bandwidthMeasured()) {
        const auto* r = measuredDevice().result(bandwidthResult);
        return citation() + ": " + bandwidthResult + " (best of hbm_copy/scale/triad/read), best of " +
               std::to_string(r ? r->samples.size() : 0) + " samples, bytes read + written";
    }
    if (spec)
        return "spec (not measured in " + path + "): " + spec->origin + ": " + spec->sourceBandwidth;
    return "spec: unknown (not measured in " + path + ", device not in the catalogue)";
}

const std::vector<DeviceNamePattern>& deviceNamePatterns()
{
    // cudaDeviceProp::name as the driver reports it, e.g. "NVIDIA H100 80GB HBM3" (SXM5),
    // "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200", "NVIDIA A100-SXM4-80GB",
    // "NVIDIA A100 80GB PCIe", "Tesla V100-SXM2-32GB". Specific patterns first.
    static const std::vector<DeviceNamePattern> table = {
        {{"H100", "NVL", ""}, "", "h100-nvl"},
        {{"H100", "PCIe", ""}, "", "h100-pcie"},
        {{"H100", "", ""}, "", "h100-sxm"},
        {{"H200", "", ""}, "NVL", "h200-sxm"}, // the H200 NVL is another part (600 W)
        {{"GB200", "", ""}, "", "gb200"},
        {{"B200", "", ""}, "", "b200"},
        {{"A100", "80GB", "PCIe"}, "", "a100-pcie-80gb"},
        {{"A100", "80GB", ""}, "", "a100-sxm4-80gb"},
        {{"A100", "40GB", ""}, "PCIe", "a100-sxm4-40gb"},
        {{"V100", "32GB", ""}, "PCIe", "v100-sxm2-32gb"},
        {{"L40S", "", ""}, "", "l40s"},
        {{"L4", "", ""}, "", "l4"},
        {{"A10", "", ""}, "", "a10"},
        {{"RTX", "3090", ""}, "", "rtx-3090"},
        {{"RTX", "4090", ""}, "", "rtx-4090"},
        {{"RTX", "5090", ""}, "", "rtx-5090"},
    };
    return table;
}

std::string_view catalogGpuForDevice(std::string_view deviceName)
{
    const auto have = tokens(deviceName);
    auto contains = [&](std::string_view t) { return std::find(have.begin(), have.end(), lower(t)) != have.end(); };
    for (const auto& p : deviceNamePatterns()) {
        bool all = true;
        for (auto t : p.tokens)
            if (!t.empty() && !contains(t))
                all = false;
        if (all && (p.without.empty() || !contains(p.without)))
            return p.gpuId;
    }
    return {};
}

std::optional<CalibrationProfile> loadCalibrationProfile(std::string_view text, const Catalog& catalog, Errors& errors)
{
    const std::size_t before = errors.size();
    if (std::all_of(text.begin(), text.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
        errors.push_back({"profile", "", "is empty", "a napkin.calibration/1 or /2 JSON document"});
        return std::nullopt;
    }
    const auto doc = parseJsonLimited(text, "profile", errors);
    if (doc.is_discarded()) {
        for (std::size_t i = before; i < errors.size(); ++i)
            errors[i].allowed = "a napkin.calibration/1 or /2 JSON document";
        return std::nullopt;
    }
    if (!doc.is_object()) {
        errors.push_back({"profile", shortDump(doc), "must be a JSON object", "a napkin.calibration/1 or /2 document"});
        return std::nullopt;
    }
    ObjectReader top(doc, "", errors);
    CalibrationProfile p;
    // A different document (a scenario, another schema version) is one error, not one per key.
    const auto schema = top.string("schema", true);
    if (!schema)
        return std::nullopt;
    if (*schema != kCalibrationSchema && *schema != kCalibrationSchema2) {
        top.error("schema", shortDump(*schema), "unsupported schema",
                  std::string(kCalibrationSchema) + " or " + std::string(kCalibrationSchema2));
        return std::nullopt;
    }
    p.schemaVersion = *schema == kCalibrationSchema2 ? 2 : 1;
    const auto status = top.string("status", true);
    const auto message = top.string("message", true);
    if (!status || !message)
        return std::nullopt;
    p.status = *status;
    p.message = *message;
    if (p.status != "ok") {
        static constexpr std::string_view known[] = {"no_driver",   "driver_too_old",  "no_device", "no_kernel_image",
                                                     "device_busy", "missing_library", "error"};
        top.error("status", shortDump(p.status),
                  (among(p.status, known) ? "the probe did not measure (" : "unknown status (") + p.status +
                      "): " + p.message,
                  "ok (only a successful run can be used)");
        return std::nullopt;
    }
    const Limits limits = catalogueLimits(catalog);
    if (const auto* probe = top.child("probe"); probe && !probe->is_null()) {
        ObjectReader r(*probe, "probe", errors);
        p.probeVersion = r.string("version").value_or("");
        p.probeMode = r.choice<std::string>("mode", {{"quick", "quick"}, {"full", "full"}}).value_or("");
        p.startedUtc = r.string("started_utc").value_or("");
        p.elapsedSeconds = strictNumber(r, "elapsed_seconds", 0, 1e7, false).value_or(0);
        r.finish();
    }
    p.runtimeVersion = strictInteger(top, "runtime_version", 0, 1000000000, false).value_or(0);
    p.driverVersion = strictInteger(top, "driver_version", 0, 1000000000, false).value_or(0);
    if (const auto* libs = top.child("libraries"); libs && !libs->is_null())
        readLibraries(*libs, errors);
    if (const auto* a = array(top, "devices", true)) {
        if (a->empty())
            top.error("devices", "[]", "holds no device", "at least one measured device when status is ok");
        for (std::size_t i = 0; i < a->size(); ++i)
            p.devices.push_back(readDevice((*a)[i], item("devices", i), limits, p.schemaVersion, errors));
    }
    if (const auto* a = array(top, "links", false))
        for (std::size_t i = 0; i < a->size(); ++i)
            p.links.push_back(readLink((*a)[i], item("links", i), limits, errors));
    top.finish();
    if (errors.size() != before)
        return std::nullopt;
    return p;
}

GpuSpec calibratedGpu(const CalibrationProfile& profile, const std::string& path, const Catalog& catalog)
{
    auto cal = std::make_shared<Calibration>();
    cal->path = path;
    cal->profile = profile;
    cal->device = 0;
    const CalibrationDevice& dev = cal->measuredDevice();
    const std::string_view matched = catalogGpuForDevice(dev.name);
    const GpuSpec* spec = matched.empty() ? nullptr : catalog.gpu(matched);
    GpuSpec g;
    if (spec) {
        g = *spec;
        cal->spec = *spec;
        // Capacity stays the catalogue's (80 GB for an H100 80GB); the driver reports total memory in
        // bytes (about 85e9 there). A difference beyond 10% is another part.
        if (std::fabs(dev.memoryBytes - spec->memoryBytes) > 0.10 * spec->memoryBytes)
            cal->warnings.push_back({"calibration_memory_differs",
                                     path + ": the measured device has " + num(dev.memoryBytes / 1e9) + " GB but the " +
                                         spec->name + " has " + num(spec->memoryBytes / 1e9) +
                                         " GB: the profile may be from another model"});
    } else {
        g.vendor = "NVIDIA";
        g.memoryBytes = dev.memoryBytes;
        g.sourceMemory = "cudaDeviceProp::totalGlobalMem in " + path;
        cal->warnings.push_back(
            {"calibration_unknown_device",
             path + ": device \"" + dev.name + "\" matches no catalogue GPU: values it did not measure are unknown"});
    }
    g.id = std::string(kCalibrationPrefix) + path;
    g.name = dev.name + " (measured)";
    g.origin = "measured";
    // Memory bandwidth: the best verified of the four STREAM-style kernels (BabelStream counts the
    // bytes read + written).
    for (auto id : kBandwidthIds)
        if (const auto* r = dev.result(id);
            r && r->verified && r->best > 0 && (cal->bandwidthResult.empty() || r->best > g.bandwidthBytesPerSecond)) {
            cal->bandwidthResult = std::string(id);
            g.bandwidthBytesPerSecond = r->best;
        }
    if (!cal->bandwidthResult.empty())
        g.sourceBandwidth = cal->citation() + ": " + cal->bandwidthResult;
    for (const auto& gemm : calibrationGemmIds())
        if (const auto* r = dev.result(gemm.id); r && r->verified && r->best > 0) {
            g.denseFlopsPerSecond[std::size_t(gemm.column)] = r->best;
            cal->peakResult[std::size_t(gemm.column)] = std::string(gemm.id);
        }
    if (const auto* r = dev.result("h2d_pinned"); r && r->verified && r->best > 0) {
        g.hostLinkBytesPerSecond = r->best;
        cal->hostLinkResult = "h2d_pinned";
    }
    // A clock slowed by heat or a hardware signal makes every later figure low (sw_power_cap is the
    // board holding its power limit under a sustained GEMM: the rate training sees, not a fault).
    for (const auto& c : dev.conditions)
        for (const auto& why : c.throttle)
            if (why.find("thermal") != std::string::npos || why == "hw_slowdown" || why == "hw_power_brake_slowdown") {
                cal->warnings.push_back(
                    {"calibration_throttled",
                     fmt::format("{}: the GPU clock was slowed ({}, SM {} MHz, {} C) during {}: its measured rates "
                                 "are low; cool the GPU and measure again",
                                 path, why, c.smClockMhz, c.temperatureC, c.step)});
                break;
            }
    g.calibration = std::move(cal);
    return g;
}

} // namespace napkin::core
