// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The validation chart: one row per published run, its error (predicted / published - 1) as a dot on
// a shared axis, with the ±10% and ±25% bands of the goals. Plain SVG, written by the core so that
// napkin-cli renders it without Qt.
#include "validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace napkin::core {

namespace {

std::string escape(const std::string& s)
{
    std::string o;
    for (char ch : s) {
        switch (ch) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        default: o += ch;
        }
    }
    return o;
}

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

} // namespace

std::string validationToSvg(const std::vector<ValidationResult>& results, const ValidationSummary& s)
{
    const double rowH = 18, left = 300, plotW = 520, top = 56, right = 170;
    const double rows = double(results.size());
    const double W = left + plotW + right, H = top + rows * rowH + 56;
    double lim = 0.5;
    for (const auto& r : results)
        if (r.failure.empty())
            lim = std::max(lim, std::ceil(std::fabs(r.error) * 10 + 0.5) / 10);
    auto x = [&](double err) { return left + (err + lim) / (2 * lim) * plotW; };
    std::string o;
    auto out = std::back_inserter(o);
    fmt::format_to(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" "
        "font-family=\"DejaVu Sans, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
        "fill=\"white\"/>\n",
        W, H, W, H);
    fmt::format_to(
        out,
        "<text x=\"{:.0f}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Napkin predicted vs published "
        "throughput</text>\n"
        "<text x=\"{:.0f}\" y=\"40\" fill=\"#444\">error = predicted / published - 1 (right: Napkin optimistic). "
        "{} runs, {} sources: median |error| {:.1f}%, max {:.1f}%</text>\n",
        left - 290, left - 290, s.n, s.sources, 100 * s.medianAbsError, 100 * s.maxAbsError);
    const double y0 = top, y1 = top + rows * rowH;
    // Bands: ±25% light, ±10% darker.
    fmt::format_to(out, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#eef5ee\"/>\n",
                   x(-0.25), y0, x(0.25) - x(-0.25), y1 - y0);
    fmt::format_to(out, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#d6ead6\"/>\n",
                   x(-0.1), y0, x(0.1) - x(-0.1), y1 - y0);
    // Grid every 10% (25% past ±100%), labelled every other line so the labels never touch.
    const double stepT = lim >= 1 ? 0.25 : 0.1;
    const int steps = int(std::lround(2 * lim / stepT));
    for (int i = 0; i <= steps; ++i) {
        const double t = -lim + i * stepT;
        const bool zero = std::fabs(t) < 1e-9;
        fmt::format_to(
            out, "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
            x(t), y0, x(t), y1, zero ? "#333" : "#ccc", zero ? "1.5" : "1");
        if ((steps / 2 - i) % 2 != 0)
            continue;
        fmt::format_to(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n", x(t),
                       y1 + 16, zero ? std::string("0%") : fmt::format("{:+.0f}%", 100 * t));
    }
    std::map<std::string, int> colour;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const double y = top + (double(i) + 0.5) * rowH;
        const int ci = colour.emplace(r.c->sourceGroup, int(colour.size())).first->second % 8;
        fmt::format_to(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 8, y + 4,
                       escape(r.c->id));
        if (!r.failure.empty()) {
            fmt::format_to(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#b00\">failed</text>\n", left + 4, y + 4);
            continue;
        }
        fmt::format_to(out,
                       "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"><title>{}: {:+.1f}%</title></circle>\n",
                       x(r.error), y, kPalette[ci], escape(r.c->id), 100 * r.error);
    }
    // Legend: source groups.
    double ly = top + 8;
    for (const auto& [group, ci] : colour) {
        fmt::format_to(
            out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
            left + plotW + 16, ly, kPalette[ci % 8], left + plotW + 26, ly + 4, escape(group));
        ly += 18;
    }
    o += "</svg>\n";
    return o;
}

} // namespace napkin::core
