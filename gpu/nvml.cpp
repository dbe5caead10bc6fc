// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "nvml.h"

#include "timing.h"

#include <dlfcn.h>

namespace napkin::gpu {

namespace {

// NVML's ABI (nvml.h of every driver since R450): opaque device handle, int status, enum values.
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
constexpr int kClockMem = 2; // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;  // NVML_TEMPERATURE_GPU

// nvmlClocksEventReason* bits (formerly nvmlClocksThrottleReason*): the ones that lower the clock.
struct ReasonBit {
    unsigned long long bit;
    const char* name;
};
constexpr ReasonBit kReasons[] = {
    {0x2ULL, "applications_clocks_setting"}, {0x4ULL, "sw_power_cap"},         {0x8ULL, "hw_slowdown"},
    {0x20ULL, "sw_thermal_slowdown"},        {0x40ULL, "hw_thermal_slowdown"}, {0x80ULL, "hw_power_brake_slowdown"},
    {0x100ULL, "display_clock_setting"},
};

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn)
{
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    return fn != nullptr;
}

} // namespace

struct Nvml::Api {
    void* lib = nullptr;
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*handleByUuid)(const char*, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*clockInfo)(nvmlDevice_t, int, unsigned int*) = nullptr;
    nvmlReturn_t (*powerUsage)(nvmlDevice_t, unsigned int*) = nullptr;       // milliwatts
    nvmlReturn_t (*powerLimit)(nvmlDevice_t, unsigned int*) = nullptr;       // milliwatts, enforced
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;     // millijoules since load
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr; // degrees C
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;    // clock event reasons
};

Nvml::Nvml()
{
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        m_info.error = e ? e : "dlopen libnvidia-ml.so.1 failed";
        return;
    }
    auto* api = new Api;
    api->lib = lib;
    bool ok = resolve(lib, "nvmlInit_v2", api->init) && resolve(lib, "nvmlShutdown", api->shutdown) &&
              resolve(lib, "nvmlDeviceGetHandleByUUID", api->handleByUuid) &&
              resolve(lib, "nvmlDeviceGetClockInfo", api->clockInfo) &&
              resolve(lib, "nvmlDeviceGetPowerUsage", api->powerUsage) &&
              resolve(lib, "nvmlDeviceGetTemperature", api->temperature);
    // Optional: older drivers lack the energy counter; the reasons call was renamed in R535.
    resolve(lib, "nvmlDeviceGetEnforcedPowerLimit", api->powerLimit);
    resolve(lib, "nvmlDeviceGetTotalEnergyConsumption", api->energy);
    if (!resolve(lib, "nvmlDeviceGetCurrentClocksEventReasons", api->reasons))
        resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", api->reasons);
    if (!ok) {
        m_info.error = "libnvidia-ml.so.1 lacks a required symbol";
    } else if (const nvmlReturn_t r = api->init(); r != kNvmlSuccess) {
        m_info.error = "nvmlInit_v2 returned " + std::to_string(r);
        ok = false;
    }
    if (!ok) {
        dlclose(lib);
        delete api;
        return;
    }
    m_api = api;
    m_info.loaded = true;
}

Nvml::~Nvml()
{
    if (m_api) {
        m_api->shutdown();
        dlclose(m_api->lib);
        delete m_api;
    }
}

Nvml::Sample Nvml::sample(const std::string& uuid) const
{
    Sample s;
    s.atSeconds = nowSeconds();
    nvmlDevice_t dev = nullptr;
    if (!m_api || m_api->handleByUuid(uuid.c_str(), &dev) != kNvmlSuccess)
        return s;
    unsigned int v = 0;
    if (m_api->clockInfo(dev, kClockSm, &v) == kNvmlSuccess)
        s.smClockMhz = static_cast<int>(v);
    if (m_api->clockInfo(dev, kClockMem, &v) == kNvmlSuccess)
        s.memoryClockMhz = static_cast<int>(v);
    if (m_api->powerUsage(dev, &v) == kNvmlSuccess)
        s.powerWatts = v / 1000.0;
    if (m_api->powerLimit && m_api->powerLimit(dev, &v) == kNvmlSuccess)
        s.powerLimitWatts = v / 1000.0;
    if (m_api->temperature(dev, kTempGpu, &v) == kNvmlSuccess)
        s.temperatureC = static_cast<int>(v);
    if (m_api->reasons)
        m_api->reasons(dev, &s.reasons);
    if (m_api->energy)
        m_api->energy(dev, &s.energyMilliJoules);
    s.ok = s.smClockMhz > 0;
    return s;
}

std::vector<std::string> throttleReasonNames(unsigned long long reasons)
{
    std::vector<std::string> names;
    for (const ReasonBit& r : kReasons)
        if (reasons & r.bit)
            names.emplace_back(r.name);
    return names;
}

Conditions conditionsOf(const std::string& step, const Nvml::Sample& before, const Nvml::Sample& after)
{
    Conditions c;
    c.step = step;
    c.smClockMhz = after.smClockMhz;
    c.memoryClockMhz = after.memoryClockMhz;
    c.temperatureC = after.temperatureC;
    c.powerLimitWatts = after.powerLimitWatts;
    const double dt = after.atSeconds - before.atSeconds;
    // Average power over the step from the energy counter (mJ); the instantaneous reading otherwise.
    if (before.energyMilliJoules > 0 && after.energyMilliJoules > before.energyMilliJoules && dt > 0.05) {
        c.powerWatts = static_cast<double>(after.energyMilliJoules - before.energyMilliJoules) / 1000.0 / dt;
        c.powerAveraged = true;
    } else {
        c.powerWatts = after.powerWatts;
    }
    c.throttle = throttleReasonNames(after.reasons);
    return c;
}

} // namespace napkin::gpu
