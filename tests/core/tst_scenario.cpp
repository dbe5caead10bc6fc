// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Scenario loading: defaults, merging, --set, quantity strings, strictness.
#include "testsupport.h"

#include "format.h"
#include "presets.h"
#include "sensitivity.h"
#include "suggest.h"
#include "jsonreader.h"

using namespace napkin;
using napkin::test::scenario;
using napkin::test::scenarioErrors;

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    void quantities_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("value");
        QTest::newRow("7B") << QStringLiteral("7B") << 7e9;
        QTest::newRow("15T") << QStringLiteral("15T") << 15e12;
        QTest::newRow("2e12") << QStringLiteral("2e12") << 2e12;
        QTest::newRow("4k") << QStringLiteral("4k") << 4000.0;
        QTest::newRow("2Ki") << QStringLiteral("2Ki") << 2048.0;
        QTest::newRow("1,024") << QStringLiteral("1,024") << 1024.0;
        QTest::newRow("1.5M") << QStringLiteral("1.5M") << 1.5e6;
        QTest::newRow("15_000_000") << QStringLiteral("15_000_000") << 15e6;
        QTest::newRow("2 048") << QStringLiteral("2 048") << 2048.0;
        QTest::newRow("1,234,567.5") << QStringLiteral("1,234,567.5") << 1234567.5;
        QTest::newRow("+8Ki") << QStringLiteral("+8Ki") << 8192.0;
        QTest::newRow("15 T (as formatCount writes it)") << QStringLiteral("15 T") << 15e12;
    }
    void quantities()
    {
        QFETCH(QString, text);
        QFETCH(double, value);
        QCOMPARE(core::parseQuantity(text.toStdString()).value_or(-1), value);
    }
    void byteSizes()
    {
        // Byte-valued inputs: decimal and binary units; a bare B is a byte, never a billion.
        QCOMPARE(core::parseBytes("512 MiB").value_or(-1), 512.0 * 1048576);
        QCOMPARE(core::parseBytes("16GB").value_or(-1), 16e9);
        QCOMPARE(core::parseBytes("4 KiB").value_or(-1), 4096.0);
        QCOMPARE(core::parseBytes("512B").value_or(-1), 512.0);
        QCOMPARE(core::parseBytes("2e9").value_or(-1), 2e9);
        QCOMPARE(core::parseBytes("1,024 kB").value_or(-1), 1024e3);
        for (const char* bad : {"16G", "2KMiB", "GiB", "1,5 GB", "16 gigabytes", "-"})
            QVERIFY2(!core::parseBytes(bad), bad);
        QCOMPARE(core::parseQuantity("7B").value_or(-1), 7e9); // counts keep B = billion
        const auto sc = test::scenario({"overhead.workspace_bytes=\"256 MiB\""});
        QCOMPARE(sc.overhead.workspaceBytes, 256.0 * 1048576);
        const auto errors = test::scenarioErrors({"overhead.workspace_bytes=\"256M\""});
        QCOMPARE(errors.front().field, std::string("overhead.workspace_bytes"));
        QVERIFY(errors.front().allowed.find("KiB, MiB, GiB") != std::string::npos);
    }

    void notQuantities()
    {
        // Group separators only between groups of three digits of the integer part, one kind at a time.
        for (const char* s : {"", "abc", "7X", "nan", "inf", "0x10", "1e999", "B", "1,5T", "1,0245", ",024", "1,024,",
                              "1,02", "1_024,000", "1.5,0", "1e1,000", "7  B", "12345,678", "1,,024"})
            QVERIFY2(!core::parseQuantity(s), s);
    }

    void planNamesFollowThePlan()
    {
        // No name written: the title says what the plan is, whatever was changed (issue 13: the
        // default document's "Llama 2 7B on 64 H100 SXM" used to survive every --set).
        const auto p =
            core::estimate(test::scenario({"model.preset=llama-3-70b", "cluster.gpus=1024", "training.tokens=15T"}));
        QCOMPARE(p.scenarioName, std::string());
        QCOMPARE(p.title(), std::string("Llama 3 70B, 15 T tokens, 1,024 × NVIDIA H100 SXM5 80GB"));
        QVERIFY(core::planToText(p).rfind("Napkin plan: Llama 3 70B, 15 T tokens, 1,024 × NVIDIA H100 SXM5 80GB\n",
                                          0) == 0);
        QCOMPARE(core::planToJson(p)["scenario"].get<std::string>(), p.derivedName());
        QCOMPARE(core::planToJson(p)["scenario_name_given"].get<bool>(), false);
        // A name the user wrote is kept; when it no longer says what the plan is, the text says both.
        const auto named =
            core::estimate(test::scenario({"name=\"Our 70B run\"", "model.preset=llama-3-70b", "cluster.gpus=512"}));
        QCOMPARE(named.title(), std::string("Our 70B run"));
        const std::string text = core::planToText(named);
        QVERIFY(
            text.find(
                "Napkin plan: Our 70B run\n  plan         Llama 3 70B, 2 T tokens, 512 × NVIDIA H100 SXM5 80GB\n") ==
            0);
        // What needs attention comes before the derivations.
        const std::string big =
            core::planToText(core::estimate(test::scenario({"model.preset=llama-2-70b", "cluster.gpus=1"})));
        QVERIFY(big.find("\nWarnings\n") != std::string::npos);
        QVERIFY(big.find("\nWarnings\n") < big.find("\nDerivations\n"));
        // Numbers as people write them, one function for every front end.
        using Q = core::Quantity;
        QCOMPARE(core::humanNumber(12.84e6, Q::Usd), std::string("$12.8 M"));
        QCOMPARE(core::humanNumber(68.5, Q::Usd), std::string("$68.50"));
        QCOMPARE(core::humanNumber(5.14e6, Q::GpuHours), std::string("5.14 M GPU-hours"));
        QCOMPARE(core::humanNumber(70.55e9, Q::Parameters), std::string("70.55 B parameters"));
        QCOMPARE(core::humanNumber(15e12, Q::Tokens), std::string("15 T tokens"));
        QCOMPARE(core::humanNumber(7.3e24, Q::Flops), std::string("7.3e24 FLOPs"));
        QCOMPARE(core::humanNumber(432, Q::Flops), std::string("432 FLOPs"));
        QCOMPARE(core::humanNumber(143.94, Q::Days), std::string("143.9 days"));
        QCOMPARE(core::humanNumber(19254, Q::EnergyKwh), std::string("19.3 MWh"));
        const std::string plain = core::planToText(core::estimate(test::scenario({})));
        QVERIFY(plain.substr(0, plain.find("Derivations")).find("e+") == std::string::npos); // never 1.284e+07
        // Human counts.
        QCOMPARE(core::formatCount(70.55e9), std::string("70.55 B"));
        QCOMPARE(core::formatCount(2.5e12), std::string("2.5 T"));
        QCOMPARE(core::formatCount(512), std::string("512"));
        QCOMPARE(core::formatGrouped(16384), std::string("16,384"));
        QCOMPARE(core::formatGrouped(1e7), std::string("10,000,000"));
        // A derivation's substituted values (issue 20: "13476831232 + … + 3.698e+09" was unreadable):
        // exact below 10^7, engineering notation with four significant digits above.
        QCOMPARE(core::formatTerm(128256), std::string("128256"));
        QCOMPARE(core::formatTerm(13476831232), std::string("13.48e9"));
        QCOMPARE(core::formatTerm(3.6976e9), std::string("3.698e9"));
        QCOMPARE(core::formatTerm(70e9), std::string("70e9"));
        QCOMPARE(core::formatTerm(15e12), std::string("15e12"));
        QCOMPARE(core::formatTerm(999.96e6), std::string("1e9")); // rounds up into the next exponent
        QCOMPARE(core::formatTerm(-2.5e-4), std::string("-0.00025"));
        QCOMPARE(core::formatTerm(0.876), std::string("0.876"));
        // The result with its unit: bytes both readable and exact, counts grouped, rates engineering.
        core::Derivation d;
        d.unit = "bytes";
        d.value = 13476831232;
        QCOMPARE(core::resultText(d), std::string("13.48 GB (13,476,831,232 bytes)"));
        d.unit = "parameters";
        d.value = 6738415616;
        QCOMPARE(core::resultText(d), std::string("6,738,415,616 parameters"));
        d.unit = "FLOP/s";
        d.value = 989.5e12;
        QCOMPARE(core::resultText(d), std::string("989.5e12 FLOP/s"));
        const auto derivations = plain.substr(plain.find("Derivations"));
        QVERIFY(derivations.find("e+") == std::string::npos);
        QVERIFY(derivations.find("13476831232") == std::string::npos);
    }

    void whatWouldChangeTheAnswerIsAFullPlan()
    {
        // issue 13: cluster.gpus 1024 -> 512 showed the same GB, because the edit kept the parsed
        // data-parallel size. Every line must equal a full plan of the document at the new value.
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        for (const char* s :
             {"model.preset=llama-3-70b", "cluster.gpus=1024", "parallel.tp=8", "training.global_batch=2048"})
            core::applySet(doc, s, errors);
        QVERIFY(errors.empty());
        const auto lines = core::sensitivities(doc, 20);
        QVERIFY(lines.size() >= 5);
        auto planAt = [&](std::initializer_list<std::string> sets) {
            nlohmann::json d = doc;
            core::Errors e;
            for (const auto& x : sets)
                core::applySet(d, x, e);
            return core::estimate(core::parseScenario(d, core::builtinCatalog(), e));
        };
        for (const auto& l : lines) {
            const auto arrow = l.change.find(" → ");
            const std::string to = l.change.substr(arrow + std::string(" → ").size());
            std::initializer_list<std::string> none{};
            core::Plan p = planAt(none);
            if (l.input == "cluster.gpus") {
                p = planAt({"cluster.gpus=" + to, "parallel.dp=\"auto\""});
            } else if (l.input == "training.micro_batch") {
                p = planAt({"training.micro_batch=" + to});
            } else if (l.input == "training.recompute") {
                p = planAt({"training.recompute=\"" + to + "\""});
            } else {
                p = planAt({l.input + "=" + to});
            }
            QCOMPARE(l.memoryAfter, p.memory.total);
            QCOMPARE(l.daysAfter, p.time.days);
        }
        // Changing the GPU count moves the ZeRO-1 optimizer shard: the memory line moves with it.
        const auto all = core::sensitivities(doc, 20);
        const auto half = std::find_if(all.begin(), all.end(), [](const auto& l) { return l.input == "cluster.gpus"; });
        QVERIFY(half != all.end());
        QVERIFY(half->memoryAfter != half->memoryBefore);
        const auto at512 = planAt({"cluster.gpus=512", "parallel.dp=\"auto\""});
        const auto at1024 = planAt({});
        QVERIFY(at512.memory.optimizerStates > 1.99 * at1024.memory.optimizerStates);
        // In the predicted step-time mode MFU is an output: no cluster.mfu line.
        core::applySet(doc, "step_time.mode=predicted", errors);
        for (const auto& l : core::sensitivities(doc, 20))
            QVERIFY(l.input != "cluster.mfu");
    }

    void suggestionsAndAliases()
    {
        // Did you mean ...? for ids, keys and choices; aliases people type map through the catalogue.
        QCOMPARE(core::closestMatch("h10o-sxm", core::builtinCatalog().gpuIdList()), std::string("h100-sxm"));
        QCOMPARE(core::closestMatch("zzz", core::builtinCatalog().gpuIdList()), std::string());
        auto first = [](std::initializer_list<std::string> sets) { return test::scenarioErrors(sets).front(); };
        QVERIFY(first({"cluster.gpu=h10o-sxm"}).why.find("did you mean h100-sxm?") != std::string::npos);
        QVERIFY(first({"training.tokenz=1"}).why.find("did you mean tokens?") != std::string::npos);
        QVERIFY(first({"parallel.fsdp=\"ful\""}).why.find("did you mean full?") != std::string::npos);
        QVERIFY(first({"model.preset=llama-2-7\"b"}).field.find("model") != std::string::npos);
        // "h100" is the SXM5 80 GB part, said in a warning; "a100" is ambiguous and refused with the three.
        const auto p = core::estimate(test::scenario({"cluster.gpu=h100"}));
        QCOMPARE(p.hardware.id(), std::string("h100-sxm"));
        QVERIFY(std::any_of(p.warnings.begin(), p.warnings.end(), [](const auto& w) { return w.code == "alias"; }));
        const auto amb = first({"cluster.gpu=a100"});
        QCOMPARE(amb.field, std::string("cluster.gpu"));
        QCOMPARE(amb.allowed, std::string("a100-sxm4-40gb, a100-sxm4-80gb, a100-pcie-80gb"));
        const auto m = core::estimate(test::scenario({"model.preset=llama-3.1-8b"}));
        QCOMPARE(m.params.total, 8030261248.0); // Llama 3 8B's exact count
    }

    void presetsAreTheLecturesExamples()
    {
        // The Presets menu is data (resources/presets.json): each parses, and gives the seed's number.
        const auto& presets = core::builtinPresets();
        QCOMPARE(presets.size(), std::size_t(9));
        for (const auto& p : presets) {
            QVERIFY2(!p.title.empty() && !p.source.empty(), p.id.c_str());
            if (p.rooflineSeedOps)
                continue;
            core::Errors errors;
            const auto sc = core::parseScenario(core::presetDocument(p), core::builtinCatalog(), errors);
            QVERIFY2(errors.empty(), p.id.c_str());
            const auto plan = core::estimate(sc);
            const auto& m = plan.memory;
            if (p.id == "seeds-70b-15t-1024-h100")
                QVERIFY(std::fabs(plan.time.days - 143.9) < 0.05); // CS-2
            if (p.id == "seeds-7b-ledger")
                QCOMPARE(m.weights + m.gradients + m.optimizerStates, 84e9); // CS-5
            if (p.id == "seeds-toy-model")
                QCOMPARE(m.weights + m.gradients + m.optimizerStates + m.activations, 496.0); // CS-6
            if (p.id == "finetune-full-7b-rtx4090")
                QVERIFY(!m.fits); // issue 17's question: Make it fit answers it
            if (p.id == "finetune-lora-7b-rtx4090")
                QVERIFY(m.fits && plan.finetune.trainable == 39976960.0); // PEFT's count
            if (p.id == "finetune-qlora-7b-rtx3090")
                QVERIFY(m.fits && plan.finetune.trainable == 159907840.0);
            if (p.id == "finetune-qlora-65b-l40s")
                QVERIFY(m.fits); // QLoRA's headline
            if (p.id == "seeds-40b-on-8x80gb")
                QCOMPARE(m.weights + m.gradients + m.masterWeights + m.optimizerStates, 80e9); // CS-3: 16 B x 40e9 / 8
        }
    }

    void fileHoldsOnlyWhatDiffers()
    {
        core::Errors errors;
        const auto doc = core::parseScenarioText(R"({"cluster": {"gpus": 8}})", "test", errors);
        QVERIFY(doc && errors.empty());
        const auto sc = core::parseScenario(*doc, core::builtinCatalog(), errors);
        QVERIFY(errors.empty());
        QCOMPARE(sc.cluster.gpus, std::int64_t(8));
        QCOMPARE(sc.cluster.gpuId, std::string("h100-sxm")); // from the defaults
        QCOMPARE(sc.training.seqLen, std::int64_t(4096));
    }

    void modelIsReplacedWhole()
    {
        core::Errors errors;
        const auto doc = core::parseScenarioText(R"({"model": {"params": "13B"}})", "test", errors);
        const auto sc = core::parseScenario(*doc, core::builtinCatalog(), errors);
        QVERIFY(errors.empty());
        QCOMPARE(sc.model.kind, core::ModelKind::ParamsOnly);
        QCOMPARE(sc.model.givenParams, 13e9);
    }

    void setSemantics()
    {
        auto sc = scenario({"model.preset=llama-3-8b", "cluster.gpus=8", "training.tokens=15T"});
        QCOMPARE(sc.model.id, std::string("llama-3-8b"));
        QCOMPARE(sc.cluster.gpus, std::int64_t(8));
        QCOMPARE(sc.training.tokens, 15e12);
        // Overrides on a preset.
        sc = scenario({"model.preset=llama-2-7b", "model.layers=16"});
        QCOMPARE(sc.model.shape.layers, std::int64_t(16));
        QCOMPARE(sc.model.shape.dModel, std::int64_t(4096));
        // A whole model object.
        sc = scenario(
            {R"(model={"kind": "transformer", "layers": 2, "d_model": 64, "heads": 4, "ffn": 256, "vocab": 100})"});
        QCOMPARE(sc.model.shape.headDim, std::int64_t(16));
        QCOMPARE(sc.model.shape.kvHeads, std::int64_t(4));
    }

    void errorsAreValues_data()
    {
        QTest::addColumn<QString>("set");
        QTest::addColumn<QString>("field");
        // clang-format off
        QTest::newRow("zero gpus") << QStringLiteral("cluster.gpus=0") << QStringLiteral("cluster.gpus");
        QTest::newRow("mfu above 1") << QStringLiteral("cluster.mfu=1.2") << QStringLiteral("cluster.mfu");
        QTest::newRow("mfu zero") << QStringLiteral("cluster.mfu=0") << QStringLiteral("cluster.mfu");
        QTest::newRow("negative tokens") << QStringLiteral("training.tokens=-1") << QStringLiteral("training.tokens");
        QTest::newRow("unknown dtype") << QStringLiteral("precision.weights=fp12") << QStringLiteral("precision.weights");
        QTest::newRow("unknown preset") << QStringLiteral("model.preset=gpt-5") << QStringLiteral("model.preset");
        QTest::newRow("unknown key") << QStringLiteral("training.tokenz=5") << QStringLiteral("training.tokenz");
        // clang-format on
        QTest::newRow("heads vs d_model")
            << QStringLiteral(
                   R"(model={"kind": "transformer", "layers": 2, "d_model": 100, "heads": 3, "ffn": 256, "vocab": 100})")
            << QStringLiteral("model.heads");
        QTest::newRow("kv_heads vs heads")
            << QStringLiteral(
                   R"(model={"kind": "transformer", "layers": 2, "d_model": 64, "heads": 4, "kv_heads": 3, "ffn": 256, "vocab": 100})")
            << QStringLiteral("model.kv_heads");
        QTest::newRow("no fp8 on A100") << QStringLiteral("precision.plan=fp8-mixed\ncluster.gpu=a100-sxm4-80gb")
                                        << QStringLiteral("precision.compute");
    }
    void errorsAreValues()
    {
        QFETCH(QString, set);
        QFETCH(QString, field);
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        for (const auto& s : set.split(QLatin1Char('\n')))
            core::applySet(doc, s.toStdString(), errors);
        core::parseScenario(doc, core::builtinCatalog(), errors);
        QVERIFY(!errors.empty());
        QCOMPARE(QString::fromStdString(errors.front().field), field);
        QVERIFY(!errors.front().why.empty());
        const auto text = core::describe(errors.front());
        QVERIFY2(text.find(field.toStdString()) == 0, text.c_str());
    }

    void allErrorsAreCollected()
    {
        const auto errors = scenarioErrors({"cluster.gpus=0", "cluster.mfu=2", "training.seq_len=0"});
        QCOMPARE(errors.size(), std::size_t(3));
    }

    // setPath (a parsed value) and applySet (PATH=VALUE text) make the same document; the string "8"
    // stays a string; the model rule replaces the model; a path through a value is an error.
    void setPathEqualsApplySet()
    {
        for (const auto& [path, value] : std::vector<std::pair<std::string, nlohmann::json>>{
                 {"cluster.gpus", 64},
                 {"cluster.gpu", "a100-sxm4-80gb"},
                 {"model.preset", "llama-2-13b"},
                 {"training.tokens", 1e12},
                 {"precision.low_precision_gemms", nlohmann::json::array({"mlp"})},
                 {"name", "8"}}) {
            nlohmann::json a = core::defaultScenarioJson(), b = a;
            core::Errors ea, eb;
            core::setPath(a, path, value, ea);
            core::applySet(b, path + "=" + value.dump(), eb);
            QVERIFY(ea.empty() && eb.empty());
            QCOMPARE(a.dump(), b.dump());
        }
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        core::setPath(doc, "model.preset", "llama-2-13b", errors);
        QCOMPARE(doc["model"].dump(), std::string(R"({"preset":"llama-2-13b"})"));
        core::setPath(doc, "cluster.gpus.count", 8, errors);
        core::setPath(doc, "cluster..gpus", 8, errors);
        QCOMPARE(int(errors.size()), 2);
        QCOMPARE(errors[0].field, std::string("cluster.gpus.count"));
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
