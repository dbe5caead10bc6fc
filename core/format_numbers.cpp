// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Numbers as people read them (format.h): compact, engineering, grouped, human counts with units.
#include "format.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace napkin::core {

std::string formatNumber(double v)
{
    if (!std::isfinite(v))
        return "n/a";
    if (v == std::floor(v) && std::fabs(v) < 1e12)
        return fmt::format("{:.0f}", v);
    if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-3 && v != 0))
        return fmt::format("{:.4g}", v);
    return fmt::format("{:.6g}", v);
}

// A substituted value as people write it in a derivation: integers below 10^7 exactly (a vocabulary
// of 128256, a sequence of 131072), larger or fractional magnitudes from 10^5 up in engineering
// notation with four significant digits ("13.48e9", "70e9", "15e12") rather than "13476831232" or
// "3.698e+09"; small values as formatNumber.
std::string formatTerm(double v)
{
    const double a = std::fabs(v);
    if (!std::isfinite(v) || a < 1e5 || (v == std::floor(v) && a < 1e7))
        return formatNumber(v);
    int exp3 = int(std::floor(std::log10(a) / 3)) * 3;
    double mant = v / std::pow(10.0, exp3);
    // Four significant digits; a mantissa that rounds up to 1000 moves to the next exponent.
    const auto rounded = [](double m) {
        const double am = std::fabs(m);
        const int decimals = am >= 100 ? 1 : am >= 10 ? 2 : 3;
        const double f = std::pow(10.0, decimals);
        return std::round(m * f) / f;
    };
    if (std::fabs(rounded(mant)) >= 1000) {
        exp3 += 3;
        mant = v / std::pow(10.0, exp3);
    }
    return fmt::format("{:.4g}e{}", rounded(mant), exp3);
}

std::string formatBytes(double bytes)
{
    const double a = std::fabs(bytes);
    if (a >= 1e9)
        return fmt::format("{:.2f} GB", bytes / 1e9);
    if (a >= 1e6)
        return fmt::format("{:.2f} MB", bytes / 1e6);
    if (a >= 1e3)
        return fmt::format("{:.2f} kB", bytes / 1e3);
    return fmt::format("{:.0f} B", bytes);
}

namespace {

// `digits` significant digits with K, M, B, T (and P), "12.8 M"; below 1000 as is ("512", "68.5");
// past the largest unit the exponent is clearer.
std::string scaled(double v, int digits, bool peta)
{
    static constexpr std::pair<double, const char*> kUnits[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    const double a = std::fabs(v);
    for (const auto& [scale, unit] : kUnits) {
        if ((scale == 1e15 && !peta) || a < scale)
            continue;
        if (a >= scale * 1e3) // beyond this unit's range (10^18, or 10^15 without P)
            return formatScientific(v, digits);
        return fmt::format("{:.{}g} {}", v / scale, digits, unit);
    }
    return fmt::format("{:.{}g}", v, digits);
}

} // namespace

std::string formatCount(double v) { return std::isfinite(v) ? scaled(v, 4, true) : "n/a"; }

std::string formatScientific(double v, int digits)
{
    std::string t = fmt::format("{:.{}g}", v, digits);
    const auto e = t.find('e');
    if (e == std::string::npos)
        return t;
    std::string mant = t.substr(0, e), exp = t.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-'))
        exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0')
        exp.erase(0, 1);
    return mant + "e" + (neg ? "-" : "") + exp;
}

std::string humanNumber(double v, Quantity q)
{
    if (!std::isfinite(v))
        return "n/a";
    switch (q) {
    case Quantity::Parameters: return formatCount(v) + " parameters";
    case Quantity::Tokens: return formatCount(v) + " tokens";
    case Quantity::Flops: return (std::fabs(v) < 1e6 ? formatNumber(v) : formatScientific(v, 3)) + " FLOPs";
    case Quantity::Usd: return std::fabs(v) < 1e3 ? fmt::format("${:.2f}", v) : "$" + scaled(v, 3, false);
    case Quantity::GpuHours: return scaled(v, 3, false) + " GPU-hours";
    case Quantity::Seconds: return scaled(v, 3, false) + " s";
    case Quantity::Days: return (std::fabs(v) >= 0.1 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v)) + " days";
    case Quantity::EnergyKwh:
        if (std::fabs(v) >= 1e6)
            return fmt::format("{:.3g} GWh", v / 1e6);
        if (std::fabs(v) >= 1e3)
            return fmt::format("{:.3g} MWh", v / 1e3);
        return fmt::format("{:.3g} kWh", v);
    }
    return formatNumber(v);
}

std::string formatGrouped(double v)
{
    if (!std::isfinite(v) || std::fabs(v) >= 1e18)
        return formatNumber(v);
    std::string digits = fmt::format("{:.0f}", std::fabs(v));
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return (v < 0 ? "-" : "") + out;
}

} // namespace napkin::core
