// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What a calibration profile adds to the roofline (RooflineChart): the spec sheet's ceilings dashed
// beside the measured ones (drawn solid by the panel from the plan), and the probe's measured
// points: the bf16 GEMM M-sweep, the FMA intensity sweep and the elementwise kernels.

#include "plan.h"

#include <QColor>
#include <QFont>

#include <utility>
#include <vector>

class QCustomPlot;

namespace napkin::charts::calibrationoverlay {

// (intensity FLOP/byte, FLOP/s) corners the axes must show: spec ceilings and measured points.
std::vector<std::pair<double, double>> extents(const core::HardwareSummary& hw);

// Draws onto plot (axes already ranged); returns the number of measured points drawn.
int draw(QCustomPlot* plot, const core::HardwareSummary& hw, const QColor& fg, bool dark, const QFont& small);

} // namespace napkin::charts::calibrationoverlay
