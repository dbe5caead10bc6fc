// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Model FLOPs of the 2025-26 architectures: Megatron-Core's convention (core/flops_megatron.h) by
// hand on DeepSeek-V3, Qwen3-235B-A22B and gpt-oss-120b at s = 4096, and 6PT / palm on the active
// parameters of a mixture of experts.
#include "testsupport.h"

#include "flops_megatron.h"
#include "model.h"

#include <algorithm>
#include <cmath>
#include <string_view>

using namespace napkin;

namespace {

const core::TransformerShape& preset(const char* id)
{
    const auto* m = core::builtinCatalog().model(id);
    if (!m)
        qFatal("preset %s missing", id);
    return m->shape;
}

bool close(double a, double b, double tol = 1e-12) { return std::fabs(a / b - 1) <= tol; }

} // namespace

class TestFlops : public QObject {
    Q_OBJECT
private slots:
    void deepseekV3()
    {
        // Per token at s = 4096 (moe-notes.md §1.2, §2.2): MLA projections 187,107,328 parameters
        // (norms included) × 6 × 61 = 68.48 GFLOP; core 6 · 128 · (192 + 128) · 2048 × 61 = 30.70 GFLOP;
        // MLP 6 · 7168 · 3 · (3 · 18432 + 58 · (8 + 1) · 2048) = 145.07 GFLOP; logits 6 · 7168 · 129280
        // = 5.56 GFLOP: 249.8 GFLOP without MTP. The MTP depth adds one MoE layer, 6 · (3 · 7168 + 2 ·
        // 7168²) and one more logit GEMM: 260.0 GFLOP (the figures the notes derive from Megatron-Core).
        auto s = preset("deepseek-v3");
        const double linear = 6.0 * 187107328 * 61, core = 6.0 * 128 * 320 * 2048 * 61;
        const double mlp = 6.0 * 7168 * 3 * (3 * 18432 + 58 * 9 * 2048.0), logits = 6.0 * 7168 * 129280;
        s.mtpLayers = 0;
        const auto f0 = core::megatronCoreFlopsPerToken(s, 4096);
        QVERIFY(close(f0.linear, linear));
        QVERIFY(close(f0.core, core));
        QVERIFY(close(f0.mlp, mlp));
        QVERIFY(close(f0.logits, logits));
        QVERIFY(close(f0.total, linear + core + mlp + logits));
        QVERIFY(std::fabs(f0.total / 1e9 - 249.8) < 0.05);
        const auto f1 = core::megatronCoreFlopsPerToken(preset("deepseek-v3"), 4096);
        const double mtp =
            6.0 * 187107328 + 6.0 * 128 * 320 * 2048 + 6.0 * 7168 * 3 * 9 * 2048 + 6 * (3 * 7168.0 + 2 * 7168.0 * 7168);
        QVERIFY(close(f1.mtp, mtp));
        QVERIFY(close(f1.total, f0.total + mtp + logits));
        QVERIFY(std::fabs(f1.total / 1e9 - 260.0) < 0.05);
    }

    void qwen3MoE()
    {
        // Qwen3-235B-A22B: GQA 6 · (4096 · (8192 + 2 · 512) + 8192 · 4096), core 6 · 64 · 256 · 2048,
        // MLP 6 · 4096 · 3 · 8 · 1536 per layer, × 94; logits 6 · 4096 · 151936 (router not counted).
        const auto f = core::megatronCoreFlopsPerToken(preset("qwen3-235b-a22b"), 4096);
        const double perLayer =
            6.0 * (4096 * (8192 + 1024.0) + 8192.0 * 4096) + 6.0 * 64 * 256 * 2048 + 6.0 * 4096 * 3 * 8 * 1536;
        QVERIFY(close(f.total, 94 * perLayer + 6.0 * 4096 * 151936));
    }

    void gptOssSlidingWindow()
    {
        // gpt-oss-120b: 18 layers with a 128-key window: mean causal context 128 - 128 · 127 / (2 · 4096)
        // = 126.015625 keys per query; 18 full layers: 2048. Core per layer 12 · 64 · 64 · ctx.
        const auto f = core::megatronCoreFlopsPerToken(preset("gpt-oss-120b"), 4096);
        const double ctxWindow = 128 - 128.0 * 127 / (2 * 4096);
        QVERIFY(close(f.core, 18 * 12.0 * 64 * 64 * ctxWindow + 18 * 12.0 * 64 * 64 * 2048));
        // A window as long as the sequence is full causal attention.
        auto s = preset("gpt-oss-120b");
        s.slidingWindow = 4096;
        QVERIFY(close(core::megatronCoreFlopsPerToken(s, 4096).core, 36 * 12.0 * 64 * 64 * 2048));
    }

    void slidingWindowShortensFusedAttention()
    {
        // Gemma 2 9B at s = 8192: 21 layers slide over 4096 keys, mean causal context 4096 − 4096 · 4095
        // / (2 · 8192) = 3072.25; 21 full layers 4096. A fused kernel's average layer sees keys = 2 ·
        // 3584.125 = 7168.25 instead of 8192; an unfused path computes the whole square.
        auto flashFlops = [](const core::Plan& p) {
            for (const auto& op : p.ops)
                if (std::string_view(op.name) == "attention_flash")
                    return op.flops;
            return 0.0;
        };
        const auto windowed = core::estimate(test::scenario({"model.preset=gemma-2-9b", "training.seq_len=8192"}));
        const auto full = core::estimate(
            test::scenario({"model.preset=gemma-2-9b", "training.seq_len=8192", "model.sliding_window=0"}));
        QVERIFY(flashFlops(full) > 0);
        QVERIFY(close(flashFlops(windowed) / flashFlops(full), 7168.25 / 8192, 1e-9));
        QCOMPARE(core::meanCausalContext(preset("gemma-2-9b"), 8192), (21 * 3072.25 + 21 * 4096.0) / 42);
    }

    void nvidiaModelTflopsTables()
    {
        // NVIDIA's Megatron-Bridge tables (tests/data/golden.json nvidia_model_tflops) print Model
        // TFLOP/s and tokens/s per GPU; their ratio is Megatron-Core's FLOPs per token. Each row must
        // match within 0.5% plus the table's own rounding (TFLOP/s printed to the integer).
        const auto& rows = test::golden()["nvidia_model_tflops"]["rows"];
        QVERIFY(rows.size() >= 12);
        for (const auto& r : rows) {
            const std::string id = r["model"];
            const double tflops = r["model_tflops"], implied = tflops * 1e12 / r["tokens_per_s_gpu"].get<double>();
            const double tol = 0.005 + 0.5 / tflops;
            auto s = preset(id.c_str());
            if (id == "gpt-oss-120b") {
                // The gpt-oss rows count a two-matrix MLP and full attention on every layer (see
                // docs/validation.md): the released model (gated, 128-key windows) is 12% (s = 8192) to 20% (s = 4096)
                // more.
                const double released = core::megatronCoreFlopsPerToken(s, r["seq_len"]).total;
                QVERIFY2(released / implied > 1.10, id.c_str());
                s.ffnKind = core::FfnKind::Gelu;
                s.slidingWindow = 0;
            }
            if (id == "deepseek-v3") {
                // Two DeepSeek-V3 recipes: the GB200/GB300 rows imply no MTP depth (249.1-249.7
                // GFLOP/token), the B200 row one depth (260.4); each must match one of the two.
                auto noMtp = s;
                noMtp.mtpLayers = 0;
                const double a = core::megatronCoreFlopsPerToken(noMtp, r["seq_len"]).total;
                const double b = core::megatronCoreFlopsPerToken(s, r["seq_len"]).total;
                QVERIFY2(std::min(std::fabs(a / implied - 1), std::fabs(b / implied - 1)) <= tol,
                         (id + " " + r["system"].get<std::string>()).c_str());
                continue;
            }
            const double ours = core::megatronCoreFlopsPerToken(s, r["seq_len"]).total;
            QVERIFY2(std::fabs(ours / implied - 1) <= tol, (id + " " + r["system"].get<std::string>()).c_str());
        }
    }

    void activeParametersCarryTheFlops()
    {
        // 6PT on a mixture of experts is 6 × the active parameters (Mixtral: 6 · 12,879,925,248).
        const auto plan = core::estimate(test::scenario({"model.preset=mixtral-8x7b", "flops.convention=6PT"}));
        QCOMPARE(plan.compute.flopsPerToken, 6 * 12879925248.0);
        // The Megatron-Core convention through a scenario, and eq. 3 warned about for experts.
        const auto mc = core::estimate(test::scenario(
            {"model.preset=qwen3-235b-a22b", "flops.convention=megatron-core", "training.seq_len=4096"}));
        QVERIFY(
            close(mc.compute.flopsPerToken, core::megatronCoreFlopsPerToken(preset("qwen3-235b-a22b"), 4096).total));
        const auto eq3 = core::estimate(test::scenario({"model.preset=mixtral-8x7b", "flops.convention=megatron"}));
        QVERIFY(std::any_of(eq3.warnings.begin(), eq3.warnings.end(),
                            [](const core::Warning& w) { return w.code == std::string("flops_convention_dense"); }));
    }
};

QTEST_GUILESS_MAIN(TestFlops)
#include "tst_flops.moc"
