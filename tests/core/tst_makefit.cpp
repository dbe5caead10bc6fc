// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// "Make it fit" (core/makefit.h): the RTX 4090 question of issue 17 gets a fitting recipe, a
// pre-training plan gets changes that keep its training first, and every suggestion is a full re-plan.

#include "testsupport.h"

#include "estimate.h"
#include "makefit.h"

#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

using namespace napkin;

namespace {

// The document with a change's keys set, planned as suggest plans it (predicted step).
core::Plan replanned(const nlohmann::json& doc, const nlohmann::json& set)
{
    std::vector<std::string> sets;
    nlohmann::json d = doc;
    core::Errors errors;
    for (const auto& [k, v] : set.items())
        core::applySet(d, k + "=" + v.dump(), errors);
    core::applySet(d, "step_time.mode=\"predicted\"", errors);
    [&] { QVERIFY(errors.empty()); }();
    return core::estimate(test::parsed(d));
}

} // namespace

class TestMakeFit : public QObject {
    Q_OBJECT
private slots:
    // Llama 2 7B, 2,048 tokens, full recompute, one RTX 4090: 87 GB of full fine-tuning. The answer
    // leads with LoRA / QLoRA on the same card (issue 17), and each figure is the re-plan's own.
    void rtx4090GetsAFittingRecipe()
    {
        const auto doc = test::documentWith({"training.seq_len=2048", "training.recompute=full",
                                             "training.global_batch=8", "cluster.gpu=rtx-4090", "cluster.gpus=1"});
        const auto r = core::suggestFits(doc);
        QVERIFY(r.valid);
        QVERIFY(!r.baselineFits);
        QVERIFY(r.baselineTotal > 80e9);
        QVERIFY(r.changes.size() >= 2);
        const auto& first = r.changes.front();
        QVERIFY(first.fits);
        QCOMPARE(first.set["finetune.method"].get<std::string>(), std::string("lora"));
        QCOMPARE(r.changes[1].set["finetune.method"].get<std::string>(), std::string("qlora"));
        for (const auto& c : r.changes) {
            const auto p = replanned(doc, c.set);
            QCOMPARE(c.total, p.memory.total);
            QCOMPARE(c.fits, p.memory.fits);
            QCOMPARE(c.stepSeconds, p.time.stepSeconds);
            QCOMPARE(c.memorySaved, r.baselineTotal - p.memory.total);
        }
        const auto j = core::fitSuggestionsToJson(r);
        QCOMPARE(j["schema"].get<std::string>(), std::string("napkin.suggest/1"));
        for (const char* key : {"set", "memory_saved_bytes", "step_seconds_delta", "fits"})
            QVERIFY2(j["changes"][0].contains(key), key);
    }

    // Pre-training Llama 3 70B on 8 H100s: no single change fits; the first fitting combination keeps
    // full training (no finetune key) and the 8 GPUs.
    void pretrainingKeepsItsTraining()
    {
        const auto doc = test::documentWith({"model.preset=llama-3-70b", "cluster.gpus=8"});
        const auto r = core::suggestFits(doc);
        QVERIFY(!r.baselineFits);
        QVERIFY(!r.changes.empty());
        const auto& first = r.changes.front();
        QVERIFY(first.fits);
        QVERIFY(!first.set.contains("finetune.method"));
        QVERIFY(!first.set.contains("cluster.gpus") && !first.set.contains("cluster.gpu"));
        QVERIFY(first.set.size() >= 2); // a combination
        QVERIFY(replanned(doc, first.set).memory.fits);
    }

    // Context-parallel ranks hold the same parameters, so ZeRO shards over them too: Llama 3 70B on 8
    // H100s as CP 8 (one data-parallel rank) without ZeRO is offered ZeRO-1 to 3 over the 8 ranks, and
    // the ZeRO-1 re-plan holds 7/8 of the Adam states less.
    void zeroShardsOverContextParallelRanks()
    {
        const auto doc = test::documentWith({"model.preset=llama-3-70b", "cluster.gpus=8", "parallel.cp=8",
                                             "parallel.zero=0", "training.seq_len=65536", "training.global_batch=1"});
        const auto r = core::suggestFits(doc, {}, 100);
        QVERIFY(r.valid);
        const auto z1 = std::find_if(r.changes.begin(), r.changes.end(), [](const core::FitChange& c) {
            return c.set.size() == 1 && c.set.contains("parallel.zero") && c.set["parallel.zero"] == 1;
        });
        QVERIFY(z1 != r.changes.end());
        QVERIFY2(z1->description.find("over the 8 data- and context-parallel ranks") != std::string::npos,
                 z1->description.c_str());
        const auto before = replanned(doc, nlohmann::json::object()), after = replanned(doc, z1->set);
        QCOMPARE(after.memory.optimizerStates, before.memory.optimizerStates / 8);
    }

    // Mixtral 8x7B on 16 H100s at EP 2 is short; spreading the experts is a change that keeps the
    // training and the GPUs: EP 4 and EP 8 are offered (EP must divide the 8 experts and EP · ETP the
    // 16 ranks), and EP 8 holds 32 layers × 8 experts × 3 · 4096 · 14336 × (1/2 − 1/8) = 16.91e9
    // fewer parameters per rank. A dense model gets no expert change.
    void mixturesOfExpertsSpreadTheirExperts()
    {
        const auto doc = test::documentWith({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=2"});
        const auto r = core::suggestFits(doc, {}, 100);
        QVERIFY(!r.baselineFits);
        const auto base = replanned(doc, nlohmann::json::object());
        std::vector<int> eps;
        for (const auto& c : r.changes) {
            if (!c.set.contains("parallel.ep") || c.set.size() != 1)
                continue;
            const int ep = c.set["parallel.ep"].get<int>();
            eps.push_back(ep);
            const auto p = replanned(doc, c.set);
            QCOMPARE(c.total, p.memory.total);
            const double expertParams = 32.0 * 8 * 3 * 4096 * 14336;
            NAPKIN_COMPARE_REL(base.memory.paramsPerRank - p.memory.paramsPerRank, expertParams * (1.0 / 2 - 1.0 / ep),
                               1e-12);
            QVERIFY(c.memorySaved > 0);
        }
        std::sort(eps.begin(), eps.end());
        QCOMPARE(eps, (std::vector<int>{4, 8}));
        // Experts whole on each rank under TP 2: splitting them over the TP ranks is offered too.
        const auto etpDoc = test::documentWith(
            {"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.tp=2", "parallel.ep=2", "parallel.etp=1"});
        const auto e = core::suggestFits(etpDoc, {}, 100);
        QVERIFY(std::any_of(e.changes.begin(), e.changes.end(), [](const core::FitChange& c) {
            return c.set.contains("parallel.etp") && c.set["parallel.etp"] == 2;
        }));
        for (const auto& c :
             core::suggestFits(test::documentWith({"model.preset=llama-3-70b", "cluster.gpus=8"}), {}, 100).changes)
            QVERIFY(!c.set.contains("parallel.ep") && !c.set.contains("parallel.etp"));
    }

    // A plan that fits is said to fit; every listed change still saves memory.
    void alreadyFits()
    {
        const auto r = core::suggestFits(test::documentWith({}));
        QVERIFY(r.baselineFits);
        for (const auto& c : r.changes)
            QVERIFY(c.memorySaved > 0);
    }
};

QTEST_APPLESS_MAIN(TestMakeFit)
#include "tst_makefit.moc"
