// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the horizontal stacked bars (the memory ledger, the step time) share: which segment lies under
// the mouse, and segment labels shown only where their text fits inside the segment.

#include <QString>
#include <QStringList>
#include <QVector>

#include <functional>
#include <vector>

class QCPAxis;
class QCPItemText;

namespace napkin::charts::stackedbar {

// The segment under `value` (the value axis' coordinate, values in the same unit), or -1 when it lies
// outside the bar. Empty segments are never hit.
int segmentAt(const QVector<double>& values, double value);

// After a layout pass (pixel widths known): labels[i] shows the first of candidates(i) that fits
// inside segment i with 4 px either side, else hides. values in the value axis' unit; barPixels: the
// bar's thickness (labels hide when the font is taller).
void fitLabels(QCPAxis* valueAxis, const std::vector<QCPItemText*>& labels, const QVector<double>& values,
               double barPixels, const std::function<QStringList(int)>& candidates);

} // namespace napkin::charts::stackedbar
