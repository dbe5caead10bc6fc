// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lecture.h"

#include "activations.h"
#include "catalog.h"
#include "dtypeexplain.h"
#include "estimate.h"
#include "fit.h"
#include "format.h"
#include "jsonreader.h"
#include "roofline.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace napkin::core {

namespace {

constexpr std::size_t kMaxSteps = 200;
constexpr std::size_t kMaxText = 4000;

const std::vector<std::pair<std::string_view, LectureFocus>>& focusOptions()
{
    static const std::vector<std::pair<std::string_view, LectureFocus>> o = {
        {"ledger", LectureFocus::Ledger},         {"summary", LectureFocus::Summary},
        {"compute", LectureFocus::Summary},       {"roofline", LectureFocus::Roofline},
        {"derivation", LectureFocus::Derivation}, {"dtype", LectureFocus::Dtype},
        {"checkpoint", LectureFocus::Checkpoint}};
    return o;
}

std::string indexed(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

bool validId(const std::string& s)
{
    return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '=' ||
               (c >= 'A' && c <= 'Z');
    });
}

// A string field of bounded length.
std::string text(ObjectReader& r, const char* key, bool required)
{
    auto s = r.string(key, required);
    if (s && s->size() > kMaxText) {
        r.error(key, shortDump(*s), "too long", "at most " + std::to_string(kMaxText) + " characters");
        return {};
    }
    if (s && required && s->empty())
        r.error(key, "\"\"", "must not be empty", "a non-empty string");
    return s.value_or("");
}

std::optional<DType> dtypeField(ObjectReader& r, const char* key, bool required)
{
    const auto s = r.string(key, required);
    if (!s)
        return std::nullopt;
    const auto t = parseDType(*s);
    if (!t || !info(*t).storable) {
        r.error(key, shortDump(*s), "unknown storage dtype",
                "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4, mxfp4");
        return std::nullopt;
    }
    return t;
}

void readTensor(const nlohmann::json& node, const std::string& path, LectureStep& step, Errors& errors)
{
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return;
    LectureTensor t;
    const auto* shape = r.child("shape");
    if (!shape || !shape->is_array() || shape->empty() || shape->size() > 8) {
        r.error("shape", shape ? shortDump(*shape) : "", "must be an array of 1 to 8 dimensions", "[2, 128, 8, 64]");
    } else {
        for (std::size_t i = 0; i < shape->size(); ++i) {
            const auto& d = (*shape)[i];
            if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() > (1LL << 31)) {
                errors.push_back(
                    {indexed(r.fieldPath("shape"), i), shortDump(d), "must be a positive integer", "1 to 2147483648"});
                return;
            }
            t.shape.push_back(d.get<std::int64_t>());
        }
    }
    if (auto d = dtypeField(r, "dtype", true))
        t.dtype = *d;
    r.finish();
    step.tensor = t;
}

void readOps(const nlohmann::json& node, const std::string& path, LectureStep& step, Errors& errors)
{
    if (!node.is_array() || node.size() > 32) {
        errors.push_back(
            {path, shortDump(node), "must be an array of at most 32 ops", "[{\"id\": ..., \"op\": \"gemm\", ...}]"});
        return;
    }
    std::set<std::string> ids;
    for (std::size_t i = 0; i < node.size(); ++i) {
        ObjectReader r(node[i], indexed(path, i), errors);
        if (!r.isObject())
            continue;
        LectureOp op;
        op.id = text(r, "id", true);
        if (!op.id.empty() && (!validId(op.id) || !ids.insert(op.id).second))
            r.error("id", shortDump(op.id), validId(op.id) ? "duplicate op id" : "not a valid id",
                    "a unique id of letters, digits, '-', '_', '.', '='");
        op.kind =
            r.choice<std::string>(
                 "op", {{"gemm", "gemm"}, {"relu", "relu"}, {"gelu", "gelu"}, {"dot", "dot"}, {"matvec", "matvec"}},
                 true)
                .value_or("");
        constexpr double kMaxDim = 1e7;
        if (op.kind == "gemm") {
            op.m = r.number("m", 1, kMaxDim, true).value_or(0);
            op.k = r.number("k", 1, kMaxDim, true).value_or(0);
            op.n = r.number("n", 1, kMaxDim, true).value_or(0);
        } else {
            op.n = r.number("n", 1, 1e12, true).value_or(0);
        }
        if (auto d = dtypeField(r, "dtype", false))
            op.dtype = *d;
        op.seconds = r.number("seconds", 0, 1e6, false, true);
        r.finish();
        step.ops.push_back(op);
    }
}

void readExpect(const nlohmann::json& node, const std::string& path, LectureStep& step, Errors& errors)
{
    if (!node.is_array() || node.size() > 64) {
        errors.push_back({path, shortDump(node), "must be an array of at most 64 claims",
                          "[{\"quantity\": \"time.days\", \"value\": 143.9, \"tolerance\": 0.001}]"});
        return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
        ObjectReader r(node[i], indexed(path, i), errors);
        if (!r.isObject())
            continue;
        LectureExpect e;
        e.quantity = text(r, "quantity", true);
        e.value = r.number("value", -1e300, 1e300, true).value_or(0);
        e.tolerance = r.number("tolerance", 0, 1).value_or(1e-3);
        e.label = text(r, "label", false);
        r.finish();
        step.expect.push_back(e);
    }
}

LectureStep readStep(const nlohmann::json& node, const std::string& path, Errors& errors)
{
    LectureStep step;
    ObjectReader r(node, path, errors);
    if (!r.isObject())
        return step;
    step.id = text(r, "id", true);
    if (!step.id.empty() && !validId(step.id))
        r.error("id", shortDump(step.id), "not a valid id", "letters, digits, '-', '_', '.', '=' (at most 64)");
    step.title = text(r, "title", true);
    step.narration = text(r, "narration", true);
    step.hint = text(r, "hint", false);
    step.reset = r.boolean("reset").value_or(false);
    step.scenario = nlohmann::json::object();
    if (const auto* s = r.child("scenario")) {
        if (s->is_object())
            step.scenario = *s;
        else
            r.error("scenario", shortDump(*s), "must be an object",
                    "scenario-file keys, e.g. {\"cluster\": {\"gpus\": 8}}");
    }
    if (const auto* s = r.child("set")) {
        if (!s->is_array() || s->size() > 64)
            r.error("set", shortDump(*s), "must be an array of PATH=VALUE strings", "[\"cluster.gpus=8\"]");
        else
            for (std::size_t i = 0; i < s->size(); ++i) {
                if ((*s)[i].is_string())
                    step.sets.push_back((*s)[i].get<std::string>());
                else
                    errors.push_back(
                        {indexed(r.fieldPath("set"), i), shortDump((*s)[i]), "must be a string", "PATH=VALUE"});
            }
    }
    step.focus = r.choice<LectureFocus>("focus", focusOptions(), true).value_or(LectureFocus::Summary);
    step.derivation = text(r, "derivation", false);
    if (const auto* e = r.child("expect"))
        readExpect(*e, r.fieldPath("expect"), step, errors);
    step.dtypeValue = r.number("dtype", -1e300, 1e300);
    if (const auto* t = r.child("tensor"))
        readTensor(*t, r.fieldPath("tensor"), step, errors);
    if (const auto* o = r.child("ops"))
        readOps(*o, r.fieldPath("ops"), step, errors);
    step.rooflineOverlay = r.boolean("roofline_overlay").value_or(false);
    step.calibration = r.boolean("calibration").value_or(false);
    step.fallback = text(r, "fallback", false);
    r.finish();
    if (step.focus == LectureFocus::Dtype && !step.dtypeValue)
        errors.push_back(
            {path + ".dtype", "", "focus \"dtype\" needs a value for the dtype explorer", "a number, e.g. 1e-8"});
    return step;
}

const nlohmann::json* jsonPath(const nlohmann::json& root, std::string_view path)
{
    const nlohmann::json* node = &root;
    std::size_t start = 0;
    while (start <= path.size()) {
        const auto dot = path.find('.', start);
        const std::string part(
            path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (part.empty() || !node->is_object())
            return nullptr;
        const auto it = node->find(part);
        if (it == node->end())
            return nullptr;
        node = &*it;
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    return node;
}

std::optional<double> numberAt(const nlohmann::json& root, std::string_view path)
{
    const auto* v = jsonPath(root, path);
    if (!v)
        return std::nullopt;
    if (v->is_boolean())
        return v->get<bool>() ? 1.0 : 0.0;
    if (v->is_number())
        return v->get<double>();
    return std::nullopt;
}

OpCost opCost(const LectureOp& op)
{
    const double e = bytesPerValue(op.dtype);
    if (op.kind == "gemm")
        return gemmCost(op.m, op.k, op.n, e);
    if (op.kind == "relu")
        return reluCost(op.n, e);
    if (op.kind == "gelu")
        return geluCost(op.n, e);
    if (op.kind == "dot")
        return dotCost(op.n, e);
    return matvecCost(op.n, e);
}

} // namespace

const char* toString(LectureFocus f)
{
    switch (f) {
    case LectureFocus::Ledger: return "ledger";
    case LectureFocus::Summary: return "summary";
    case LectureFocus::Roofline: return "roofline";
    case LectureFocus::Derivation: return "derivation";
    case LectureFocus::Dtype: return "dtype";
    case LectureFocus::Checkpoint: return "checkpoint";
    }
    return "";
}

ScenarioCheckpointCurve checkpointCurveFor(const Scenario& sc)
{
    ScenarioCheckpointCurve c;
    const double e = bytesPerValue(sc.precision.activations), b = double(sc.training.microBatch);
    if (sc.model.kind == ModelKind::Mlp) {
        // CS336 lecture 2's chain: every boundary and every layer holds one B × D activation.
        c.layers = sc.model.mlp.layers;
        c.boundaryBytes = c.layerBytes = b * double(sc.model.mlp.width) * e;
    } else {
        const auto& m = sc.model.shape;
        const double s = double(sc.training.seqLen);
        c.layers = m.layers;
        c.boundaryBytes = layerActivations(m, s, b, e, Recompute::Full, sc.training.flashAttention).total;
        c.layerBytes = layerActivations(m, s, b, e, Recompute::None, sc.training.flashAttention).total;
    }
    const auto curve = checkpointCurve(c.layers, c.boundaryBytes, c.layerBytes);
    c.bytes = curve.bytes;
    c.bestK = curve.bestK;
    c.bestBytes = curve.bestBytes;
    return c;
}

std::optional<double> lectureQuantity(const LectureStep& step, const Scenario& sc, const Plan& plan, std::string_view q,
                                      std::string* why)
{
    auto fail = [&](std::string w) -> std::optional<double> {
        if (why)
            *why = std::move(w);
        return std::nullopt;
    };
    auto starts = [&](std::string_view prefix) { return q.substr(0, prefix.size()) == prefix; };
    if (starts("fit.")) {
        const auto v = numberAt(fitToJson(fit(sc), sc), q.substr(4));
        return v ? v : fail("not a number in napkin-cli fit's output");
    }
    if (starts("tensor.")) {
        if (!step.tensor)
            return fail("the step has no tensor");
        double elements = 1;
        for (auto d : step.tensor->shape)
            elements *= double(d);
        if (q == "tensor.elements")
            return elements;
        if (q == "tensor.bytes") // CS336 lecture 2: numel × element size
            return elements * bytesPerValue(step.tensor->dtype);
        if (starts("tensor.bytes.")) { // the same tensor in another dtype
            if (const auto t = parseDType(q.substr(13)); t && info(*t).storable)
                return elements * bytesPerValue(*t);
            return fail("tensor.bytes.<dtype>: a storage dtype (fp32, fp16, bf16, fp8_e4m3, ...)");
        }
        return fail("tensor quantities: elements, bytes, bytes.<dtype>");
    }
    if (starts("dtype.")) {
        if (!step.dtypeValue)
            return fail("the step has no dtype value");
        const auto rest = q.substr(6);
        const auto dot = rest.find('.');
        const auto t = parseDType(rest.substr(0, dot));
        if (!t || dot == std::string_view::npos)
            return fail("dtype quantities: dtype.<format>.stored|relative_error|spacing|underflow");
        const auto v = storeValue(*t, *step.dtypeValue);
        const auto field = rest.substr(dot + 1);
        if (field == "stored")
            return v.stored;
        if (field == "relative_error")
            return v.relativeError;
        if (field == "spacing")
            return v.spacing;
        if (field == "underflow")
            return v.underflow ? 1.0 : 0.0;
        return fail("dtype fields: stored, relative_error, spacing, underflow");
    }
    if (starts("op.")) {
        const auto rest = q.substr(3);
        const auto dot = rest.rfind('.');
        if (dot == std::string_view::npos)
            return fail("op quantities: op.<id>.flops|bytes|intensity|achieved_flops_per_second|mfu");
        const auto id = rest.substr(0, dot), field = rest.substr(dot + 1);
        const auto it = std::find_if(step.ops.begin(), step.ops.end(), [&](const LectureOp& o) { return o.id == id; });
        if (it == step.ops.end())
            return fail("the step has no op \"" + std::string(id) + "\"");
        const OpCost c = opCost(*it);
        if (field == "flops")
            return c.flops;
        if (field == "bytes")
            return c.bytes;
        if (field == "intensity")
            return c.flops / c.bytes; // Williams et al. 2009: I = F / Q
        if (field == "achieved_flops_per_second" || field == "mfu") {
            if (!it->seconds)
                return fail("op \"" + std::string(id) + "\" has no measured seconds");
            const double achieved = c.flops / *it->seconds;
            if (field == "achieved_flops_per_second")
                return achieved;
            // CS336 lecture 2: MFU = achieved FLOP/s / the dense peak for that dtype.
            const double peak = sc.gpu->peak(info(it->dtype).peak);
            return peak > 0 ? std::optional<double>(achieved / peak)
                            : fail(sc.gpu->name + " has no dense peak for this dtype");
        }
        return fail("op fields: flops, bytes, intensity, achieved_flops_per_second, mfu");
    }
    if (starts("checkpoint.")) {
        const auto c = checkpointCurveFor(sc);
        if (c.bytes.empty())
            return fail("the model has no layers");
        if (q == "checkpoint.best_k")
            return double(c.bestK);
        if (q == "checkpoint.min_bytes")
            return c.bestBytes;
        if (starts("checkpoint.bytes_at.")) {
            const auto k = parseQuantity(q.substr(20));
            if (!k || *k < 1 || *k > double(c.layers) || *k != std::floor(*k))
                return fail("k must be an integer from 1 to " + std::to_string(c.layers));
            return c.bytes[std::size_t(*k) - 1];
        }
        return fail("checkpoint quantities: best_k, min_bytes, bytes_at.<k>");
    }
    const auto v = numberAt(planToJson(plan), q);
    return v ? v
             : fail("not a number in the plan (docs/plan-schema.md), nor a fit., tensor., dtype., op. or checkpoint. "
                    "quantity");
}

nlohmann::json lectureStepDocument(const LectureStep& step, const std::string& calibrationProfile, bool* calibrated)
{
    if (calibrated)
        *calibrated = false;
    if (!step.calibration || calibrationProfile.empty() || !step.document.is_object())
        return step.document;
    nlohmann::json doc = step.document;
    doc["cluster"]["gpu"] = "calibration:" + calibrationProfile;
    Errors errors;
    parseScenario(doc, builtinCatalog(), errors);
    if (!errors.empty())
        return step.document;
    if (calibrated)
        *calibrated = true;
    return doc;
}

std::vector<ExpectCheck> checkExpectations(const LectureStep& step, const Scenario& sc, const Plan& plan)
{
    std::vector<ExpectCheck> out;
    for (const auto& e : step.expect) {
        ExpectCheck c;
        c.expect = e;
        c.actual = lectureQuantity(step, sc, plan, e.quantity, &c.why);
        c.ok = c.actual && std::abs(*c.actual - e.value) <= e.tolerance * std::abs(e.value);
        out.push_back(c);
    }
    return out;
}

std::optional<Lecture> parseLecture(std::string_view textIn, const std::string& origin, Errors& errors)
{
    const std::size_t before = errors.size();
    const auto doc = parseJsonLimited(textIn, origin, errors);
    if (doc.is_discarded())
        return std::nullopt;
    Lecture lecture;
    ObjectReader top(doc, "", errors);
    if (!top.isObject())
        return std::nullopt;
    if (auto s = top.string("schema", true); s && *s != "napkin.lecture/1")
        top.error("schema", shortDump(*s), "unsupported schema", "napkin.lecture/1");
    lecture.id = text(top, "id", false);
    lecture.title = text(top, "title", true);
    lecture.description = text(top, "description", false);
    const auto* steps = top.child("steps");
    if (!steps || !steps->is_array() || steps->empty() || steps->size() > kMaxSteps)
        top.error("steps", steps ? shortDump(*steps) : "",
                  "must be an array of 1 to " + std::to_string(kMaxSteps) + " steps",
                  "[{\"id\": ..., \"title\": ..., \"narration\": ..., \"focus\": ...}]");
    top.finish();
    if (steps && steps->is_array() && steps->size() <= kMaxSteps)
        for (std::size_t i = 0; i < steps->size(); ++i)
            lecture.steps.push_back(readStep((*steps)[i], indexed("steps", i), errors));
    std::set<std::string> ids;
    for (std::size_t i = 0; i < lecture.steps.size(); ++i)
        if (!lecture.steps[i].id.empty() && !ids.insert(lecture.steps[i].id).second)
            errors.push_back({indexed("steps", i) + ".id", shortDump(lecture.steps[i].id), "duplicate step id",
                              "an id used by no other step"});
    if (errors.size() != before)
        return std::nullopt;

    // Resolve each step's scenario (over the previous step's) and check what it names.
    nlohmann::json current = defaultScenarioJson();
    for (std::size_t i = 0; i < lecture.steps.size(); ++i) {
        auto& step = lecture.steps[i];
        const std::string path = indexed("steps", i);
        if (step.reset)
            current = defaultScenarioJson();
        current = mergeScenario(current, step.scenario);
        Errors stepErrors;
        for (const auto& s : step.sets)
            applySet(current, s, stepErrors);
        const auto sc = parseScenario(current, builtinCatalog(), stepErrors);
        for (auto& e : stepErrors) {
            e.field = path + ".scenario." + e.field;
            errors.push_back(e);
        }
        if (!stepErrors.empty())
            continue;
        step.document = current;
        const auto plan = estimate(sc);
        if (!step.derivation.empty() &&
            std::none_of(plan.derivations.begin(), plan.derivations.end(),
                         [&](const Derivation& d) { return step.derivation == d.quantity; })) {
            std::string allowed;
            for (const auto& d : plan.derivations)
                allowed += (allowed.empty() ? "" : ", ") + std::string(d.quantity);
            errors.push_back(
                {path + ".derivation", shortDump(step.derivation), "no such derivation in this step's plan", allowed});
        }
        for (std::size_t j = 0; j < step.expect.size(); ++j) {
            std::string why;
            if (!lectureQuantity(step, sc, plan, step.expect[j].quantity, &why))
                errors.push_back({indexed(path + ".expect", j) + ".quantity", shortDump(step.expect[j].quantity),
                                  "unknown quantity: " + why, "see docs/lecture-format.md, \"Quantities\""});
        }
    }
    if (errors.size() != before)
        return std::nullopt;
    return lecture;
}

std::vector<std::string> builtinLectureIds() { return {"cs336-lecture2"}; }

std::optional<Lecture> builtinLecture(std::string_view id, Errors& errors)
{
    const auto ids = builtinLectureIds();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        errors.push_back({"lecture", std::string(id), "unknown built-in walkthrough", "cs336-lecture2"});
        return std::nullopt;
    }
    const std::string name = "lectures/" + std::string(id) + ".json";
    return parseLecture(embeddedResource(name), name, errors);
}

} // namespace napkin::core
