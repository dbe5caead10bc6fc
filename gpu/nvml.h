// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// NVML loaded at run time (dlopen of the driver's libnvidia-ml.so.1): clocks, power, temperature and
// the clock-limiting reasons during each measurement, so a throttled run shows in the profile
// (probe-methods.md: record clocks and power beside every figure). The few declarations used are
// written out here (the CUDA toolkit does not ship nvml.h); their values are NVML's stable ABI
// (NVIDIA NVML API Reference, "Device Queries" and "ClocksEventReasons").

#include "profile.h"

#include <string>

namespace napkin::gpu {

struct NvmlDevice;

class Nvml {
public:
    /** Loads libnvidia-ml.so.1 and calls nvmlInit_v2; info() says what happened. */
    Nvml();
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    const LibraryInfo& info() const { return m_info; }

    /** The state of the device with this UUID ("GPU-xxxxxxxx-..."): clocks, power, temperature and the
     *  current clock-limiting reasons; the energy counter in millijoules when the board has one. */
    struct Sample {
        bool ok = false;
        int smClockMhz = 0, memoryClockMhz = 0;
        double powerWatts = 0, powerLimitWatts = 0;
        int temperatureC = 0;
        unsigned long long reasons = 0;
        unsigned long long energyMilliJoules = 0; // 0 = no counter
        double atSeconds = 0;
    };
    Sample sample(const std::string& uuid) const;

private:
    struct Api;
    Api* m_api = nullptr;
    LibraryInfo m_info;
};

/** The conditions of one suite step from the samples before and after it: clocks, temperature and
 *  reasons at the end (under load), the average power from the energy counter (else the power at the
 *  end). Reasons are named as nvidia-smi -q names them (sw_power_cap, hw_slowdown, ...). */
Conditions conditionsOf(const std::string& step, const Nvml::Sample& before, const Nvml::Sample& after);

/** The names of the clock-limiting reason bits that mean a slowed clock (idle and sync boost left out). */
std::vector<std::string> throttleReasonNames(unsigned long long reasons);

} // namespace napkin::gpu
