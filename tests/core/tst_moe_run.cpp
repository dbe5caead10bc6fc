// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Mixture-of-experts run properties: precision.expert_weights in the weights ledger (gpt-oss's MXFP4
// experts), training.routing_imbalance and training.moe_capacity_factor as plan.moe resolves them,
// and the errors and warnings of each key. Every expected value is derived by hand below.
#include "testsupport.h"

#include "achievable.h"
#include "collectives.h"
#include "format.h"
#include "moe_sweep.h"

#include <algorithm>

using namespace napkin;
using napkin::test::scenario;
using napkin::test::scenarioErrors;

namespace {
bool hasWarning(const core::Plan& p, const std::string& code)
{
    return std::any_of(p.warnings.begin(), p.warnings.end(), [&](const core::Warning& w) { return w.code == code; });
}

std::string firstField(std::initializer_list<std::string> sets)
{
    const auto e = scenarioErrors(sets);
    return e.empty() ? std::string() : e.front().field;
}
} // namespace

class TestMoeRun : public QObject {
    Q_OBJECT
private slots:
    void gptOssMxfp4Experts()
    {
        // gpt-oss-120b (tests/data/hf/gpt-oss-120b.json): one routed expert is gate+up (2880 -> 2 · 2880
        // with biases) and down (2880 -> 2880 with bias): 3 · 2880² + 2 · 2880 + 2880 = 24,891,840;
        // 128 experts on 36 layers: 114,701,598,720 routed-expert parameters of 116,829,156,672.
        // MXFP4 stores each value in 4 bits with one 8-bit scale per 32 (OCP MX v1.0): 0.5 + 1/32
        // bytes, so 114,701,598,720 · 0.53125 = 60,935,224,320 bytes; the other 2,127,557,952
        // parameters in bf16 are 4,255,115,904 bytes: 65,190,340,224 in all, the size of the released
        // checkpoint ("fits into a single 80GB GPU", OpenAI gpt-oss model card, 2025).
        const auto bf16 = core::estimate(scenario({"model.preset=gpt-oss-120b", "cluster.gpus=1"}));
        const auto mx =
            core::estimate(scenario({"model.preset=gpt-oss-120b", "cluster.gpus=1", "precision.expert_weights=mxfp4"}));
        QCOMPARE(mx.params.routedExperts, 114701598720.0);
        QCOMPARE(mx.params.total, 116829156672.0);
        QCOMPARE(bf16.memory.weights, 2 * 116829156672.0);
        QCOMPARE(mx.memory.weights, 65190340224.0);
        // Only the weights' copy changes: gradients, master and optimizer states keep their dtypes.
        QCOMPARE(mx.memory.gradients, bf16.memory.gradients);
        QCOMPARE(mx.memory.optimizerStates, bf16.memory.optimizerStates);
        QCOMPARE(mx.moe.expertWeights, "mxfp4");
        QCOMPARE(bf16.moe.expertWeights, "bf16");
        const auto d = std::find_if(mx.derivations.begin(), mx.derivations.end(), [](const core::Derivation& x) {
            return x.quantity == std::string("memory.per_gpu.weights");
        });
        QVERIFY(d != mx.derivations.end());
        QVERIFY(std::string(d->formula).find("{P_experts} · {expert_bytes}") != std::string::npos);
        QCOMPARE(d->value, 65190340224.0);
    }

    void expertWeightsFollowTheirStage()
    {
        // DeepSeek-V3 on stages of 30 and 31 layers with fp8 experts: one MoE layer's routed experts are
        // 256 · 3 · 7168 · 2048 = 11,274,289,152 parameters. The first stage holds layers 0-29 (3 dense,
        // 27 MoE), the last layers 30-60 (31 MoE) and the MTP depth (one more MoE layer): 27 and 32
        // layers of experts at 1 byte, everything else at 2.
        const double R = 256.0 * 3 * 7168 * 2048;
        QCOMPARE(R, 11274289152.0);
        const auto p =
            core::estimate(scenario({"model.preset=deepseek-v3", "parallel.pp=2", "parallel.first_stage_layers=30",
                                     "parallel.last_stage_layers=31", "cluster.gpus=64", "parallel.zero=0",
                                     "precision.expert_weights=fp8_e4m3"}));
        QCOMPARE(p.params.routedExpertsPerLayer, R);
        const auto& st = p.memory.perStage;
        QCOMPARE(st.size(), std::size_t(2));
        QCOMPARE(st[0].weights, (st[0].params - 27 * R) * 2 + 27 * R);
        QCOMPARE(st[1].weights, (st[1].params - 32 * R) * 2 + 32 * R);
    }

    void mtpActivationsOnTheLastStage()
    {
        // DeepSeek-V3's MTP depth on one GPU at s = 4096, b = 1, bf16: one more layer's kept tensors
        // (memory.activations_per_layer) plus hnorm/enorm inputs, eh_proj's input and the depth's
        // final norm, 6 · 4096 · 7168 · 2 = 352,321,536 bytes; and a second logits/loss path of
        // 4096 · 129280 · (2 + 4) = 3,177,185,280 bytes.
        const auto without = core::estimate(scenario({"model.preset=deepseek-v3", "model.mtp_layers=0"}));
        const auto with = core::estimate(scenario({"model.preset=deepseek-v3"}));
        const double perLayer = with.memory.activationsPerLayer;
        QCOMPARE(perLayer, without.memory.activationsPerLayer);
        QCOMPARE(with.memory.activations - without.memory.activations, perLayer + 352321536.0);
        QCOMPARE(without.memory.temporaries, 4096.0 * 129280 * 6);
        QCOMPARE(with.memory.temporaries, 2 * 4096.0 * 129280 * 6);
        // On two stages only the last holds them.
        const auto pp =
            core::estimate(scenario({"model.preset=deepseek-v3", "parallel.pp=2", "parallel.first_stage_layers=30",
                                     "parallel.last_stage_layers=31", "cluster.gpus=64"}));
        const auto ppWithout =
            core::estimate(scenario({"model.preset=deepseek-v3", "parallel.pp=2", "parallel.first_stage_layers=30",
                                     "parallel.last_stage_layers=31", "cluster.gpus=64", "model.mtp_layers=0"}));
        QCOMPARE(pp.memory.perStage[0].activations, ppWithout.memory.perStage[0].activations);
        QVERIFY(pp.memory.perStage[1].activations > ppWithout.memory.perStage[1].activations);
    }

    void moeLayerTensors()
    {
        // DeepSeek-V3 at s = 4096, b = 1, bf16, one GPU: per average layer (58 of 61 layers MoE) the
        // router's fp32 probabilities 4096 · 256 · 4 · 58/61, the permuted tokens and the experts' fc2
        // output, each 4096 · 8 rows · 7168 · 2 bytes · 58/61.
        const auto p = core::estimate(scenario({"model.preset=deepseek-v3"}));
        auto bytesOf = [](const core::Plan& plan, const char* name) {
            const auto& lt = plan.memory.layerTensors;
            for (int i = 0; i < lt.count; ++i)
                if (std::string(lt.tensors[std::size_t(i)].name) == name)
                    return lt.tensors[std::size_t(i)].bytes;
            return -1.0;
        };
        const double share = 58.0 / 61;
        NAPKIN_COMPARE_REL(bytesOf(p, "moe.router_probs"), 4096.0 * 256 * 4 * share, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "moe.permuted_input"), 4096.0 * 8 * 7168 * 2 * share, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "moe.expert_output"), 4096.0 * 8 * 7168 * 2 * share, 1e-12);
        // A dense model lists none of them.
        QCOMPARE(bytesOf(core::estimate(scenario({})), "moe.permuted_input"), -1.0);
        // At EP 64 with imbalance 1.5 the busiest rank holds 1.5 × the routed rows and fc1 outputs:
        // permuted input × 1.5, and SwiGLU's gate and up grow by 0.5 · 8 · 2048 · share values each.
        const auto skew = core::estimate(scenario(
            {"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.ep=64", "training.routing_imbalance=1.5"}));
        NAPKIN_COMPARE_REL(bytesOf(skew, "moe.permuted_input"), 1.5 * 4096.0 * 8 * 7168 * 2 * share, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(skew, "experts.gate") - bytesOf(p, "experts.gate"),
                           4096.0 * 0.5 * 8 * 2048 * 2 * share, 1e-12);
        // The MLP's tensors by module: the 3 dense layers' 18,432-wide MLP, the 58 MoE layers' 8 routed
        // experts of 2,048 and one shared expert of 2,048, at the average layer's share.
        NAPKIN_COMPARE_REL(bytesOf(p, "mlp.gate"), 4096.0 * 18432 * 2 * 3 / 61, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "experts.activation_output"), 4096.0 * 8 * 2048 * 2 * share, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "shared_experts.up"), 4096.0 * 2048 * 2 * share, 1e-12);
        // MLA's latents (NVIDIA's DeepSeek-V3 ledger): the query's down-projection output and its
        // normalised copy (1,536 each), the key-value one with the shared RoPE key (512 + 64) and its
        // normalised latent (512).
        NAPKIN_COMPARE_REL(bytesOf(p, "mla.q_down_output"), 4096.0 * 1536 * 2, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "mla.q_latent"), 4096.0 * 1536 * 2, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "mla.kv_down_output"), 4096.0 * 576 * 2, 1e-12);
        NAPKIN_COMPARE_REL(bytesOf(p, "mla.kv_latent"), 4096.0 * 512 * 2, 1e-12);
        // Full recompute drops them all (the layer input is the checkpoint).
        const auto full = core::estimate(scenario({"model.preset=deepseek-v3", "training.recompute=full"}));
        const auto& lt = full.memory.layerTensors;
        for (int i = 0; i < lt.count; ++i)
            if (std::string(lt.tensors[std::size_t(i)].name).rfind("moe.", 0) == 0)
                QVERIFY(!lt.tensors[std::size_t(i)].kept);
    }

    void moeRecomputeModules()
    {
        // Megatron-Core's recompute modules on DeepSeek-V3 at s = 4096, b = 1, bf16, one GPU: each drops
        // its own tensors from a layer's kept bytes (per average layer: 58 of 61 MoE, 3 dense).
        const double share = 58.0 / 61, T = 4096, e = 2;
        auto kept = [](std::initializer_list<std::string> sets) {
            return core::estimate(scenario(sets)).memory.activationsPerLayer;
        };
        const double none = kept({"model.preset=deepseek-v3"});
        auto modules = [&](const char* list) {
            return kept({"model.preset=deepseek-v3", "training.recompute=modules",
                         std::string("training.recompute_modules=") + list});
        };
        // moe_act: the routed experts' SwiGLU output (8 rows of 2,048 per token).
        NAPKIN_COMPARE_REL(none - modules(R"(["moe_act"])"), T * 8 * 2048 * e * share, 1e-12);
        // shared_experts: its gate, up and activation output (3 × 2,048).
        NAPKIN_COMPARE_REL(none - modules(R"(["shared_experts"])"), 3 * T * 2048 * e * share, 1e-12);
        // moe: the router's fp32 probabilities (256), the permuted tokens and the experts' output
        // (8 rows of 7,168 each), the routed experts' gate, up and activation (3 · 8 · 2,048), the
        // shared expert's (3 · 2,048).
        const double moe = T * share * (256 * 4 + e * (2 * 8 * 7168 + 3 * 8 * 2048 + 3 * 2048));
        NAPKIN_COMPARE_REL(none - modules(R"(["moe"])"), moe, 1e-12);
        // mla_up_proj: q after the up-projection and RoPE (128 heads × 192) and k, v (128 × 192 and
        // 128 × 128); the latents stay.
        NAPKIN_COMPARE_REL(none - modules(R"(["mla_up_proj"])"), T * 128 * (192 + 192 + 128) * e, 1e-12);
        // mlp: the 3 dense layers' MLP (gate, up, activation: 3 × 18,432) and the MLP norm's output
        // (7,168), which only dense layers lose with it.
        NAPKIN_COMPARE_REL(none - modules(R"(["mlp"])"), T * 3.0 / 61 * 3 * 18432 * e + T * 7168 * e, 1e-12);

        // Hardware FLOPs per token: the recomputed forward matmuls, 2 per parameter. moe: 58 layers of
        // 8 routed + 1 shared experts (3 matrices of 7,168 × 2,048) and the router (7,168 × 256);
        // mla_up_proj: 61 layers of 128 heads' q (1,536 × 192) and kv (512 × 256) up-projections.
        auto extra = [](const core::Plan& pl) {
            return (pl.compute.hardwareFlops / pl.compute.trainingFlops - 1) * pl.compute.flopsPerToken;
        };
        const auto withMoe = core::estimate(scenario(
            {"model.preset=deepseek-v3", "training.recompute=modules", R"(training.recompute_modules=["moe"])"}));
        NAPKIN_COMPARE_REL(extra(withMoe), 2.0 * 58 * (7168.0 * 9 * 2048 * 3 + 7168.0 * 256), 1e-9);
        const auto withMla = core::estimate(scenario({"model.preset=deepseek-v3", "training.recompute=modules",
                                                      R"(training.recompute_modules=["mla_up_proj"])"}));
        NAPKIN_COMPARE_REL(extra(withMla), 2.0 * 61 * 128 * (1536.0 * 192 + 512.0 * 256), 1e-9);

        // The moe module runs the layer's dispatch and combine again: 6 all-to-alls per MoE layer
        // instead of 4 (Mixtral 8x7B at EP 8 on one node).
        auto ep = [](std::initializer_list<std::string> more) {
            std::vector<std::string> sets{"model.preset=mixtral-8x7b", "cluster.gpus=8", "parallel.ep=8",
                                          "step_time.mode=predicted"};
            sets.insert(sets.end(), more.begin(), more.end());
            nlohmann::json doc = core::defaultScenarioJson();
            core::Errors errors;
            for (const auto& x : sets)
                core::applySet(doc, x, errors);
            const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
            [&] { QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str()); }();
            return core::estimate(sc).stepTime;
        };
        const auto plain = ep({});
        const auto again = ep({"training.recompute=modules", R"(training.recompute_modules=["moe"])"});
        NAPKIN_COMPARE_REL(again.epCommTotal, plain.epCommTotal * 6 / 4, 1e-12);
        QVERIFY(again.recompute > 0);
        // moe_act re-runs only the activation: far less than the whole MoE layer.
        const auto act = ep({"training.recompute=modules", R"(training.recompute_modules=["moe_act"])"});
        QVERIFY(act.recompute > 0 && act.recompute < again.recompute / 10);
        NAPKIN_COMPARE_REL(act.epCommTotal, plain.epCommTotal, 1e-12);

        // Each module must exist in the model (errors name the field and say what to use instead).
        auto rejects = [](std::initializer_list<std::string> sets, const char* module) {
            const auto errors = napkin::test::scenarioErrors(sets);
            return std::any_of(errors.begin(), errors.end(), [&](const core::UserError& x) {
                return x.field == "training.recompute_modules" && x.value == module;
            });
        };
        QVERIFY(rejects(
            {"model.preset=llama-2-7b", "training.recompute=modules", R"(training.recompute_modules=["moe"])"}, "moe"));
        QVERIFY(rejects({"model.preset=mixtral-8x7b", "training.recompute=modules",
                         R"(training.recompute_modules=["shared_experts"])"},
                        "shared_experts"));
        QVERIFY(rejects({"model.preset=mixtral-8x7b", "training.recompute=modules",
                         R"(training.recompute_modules=["mla_up_proj"])"},
                        "mla_up_proj"));
        QVERIFY(rejects(
            {"model.preset=qwen3-30b-a3b", "training.recompute=modules", R"(training.recompute_modules=["mlp"])"},
            "mlp"));
    }

    void routingImbalanceAndCapacity()
    {
        // DeepSeek-V3 at s = 4096, b = 1: 4096 · 8 routed rows over 256 experts = 128 per expert; a
        // capacity factor of 1.25 gives ceil(160) = 160 rows. "worst" on one expert rank is
        // 1 · min(8, 256) / 8 = 1: one rank holds every expert.
        const auto p = core::estimate(scenario(
            {"model.preset=deepseek-v3", "training.moe_capacity_factor=1.25", "training.routing_imbalance=\"worst\""}));
        QVERIFY(p.moe.applies);
        QCOMPARE(p.moe.rowsPerExpert, 128.0);
        QCOMPARE(p.moe.expertCapacity, 160.0);
        QCOMPARE(p.moe.routingImbalance, 1.0);
        QVERIFY(p.moe.worst);
        QVERIFY(!hasWarning(p, "routing_imbalance_one_rank"));
        // Context parallelism splits the sequence before the router: 4096 / 2 · 2 · 8 / 256 = 64.
        const auto cp = core::estimate(scenario({"model.preset=deepseek-v3", "parallel.cp=2", "training.micro_batch=2",
                                                 "training.moe_capacity_factor=1.1"}));
        QCOMPARE(cp.moe.rowsPerExpert, 128.0);
        QCOMPARE(cp.moe.expertCapacity, std::ceil(1.1 * 128)); // 141
        QCOMPARE(cp.moe.capacityFactor, 1.1);
        // Dropless (the default): no capacity.
        const auto dropless = core::estimate(scenario({"model.preset=mixtral-8x7b"}));
        QCOMPARE(dropless.moe.expertCapacity, 0.0);
        QCOMPARE(dropless.moe.rowsPerExpert, 4096.0 * 2 / 8);
        // An imbalance on one expert rank changes no GPU's load, and says so.
        const auto skew = core::estimate(scenario({"model.preset=mixtral-8x7b", "training.routing_imbalance=1.5"}));
        QCOMPARE(skew.moe.routingImbalance, 1.5);
        QCOMPARE(skew.moe.busiestRankLoad, 1.0);
        QVERIFY(hasWarning(skew, "routing_imbalance_one_rank"));
        // Sequence parallelism: a rank routes its 1/tp of the tokens, 4096 / 2 · 8 / 256 = 64 rows per expert.
        const auto sp =
            core::estimate(scenario({"model.preset=deepseek-v3", "parallel.tp=2", "parallel.sequence_parallel=true"}));
        QCOMPARE(sp.moe.routedTokens, 2048.0);
        QCOMPARE(sp.moe.rowsPerExpert, 64.0);
    }

    void denseModelsWarnNotFail()
    {
        const auto p = core::estimate(scenario({"training.routing_imbalance=2", "precision.expert_weights=mxfp4"}));
        QVERIFY(!p.moe.applies);
        QVERIFY(hasWarning(p, "moe_keys_unused"));
        QCOMPARE(p.memory.weights, core::estimate(scenario({})).memory.weights);
        QVERIFY(!hasWarning(core::estimate(scenario({})), "moe_keys_unused"));
    }

    void expertParallelMemoryPerRank()
    {
        // Mixtral 8x7B on 16 GPUs, EP 8, no TP, ZeRO-1, bf16 weights and gradients, fp32 master and
        // Adam moments. Routed experts: 32 layers · 8 · 3 · 4096 · 14336 = 45,097,156,608 of 46,702,792,704;
        // the rest, 1,605,636,096, is on every rank. Each EP rank holds 1 expert per layer:
        // 5,637,144,576, so 7,242,780,672 parameters. EDP = 16 / 8 = 2: the experts' fp32 master and
        // moments shard over 2 ranks, the rest over all 16.
        const auto p = core::estimate(scenario(
            {"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=8", "precision.plan=bf16-mixed-master"}));
        const double experts = 45097156608.0 / 8, dense = 46702792704.0 - 45097156608.0;
        QCOMPARE(p.params.routedExperts, 45097156608.0);
        QCOMPARE(p.memory.paramsPerRank, dense + experts);
        QCOMPARE(p.memory.weights, 2 * (dense + experts)); // 14,485,561,344
        QCOMPARE(p.memory.gradients, 2 * (dense + experts));
        QCOMPARE(p.memory.masterWeights, dense * 4 / 16 + experts * 4 / 2); // 11,675,698,176
        QCOMPARE(p.memory.masterWeights, 11675698176.0);
        QCOMPARE(p.memory.optimizerStates, 2 * 11675698176.0);
        QCOMPARE(p.moe.expertDataParallel, std::int64_t(2));
        QCOMPARE(p.moe.expertParamsPerRank, experts);
        QCOMPARE(p.moe.expertWeightBytesPerRank, 2 * experts);
        QVERIFY(!p.moe.crossesNodes);
        // "worst" on 8 expert ranks: 8 · min(2, 8 / 8) / 2 = 4 times the balanced rows.
        const auto w = core::estimate(scenario(
            {"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=8", "training.routing_imbalance=\"worst\""}));
        QCOMPARE(w.moe.routingImbalance, 4.0);
        // ZeRO-3 shards the experts' weights over EDP too: 5,637,144,576 · 2 / 2 per rank for them.
        const auto z3 = core::estimate(
            scenario({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=8", "parallel.zero=3"}));
        QCOMPARE(z3.memory.weights, dense * 2 / 16 + experts * 2 / 2);
        // DeepSeek-V3 with ETP: TP 2 and ETP 1 on 64 GPUs of one stage at EP 32 gives EDP 2 · 32 / 32 = 2,
        // and ep · etp = 32 crosses a node of 8 GPUs.
        const auto ds =
            core::estimate(scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.tp=2", "parallel.ep=32",
                                     "parallel.etp=1", "parallel.sequence_parallel=true"}));
        QCOMPARE(ds.moe.expertDataParallel, std::int64_t(2));
        QCOMPARE(ds.moe.expertTensorRanks, std::int64_t(1));
        QVERIFY(ds.moe.crossesNodes);
        QVERIFY(hasWarning(ds, "expert_parallel_crosses_nodes"));
        // 58 MoE layers + the MTP depth's on one stage: 59 · 256 / 32 experts of 3 · 7168 · 2048.
        QCOMPARE(ds.moe.expertParamsPerRank, 59.0 * 8 * 3 * 7168 * 2048);
        // The CSV's inputs carry the expert layout (issue 20: CSV holds the inputs): ep 32, etp 1, EDP 2.
        const auto dsScenario = scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.tp=2",
                                          "parallel.ep=32", "parallel.etp=1", "parallel.sequence_parallel=true"});
        const std::string csv = core::planToCsv(ds, dsScenario);
        for (const char* row : {"\ninput,ep,32,ranks\n", "\ninput,etp,1,ranks\n", "\ninput,edp,2,ranks\n"})
            QVERIFY2(csv.find(row) != std::string::npos, row);
    }

    void expertGradientsOverTheirOwnGroup()
    {
        // Mixtral 8x7B on 16 H100s (two nodes of 8), EP 8, no TP, distributed optimizer (ZeRO-1), bf16
        // weights and gradients: the 1,605,636,096 dense parameters reduce-scatter their gradients and
        // all-gather their weights over all 16 data-parallel ranks (8 per node: NVLink or 8 NICs of
        // 50 GB/s, whichever is less, at 0.8); the rank's 5,637,144,576 expert parameters over their
        // EDP group of 2 ranks 8 apart, one per node: one NIC, 50 GB/s x 0.8.
        const auto p = core::estimate(scenario(
            {"model.preset=mixtral-8x7b", "cluster.gpu=h100-sxm", "cluster.gpus=16", "parallel.ep=8", "parallel.zero=1",
             "step_time.mode=predicted", "step_time.framework=megatron", "step_time.inter_node_bandwidth=50e9"}));
        const double experts = 45097156608.0 / 8, dense = 46702792704.0 - 45097156608.0;
        core::Link dp, edp;
        dp.ranks = 16, dp.nodes = 2, dp.crossesNodes = true, dp.nominal = std::min(450e9, 8 * 50e9),
        dp.busbw = dp.nominal * 0.8;
        edp.ranks = 2, edp.nodes = 2, edp.crossesNodes = true, edp.nominal = 50e9, edp.busbw = 50e9 * 0.8;
        using core::Collective;
        const double expected = core::collectiveSeconds(Collective::ReduceScatter, 2 * dense, dp) +
                                core::collectiveSeconds(Collective::AllGather, 2 * dense, dp) +
                                core::collectiveSeconds(Collective::ReduceScatter, 2 * experts, edp) +
                                core::collectiveSeconds(Collective::AllGather, 2 * experts, edp);
        QCOMPARE(p.stepTime.dpCommTotal, expected);
        QVERIFY(p.stepTime.edpCrossesNodes);
        QCOMPARE(p.stepTime.edpBandwidth, 40e9);
        // The experts' share dominates: 11.3 GB over one NIC against 3.2 GB over eight.
        QVERIFY(core::collectiveSeconds(Collective::ReduceScatter, 2 * experts, edp) >
                5 * core::collectiveSeconds(Collective::ReduceScatter, 2 * dense, dp));
    }

    void expertAllToAllInTheStep()
    {
        // Mixtral 8x7B on one node of 8 H100s at EP 8, s = 4096, b = 1, bf16: each all-to-all carries a
        // rank's 4096 tokens × top-2 × 4096 values × 2 bytes = 67,108,864 bytes, 7/8 of them to the
        // other ranks over NVLink at 450 GB/s one way × 0.8 (collective efficiency), plus one 3.4 µs
        // hop: 163.1 µs. Four per MoE layer (dispatch, combine, and their gradients), 32 layers,
        // global batch 1024 / 8 ranks = 128 micro-batches.
        const auto p = core::estimate(scenario({"model.preset=mixtral-8x7b", "cluster.gpus=8", "parallel.ep=8",
                                                "parallel.zero=3", "step_time.mode=predicted"}));
        const double bytes = 4096.0 * 2 * 4096 * 2;
        const double one = 7.0 / 8 * bytes / (450e9 * 0.8) + 3.4e-6;
        QCOMPARE(p.stepTime.epBytesPerMicroBatch, bytes);
        QVERIFY(!p.stepTime.epCrossesNodes);
        QCOMPARE(p.compute.accumulationSteps, std::int64_t(128));
        NAPKIN_COMPARE_REL(p.stepTime.epComm, 128 * 32 * 4 * one, 1e-12);
        // The imbalance scales the busiest rank's receive: 1.5 × the bytes.
        const auto skew =
            core::estimate(scenario({"model.preset=mixtral-8x7b", "cluster.gpus=8", "parallel.ep=8", "parallel.zero=3",
                                     "step_time.mode=predicted", "training.routing_imbalance=1.5"}));
        QCOMPARE(skew.stepTime.epBytesPerMicroBatch, 1.5 * bytes);
        QVERIFY(skew.stepTime.epComm > p.stepTime.epComm);
        // ... and its experts compute 1.5 × the rows: every Mixtral layer's MLP (k · I_e wide, no shared
        // experts) takes 1.5 × as long on the busiest rank, 128 micro-batches × 32 layers.
        double mlpOps = 0;
        for (const auto& op : p.ops) {
            const std::string name = op.name;
            if (name.rfind("mlp_", 0) == 0 || name.rfind("silu_mul", 0) == 0 || name.rfind("gelu", 0) == 0)
                mlpOps += op.achievableSeconds;
        }
        QVERIFY(mlpOps > 0);
        NAPKIN_COMPARE_REL(skew.stepTime.compute - p.stepTime.compute, 128 * 32 * 0.5 * mlpOps, 1e-9);
        // Across nodes: DeepSeek-V3 at EP 64 on 8 nodes of 8. The 7/8 of each rank's rows bound for other
        // nodes leave through its 50 GB/s NIC (× 0.8), the 1/8 on its node's other ranks go over NVLink
        // meanwhile: 4096 · 8 · 7168 · 2 · 7/8 / 40e9 + 9.6 µs per all-to-all.
        const auto ds = core::estimate(
            scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.ep=64", "step_time.mode=predicted"}));
        QVERIFY(ds.stepTime.epCrossesNodes);
        const double dsOne = 4096.0 * 8 * 7168 * 2 * 7 / 8 / 40e9 + 9.6e-6;
        // 58 MoE layers of 61, the whole model on one stage; 1024 / 64 = 16 micro-batches.
        NAPKIN_COMPARE_REL(ds.stepTime.epComm, 16 * 61 * (58.0 / 61) * 4 * dsOne, 1e-12);
        QCOMPARE(ds.stepTime.epOffNodeShare, 7.0 / 8);
        // Node-limited routing, 4 nodes per token (DeepSeek-V3 §3.2.2) with DeepEP: one copy per remote
        // node, fanned out over NVLink there, so 4 of the 8 copies leave the node: 7/8 · 4/8 of the bytes
        // through the NIC. Over NVLink meanwhile (shorter): one copy per other rank of the node holding any
        // of the token's experts, sent or forwarded, 8 · 7 · (1 - P) / 8 with P = Π_{i<8} (252 - i) / (256 - i)
        // that a rank's 4 experts hold none of the 8.
        const auto lim = core::estimate(
            scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.ep=64", "parallel.ep_node_limit=4",
                      "step_time.mode=predicted", "step_time.moe_dispatcher=deepep"}));
        const double limOne = 4096.0 * 8 * 7168 * 2 * 7 / 16 / 40e9 + 9.6e-6;
        QCOMPARE(lim.stepTime.epOffNodeShare, 7.0 / 16);
        double missRank = 1;
        for (int i = 0; i < 8; ++i)
            missRank *= (252.0 - i) / (256.0 - i);
        NAPKIN_COMPARE_REL(lim.stepTime.epNvlinkShare, 8 * 7 * (1 - missRank) / 8, 1e-12);
        NAPKIN_COMPARE_REL(lim.stepTime.epComm, 16 * 61 * (58.0 / 61) * 4 * limOne, 1e-12);
        QVERIFY(!hasWarning(lim, "ep_node_limit_unused"));
        QVERIFY(!hasWarning(lim, "ep_node_limit_no_dedup"));
        // Megatron-Core's all-to-all dispatcher sends a row per token and expert: the limit saves nothing,
        // and the plan says so.
        const auto limA2a = core::estimate(scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.ep=64",
                                                     "parallel.ep_node_limit=4", "step_time.mode=predicted"}));
        QCOMPARE(limA2a.stepTime.epComm, ds.stepTime.epComm);
        QVERIFY(hasWarning(limA2a, "ep_node_limit_no_dedup"));
        QCOMPARE(ds.stepTime.epNvlinkShare, -1.0);
        // A limit of 8 nodes does not bind on 8 nodes: said, and nothing changes.
        const auto loose = core::estimate(scenario({"model.preset=deepseek-v3", "cluster.gpus=64", "parallel.ep=64",
                                                    "parallel.ep_node_limit=8", "step_time.mode=predicted"}));
        QVERIFY(hasWarning(loose, "ep_node_limit_unused"));
        QCOMPARE(loose.stepTime.epComm, ds.stepTime.epComm);
        // A rank reads only its own experts' weights: the forward MLP GEMMs of Mixtral read 7 of 8
        // experts' 3 · 4096 · 14336 bf16 weights fewer at EP 8, with the same FLOPs.
        const auto ep1 = core::estimate(
            scenario({"model.preset=mixtral-8x7b", "cluster.gpus=8", "parallel.zero=3", "step_time.mode=predicted"}));
        auto mlpForward = [](const core::Plan& plan, double core::RooflineOp::*field) {
            double sum = 0;
            for (const auto& op : plan.ops)
                if (std::string(op.name).rfind("mlp_", 0) == 0 && op.pass == core::Pass::Forward)
                    sum += op.*field;
            return sum;
        };
        QCOMPARE(mlpForward(p, &core::RooflineOp::flops), mlpForward(ep1, &core::RooflineOp::flops));
        NAPKIN_COMPARE_REL(mlpForward(ep1, &core::RooflineOp::bytes) - mlpForward(p, &core::RooflineOp::bytes),
                           7 * 3 * 4096.0 * 14336 * 2, 1e-9);
        // No expert parallelism: no all-to-all.
        QCOMPARE(core::estimate(scenario({"model.preset=mixtral-8x7b", "cluster.gpus=8", "step_time.mode=predicted",
                                          "parallel.zero=3"}))
                     .stepTime.epComm,
                 0.0);
    }

    void deduplicatingDispatcher()
    {
        // Qwen3-30B-A3B at EP 16 on two nodes of 8 (Megatron-Bridge's H100 recipe, HybridEP): 128 experts,
        // 8 per rank, 64 per node, 8 per token. DeepEP sends a token once to the other node when any of its
        // 8 experts lie there: 1 - P_node, P_node = Π_{i<8} (64 - i) / (128 - i), against 4 copies (8 · 1/2)
        // for the all-to-all dispatcher. Over NVLink: 2 · 7 · (1 - P_rank) copies, P_rank = Π (120 - i) / (128 - i).
        double missNode = 1, missRank = 1;
        for (int i = 0; i < 8; ++i) {
            missNode *= (64.0 - i) / (128.0 - i);
            missRank *= (120.0 - i) / (128.0 - i);
        }
        const auto copies = core::deduplicatedCopies(128, 8, 16, 2);
        NAPKIN_COMPARE_REL(copies.remoteNodes, 1 - missNode, 1e-12);
        NAPKIN_COMPARE_REL(copies.nvlinkRanks, 2 * 7 * (1 - missRank), 1e-12);
        const std::vector<std::string> base = {"model.preset=qwen3-30b-a3b",
                                               "cluster.gpu=h100-sxm",
                                               "cluster.gpus=16",
                                               "parallel.ep=16",
                                               "training.seq_len=4096",
                                               "training.micro_batch=1",
                                               "training.global_batch=1024",
                                               "step_time.mode=predicted"};
        auto plus = [&](const char* extra) {
            auto v = base;
            v.emplace_back(extra);
            return core::estimate(scenario(v));
        };
        const auto a2a = core::estimate(scenario(base));
        const auto dedup = plus("step_time.moe_dispatcher=deepep");
        QCOMPARE(a2a.stepTime.epOffNodeShare, 0.5);
        NAPKIN_COMPARE_REL(dedup.stepTime.epOffNodeShare, (1 - missNode) / 8, 1e-12);
        NAPKIN_COMPARE_REL(dedup.stepTime.epNvlinkShare, 2 * 7 * (1 - missRank) / 8, 1e-12);
        // One all-to-all: the slower of the NIC (50 GB/s × 0.8) and NVLink (450 GB/s × 0.8) legs + one
        // network hop; 4 per MoE layer (dispatch, combine, their gradients), 48 layers, 64 micro-batches.
        const double bytes = 4096.0 * 8 * 2048 * 2;
        const double one = std::max(bytes * (1 - missNode) / 8 / 40e9, bytes * 2 * 7 * (1 - missRank) / 8 / 360e9);
        NAPKIN_COMPARE_REL(dedup.stepTime.epComm - 64 * 48 * 4 * one,
                           a2a.stepTime.epComm - 64 * 48 * 4 * bytes / 2 / 40e9, 1e-9);
        QVERIFY(dedup.stepTime.epComm < a2a.stepTime.epComm / 3);
        // Inside one node the copies fall too: EP 8 on 8 GPUs, 16 experts a rank, (7 / 8 of k copies) against
        // 7 · (1 - Π (112 - i) / (128 - i)) / 8.
        double miss8 = 1;
        for (int i = 0; i < 8; ++i)
            miss8 *= (112.0 - i) / (128.0 - i);
        const auto node = core::estimate(
            scenario({"model.preset=qwen3-30b-a3b", "cluster.gpus=8", "parallel.ep=8", "training.global_batch=64",
                      "step_time.mode=predicted", "step_time.moe_dispatcher=deepep"}));
        QVERIFY(!node.stepTime.epCrossesNodes);
        NAPKIN_COMPARE_REL(node.stepTime.epNvlinkShare, 7 * (1 - miss8) / 8, 1e-12);
        QCOMPARE(node.stepTime.epOffNodeShare, 0.0);
        // Every number explains itself.
        QVERIFY(test::derivation(dedup, "time.breakdown.ep_off_node_share") != nullptr);
        QVERIFY(test::derivation(dedup, "time.breakdown.ep_nvlink_share") != nullptr);
    }

    void groupedExpertGemms()
    {
        // Qwen3-30B-A3B (d 2048, 128 experts of I_e 768, top 8, every layer MoE, no shared expert) on one
        // H100, micro-batch 2 of 4096 tokens: 8192 · 8 / 128 = 512 rows per expert. The gate+up GEMM
        // is a grouped GEMM of 128 products 512 x 1536 x 2048, which Transformer Engine runs 4 at a time
        // (one cuBLAS GEMM per expert on 4 streams): 64 x 128 tiles give 8 · 12 · 4 = 384 CTAs per round
        // in 3 waves of 132, each k loop 2048 deep against K0 = 160 (one grid of all 128 would fill 94
        // waves with 12,288). The achievable 794.5 TFLOP/s was measured at 2048 x 2048 x 13312 (128 CTAs
        // in one wave, k 13312): the grouped GEMM runs at 794.5 x its efficiency / that one.
        const double eff = 384.0 / (3 * 132) * 2048 / (2048 + 160);
        QCOMPARE(core::gemmShapeEfficiency(512, 1536, 2048, 4, 132, 90), eff);
        QCOMPARE(core::gemmShapeEfficiency(512, 1536, 2048, 128, 132, 90), 12288.0 / (94 * 132) * 2048 / (2048 + 160));
        const double atFigure = 128.0 / 132 * 13312 / (13312 + 160);
        const auto p = core::estimate(
            scenario({"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=1", "training.seq_len=4096",
                      "training.micro_batch=2", "training.global_batch=2", "step_time.mode=predicted"}));
        const auto op = std::find_if(p.ops.begin(), p.ops.end(),
                                     [](const auto& o) { return o.name == std::string_view("mlp_gate_up"); });
        QVERIFY(op != p.ops.end());
        QCOMPARE(op->groupedShare, 1.0); // every MLP FLOP is a routed expert's
        QCOMPARE(op->grouped[0], 512.0);
        QCOMPARE(op->grouped[1], 1536.0);
        QCOMPARE(op->grouped[2], 2048.0);
        QCOMPARE(op->grouped[3], 128.0);
        QCOMPARE(op->kernels, 128.0); // one cuBLAS GEMM launched per local expert
        // 2 · 8192 · 2048 · 12288 FLOPs, compute-bound (all 128 experts' weights, 0.81 GB, read in 0.27 ms).
        QCOMPARE(op->flops, 2.0 * 8192 * 2048 * 12288);
        QCOMPARE(op->achievableSeconds, op->flops / (794.5e12 * 0.876 * eff / atFigure)); // MAMF x sustained share
        // With EP 8 a rank holds 16 experts and receives 8 ranks' tokens for them: 8 x the rows.
        const auto ep = core::estimate(scenario({"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=8",
                                                 "parallel.ep=8", "training.seq_len=4096", "training.micro_batch=2",
                                                 "training.global_batch=16", "step_time.mode=predicted"}));
        const auto eop = std::find_if(ep.ops.begin(), ep.ops.end(),
                                      [](const auto& o) { return o.name == std::string_view("mlp_down.wgrad"); });
        QVERIFY(eop != ep.ops.end());
        QCOMPARE(eop->grouped[0], 768.0); // dW of down: 768 x 2048, reduced over the rows
        QCOMPARE(eop->grouped[1], 2048.0);
        QCOMPARE(eop->grouped[2], 4096.0);
        QCOMPARE(eop->grouped[3], 16.0);
        // A dense model has no grouped part.
        const auto dense = core::estimate(scenario({"step_time.mode=predicted"}));
        for (const auto& o : dense.ops)
            QCOMPARE(o.groupedShare, 0.0);
    }

    // The token dispatcher's memory-bound kernels (Megatron-Core moe_utils.py permute, sort_chunks_by_idxs,
    // unpermute). Qwen3-30B-A3B, 8192 tokens a micro-batch, top 8, d 2048, bf16: T·k·h·e = 8192 · 8 · 2048
    // · 2 = 268,435,456 bytes. Permute reads and writes it; with EP 8 (16 experts a rank) the received
    // chunks are sorted by local expert (again each way); unpermute reads the k rows and writes T sums.
    void tokenPermutationKernels()
    {
        const double tkhe = 8192.0 * 8 * 2048 * 2, the = 8192.0 * 2048 * 2;
        const auto bytesOf = [](const core::Plan& p, std::string_view name) {
            for (const auto& o : p.ops)
                if (o.name == name)
                    return o.bytes;
            return -1.0;
        };
        const std::vector<std::string> base{"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm",
                                            "training.seq_len=4096", "training.micro_batch=2",
                                            "step_time.mode=predicted"};
        const auto with = [&](std::vector<std::string> extra) {
            extra.insert(extra.end(), base.begin(), base.end());
            return core::estimate(scenario(extra));
        };
        const auto one = with({"cluster.gpus=1", "training.global_batch=2"}); // EP 1: no all-to-all, no sort
        QCOMPARE(bytesOf(one, "mlp_permute"), 2 * tkhe);
        QCOMPARE(bytesOf(one, "mlp_unpermute"), tkhe + the);
        QCOMPARE(bytesOf(one, "mlp_permute.bwd"), 2 * tkhe);
        QCOMPARE(bytesOf(one, "mlp_unpermute.bwd"), tkhe + the);
        const auto ep = with({"cluster.gpus=8", "parallel.ep=8", "training.global_batch=16"});
        QCOMPARE(bytesOf(ep, "mlp_permute"), 4 * tkhe);
        QCOMPARE(bytesOf(ep, "mlp_unpermute"), 3 * tkhe + the);
        // DeepEP writes the received tokens in expert order: no chunk sort.
        const auto deepep =
            with({"cluster.gpus=8", "parallel.ep=8", "training.global_batch=16", "step_time.moe_dispatcher=deepep"});
        QCOMPARE(bytesOf(deepep, "mlp_permute"), 2 * tkhe);
        QCOMPARE(bytesOf(deepep, "mlp_unpermute"), tkhe + the);
        QVERIFY(deepep.stepTime.step < ep.stepTime.step);
        // Memory-bound, at the achievable bandwidth; a dense model has none.
        QCOMPARE(bytesOf(core::estimate(scenario({"step_time.mode=predicted"})), "mlp_permute"), -1.0);
        const auto e = scenarioErrors({"step_time.moe_dispatcher=nccl"});
        QVERIFY(!e.empty());
        QCOMPARE(e.front().field, std::string("step_time.moe_dispatcher"));
    }

    // With TP and sequence parallelism each TP rank routes its own s / tp tokens, and the dispatcher
    // gathers the experts' input rows over the expert-TP group only (Megatron-Core token_dispatcher.py).
    // Qwen3-30B-A3B, micro-batch 2 of 4096 tokens (T = 8192), TP 2, EP 8: a rank routes 4096 tokens,
    // 32,768 rows of d 2048 in bf16 (134,217,728 bytes); with ETP 1 an expert sees those rows at its full
    // width 768, with ETP 2 the rows of both TP ranks at 384.
    void sequenceParallelRoutesTheLocalTokens()
    {
        const double local = 4096.0 * 8 * 2048 * 2, tokens = 4096.0 * 2048 * 2;
        const auto run = [](const char* etp, const char* ep) {
            return core::estimate(
                scenario({"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=8", "parallel.tp=2",
                          "parallel.sequence_parallel=true", ep, etp, "training.seq_len=4096", "training.micro_batch=2",
                          "training.global_batch=8", "step_time.mode=predicted"}));
        };
        const auto opOf = [](const core::Plan& p, std::string_view name) {
            const auto it = std::find_if(p.ops.begin(), p.ops.end(), [&](const auto& o) { return o.name == name; });
            return it == p.ops.end() ? core::RooflineOp{} : *it;
        };
        const auto tensorOf = [](const core::Plan& p, std::string_view name) {
            const auto& lt = p.memory.layerTensors;
            for (int i = 0; i < lt.count; ++i)
                if (lt.tensors[std::size_t(i)].name == name)
                    return lt.tensors[std::size_t(i)].bytes;
            return -1.0;
        };
        const auto one = run("parallel.etp=1", "parallel.ep=8");
        QCOMPARE(opOf(one, "router").flops, 2.0 * 4096 * 2048 * 128);
        QCOMPARE(opOf(one, "mlp_permute").bytes, 2 * local + 2 * local); // permute, then the chunk sort
        QCOMPARE(opOf(one, "mlp_unpermute").bytes, 2 * local + local + tokens);
        const auto gateUp = opOf(one, "mlp_gate_up"); // 16 local experts, 4096 · 8 · 8 / 128 rows each
        QCOMPARE(gateUp.grouped[0], 2048.0);
        QCOMPARE(gateUp.grouped[1], 1536.0);
        QCOMPARE(gateUp.flops, 2.0 * 8192 * 2048 * 8 * 2 * 384); // unchanged: T · k · 2 · 768 / tp columns
        QCOMPARE(tensorOf(one, "moe.permuted_input"), local);
        QCOMPARE(tensorOf(one, "moe.expert_output"), local);
        QCOMPARE(tensorOf(one, "moe.router_probs"), 4096.0 * 128 * 4);
        // ETP 2 (= TP, Megatron-Core's default): the rows of both TP ranks, gathered before the sort.
        const auto two = run("parallel.etp=2", "parallel.ep=4");
        QCOMPARE(opOf(two, "router").flops, 2.0 * 4096 * 2048 * 128);
        QCOMPARE(opOf(two, "mlp_permute").bytes, 2 * local + 2 * (2 * local));
        QCOMPARE(opOf(two, "mlp_gate_up").grouped[0], 8192.0 * 8 * 4 / 128);
        QCOMPARE(opOf(two, "mlp_gate_up").grouped[1], 768.0);
        QCOMPARE(tensorOf(two, "moe.permuted_input"), 2 * local);
        // TP 1, ETP 2: each rank routes all its 8,192 tokens (no split), and the dispatcher still gathers
        // the rows of both expert-TP ranks: 2 · 8,192 · 8 rows from each of 4 EP ranks over 128 experts,
        // each expert's fc1 split in two. The op list and the ledger agree on the gathered rows.
        const auto tp1 =
            core::estimate(scenario({"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=8",
                                     "parallel.tp=1", "parallel.ep=4", "parallel.etp=2", "training.seq_len=4096",
                                     "training.micro_batch=2", "training.global_batch=8", "step_time.mode=predicted"}));
        QCOMPARE(opOf(tp1, "router").flops, 2.0 * 8192 * 2048 * 128);
        QCOMPARE(opOf(tp1, "mlp_gate_up").grouped[0], 2 * 8192.0 * 8 * 4 / 128);
        QCOMPARE(opOf(tp1, "mlp_gate_up").grouped[1], 768.0);
        // 16,384 gathered tokens · 8 rows · 768 columns · K 2,048 (twice the TP 2 rank's: DP 8, not 4)
        QCOMPARE(opOf(tp1, "mlp_gate_up").flops, 2.0 * 16384 * 8 * 768 * 2048);
        QCOMPARE(tensorOf(tp1, "moe.permuted_input"), 4 * local);
        QCOMPARE(tensorOf(tp1, "moe.router_probs"), 8192.0 * 128 * 4);
        QCOMPARE(tp1.moe.rowsPerExpert, 8192.0 * 8 / 128);
        QVERIFY(!hasWarning(tp1, "moe_tp_without_sp"));
        // TP 2 without sequence parallelism: both TP ranks route the same 8,192 tokens, nothing is split or
        // gathered, and with ETP 1 each expert's fc1 is whole: 8 rows of 768 per token of s in the ledger
        // (half that before the experts' own split was used). Megatron-Core refuses the layout: a warning.
        const auto noSp =
            core::estimate(scenario({"model.preset=qwen3-30b-a3b", "cluster.gpu=h100-sxm", "cluster.gpus=8",
                                     "parallel.tp=2", "parallel.ep=8", "parallel.etp=1", "training.seq_len=4096",
                                     "training.micro_batch=2", "training.global_batch=8", "step_time.mode=predicted"}));
        QCOMPARE(tensorOf(noSp, "experts.gate"), 8192.0 * 8 * 768 * 2);
        QCOMPARE(tensorOf(noSp, "moe.permuted_input"), 2 * local);
        QCOMPARE(opOf(noSp, "mlp_gate_up").grouped[0], 8192.0 * 8 * 8 / 128);
        QCOMPARE(opOf(noSp, "mlp_gate_up").grouped[1], 1536.0);
        QVERIFY(hasWarning(noSp, "moe_tp_without_sp"));
        QVERIFY(!hasWarning(one, "moe_tp_without_sp"));
    }

    void groupedGemmRunsInRoundsOfFourStreams()
    {
        // Transformer Engine's grouped GEMM (nvte_multi_tensor_gemm): one cuBLAS GEMM per local expert on
        // 4 compute streams, so gpt-oss-120b's 16 local experts at EP 8 (1,024 rows x 5,760 x 2,880 each)
        // run as 4 rounds of 4 GEMMs sharing the SMs; 6 experts as a round of 4 and one of 2; "single"
        // as one grid of all 16.
        const auto sc = scenario({"step_time.mode=predicted", "cluster.gpu=h100-sxm"});
        const auto plan = core::estimate(sc);
        const auto& hw = plan.hardware;
        const auto& at = hw.achievableFlopsShape;
        auto rate = [&hw, &at](double batch) {
            return std::min(hw.achievableFlops, hw.achievableFlops *
                                                    core::gemmShapeEfficiency(1024, 5760, 2880, batch, 132, 90) /
                                                    core::gemmShapeEfficiency(at[0], at[1], at[2], 1, 132, 90));
        };
        auto timed = [](const core::RateModel& rates, double groups) {
            core::RooflineOp op;
            op.kind = core::OpKind::Gemm;
            op.m = 1024 * groups, op.n = 5760, op.k = 2880;
            op.flops = 2 * op.m * op.n * op.k;
            op.groupedShare = 1;
            op.grouped = {1024, 5760, 2880, groups};
            core::applyAchievable(op, rates);
            return op;
        };
        const double one = 2 * 1024.0 * 5760 * 2880; // one expert's GEMM
        const auto rates = core::rateModel(sc, hw);
        QCOMPARE(rates.groupedStreams, 4);
        NAPKIN_COMPARE_REL(timed(rates, 16).achievableSeconds, 16 * one / rate(4), 1e-12);
        NAPKIN_COMPARE_REL(timed(rates, 6).achievableSeconds, 4 * one / rate(4) + 2 * one / rate(2), 1e-12);
        NAPKIN_COMPARE_REL(timed(rates, 3).achievableSeconds, 3 * one / rate(3), 1e-12);
        auto single = sc;
        single.stepTime.groupedGemm = core::GroupedGemm::Single;
        const auto grid = core::rateModel(single, hw);
        QCOMPARE(grid.groupedStreams, 0);
        NAPKIN_COMPARE_REL(timed(grid, 16).achievableSeconds, 16 * one / rate(16), 1e-12);
        // Launches: one cuBLAS GEMM per local expert on the streams, one grid otherwise; a shared expert
        // in the same op adds its own GEMM.
        QCOMPARE(timed(rates, 16).kernels, 16.0);
        QCOMPARE(timed(grid, 16).kernels, 1.0);
        core::RooflineOp shared = timed(rates, 6);
        shared.groupedShare = 0.5;
        core::applyAchievable(shared, rates);
        QCOMPARE(shared.kernels, 7.0);
        const auto e = scenarioErrors({"step_time.grouped_gemm=cutlass"});
        QVERIFY(!e.empty());
        QCOMPARE(e.front().field, std::string("step_time.grouped_gemm"));
    }

    void imbalanceSweep()
    {
        // Mixtral 8x7B at EP 8: the plan at 1.0, 1.2, 1.5 and the worst case (8 · min(2, 1) / 2 = 4);
        // each point is the full plan with that imbalance, so step and memory rise with it.
        const auto sc =
            scenario({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=8", "step_time.mode=predicted"});
        const auto sweep = core::imbalanceSweep(sc);
        QCOMPARE(sweep.size(), std::size_t(4));
        QCOMPARE(sweep[0].stepSeconds, core::estimate(sc).stepTime.step);
        QCOMPARE(sweep[0].memoryTotal, core::estimate(sc).memory.total);
        QCOMPARE(sweep[3].label, std::string("worst"));
        QCOMPARE(sweep[3].imbalance, 4.0);
        for (std::size_t i = 1; i < sweep.size(); ++i) {
            QVERIFY(sweep[i].stepSeconds > sweep[i - 1].stepSeconds);
            QVERIFY(sweep[i].memoryTotal > sweep[i - 1].memoryTotal);
        }
        QCOMPARE(core::imbalanceSweepJson(sweep).size(), std::size_t(4));
        // No expert parallelism, or a dense model: no sweep.
        QVERIFY(core::imbalanceSweep(scenario({"model.preset=mixtral-8x7b"})).empty());
        QVERIFY(core::imbalanceSweep(scenario({})).empty());
    }

    void expertLayoutErrors()
    {
        QCOMPARE(firstField({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=3"}),
                 std::string("parallel.ep"));
        QCOMPARE(firstField({"model.preset=mixtral-8x7b", "cluster.gpus=4", "parallel.ep=8"}),
                 std::string("parallel.ep"));
        QCOMPARE(firstField({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.etp=3"}),
                 std::string("parallel.etp"));
        QCOMPARE(firstField({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.ep=0"}),
                 std::string("parallel.ep"));
        QCOMPARE(firstField({"model.preset=mixtral-8x7b", "cluster.gpus=16", "parallel.etp=\"half\""}),
                 std::string("parallel.etp"));
        // A dense model ignores ep, and says so.
        const auto dense = core::estimate(scenario({"cluster.gpus=16", "parallel.ep=8"}));
        QVERIFY(hasWarning(dense, "moe_keys_unused"));
        QCOMPARE(dense.memory.weights, core::estimate(scenario({"cluster.gpus=16"})).memory.weights);
    }

    void errorsNameTheField()
    {
        QCOMPARE(firstField({"model.preset=deepseek-v3", "parallel.ep_node_limit=0"}),
                 std::string("parallel.ep_node_limit"));
        QCOMPARE(firstField({"model.preset=deepseek-v3", "parallel.ep_node_limit=\"few\""}),
                 std::string("parallel.ep_node_limit"));
        QVERIFY(hasWarning(core::estimate(scenario({"parallel.ep_node_limit=4"})), "moe_keys_unused"));
        QCOMPARE(firstField({"training.routing_imbalance=0.5"}), std::string("training.routing_imbalance"));
        QCOMPARE(firstField({"training.routing_imbalance=\"skewed\""}), std::string("training.routing_imbalance"));
        QCOMPARE(firstField({"training.routing_imbalance=true"}), std::string("training.routing_imbalance"));
        QCOMPARE(firstField({"training.moe_capacity_factor=0"}), std::string("training.moe_capacity_factor"));
        QCOMPARE(firstField({"training.moe_capacity_factor=-1"}), std::string("training.moe_capacity_factor"));
        QCOMPARE(firstField({"precision.expert_weights=tf32"}), std::string("precision.expert_weights"));
        QCOMPARE(firstField({"precision.expert_weights=int3"}), std::string("precision.expert_weights"));
        QVERIFY(scenarioErrors({"training.moe_capacity_factor=null", "training.routing_imbalance=\"balanced\"",
                                "precision.expert_weights=auto"})
                    .empty());
        const auto e = scenarioErrors({"training.routing_imbalance=0.5"});
        QVERIFY(e.front().allowed.find("1 to 1024") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestMoeRun)
#include "tst_moe_run.moc"
