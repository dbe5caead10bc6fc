// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lecture walkthroughs (napkin.lecture/1, docs/lecture-format.md): a sequence of steps, each a
// scenario patch laid over the previous step's scenario, the panel to highlight, the derivation to
// show large and the numbers the step claims, checked against the engine.

#include "errors.h"
#include "dtype.h"
#include "plan.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

enum class LectureFocus { Ledger, Summary, Roofline, Derivation, Dtype, Checkpoint };
const char* toString(LectureFocus f);

// A number the step claims: |engine - value| <= tolerance · |value| (relative).
struct LectureExpect {
    std::string quantity; // see lectureQuantity()
    double value = 0;
    double tolerance = 1e-3;
    std::string label; // what a person reads ("Training time (days)"); default: the quantity
};

// A tensor whose size the step shows: elements = product of the shape, bytes = elements · dtype bytes.
struct LectureTensor {
    std::vector<std::int64_t> shape;
    DType dtype = DType::Fp32;
};

// One op of the seeds' table (core/roofline.h costs); seconds: a measured time, for MFU.
struct LectureOp {
    std::string id;
    std::string kind; // gemm, relu, gelu, dot, matvec
    double m = 0, k = 0, n = 0;
    DType dtype = DType::Bf16;
    std::optional<double> seconds;
};

struct LectureStep {
    std::string id;
    std::string title;
    std::string narration;
    std::string hint;              // what to try with the sliders
    bool reset = false;            // start from the built-in default scenario, not the previous step's
    nlohmann::json scenario;       // the patch as written (an object, possibly empty)
    std::vector<std::string> sets; // PATH=VALUE, applied after the patch
    nlohmann::json document;       // resolved: the complete scenario document of this step
    LectureFocus focus = LectureFocus::Summary;
    std::string derivation; // a Derivation::quantity of the plan ("time.days"); "" for none
    std::vector<LectureExpect> expect;
    std::optional<double> dtypeValue; // the dtype explorer's input
    std::optional<LectureTensor> tensor;
    std::vector<LectureOp> ops;
    bool rooflineOverlay = false; // the seeds' op table on the roofline
    bool calibration = false;     // use a loaded calibration profile's measured peaks when there is one
    std::string fallback;         // said instead when calibration is asked for and none is loaded
};

struct Lecture {
    std::string id;
    std::string title;
    std::string description;
    std::vector<LectureStep> steps;
};

// Parses and validates a walkthrough: unknown keys, wrong types, unknown focus, duplicate step ids,
// invalid step scenarios, unknown derivations and unknown expect quantities are errors naming the
// field (e.g. "steps[3].expect[0].quantity"). Returns nullopt when there are errors.
std::optional<Lecture> parseLecture(std::string_view text, const std::string& origin, Errors& errors);

// Built-in walkthroughs compiled from resources/lectures/ ("cs336-lecture2").
std::vector<std::string> builtinLectureIds();
std::optional<Lecture> builtinLecture(std::string_view id, Errors& errors);

// The step's scenario document; with a calibration profile (napkin.calibration/1, see
// docs/calibration-schema.md) and a step that asks for one, cluster.gpu = "calibration:FILE" when
// the scenario accepts it, else the spec sheet (calibrated = false).
nlohmann::json lectureStepDocument(const LectureStep& step, const std::string& calibrationProfile, bool* calibrated);

// Values a step can claim, by name:
//   plan JSON paths (docs/plan-schema.md): "time.days", "memory.per_gpu.weights", "hardware.ridge", ...
//   "fit.<path>" (napkin-cli fit's JSON): "fit.states_only.max_params"
//   "tensor.elements", "tensor.bytes", "tensor.bytes.<dtype>" (the step's tensor, in its or another dtype)
//   "dtype.<format>.stored|relative_error|spacing|underflow" (the step's dtype value; underflow 0 or 1)
//   "op.<id>.flops|bytes|intensity|achieved_flops_per_second|mfu" (the step's ops; the last two need
//     seconds; MFU against the GPU's dense peak for the op's dtype, measured when calibrated)
//   "checkpoint.best_k|min_bytes|bytes_at.<k>" (the checkpoint curve of the step's scenario)
// nullopt with why set when the name is unknown or does not apply to the step.
std::optional<double> lectureQuantity(const LectureStep& step, const Scenario& sc, const Plan& plan,
                                      std::string_view quantity, std::string* why = nullptr);

struct ExpectCheck {
    LectureExpect expect;
    std::optional<double> actual;
    bool ok = false;
    std::string why; // when actual is missing
};
std::vector<ExpectCheck> checkExpectations(const LectureStep& step, const Scenario& sc, const Plan& plan);

// Activation memory over the checkpoint interval k = 1 .. L for the scenario's model under full
// recompute (core/activations.h checkpointCurve): the toy chain model keeps b·D·e per boundary and
// per layer; a transformer keeps its layer input (Korthikanti Table 2, full recompute) per boundary
// and re-materialises a whole layer's activations (no recompute) per layer of the segment.
struct ScenarioCheckpointCurve {
    std::int64_t layers = 0;
    double boundaryBytes = 0;
    double layerBytes = 0;
    std::vector<double> bytes; // index k - 1
    std::int64_t bestK = 0;
    double bestBytes = 0;
};
ScenarioCheckpointCurve checkpointCurveFor(const Scenario& sc);

} // namespace napkin::core
