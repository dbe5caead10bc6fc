// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Strict, error-collecting reads of JSON objects: every key read is remembered, and finish()
// reports any key nobody asked for, by name, with the allowed keys. Numbers may be written as
// JSON numbers or as quantity strings ("7B", "15T", "2e12", "1,024").

#include "errors.h"
#include "suggest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace napkin::core {

// "7B" -> 7e9, "15T" -> 1.5e13, "4k" -> 4000, "2Ki" -> 2048, "1,024" -> 1024, "2e12" -> 2e12.
// Decimal suffixes k M B/G T P; binary Ki Mi Gi Ti. Group separators (',', '_', ' ') only between
// groups of three digits of the integer part ("1,5T" is refused). Locale-independent
// (std::from_chars). Returns nullopt for anything else.
std::optional<double> parseQuantity(std::string_view text);

// Byte sizes: a plain number of bytes, or one with kB, MB, GB, TB (10^3 ... 10^12; KB is kB),
// KiB, MiB, GiB, TiB (2^10 ... 2^40) or B (bytes) - "B" is a byte here, never a billion. The same
// group separators as parseQuantity. nullopt for anything else.
std::optional<double> parseBytes(std::string_view text);
constexpr const char* kByteSuffixes = "bytes, or a number with kB, MB, GB, TB, KiB, MiB, GiB, TiB or B (bytes)";

// A JSON number, or a quantity string read the way ObjectReader::number reads it ("15T", "8Ki",
// "1,024"): what the scenario parser will use, for front ends that show a document's values.
std::optional<double> jsonQuantity(const nlohmann::json& value);

// Short JSON rendering of a value for error messages (bounded: never recurses deeply).
std::string shortDump(const nlohmann::json& v);

// Parses JSON text; documents nested deeper than kMaxJsonDepth are refused (recursive copies and
// dumps would otherwise exhaust the stack). On failure adds an error naming origin and returns a
// discarded value.
constexpr int kMaxJsonDepth = 64;
nlohmann::json parseJsonLimited(std::string_view text, const std::string& origin, Errors& errors);
// The same without error reporting: a discarded value when invalid or too deep.
nlohmann::json parseJsonLimited(std::string_view text);

class ObjectReader {
public:
    ObjectReader(const nlohmann::json& object, std::string path, Errors& errors);

    bool isObject() const { return m_object != nullptr; }
    bool has(std::string_view key) const;
    std::string fieldPath(std::string_view key) const;

    // Range checks are inclusive unless minExclusive is set. A missing key yields nullopt,
    // with an error when required.
    std::optional<double> number(std::string_view key, double min, double max, bool required = false,
                                 bool minExclusive = false);
    // A byte size (parseBytes for strings): "512 MiB", "16GB", 2e9.
    std::optional<double> bytes(std::string_view key, double min, double max, bool required = false);
    std::optional<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max,
                                        bool required = false);
    std::optional<bool> boolean(std::string_view key, bool required = false);
    std::optional<std::string> string(std::string_view key, bool required = false);

    template <typename E>
    std::optional<E> choice(std::string_view key, const std::vector<std::pair<std::string_view, E>>& options,
                            bool required = false)
    {
        std::string allowed;
        for (const auto& [name, value] : options)
            allowed += (allowed.empty() ? "" : ", ") + std::string(name);
        // A number or a boolean where a choice belongs names the choices too, not only the type.
        if (const auto* raw = child(key); raw && !raw->is_null() && !raw->is_string()) {
            error(key, shortDump(*raw), "must be one of these strings", allowed);
            return std::nullopt;
        }
        const auto s = string(key, required);
        if (!s)
            return std::nullopt;
        std::vector<std::string> names;
        for (const auto& [name, value] : options) {
            if (name == *s)
                return value;
            names.emplace_back(name);
        }
        error(key, shortDump(*s), "unknown value" + didYouMean(*s, names), allowed);
        return std::nullopt;
    }

    // The raw child (marks the key as known); nullptr when missing.
    const nlohmann::json* child(std::string_view key);
    // Marks keys as known without reading them (handled elsewhere).
    void accept(std::initializer_list<std::string_view> keys);
    template <typename Range>
    void acceptAll(const Range& keys)
    {
        for (const auto& k : keys)
            accept({std::string_view(k)});
    }

    void error(std::string_view key, std::string value, std::string why, std::string allowed = {});
    Errors& errors() { return m_errors; }

private:
    // A JSON number, or a string read with `parse`, checked against [min, max].
    std::optional<double> scalar(std::string_view key, double min, double max, bool required, bool minExclusive,
                                 std::optional<double> (*parse)(std::string_view), const char* what,
                                 const std::string& allowed);

public:
    // Reports every key that was not read. Call once after all reads.
    void finish();

private:
    const nlohmann::json* find(std::string_view key);

    const nlohmann::json* m_object = nullptr;
    std::string m_path;
    Errors& m_errors;
    std::vector<std::string> m_known;
};

} // namespace napkin::core
