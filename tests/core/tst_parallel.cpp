// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Model parallelism per rank (Megatron layout): Korthikanti Table 2 through the whole plan at t = 8,
// the pipeline bubble, parameters per rank, ZeRO over the data-parallel group, and the constraints.
#include "testsupport.h"

#include <algorithm>

using namespace napkin;
using napkin::test::golden;
using napkin::test::scenario;
using napkin::test::scenarioErrors;

namespace {
constexpr double GiB = 1073741824.0;
// The paper's 22B and 175B GPT models, unfused attention, 16-bit activations with dropout.
std::string gptModel(int layers, int hidden, int heads)
{
    return "model={\"kind\": \"transformer\", \"layers\": " + std::to_string(layers) +
           ", \"d_model\": " + std::to_string(hidden) + ", \"heads\": " + std::to_string(heads) +
           ", \"ffn\": " + std::to_string(4 * hidden) +
           ", \"ffn_kind\": \"gelu\", \"vocab\": 51200, \"norm\": \"layernorm\", \"biases\": \"all\", \"positions\": "
           "\"learned\", "
           "\"max_positions\": 2048, \"dropout\": true}";
}
} // namespace

class TestParallel : public QObject {
    Q_OBJECT
private slots:
    void korthikantiTable2ThroughThePlan_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("technique");
        QTest::addColumn<double>("expectedGiB");
        const char* techniques[] = {"tp", "tp_sp", "tp_selective", "tp_sp_selective", "full"};
        for (const auto& row : golden()["korthikanti_gib_t8"]) {
            const bool big = row["model"] == "175B";
            const QString model = QString::fromStdString(big ? gptModel(96, 12288, 96) : gptModel(48, 6144, 64));
            for (const char* t : techniques)
                QTest::newRow(qPrintable(QString::fromStdString(row["model"].get<std::string>() + " " + t)))
                    << model << QString::fromLatin1(t) << row[t].get<double>();
        }
    }
    void korthikantiTable2ThroughThePlan()
    {
        QFETCH(QString, model);
        QFETCH(QString, technique);
        QFETCH(double, expectedGiB);
        const bool sp = technique.contains(QStringLiteral("sp"));
        const QString recompute = technique == QStringLiteral("full")               ? QStringLiteral("full")
                                  : technique.contains(QStringLiteral("selective")) ? QStringLiteral("selective")
                                                                                    : QStringLiteral("none");
        const auto plan = core::estimate(scenario(
            {model.toStdString(), "training.seq_len=2048", "training.micro_batch=1", "training.global_batch=8",
             "training.flash_attention=false", "training.recompute=" + recompute.toStdString(), "cluster.gpus=8",
             "parallel.tp=8", std::string("parallel.sequence_parallel=") + (sp ? "true" : "false"),
             std::string("training.checkpoint_every=") + (recompute == QStringLiteral("full") ? "1" : "\"auto\"")}));
        // Full recompute keeps 2sbh per layer regardless of t (Table 2's last row, no SP).
        QVERIFY2(std::abs(plan.memory.activationsPerLayer / GiB - expectedGiB) <=
                     golden()["korthikanti_setup"]["tol_abs_gib"].get<double>(),
                 qPrintable(QStringLiteral("got %1 GiB").arg(plan.memory.activationsPerLayer / GiB)));
    }

    void bubble()
    {
        // Narayanan et al. 2021: (p - 1) / m for 1F1B and (p - 1) / (v · m) interleaved.
        // 32 GPUs = pp 4 × dp 8; global batch 64 at micro-batch 1: m = 64 / 8 = 8 micro-batches.
        auto plan = core::estimate(scenario({"cluster.gpus=32", "parallel.pp=4", "training.global_batch=64"}));
        QCOMPARE(plan.compute.dataParallel, std::int64_t(8));
        QCOMPARE(plan.compute.accumulationSteps, std::int64_t(8));
        QCOMPARE(plan.memory.bubbleFraction, 3.0 / 8);
        plan = core::estimate(
            scenario({"cluster.gpus=32", "parallel.pp=4", "parallel.virtual_stages=2", "training.global_batch=64"}));
        QCOMPARE(plan.memory.bubbleFraction, 3.0 / 16);
        QCOMPARE(core::estimate(scenario({})).memory.bubbleFraction, 0.0);
    }

    void paramsPerRank()
    {
        // Llama 2 7B (6,738,415,616): per layer 202,383,360; embedding and head 131,072,000 each;
        // final norm 4096.
        const double perLayer = 202383360, emb = 131072000, head = 131072000, fin = 4096, P = 6738415616;
        auto plan = core::estimate(scenario({"cluster.gpus=64", "parallel.tp=2"}));
        QCOMPARE(plan.memory.paramsPerRank, P / 2);
        QCOMPARE(plan.compute.dataParallel, std::int64_t(32));
        // pp = 4: the first stage has 8 layers and the embedding; the last 8 layers, the head and the
        // final norm. The last stage is the larger here by the norm's 4096 parameters, and holds the logits.
        plan = core::estimate(scenario({"cluster.gpus=64", "parallel.pp=4", "training.global_batch=1024"}));
        const double first = 8 * perLayer + emb, last = 8 * perLayer + head + fin;
        QCOMPARE(plan.memory.paramsPerRank, plan.memory.mostLoadedStage == 0 ? first : last);
        QCOMPARE(plan.memory.perStage.size(), std::size_t(4));
        QCOMPARE(plan.memory.perStage[0].params, first);
        QCOMPARE(plan.memory.perStage[3].params, last);
        QCOMPARE(plan.memory.perStage[1].params, 8 * perLayer); // middle stages: layers only
        // ZeRO-1 shards the optimizer over the 16 data-parallel ranks, not all 64 GPUs.
        QCOMPARE(plan.compute.dataParallel, std::int64_t(16));
        QCOMPARE(plan.memory.optimizerStates, plan.memory.paramsPerRank * 8 / 16);
        // Time does not depend on the layout at a given MFU.
        QCOMPARE(plan.time.seconds, core::estimate(scenario({"cluster.gpus=64"})).time.seconds);
    }

    void firstStageHoldsInFlightMicroBatches()
    {
        // 1F1B: the first of p stages keeps min(p, m) micro-batches of its L/p layers: the same
        // activations as all L layers of one micro-batch when m >= p.
        const auto one = core::estimate(scenario({"cluster.gpus=8", "training.global_batch=64"}));
        const auto four = core::estimate(scenario({"cluster.gpus=8", "parallel.pp=4", "training.global_batch=64"}));
        QCOMPARE(four.memory.activationsPerLayer, one.memory.activationsPerLayer);
        // m = 64 / dp 2 = 32 >= p: the first stage holds 4 micro-batches of 8 layers = 32 layers' worth
        // (Llama has no embedding dropout, so nothing outside the layers on the first stage). It is the
        // most loaded: the last stage holds 8 layers' worth plus the logits (about 0.8 GB).
        QCOMPARE(four.memory.mostLoadedStage, std::int64_t(0));
        QCOMPARE(four.memory.activations, 32 * one.memory.activationsPerLayer);
        QCOMPARE(four.memory.temporaries, 0.0);
        QCOMPARE(four.memory.perStage.size(), std::size_t(4));
        // 1F1B: stage i holds min(p - i, m) micro-batches: 4, 3, 2, 1.
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(four.memory.perStage[std::size_t(i)].inFlight, double(4 - i));
            if (i > 0)
                QVERIFY(four.memory.perStage[std::size_t(i - 1)].tensors >
                            four.memory.perStage[std::size_t(i)].tensors ||
                        i == 3); // the last stage adds the logits
        }
        QCOMPARE(four.memory.perStage[1].activations, 3 * 8 * one.memory.activationsPerLayer);
        // Every stage's tensors are held against the same line: the H100's 80 GB less the runtime
        // overhead, with its derivation (the per-stage chart draws it).
        QCOMPARE(four.memory.tensorRoom, 80e9 - four.memory.overhead);
        QVERIFY(four.memory.overhead > 1e9);
        const auto d = std::find_if(four.derivations.begin(), four.derivations.end(),
                                    [](const auto& x) { return std::string_view(x.quantity) == "memory.tensor_room"; });
        QVERIFY(d != four.derivations.end());
        QCOMPARE(d->value, four.memory.tensorRoom);
    }

    // Context-parallel ranks hold the same parameters, so the gradients are reduced and the ZeRO states
    // sharded over data × context parallel ranks (Megatron-Core get_data_parallel_group(
    // with_context_parallel=True); torchtitan's dp_shard_cp mesh). Llama 3 8B (8,030,261,248
    // parameters) on 16 GPUs with ZeRO-1 and bf16-mixed (two fp32 Adam moments, 8 B per parameter):
    // 8 B · P / 16 per GPU whether the 16 are DP 16 or DP 8 × CP 2, and the same gradient traffic.
    void contextParallelRanksShareTheStates()
    {
        auto plan = [](int cp) {
            return core::estimate(
                test::scenario({"model.preset=llama-3-8b", "cluster.gpus=16", "parallel.cp=" + std::to_string(cp),
                                "parallel.zero=1", "training.global_batch=64", "step_time.mode=predicted"}));
        };
        const auto one = plan(1), two = plan(2);
        QCOMPARE(two.compute.dataParallel, std::int64_t(8));
        QCOMPARE(one.params.total, 8030261248.0);
        QCOMPARE(two.memory.optimizerStates, 8 * 8030261248.0 / 16);
        QCOMPARE(one.memory.optimizerStates, two.memory.optimizerStates);
        QCOMPARE(two.stepTime.dpCommTotal, one.stepTime.dpCommTotal);
    }

    // parallel.cp_comm by hand: Llama 3 8B (32 heads, 8 KV heads of 128) at 8,192 tokens, CP 4 inside
    // an H100 node (NVLink 4: 450 GB/s each way), 8 micro-batches of one sequence per step, 32 layers.
    // A rank's K and V: kv = 2 · 2048 · 8 · 128 · 2 B = 8,388,608 B. At the nominal rate the ring sends
    // 3 kv forward and 6 kv backward; the all-gather moves (n-1)/n of 4 kv forward, the same gathered
    // again and reduce-scattered backward: the same bytes. Ulysses moves 3/4 of Q, K, V
    // (2048 · 4096 · 2 + kv = 25,165,824 B) and of the output (16,777,216 B) each way, forward and backward.
    void contextParallelExchanges()
    {
        auto plan = [](const char* comm) {
            return core::estimate(
                test::scenario({"model.preset=llama-3-8b", "training.seq_len=8192", "training.micro_batch=1",
                                "training.global_batch=16", "cluster.gpu=h100-sxm", "cluster.gpus=8", "parallel.cp=4",
                                std::string("parallel.cp_comm=\"") + comm + "\"", "step_time.mode=predicted"}));
        };
        const auto p2p = plan("p2p"), ag = plan("all_gather"), a2a = plan("a2a");
        const double kv = 2 * 2048.0 * 8 * 128 * 2, bw = 450e9, mbLayers = 8 * 32; // micro-batches x layers
        QVERIFY(test::near(p2p.stepTimeAtPeak.cpCommTotal, mbLayers * 9 * kv / bw, 1e-9));
        QVERIFY(test::near(ag.stepTimeAtPeak.cpCommTotal, mbLayers * 9 * kv / bw, 1e-9));
        QVERIFY(test::near(a2a.stepTimeAtPeak.cpCommTotal, mbLayers * 2 * 0.75 * (25165824.0 + 16777216.0) / bw, 1e-9));
        // The ring hides behind each block's attention; the gather and the all-to-alls wait for it.
        QVERIFY(p2p.stepTime.cpComm < p2p.stepTime.cpCommTotal);
        QCOMPARE(ag.stepTime.cpComm, ag.stepTime.cpCommTotal);
        QCOMPARE(a2a.stepTime.cpComm, a2a.stepTime.cpCommTotal);
        QVERIFY(ag.stepTime.cpComm > 0 && ag.stepTime.step > p2p.stepTime.step);
        QCOMPARE(ag.memory.total, p2p.memory.total);
    }

    // PyTorch FSDP2 copies on the compute stream (framework.h fsdpCopyBytes): Llama 3 8B fully sharded
    // over 8 H100 under torchtitan, bf16 parameters, fp32 gradient reduction (the megatron plan), one
    // micro-batch a step. Each of the two gathers' copy-out reads the gathered buffer and writes the
    // parameters, 2 + 2 bytes a parameter; the reduce-scatter's copy-in reads the bf16 gradient and
    // writes it in fp32, 2 + 4: 2 * 4 + 6 = 14 bytes a parameter at the achievable bandwidth.
    void fsdpCopiesOnTheComputeStream()
    {
        const std::vector<std::string> base = {"model.preset=llama-3-8b", "cluster.gpu=h100-sxm",
                                               "cluster.gpus=8",          "training.seq_len=8192",
                                               "training.micro_batch=1",  "training.global_batch=8",
                                               "precision.plan=megatron", "step_time.mode=predicted"};
        auto with = [&base](std::vector<std::string> more) {
            more.insert(more.begin(), base.begin(), base.end());
            return core::estimate(scenario(more));
        };
        const auto p = with({"parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan"});
        QCOMPARE(p.compute.accumulationSteps, std::int64_t(1));
        const double P = p.memory.paramsPerRank;
        QCOMPARE(P, p.params.total); // no tensor or pipeline split: the rank gathers every parameter
        QCOMPARE(p.stepTime.fsdpCopyBytes, 14 * P);
        QCOMPARE(p.stepTime.fsdpCopies, 14 * P / p.hardware.achievableBandwidth);
        QVERIFY(test::derivation(p, "time.fsdp_copies") != nullptr);
        QVERIFY(p.stepTime.overheads >= p.stepTime.fsdpCopies);
        // SHARD_GRAD_OP gathers once: 4 + 6 bytes a parameter.
        const auto gradOp = with({"parallel.zero=0", "parallel.fsdp=grad_op", "step_time.framework=torchtitan"});
        QCOMPARE(gradOp.stepTime.fsdpCopyBytes, 10 * P);
        // Megatron's distributed optimizer and DeepSpeed's ZeRO-3 gather into their own buffers: none.
        QCOMPARE(with({"parallel.zero=1", "step_time.framework=megatron"}).stepTime.fsdpCopies, 0.0);
        QCOMPARE(with({"parallel.zero=3", "step_time.framework=deepspeed"}).stepTime.fsdpCopies, 0.0);
        // The key overrides the framework's rule: FSDP1's in-place gathers, or copies under another framework.
        QCOMPARE(with({"parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan",
                       "step_time.fsdp_copies=false"})
                     .stepTime.fsdpCopies,
                 0.0);
        QCOMPARE(with({"parallel.zero=3", "step_time.framework=deepspeed", "step_time.fsdp_copies=true"})
                     .stepTime.fsdpCopyBytes,
                 14 * P);
        // One rank shards nothing.
        QCOMPARE(with({"parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan", "cluster.gpus=1",
                       "training.global_batch=1"})
                     .stepTime.fsdpCopies,
                 0.0);
    }

    // The optimizer update on one rank of Llama 3 8B fully sharded over 8 H100 (megatron plan: bf16
    // weights, fp32 gradients, fp32 master and moments), so each rank updates P / 8 parameters. One
    // fused pass reads and writes the master and both moments (2 · 12), reads the gradient (4) and
    // writes the weight (2): 30 bytes a parameter. PyTorch's foreach AdamW (torch/optim/adam.py
    // _multi_tensor_adam) passes over memory once per call: mul_ 8, lerp_ 12, mul_ 8, addcmul_ 12,
    // sqrt 8, div_ 8, add_ 8, addcdiv_ 16 = 80 bytes on the fp32 master, then the bf16 weights are
    // written from it (4 + 2): 86.
    void optimizerImplementation()
    {
        const std::vector<std::string> base = {
            "model.preset=llama-3-8b", "cluster.gpu=h100-sxm",          "cluster.gpus=8",
            "training.seq_len=8192",   "training.micro_batch=1",        "training.global_batch=8",
            "precision.plan=megatron", "step_time.mode=predicted",      "parallel.zero=0",
            "parallel.fsdp=full",      "step_time.framework=torchtitan"};
        auto with = [&base](std::vector<std::string> more) {
            more.insert(more.begin(), base.begin(), base.end());
            return core::estimate(scenario(more));
        };
        const auto fused = with({});
        const double updated = fused.params.total / 8;
        QCOMPARE(fused.stepTime.optimizerBytes, 30 * updated);
        QCOMPARE(with({"optimizer.implementation=\"fused\""}).stepTime.optimizerBytes, 30 * updated);
        const auto foreach = with({"optimizer.implementation=\"foreach\""});
        QCOMPARE(foreach.stepTime.optimizerBytes, 86 * updated);
        QCOMPARE(foreach.stepTime.optimizer, 86 * updated / foreach.hardware.achievableBandwidth);
        const auto* d = test::derivation(foreach, "time.optimizer");
        QVERIFY(d != nullptr);
        QVERIFY(std::string_view(d->source).find("foreach") != std::string_view::npos);
        // Plain Adam folds its L2 decay into the gradient (_foreach_add(grads, params)): reads g and p,
        // writes g', 12 bytes where AdamW's mul_ moves 8: 90.
        QCOMPARE(with({"optimizer.name=\"adam\"", "optimizer.implementation=\"foreach\""}).stepTime.optimizerBytes,
                 90 * updated);
        // Without a master copy (bf16-mixed: bf16 weights and gradients, fp32 moments) one fused pass reads
        // and writes the weight (2 + 2), reads the gradient (2) and the moments (8) and writes them (8): 22.
        QCOMPARE(with({"precision.plan=bf16-mixed"}).stepTime.optimizerBytes, 22 * updated);
        // Composer's DecoupledAdamW loop (the first moment as mul_ then add_): 8 bytes more, 94.
        const auto loop = with({"optimizer.implementation=\"forloop\""});
        QCOMPARE(loop.stepTime.optimizerBytes, 94 * updated);
        QVERIFY(std::string_view(test::derivation(loop, "time.optimizer")->source).find("Composer") !=
                std::string_view::npos);
    }

    void constraints_data()
    {
        QTest::addColumn<QString>("sets");
        QTest::addColumn<QString>("field");
        // clang-format off
        QTest::newRow("tp does not divide heads") << QStringLiteral("parallel.tp=3\ncluster.gpus=3") << QStringLiteral("parallel.tp");
        QTest::newRow("pp does not divide layers") << QStringLiteral("parallel.pp=5\ncluster.gpus=5") << QStringLiteral("parallel.pp");
        QTest::newRow("layout does not divide gpus") << QStringLiteral("parallel.tp=8\ncluster.gpus=12") << QStringLiteral("parallel.tp");
        QTest::newRow("dp inconsistent") << QStringLiteral("parallel.tp=2\nparallel.dp=4\ncluster.gpus=16") << QStringLiteral("parallel.dp");
        QTest::newRow("cp does not divide seq") << QStringLiteral("parallel.cp=3\ncluster.gpus=3\ntraining.seq_len=4096") << QStringLiteral("parallel.cp");
        QTest::newRow("interleave without pp") << QStringLiteral("parallel.virtual_stages=2") << QStringLiteral("parallel.virtual_stages");
        QTest::newRow("tp 0") << QStringLiteral("parallel.tp=0") << QStringLiteral("parallel.tp");
        QTest::newRow("ulysses cp does not divide heads per tp") << QStringLiteral("parallel.tp=8\nparallel.cp=8\ncluster.gpus=64\nparallel.cp_comm=\"a2a\"") << QStringLiteral("parallel.cp_comm");
        QTest::newRow("cp_comm unknown") << QStringLiteral("parallel.cp_comm=\"ring\"") << QStringLiteral("parallel.cp_comm");
        QTest::newRow("foreach for sgd") << QStringLiteral("optimizer.name=\"sgd\"\noptimizer.implementation=\"foreach\"") << QStringLiteral("optimizer.implementation");
        QTest::newRow("forloop for lion") << QStringLiteral("optimizer.name=\"lion\"\noptimizer.implementation=\"forloop\"") << QStringLiteral("optimizer.implementation");
        QTest::newRow("implementation unknown") << QStringLiteral("optimizer.implementation=\"single_tensor\"") << QStringLiteral("optimizer.implementation");
        // clang-format on
        QTest::newRow("toy model with tp")
            << QStringLiteral("model={\"kind\": \"mlp\", \"width\": 4, \"layers\": 2}\nparallel.tp=2\ncluster.gpus=2")
            << QStringLiteral("parallel.tp");
    }
    void constraints()
    {
        QFETCH(QString, sets);
        QFETCH(QString, field);
        nlohmann::json doc = core::defaultScenarioJson();
        core::Errors errors;
        for (const auto& s : sets.split(QLatin1Char('\n')))
            core::applySet(doc, s.toStdString(), errors);
        core::parseScenario(doc, core::builtinCatalog(), errors);
        QVERIFY(!errors.empty());
        QCOMPARE(QString::fromStdString(errors.front().field), field);
    }
};

QTEST_GUILESS_MAIN(TestParallel)
#include "tst_parallel.moc"
