// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// "Did you mean ...?" for ids, keys and choices people mistype: Napkin's own code, so every
// front end gets the same suggestion from the same candidates.

#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

// The candidate closest to `given` by optimal-string-alignment edit distance (case-insensitive),
// when it is close enough to be what was meant: at most 1 edit for up to 4 characters, 2 up to 8,
// 3 beyond; a candidate that starts with `given` (3+ characters) also counts. "" when none is.
std::string closestMatch(std::string_view given, const std::vector<std::string>& candidates);

// " (did you mean X?)" or "".
std::string didYouMean(std::string_view given, const std::vector<std::string>& candidates);

} // namespace napkin::core
