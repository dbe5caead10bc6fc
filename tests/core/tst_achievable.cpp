// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Achievable rates (core/achievable.h), NCCL α–β collectives (core/collectives.h), the frameworks'
// overlap rules (core/framework.h), uneven pipeline stages and the validation set (core/validate.h),
// each against hand computations or published figures.
#include "testsupport.h"

#include "achievable.h"
#include "catalog.h"
#include "collectives.h"
#include "framework.h"
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

using namespace napkin;

class TestAchievable : public QObject {
    Q_OBJECT
private slots:
    void gemmShapeEfficiencyByHand()
    {
        // Each CTA's k loop pays K0 = 160 (Hopper) / 180 (Ampere) elements of fill and epilogue.
        // H100 (132 SMs, Hopper tiles). 8192³: 64 x 128 tiles give 128 · 64 = 8192 CTAs in 63 waves of
        // 132: 8192 / 8316; the larger tiles leave more of the last wave idle (2048 / (16 · 132)).
        QCOMPARE(core::gemmPipelineK0(90), 160.0);
        QCOMPARE(core::gemmShapeEfficiency(8192, 8192, 8192, 1, 132, 90), 8192.0 / (63 * 132) * 8192 / (8192 + 160));
        // M = 1: a 64-row tile is 1/64 used; 32 column tiles < 132 SMs, so K splits 4 ways (128 CTAs,
        // 1,024 deep each); unsplit, 32 CTAs would leave 100 SMs idle.
        QCOMPARE(core::gemmShapeEfficiency(1, 4096, 4096, 1, 132, 90), 1.0 / 64 * 128 / 132 * 1024 / (1024 + 160));
        // A100 (108 SMs, Ampere tiles): 1024 x 4096 output in 256 x 128 tiles = 128 CTAs: 2 waves of
        // 108, 128 / 216; 128 x 64 tiles: 512 CTAs, 5 waves, 512 / 540 (the best, with 64 x 64's
        // 1024 / 1080).
        QCOMPARE(core::gemmShapeEfficiency(1024, 4096, 4096, 1, 108, 80), 512.0 / 540 * 4096 / (4096 + 180));
        // No SMs (TPU): no quantisation, no pipeline term.
        QCOMPARE(core::gemmShapeEfficiency(100, 100, 100, 1, 0, 0), 1.0);
    }

    void gemmEfficiencyFollowsPublishedKSweep()
    {
        // OpenXLA's default matmul perf table (xla/service/gpu/model/matmul_interpolator_data.h,
        // "sm_90", bf16 TFLOP/s), m = n = 4096, batch 4 and batch 1, k = 256 ... 4096. The model's
        // rate relative to k = 4096 against the measured one: within 3% at batch 4 (16 waves) and at
        // batch 1 from k = 1024. Batch 1 at k = 256 / 512 runs 17-22 µs kernels that lose another
        // 3-5 µs each to launch ramp and tail (the step time's per-kernel gap counts 1 µs): skipped.
        const double b4[] = {505.2, 620.4, 722.3, 759.5, 788.7};
        const double b1[] = {398.6, 551.8, 685.2, 735.6, 780.2};
        const double ks[] = {256, 512, 1024, 2048, 4096};
        for (int batch : {4, 1}) {
            const double* measured = batch == 4 ? b4 : b1;
            const double ref = core::gemmShapeEfficiency(4096, 4096, 4096, batch, 132, 90);
            for (int i = batch == 4 ? 0 : 2; i < 5; ++i) {
                const double model = core::gemmShapeEfficiency(4096, 4096, ks[i], batch, 132, 90) / ref;
                const double published = measured[i] / measured[4];
                QVERIFY2(std::abs(model / published - 1) < 0.03,
                         qPrintable(QStringLiteral("batch %1 k %2: model %3, published %4")
                                        .arg(batch)
                                        .arg(ks[i])
                                        .arg(model)
                                        .arg(published)));
            }
        }
        // Blackwell ("sm_100" in the same table, batch 4, m = n = 4096): K0 = 370 follows the k sweep
        // within 5% (k = 256 is the farthest: 4.4%).
        const double sm100[] = {789.4, 1092.4, 1350.4, 1544.0, 1690.7};
        const double ref100 = core::gemmShapeEfficiency(4096, 4096, 4096, 4, 148, 100);
        for (int i = 0; i < 4; ++i) {
            const double model = core::gemmShapeEfficiency(4096, 4096, ks[i], 4, 148, 100) / ref100;
            const double published = sm100[i] / sm100[4];
            QVERIFY2(
                std::abs(model / published - 1) < 0.05,
                qPrintable(QStringLiteral("sm_100 k %1: model %2, published %3").arg(ks[i]).arg(model).arg(published)));
        }
        // The achievable figure is a measurement at one shape: a GEMM of that shape runs at exactly the
        // figure (H100 SXM: MAMF 794.5 TFLOP/s at 2048 x 2048 x 13312, held at the power limit: x 0.876,
        // the H200's measured sustained share), a larger one never above it, a shallow one (k = 512)
        // below it by the model's ratio.
        auto sc = test::scenario({"cluster.gpu=h100-sxm", "step_time.mode=predicted"});
        const auto plan = core::estimate(sc);
        const auto rates = core::rateModel(sc, plan.hardware);
        QCOMPARE(rates.gemm, 794.5e12 * 0.876);
        QCOMPARE(rates.gemmShapeAtFigure, core::gemmShapeEfficiency(2048, 2048, 13312, 1, 132, 90));
        auto timeOf = [&](double m, double n, double k) {
            core::RooflineOp op;
            op.kind = core::OpKind::Gemm;
            op.m = m, op.n = n, op.k = k, op.batch = 1;
            op.flops = 2 * m * n * k;
            core::applyAchievable(op, rates);
            return op.achievableSeconds;
        };
        const double sustained = 794.5e12 * 0.876;
        QCOMPARE(timeOf(2048, 2048, 13312), 2 * 2048.0 * 2048 * 13312 / sustained);
        QCOMPARE(timeOf(16384, 16384, 16384), 2 * 16384.0 * 16384 * 16384 / sustained);
        const double shallow = core::gemmShapeEfficiency(2048, 2048, 512, 1, 132, 90) / rates.gemmShapeAtFigure;
        QCOMPARE(timeOf(2048, 2048, 512), 2 * 2048.0 * 2048 * 512 / (sustained * shallow));
        QVERIFY(shallow < 0.8);
    }

    void causalAttentionSkipsTheMaskedTiles()
    {
        // FlashAttention-2 §3.1.1: of nb x nb key/query blocks the causal kernel computes nb(nb+1)/2.
        QCOMPARE(core::causalExecutedFraction(4096, 4096, true), 33.0 / 64); // nb = 32
        QCOMPARE(core::causalExecutedFraction(128, 128, true), 1.0);         // one block: the diagonal
        QCOMPARE(core::causalExecutedFraction(4096, 4096, false), 1.0);
        // The plan shows both: executed FLOPs below the counted ones, per attention op.
        const auto plan = core::estimate(test::scenario({"step_time.mode=predicted"}));
        for (const auto& op : plan.ops)
            if (op.kind == core::OpKind::Attention)
                QCOMPARE(op.executedFlops, op.flops * 33.0 / 64);
    }

    void attentionKernelFollowsTheFramework()
    {
        // Megatron-Core runs Transformer Engine's cuDNN attention (FlashAttention-3 class) on Hopper,
        // torchtitan SDPA's FlashAttention-2; on Ampere both are FlashAttention-2.
        QCOMPARE(core::attentionEfficiency(core::AttentionKernel::Flash3, 90).forward, 0.62);
        QCOMPARE(core::attentionEfficiency(core::AttentionKernel::Flash2, 90).forward, 0.33);
        QCOMPARE(core::attentionEfficiency(core::AttentionKernel::Flash3, 80).forward, 0.70); // no FA3 on Ampere
        const auto megatron = test::scenario({"step_time.framework=megatron"});
        const auto titan = test::scenario({"step_time.framework=torchtitan"});
        QCOMPARE(int(core::attentionKernelFor(megatron)), int(core::AttentionKernel::Flash3));
        QCOMPARE(int(core::attentionKernelFor(titan)), int(core::AttentionKernel::Flash2));
        const auto forced = test::scenario({"step_time.framework=torchtitan", "step_time.attention_kernel=flash3"});
        QCOMPARE(int(core::attentionKernelFor(forced)), int(core::AttentionKernel::Flash3));
    }

    // FlashAttention-1 and its Triton port: half of FlashAttention-2 on the same device (Dao 2023, abstract:
    // FlashAttention-2 is "around 2x" faster). A100: 0.70 / 2 forward, 0.55 / 2 backward; H100: 0.33 / 2, 0.31 / 2.
    void flashAttention1IsHalfOfFlashAttention2()
    {
        const auto a100 = core::attentionEfficiency(core::AttentionKernel::Flash1, 80);
        QCOMPARE(a100.forward, 0.35);
        QCOMPARE(a100.backward, 0.275);
        const auto h100 = core::attentionEfficiency(core::AttentionKernel::Flash1, 90);
        QCOMPARE(h100.forward, 0.165);
        QCOMPARE(h100.backward, 0.155);
        QVERIFY(std::string(h100.source).find("2307.08691") != std::string::npos);
        const auto chosen = test::scenario({"step_time.mode=predicted", "step_time.attention_kernel=flash1"});
        QCOMPARE(int(core::attentionKernelFor(chosen)), int(core::AttentionKernel::Flash1));
        // The attention ops of the plan take twice the time of the FlashAttention-2 plan's (the GEMMs do not move).
        const auto fa2 =
            core::estimate(test::scenario({"step_time.mode=predicted", "step_time.attention_kernel=flash2"}));
        const auto fa1 = core::estimate(chosen);
        QCOMPARE(fa1.ops.size(), fa2.ops.size());
        for (std::size_t i = 0; i < fa1.ops.size(); ++i) {
            const double ratio = fa1.ops[i].achievableSeconds / fa2.ops[i].achievableSeconds;
            if (fa1.ops[i].kind == core::OpKind::Attention)
                QVERIFY2(std::abs(ratio - 2.0) < 1e-9, fa1.ops[i].name);
            else
                QVERIFY2(std::abs(ratio - 1.0) < 1e-12, fa1.ops[i].name);
        }
    }

    // Smaller heads run slower per FLOP (the papers' figures per head dim, causal, 16k): FlashAttention-3 on
    // H100 at head dim 64 reaches 473 / 616 = 0.77 of its head-dim-128 rate forward and 474 / 561 = 0.85
    // backward (Shah et al. 2024 Figs. 5-6); FlashAttention-2 on A100 171 / 189 = 0.90 (Dao 2023 Fig. 4).
    void attentionSlowsAtSmallHeads()
    {
        QCOMPARE(core::attentionHeadDimFactor(64, 0.77), 0.77);
        QCOMPARE(core::attentionHeadDimFactor(32, 0.77), 0.77); // nothing measured below 64: held
        QCOMPARE(core::attentionHeadDimFactor(128, 0.77), 1.0);
        QCOMPARE(core::attentionHeadDimFactor(256, 0.77), 1.0);
        QVERIFY(std::abs(core::attentionHeadDimFactor(96, 0.77) - (0.77 + 0.23 * std::log2(1.5))) < 1e-12);
        const auto h100 = core::attentionEfficiency(core::AttentionKernel::Flash3, 90);
        QCOMPARE(h100.forward64, 0.77);
        QCOMPARE(h100.backward64, 0.85);
        QCOMPARE(core::attentionEfficiency(core::AttentionKernel::Flash2, 80).forward64, 0.90);
        QCOMPARE(core::attentionEfficiency(core::AttentionKernel::Flash1, 80).backward64, 0.90);
        // The plan's attention ops (Llama-2-7B, head dim 128) priced again at head dims 64 and 96: the
        // same work takes 1 / factor as long (compute-bound, same CTAs).
        const auto sc = test::scenario({"step_time.mode=predicted", "cluster.gpu=h100-sxm"});
        const auto plan = core::estimate(sc);
        const auto rates = core::rateModel(sc, plan.hardware);
        int seen = 0;
        for (const auto& op : plan.ops) {
            if (op.kind != core::OpKind::Attention)
                continue;
            QCOMPARE(op.k, 128.0);
            const bool fwd = op.pass == core::Pass::Forward;
            for (const double d : {64.0, 96.0}) {
                core::RooflineOp small = op;
                small.k = d;
                core::applyAchievable(small, rates);
                const double f = core::attentionHeadDimFactor(d, fwd ? 0.77 : 0.85);
                QVERIFY2(std::abs(small.achievableSeconds * f / op.achievableSeconds - 1) < 1e-12, op.name);
            }
            ++seen;
        }
        QCOMPARE(seen, 2);
    }

    // Attention kernels run at the GPU's sustained share of their burst (paper) fractions, as GEMMs do:
    // the H100 SXM's 0.876 (gpus.json, napkin-probe at the 700 W limit); a GB200 has none measured.
    // Hand case: FlashAttention-3 forward on H100, head dim 128, 33 x 4096 queries of 128-row blocks =
    // 1,056 CTAs = 8 full waves of 132 SMs, not causal: 1e12 FLOP / (989.4e12 x 0.62 x 0.876) s, below
    // the achievable GEMM rate (794.5e12 x 0.876).
    void attentionRunsAtTheSustainedShare()
    {
        core::RateModel r;
        r.peak = 989.4e12;
        r.gemm = 794.5e12 * 0.876;
        r.sms = 132;
        r.computeCapability = 90;
        r.attention = core::attentionEfficiency(core::AttentionKernel::Flash3, 90);
        r.attentionSustained = 0.876;
        core::RooflineOp op;
        op.kind = core::OpKind::Attention;
        op.pass = core::Pass::Forward;
        op.flops = 1e12;
        op.m = op.n = 4096;
        op.k = 128;
        op.batch = 33;
        core::applyAchievable(op, r);
        QVERIFY(std::abs(op.achievableSeconds / (1e12 / (989.4e12 * 0.62 * 0.876)) - 1) < 1e-12);
        QVERIFY(std::string_view(op.efficiencySource).find("flashinfer PR 2899") != std::string_view::npos);
        r.attentionSustained = 1; // a GPU without a measured share: the paper's fraction as it is
        core::applyAchievable(op, r);
        QVERIFY(std::abs(op.achievableSeconds / (1e12 / (989.4e12 * 0.62)) - 1) < 1e-12);
        QVERIFY(std::string_view(op.efficiencySource).find("flashinfer") == std::string_view::npos);
        // The plan's rate model takes the catalogue's share.
        for (const auto& [gpu, share] : {std::pair{"h100-sxm", 0.876}, std::pair{"a100-sxm4-80gb", 0.94},
                                         std::pair{"b200", 0.861}, std::pair{"gb200", 1.0}}) {
            const auto sc = test::scenario({"step_time.mode=predicted", std::string("cluster.gpu=") + gpu});
            QCOMPARE(core::rateModel(sc, core::estimate(sc).hardware).attentionSustained, share);
        }
    }

    void collectivesPickNcclsFastestProtocol()
    {
        // 8 ranks on NVLink at 360 GB/s achieved. 1 MB: LL (bandwidth / 4, 10.18 µs latency) wins;
        // 1 GB: Simple (full bandwidth, 56 µs latency) wins (NCCL src/graph/tuning.cc).
        core::Link nvl;
        nvl.ranks = 8;
        nvl.busbw = 360e9;
        nvl.nominal = 450e9;
        const double vol1 = 2 * 7.0 / 8 * 1e6;
        QCOMPARE(core::collectiveSeconds(core::Collective::AllReduce, 1e6, nvl),
                 (3.6 + 14 * 0.47) * 1e-6 + vol1 / 90e9);
        const double vol2 = 2 * 7.0 / 8 * 1e9;
        QCOMPARE(core::collectiveSeconds(core::Collective::AllReduce, 1e9, nvl),
                 (8.4 + 14 * 3.4) * 1e-6 + vol2 / 360e9);
        // At the spec bound: nominal bandwidth, no latency.
        QCOMPARE(core::collectiveSeconds(core::Collective::AllReduce, 1e9, nvl, true), vol2 / 450e9);
        // All-gather: (n - 1) steps.
        QCOMPARE(core::collectiveSeconds(core::Collective::AllGather, 1e9, nvl),
                 (8.4 + 7 * 3.4) * 1e-6 + 7.0 / 8 * 1e9 / 360e9);
        // 1,024 nodes of one rank: a ring pays 2 · 1023 network latencies; the tree log2(1024) = 10.
        core::Link net;
        net.ranks = 1024;
        net.nodes = 1024;
        net.crossesNodes = true;
        net.busbw = 40e9;
        net.nominal = 50e9;
        const double small = core::collectiveSeconds(core::Collective::AllReduce, 4, net);
        QCOMPARE(small, (4.4 + 2 * (0 * 0.52 + 10 * 5.0)) * 1e-6 + 2 * 1023.0 / 1024 * 4 / 10e9); // tree, LL
        QVERIFY(small < 2 * 1023 * 2.7e-6);
    }

    void frameworksDecideWhatOverlaps()
    {
        // auto: torchtitan with FSDP, DeepSpeed with ZeRO-3, Megatron otherwise.
        QCOMPARE(int(test::scenario({"parallel.zero=0", "parallel.fsdp=full"}).stepTime.framework),
                 int(core::Framework::Torchtitan));
        QCOMPARE(int(test::scenario({"parallel.zero=3"}).stepTime.framework), int(core::Framework::Deepspeed));
        QCOMPARE(int(test::scenario({}).stepTime.framework), int(core::Framework::Megatron));
        // DeepSpeed: overlap_comm false for ZeRO-1/2, true for ZeRO-3; an explicit value wins.
        QVERIFY(!test::scenario({"step_time.framework=deepspeed", "parallel.zero=1"}).stepTime.overlapDp);
        QVERIFY(test::scenario({"parallel.zero=3"}).stepTime.overlapDp);
        QVERIFY(test::scenario({"step_time.framework=deepspeed", "parallel.zero=1", "step_time.overlap_dp=true"})
                    .stepTime.overlapDp);
        // ZeRO-3 with full recompute: DeepSpeed gathers the parameters three times per micro-batch
        // (forward, recomputed forward, backward), FSDP2 twice. One micro-batch (global batch 64 on
        // 64 GPUs): the difference is exactly one all-gather of the rank's bf16 parameters over the 64
        // data-parallel ranks (8 per node: min(450, 8 x 50) x 0.8 = 320 GB/s).
        const std::initializer_list<std::string> common = {"parallel.zero=3", "training.recompute=full",
                                                           "training.global_batch=64", "step_time.mode=predicted"};
        std::vector<std::string> ds(common), tt(common);
        ds.push_back("step_time.framework=deepspeed");
        tt.push_back("step_time.framework=torchtitan");
        auto build = [](const std::vector<std::string>& sets) {
            nlohmann::json doc = core::defaultScenarioJson();
            core::Errors errors;
            for (const auto& s : sets)
                core::applySet(doc, s, errors);
            return core::estimate(core::parseScenario(doc, core::builtinCatalog(), errors));
        };
        const auto pd = build(ds), pt = build(tt);
        core::Link dp;
        dp.ranks = 64;
        dp.nodes = 8;
        dp.crossesNodes = true;
        dp.busbw = 320e9;
        dp.nominal = 400e9;
        const double gather = core::collectiveSeconds(core::Collective::AllGather, pd.params.total * 2, dp);
        QVERIFY(std::fabs((pd.stepTime.dpCommTotal - pt.stepTime.dpCommTotal) / gather - 1) < 1e-9);
    }

    void torchtitanOpPolicy()
    {
        // torchtitan's op-level checkpointing saves SDPA's outputs and every other mm's in forward
        // order (wq, wk, wv, wo, w1, w3, w2: the odd ones; parallelize_llama.py _save_list at
        // 9dec370) and recomputes the rest: wk, wo and w3 plus every forward elementwise op.
        // Llama 2 7B (MHA): wk is a third of the fused QKV projection, w3 half of gate/up.
        const auto titan = core::estimate(test::scenario(
            {"parallel.zero=0", "parallel.fsdp=full", "training.recompute=op", "step_time.mode=predicted"}));
        double gemm = 0, elementwise = 0;
        for (const auto& op : titan.ops) {
            const std::string_view name = op.name;
            if (op.pass != core::Pass::Forward || name.rfind("logits", 0) == 0 || name.rfind("cross_entropy", 0) == 0)
                continue;
            const double share = name == "qkv_proj"      ? 1.0 / 3
                                 : name == "out_proj"    ? 1.0
                                 : name == "mlp_gate_up" ? 0.5
                                                         : 0.0;
            if (op.kind == core::OpKind::Gemm)
                gemm += share * op.achievableSeconds;
            else if (op.kind != core::OpKind::Attention)
                elementwise += op.achievableSeconds;
        }
        const double m = double(titan.compute.accumulationSteps), L = 32;
        QVERIFY(std::fabs(titan.stepTime.recompute / (m * L * (gemm + elementwise)) - 1) < 1e-12);
        // Hardware FLOPs: 2 · (wk + wo + w3) per token per layer = 2 · 4096 · (4096 + 4096 + 11008).
        const double perToken = L * 2 * 4096.0 * (4096 + 4096 + 11008);
        QVERIFY(std::fabs(titan.compute.hardwareFlops / ((titan.compute.flopsPerToken + perToken) * 2e12) - 1) < 1e-12);
        const auto megatron =
            core::estimate(test::scenario({"training.recompute=selective", "step_time.mode=predicted"}));
        double core = 0; // Megatron's attention kernel (cuDNN, FlashAttention-3 class on Hopper)
        for (const auto& op : megatron.ops)
            if (op.pass == core::Pass::Forward && op.kind == core::OpKind::Attention)
                core += op.achievableSeconds;
        QVERIFY(std::fabs(megatron.stepTime.recompute / (m * L * core) - 1) < 1e-12);
    }

    void unevenPipelineStages()
    {
        // Llama 3.1 405B as Meta trained it: 126 layers on 16 stages, the first and last one layer
        // short (Dubey et al. 2024 §3.3.2): 7 + 14 x 8 + 7.
        const auto sc =
            test::scenario({"model.preset=llama-3.1-405b", "cluster.gpus=16384", "parallel.tp=8", "parallel.pp=16",
                            "parallel.first_stage_layers=7", "parallel.last_stage_layers=7", "training.seq_len=8192",
                            "training.global_batch=2048", "step_time.mode=predicted"});
        const auto layers = core::stageLayerCounts(sc.parallel, 126);
        QCOMPARE(layers.size(), std::size_t(16));
        QCOMPARE(layers.front(), 7.0);
        QCOMPARE(layers[1], 8.0);
        QCOMPARE(layers.back(), 7.0);
        const auto plan = core::estimate(sc);
        // Parameters per stage follow the layers: a middle stage holds 8/126 of the layer parameters.
        const double perLayer = plan.params.layers / 126;
        QVERIFY(std::fabs(plan.memory.perStage[1].params / (8 * perLayer / 8) - 1) < 1e-12);
        double total = 0;
        for (const auto& st : plan.memory.perStage)
            total += st.params;
        QVERIFY(std::fabs(total * 8 / plan.params.total - 1) < 1e-12);
        // The step time: the slowest stage (8 layers) sets the pace, as if every stage held 8.
        QVERIFY(plan.stepTime.valid);
        const auto eight = core::estimate(
            test::scenario({"model.preset=llama-3.1-405b", "cluster.gpus=16384", "parallel.tp=8", "parallel.pp=16",
                            "parallel.pipeline_layout=[8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,6]", "training.seq_len=8192",
                            "training.global_batch=2048", "step_time.mode=predicted"}));
        QVERIFY(std::fabs(plan.stepTime.compute / eight.stepTime.compute - 1) < 1e-12);
        // An explicit layout, and the errors that name the keys.
        const auto explicitLayout = test::scenario(
            {"model.preset=llama-2-7b", "parallel.pp=4", "cluster.gpus=64", "parallel.pipeline_layout=[7,9,9,7]"});
        QCOMPARE(core::stageLayerCounts(explicitLayout.parallel, 32)[1], 9.0);
        auto first = test::scenarioErrors({"model.preset=llama-3.1-405b", "parallel.pp=16", "cluster.gpus=128"});
        QVERIFY(!first.empty());
        QCOMPARE(first.front().field, std::string("parallel.pp"));
        QVERIFY(first.front().allowed.find("first_stage_layers") != std::string::npos);
        auto bad = test::scenarioErrors({"model.preset=llama-2-7b", "parallel.pp=4", "cluster.gpus=64",
                                         "parallel.first_stage_layers=7", "parallel.last_stage_layers=8"});
        QVERIFY(!bad.empty());
        QCOMPARE(bad.front().field, std::string("parallel.first_stage_layers"));
        auto layout = test::scenarioErrors(
            {"model.preset=llama-2-7b", "parallel.pp=4", "cluster.gpus=64", "parallel.pipeline_layout=[8,8,8]"});
        QVERIFY(!layout.empty());
        QCOMPARE(layout.front().field, std::string("parallel.pipeline_layout"));
    }

    void newKeysNameTheirRange()
    {
        QCOMPARE(test::scenarioErrors({"step_time.collective_efficiency=1.5"}).front().field,
                 std::string("step_time.collective_efficiency"));
        QCOMPARE(test::scenarioErrors({"step_time.save_every_steps=100"}).front().field,
                 std::string("step_time.save_bandwidth"));
        QCOMPARE(test::scenarioErrors({"step_time.overlap_dp=\"sometimes\""}).front().field,
                 std::string("step_time.overlap_dp"));
        QCOMPARE(test::scenarioErrors({"step_time.framework=jax"}).front().field, std::string("step_time.framework"));
        // Checkpoint saves: each rank writes its weights and optimizer states (bf16-mixed, ZeRO-1 over
        // 64: 2 + 8/64 bytes per parameter) at 2 GB/s every 100 steps.
        const auto plan = core::estimate(test::scenario(
            {"step_time.mode=predicted", "step_time.save_every_steps=100", "step_time.save_bandwidth=2e9"}));
        const auto& m = plan.memory;
        QVERIFY(
            std::fabs(plan.stepTime.checkpointSave / ((m.weights + m.masterWeights + m.optimizerStates) / 2e9 / 100) -
                      1) < 1e-12);
    }

    void catalogueAchievableFigures()
    {
        const auto& cat = core::builtinCatalog();
        const auto* h100 = cat.gpu("h100-sxm");
        QCOMPARE(h100->achievableMatmulFlops, 794.5e12); // MAMF
        QCOMPARE(h100->achievableBandwidth, 2.97e12);    // BabelStream Triad
        QVERIFY(h100->achievablePublished);
        QCOMPARE(h100->smCount, 132);
        // B200: OpenXLA's "sm_100" matmul table, batch 4 of 4096^3.
        QCOMPARE(cat.gpu("b200")->achievableMatmulFlops, 1690656401017304.0);
        // A GPU without a published figure gets the median ratio of those with one, and says so.
        const auto* b200 = cat.gpu("h20");
        QVERIFY(!b200->achievablePublished);
        QVERIFY(b200->sourceAchievable.find("median") != std::string::npos);
        std::vector<double> ratios;
        for (const auto& g : cat.gpus)
            if (g.achievablePublished || g.sourceAchievable.find("matmul not published") == std::string::npos)
                if (g.peak(core::PeakColumn::Bf16) > 0 &&
                    g.sourceAchievable.find("matmul not published") == std::string::npos)
                    ratios.push_back(g.achievableMatmulFlops / g.peak(core::PeakColumn::Bf16));
        std::sort(ratios.begin(), ratios.end());
        const double median = ratios.size() % 2 ? ratios[ratios.size() / 2]
                                                : 0.5 * (ratios[ratios.size() / 2 - 1] + ratios[ratios.size() / 2]);
        QVERIFY(std::fabs(b200->achievableMatmulFlops / b200->peak(core::PeakColumn::Bf16) / median - 1) < 1e-12);
        // The plan: spec peak for MFU, achievable beside it.
        const auto plan = core::estimate(test::scenario({}));
        QCOMPARE(plan.hardware.peakFlops, 989.5e12);
        QCOMPARE(plan.hardware.achievableFlops, 989.5e12 * (794.5e12 / 989.5e12) * 0.876); // sustained share
        QCOMPARE(plan.hardware.sustainedShare, 0.876);
    }

    void fp8AndFp4FiguresOfTheirOwn()
    {
        const auto& cat = core::builtinCatalog();
        auto rates = [&](const char* gpu, core::DType dtype) {
            core::HardwareSummary hw;
            core::resolveHardwareRates(hw, *cat.gpu(gpu), dtype);
            return hw;
        };
        // H100 FP8: Azure's sustained cuBLASLt figure (1382.2 TFLOP/s at 32768^3), not MAMF's bf16
        // share of the FP8 peak (794.5 / 989.5 x 1979 = 1589 TFLOP/s).
        const auto h100 = rates("h100-sxm", core::DType::Fp8E4m3);
        QVERIFY(std::fabs(h100.achievableFlops / (1382.2e12 * 0.902) - 1) < 1e-12); // x the sustained fp8 share
        QCOMPARE(h100.achievableFlopsShape[0], 32768.0);
        // bf16 on the same GPU keeps MAMF at its shape.
        const auto h100bf16 = rates("h100-sxm", core::DType::Bf16);
        QVERIFY(std::fabs(h100bf16.achievableFlops / (794.5e12 * 0.876) - 1) < 1e-12);
        QCOMPARE(h100bf16.achievableFlopsShape[2], 13312.0);
        QVERIFY(std::fabs(rates("h200-sxm", core::DType::Fp8E4m3).achievableFlops / (1366.3e12 * 0.902) - 1) < 1e-12);
        QVERIFY(std::fabs(rates("gb200", core::DType::Nvfp4).achievableFlops / 7627.6e12 - 1) < 1e-12);
        // B200 FP8: mamf-finder's burst (MAMF 3435.2 TFLOP/s) at its sustained share (MSMF 2795.7 over
        // the curve there: 0.814); FP4: the GB200's share of its own peak, 7627.6 / 10000 x 9000.
        QVERIFY(std::fabs(rates("b200", core::DType::Fp8E4m3).achievableFlops / (3435.2e12 * 0.814) - 1) < 1e-12);
        QVERIFY(std::fabs(rates("b200", core::DType::Nvfp4).achievableFlops / 6864.84e12 - 1) < 1e-9);
        QVERIFY(std::fabs(rates("b200", core::DType::Bf16).achievableFlops / (1690656401017304.0 * 0.861) - 1) < 1e-12);
        // A100: bf16 is MAMF's burst at the sustained share Azure's FP16 runs give (0.94); FP16 is Azure's
        // own sustained figure, taken as published (no share on top).
        QVERIFY(std::fabs(rates("a100-sxm4-80gb", core::DType::Bf16).achievableFlops / (271.2e12 * 0.94) - 1) < 1e-12);
        QVERIFY(std::fabs(rates("a100-sxm4-80gb", core::DType::Fp16).achievableFlops / 253.7e12 - 1) < 1e-12);
        QCOMPARE(rates("a100-sxm4-80gb", core::DType::Fp16).sustainedShare, 1.0);
        // No FP8 figure published (RTX 4090): the bf16 share of the FP8 peak, 164.8 / 165.2 x 330.3.
        QVERIFY(std::fabs(rates("rtx-4090", core::DType::Fp8E4m3).achievableFlops / (164.8 / 165.2 * 330.3e12) - 1) <
                1e-12);
    }

    void validationSetIsCitedAndRatcheted()
    {
        const auto& cases = core::builtinValidationSet();
        QVERIFY(cases.size() >= 15);
        const auto results = core::runValidation(cases);
        const auto s = core::summarize(results);
        for (const auto& r : results) {
            QVERIFY2(r.failure.empty(), (r.c->id + ": " + r.failure).c_str());
            QVERIFY2(!r.c->url.empty() && !r.c->source.empty(), r.c->id.c_str());
            QVERIFY2(r.mfu <= r.mfuCeiling * (1 + 1e-9), r.c->id.c_str());
        }
        QVERIFY(s.sources >= 4);
        // The ratchet: a change may not make the median or the maximum |error| worse without updating
        // tests/data/validation-baseline.json in the same commit, with the reason.
        std::ifstream in(std::string(NAPKIN_TEST_DATA) + "/validation-baseline.json");
        const auto base = nlohmann::json::parse(in);
        QVERIFY(s.n >= base["n"].get<int>());
        QVERIFY2(s.medianAbsError <= base["median_abs_error"].get<double>() + 1e-9,
                 qPrintable(QString::number(s.medianAbsError)));
        QVERIFY2(s.maxAbsError <= base["max_abs_error"].get<double>() + 1e-9,
                 qPrintable(QString::number(s.maxAbsError)));
        // The JSON the CLI prints (napkin.validate/1).
        const auto j = core::validationToJson(results, s);
        QCOMPARE(j["schema"].get<std::string>(), std::string("napkin.validate/1"));
        QCOMPARE(j["cases"].size(), cases.size());
        QCOMPARE(j["summary"]["n"].get<int>(), s.n);
        QVERIFY(core::validationToText(results, s).find("median |error|") != std::string::npos);
        // A hostile set: unknown key, FLOP metric without a convention.
        core::Errors errors;
        core::loadValidationSet(
            R"({"schema":"napkin.validation-set/1","cases":[{"id":"x","source":"s","source_group":"g",
            "url":"u","metric":"mfu","published":0.4,"scenario":{},"colour":1}]})",
            errors);
        QCOMPARE(errors.size(), std::size_t(2));
    }

    // Megatron-LM's MoE recipe table reports model TFLOP/s under Megatron-Core's
    // num_floating_point_operations (active experts, causal halving), not eq. 3's dense MLP: a case
    // says so with convention "megatron-core". Qwen3-30B-A3B at 4,096 by hand: per layer
    // 6(2048·(4096 + 2·512) + 4096·2048) + 6·32·256·2048 + 6·2048·3·8·768 = 440,401,920, × 48, plus
    // the head 6·2048·151,936 = 23,006,281,728 FLOP per token; the Megatron-Bridge archive's own row
    // (206 TFLOP/s/GPU at 8,960 tokens/s/GPU) implies 22.99e9.
    void megatronCoreConventionInAValidationCase()
    {
        const auto text = [](const std::string& convention) {
            const nlohmann::json scenario = {
                {"model", {{"preset", "qwen3-30b-a3b"}}},
                {"training", {{"seq_len", 4096}, {"micro_batch", 1}, {"global_batch", 256}}},
                {"cluster", {{"gpu", "h100-sxm"}, {"gpus", 32}}},
                {"parallel", {{"ep", 8}}},
                {"step_time", {{"mode", "predicted"}}}};
            const nlohmann::json set = {{"schema", "napkin.validation-set/1"},
                                        {"cases",
                                         {{{"id", "q"},
                                           {"source", "s"},
                                           {"source_group", "g"},
                                           {"url", "u"},
                                           {"metric", "model_tflops_per_gpu"},
                                           {"convention", convention},
                                           {"published", 234.1},
                                           {"scenario", scenario}}}}};
            return set.dump();
        };
        core::Errors errors;
        const auto cases = core::loadValidationSet(text("megatron-core"), errors);
        QVERIFY(errors.empty());
        QCOMPARE(cases.size(), std::size_t(1));
        const auto results = core::runValidation(cases);
        QVERIFY2(results[0].failure.empty(), results[0].failure.c_str());
        // The same scenario as the case, the convention set as runValidation sets it.
        const auto plan = core::estimate(
            test::scenario({"model.preset=qwen3-30b-a3b", "training.seq_len=4096", "training.micro_batch=1",
                            "training.global_batch=256", "cluster.gpu=h100-sxm", "cluster.gpus=32", "parallel.ep=8",
                            "step_time.mode=predicted", "flops.convention=megatron-core"}));
        QCOMPARE(plan.compute.flopsPerToken, 23006281728.0);
        QVERIFY(std::abs(plan.compute.flopsPerToken / (206e12 / 8960) - 1) < 0.005);
        // The metric divides those FLOPs by the predicted step: tokens/s/GPU x FLOP per token.
        const double tflops = plan.compute.flopsPerStep / (32 * plan.time.stepSeconds) / 1e12;
        QVERIFY(std::abs(results[0].predicted / tflops - 1) < 1e-12);

        core::Errors bad;
        core::loadValidationSet(text("megatron-kore"), bad);
        QCOMPARE(bad.size(), std::size_t(1));
        QCOMPARE(bad[0].allowed, std::string("megatron, megatron-core, palm, 6PT"));
    }

    // Every published run ran, so each validation case also checks the memory ledger: the case's
    // busiest-stage total against its GPU's memory, and the cases over it counted and marked.
    void validationCasesShowTheirMemory()
    {
        const auto entry = [](const char* id, int microBatch) {
            return nlohmann::json{
                {"id", id},
                {"source", "s"},
                {"source_group", "g"},
                {"url", "u"},
                {"metric", "step_seconds"},
                {"published", 1.0},
                {"scenario", {{"training", {{"micro_batch", microBatch}, {"global_batch", 8 * microBatch}}}}}};
        };
        const nlohmann::json set = {{"schema", "napkin.validation-set/1"},
                                    {"cases", {entry("fits", 1), entry("over", 64)}}};
        core::Errors errors;
        const auto cases = core::loadValidationSet(set.dump(), errors);
        QVERIFY(errors.empty());
        const auto results = core::runValidation(cases);
        QCOMPARE(results.size(), std::size_t(2));
        for (const auto& r : results) {
            QVERIFY2(r.failure.empty(), r.failure.c_str());
            auto doc = core::mergeScenario(core::defaultScenarioJson(), r.c->scenario);
            doc["step_time"]["mode"] = "predicted";
            core::Errors e;
            const auto plan = core::estimate(core::parseScenario(doc, core::builtinCatalog(), e));
            QVERIFY(e.empty());
            QCOMPARE(r.memoryPerGpu, plan.memory.total);
            QCOMPARE(r.capacity, plan.memory.capacity);
            QCOMPARE(r.fits, plan.memory.total <= plan.memory.capacity);
        }
        QVERIFY(results[0].fits);
        QVERIFY(!results[1].fits); // 64 sequences a micro-batch: activations far past 80 GB
        const auto s = core::summarize(results);
        QCOMPARE(s.overMemory, 1);
        const auto j = core::validationToJson(results, s);
        QCOMPARE(j["summary"]["over_memory"].get<int>(), 1);
        QCOMPARE(j["cases"][1]["fits"].get<bool>(), false);
        QVERIFY(core::validationToText(results, s).find("* 1 of 2 cases do not fit") != std::string::npos);
        QVERIFY(core::validationToMarkdown(results, s).find(" (over) |") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestAchievable)
#include "tst_achievable.moc"
