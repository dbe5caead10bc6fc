// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "suggest.h"

#include <algorithm>
#include <cctype>

namespace napkin::core {

namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Levenshtein with adjacent transpositions (optimal string alignment).
std::size_t editDistance(const std::string& a, const std::string& b)
{
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

} // namespace

std::string closestMatch(std::string_view given, const std::vector<std::string>& candidates)
{
    if (given.empty() || given.size() > 64)
        return {};
    const std::string g = lower(given);
    const std::size_t limit = g.size() <= 4 ? 1 : (g.size() <= 8 ? 2 : 3);
    std::string best;
    std::size_t bestDistance = limit + 1;
    for (const auto& c : candidates) {
        const std::string lc = lower(c);
        if (lc == g)
            return c;
        std::size_t dist = editDistance(g, lc);
        if (g.size() >= 3 && lc.rfind(g, 0) == 0)
            dist = std::min(dist, limit); // a prefix of the id
        if (dist < bestDistance) {
            bestDistance = dist;
            best = c;
        }
    }
    return bestDistance <= limit ? best : std::string();
}

std::string didYouMean(std::string_view given, const std::vector<std::string>& candidates)
{
    const std::string m = closestMatch(given, candidates);
    return m.empty() ? std::string() : " (did you mean " + m + "?)";
}

} // namespace napkin::core
