// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What napkin-probe reports when it cannot measure, and the exit codes (docs/probe.md). Pure host code.

#include <string>

namespace napkin::gpu {

/** `status` of a napkin.calibration/2 profile (docs/calibration-schema.md). */
enum class Status { Ok, NoDriver, DriverTooOld, NoDevice, NoKernelImage, DeviceBusy, MissingLibrary, Error };

/** Exit codes of napkin-probe (docs/probe.md). */
enum ExitCode : int { ExitOk = 0, ExitError = 1, ExitUsage = 2, ExitNoGpu = 3 };

/** The schema's spelling: "ok", "no_driver", ... */
const char* statusName(Status s);

/** ExitOk for ok, ExitNoGpu for every "no usable GPU" status, ExitError for error. */
int exitCodeFor(Status s);

/** Maps the cudaError_t of cudaGetDeviceCount (given as int) and cudaDriverGetVersion's result, as
 *  probe-methods.md section 2 tables them: 0 -> ok (if count > 0), 100 -> no_device, 35 with driver 0 ->
 *  no_driver, 35 with a driver -> driver_too_old, 46 -> device_busy, 209 -> no_kernel_image, 34 (stub
 *  libcuda), 803/804 (driver/compat mismatch) and anything else -> error. */
Status statusFromDeviceCount(int cudaError, int driverVersion, int deviceCount);

/** Maps a cudaError_t seen at the first kernel launch or allocation: 209 / 200 (no kernel image,
 *  invalid image) -> no_kernel_image, 46 (devices unavailable) -> device_busy, else error. */
Status statusFromFirstLaunch(int cudaError);

/** One line for a person: what happened and what to do. `detail` is appended in parentheses when set. */
std::string statusMessage(Status s, int driverVersion, int runtimeVersion, const std::string& detail = {});

} // namespace napkin::gpu
