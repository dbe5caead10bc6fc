// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A small JSON-Schema validator for the tests (type, required, properties, items, enum, minimum).

#include <nlohmann/json.hpp>

#include <QString>

#include <cmath>
#include <string>

namespace napkin::test {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// A JSON-Schema validator for exactly: type, required, properties, items, enum, minimum (plus the
// annotations $schema, title, description, which it ignores). Any other keyword is an error, so that
// the schema cannot silently rely on something this validator does not check.

inline QString escapePointerToken(const std::string& key)
{
    QString k = QString::fromStdString(key);
    k.replace(QLatin1Char('~'), QStringLiteral("~0"));
    k.replace(QLatin1Char('/'), QStringLiteral("~1"));
    return k;
}

inline bool hasType(const json& v, const std::string& type)
{
    if (type == "object")
        return v.is_object();
    if (type == "array")
        return v.is_array();
    if (type == "string")
        return v.is_string();
    if (type == "boolean")
        return v.is_boolean();
    if (type == "null")
        return v.is_null();
    if (type == "number")
        return v.is_number();
    if (type == "integer") {
        if (v.is_number_integer())
            return true;
        if (!v.is_number_float())
            return false;
        const double d = v.get<double>();
        return std::isfinite(d) && d == std::floor(d);
    }
    return false;
}

// "" when `value` satisfies `schema`; else "POINTER: what is wrong" for the first violation found
// (depth first: type, enum, minimum, required, properties, items).
inline QString validate(const json& schema, const json& value, const QString& pointer = QString())
{
    const QString where = pointer.isEmpty() ? QStringLiteral("(root)") : pointer;
    if (!schema.is_object())
        return where + QStringLiteral(": schema is not an object");
    for (const auto& [keyword, _] : schema.items()) {
        static const std::vector<std::string> known{"type",    "required", "properties", "items",      "enum",
                                                    "minimum", "$schema",  "title",      "description"};
        if (std::find(known.begin(), known.end(), keyword) == known.end())
            return where + QStringLiteral(": unsupported schema keyword ") + QString::fromStdString(keyword);
    }
    if (schema.contains("type")) {
        const json& t = schema["type"];
        bool ok = false;
        if (t.is_string())
            ok = hasType(value, t.get<std::string>());
        else
            for (const auto& one : t)
                ok = ok || hasType(value, one.get<std::string>());
        if (!ok)
            return where + QStringLiteral(": expected type ") + QString::fromStdString(t.dump()) +
                   QStringLiteral(", got ") + QString::fromStdString(value.dump());
    }
    if (schema.contains("enum")) {
        bool found = false;
        for (const auto& e : schema["enum"])
            found = found || e == value;
        if (!found)
            return where + QStringLiteral(": ") + QString::fromStdString(value.dump()) +
                   QStringLiteral(" not in enum ") + QString::fromStdString(schema["enum"].dump());
    }
    if (schema.contains("minimum") && value.is_number()) {
        if (!(value.get<double>() >= schema["minimum"].get<double>()))
            return where + QStringLiteral(": ") + QString::fromStdString(value.dump()) +
                   QStringLiteral(" is below the minimum ") + QString::fromStdString(schema["minimum"].dump());
    }
    if (value.is_object()) {
        if (schema.contains("required"))
            for (const auto& r : schema["required"])
                if (!value.contains(r.get<std::string>()))
                    return pointer + QStringLiteral("/") + escapePointerToken(r.get<std::string>()) +
                           QStringLiteral(": required but missing");
        if (schema.contains("properties"))
            for (const auto& [key, sub] : schema["properties"].items())
                if (value.contains(key))
                    if (auto e = validate(sub, value[key], pointer + QStringLiteral("/") + escapePointerToken(key));
                        !e.isEmpty())
                        return e;
    }
    if (value.is_array() && schema.contains("items"))
        for (std::size_t i = 0; i < value.size(); ++i)
            if (auto e = validate(schema["items"], value[i], pointer + QStringLiteral("/") + QString::number(i));
                !e.isEmpty())
                return e;
    return {};
}

} // namespace napkin::test
