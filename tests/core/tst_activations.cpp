// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Activation memory per layer: Korthikanti et al. 2022 Table 2 (tests/data/golden.json) and the
// seeds' worked "will it fit" example.
#include "testsupport.h"

#include "activations.h"

using namespace napkin;
using napkin::test::golden;

namespace {
constexpr double GiB = 1073741824.0;

// GPT-style layer as in the paper: MHA, GELU MLP of 4h, LayerNorm, dropout.
core::TransformerShape gptLayer(double heads, double hidden)
{
    core::TransformerShape s;
    s.layers = 1;
    s.heads = std::int64_t(heads);
    s.kvHeads = s.heads;
    s.dModel = std::int64_t(hidden);
    s.headDim = s.dModel / s.heads;
    s.ffn = 4 * s.dModel;
    s.ffnKind = core::FfnKind::Gelu;
    s.norm = core::NormKind::LayerNorm;
    s.dropout = true;
    s.vocab = 51200;
    return s;
}
} // namespace

class TestActivations : public QObject {
    Q_OBJECT
private slots:
    void table2_data()
    {
        QTest::addColumn<double>("heads");
        QTest::addColumn<double>("hidden");
        QTest::addColumn<QString>("technique");
        QTest::addColumn<double>("expectedGiB");
        const char* techniques[] = {"none_t1", "tp", "tp_sp", "tp_selective", "tp_sp_selective", "full"};
        for (const auto& row : golden()["korthikanti_gib_t8"])
            for (const char* t : techniques)
                QTest::newRow(qPrintable(QString::fromStdString(row["model"].get<std::string>() + " " + t)))
                    << row["heads"].get<double>() << row["hidden"].get<double>() << QString::fromLatin1(t)
                    << row[t].get<double>();
    }
    void table2()
    {
        QFETCH(double, heads);
        QFETCH(double, hidden);
        QFETCH(QString, technique);
        QFETCH(double, expectedGiB);
        const auto& setup = golden()["korthikanti_setup"];
        const double s = setup["seq"].get<double>(), b = setup["micro_batch"].get<double>();
        const double t = technique == QStringLiteral("none_t1") ? 1.0 : setup["t"].get<double>();
        const bool sp = technique.contains(QStringLiteral("sp"));
        const auto recompute = technique == QStringLiteral("full")               ? core::Recompute::Full
                               : technique.contains(QStringLiteral("selective")) ? core::Recompute::Selective
                                                                                 : core::Recompute::None;
        const auto layer = gptLayer(heads, hidden);
        const double got = core::layerActivations(layer, s, b, 2.0, recompute, /*flash=*/false, t, sp).total / GiB;
        QVERIFY2(std::abs(got - expectedGiB) <= setup["tol_abs_gib"].get<double>(),
                 qPrintable(QStringLiteral("got %1 GiB, want %2").arg(got).arg(expectedGiB)));
    }

    void flashAttentionDropsTheScoreTerm()
    {
        const auto layer = gptLayer(64, 6144);
        const double s = 2048, b = 1, h = 6144, a = 64;
        const double eager = core::layerActivations(layer, s, b, 2.0, core::Recompute::None, false).total;
        const auto flash = core::layerActivations(layer, s, b, 2.0, core::Recompute::None, true);
        QCOMPARE(eager, s * b * h * (34 + 5 * a * s / h));
        // Only 34sbh and FlashAttention's fp32 log-sum-exp (4 a s b) remain.
        QCOMPARE(flash.total, s * b * h * 34 + 4 * a * s * b);
    }

    void seedsWillItFitExample()
    {
        // Seeds (blog post): 16 layers, width 2048, 32 heads, s = 1024, b = 1: sbh·34 ≈ 71 MB and
        // 5as²b ≈ 168 MB, about 239 MB per layer and 3.8 GB for 16 layers.
        const auto layer = gptLayer(32, 2048);
        const double perLayer = core::layerActivations(layer, 1024, 1, 2.0, core::Recompute::None, false).total;
        QVERIFY(std::abs(perLayer / 1e6 - 239.1) < 0.5);
        QVERIFY(std::abs(16 * perLayer / 1e9 - 3.83) < 0.01);
    }

    void llamaGqaSwiglu()
    {
        // Hand count for Llama-2-7B (MHA, SwiGLU ffn 11008, no dropout) at s = 4096, b = 1, bf16:
        // norms + QKV/MLP inputs 4·2·4096 = 32768; Q, K, V, O 2·(2·4096 + 2·4096) = 32768;
        // gate, up, down inputs 3·2·11008 = 66048; 131584 bytes per token; + LSE 4·32·4096.
        core::TransformerShape s = gptLayer(32, 4096);
        s.ffn = 11008;
        s.ffnKind = core::FfnKind::Swiglu;
        s.norm = core::NormKind::RmsNorm;
        s.dropout = false;
        const auto a = core::layerActivations(s, 4096, 1, 2.0, core::Recompute::None, true);
        QCOMPARE(a.perTokenBytes, 131584.0);
        QCOMPARE(a.total, 131584.0 * 4096 + 4.0 * 32 * 4096);
        // GQA with 8 KV heads stores 2·2·(4096 - 1024) bytes per token less for K and V.
        s.kvHeads = 8;
        QCOMPARE(core::layerActivations(s, 4096, 1, 2.0, core::Recompute::None, true).perTokenBytes,
                 131584.0 - 2 * 2 * 3072);
    }

    void microBatchScalesLinearly()
    {
        const auto layer = gptLayer(32, 4096);
        const double one = core::layerActivations(layer, 2048, 1, 2.0, core::Recompute::None, false).total;
        const double four = core::layerActivations(layer, 2048, 4, 2.0, core::Recompute::None, false).total;
        QCOMPARE(four, 4 * one);
    }
};

QTEST_GUILESS_MAIN(TestActivations)
#include "tst_activations.moc"
