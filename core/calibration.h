// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Calibration profiles (napkin.calibration/1, docs/calibration-schema.md): what napkin-probe measured
// on a GPU, loaded strictly, and the GpuSpec a plan uses with measured values in place of the spec
// sheet's. The spec values stay alongside (Calibration::spec) for comparison.

#include "catalog.h"
#include "errors.h"
#include "plan.h"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

struct CalibrationResult {
    std::string id;   // "hbm_copy", "gemm_bf16", ... (unknown ids are kept)
    std::string kind; // "bandwidth" (B/s) or "flops" (FLOP/s)
    std::string unit;
    std::string dtype;
    double best = 0; // best >= median > 0
    double median = 0;
    std::vector<double> samples;
    std::string bytesCounted; // "read+write", "one direction" or ""
    bool verified = false;
    double maxRelErr = 0;
    double sizeBytes = 0;
    std::string detail;
};

struct CalibrationPoint {
    std::string series; // gemm_m_sweep, intensity_sweep, elementwise (others kept)
    std::string label;
    std::string dtype;
    double flops = 0;
    double bytes = 0;
    double seconds = 0;
    // A GEMM point's shape (version 2 "size"; a version-1 gemm_m_sweep point's from its label and the
    // series' N = K = 4096); 0 when not a GEMM.
    double m = 0, n = 0, k = 0;
    // Derived, not stored (calibration-schema.md "A point").
    double intensity() const { return flops / bytes; }
    double flopsPerSecond() const { return flops / seconds; }
};

// Clocks, power and temperature during one suite step (version 2, NVML).
struct CalibrationConditions {
    std::string step;
    int smClockMhz = 0, memoryClockMhz = 0;
    double powerWatts = 0, powerLimitWatts = 0;
    bool powerAveraged = false;
    int temperatureC = 0;
    std::vector<std::string> throttle;
};

struct CalibrationSkip {
    std::string id;
    std::string reason;
};

struct CalibrationDevice {
    int index = 0;
    std::string name;
    std::string uuid;
    std::string computeCapability;
    int sms = 0;
    double memoryBytes = 0;
    double l2Bytes = 0;
    int smClockMhz = 0;
    int memoryClockMhz = 0;
    std::vector<CalibrationResult> results;
    std::vector<CalibrationPoint> points;
    std::vector<CalibrationSkip> skipped;
    std::vector<CalibrationConditions> conditions;

    const CalibrationResult* result(std::string_view id) const;
};

struct CalibrationLinkPoint {
    double bytes = 0;
    double seconds = 0;
    double algbw = 0; // bytes / seconds
    double busbw = 0; // algbw · 2(n - 1) / n (nccl-tests doc/PERFORMANCE.md)
};

struct CalibrationLink {
    std::string id;
    int ranks = 0;
    std::vector<CalibrationLinkPoint> points;
};

struct CalibrationProfile {
    int schemaVersion = 1; // napkin.calibration/1 or /2
    std::string status;    // "ok" when usable
    std::string message;
    std::string probeVersion;
    std::string probeMode;
    std::string startedUtc;
    double elapsedSeconds = 0;
    long long runtimeVersion = 0;
    long long driverVersion = 0;
    std::vector<CalibrationDevice> devices; // non-empty in a loaded profile
    std::vector<CalibrationLink> links;
};

// A measured GPU: attached to the GpuSpec that calibratedGpu() builds.
struct Calibration {
    std::string path; // as written after "calibration:"
    CalibrationProfile profile;
    std::size_t device = 0;                // the device of profile.devices the GpuSpec describes
    std::optional<GpuSpec> spec;           // the matched catalogue GPU (spec values); nullopt when none matched
    std::string bandwidthResult;           // result id used for the bandwidth; "" = spec value
    std::array<std::string, 6> peakResult; // per PeakColumn: result id used; "" = spec value
    std::string hostLinkResult;
    std::vector<Warning> warnings; // device not in the catalogue, memory size differs

    const CalibrationDevice& measuredDevice() const { return profile.devices[device]; }
    bool peakMeasured(PeakColumn c) const { return !peakResult[static_cast<std::size_t>(c)].empty(); }
    bool bandwidthMeasured() const { return !bandwidthResult.empty(); }
    // "measured by napkin-probe (FILE)"
    std::string citation() const;
    // The source of one dense peak column: measured (with its result id) or "spec".
    std::string peakSource(PeakColumn c) const;
    std::string bandwidthSource() const;
};

// One line of the measured-vs-spec table (app dialog, plan JSON hardware.calibration.rows).
struct CalibrationRow {
    std::string key;      // "bandwidth", "bf16", "fma_fp32", "memcpy_d2d", "host_link", ...
    std::string quantity; // "memory bandwidth", "dense bf16 peak", ...
    std::string unit;     // "B/s" or "FLOP/s"
    std::string result;   // result id measured ("" = not measured)
    double measured = 0;  // 0: not measured (or not verified)
    double spec = 0;      // 0: no spec value (device not in the catalogue, or no such mode)
    bool planned = false; // the plan uses the measured value for this quantity
    // measured / spec; 0 when either is missing.
    double achieved() const { return measured > 0 && spec > 0 ? measured / spec : 0; }
};
std::vector<CalibrationRow> calibrationRows(const Calibration& calibration);

// One line on the board's state during the GEMM steps (version-2 conditions): the SM clock range,
// the highest power and temperature, the clock-limiting reasons; "" when the profile has none.
std::string calibrationConditionsSummary(const Calibration& calibration);

// hardware.calibration of the plan JSON: profile, device, rows, results and points.
nlohmann::json calibrationToJson(const Calibration& calibration);

// Version 2 (napkin-probe 2026-12) adds GEMM points' "size", per-step "conditions" and
// bytes_counted "read"; version-1 profiles still load.
constexpr std::string_view kCalibrationSchema = "napkin.calibration/1";
constexpr std::string_view kCalibrationSchema2 = "napkin.calibration/2";
constexpr std::string_view kCalibrationPrefix = "calibration:";

// Parses and validates a profile as docs/calibration-schema.md "Validation" says. Errors name the
// JSON path inside the document (e.g. "devices[0].results[2].best"), the value and the allowed
// range. A profile whose status is not "ok" yields one error quoting its status and message.
// Physically absurd values (> 3x the best GPU of catalog for that quantity) are errors.
std::optional<CalibrationProfile> loadCalibrationProfile(std::string_view text, const Catalog& catalog, Errors& errors);

// The probe's GEMM result ids, the dtype its points carry, and the peak column each measures
// (gemm_bf16, "bf16", Bf16 ...): the one mapping the loader, the rows and the step time use.
struct CalibrationGemmId {
    std::string_view id, dtype;
    PeakColumn column;
};
const std::vector<CalibrationGemmId>& calibrationGemmIds();
// The dtype of a peak column's GEMM points ("bf16", "fp8_e4m3"); "" when the probe measures none.
std::string_view calibrationGemmDtype(PeakColumn column);

// The catalogue id for a CUDA device name ("NVIDIA H100 80GB HBM3" -> "h100-sxm"); "" when none.
std::string_view catalogGpuForDevice(std::string_view deviceName);

struct DeviceNamePattern {
    std::array<std::string_view, 3> tokens; // every non-empty token must occur (case-insensitive)
    std::string_view without;               // a token that must not occur ("" = none)
    std::string_view gpuId;                 // catalogue id
};
// The table catalogGpuForDevice() uses, first match wins (exposed for tests).
const std::vector<DeviceNamePattern>& deviceNamePatterns();

// The GpuSpec a plan uses: measured bandwidth (best verified of hbm_copy/scale/triad/read), measured
// dense peaks per column where a verified gemm result exists, spec values elsewhere; origin "measured".
// Uses profile.devices[0]. The result carries the Calibration (profile, spec, warnings).
GpuSpec calibratedGpu(const CalibrationProfile& profile, const std::string& path, const Catalog& catalog);

} // namespace napkin::core
