// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plan -> JSON (napkin.plan/1), text, Markdown and CSV; derivation rendering.

#include "plan.h"

#include <nlohmann/json.hpp>

#include <string>

namespace napkin::core {

struct Scenario; // scenario.h

// "6 · P · T" and "6 · 70e9 · 15e12" (values as formatTerm writes them).
std::string formulaText(const Derivation& d);
std::string substitutedText(const Derivation& d);
// The value with its unit: "13.48 GB (13,476,831,232 bytes)", "6,738,415,616 parameters", "989.5e12 FLOP/s".
std::string resultText(const Derivation& d);
std::string sourceText(const Derivation& d, const Plan& plan);

// Compact number for people: 6.3e+24, 143.9, 84 GB uses formatBytes.
std::string formatNumber(double v);
// A derivation's substituted value: integers below 10^7 exactly, from 10^5 up in engineering notation
// with four significant digits ("13.48e9", "70e9", "15e12"), else formatNumber.
std::string formatTerm(double v);
std::string formatBytes(double bytes); // decimal GB (10^9), as the seeds and vendors use
// Counts as people write them: "15 T", "70.55 B", "2.5 M", "512" (up to 4 significant digits;
// K, M, B, T, P = 10^3 ... 10^15). formatGrouped: "1,024", "16,384".
std::string formatCount(double v);
std::string formatGrouped(double v);
// "6.3e24": an exponent without printf's '+' and leading zeros, `digits` significant digits.
std::string formatScientific(double v, int digits = 3);

// Numbers as people write them, with their unit, for every front end (text, Markdown, reports,
// the app): "70.55 B parameters", "15 T tokens", "7.3e24 FLOPs" (an exponent only for FLOPs),
// "$12.8 M", "5.14 M GPU-hours", "143.3 days", "19.3 MWh". CSV and JSON keep machine numbers.
enum class Quantity { Parameters, Tokens, Flops, Usd, GpuHours, Seconds, Days, EnergyKwh };
std::string humanNumber(double v, Quantity q);

nlohmann::json planToJson(const Plan& plan);
// time.breakdown of the predicted mode (docs/plan-schema.md §6.1); also each search result's breakdown.
nlohmann::json stepTimeToJson(const StepTimeBreakdown& breakdown);
std::string planToText(const Plan& plan);
std::string planToMarkdown(const Plan& plan);
std::string planToCsv(const Plan& plan);
// The same, after the inputs that made the plan (section "input": model, tokens, GPUs, the layout,
// the batch, the precision plan and the step-time mode), so that a CSV says what it is a plan of.
std::string planToCsv(const Plan& plan, const Scenario& sc);

} // namespace napkin::core
