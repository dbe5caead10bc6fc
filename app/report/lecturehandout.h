// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Lecture walkthroughs on paper and on screen: the step's numbers and derivation as rich text
// (shared by the lecture panel and the handout), and the PDF handout, one page per step (title,
// narration, the numbers, the derivation, a chart where the step's focus is a chart).

#include "lecture.h"
#include "report.h"

#include <QString>

namespace napkin::report {

// A claimed quantity for people: bytes as "524,288 bytes" or "14 GB", counts grouped, the rest
// compact (core::formatNumber).
QString lectureValueText(const std::string& quantity, double value, bool gib);

// The step's claims as an HTML table: label, the engine's value, what the step claims, and whether
// they agree (they may not after a slider moved).
QString lectureNumbersHtml(const std::vector<core::ExpectCheck>& checks, bool gib);

// The derivation of `quantity` in the plan: formula, values substituted, result and source.
QString lectureDerivationHtml(const core::Plan& plan, const std::string& quantity);

// Renders / writes the handout (A4 or Letter). calibrationProfile: as in lecture mode; steps that
// ask for one fall back to the spec sheet without it. Empty string on success, else why.
QByteArray renderLectureHandout(const core::Lecture& lecture, const Options& options, const QString& calibrationProfile,
                                QString* error);
QString writeLectureHandout(const core::Lecture& lecture, const QString& outPath, const Options& options,
                            const QString& calibrationProfile = {});

} // namespace napkin::report
