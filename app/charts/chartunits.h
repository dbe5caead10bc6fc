// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The units sizes are shown in, shared by the charts, the reports and the window.

#include <QString>

namespace napkin::charts {

enum class Units { GB, GiB };

// "13.48 GB" (core::formatBytes: decimal, as GPU vendors and the seeds write) or "12.55 GiB".
QString formatBytes(double bytes, Units units);
// Bytes per displayed unit: 1e9 or 2^30.
double unitBytes(Units units);

// "70B", "1.5T", "4,096" style display of a count.
QString formatCount(double v);

} // namespace napkin::charts
