// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Shared helpers for the core tests: golden facts from tests/data and scenarios from --set lists.

#include "estimate.h"
#include "scenario.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::test {

// The derivation of one plan quantity ("time.mfu_ceiling"), or nullptr.
inline const core::Derivation* derivation(const core::Plan& p, std::string_view quantity)
{
    for (const auto& d : p.derivations)
        if (quantity == d.quantity)
            return &d;
    return nullptr;
}

inline const nlohmann::json& golden()
{
    static const nlohmann::json g = [] {
        std::ifstream in(std::string(NAPKIN_TEST_DATA) + "/golden.json");
        return nlohmann::json::parse(in);
    }();
    return g;
}

// The default scenario document with PATH=VALUE overrides applied.
inline nlohmann::json documentWith(const std::vector<std::string>& sets)
{
    nlohmann::json doc = core::defaultScenarioJson();
    core::Errors errors;
    for (const auto& s : sets)
        core::applySet(doc, s, errors);
    [&] { QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str()); }();
    return doc;
}

// A document parsed strictly. Fails the test on errors.
inline core::Scenario parsed(const nlohmann::json& doc)
{
    core::Errors errors;
    auto sc = core::parseScenario(doc, core::builtinCatalog(), errors, NAPKIN_TEST_DATA);
    if (!errors.empty())
        qWarning("%s", core::describe(errors.front()).c_str());
    [&] { QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str()); }();
    return sc;
}

// The default scenario with PATH=VALUE overrides, parsed strictly. Fails the test on errors.
inline core::Scenario scenario(const std::vector<std::string>& sets) { return parsed(documentWith(sets)); }
inline core::Scenario scenario(std::initializer_list<std::string> sets)
{
    return scenario(std::vector<std::string>(sets));
}

// Errors of a scenario built like scenario() (empty when valid).
inline core::Errors scenarioErrors(const std::vector<std::string>& sets)
{
    nlohmann::json doc = core::defaultScenarioJson();
    core::Errors errors;
    for (const auto& s : sets)
        core::applySet(doc, s, errors);
    core::parseScenario(doc, core::builtinCatalog(), errors, NAPKIN_TEST_DATA);
    return errors;
}
inline core::Errors scenarioErrors(std::initializer_list<std::string> sets)
{
    return scenarioErrors(std::vector<std::string>(sets));
}

// The text of a calibration profile in tests/data/calibration.
inline std::string calibrationFixture(const std::string& name)
{
    std::ifstream in(std::string(NAPKIN_TEST_DATA) + "/calibration/" + name, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline bool near(double got, double want, double rel) { return std::abs(got - want) <= rel * std::abs(want); }

} // namespace napkin::test

#define NAPKIN_COMPARE_REL(got, want, rel)                                                                             \
    QVERIFY2(                                                                                                          \
        napkin::test::near((got), (want), (rel)),                                                                      \
        qPrintable(                                                                                                    \
            QStringLiteral("got %1, want %2 (rel tol %3)").arg((got), 0, 'g', 12).arg((want), 0, 'g', 12).arg(rel)))
