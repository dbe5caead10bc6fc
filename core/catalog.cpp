// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "catalog.h"

#include "jsonreader.h"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <istream>
#include <iterator>
#include <stdexcept>

namespace napkin::core {

namespace {

std::string join(const std::vector<std::string>& ids)
{
    std::string s;
    for (const auto& id : ids)
        s += (s.empty() ? "" : ", ") + id;
    return s;
}

template <typename T>
const T* findById(const std::vector<T>& v, std::string_view id)
{
    for (const auto& x : v)
        if (x.id == id)
            return &x;
    return nullptr;
}

// Parses text and returns the array under `key` of a {"schema": schema, key: [...]} document.
const nlohmann::json* openDocument(const nlohmann::json& doc, const char* file, const char* schema, const char* key,
                                   Errors& errors)
{
    if (doc.is_discarded())
        return nullptr; // the parse error is already reported
    ObjectReader r(doc, file, errors);
    if (!r.isObject())
        return nullptr;
    if (auto s = r.string("schema", true); s && *s != schema)
        r.error("schema", shortDump(*s), "unsupported schema", schema);
    const auto* arr = r.child(key);
    r.finish();
    if (!arr || !arr->is_array()) {
        errors.push_back({std::string(file) + "." + key, arr ? shortDump(*arr) : "", "must be an array", "[...]"});
        return nullptr;
    }
    return arr;
}

nlohmann::json parseText(std::string_view text, const char* file, Errors& errors)
{
    return parseJsonLimited(text, file, errors);
}

std::string readAll(std::istream& in) { return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}; }

double readRate(ObjectReader& r, const char* key)
{
    // null: the device has no such mode; a number: dense FLOP/s.
    const auto* v = r.child(key);
    if (!v || v->is_null())
        return 0;
    if (!v->is_number() || v->get<double>() <= 0 || v->get<double>() > 1e18) {
        r.error(key, shortDump(*v), "must be a positive FLOP/s figure or null", "greater than 0 up to 1e18, or null");
        return 0;
    }
    return v->get<double>();
}

void readLink(ObjectReader& parent, const char* key, std::string& name, double& bw, Errors& errors)
{
    const auto* v = parent.child(key);
    if (!v)
        return;
    ObjectReader r(*v, parent.fieldPath(key), errors);
    if (auto s = r.string("name", true))
        name = *s;
    const auto* b = r.child("bandwidth_bytes_per_second");
    if (b && !b->is_null()) {
        if (b->is_number() && b->get<double>() > 0)
            bw = b->get<double>();
        else
            r.error("bandwidth_bytes_per_second", shortDump(*b), "must be positive or null", "bytes per second");
    }
    r.finish();
}

void readAchievable(ObjectReader& parent, GpuSpec& g, Errors& errors)
{
    if (auto n = parent.integer("sm_count", 0, 100000))
        g.smCount = int(*n);
    if (auto n = parent.integer("compute_capability", 0, 1000))
        g.computeCapability = int(*n);
    const auto* v = parent.child("achievable");
    if (!v)
        return;
    ObjectReader r(*v, parent.fieldPath("achievable"), errors);
    auto positiveOrNull = [&r](const char* key) {
        const auto* x = r.child(key);
        if (!x || x->is_null())
            return 0.0;
        if (!x->is_number() || x->get<double>() <= 0 || x->get<double>() > 1e18) {
            r.error(key, shortDump(*x), "must be positive or null", "greater than 0 up to 1e18, or null");
            return 0.0;
        }
        return x->get<double>();
    };
    g.achievableMatmulFlops = positiveOrNull("matmul_bf16_flops_per_second");
    g.achievableMatmulFp16Flops = positiveOrNull("matmul_fp16_flops_per_second");
    g.achievableMatmulFp8Flops = positiveOrNull("matmul_fp8_flops_per_second");
    g.achievableMatmulFp4Flops = positiveOrNull("matmul_fp4_flops_per_second");
    g.achievableBandwidth = positiveOrNull("bandwidth_bytes_per_second");
    auto shapeOrNull = [&r](const char* key) {
        std::array<double, 3> shape{};
        const auto* x = r.child(key);
        if (!x || x->is_null())
            return shape;
        const bool ok = x->is_array() && x->size() == 3 && std::all_of(x->begin(), x->end(), [](const auto& d) {
                            return d.is_number_integer() && d.template get<long long>() > 0 &&
                                   d.template get<long long>() <= 1048576;
                        });
        if (!ok) {
            r.error(key, shortDump(*x), "must be [m, n, k] or null", "three integers from 1 to 1048576, or null");
            return shape;
        }
        for (std::size_t i = 0; i < 3; ++i)
            shape[i] = double((*x)[i].get<long long>());
        return shape;
    };
    g.achievableMatmulShape = shapeOrNull("matmul_bf16_shape");
    g.achievableMatmulFp16Shape = shapeOrNull("matmul_fp16_shape");
    g.achievableMatmulFp8Shape = shapeOrNull("matmul_fp8_shape");
    g.achievableMatmulFp4Shape = shapeOrNull("matmul_fp4_shape");
    g.sourceAchievable = r.string("source", true).value_or("");
    auto share = [&r](const char* key) {
        const auto* x = r.child(key);
        if (!x || x->is_null())
            return 1.0;
        if (!x->is_number() || !(x->get<double>() > 0) || x->get<double>() > 1) {
            r.error(key, shortDump(*x), "must be a share", "a number above 0 up to 1, or null");
            return 1.0;
        }
        return x->get<double>();
    };
    g.sustainedShare16 = share("matmul_bf16_sustained_share");
    g.sustainedShareFp8 = share("matmul_fp8_sustained_share");
    g.sourceSustained = r.string("sustained_source").value_or("");
    if ((g.sustainedShare16 < 1 || g.sustainedShareFp8 < 1) && g.sourceSustained.empty())
        r.error("sustained_source", "", "is missing", "where the sustained shares were measured");
    r.finish();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A GPU without a published achievable figure reaches the median achieved/spec ratio of those with
// one (maximum-achievable-matmul and STREAM-class results; resources/gpus.json cites each).
void fillAchievable(std::vector<GpuSpec>& gpus)
{
    std::vector<double> gemm, bw;
    for (const auto& g : gpus) {
        const double spec = g.peak(PeakColumn::Bf16) > 0 ? g.peak(PeakColumn::Bf16) : g.peak(PeakColumn::Fp16);
        if (g.achievableMatmulFlops > 0 && spec > 0)
            gemm.push_back(g.achievableMatmulFlops / spec);
        if (g.achievableBandwidth > 0 && g.bandwidthBytesPerSecond > 0)
            bw.push_back(g.achievableBandwidth / g.bandwidthBytesPerSecond);
    }
    const double gemmRatio = median(gemm), bwRatio = median(bw);
    for (auto& g : gpus) {
        g.achievablePublished = g.achievableMatmulFlops > 0 && g.achievableBandwidth > 0;
        std::string note;
        const double spec = g.peak(PeakColumn::Bf16) > 0 ? g.peak(PeakColumn::Bf16) : g.peak(PeakColumn::Fp16);
        if (g.achievableMatmulFlops <= 0 && spec > 0) {
            g.achievableMatmulFlops = gemmRatio * spec;
            note = fmt::format("matmul not published for this GPU: {:.3f} x the dense peak, the median achieved/spec "
                               "ratio of the {} catalogue GPUs that publish one",
                               gemmRatio, gemm.size());
        }
        if (g.achievableBandwidth <= 0 && g.bandwidthBytesPerSecond > 0) {
            g.achievableBandwidth = bwRatio * g.bandwidthBytesPerSecond;
            note +=
                (note.empty() ? "" : "; ") +
                fmt::format("bandwidth not published for this GPU: {:.3f} x the spec, the median achieved/spec ratio "
                            "of the {} catalogue GPUs that publish one",
                            bwRatio, bw.size());
        }
        if (!note.empty())
            g.sourceAchievable = g.sourceAchievable.empty() ? note : g.sourceAchievable + "; " + note;
        if (!g.sourceSustained.empty())
            g.sourceAchievable += "; sustained: " + g.sourceSustained;
    }
}

} // namespace

const GpuSpec* Catalog::gpu(std::string_view id) const { return findById(gpus, id); }

namespace {
const Alias* findAlias(const std::vector<Alias>& list, std::string_view name)
{
    for (const auto& a : list)
        if (a.alias == name)
            return &a;
    return nullptr;
}
} // namespace

const Alias* Catalog::gpuAlias(std::string_view name) const { return findAlias(gpuAliases, name); }
const Alias* Catalog::modelAlias(std::string_view name) const { return findAlias(modelAliases, name); }

std::vector<std::string> Catalog::gpuIdList() const
{
    std::vector<std::string> v;
    for (const auto& g : gpus)
        v.push_back(g.id);
    for (const auto& a : gpuAliases)
        v.push_back(a.alias);
    return v;
}

std::vector<std::string> Catalog::modelIdList() const
{
    std::vector<std::string> v;
    for (const auto& m : models)
        v.push_back(m.id);
    for (const auto& a : modelAliases)
        v.push_back(a.alias);
    return v;
}

void loadAliases(std::string_view text, Catalog& c, Errors& errors)
{
    const auto doc = parseText(text, "aliases.json", errors);
    if (!doc.is_object())
        return;
    ObjectReader top(doc, "", errors);
    if (top.string("schema", true).value_or("") != "napkin.aliases/1")
        top.error("schema", shortDump(doc.value("schema", nlohmann::json())), "unknown schema", "napkin.aliases/1");
    auto section = [&](const char* key, std::vector<Alias>& out, auto known) {
        const auto* arr = top.child(key);
        if (!arr || !arr->is_array()) {
            top.error(key, arr ? shortDump(*arr) : "null", "must be an array", "[{\"alias\": ..., \"id\": ...}]");
            return;
        }
        for (std::size_t i = 0; i < arr->size(); ++i) {
            ObjectReader r((*arr)[i], std::string(key) + "[" + std::to_string(i) + "]", errors);
            Alias a;
            a.alias = r.string("alias", true).value_or("");
            if (const auto* amb = r.child("ambiguous"); amb && amb->is_array()) {
                for (const auto& x : *amb)
                    if (x.is_string() && known(x.get<std::string>()))
                        a.candidates.push_back(x.get<std::string>());
                    else
                        r.error("ambiguous", shortDump(x), "not a catalogue id");
            } else {
                a.id = r.string("id", true).value_or("");
                a.note = r.string("note", true).value_or("");
                if (!known(a.id))
                    r.error("id", a.id, "not a catalogue id");
            }
            if (known(a.alias))
                r.error("alias", a.alias, "is itself a catalogue id");
            r.finish();
            out.push_back(std::move(a));
        }
    };
    section("gpus", c.gpuAliases, [&](const std::string& id) { return c.gpu(id) != nullptr; });
    section("models", c.modelAliases, [&](const std::string& id) { return c.model(id) != nullptr; });
    top.finish();
}
const ModelSpec* Catalog::model(std::string_view id) const { return findById(models, id); }
const PrecisionPlan* Catalog::plan(std::string_view id) const { return findById(plans, id); }
std::string Catalog::gpuIds() const
{
    std::vector<std::string> v;
    for (const auto& g : gpus)
        v.push_back(g.id);
    return join(v);
}
std::string Catalog::modelIds() const
{
    std::vector<std::string> v;
    for (const auto& m : models)
        v.push_back(m.id);
    return join(v);
}
std::string Catalog::planIds() const
{
    std::vector<std::string> v;
    for (const auto& p : plans)
        v.push_back(p.id);
    return join(v);
}

std::vector<GpuSpec> loadGpus(std::string_view text, Errors& errors)
{
    std::vector<GpuSpec> out;
    const auto doc = parseText(text, "gpus.json", errors);
    const auto* arr = openDocument(doc, "gpus.json", "napkin.gpus/1", "gpus", errors);
    if (!arr)
        return out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        ObjectReader r((*arr)[i], "gpus[" + std::to_string(i) + "]", errors);
        if (!r.isObject())
            continue;
        GpuSpec g;
        g.id = r.string("id", true).value_or("");
        g.name = r.string("name", true).value_or("");
        g.vendor = r.string("vendor", true).value_or("");
        g.memoryBytes = r.number("memory_bytes", 0, 1e15, true, true).value_or(0);
        g.bandwidthBytesPerSecond = r.number("bandwidth_bytes_per_second", 0, 1e15, true, true).value_or(0);
        if (const auto* d = r.child("dense_flops_per_second")) {
            ObjectReader f(*d, r.fieldPath("dense_flops_per_second"), errors);
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Fp32)] = readRate(f, "fp32");
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Tf32)] = readRate(f, "tf32");
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Fp16)] = readRate(f, "fp16");
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Bf16)] = readRate(f, "bf16");
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Fp8)] = readRate(f, "fp8");
            g.denseFlopsPerSecond[std::size_t(PeakColumn::Fp4)] = readRate(f, "fp4");
            g.fp64FlopsPerSecond = readRate(f, "fp64");
            f.finish();
        } else {
            r.error("dense_flops_per_second", "", "missing required object",
                    "{fp32, tf32, fp16, bf16, fp8, fp4, fp64}");
        }
        if (const auto* v = r.child("fp64_tensor_flops_per_second"); v && !v->is_number())
            r.error("fp64_tensor_flops_per_second", shortDump(*v), "must be a number");
        g.sparseListed = r.boolean("sparse_listed", true).value_or(false);
        if (const auto* t = r.child("tdp_watts"); t && !t->is_null()) {
            if (t->is_number() && t->get<double>() > 0)
                g.tdpWatts = t->get<double>();
            else
                r.error("tdp_watts", shortDump(*t), "must be positive or null", "watts");
        }
        readAchievable(r, g, errors);
        readLink(r, "interconnect", g.interconnectName, g.interconnectBytesPerSecond, errors);
        readLink(r, "host_link", g.hostLinkName, g.hostLinkBytesPerSecond, errors);
        if (const auto* s = r.child("sources")) {
            ObjectReader sr(*s, r.fieldPath("sources"), errors);
            g.sourceMemory = sr.string("memory", true).value_or("");
            g.sourceBandwidth = sr.string("bandwidth", true).value_or("");
            g.sourceFlops = sr.string("dense_flops", true).value_or("");
            g.sourceTdp = sr.string("tdp", true).value_or("");
            g.sourceInterconnect = sr.string("interconnect", true).value_or("");
            sr.finish();
        } else {
            r.error("sources", "", "every number needs a source",
                    "{memory, bandwidth, dense_flops, tdp, interconnect}");
        }
        if (const auto* u = r.child("unsourced"); u && u->is_array())
            for (const auto& x : *u)
                if (x.is_string())
                    g.unsourced.push_back(x.get<std::string>());
        g.notes = r.string("notes").value_or("");
        r.finish();
        if (!g.id.empty() && findById(out, g.id))
            errors.push_back({r.fieldPath("id"), g.id, "duplicate id", "unique ids"});
        out.push_back(std::move(g));
    }
    fillAchievable(out);
    return out;
}

std::vector<ModelSpec> loadModels(std::string_view text, Errors& errors)
{
    std::vector<ModelSpec> out;
    const auto doc = parseText(text, "models.json", errors);
    const auto* arr = openDocument(doc, "models.json", "napkin.models/1", "models", errors);
    if (!arr)
        return out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        const std::string path = "models[" + std::to_string(i) + "]";
        ObjectReader r((*arr)[i], path, errors);
        if (!r.isObject())
            continue;
        ModelSpec m;
        m.kind = ModelKind::Transformer;
        m.id = r.string("id", true).value_or("");
        m.name = r.string("name", true).value_or("");
        m.source = r.string("source", true).value_or("");
        readTransformerFields(r, m.shape);
        r.finish();
        validateShape(m.shape, path, errors);
        if (!m.id.empty() && findById(out, m.id))
            errors.push_back({r.fieldPath("id"), m.id, "duplicate id", "unique ids"});
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<PrecisionPlan> loadPlans(std::string_view text, Errors& errors)
{
    std::vector<PrecisionPlan> out;
    const auto doc = parseText(text, "plans.json", errors);
    const auto* arr = openDocument(doc, "plans.json", "napkin.plans/1", "plans", errors);
    if (!arr)
        return out;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        ObjectReader r((*arr)[i], "plans[" + std::to_string(i) + "]", errors);
        if (!r.isObject())
            continue;
        PrecisionPlan p;
        p.id = r.string("id", true).value_or("");
        p.name = r.string("name", true).value_or("");
        p.description = r.string("description", true).value_or("");
        p.source = r.string("source", true).value_or("");
        auto dtype = [&](const char* key, bool storage) -> std::optional<DType> {
            const auto s = r.string(key, true);
            if (!s)
                return std::nullopt;
            const auto t = parseDType(*s);
            if (!t || (storage && !info(*t).storable)) {
                r.error(key, shortDump(*s), t ? "is a compute mode, not a storage format" : "unknown dtype",
                        std::string(dtypeList()));
                return std::nullopt;
            }
            return t;
        };
        p.weights = dtype("weights", true).value_or(DType::Bf16);
        p.gradients = dtype("gradients", true).value_or(DType::Bf16);
        if (r.has("master") && r.child("master")->is_string() && r.child("master")->get<std::string>() == "none")
            p.master = std::nullopt;
        else
            p.master = dtype("master", true);
        p.optimizer = dtype("optimizer", true).value_or(DType::Fp32);
        p.activations = dtype("activations", true).value_or(DType::Bf16);
        p.compute = dtype("compute", false).value_or(DType::Bf16);
        r.finish();
        if (!p.id.empty() && findById(out, p.id))
            errors.push_back({r.fieldPath("id"), p.id, "duplicate id", "unique ids"});
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<GpuSpec> loadGpus(std::istream& in, Errors& errors) { return loadGpus(readAll(in), errors); }
std::vector<ModelSpec> loadModels(std::istream& in, Errors& errors) { return loadModels(readAll(in), errors); }
std::vector<PrecisionPlan> loadPlans(std::istream& in, Errors& errors) { return loadPlans(readAll(in), errors); }

const Catalog& builtinCatalog()
{
    static const Catalog catalog = [] {
        Catalog c;
        Errors errors;
        c.gpus = loadGpus(embeddedResource("gpus.json"), errors);
        c.models = loadModels(embeddedResource("models.json"), errors);
        c.plans = loadPlans(embeddedResource("plans.json"), errors);
        loadAliases(embeddedResource("aliases.json"), c, errors);
        if (!errors.empty())
            throw std::logic_error("embedded catalogue is invalid: " + describe(errors.front()));
        return c;
    }();
    return catalog;
}

} // namespace napkin::core
