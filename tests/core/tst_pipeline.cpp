// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Pipeline schedules (parallel.pipeline_schedule): the loader's rules, DualPipe's memory per rank and
// its bubble and overlap, checked by hand against DeepSeek-V3's Table 2 and deepseek-ai/DualPipe.

#include "search.h"
#include "testsupport.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

using namespace napkin;
using napkin::test::scenario;

namespace {

bool hasError(const core::Errors& errors, std::string_view field, std::string_view text)
{
    return std::any_of(errors.begin(), errors.end(), [&](const core::UserError& e) {
        return e.field == field && (e.why.find(text) != std::string::npos || e.allowed.find(text) != std::string::npos);
    });
}

// Llama 2 7B (32 layers) on 8 H100s as pp 4 × dp 2, one sequence per micro-batch and 16 per step:
// m = 8 micro-batches per replica, the fewest DualPipe accepts at pp 4 (2 · pp).
core::Scenario llama(std::string schedule, std::initializer_list<std::string> more = {})
{
    std::vector<std::string> sets{"model.preset=llama-2-7b",
                                  "cluster.gpu=h100-sxm",
                                  "cluster.gpus=8",
                                  "parallel.pp=4",
                                  "parallel.zero=1",
                                  "training.micro_batch=1",
                                  "training.global_batch=16",
                                  "step_time.mode=predicted",
                                  "parallel.pipeline_schedule=" + schedule};
    sets.insert(sets.end(), more.begin(), more.end());
    return napkin::test::scenario(sets);
}

} // namespace

class TestPipeline : public QObject {
    Q_OBJECT
private slots:
    void scheduleRules()
    {
        // "auto" follows virtual_stages, as before the key existed.
        QCOMPARE(scenario({"parallel.pp=4", "cluster.gpus=8", "parallel.virtual_stages=2", "model.preset=llama-2-7b"})
                     .parallel.schedule,
                 core::PipelineSchedule::Interleaved);
        QCOMPARE(scenario({"parallel.pp=4", "cluster.gpus=8", "model.preset=llama-2-7b"}).parallel.schedule,
                 core::PipelineSchedule::OneFOneB);
        const std::initializer_list<std::string> base{"model.preset=llama-2-7b", "cluster.gpus=8",
                                                      "training.micro_batch=1"};
        auto errs = [&](std::initializer_list<std::string> more) {
            std::vector<std::string> all(base);
            all.insert(all.end(), more.begin(), more.end());
            return napkin::test::scenarioErrors(all);
        };
        QVERIFY(hasError(errs({"parallel.pp=4", "parallel.virtual_stages=2", "parallel.pipeline_schedule=1f1b"}),
                         "parallel.pipeline_schedule", "virtual_stages"));
        QVERIFY(hasError(errs({"parallel.pp=4", "parallel.pipeline_schedule=interleaved"}),
                         "parallel.pipeline_schedule", "virtual_stages"));
        QVERIFY(hasError(errs({"parallel.pp=1", "parallel.pipeline_schedule=dualpipe"}), "parallel.pipeline_schedule",
                         "even"));
        // 32 layers on 8 stages fit, and 8 is even; but 16 sequences over dp 1 are 16 micro-batches, 2 · pp = 16: fine.
        QVERIFY(errs({"parallel.pp=8", "training.global_batch=16", "parallel.pipeline_schedule=dualpipe"}).empty());
        // 14 micro-batches are fewer than 2 · pp = 16; 15 is odd.
        QVERIFY(hasError(errs({"parallel.pp=8", "training.global_batch=14", "parallel.pipeline_schedule=dualpipe"}),
                         "parallel.pipeline_schedule", "at least 2 · pp = 16"));
        QVERIFY(hasError(errs({"parallel.pp=4", "training.global_batch=18", "parallel.pipeline_schedule=dualpipe"}),
                         "parallel.pipeline_schedule", "even number"));
        QVERIFY(hasError(errs({"parallel.pp=4", "parallel.virtual_stages=2", "training.global_batch=16",
                               "parallel.pipeline_schedule=dualpipe"}),
                         "parallel.pipeline_schedule", "virtual_stages"));
        QVERIFY(hasError(errs({"parallel.pipeline_schedule=zb1p"}), "parallel.pipeline_schedule", "dualpipe"));
    }

    void dualPipeHoldsTwoStagesAndOneMoreChunk()
    {
        // DualPipe's Table 2 (arXiv 2412.19437 §3.2.1): 2x parameters and pp + 1 micro-batch chunks of
        // activations per device. Rank 0 holds stage 0 (8 layers + embedding) and stage 3 (8 layers +
        // final norm + output layer): P - 16 layers' worth; rank 1 holds stages 1 and 2: 16 layers.
        const auto dual = core::estimate(llama("dualpipe"));
        const auto onef = core::estimate(llama("1f1b"));
        const auto& pc = dual.params;
        QCOMPARE(dual.memory.perStage.size(), std::size_t(4));
        NAPKIN_COMPARE_REL(dual.memory.perStage[0].params, pc.total - pc.layers / 2, 1e-12);
        NAPKIN_COMPARE_REL(dual.memory.perStage[1].params, pc.layers / 2, 1e-12);
        NAPKIN_COMPARE_REL(dual.memory.perStage[0].params,
                           onef.memory.perStage[0].params + onef.memory.perStage[3].params, 1e-12);
        // Every rank: min(pp - i, m/2) + min(i + 1, m/2) = (4 - i) + (i + 1) = 5 chunks with m/2 = 4.
        for (const auto& st : dual.memory.perStage)
            QCOMPARE(st.inFlight, 5.0);
        // The model states double on the ends: the 1F1B first stage's weights plus the last stage's.
        NAPKIN_COMPARE_REL(dual.memory.perStage[0].weights,
                           onef.memory.perStage[0].weights + onef.memory.perStage[3].weights, 1e-12);
        NAPKIN_COMPARE_REL(dual.memory.perStage[0].optimizer,
                           onef.memory.perStage[0].optimizer + onef.memory.perStage[3].optimizer, 1e-12);
        // The derivation names both stages.
        const auto d = std::find_if(dual.derivations.begin(), dual.derivations.end(), [](const core::Derivation& x) {
            return std::string_view(x.quantity) == "memory.params_per_rank";
        });
        QVERIFY(d != dual.derivations.end());
        QVERIFY(std::string_view(d->formula).find("P_mirror") != std::string_view::npos);
    }

    void dualPipeBubbleByHand()
    {
        // (PP/2 - 1)(F&B + B - 3W) with F&B = F + B: F, B and W summed here from the plan's own ops
        // (per layer, per micro-batch), 8 layers a chunk, the head half on each end rank; TP, CP and
        // launches scale with the chunk. 1F1B's bubble on the same layout is (pp - 1)(F + B).
        const auto dual = core::estimate(llama("dualpipe"));
        const auto& b = dual.stepTime;
        QVERIFY(b.valid);
        QCOMPARE(std::string_view(b.pipelineSchedule), std::string_view("dualpipe"));
        double F = 0, B = 0, W = 0;
        for (const auto& op : dual.ops) {
            const std::string_view n = op.name;
            const bool head = n.rfind("logits", 0) == 0 || n.rfind("cross_entropy", 0) == 0;
            const double t = op.achievableSeconds * (head ? 0.5 : 8.0);
            (op.pass == core::Pass::Forward ? F : B) += t;
            if (n.size() > 6 && n.substr(n.size() - 6) == ".wgrad")
                W += t;
        }
        QVERIFY(W > 0 && W < B);
        // Nothing of the pipeline's sends is exposed (they hide behind the paired chunk), so a
        // micro-batch is its chunk.
        QCOMPARE(b.ppComm, 0.0);
        QVERIFY(b.ppCommTotal > 0);
        const double chunk = b.microBatchSeconds, scale = chunk / (F + B);
        NAPKIN_COMPARE_REL(b.chunkWgrad, W * scale, 1e-9);
        NAPKIN_COMPARE_REL(b.bubble, (4.0 / 2 - 1) * (chunk + (B - 3 * W) * scale), 1e-9);
        // Against 1F1B on the same layout: (pp - 1)(F + B) of its slowest (last) stage.
        const auto onef = core::estimate(llama("1f1b"));
        NAPKIN_COMPARE_REL(onef.stepTime.bubble, 3 * onef.stepTime.microBatchSeconds, 1e-12);
        QVERIFY(b.bubble < onef.stepTime.bubble / 2);
        // The plan's bubble fraction uses B = 2F, W = F: 2 (p/2 - 1) / (3 m) = 2 / 24.
        NAPKIN_COMPARE_REL(dual.memory.bubbleFraction, 2.0 / 24.0, 1e-12);
    }

    void dualPipeHidesTheAllToAll()
    {
        // Qwen3-30B-A3B on 16 H100s, EP 8 × PP 2: DualPipe runs each chunk's dispatch and combine behind
        // the paired chunk's compute (exposed: only what exceeds it) and holds 20 of the 132 SMs while
        // they run (arXiv 2412.19437 §3.2.2). 1F1B exposes all of it.
        const std::initializer_list<std::string> moe{"model.preset=qwen3-30b-a3b",
                                                     "cluster.gpu=h100-sxm",
                                                     "cluster.gpus=16",
                                                     "parallel.pp=2",
                                                     "parallel.ep=8",
                                                     "parallel.zero=1",
                                                     "training.micro_batch=1",
                                                     "training.global_batch=32",
                                                     "training.seq_len=4096",
                                                     "step_time.mode=predicted"};
        std::vector<std::string> a(moe), c(moe);
        a.push_back("parallel.pipeline_schedule=dualpipe");
        c.push_back("parallel.pipeline_schedule=1f1b");
        auto build = [](const std::vector<std::string>& sets) { return core::estimate(napkin::test::scenario(sets)); };
        const auto dual = build(a), onef = build(c);
        const auto& d = dual.stepTime;
        QVERIFY(d.valid && onef.stepTime.valid);
        QVERIFY(d.epCommTotal > 0);
        NAPKIN_COMPARE_REL(onef.stepTime.epComm, onef.stepTime.epCommTotal, 1e-12);
        // m = 32 / 8 = 4 micro-batches (dp 8); per micro-batch the exposed share is max(0, EP + PP - chunk).
        const double m = 4, chunk = (d.compute + d.recompute + d.tpComm + d.cpComm + d.launch) / m;
        const double exposed = std::max(0.0, (d.epCommTotal + d.ppCommTotal) / m - chunk);
        NAPKIN_COMPARE_REL(d.microBatchSeconds, chunk + exposed, 1e-9);
        NAPKIN_COMPARE_REL(d.epComm + d.ppComm + 1e-30, m * exposed + 1e-30, 1e-9);
        NAPKIN_COMPARE_REL(d.pipeCommHidden, d.epCommTotal + d.ppCommTotal - d.epComm - d.ppComm, 1e-9);
        QCOMPARE(d.pipeCommSms, 20.0);
        // The 20 SMs stay reserved while the chunks compute (arXiv 2412.19437 §3.5.1; GEMM grids of 112 CTAs
        // in DeepSeek's profile): compute on 112 of 132 SMs takes 132 / 112 as long.
        NAPKIN_COMPARE_REL(d.commSmShare, d.dpCommHidden * d.ncclCtas / 132 + (d.compute + d.recompute) * 20 / 112,
                           1e-12);
        // The step is faster for it than 1F1B's on the same layout.
        QVERIFY(d.step < onef.stepTime.step);
    }

    void searchTriesDualPipeForExperts()
    {
        // A mixture of experts: the search tries DualPipe where its asserts allow it; every DualPipe
        // result keeps them, and written into a document it parses back to the same step.
        const auto doc = napkin::test::documentWith(
            {"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=16", "training.global_batch=64",
             "training.recompute=\"full\"", "parallel.zero=1", "step_time.mode=\"predicted\""});
        const auto base = napkin::test::parsed(doc);
        core::SearchOptions opt;
        opt.searchRecompute = false;
        opt.searchZero = false;
        opt.top = 200;
        const auto result = core::searchLayouts(base, opt);
        bool sawDual = false;
        for (const auto& x : result.best) {
            const auto& l = x.layout;
            if (l.schedule != core::PipelineSchedule::DualPipe)
                continue;
            sawDual = true;
            QVERIFY(l.pp % 2 == 0 && l.virtualStages == 1);
            QVERIFY(x.accumulationSteps % 2 == 0 && x.accumulationSteps >= 2 * l.pp);
            QCOMPARE(std::string_view(x.time.pipelineSchedule), std::string_view("dualpipe"));
        }
        QVERIFY(sawDual);
        const auto dualBest = std::find_if(result.best.begin(), result.best.end(), [](const core::LayoutResult& x) {
            return x.layout.schedule == core::PipelineSchedule::DualPipe;
        });
        nlohmann::json withLayout = doc;
        core::applyLayout(withLayout, dualBest->layout);
        QCOMPARE(withLayout["parallel"]["pipeline_schedule"].get<std::string>(), std::string("dualpipe"));
        NAPKIN_COMPARE_REL(core::estimate(napkin::test::parsed(withLayout)).stepTime.step, dualBest->time.step, 1e-12);
    }

    void unevenStagesInTheSearch()
    {
        // Megatron-LM's uneven split as the search writes it: ceil(L / pp) on the middle stages, the
        // rest on the ends, the first the smaller half. Llama 3.1 405B's published 126 on 16 is
        // 7 + 14 x 8 + 7; DeepSeek-V3's 61 on 16 is 2 + 14 x 4 + 3.
        QCOMPARE(core::unevenEndStages(126, 16), std::make_pair(7, 7));
        QCOMPARE(core::unevenEndStages(61, 16), std::make_pair(2, 3));
        QCOMPARE(core::unevenEndStages(61, 2), std::make_pair(30, 31));
        QCOMPARE(core::unevenEndStages(80, 16), std::make_pair(0, 0)); // 16 divides 80: even stages
        QCOMPARE(core::unevenEndStages(61, 32), std::make_pair(0, 0)); // 30 middle stages of 2 leave 1
        // A 13-layer model on 8 GPUs: with --uneven-stages the search also tries pp 2 (6/7), 4 (2/3)
        // and 8 (1/0: no split, skipped); every uneven row loads back as a scenario with the same step.
        const auto doc = napkin::test::documentWith({"model.preset=llama-2-7b", "model.layers=13", "cluster.gpus=8",
                                                     "training.global_batch=64", "step_time.mode=\"predicted\""});
        const auto base = napkin::test::parsed(doc);
        core::SearchOptions opt;
        opt.top = 1000;
        opt.searchRecompute = false;
        const auto even = core::searchLayouts(base, opt);
        opt.unevenStages = true;
        const auto all = core::searchLayouts(base, opt);
        QVERIFY(all.evaluated > even.evaluated);
        bool saw2 = false, saw4 = false;
        for (const auto& x : all.best) {
            const auto& l = x.layout;
            if (l.firstStageLayers == 0) {
                QVERIFY(13 % l.pp == 0);
                continue;
            }
            saw2 = saw2 || (l.pp == 2 && l.firstStageLayers == 6 && l.lastStageLayers == 7);
            saw4 = saw4 || (l.pp == 4 && l.firstStageLayers == 2 && l.lastStageLayers == 3);
            nlohmann::json withLayout = doc;
            core::applyLayout(withLayout, l);
            NAPKIN_COMPARE_REL(core::estimate(napkin::test::parsed(withLayout)).stepTime.step, x.time.step, 1e-12);
        }
        QVERIFY(saw2 && saw4);
    }

    void searchTurnsSequenceParallelOnForExpertsBesideTensorParallel()
    {
        // Megatron-Core refuses EP > 1 with TP > 1 unless sequence parallelism is on
        // (transformer_config.py __post_init__). Qwen3-30B-A3B on 16 H100s, scenario without SP: every
        // layout the search returns with EP > 1 and TP > 1 has SP on and no moe_tp_without_sp warning,
        // in the scenario and in the document the app writes; TP 1 layouts keep the scenario's SP.
        const auto doc = napkin::test::documentWith(
            {"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=16", "training.global_batch=64",
             "training.recompute=\"full\"", "parallel.zero=1", "step_time.mode=\"predicted\""});
        const auto base = napkin::test::parsed(doc);
        QVERIFY(!base.parallel.sequenceParallel);
        core::SearchOptions opt;
        opt.top = 1000;
        opt.searchRecompute = false;
        opt.searchZero = false;
        const auto result = core::searchLayouts(base, opt);
        const auto json = core::searchToJson(result, base);
        int both = 0;
        for (std::size_t i = 0; i < result.best.size(); ++i) {
            const auto& x = result.best[i];
            const auto& l = x.layout;
            core::Scenario sc = base;
            core::applyLayout(sc, l);
            QCOMPARE(sc.parallel.sequenceParallel, l.ep > 1 && l.tp > 1);
            QCOMPARE(json["results"][i]["layout"]["sequence_parallel"].get<bool>(), sc.parallel.sequenceParallel);
            nlohmann::json withLayout = doc;
            core::applyLayout(withLayout, l);
            const auto parsed = napkin::test::parsed(withLayout);
            QCOMPARE(parsed.parallel.sequenceParallel, sc.parallel.sequenceParallel);
            if (l.ep > 1 && l.tp > 1) {
                ++both;
                const auto plan = core::estimate(parsed);
                QVERIFY(std::none_of(plan.warnings.begin(), plan.warnings.end(),
                                     [](const auto& w) { return w.code == "moe_tp_without_sp"; }));
                NAPKIN_COMPARE_REL(plan.stepTime.step, x.time.step, 1e-12);
            }
        }
        QVERIFY(both > 0);
        // Under DeepSpeed (ZeRO-3 with framework auto) the rule is Megatron's, not its: SP stays off.
        core::Scenario ds = base;
        core::Layout l{2, 1, 1, 1, 8, 1, core::Recompute::Full, 3};
        l.ep = 2;
        core::applyLayout(ds, l);
        QCOMPARE(int(ds.stepTime.framework), int(core::Framework::Deepspeed));
        QVERIFY(!ds.parallel.sequenceParallel);
        nlohmann::json dsDoc = doc;
        core::applyLayout(dsDoc, l);
        QVERIFY(!napkin::test::parsed(dsDoc).parallel.sequenceParallel);
    }

    void megatronEpOverlap()
    {
        // step_time.overlap_ep (Megatron-Core --overlap-moe-expert-parallel-comm): the all-to-all of one
        // micro-batch behind another's compute inside 1F1B; the pipeline sends stay exposed, and the
        // hidden all-to-all holds one SM per NCCL channel (24 of 132).
        auto plan = [](bool overlap, std::vector<std::string> extra = {}) {
            std::vector<std::string> sets{"model.preset=qwen3-30b-a3b",
                                          "cluster.gpu=h100-sxm",
                                          "cluster.gpus=16",
                                          "parallel.pp=2",
                                          "parallel.ep=8",
                                          "training.micro_batch=1",
                                          "training.global_batch=32",
                                          "step_time.mode=\"predicted\"",
                                          std::string("step_time.overlap_ep=") + (overlap ? "true" : "false")};
            sets.insert(sets.end(), extra.begin(), extra.end());
            return core::estimate(napkin::test::scenario(sets)).stepTime;
        };
        const auto off = plan(false), on = plan(true);
        QVERIFY(off.epComm > 0);
        QCOMPARE(off.epComm, off.epCommTotal);
        QCOMPARE(on.epCommTotal, off.epCommTotal);
        const double m = 4, chunk = (on.compute + on.recompute + on.tpComm + on.cpComm + on.launch) / m;
        NAPKIN_COMPARE_REL(on.epComm + 1e-30, m * std::max(0.0, on.epCommTotal / m - chunk) + 1e-30, 1e-9);
        QCOMPARE(on.ppComm, on.ppCommTotal);
        NAPKIN_COMPARE_REL(on.pipeCommHidden, on.epCommTotal - on.epComm, 1e-9);
        QCOMPARE(on.pipeCommSms, 24.0);
        NAPKIN_COMPARE_REL(on.commSmShare, (on.dpCommHidden + on.pipeCommHidden) * 24 / 132, 1e-12);
        QVERIFY(on.step < off.step);
        // DeepEP's kernels hold 20 SMs (Megatron-Core moe_deepep_num_sms), step_time.ep_comm_sms what it
        // says (HybridEP: 16 by default, 32 in Megatron-Bridge's recipes), at most half the GPU's.
        const auto deepep = plan(true, {"step_time.moe_dispatcher=\"deepep\""});
        QCOMPARE(deepep.pipeCommSms, 20.0);
        NAPKIN_COMPARE_REL(deepep.commSmShare, deepep.dpCommHidden * 24 / 132 + deepep.pipeCommHidden * 20 / 132,
                           1e-12);
        const auto hybrid = plan(true, {"step_time.moe_dispatcher=\"deepep\"", "step_time.ep_comm_sms=32"});
        QCOMPARE(hybrid.pipeCommSms, 32.0);
        NAPKIN_COMPARE_REL(hybrid.commSmShare, hybrid.dpCommHidden * 24 / 132 + hybrid.pipeCommHidden * 32 / 132,
                           1e-12);
        QCOMPARE(plan(true, {"step_time.ep_comm_sms=16"}).pipeCommSms, 16.0); // replaces NCCL's channels too
        const auto errors = napkin::test::scenarioErrors({"cluster.gpu=h100-sxm", "step_time.ep_comm_sms=67"});
        QCOMPARE(errors.size(), std::size_t(1));
        QCOMPARE(errors.front().field, std::string("step_time.ep_comm_sms"));
        QVERIFY2(errors.front().allowed.find("66") != std::string::npos, errors.front().allowed.c_str());
        const auto word = napkin::test::scenarioErrors({"cluster.gpu=h100-sxm", "step_time.ep_comm_sms=\"lots\""});
        QCOMPARE(word.size(), std::size_t(1));
        QCOMPARE(word.front().field, std::string("step_time.ep_comm_sms"));
        QVERIFY2(word.front().allowed.find("\"auto\"") != std::string::npos, word.front().allowed.c_str());
        // "auto" is off in every framework.
        QVERIFY(!scenario({"model.preset=qwen3-30b-a3b", "cluster.gpus=16", "parallel.ep=8"}).stepTime.overlapEp);
    }
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
