// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "errors.h"

#include <fmt/format.h>

namespace napkin::core {

namespace {
// One error, one line: control characters from user text are shown escaped.
std::string oneLine(const std::string& in)
{
    std::string out;
    for (unsigned char c : in) {
        if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            out += fmt::format("\\x{:02x}", unsigned(c));
        } else
            out += char(c);
    }
    return out;
}
} // namespace

std::string describe(const UserError& e)
{
    std::string s = e.field.empty() ? std::string("scenario") : e.field;
    if (!e.value.empty())
        s += " = " + e.value;
    s += ": " + e.why;
    if (!e.allowed.empty())
        s += " (allowed: " + e.allowed + ")";
    return oneLine(s);
}

} // namespace napkin::core
