// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// How far to trust a prediction (core/accuracy.h): the similarity score by hand, and the closest
// validated runs of a scenario that is one of them.
#include "accuracy.h"
#include "catalog.h"
#include "testsupport.h"

#include <QtTest>

#include <cmath>

using namespace napkin;

using test::scenario;

class TestAccuracy : public QObject {
    Q_OBJECT
private slots:
    // Every criterion met: 3 (GPU) + 2 (size) + 1 (dense) + 1 (GPU count) + 0.5 + 0.5 + 0.5 = 8.5.
    void identicalScoresEverything()
    {
        const auto a = scenario({"model.preset=llama-2-7b", "cluster.gpus=64"});
        std::vector<std::string> alike;
        QCOMPARE(core::similarityScore(a, a, &alike), 8.5);
        QCOMPARE(int(alike.size()), 7);
    }

    // Llama 2 7B vs 70B (6.738e9 vs 6.898e10 parameters: log10 ratio 1.01, past the 10x limit: 0),
    // 64 vs 6,400 GPUs (log10 ratio 2: 0), on an A100 instead of the H100: 1 (dense) + 0.5 x 3 = 2.5.
    void differentSizeCountAndGpu()
    {
        const auto a = scenario({"model.preset=llama-2-7b", "cluster.gpus=64"});
        const auto b = scenario({"model.preset=llama-2-70b", "cluster.gpus=6400", "cluster.gpu=a100-sxm4-80gb"});
        QCOMPARE(core::similarityScore(a, b), 2.5);
        // 64 vs 640 GPUs: log10 ratio 1, 1 - 1/2 = 0.5 of the GPU-count point.
        const auto c = scenario({"model.preset=llama-2-7b", "cluster.gpus=640"});
        QCOMPARE(core::similarityScore(a, c), 8.0);
    }

    // A scenario that is a validated run scores 8.5 against it and comes first; the band spans the
    // closest runs' errors.
    void validatedRunComesFirst()
    {
        const auto& cases = core::builtinValidationSet();
        QVERIFY(!cases.empty());
        const auto results = core::runValidation(cases);
        const auto& c = cases.front();
        auto doc = core::mergeScenario(core::defaultScenarioJson(), c.scenario);
        doc["step_time"]["mode"] = "predicted";
        if (!c.convention.empty())
            doc["flops"]["convention"] = c.convention;
        core::Errors errors;
        const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
        QVERIFY(errors.empty());
        const auto a = core::accuracyFor(sc, results, 5);
        QVERIFY(a.valid);
        QCOMPARE(int(a.closest.size()), 5);
        QCOMPARE(a.closest.front().score, 8.5);
        QCOMPARE(a.closest.front().result->c->id, c.id);
        for (std::size_t i = 1; i < a.closest.size(); ++i)
            QVERIFY(a.closest[i - 1].score >= a.closest[i].score);
        QVERIFY(a.low <= a.median && a.median <= a.high);
        double lo = 1e9, hi = -1e9;
        for (const auto& s : a.closest) {
            lo = std::min(lo, s.result->error);
            hi = std::max(hi, s.result->error);
        }
        QCOMPARE(a.low, lo);
        QCOMPARE(a.high, hi);
        QVERIFY(QString::fromStdString(core::accuracyText(a)).contains(QStringLiteral("5 most similar")));
    }
};

QTEST_GUILESS_MAIN(TestAccuracy)
#include "tst_accuracy.moc"
