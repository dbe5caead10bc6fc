// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The plan JSON's memory sections that offload, the communicators and the timeline add
// (memory.timeline, memory.comm_buffers, memory.host); planToJson (format.cpp) places them.

#include "plan.h"

#include <nlohmann/json.hpp>

namespace napkin::core {

nlohmann::json timelineJson(const MemoryLedger& m);
nlohmann::json commBuffersJson(const CommBuffers& c);
nlohmann::json hostMemoryJson(const HostMemory& h);

} // namespace napkin::core
