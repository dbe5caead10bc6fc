// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The kernels a framework launches for each memory-bound op (core/kernels.h), dropout and RoPE
// traffic, the fp32 loss, the power-limit clock and the per-dtype achievable GEMM rate, each
// against a hand count of the bytes the code reads and writes.
#include "testsupport.h"

#include "achievable.h"
#include "catalog.h"
#include "framework.h"

#include <algorithm>
#include <cmath>
#include <string_view>

using namespace napkin;

namespace {

const core::RooflineOp& op(const core::Plan& p, std::string_view name)
{
    for (const auto& o : p.ops)
        if (name == o.name)
            return o;
    static const core::RooflineOp none{};
    [&] { QVERIFY2(false, std::string(name).c_str()); }();
    return none;
}

// Qwen3-30B-A3B (48 MoE layers of 128 experts, top 8), seq 4096, micro-batch 1, one GPU, predicted.
core::Plan qwen3MoePlan(const std::vector<std::string>& extra)
{
    std::vector<std::string> s{"model.preset=qwen3-30b-a3b", "cluster.gpus=1",          "training.seq_len=4096",
                               "training.micro_batch=1",     "training.global_batch=1", "step_time.mode=predicted"};
    s.insert(s.end(), extra.begin(), extra.end());
    return core::estimate(test::scenario(s));
}

bool has(const core::Plan& p, std::string_view name)
{
    for (const auto& o : p.ops)
        if (name == o.name)
            return true;
    return false;
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT
private slots:
    void fusedOpsReadAndWriteEachTensorOnce()
    {
        // Llama 2 7B (h 4096, 32 heads of 128, FFN 11008, V 32000), seq 4096, micro-batch 1, bf16,
        // Megatron (fused kernels, vocab-parallel cross-entropy on fp32 logits).
        const auto p = core::estimate(test::scenario({}));
        const double n = 4096, h = 4096, f = 11008, V = 32000, e = 2;
        QCOMPARE(op(p, "norm_attn").bytes, 2 * e * n * h + e * h); // read x, write y, the weight
        QCOMPARE(op(p, "norm_attn").kernels, 1.0);
        QCOMPARE(op(p, "rope").bytes, 2 * e * n * (h + h)); // q and k, read and written once
        QCOMPARE(op(p, "rope").kernels, 1.0);
        QCOMPARE(op(p, "silu_mul").bytes, 3 * e * n * f);
        QCOMPARE(op(p, "silu_mul.bwd").bytes, 5 * e * n * f);
        // logits.float() (e + 4), max 4, sub_ 8, exp 8, sum 4, div_ 8 | mul_ 8, cast back 4 + e.
        QCOMPARE(op(p, "cross_entropy").bytes, (e + 4 + 4 + 8 + 8 + 4 + 8) * n * V);
        QCOMPARE(op(p, "cross_entropy.bwd").bytes, (8 + 4 + e) * n * V);
        QCOMPARE(op(p, "cross_entropy").kernels, 6.0);
        QVERIFY(!has(p, "repeat_kv")); // MHA, and fused kernels read shared KV heads anyway
        QVERIFY(!has(p, "attn_dropout"));
        // The residual add: read two, write one; no dropout in Llama.
        QCOMPARE(op(p, "residual_attn").bytes, 3 * e * n * h);
    }

    void eagerOpsFollowTheModelCode()
    {
        // torchtitan without torch.compile: its RMSNorm, RoPE and SwiGLU run op by op, GQA repeats K, V.
        const auto p = core::estimate(test::scenario({"model.preset=llama-3-8b", "step_time.framework=torchtitan"}));
        QCOMPARE(p.ops.front().implementation[0] != '\0', true);
        const double n = 4096, h = 4096, kv = 1024, f = 14336, V = 128256, e = 2;
        // x.float (e+4), pow 8, mean 4, mul 8, type_as (4+e), mul weight 2e = 28 + 4e per element.
        QCOMPARE(op(p, "norm_attn").bytes, (28 + 4 * e) * n * h + e * h);
        QCOMPARE(op(p, "norm_attn").kernels, 8.0);
        QCOMPARE(op(p, "norm_attn.bwd").bytes, (76 + 8 * e) * n * h + e * h); // bf16 gradients (bf16-mixed plan)
        QCOMPARE(op(p, "norm_attn.bwd").kernels, 15.0);
        // x.float (e+4), complex multiply 8, type_as (4+e) on q and k.
        QCOMPARE(op(p, "rope").bytes, (16 + 2 * e) * n * (h + kv));
        QCOMPARE(op(p, "rope").kernels, 3.0);
        QCOMPARE(op(p, "silu_mul").bytes, 5 * e * n * f);
        QCOMPARE(op(p, "silu_mul.bwd").bytes, 9 * e * n * f);
        // repeat_kv: read K and V (kv columns each), write them at every query head (h columns each).
        QCOMPARE(op(p, "repeat_kv").bytes, 2 * e * n * (kv + h));
        // F.cross_entropy(pred.float()): cast (e+4), log_softmax 16 | zeros 4, log_softmax_backward 16, cast back 4+e.
        QCOMPARE(op(p, "cross_entropy").bytes, (e + 4 + 16) * n * V);
        QCOMPARE(op(p, "cross_entropy.bwd").bytes, (4 + 16 + 4 + e) * n * V);
        // torch.compile (kernel_fusion = fused) brings the block back to one kernel per op.
        const auto c = core::estimate(test::scenario(
            {"model.preset=llama-3-8b", "step_time.framework=torchtitan", "step_time.kernel_fusion=\"fused\""}));
        QCOMPARE(op(c, "norm_attn").bytes, 2 * e * n * h + e * h);
        QVERIFY(!has(c, "repeat_kv"));
        QCOMPARE(op(c, "cross_entropy").bytes, op(p, "cross_entropy").bytes); // the loss is outside the blocks
        // In the predicted step, eager costs time and launches.
        const auto pe = core::estimate(
            test::scenario({"model.preset=llama-3-8b", "step_time.framework=torchtitan", "step_time.mode=predicted"}));
        const auto pc =
            core::estimate(test::scenario({"model.preset=llama-3-8b", "step_time.framework=torchtitan",
                                           "step_time.kernel_fusion=\"fused\"", "step_time.mode=predicted"}));
        QVERIFY(pe.stepTime.step > pc.stepTime.step);
        QVERIFY(pe.stepTime.kernelsPerMicroBatch > pc.stepTime.kernelsPerMicroBatch);
        QCOMPARE(test::scenarioErrors({"step_time.kernel_fusion=\"jit\""}).front().field,
                 std::string("step_time.kernel_fusion"));
    }

    void fusedCrossEntropyReadsTheLogitsTwice()
    {
        // Transformer Engine's Triton cross-entropy (Megatron --cross-entropy-loss-fusion, impl te): the
        // online softmax reads the logits (e), the loss kernel reads them again and writes the gradient
        // over them (2e) | the backward scales that gradient in place (2e). Llama 2 7B, n = 4096, V = 32000.
        const double n = 4096, V = 32000, e = 2;
        const auto f = core::estimate(test::scenario({"step_time.cross_entropy=\"fused\""}));
        QCOMPARE(op(f, "cross_entropy").bytes, 3 * e * n * V);
        QCOMPARE(op(f, "cross_entropy").kernels, 2.0);
        QCOMPARE(op(f, "cross_entropy.bwd").bytes, 2 * e * n * V);
        QCOMPARE(op(f, "cross_entropy.bwd").kernels, 1.0);
        // The loss path holds the logits only (the gradient overwrites them), not Megatron's fp32 copy:
        // DeepSeek-V3 at s = 4096, b = 1 drops from 4096 · 129280 · (2 + 4) to 4096 · 129280 · 2 bytes.
        const auto ds = core::estimate(
            test::scenario({"model.preset=deepseek-v3", "model.mtp_layers=0", "step_time.cross_entropy=\"fused\""}));
        QCOMPARE(ds.memory.temporaries, 4096.0 * 129280 * 2);
        // "auto" and "unfused" are the framework's own loss (here Megatron's), and under torchtitan too.
        const auto u = core::estimate(test::scenario({"step_time.cross_entropy=\"unfused\""}));
        QCOMPARE(op(u, "cross_entropy").bytes, op(core::estimate(test::scenario({})), "cross_entropy").bytes);
        const auto t =
            core::estimate(test::scenario({"step_time.framework=torchtitan", "step_time.cross_entropy=\"fused\""}));
        QCOMPARE(op(t, "cross_entropy").bytes, 3 * e * n * V);
        // In the predicted step it is shorter; a bad value names the field.
        const auto pf =
            core::estimate(test::scenario({"step_time.cross_entropy=\"fused\"", "step_time.mode=predicted"}));
        const auto pu = core::estimate(test::scenario({"step_time.mode=predicted"}));
        QVERIFY(pf.stepTime.step < pu.stepTime.step);
        QCOMPARE(test::scenarioErrors({"step_time.cross_entropy=\"liger\""}).front().field,
                 std::string("step_time.cross_entropy"));
    }

    void dropoutCostsItsMasks()
    {
        // GPT-style layer with dropout and unfused attention (Megatron-LM 2021): the hidden dropouts
        // are fused into bias-dropout-add (+1 mask byte each way); the attention-probability dropout is
        // its own kernel: read e, write e and the mask (Megatron ParallelAttention).
        const auto p = core::estimate(test::scenario({"model.preset=gpt3-175b", "training.flash_attention=false",
                                                      "training.seq_len=2048", "parallel.tp=8", "cluster.gpus=64"}));
        const double n = 2048, h = 12288, e = 2, heads = 96.0 / 8, scores = heads * 2048 * 2048;
        QCOMPARE(op(p, "residual_attn").bytes, (3 * e + 1) * n * h);
        QCOMPARE(op(p, "residual_mlp.bwd").bytes, (3 * e + 1) * n * h);
        QCOMPARE(op(p, "attn_dropout").bytes, (2 * e + 1) * scores);
        QCOMPARE(op(p, "attn_dropout.bwd").bytes, (2 * e + 1) * scores);
        QVERIFY(!has(p, "rope")); // learned positions
        // FlashAttention draws the dropout inside the kernel: no separate op.
        const auto f = core::estimate(
            test::scenario({"model.preset=gpt3-175b", "training.seq_len=2048", "parallel.tp=8", "cluster.gpus=64"}));
        QVERIFY(!has(f, "attn_dropout"));
        // Selective recomputation (the attention core) repeats the dropout kernel too.
        const auto sel = core::estimate(test::scenario({"model.preset=gpt3-175b", "training.flash_attention=false",
                                                        "training.seq_len=2048", "parallel.tp=8", "cluster.gpus=64",
                                                        "training.recompute=selective", "step_time.mode=predicted"}));
        const double core = op(sel, "scores_qk").achievableSeconds + op(sel, "softmax").achievableSeconds +
                            op(sel, "attn_dropout").achievableSeconds + op(sel, "scores_v").achievableSeconds;
        const double m = double(sel.compute.accumulationSteps), L = 96;
        QVERIFY(std::fabs(sel.stepTime.recompute / (m * L * core) - 1) < 1e-12);
    }

    void routerKernelsFollowFusionAndAuxLoss()
    {
        // Qwen3-30B-A3B (48 MoE layers of 128 experts, top 8), seq 4096, micro-batch 1, one GPU: the
        // router works on T x E = 4096 x 128 fp32 logits (core/kernels.h routerCost). Megatron-Core's
        // default runs it as PyTorch ops, 13 kernels forward and 8 backward, 28 and 16 with the
        // auxiliary load-balancing loss (router.py, moe_utils.py at d98e8a64d); Transformer Engine's
        // fused router 1 and 1, 6 and 4 with the loss. Bytes per logit: unfused 41 | 28 (63 | 44 with
        // the loss), fused 9 | 12 (23 | 28).
        const double te = 4096.0 * 128;
        const auto run = qwen3MoePlan;
        struct Case {
            std::vector<std::string> sets;
            double fwdKernels, bwdKernels, fwdBytes, bwdBytes;
        };
        const Case cases[] = {
            {{}, 28, 16, 63, 44}, // auto: unfused, and Qwen3 trains with the aux loss (aux_loss)
            {{"training.moe_aux_loss=none"}, 13, 8, 41, 28},
            {{"step_time.moe_router_fusion=true"}, 6, 4, 23, 28},
            {{"step_time.moe_router_fusion=true", "training.moe_aux_loss=none"}, 1, 1, 9, 12},
            {{"training.moe_aux_loss=seq_aux_loss"}, 28, 16, 63, 44},
        };
        for (const auto& c : cases) {
            const auto p = run(c.sets);
            QCOMPARE(op(p, "router_topk").kernels, c.fwdKernels);
            QCOMPARE(op(p, "router_topk.bwd").kernels, c.bwdKernels);
            QCOMPARE(op(p, "router_topk").bytes, c.fwdBytes * te);
            QCOMPARE(op(p, "router_topk.bwd").bytes, c.bwdBytes * te);
        }
        // Each kernel is counted in the micro-batch's launches: 48 layers x (28 + 16 - 1 - 1) more.
        const auto unfused = run({}), fused = run({"step_time.moe_router_fusion=true", "training.moe_aux_loss=none"});
        QCOMPARE(unfused.stepTime.kernelsPerMicroBatch - fused.stepTime.kernelsPerMicroBatch, 48.0 * (28 + 16 - 2));
        // A dense model has no router; DeepSeek-V3's score-correction bias resolves "auto" to its
        // sequence-wise loss (Megatron-Bridge deepseek_v3_bridge.py: seq_aux_loss).
        QVERIFY(!has(core::estimate(test::scenario({"step_time.mode=predicted"})), "router_topk"));
        // Set on a dense model, the two keys warn that they do nothing (moe_keys_unused), as the other MoE keys do.
        const auto warned = [](const core::Plan& p) {
            return std::any_of(p.warnings.begin(), p.warnings.end(),
                               [](const core::Warning& w) { return w.code == "moe_keys_unused"; });
        };
        QVERIFY(warned(core::estimate(test::scenario({"training.moe_aux_loss=none"}))));
        QVERIFY(warned(core::estimate(test::scenario({"step_time.moe_router_fusion=true"}))));
        QVERIFY(!warned(core::estimate(test::scenario({}))));
        auto ds = test::scenario({"model.preset=deepseek-v3"});
        QVERIFY(core::effectiveMoeAuxLoss(ds) == core::MoeAuxLoss::SeqAuxLoss);
        // Its router runs on the 58 MoE layers of 61 (the first three are dense), as the router GEMM does.
        const auto dsPlan = core::estimate(ds);
        QCOMPARE(op(dsPlan, "router_topk").count, 58.0);
        QCOMPARE(op(dsPlan, "router").count, 58.0);
        QVERIFY(core::effectiveMoeAuxLoss(test::scenario({})) == core::MoeAuxLoss::None);
        // Bad values name the field.
        for (const char* bad : {"training.moe_aux_loss=z_loss", "step_time.moe_router_fusion=\"yes\""}) {
            const auto e = test::scenarioErrors({bad});
            QVERIFY2(!e.empty(), bad);
            QCOMPARE(e.front().field, std::string(bad).substr(0, std::string(bad).find('=')));
        }
    }

    void fp32RouterRunsItsBackwardInFp32()
    {
        // Megatron-Core --moe-router-dtype fp32 (RouterGatingLinearFunction, moe_utils.py at d98e8a64d):
        // Qwen3-30B-A3B, T = 4096 tokens, h = 2048, E = 128, on one H100. Forward: BF16 operands, fp32
        // logits. Backward: inp and weight cast to fp32, both gradient GEMMs on fp32 operands at the TF32
        // rate (494.7 TFLOP/s dense on H100), the gradients cast back: four more kernels a MoE layer.
        const double T = 4096, h = 2048, E = 128;
        const auto run = qwen3MoePlan;
        const auto bf16 = run({}), fp32 = run({"training.moe_router_dtype=fp32"});
        QCOMPARE(op(bf16, "router").bytes, 2 * T * h + 2 * h * E + 2 * T * E);
        QCOMPARE(op(fp32, "router").bytes, 2 * T * h + 2 * h * E + 4 * T * E);
        QCOMPARE(op(fp32, "router.dgrad").bytes, 4 * (T * E + h * E + T * h));
        QCOMPARE(op(fp32, "router.wgrad").bytes, 4 * (T * h + T * E + h * E));
        QVERIFY(op(fp32, "router.dgrad").tf32 && op(fp32, "router.wgrad").tf32 && !op(bf16, "router.dgrad").tf32);
        QCOMPARE(op(fp32, "router.dgrad").ceiling, 494.7e12);
        QCOMPARE(op(fp32, "router_cast.bwd").bytes, 2 * T * h * (2 + 4) + 2 * h * E * (2 + 4));
        QCOMPARE(op(fp32, "router_cast.bwd").kernels, 4.0);
        QCOMPARE(op(fp32, "router_cast.bwd").count, 48.0);
        QVERIFY(!has(bf16, "router_cast.bwd"));
        QCOMPARE(fp32.stepTime.kernelsPerMicroBatch - bf16.stepTime.kernelsPerMicroBatch, 48.0 * 4);
        // Memory-bound at fp32 bytes: the dgrad takes at least its bytes at the achievable bandwidth, and
        // the step grows by at least the casts' bytes at that bandwidth.
        const double bw = fp32.hardware.achievableBandwidth;
        QVERIFY(op(fp32, "router.dgrad").achievableSeconds >= op(fp32, "router.dgrad").bytes / bw);
        QVERIFY(fp32.stepTime.compute - bf16.stepTime.compute >= 48 * op(fp32, "router_cast.bwd").bytes / bw);
        // A dense model warns that the key does nothing; an unknown dtype names the field.
        const auto warned = core::estimate(test::scenario({"training.moe_router_dtype=fp32"})).warnings;
        QVERIFY(std::any_of(warned.begin(), warned.end(),
                            [](const core::Warning& w) { return w.code == "moe_keys_unused"; }));
        const auto e = test::scenarioErrors({"training.moe_router_dtype=fp64"});
        QVERIFY(!e.empty());
        QCOMPARE(e.front().field, std::string("training.moe_router_dtype"));
    }

    void megatronAccumulatesWeightGradientsInTheGemm()
    {
        // Megatron's --gradient-accumulation-fusion (on by default): Transformer Engine's wgrad GEMM adds
        // into main_grad (beta = 1), reading the buffer it writes. Llama 2 7B, seq 4096, micro-batch 1:
        // qkv_proj.wgrad reads X (4096 x 4096) and dY (4096 x 12288) in bf16 and writes the 4096 x 12288
        // gradient: in bf16 under bf16-mixed, in fp32 under the megatron plan; torchtitan writes it once.
        const double n = 4096, h = 4096, N = 3 * 4096, e = 2;
        const auto wgradBytes = [](std::vector<std::string> sets) {
            sets.emplace_back("step_time.mode=predicted");
            return op(core::estimate(test::scenario(sets)), "qkv_proj.wgrad").bytes;
        };
        QCOMPARE(wgradBytes({}), e * n * h + e * n * N + 2 * 2 * h * N);
        QCOMPARE(wgradBytes({"precision.plan=megatron"}), e * n * h + e * n * N + 2 * 4 * h * N);
        QCOMPARE(wgradBytes({"step_time.framework=torchtitan"}), e * n * h + e * n * N + 2 * h * N);
        // Qwen3-30B-A3B on one GPU routes 4096 · 8 / 128 = 256 rows to each expert: its fc1 weight
        // gradient (2048 x 1536 per expert, fp32 main grads) is memory-bound, so the accumulation's read
        // slows it: 256 rows of 2048 + 1536 in bf16 and 8 (not 4) bytes per gradient element.
        const auto expertWgrad = [](const char* framework) {
            return op(
                core::estimate(test::scenario({"model.preset=qwen3-30b-a3b", "cluster.gpus=1", "training.seq_len=4096",
                                               "training.micro_batch=1", "training.global_batch=1",
                                               "precision.plan=megatron", "step_time.mode=predicted", framework})),
                "mlp_gate_up.wgrad");
        };
        const auto fused = expertWgrad("step_time.framework=megatron");
        const auto plain = expertWgrad("step_time.framework=torchtitan");
        QCOMPARE(fused.bytes - plain.bytes, 4.0 * 128 * 2048 * 1536); // every expert's gradient read once more
        QVERIFY(fused.achievableSeconds > plain.achievableSeconds);
    }

    void powerLimitLowersTheSustainedClock()
    {
        // Dynamic power ~ f·V² with V ~ f: a 500 W limit on a 700 W part sustains (5/7)^(1/3) of the
        // clock; the GEMM rate follows, HBM bandwidth does not.
        const auto p = core::estimate(test::scenario({"cluster.gpu=h100-sxm-96gb", "cluster.power_limit=500"}));
        NAPKIN_COMPARE_REL(p.hardware.clockFactor, std::cbrt(500.0 / 700.0), 1e-15);
        // The sustained figure at 700 W (MAMF x 0.876, resources/gpus.json) scaled to 500 W.
        NAPKIN_COMPARE_REL(p.hardware.achievableFlops, 794.5e12 * 0.876 * std::cbrt(500.0 / 700.0), 1e-12);
        QCOMPARE(p.hardware.achievableBandwidth, 2.4e12 * 2.97 / 3.35);
        QCOMPARE(p.hardware.peakFlops, 989.5e12); // the spec sheet stays for MFU
        QCOMPARE(p.hardware.bandwidth, 2.4e12);
        // A check on the model: the H100 NVL (same die, 350-400 W) is specified at 835 of 989.5 TFLOP/s,
        // 0.844; the cube root of 400 / 700 is 0.830.
        QVERIFY(std::fabs(std::cbrt(400.0 / 700.0) - 835.0 / 989.5) < 0.02);
        // At the TDP nothing changes; above it is an error naming the field and its range.
        const auto full = core::estimate(test::scenario({"cluster.gpu=h100-sxm-96gb", "cluster.power_limit=700"}));
        QCOMPARE(full.hardware.clockFactor, 1.0);
        QCOMPARE(full.hardware.achievableFlops, 794.5e12 * 0.876);
        const auto errors = test::scenarioErrors({"cluster.power_limit=800"});
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors.front().field, std::string("cluster.power_limit"));
        QVERIFY(errors.front().allowed.find("700") != std::string::npos);
    }

    void fp16HasItsOwnAchievableRate()
    {
        // A100 80GB: bf16 MAMF 271.2 TFLOP/s at the sustained share 0.94; fp16 cuBLASLt 253.7 at 8192^3
        // (Azure ND A100 v4, after 10,000 warm-ups: already sustained, no share).
        const auto bf16 = core::estimate(test::scenario({"cluster.gpu=a100-sxm4-80gb"}));
        NAPKIN_COMPARE_REL(bf16.hardware.achievableFlops, 271.2e12 * 0.94, 1e-12);
        const auto fp16 = core::estimate(test::scenario({"cluster.gpu=a100-sxm4-80gb", "precision.plan=fp16-mixed"}));
        NAPKIN_COMPARE_REL(fp16.hardware.achievableFlops, 253.7e12, 1e-12);
        QCOMPARE(fp16.hardware.peakFlops, 312e12);
    }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
