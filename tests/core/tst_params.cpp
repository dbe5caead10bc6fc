// Exact parameter counts of every preset and of Hugging Face configs (tests/data/golden.json).
#include "testsupport.h"

#include "catalog.h"
#include "model.h"

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
        QTest::newRow("pythia-160m (gpt_neox)") << QStringLiteral("hf/pythia-160m.json")
                                                << golden()["hf_pythia_160m"]["expected"].get<double>();
        QTest::newRow("llama-2-7b") << QStringLiteral("hf/llama-2-7b.json") << pc["llama-2-7b"].get<double>();
        QTest::newRow("mistral-7b") << QStringLiteral("hf/mistral-7b.json") << pc["mistral-7b"].get<double>();
        QTest::newRow("qwen2.5-7b (q/k/v biases)") << QStringLiteral("hf/qwen2.5-7b.json") << pc["qwen2.5-7b"].get<double>();
        QTest::newRow("olmo2-7b (QK-norm)") << QStringLiteral("hf/olmo2-7b.json") << pc["olmo-2-7b"].get<double>();
        QTest::newRow("gpt2 (tied, learned positions)") << QStringLiteral("hf/gpt2.json") << pc["gpt2-small"].get<double>();
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

    void hfConfigNamesItsModel()
    {
        // Named from the config (issue 13), not "llama" or "Custom architecture".
        core::Errors errors;
        auto cfg = readJson("hf/llama-2-7b.json");
        QCOMPARE(core::modelFromHfConfig(cfg, "model.hf_config(hf/llama-2-7b.json)", errors).name, std::string("llama-2-7b"));
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
        QTest::newRow("missing hidden_size") << QStringLiteral(R"({"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 100})")
                                             << QStringLiteral("hidden_size");
        QTest::newRow("heads do not divide") << QStringLiteral(R"({"model_type": "llama", "hidden_size": 100, "num_hidden_layers": 2, "num_attention_heads": 3, "intermediate_size": 64, "vocab_size": 100})")
                                             << QStringLiteral("num_attention_heads");
        QTest::newRow("kv heads do not divide") << QStringLiteral(R"({"model_type": "mistral", "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 3, "intermediate_size": 64, "vocab_size": 100})")
                                                << QStringLiteral("num_key_value_heads");
        QTest::newRow("unknown family") << QStringLiteral(R"({"model_type": "bert"})") << QStringLiteral("model_type");
        QTest::newRow("no family") << QStringLiteral(R"({"hidden_size": 64})") << QStringLiteral("model_type");
        QTest::newRow("negative layers") << QStringLiteral(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": -1, "n_head": 4, "vocab_size": 10, "n_positions": 8})")
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
