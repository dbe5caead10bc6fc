// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "compare.h"

#include "buckets.h"
#include "format.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace napkin::core {

namespace {

std::string delta(double value, double first)
{
    if (!(first > 0))
        return "n/a";
    return fmt::format("{:+.1f}%", 100 * (value / first - 1));
}

// The rows the text and Markdown tables share: header, then one per plan.
std::vector<std::vector<std::string>> rows(const std::vector<ComparedPlan>& plans)
{
    std::vector<std::vector<std::string>> out{
        {"scenario", "memory/GPU", "fits", "days", "Δ days", "GPU-hours", "cost", "Δ cost"}};
    const Plan* first = plans.empty() ? nullptr : plans.front().plan;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const Plan& p = *plans[i].plan;
        out.push_back({plans[i].label, formatBytes(p.memory.total), p.memory.fits ? "yes" : "no",
                       humanNumber(p.time.days, Quantity::Days), i == 0 ? "—" : delta(p.time.days, first->time.days),
                       humanNumber(p.time.gpuHours, Quantity::GpuHours), humanNumber(p.cost.usd, Quantity::Usd),
                       i == 0 ? "—" : delta(p.cost.usd, first->cost.usd)});
    }
    return out;
}

// Display width in characters (UTF-8: count the bytes that do not continue a sequence).
std::size_t width(const std::string& s)
{
    return std::size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

} // namespace

std::string compareToText(const std::vector<ComparedPlan>& plans)
{
    const auto table = rows(plans);
    std::vector<std::size_t> w(table.front().size(), 0);
    for (const auto& r : table)
        for (std::size_t c = 0; c < r.size(); ++c)
            w[c] = std::max(w[c], width(r[c]));
    std::string out;
    for (const auto& r : table) {
        for (std::size_t c = 0; c < r.size(); ++c) {
            const std::string pad(w[c] - width(r[c]), ' ');
            out += c == 0 ? r[c] + pad : "  " + pad + r[c]; // the label left, numbers right-aligned
        }
        out += "\n";
    }
    if (plans.size() > 1)
        out += "Δ: against " + plans.front().label + ".\n";
    return out;
}

std::string compareToMarkdown(const std::vector<ComparedPlan>& plans)
{
    const auto table = rows(plans);
    std::string out;
    for (std::size_t i = 0; i < table.size(); ++i) {
        out += "|";
        for (const auto& cell : table[i])
            out += " " + cell + " |";
        out += "\n";
        if (i == 0) {
            out += "|---|";
            for (std::size_t c = 1; c < table[i].size(); ++c)
                out += "---:|";
            out += "\n";
        }
    }
    return out;
}

std::string compareToCsv(const std::vector<ComparedPlan>& plans)
{
    std::string csv = "section,name";
    for (const auto& p : plans) {
        std::string l = p.label;
        std::replace(l.begin(), l.end(), ',', ' ');
        csv += "," + l;
    }
    csv += ",unit\n";
    auto row = [&](const std::string& section, const std::string& name, const std::function<double(const Plan&)>& value,
                   const char* unit) {
        csv += section + "," + name;
        for (const auto& p : plans)
            csv += "," + fmt::format("{}", value(*p.plan)); // shortest round-trip form
        csv += std::string(",") + unit + "\n";
    };
    row(
        "params", "total", [](const Plan& p) { return p.params.total; }, "parameters");
    for (const auto& b : kMemoryBuckets)
        row(
            "memory", b.id, [&b](const Plan& p) { return bucketBytes(b, p.memory); }, "bytes");
    row(
        "memory", "total", [](const Plan& p) { return p.memory.total; }, "bytes");
    row(
        "compute", "training_flops", [](const Plan& p) { return p.compute.trainingFlops; }, "FLOP");
    row(
        "time", "days", [](const Plan& p) { return p.time.days; }, "days");
    row(
        "time", "gpu_hours", [](const Plan& p) { return p.time.gpuHours; }, "GPU-hours");
    row(
        "cost", "usd", [](const Plan& p) { return p.cost.usd; }, "USD");
    return csv;
}

} // namespace napkin::core
