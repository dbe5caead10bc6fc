// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// FP8 / FP4 recipes (core/lowprecision.h): what runs in 8 bits and what stays in BF16, the quantise
// kernels and the memory Transformer Engine adds or saves, each by hand.

#include "testsupport.h"

#include "collectives.h"
#include "estimate.h"
#include "lowprecision.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

using namespace napkin;
using test::scenario;

namespace {

const core::RooflineOp* findOp(const core::Plan& p, std::string_view name)
{
    for (const auto& op : p.ops)
        if (op.name == name)
            return &op;
    return nullptr;
}

bool hasError(const core::Errors& errors, std::string_view field)
{
    return std::any_of(errors.begin(), errors.end(), [&](const core::UserError& e) { return e.field == field; });
}

const char* kFp8[] = {"precision.plan=fp8-mixed", "step_time.mode=predicted", "step_time.framework=megatron",
                      "cluster.gpus=1",           "parallel.zero=0",          "training.global_batch=8"};

} // namespace

class TestLowPrecision : public QObject {
    Q_OBJECT
private slots:
    // "auto" follows the compute dtype; an explicit recipe must match it.
    void recipeResolution()
    {
        QCOMPARE(scenario({"precision.plan=fp8-mixed"}).precision.recipe, core::LowPrecisionRecipe::Delayed);
        QCOMPARE(scenario({"precision.plan=mxfp8-mixed"}).precision.recipe, core::LowPrecisionRecipe::Mxfp8);
        QCOMPARE(scenario({"precision.plan=nvfp4-mixed", "cluster.gpu=b200"}).precision.recipe,
                 core::LowPrecisionRecipe::Nvfp4);
        QCOMPARE(scenario({}).precision.recipe, core::LowPrecisionRecipe::None);
        QCOMPARE(scenario({"precision.plan=fp8-mixed", "precision.recipe=current"}).precision.recipe,
                 core::LowPrecisionRecipe::Current);
        QVERIFY(hasError(test::scenarioErrors({"precision.recipe=current"}), "precision.recipe")); // bf16 compute
        QVERIFY(
            hasError(test::scenarioErrors({"precision.plan=fp8-mixed", "precision.recipe=none"}), "precision.recipe"));
        QVERIFY(
            hasError(test::scenarioErrors({"precision.plan=fp8-mixed", "precision.recipe=mxfp8"}), "precision.recipe"));
        QVERIFY(hasError(
            test::scenarioErrors({"precision.plan=fp8-mixed", "precision.low_precision_gemms=[\"qkv\",\"qkv\"]"}),
            "precision.low_precision_gemms"));
        QVERIFY(hasError(test::scenarioErrors({"precision.plan=fp8-mixed", "precision.low_precision_gemms=[]"}),
                         "precision.low_precision_gemms"));
    }

    // Attention and the output layer stay in BF16 (Transformer Engine's Linear layers are the FP8
    // ones): their ceiling is the BF16 dense peak, the projections' the FP8 one; the attention kernel
    // takes as long as in a BF16 run.
    void whatStaysInBf16()
    {
        std::vector<std::string> sets(std::begin(kFp8), std::end(kFp8));
        const auto p = core::estimate(scenario(sets));
        const auto& h100 = *core::builtinCatalog().gpu("h100-sxm");
        QCOMPARE(findOp(p, "attention_flash")->ceiling, h100.peak(core::PeakColumn::Bf16));
        QCOMPARE(findOp(p, "logits")->ceiling, h100.peak(core::PeakColumn::Bf16));
        QCOMPARE(findOp(p, "qkv_proj")->ceiling, h100.peak(core::PeakColumn::Fp8));
        QVERIFY(findOp(p, "attention_flash")->highPrecision && !findOp(p, "mlp_down")->highPrecision);
        const auto bf16 = core::estimate(scenario({"step_time.mode=predicted", "step_time.framework=megatron",
                                                   "cluster.gpus=1", "parallel.zero=0", "training.global_batch=8"}));
        QCOMPARE(findOp(p, "attention_flash")->achievableSeconds, findOp(bf16, "attention_flash")->achievableSeconds);
        QVERIFY(findOp(p, "mlp_down")->achievableSeconds < 0.6 * findOp(bf16, "mlp_down")->achievableSeconds);
        QVERIFY(p.stepTime.step < bf16.stepTime.step);
        // Everything in FP8 (attention too) is faster still: the old behaviour, now opt-in.
        sets.emplace_back("precision.low_precision_gemms=[\"qkv\",\"out\",\"mlp\",\"head\",\"attention\"]");
        QVERIFY(core::estimate(scenario(sets)).stepTime.step < p.stepTime.step);
    }

    // The quantise kernels of current scaling, Llama 2 7B, 4,096 tokens, fused (Megatron / TE): each
    // output gradient read, read again for its amax, written as two FP8 copies (6 B per value); the
    // inputs the same except the norm outputs, quantised inside the fused norm (4 B); the weights once
    // per step (2 B read, two 1-byte copies written) over the 8 micro-batches.
    void quantiseKernelsByHand()
    {
        std::vector<std::string> sets(std::begin(kFp8), std::end(kFp8));
        sets.emplace_back("precision.recipe=current");
        const auto p = core::estimate(scenario(sets));
        const double n = 4096, h = 4096, f = 11008;
        QCOMPARE(findOp(p, "quantize_grad")->bytes, n * (3 * h + h + 2 * f + h) * 6);
        // Inputs: qkv (h, fused: 4 B), out (h, 6 B), gate_up (h, fused: 4 B), down (f, 6 B).
        QCOMPARE(findOp(p, "quantize_input")->bytes, n * (h * 4 + h * 6 + h * 4 + f * 6));
        const double weights = h * 3 * h + h * h + h * 2 * f + f * h;
        QCOMPARE(findOp(p, "quantize_weight")->bytes, weights * 4);
        QCOMPARE(findOp(p, "quantize_weight")->count, 32.0 / 8);
    }

    // Transformer Engine's launches per quantised tensor (quantizer.cpp, current_scaling.cu at d0067d0da):
    // current scaling zeroes the amax, reduces it, computes the scale and casts: 4 per tensor, over the
    // 4 GEMMs of a Llama layer 16; delayed scaling casts with the amax inside: 4. Megatron casts the
    // weights on the first of the m = 8 micro-batches only, so the step time charges 1/8 of a
    // layer's weight cast (and of its launches) per micro-batch.
    void quantiseLaunchesAndCachedWeights()
    {
        const auto run = [](const char* recipe, const char* global) {
            std::vector<std::string> sets(std::begin(kFp8), std::end(kFp8));
            sets.emplace_back(recipe);
            sets.emplace_back(global);
            return core::estimate(scenario(sets));
        };
        const auto current = run("precision.recipe=current", "training.global_batch=8");
        const auto delayed = run("precision.recipe=delayed", "training.global_batch=8");
        QCOMPARE(findOp(current, "quantize_input")->kernels, 16.0);
        QCOMPARE(findOp(current, "quantize_grad")->kernels, 16.0);
        QCOMPARE(findOp(current, "quantize_weight")->kernels, 16.0);
        QCOMPARE(findOp(delayed, "quantize_input")->kernels, 4.0);
        // Per micro-batch: 32 layers x (16 input + 16 grad + 16 / 8 weight) launches against delayed's
        // 32 x (4 + 4 + 4 / 8).
        QCOMPARE(current.stepTime.kernelsPerMicroBatch - delayed.stepTime.kernelsPerMicroBatch,
                 32.0 * (12 + 12 + 12.0 / 8));
        // Twice the micro-batches, the same work per micro-batch but half the weight casts per micro-batch.
        const auto longer = run("precision.recipe=current", "training.global_batch=16");
        const double w = findOp(current, "quantize_weight")->achievableSeconds * 32;
        QCOMPARE(current.stepTime.microBatches * 2, longer.stepTime.microBatches);
        QVERIFY(std::abs((current.stepTime.compute / current.stepTime.microBatches -
                          longer.stepTime.compute / longer.stepTime.microBatches) -
                         (w / 8 - w / 16)) < 1e-9);
    }

    // Memory: the FP8 inputs saved instead of the BF16 ones, the out projection's FP8 copy beside
    // FlashAttention's BF16 output, and Transformer Engine's FP8 weight and transpose kept all step;
    // none of it under torchtitan.
    void memoryByHand()
    {
        std::vector<std::string> sets(std::begin(kFp8), std::end(kFp8));
        const auto p = core::estimate(scenario(sets));
        const auto bf16 = core::estimate(scenario({"step_time.mode=predicted", "step_time.framework=megatron",
                                                   "cluster.gpus=1", "parallel.zero=0", "training.global_batch=8"}));
        const double n = 4096, h = 4096, f = 11008;
        // −1 B on the two norm outputs and the MLP activation, +1 B for the out projection's copy.
        QCOMPARE(bf16.memory.layerTensors.kept - p.memory.layerTensors.kept, n * (h + h + f - h));
        const double layers = 32 * p.params.perLayer;
        QCOMPARE(p.memory.weights - bf16.memory.weights, layers * 2);
        // torchtitan's Float8Linear casts the weights on every forward: no cache. It saves its inputs in
        // high precision (torchao matmul_with_hp_or_float8_args) and casts them again in the backward:
        // the saved tensors are the BF16 run's.
        sets.emplace_back("step_time.framework=torchtitan");
        const auto titan = core::estimate(scenario(sets));
        QCOMPARE(titan.memory.weights, bf16.memory.weights);
        const auto titanBf16 =
            core::estimate(scenario({"step_time.mode=predicted", "step_time.framework=torchtitan", "cluster.gpus=1",
                                     "parallel.zero=0", "training.global_batch=8"}));
        QCOMPARE(titan.memory.layerTensors.kept, titanBf16.memory.layerTensors.kept);
        QCOMPARE(titan.memory.activations, titanBf16.memory.activations);
    }

    // Megatron-Core --fp8-param-gather: the low-precision GEMMs' weights live in FP8 (the rowwise copy),
    // their BF16 copy is gone: 2 B a GEMM weight out, the FP8 weight and its transpose (1 + 1 B) stay.
    void fp8ParamGatherKeepsNoBf16Copy()
    {
        std::vector<std::string> sets(std::begin(kFp8), std::end(kFp8));
        const auto cached = core::estimate(scenario(sets));
        sets.emplace_back("precision.fp8_param_gather=true");
        const auto primary = core::estimate(scenario(sets));
        const auto bf16 = core::estimate(scenario({"step_time.mode=predicted", "step_time.framework=megatron",
                                                   "cluster.gpus=1", "parallel.zero=0", "training.global_batch=8"}));
        const double layers = 32 * primary.params.perLayer;
        QCOMPARE(cached.memory.weights - primary.memory.weights, layers * 2);
        QCOMPARE(primary.memory.weights, bf16.memory.weights);
        // Block scaling adds its 128 x 128 weight scales (4 B each) to both FP8 copies.
        sets.emplace_back("precision.recipe=blockwise");
        const auto block = core::estimate(scenario(sets));
        QVERIFY(std::abs(block.memory.weights - bf16.memory.weights - layers * 2 * 4.0 / (128 * 128)) < 1);
        // Without a recipe there is nothing to keep in FP8: an error naming the key.
        QVERIFY(hasError(test::scenarioErrors({"precision.fp8_param_gather=true"}), "precision.fp8_param_gather"));
        QVERIFY(test::scenarioErrors({"precision.fp8_param_gather=false"}).empty());
        // torchtitan keeps the 16-bit weights: the key changes nothing there, and says so.
        sets.emplace_back("step_time.framework=torchtitan");
        const auto titan = core::estimate(scenario(sets));
        QVERIFY(std::any_of(titan.warnings.begin(), titan.warnings.end(),
                            [](const core::Warning& w) { return w.code == "fp8_param_gather_unused"; }));
        QVERIFY(std::none_of(primary.warnings.begin(), primary.warnings.end(),
                             [](const core::Warning& w) { return w.code == "fp8_param_gather_unused"; }));
    }

    // torchtitan's Float8 tensor parallelism gathers in FP8 (torchao Float8ColwiseParallel casts the
    // input before the all-gather, Float8RowwiseParallel the output gradient before the backward's);
    // the reduce-scatters stay BF16. Llama 3 8B on one H100 node, TP 8 with SP, one micro-batch of 8192
    // tokens: each all-gather moves s·b·h = 33,554,432 values, 1 B each instead of 2.
    void torchtitanGathersInFp8()
    {
        auto plan = [](bool fp8) {
            std::vector<std::string> sets{
                "model.preset=llama-3-8b",         "cluster.gpus=8",         "parallel.tp=8",
                "parallel.sequence_parallel=true", "parallel.zero=1",        "step_time.framework=torchtitan",
                "step_time.mode=predicted",        "training.micro_batch=1", "training.global_batch=1",
                "training.recompute=none",         "training.seq_len=8192"};
            if (fp8) {
                sets.emplace_back("precision.compute=fp8_e4m3");
                sets.emplace_back("precision.recipe=current");
            }
            return core::estimate(scenario(sets)).stepTime;
        };
        const auto bf16 = plan(false), fp8 = plan(true);
        core::Link link;
        link.busbw = bf16.tpBandwidth;
        link.nominal = bf16.tpBandwidth / bf16.collectiveEfficiency;
        link.ranks = 8;
        const double values = 8192.0 * 4096;
        auto ag = [&](double bytes) { return core::collectiveSeconds(core::Collective::AllGather, bytes, link); };
        auto rs = [&](double bytes) { return core::collectiveSeconds(core::Collective::ReduceScatter, bytes, link); };
        QCOMPARE(bf16.tpCommTotal, 32 * 4 * (ag(2 * values) + rs(2 * values)));
        QCOMPARE(fp8.tpCommTotal, 32 * 4 * (ag(values) + rs(2 * values)));
        // Megatron (Transformer Engine) gathers BF16 under the same recipe.
        const auto te = core::estimate(scenario({"model.preset=llama-3-8b", "cluster.gpus=8", "parallel.tp=8",
                                                 "parallel.sequence_parallel=true", "parallel.zero=1",
                                                 "step_time.framework=megatron", "step_time.mode=predicted",
                                                 "training.micro_batch=1", "training.global_batch=1",
                                                 "training.recompute=none", "training.seq_len=8192",
                                                 "precision.compute=fp8_e4m3", "precision.recipe=current"}))
                            .stepTime;
        // ...plus a 4-byte amax all-reduce per gathered FP8 tensor (amaxReducedOverTensorParallel below):
        // 32 layers x 4, each NCCL's LL ring latency 3.6 + 14 x 0.47 µs on 8 NVLink ranks (its 7 bytes
        // add 0.1 ns).
        QCOMPARE(te.tpAmaxReductions, 32.0 * 4);
        QVERIFY(std::abs(te.tpAmaxSeconds - 10.18e-6) < 1e-9);
        QVERIFY(std::abs(te.tpCommTotal - (bf16.tpCommTotal + 32 * 4 * te.tpAmaxSeconds)) < 1e-12);
    }

    // Transformer Engine reduces a per-tensor scale's amax over TP under sequence parallelism: the
    // column-parallel inputs (QKV, FC1) forward, the row-parallel output gradients (out, FC2) backward;
    // not for block scales, without SP, or for the routed experts (their tokens come from the dispatcher).
    void amaxReducedOverTensorParallel()
    {
        auto run = [](std::vector<std::string> extra) {
            std::vector<std::string> sets{"model.preset=llama-3-8b",
                                          "cluster.gpus=4",
                                          "parallel.tp=4",
                                          "parallel.zero=1",
                                          "parallel.sequence_parallel=true",
                                          "step_time.framework=megatron",
                                          "step_time.mode=predicted",
                                          "training.micro_batch=1",
                                          "training.global_batch=1",
                                          "training.recompute=none",
                                          "precision.plan=fp8-mixed",
                                          "precision.recipe=current"};
            sets.insert(sets.end(), extra.begin(), extra.end());
            return core::estimate(scenario(sets)).stepTime;
        };
        const auto cs = run({});
        QCOMPARE(cs.tpAmaxReductions, 32.0 * 4);
        // 4 ranks: 3.6 + 2 x 3 x 0.47 µs (NCCL 2.7 tuning.cc LL base and NVLink hop).
        QVERIFY(std::abs(cs.tpAmaxSeconds - 6.42e-6) < 1e-9);
        QCOMPARE(run({"training.recompute=full"}).tpAmaxReductions, 32.0 * 6);
        QCOMPARE(run({"precision.recipe=blockwise"}).tpAmaxReductions, 0.0);
        QCOMPARE(run({"precision.recipe=delayed"}).tpAmaxReductions, 0.0);
        QCOMPARE(run({"parallel.sequence_parallel=false"}).tpAmaxReductions, 0.0);
        QCOMPARE(run({"precision.low_precision_gemms=[\"qkv\"]"}).tpAmaxReductions, 32.0);
        // The step carries them: m x n x t more tensor-parallel time than the same plan without them.
        const auto none = run({"precision.recipe=delayed"});
        QVERIFY(cs.tpComm - none.tpComm > 0);
        // Mixtral: every layer MoE, no shared experts: only the attention's two per layer.
        const auto moe =
            run({"model.preset=mixtral-8x7b", "cluster.gpus=32", "parallel.tp=8", "parallel.ep=1", "parallel.pp=4"});
        QCOMPARE(moe.tpAmaxReductions, 8.0 * 2);
        // DeepSeek-V3 (3 dense layers of 61, one shared expert): the MLP's pair in every layer.
        QCOMPARE(core::tensorParallelAmaxReductions(
                     scenario({"model.preset=deepseek-v3", "parallel.tp=8", "parallel.sequence_parallel=true",
                               "step_time.framework=megatron", "precision.plan=fp8-mixed", "precision.recipe=current"}))
                     .forward,
                 2.0);
    }

    // DeepSeek-V3 §3.3.3: the dispatch and the gradient sent to the experts in FP8 (1 x 128 scales),
    // the combine and the gradient sent back in BF16: on with the blockwise recipe, an error without FP8.
    void fp8Dispatch()
    {
        const std::vector<std::string> moe{
            "model.preset=mixtral-8x7b", "cluster.gpus=16",          "parallel.ep=8",
            "parallel.zero=1",           "step_time.mode=predicted", "training.global_batch=64"};
        auto with = [&](std::vector<std::string> extra) {
            auto sets = moe;
            sets.insert(sets.end(), extra.begin(), extra.end());
            return sets;
        };
        QVERIFY(scenario(with({"precision.plan=fp8-mixed", "precision.recipe=blockwise"})).stepTime.fp8Dispatch);
        QVERIFY(!scenario(with({"precision.plan=fp8-mixed", "precision.recipe=current"})).stepTime.fp8Dispatch);
        QVERIFY(hasError(test::scenarioErrors(with({"step_time.fp8_dispatch=true"})), "step_time.fp8_dispatch"));
        const auto bf16 = core::estimate(
            scenario(with({"precision.plan=fp8-mixed", "precision.recipe=blockwise", "step_time.fp8_dispatch=false"})));
        const auto fp8 = core::estimate(scenario(with({"precision.plan=fp8-mixed", "precision.recipe=blockwise"})));
        // Half the all-to-alls at (1 + 4/128) / 2 of the bytes: between 0.74 and 1 of the BF16 traffic
        // (the per-message latency does not shrink).
        const double ratio = fp8.stepTime.epCommTotal / bf16.stepTime.epCommTotal;
        QVERIFY2(ratio > 0.5 * (1 + (1 + 4.0 / 128) / 2) - 1e-9 && ratio < 1, std::to_string(ratio).c_str());
    }

    // MXFP8 and NVFP4 write their block scales with every copy (the mxfp8-mixed plan also stores the
    // activations in MXFP8: 1 + 1/32 B read per gradient value).
    void blockScales()
    {
        QCOMPARE(core::recipeInfo(core::LowPrecisionRecipe::Mxfp8).activationScales, 1.0 / 32);
        QCOMPARE(core::recipeInfo(core::LowPrecisionRecipe::Blockwise).activationScales, 4.0 / 128);
        const auto p = core::estimate(
            scenario({"precision.plan=mxfp8-mixed", "cluster.gpu=b200", "step_time.mode=predicted",
                      "step_time.framework=megatron", "cluster.gpus=1", "parallel.zero=0", "training.global_batch=8"}));
        const double n = 4096, h = 4096, f = 11008;
        QCOMPARE(findOp(p, "quantize_grad")->bytes, n * (3 * h + h + 2 * f + h) * (1 + 1.0 / 32) * 3);
    }
};

QTEST_APPLESS_MAIN(TestLowPrecision)
#include "tst_lowprecision.moc"
