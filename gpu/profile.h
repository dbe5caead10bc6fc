// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A napkin.calibration/2 profile as napkin-probe builds it (docs/calibration-schema.md), and its JSON
// writer. Pure host code. Version 2 adds to version 1: GEMM points with their {m, n, k} (the
// transformer-shape sweep), per-step clocks/power/temperature (NVML) and the nvml library entry.

#include "stats.h"
#include "status.h"

#include <string>
#include <utility>
#include <vector>

namespace napkin::gpu {

inline constexpr const char* kSchema = "napkin.calibration/2";

struct Result {
    std::string id;   // "hbm_copy", "gemm_bf16", ...
    std::string kind; // "bandwidth" (B/s) or "flops" (FLOP/s)
    std::string dtype;
    Stats stats;
    std::vector<std::pair<std::string, long long>> size; // {m, n, k} for GEMMs, {elements} otherwise
    double sizeBytes = 0;
    std::string bytesCounted; // "read+write", "one direction", "" for flops
    bool verified = false;
    double maxRelErr = 0;
    std::string detail; // how it was measured
};

struct Point {
    std::string series; // gemm_m_sweep, intensity_sweep, elementwise
    std::string label;
    std::string dtype;
    double flops = 0;
    double bytes = 0;
    double seconds = 0;
    long long m = 0, n = 0, k = 0; // a GEMM point's shape (0: not a GEMM); written as "size" when set
};

/** Clocks, power and temperature of one suite step (NVML; calibration-schema.md "Conditions"). */
struct Conditions {
    std::string step; // hbm, gemm_bf16, gemm_shapes_bf16, ...
    int smClockMhz = 0, memoryClockMhz = 0;
    double powerWatts = 0;
    bool powerAveraged = false; // from the energy counter over the step, else the reading at its end
    double powerLimitWatts = 0;
    int temperatureC = 0;
    std::vector<std::string> throttle; // clock-limiting reasons active at the end of the step
};

struct Skipped {
    std::string id;
    std::string reason;
};

struct DeviceReport {
    int index = 0;
    std::string name;
    std::string uuid; // GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    std::string computeCapability;
    int sms = 0;
    double memoryBytes = 0;
    double l2Bytes = 0;
    int smClockMaxMhz = 0;
    int memoryClockMaxMhz = 0;
    std::vector<Result> results;
    std::vector<Point> points;
    std::vector<Skipped> skipped;
    std::vector<Conditions> conditions; // one per suite step when NVML loaded
};

struct LinkPoint {
    double bytes = 0;
    double seconds = 0;
    double algbw = 0;
    double busbw = 0;
};

struct Link {
    std::string id; // nccl_allreduce
    int ranks = 0;
    std::vector<LinkPoint> points;
};

struct LibraryInfo {
    bool loaded = false;
    int version = 0;
    std::string error;
};

struct Profile {
    Status status = Status::Error;
    std::string message;
    std::string probeVersion;
    std::string mode = "quick"; // quick | full
    std::string startedUtc;
    double elapsedSeconds = 0;
    int runtimeVersion = 0;
    int driverVersion = 0;
    LibraryInfo cublaslt;
    LibraryInfo nccl;
    LibraryInfo nvml;
    std::vector<DeviceReport> devices;
    std::vector<Link> links;
};

/** The profile as one JSON document (2-space indent, trailing newline). Non-finite numbers, which the
 *  probe never stores, would be written as null and so rejected by the loader. */
std::string toJson(const Profile& p);

/** UUID bytes as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's spelling). */
std::string formatUuid(const unsigned char bytes[16]);

/** "YYYY-MM-DDTHH:MM:SSZ" for seconds since the epoch. */
std::string isoUtc(long long secondsSinceEpoch);

/** Writes `text` to `path` through a temporary file in the same directory and a rename, so a reader
 *  sees the old file or the whole new one; nothing is left behind on failure. */
bool writeFileAtomically(const std::string& path, const std::string& text, std::string& error);

} // namespace napkin::gpu
