// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonreader.h"

#include "suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace napkin::core {

namespace {
std::string formatRange(double v)
{
    if (std::fabs(v) < 1e15 && v == std::floor(v))
        return fmt::format("{:.0f}", v);
    return fmt::format("{:.10g}", v);
}
} // namespace

namespace {

// A group separator (',', '_' or ' ') may only split the integer part into groups of three digits
// ("1,024", "15_000_000", "2 048"): "1,5T" is an error, not 15T. Returns the digits without the
// separators, or nullopt when a separator is misplaced or mixed.
std::optional<std::string> stripGroupSeparators(std::string_view s)
{
    const auto isSep = [](char c) { return c == ',' || c == '_' || c == ' '; };
    const std::size_t firstSep = s.find_first_of(",_ ");
    if (firstSep == std::string_view::npos)
        return std::string(s);
    const char sep = s[firstSep];
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '-' || s[i] == '+'))
        ++i;
    const std::size_t intStart = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || isSep(s[i])))
        ++i;
    const std::string_view intPart = s.substr(intStart, i - intStart);
    if (std::any_of(s.begin() + std::ptrdiff_t(i), s.end(), isSep))
        return std::nullopt; // separators in the fraction, exponent or suffix
    // Groups: 1 to 3 digits, then groups of exactly 3, one separator character throughout.
    std::size_t group = 0, groups = 0;
    for (const char c : intPart) {
        if (isSep(c)) {
            if (c != sep || group == 0 || (groups == 0 ? group > 3 : group != 3))
                return std::nullopt;
            ++groups;
            group = 0;
        } else {
            ++group;
        }
    }
    if (groups == 0 || group != 3)
        return std::nullopt;
    std::string out(s.substr(0, intStart));
    for (char c : intPart)
        if (!isSep(c))
            out.push_back(c);
    out.append(s.substr(i));
    return out;
}

} // namespace

std::optional<double> parseQuantity(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    struct Suffix {
        std::string_view text;
        double factor;
    };
    static constexpr Suffix suffixes[] = {
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
        {"k", 1e3},     {"K", 1e3},        {"M", 1e6},           {"B", 1e9},
        {"G", 1e9},     {"T", 1e12},       {"P", 1e15}};
    // The suffix first, with one space before it allowed ("15 T", as core::formatCount writes it);
    // then the number with its group separators.
    double factor = 1.0;
    for (const auto& suf : suffixes) {
        if (text.size() > suf.text.size() && text.substr(text.size() - suf.text.size()) == suf.text) {
            factor = suf.factor;
            text.remove_suffix(suf.text.size());
            if (text.size() > 1 && text.back() == ' ')
                text.remove_suffix(1);
            break;
        }
    }
    auto stripped = stripGroupSeparators(text);
    if (!stripped || stripped->empty())
        return std::nullopt;
    const std::string& s = *stripped;
    // Plain decimals only: digits, one '.', an exponent; no "inf", "nan" or hex. std::from_chars
    // ignores the C locale, so "2.5T" means 2.5e12 under any LC_NUMERIC.
    if (std::any_of(s.begin(), s.end(),
                    [](char c) { return std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E'; }))
        return std::nullopt;
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (first != last && *first == '+')
        ++first;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v, std::chars_format::general);
    if (ec != std::errc() || ptr != last || !std::isfinite(v))
        return std::nullopt;
    const double r = v * factor;
    if (!std::isfinite(r))
        return std::nullopt;
    return r;
}

std::optional<double> parseBytes(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    struct Unit {
        std::string_view text;
        double factor;
    };
    // Longest first, so that "MiB" is not read as "B".
    static constexpr Unit units[] = {
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
        {"TB", 1e12},    {"B", 1.0}};
    double factor = 1.0;
    for (const auto& u : units) {
        if (text.size() > u.text.size() && text.substr(text.size() - u.text.size()) == u.text) {
            factor = u.factor;
            text.remove_suffix(u.text.size());
            while (!text.empty() && text.back() == ' ') // "512 MiB"
                text.remove_suffix(1);
            break;
        }
    }
    // The number itself: no quantity suffix of its own ("2KMiB" is not a size).
    if (text.empty() || std::isalpha(static_cast<unsigned char>(text.back())))
        return std::nullopt;
    const auto v = parseQuantity(text);
    if (!v || !std::isfinite(*v * factor))
        return std::nullopt;
    return *v * factor;
}

std::optional<double> jsonQuantity(const nlohmann::json& v)
{
    if (v.is_number())
        return v.get<double>();
    if (v.is_string())
        return parseQuantity(v.get<std::string>());
    return std::nullopt;
}

namespace {
void dumpBounded(const nlohmann::json& v, std::string& out, int depth)
{
    if (out.size() > 64)
        return;
    if (v.is_object()) {
        if (depth > 2) {
            out += "{...}";
            return;
        }
        out += '{';
        bool first = true;
        for (const auto& [k, x] : v.items()) {
            if (out.size() > 64)
                break;
            if (!first)
                out += ", ";
            first = false;
            out += nlohmann::json(k).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ": ";
            dumpBounded(x, out, depth + 1);
        }
        out += '}';
    } else if (v.is_array()) {
        if (depth > 2) {
            out += "[...]";
            return;
        }
        out += '[';
        bool first = true;
        for (const auto& x : v) {
            if (out.size() > 64)
                break;
            if (!first)
                out += ", ";
            first = false;
            dumpBounded(x, out, depth + 1);
        }
        out += ']';
    } else {
        out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
}
} // namespace

std::string shortDump(const nlohmann::json& v)
{
    std::string s;
    dumpBounded(v, s, 0);
    if (s.size() > 60)
        s = s.substr(0, 57) + "...";
    return s;
}

nlohmann::json parseJsonLimited(std::string_view text)
{
    Errors ignored;
    return parseJsonLimited(text, {}, ignored);
}

nlohmann::json parseJsonLimited(std::string_view text, const std::string& origin, Errors& errors)
{
    bool tooDeep = false;
    try {
        auto doc = nlohmann::json::parse(text.begin(), text.end(),
                                         [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                                             if (depth > kMaxJsonDepth)
                                                 tooDeep = true;
                                             return !tooDeep;
                                         });
        if (tooDeep) {
            errors.push_back({origin, "", "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                              "a scenario-shaped document"});
            return nlohmann::json(nlohmann::json::value_t::discarded);
        }
        return doc;
    } catch (const nlohmann::json::exception& e) {
        // parse_error, and out_of_range for numbers beyond double (1e400): both are bad input.
        // nlohmann's messages start "[json.exception.parse_error.101] parse error at line 1, ...":
        // the bracketed id is the library's, not the user's business.
        std::string_view what = e.what();
        if (what.rfind("[json.exception.", 0) == 0)
            if (const auto close = what.find("] "); close != std::string_view::npos)
                what.remove_prefix(close + 2);
        errors.push_back({origin, "", "invalid JSON: " + std::string(what), "a JSON document"});
        return nlohmann::json(nlohmann::json::value_t::discarded);
    }
}

ObjectReader::ObjectReader(const nlohmann::json& object, std::string path, Errors& errors)
    : m_path(std::move(path)), m_errors(errors)
{
    if (object.is_object())
        m_object = &object;
    else
        m_errors.push_back({m_path, shortDump(object), "must be a JSON object", "{...}"});
}

bool ObjectReader::has(std::string_view key) const
{
    return m_object && m_object->find(std::string(key)) != m_object->end();
}

std::string ObjectReader::fieldPath(std::string_view key) const
{
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
}

const nlohmann::json* ObjectReader::find(std::string_view key)
{
    m_known.emplace_back(key);
    if (!m_object)
        return nullptr;
    const auto it = m_object->find(std::string(key));
    return it == m_object->end() ? nullptr : &*it;
}

void ObjectReader::error(std::string_view key, std::string value, std::string why, std::string allowed)
{
    m_errors.push_back({fieldPath(key), std::move(value), std::move(why), std::move(allowed)});
}

std::optional<double> ObjectReader::scalar(std::string_view key, double min, double max, bool required,
                                           bool minExclusive, std::optional<double> (*parse)(std::string_view),
                                           const char* what, const std::string& allowed)
{
    const auto* v = find(key);
    if (!v || v->is_null()) {
        if (required)
            error(key, "", std::string("missing required ") + what, allowed);
        return std::nullopt;
    }
    std::optional<double> d;
    if (v->is_number())
        d = v->get<double>();
    else if (v->is_string())
        d = parse(v->get<std::string>());
    if (!d || !std::isfinite(*d)) {
        error(key, shortDump(*v), std::string("must be a ") + what, allowed);
        return std::nullopt;
    }
    if (*d < min || *d > max || (minExclusive && *d <= min)) {
        error(key, shortDump(*v), "out of range", allowed);
        return std::nullopt;
    }
    return d;
}

std::optional<double> ObjectReader::number(std::string_view key, double min, double max, bool required,
                                           bool minExclusive)
{
    const std::string allowed =
        (minExclusive ? "greater than " + formatRange(min) + " up to " : formatRange(min) + " to ") + formatRange(max);
    return scalar(key, min, max, required, minExclusive, parseQuantity, "number", allowed);
}

std::optional<double> ObjectReader::bytes(std::string_view key, double min, double max, bool required)
{
    const std::string allowed = formatRange(min) + " to " + formatRange(max) + " " + kByteSuffixes;
    return scalar(key, min, max, required, false, parseBytes, "size in bytes", allowed);
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max,
                                                  bool required)
{
    const auto* v = find(key);
    const std::string allowed = "an integer from " + formatRange(double(min)) + " to " + formatRange(double(max));
    if (!v || v->is_null()) {
        if (required)
            error(key, "", "missing required integer", allowed);
        return std::nullopt;
    }
    std::optional<double> d;
    if (v->is_number())
        d = v->get<double>();
    else if (v->is_string())
        d = parseQuantity(v->get<std::string>());
    if (!d || !std::isfinite(*d) || *d != std::floor(*d)) {
        error(key, shortDump(*v), "must be an integer", allowed);
        return std::nullopt;
    }
    if (*d < double(min) || *d > double(max)) {
        error(key, shortDump(*v), "out of range", allowed);
        return std::nullopt;
    }
    return static_cast<std::int64_t>(*d);
}

std::optional<bool> ObjectReader::boolean(std::string_view key, bool required)
{
    const auto* v = find(key);
    if (!v || v->is_null()) {
        if (required)
            error(key, "", "missing required boolean", "true or false");
        return std::nullopt;
    }
    if (!v->is_boolean()) {
        error(key, shortDump(*v), "must be a boolean", "true or false");
        return std::nullopt;
    }
    return v->get<bool>();
}

std::optional<std::string> ObjectReader::string(std::string_view key, bool required)
{
    const auto* v = find(key);
    if (!v || v->is_null()) {
        if (required)
            error(key, "", "missing required string");
        return std::nullopt;
    }
    if (!v->is_string()) {
        error(key, shortDump(*v), "must be a string");
        return std::nullopt;
    }
    return v->get<std::string>();
}

const nlohmann::json* ObjectReader::child(std::string_view key) { return find(key); }

void ObjectReader::accept(std::initializer_list<std::string_view> keys)
{
    for (auto k : keys)
        m_known.emplace_back(k);
}

void ObjectReader::finish()
{
    if (!m_object)
        return;
    std::vector<std::string> known = m_known;
    std::sort(known.begin(), known.end());
    known.erase(std::unique(known.begin(), known.end()), known.end());
    for (const auto& [key, value] : m_object->items()) {
        if (std::binary_search(known.begin(), known.end(), key))
            continue;
        std::string allowed;
        for (const auto& k : known)
            allowed += (allowed.empty() ? "" : ", ") + k;
        m_errors.push_back({fieldPath(key), shortDump(value), "unknown key" + didYouMean(key, known), allowed});
    }
}

} // namespace napkin::core
