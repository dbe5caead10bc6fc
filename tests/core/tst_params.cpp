// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Exact parameter counts of every preset and of Hugging Face configs (tests/data/golden.json).
#include "testsupport.h"

#include "catalog.h"
#include "model.h"

#include <algorithm>
#include <fstream>

using namespace napkin;
using napkin::test::golden;

namespace {
nlohmann::json readJson(const std::string& name)
{
    std::ifstream in(std::string(NAPKIN_TEST_DATA) + "/" + name);
    return nlohmann::json::parse(in);
}
} // namespace

class TestParams : public QObject {
    Q_OBJECT
private slots:
    void presets_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("expected");
        for (const auto& [id, count] : golden()["param_counts"].items())
            QTest::newRow(id.c_str()) << QString::fromStdString(id) << count.get<double>();
    }
    void presets()
    {
        QFETCH(QString, id);
        QFETCH(double, expected);
        const auto* m = core::builtinCatalog().model(id.toStdString());
        QVERIFY2(m, "preset missing from resources/models.json");
        QCOMPARE(core::countParams(*m).total, expected);
    }

    void everyPresetHasAPublishedCount()
    {
        for (const auto& m : core::builtinCatalog().models)
            QVERIFY2(golden()["param_counts"].contains(m.id), m.id.c_str());
    }

    void hfConfigs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<double>("expected");
        const auto& pc = golden()["param_counts"];
        QTest::newRow("pythia-160m (gpt_neox)")
            << QStringLiteral("hf/pythia-160m.json") << golden()["hf_pythia_160m"]["expected"].get<double>();
        // clang-format off
        QTest::newRow("llama-2-7b") << QStringLiteral("hf/llama-2-7b.json") << pc["llama-2-7b"].get<double>();
        QTest::newRow("mistral-7b") << QStringLiteral("hf/mistral-7b.json") << pc["mistral-7b"].get<double>();
        QTest::newRow("qwen2.5-7b (q/k/v biases)") << QStringLiteral("hf/qwen2.5-7b.json") << pc["qwen2.5-7b"].get<double>();
        QTest::newRow("olmo2-7b (QK-norm)") << QStringLiteral("hf/olmo2-7b.json") << pc["olmo-2-7b"].get<double>();
        QTest::newRow("gpt2 (tied, learned positions)") << QStringLiteral("hf/gpt2.json") << pc["gpt2-small"].get<double>();
        // clang-format on
    }
    void hfConfigs()
    {
        QFETCH(QString, file);
        QFETCH(double, expected);
        core::Errors errors;
        const auto m = core::modelFromHfConfig(readJson(file.toStdString()), file.toStdString(), errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        QCOMPARE(core::countParams(m).total, expected);
    }

    void moeConfigs_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("key");
        // Each count by hand (h hidden, L layers; attention 2·h·qd + 2·h·kvd; SwiGLU experts 3·h·I_e;
        // router h·E; two RMSNorms 2h per layer; final norm h; embedding and head V·h each):
        // Mixtral 8x7B: per layer 41,943,040 + 8 · 176,160,768 + 32,768 + 8,192 = 1,451,270,144;
        //   × 32 + 2 · 32000 · 4096 + 4096 = 46,702,792,704; active: 2 experts = 12,879,925,248.
        // Qwen3-30B-A3B: attention 18,874,368 + per-head q/k norms 256; 128 experts of 3 · 2048 · 768;
        //   router 262,144; × 48 + 2 · 151936 · 2048 + 2048 = 30,532,122,624; 8 experts: 3,353,032,704.
        // OLMoE-1B-7B: attention 16,777,216 + full q/k norms 4,096; 64 experts of 3 · 2048 · 1024;
        //   × 16 + 2 · 50304 · 2048 + 2048 = 6,919,161,856; 8 experts: 1,282,017,280.
        // Qwen1.5-MoE-A2.7B (qwen2_moe): attention 16,777,216 + q/k/v biases 6,144; 60 experts of
        //   3 · 2048 · 1408; router 122,880; one shared expert 3 · 2048 · 5632 and its gate 2,048;
        //   × 24 + 2 · 151936 · 2048 + 2048 = 14,315,784,192; 4 experts: 2,689,173,504.
        // clang-format off
        QTest::newRow("mixtral (mixtral)") << QStringLiteral("hf/mixtral-8x7b.json") << QStringLiteral("mixtral-8x7b");
        QTest::newRow("qwen3-30b-a3b (qwen3_moe)") << QStringLiteral("hf/qwen3-30b-a3b.json") << QStringLiteral("qwen3-30b-a3b");
        QTest::newRow("olmoe (olmoe)") << QStringLiteral("hf/olmoe-1b-7b.json") << QStringLiteral("olmoe-1b-7b");
        // clang-format on
        QTest::newRow("qwen1.5-moe (qwen2_moe, shared expert)")
            << QStringLiteral("hf/qwen1.5-moe-a2.7b.json") << QStringLiteral("qwen1.5-moe-a2.7b");
        // DeepSeek-V3 (MLA, moe-notes.md §2.1): attention 11,010,048 + 1,536 + 37,748,736 + 4,128,768 +
        //   512 + 16,777,216 + 117,440,512 = 187,107,328 and two norms; 3 dense layers (3 · 7168 · 18432);
        //   58 MoE layers of 256 + 1 shared experts of 3 · 7168 · 2048, router 7168 · 256 + 256 (the
        //   noaux_tc score-correction bias); + 2 · 129280 · 7168 + 7168 = 671,026,419,200; 8 routed
        //   experts: 37,552,297,472. MTP: 2 · 7168 + 2 · 7168² + one MoE layer + 7168 = 11,610,068,224.
        // DeepSeek-V2-Lite: no q rank (7168 · 16 · 192 becomes 2048 · 16 · 192), 1 dense layer, 26 MoE
        //   layers of 64 + 2 shared experts of 1408, top 6: 15,706,484,224; 2,451,435,008 without the
        //   input embedding (the card's "2.4B activated").
        // gpt-oss-120b: attention 2880 · 4096 · 2 + 2880 · 512 · 2 with q, k, v, o biases (8,000) and 64
        //   sinks; 128 experts of 3 · 2880² + 2 · 2880 + 2880 (biases); router 2880 · 128 + 128; × 36 +
        //   2 · 201088 · 2880 + 2880 = 116,829,156,672; 4 experts without the embedding: 5,132,849,472.
        // Gemma 2 9B: 3584 · 4096 · 2 + 3584 · 2048 · 2, GeGLU 3 · 3584 · 14336, four norms 4 · 3584;
        //   × 42 + 256000 · 3584 (tied) + 3584 = 9,241,705,984.
        // Llama 4 Scout (text_config): 16 experts + 1 shared of 3 · 5120 · 8192, router 5120 · 16; × 48
        //   + 2 · 202048 · 5120 + 5120 = 107,769,861,120; 1 routed + shared: 17,172,894,720.
        // DBRX: 16 experts of 3 · 6144 · 10752, weight-only LayerNorms; × 40 + 2 · 100352 · 6144 + 6144
        //   = 131,596,523,520; 4 experts: 36,469,708,800. Phi-3-mini: Llama's layout, 3,821,079,552.
        // clang-format off
        QTest::newRow("deepseek-v3 (MLA, MTP)") << QStringLiteral("hf/deepseek-v3.json") << QStringLiteral("deepseek-v3");
        QTest::newRow("deepseek-v2-lite (no q rank)") << QStringLiteral("hf/deepseek-v2-lite.json") << QStringLiteral("deepseek-v2-lite");
        QTest::newRow("gpt-oss-120b (sinks, expert biases)") << QStringLiteral("hf/gpt-oss-120b.json") << QStringLiteral("gpt-oss-120b");
        QTest::newRow("gemma-2-9b (GeGLU, four norms, tied)") << QStringLiteral("hf/gemma-2-9b.json") << QStringLiteral("gemma-2-9b");
        QTest::newRow("llama-4-scout (text_config, shared expert)") << QStringLiteral("hf/llama-4-scout.json") << QStringLiteral("llama-4-scout");
        QTest::newRow("dbrx (nested configs)") << QStringLiteral("hf/dbrx.json") << QStringLiteral("dbrx");
        QTest::newRow("phi-3-mini (phi3)") << QStringLiteral("hf/phi-3-mini.json") << QStringLiteral("phi-3-mini");
        // clang-format on
        // Gemma 3 27B (gemma3 with text_config, vocab_size absent: Gemma3TextConfig's 262208): 5376 ·
        //   4096 · 2 + 5376 · 2048 · 2, per-head q/k norms 256, GeGLU 3 · 5376 · 21504, four norms; × 62 +
        //   262208 · 5376 (tied) + 5376 = 27,009,346,304 (the report's 25.6B + 1.4B).
        // Granite 3.0 1B-A400M (granitemoe): 1024 · 1024 · 2 + 1024 · 512 · 2 attention, 32 experts of
        //   3 · 1024 · 512 (input_linear 2 · I · h, output_linear I · h), router 1024 · 32; × 24 + 49155 ·
        //   1024 (tied) + 1024 = 1,334,628,352; 8 experts: 428,658,688.
        QTest::newRow("granite-3.0-1b-a400m (granitemoe, tied)")
            << QStringLiteral("hf/granite-3.0-1b-a400m.json") << QStringLiteral("granite-3.0-1b-a400m");
        QTest::newRow("gemma-3-27b-it (gemma3 text_config)")
            << QStringLiteral("hf/gemma-3-27b-it.json") << QStringLiteral("gemma-3-27b-it");
    }

    void slidingWindowLayers()
    {
        // Gemma 3: every 6th layer global (sliding_window_pattern 6): 62 layers, 10 global (5, 11, ... 59).
        core::Errors errors;
        const auto g3 = core::modelFromHfConfig(readJson("hf/gemma-3-27b-it.json"), "gemma3", errors);
        QCOMPARE(g3.shape.slidingWindow, std::int64_t(1024));
        QCOMPARE(std::count(g3.shape.slidingLayers.begin(), g3.shape.slidingLayers.end(), 1), std::ptrdiff_t(52));
        QCOMPARE(int(g3.shape.slidingLayers[5]), 0);
        // Gemma 2 slides on even layers; gpt-oss as its layer_types list says (alternating, 18 of 36).
        const auto g2 = core::modelFromHfConfig(readJson("hf/gemma-2-9b.json"), "gemma2", errors);
        QCOMPARE(std::count(g2.shape.slidingLayers.begin(), g2.shape.slidingLayers.end(), 1), std::ptrdiff_t(21));
        QCOMPARE(int(g2.shape.slidingLayers[0]), 1);
        const auto oss = core::modelFromHfConfig(readJson("hf/gpt-oss-120b.json"), "gpt_oss", errors);
        QCOMPARE(oss.shape.slidingWindow, std::int64_t(128));
        QCOMPARE(std::count(oss.shape.slidingLayers.begin(), oss.shape.slidingLayers.end(), 1), std::ptrdiff_t(18));
        QVERIFY(errors.empty());
    }
    void moeConfigs()
    {
        QFETCH(QString, file);
        QFETCH(QString, key);
        core::Errors errors;
        const auto m = core::modelFromHfConfig(readJson(file.toStdString()), file.toStdString(), errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        const auto& g = golden()["active_param_counts"][key.toStdString()];
        const auto c = core::countParams(m);
        const double total =
            g.contains("total") ? g["total"].get<double>() : golden()["param_counts"][key.toStdString()].get<double>();
        QCOMPARE(c.total, total);
        QCOMPARE(c.active, g["active"].get<double>());
        QCOMPARE(c.activeExclEmbedding, g["active_excl_embedding"].get<double>());
        QCOMPARE(c.active - c.activeExclEmbedding, c.embedding);
        if (g.contains("mtp"))
            QCOMPARE(c.mtp, g["mtp"].get<double>());
        // The preset of the same model counts the same.
        if (const auto* preset = core::builtinCatalog().model(key.toStdString()))
            QCOMPARE(core::countParams(*preset).active, c.active);
    }

    void qwen3DenseHeadNorm()
    {
        // Qwen3-8B: attention 2 · 4096 · 4096 + 2 · 4096 · 1024 = 41,943,040, per-head q/k norms 2 · 128,
        // MLP 3 · 4096 · 12288, norms 8,192: 192,940,288 × 36 + 2 · 151936 · 4096 + 4096 = 8,190,735,360.
        core::Errors errors;
        const auto m = core::modelFromHfConfig(readJson("hf/qwen3-8b.json"), "qwen3-8b", errors);
        QVERIFY(errors.empty());
        QCOMPARE(int(m.shape.qkNorm), int(core::QkNorm::Head));
        const auto c = core::countParams(m);
        QCOMPARE(c.total, golden()["active_param_counts"]["qwen3-8b"]["total"].get<double>());
        QCOMPARE(c.active, c.total); // dense: every parameter is active
    }

    void pipelineStagesHoldTheirOwnLayers()
    {
        // DeepSeek-V3 on two stages of 30 and 31 layers: the first holds the 3 dense layers, 27 MoE
        // layers and the embedding; the second 31 MoE layers, the head, the final norm and the MTP
        // depth, which trains with the model (2h + 2h² + one MoE layer + h = 11,610,068,224:
        // DeepSeek-V3 README_WEIGHTS.md "11.5B unique"). No TP, so each stage's parameters are exactly
        // these sums.
        const auto plan = core::estimate(
            napkin::test::scenario({"model.preset=deepseek-v3", "parallel.pp=2", "parallel.first_stage_layers=30",
                                    "parallel.last_stage_layers=31", "cluster.gpus=64"}));
        const auto& c = plan.params;
        QCOMPARE(plan.memory.perStage.size(), std::size_t(2));
        QCOMPARE(plan.memory.perStage[0].params, 3 * c.denseLayer + 27 * c.moeLayer + c.embedding);
        QCOMPARE(c.mtp, 2 * 7168.0 + 2 * 7168.0 * 7168 + c.moeLayer + 7168);
        QCOMPARE(c.mtp, 11610068224.0);
        QCOMPARE(plan.memory.perStage[1].params, 31 * c.moeLayer + c.head + c.finalNorm + c.mtp);
        QCOMPARE(plan.memory.perStage[0].params + plan.memory.perStage[1].params, c.total + c.mtp);
    }

    void moeLayerPlacement()
    {
        // Layer i is MoE iff i >= first_dense_layers and (i + 1 - offset) % freq == 0.
        core::TransformerShape s;
        s.layers = 8;
        s.moe.experts = 4;
        s.moe.topK = 1;
        s.moe.expertFfn = 16;
        QCOMPARE(core::moeLayerCount(s), std::int64_t(8));
        s.moe.firstDenseLayers = 3; // DeepSeek first_k_dense_replace
        QVERIFY(!core::isMoeLayer(s, 2));
        QVERIFY(core::isMoeLayer(s, 3));
        QCOMPARE(core::moeLayerCount(s), std::int64_t(5));
        s.moe.firstDenseLayers = 0;
        s.moe.layerFreq = 2; // HF Llama 4 interleave_moe_layer_step 2: layers 1, 3, 5, 7
        QVERIFY(!core::isMoeLayer(s, 0));
        QVERIFY(core::isMoeLayer(s, 1));
        s.moe.layerOffset = 1; // Megatron --moe-layer-freq 2: layers 0, 2, 4, 6
        QVERIFY(core::isMoeLayer(s, 0));
        QVERIFY(!core::isMoeLayer(s, 1));
        QCOMPARE(core::moeLayerCount(s), std::int64_t(4));
        s.moe.moeLayers = {0, 0, 1, 1, 0, 0, 1, 1}; // an explicit list wins
        QCOMPARE(core::moeLayerCount(s), std::int64_t(4));
        QVERIFY(core::isMoeLayer(s, 2) && !core::isMoeLayer(s, 0));
        // mlpWidth: dense width on dense layers, k·I_e on MoE layers, averaged: (4 · 64 + 4 · 16) / 8.
        s.ffn = 64;
        QCOMPARE(core::mlpWidth(s), (4 * 64.0 + 4 * 16.0) / 8);
        QCOMPARE(core::mlpWeightWidth(s), (4 * 64.0 + 4 * 4 * 16.0) / 8);
    }

    void moeKeysThroughScenario()
    {
        // model.moe on top of a preset, and errors that name the field.
        const auto sc = napkin::test::scenario({R"(model={"preset": "mixtral-8x7b", "moe": {"top_k": 1}})"});
        const auto c = core::countParams(sc.model);
        QCOMPARE(c.total, 46702792704.0);
        QCOMPARE(c.active, 12879925248.0 - 32 * 176160768.0); // one expert fewer per layer
        auto errorsOf = [](const char* set) {
            nlohmann::json doc = core::defaultScenarioJson();
            core::Errors errors;
            core::applySet(doc, set, errors);
            core::parseScenario(doc, core::builtinCatalog(), errors);
            return errors;
        };
        auto firstField = [&](const char* set) {
            const auto e = errorsOf(set);
            return e.empty() ? std::string() : e.front().field;
        };
        QCOMPARE(firstField(R"(model={"preset": "mixtral-8x7b", "moe": {"top_k": 9}})"),
                 std::string("model.moe.top_k"));
        QCOMPARE(firstField(R"(model={"preset": "mixtral-8x7b", "moe": {"experts": 8, "topk": 2}})"),
                 std::string("model.moe.topk"));
        QCOMPARE(firstField(R"(model={"preset": "mixtral-8x7b", "moe": {"moe_layers": [1, 0]}})"),
                 std::string("model.moe.moe_layers"));
        QCOMPARE(firstField(R"(model={"preset": "llama-2-7b", "moe": {"experts": 8, "top_k": 2}})"),
                 std::string("model.moe.expert_ffn"));
        QCOMPARE(firstField(R"(model={"preset": "mixtral-8x7b", "moe": {"first_dense_layers": 32}})"),
                 std::string("model.moe.first_dense_layers"));
        QCOMPARE(firstField(R"(model={"preset": "qwen3-8b-nope", "moe": {}})").substr(0, 12),
                 std::string("model.preset"));
    }

    void hfConfigNamesItsModel()
    {
        // Named from the config (issue 13), not "llama" or "Custom architecture".
        core::Errors errors;
        auto cfg = readJson("hf/llama-2-7b.json");
        QCOMPARE(core::modelFromHfConfig(cfg, "model.hf_config(hf/llama-2-7b.json)", errors).name,
                 std::string("llama-2-7b"));
        QCOMPARE(core::modelFromHfConfig(cfg, "model.hf_config(/models/Llama-2-7b-hf/config.json)", errors).name,
                 std::string("Llama-2-7b-hf"));
        QCOMPARE(core::modelFromHfConfig(cfg, "config.json", errors).name, std::string("LlamaForCausalLM"));
        cfg["_name_or_path"] = "meta-llama/Llama-2-7b-hf";
        QCOMPARE(core::modelFromHfConfig(cfg, "config.json", errors).name, std::string("meta-llama/Llama-2-7b-hf"));
        QVERIFY(errors.empty());
    }

    void hfConfigThroughScenario()
    {
        const auto sc = napkin::test::scenario({"model.hf_config=hf/llama-2-7b.json"});
        QCOMPARE(core::countParams(sc.model).total, golden()["param_counts"]["llama-2-7b"].get<double>());
    }

    void hfConfigErrorsNameTheField_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<QString>("field");
        QTest::newRow("missing hidden_size")
            << QStringLiteral(
                   R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 100})")
            << QStringLiteral("hidden_size");
        QTest::newRow("heads do not divide")
            << QStringLiteral(
                   R"({"model_type": "llama", "hidden_size": 100, "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 64, "vocab_size": 100})")
            << QStringLiteral("num_attention_heads");
        QTest::newRow("kv heads do not divide")
            << QStringLiteral(
                   R"({"model_type": "mistral", "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 3, "intermediate_size": 64, "vocab_size": 100})")
            << QStringLiteral("num_key_value_heads");
        QTest::newRow("unknown family") << QStringLiteral(R"({"model_type": "bert"})") << QStringLiteral("model_type");
        QTest::newRow("no family") << QStringLiteral(R"({"hidden_size": 64})") << QStringLiteral("model_type");
        QTest::newRow("negative layers")
            << QStringLiteral(
                   R"({"model_type": "gpt2", "n_embd": 64, "n_layer": -1, "n_head": 4, "vocab_size": 10, "n_positions": 8})")
            << QStringLiteral("n_layer");
    }
    void hfConfigErrorsNameTheField()
    {
        QFETCH(QString, config);
        QFETCH(QString, field);
        core::Errors errors;
        core::modelFromHfConfig(nlohmann::json::parse(config.toStdString()), "config.json", errors);
        QVERIFY(!errors.empty());
        QVERIFY2(errors.front().field.find(field.toStdString()) != std::string::npos, errors.front().field.c_str());
    }

    void hfBiasFlags()
    {
        // LlamaConfig.attention_bias adds q, k, v and o biases: 32 · (3 · 4096 + 4096) = 524288.
        auto cfg = readJson("hf/llama-2-7b.json");
        cfg["attention_bias"] = true;
        core::Errors errors;
        QCOMPARE(core::countParams(core::modelFromHfConfig(cfg, "llama", errors)).total, 6738415616.0 + 524288.0);
        // GPTNeoX without attention biases keeps its MLP biases: 162322944 - 12 · 4 · 768.
        auto neox = readJson("hf/pythia-160m.json");
        neox["attention_bias"] = false;
        QCOMPARE(core::countParams(core::modelFromHfConfig(neox, "neox", errors)).total, 162322944.0 - 36864.0);
        QVERIFY(errors.empty());
    }

    void headsOverrideKeepsMha()
    {
        // 64 heads of 64 instead of 32 of 128: same projection sizes, still MHA, same count.
        const auto sc = napkin::test::scenario({R"(model={"preset": "llama-2-7b", "heads": 64})"});
        QCOMPARE(sc.model.shape.kvHeads, std::int64_t(64));
        QCOMPARE(sc.model.shape.headDim, std::int64_t(64));
        QCOMPARE(core::countParams(sc.model).total, 6738415616.0);
        QVERIFY(sc.model.name.find("(modified)") != std::string::npos);
    }

    void toyModel()
    {
        core::ModelSpec m;
        m.kind = core::ModelKind::Mlp;
        m.mlp = {4, 2, true};
        QCOMPARE(core::countParams(m).total, 36.0); // D² L + D
        m.mlp.head = false;
        QCOMPARE(core::countParams(m).total, 32.0);
    }

    void derivedShapeIsPlausible_data()
    {
        QTest::addColumn<double>("params");
        for (double p : {1e7, 1.24e8, 1e9, 7e9, 70e9, 405e9, 2e12})
            QTest::newRow(qPrintable(QString::number(p, 'g', 3))) << p;
    }
    void derivedShapeIsPlausible()
    {
        QFETCH(double, params);
        const auto s = core::deriveShape(params);
        core::ModelSpec m;
        m.shape = s;
        const double counted = core::countParams(m).total;
        // Within 35% of the requested size, and a valid architecture.
        QVERIFY2(counted > 0.65 * params && counted < 1.35 * params,
                 qPrintable(QStringLiteral("derived %1 for %2").arg(counted).arg(params)));
        core::Errors errors;
        core::validateShape(s, "model", errors);
        QVERIFY(errors.empty());
        QCOMPARE(s.dModel % s.heads, std::int64_t(0));
    }

    void paramsOnlyKeepsTheGivenCount()
    {
        const auto sc = napkin::test::scenario({"model.params=70e9"});
        QCOMPARE(core::countParams(sc.model).total, 70e9);
        QVERIFY(core::countParams(sc.model).derivedShape);
    }
};

QTEST_GUILESS_MAIN(TestParams)
#include "tst_params.moc"
