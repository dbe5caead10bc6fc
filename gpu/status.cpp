// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "status.h"

namespace napkin::gpu {

namespace {
// cudaError_t values from CUDA 13's driver_types.h; kept as plain ints so this file needs no CUDA.
constexpr int kSuccess = 0;
constexpr int kInsufficientDriver = 35;  // cudaErrorInsufficientDriver
constexpr int kDevicesUnavailable = 46;  // cudaErrorDevicesUnavailable (exclusive-process mode)
constexpr int kNoDevice = 100;           // cudaErrorNoDevice
constexpr int kInvalidKernelImage = 200; // cudaErrorInvalidKernelImage
constexpr int kNoKernelImage = 209;      // cudaErrorNoKernelImageForDevice
} // namespace

const char* statusName(Status s)
{
    switch (s) {
    case Status::Ok: return "ok";
    case Status::NoDriver: return "no_driver";
    case Status::DriverTooOld: return "driver_too_old";
    case Status::NoDevice: return "no_device";
    case Status::NoKernelImage: return "no_kernel_image";
    case Status::DeviceBusy: return "device_busy";
    case Status::MissingLibrary: return "missing_library";
    case Status::Error: return "error";
    }
    return "error";
}

int exitCodeFor(Status s)
{
    switch (s) {
    case Status::Ok: return ExitOk;
    case Status::NoDriver:
    case Status::DriverTooOld:
    case Status::NoDevice:
    case Status::NoKernelImage:
    case Status::DeviceBusy:
    case Status::MissingLibrary: return ExitNoGpu;
    case Status::Error: return ExitError;
    }
    return ExitError;
}

Status statusFromDeviceCount(int cudaError, int driverVersion, int deviceCount)
{
    switch (cudaError) {
    case kSuccess: return deviceCount > 0 ? Status::Ok : Status::NoDevice;
    case kNoDevice: return Status::NoDevice;
    case kInsufficientDriver: return driverVersion == 0 ? Status::NoDriver : Status::DriverTooOld;
    case kDevicesUnavailable: return Status::DeviceBusy;
    case kNoKernelImage: return Status::NoKernelImage;
    default: return Status::Error; // 34 stub libcuda, 803/804 driver or compat mismatch, anything else
    }
}

Status statusFromFirstLaunch(int cudaError)
{
    switch (cudaError) {
    case kSuccess: return Status::Ok;
    case kNoKernelImage:
    case kInvalidKernelImage: return Status::NoKernelImage;
    case kDevicesUnavailable: return Status::DeviceBusy;
    default: return Status::Error;
    }
}

static std::string version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string statusMessage(Status s, int driverVersion, int runtimeVersion, const std::string& detail)
{
    std::string m;
    switch (s) {
    case Status::Ok: m = "measured"; break;
    case Status::NoDriver:
        m = "no NVIDIA driver found: install the NVIDIA driver (CUDA " + version(runtimeVersion) +
            " needs driver 580 or newer) and run napkin-probe again";
        break;
    case Status::DriverTooOld:
        m = "the NVIDIA driver supports CUDA " + version(driverVersion) + " but this probe needs CUDA " +
            version(runtimeVersion) + ": update the driver (580 or newer)";
        break;
    case Status::NoDevice: m = "no CUDA GPU is visible: check CUDA_VISIBLE_DEVICES and nvidia-smi"; break;
    case Status::NoKernelImage:
        m = "this napkin-probe has no kernels for this GPU's architecture: rebuild it with the GPU's compute "
            "capability in CMAKE_CUDA_ARCHITECTURES";
        break;
    case Status::DeviceBusy:
        m = "the GPU is busy or in exclusive-process mode: stop the other job or change the compute mode, then "
            "retry";
        break;
    case Status::MissingLibrary: m = "a CUDA library the probe needs is missing: install it"; break;
    case Status::Error: m = "the probe failed"; break;
    }
    if (!detail.empty())
        m += " (" + detail + ")";
    return m;
}

} // namespace napkin::gpu
