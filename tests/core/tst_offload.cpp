// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// NCCL buffers per communicator, the frameworks' gradient buckets, offload (ZeRO-Offload,
// ZeRO-Infinity, activation offload) and memory.timeline, each against hand-computed values.

#include "testsupport.h"

#include "buckets.h"
#include "comm_buffers.h"
#include "format.h"
#include "offload.h"
#include "reconcile.h"

#include <QtTest>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

using namespace napkin;
using test::scenario;

namespace {

// Per connection: LL 524,288 + LL128 4,915,200 + Simple 4,194,304 (NCCL src/include/device.h).
constexpr double kConn = 9633792;

bool hasWarning(const core::Plan& p, std::string_view code)
{
    return std::any_of(p.warnings.begin(), p.warnings.end(), [&](const core::Warning& w) { return w.code == code; });
}

bool hasError(const core::Errors& errors, std::string_view field)
{
    return std::any_of(errors.begin(), errors.end(), [&](const core::UserError& e) { return e.field == field; });
}

const core::CommGroup* group(const core::CommBuffers& c, std::string_view name)
{
    for (int i = 0; i < c.count; ++i)
        if (c.groups[std::size_t(i)].name == name)
            return &c.groups[std::size_t(i)];
    return nullptr;
}

} // namespace

class TestOffload : public QObject {
    Q_OBJECT
private slots:
    // The default plan: 64 H100s, data-parallel across 8 nodes. One DP communicator: 24 channels ·
    // 2 connections · 9,633,792 B = 462,422,016 B, and NVLS for its 8 ranks on a node: 16 channels ·
    // 2 · 1 MiB · 8 heads = 268,435,456 B.
    void ncclBuffersOfTheDefaultPlan()
    {
        const auto p = core::estimate(scenario({}));
        const auto& c = p.memory.comm;
        QCOMPARE(c.count, 1);
        const auto* dp = group(c, "dp");
        QVERIFY(dp);
        QCOMPARE(dp->bytes, 462422016.0);
        QCOMPARE(dp->nvlsBytes, 268435456.0);
        QVERIFY(dp->crossesNodes);
        QCOMPARE(p.memory.overheadComm, 462422016.0 + 268435456.0);
        const auto j = core::planToJson(p);
        QCOMPARE(j["memory"]["comm_buffers"]["groups"][0]["group"].get<std::string>(), std::string("dp"));
        QCOMPARE(j["memory"]["overhead_detail"]["comm_buffers"].get<double>(), 730857472.0);
    }

    // TP 8 inside the node (collective + NVLS for 8 heads), DP 4 across nodes (one local rank: no
    // NVLS), PP 2 across nodes: 2 p2p channels per peer · 2 peers · send and receive.
    void everyCommunicatorOfAThreeDimensionalLayout()
    {
        const auto p = core::estimate(scenario({"cluster.gpus=64", "parallel.tp=8", "parallel.pp=2", "parallel.dp=4"}));
        const auto& c = p.memory.comm;
        QCOMPARE(c.count, 3);
        QCOMPARE(group(c, "tp")->bytes, 24 * 2 * kConn);
        QCOMPARE(group(c, "tp")->nvlsBytes, 16 * 2 * 1048576.0 * 8);
        QVERIFY(!group(c, "tp")->crossesNodes);
        QCOMPARE(group(c, "dp")->nvlsBytes, 0.0);
        QCOMPARE(group(c, "pp")->bytes, 2 * 4 * kConn);
        QCOMPARE(c.nccl, 24 * 2 * kConn * 2 + 16 * 2 * 1048576.0 * 8 + 2 * 4 * kConn);
    }

    // One GPU has no communicator; an A100 (NVLink 3) has no NVLink SHARP; a given figure wins.
    void noBuffersOnOneGpuNoNvlsBeforeHopperAndGivenFigures()
    {
        QCOMPARE(core::estimate(scenario({"cluster.gpus=1", "parallel.zero=0"})).memory.overheadComm, 0.0);
        const auto a100 = core::estimate(scenario({"cluster.gpu=a100-sxm4-80gb"}));
        QCOMPARE(a100.memory.overheadComm, 24 * 2 * kConn);
        const auto given = core::estimate(scenario({"overhead.comm_buffer_bytes=1e9"}));
        QCOMPARE(given.memory.overheadComm, 1e9);
        QVERIFY(given.memory.comm.given);
    }

    // DeepSpeed's ZeRO backward allocates a 5e8-element reduction bucket in the gradient dtype; PyTorch
    // DDP (no sharding) keeps a second copy of the gradients in its buckets.
    void frameworkGradientBuckets()
    {
        const auto ds = core::estimate(scenario({"step_time.framework=deepspeed"}));
        QCOMPARE(ds.memory.comm.reduceBucket, 5e8 * 2);
        QCOMPARE(std::string(ds.memory.peakPhase), std::string("loss"));
        QCOMPARE(ds.memory.temporaries, ds.memory.phases.loss + ds.memory.phases.gathered + 1e9);
        QCOMPARE(core::estimate(scenario({"step_time.framework=megatron"})).memory.comm.reduceBucket, 0.0);
        const auto ddp = core::estimate(scenario({"parallel.zero=0", "step_time.framework=torchtitan"}));
        QCOMPARE(ddp.memory.comm.ddpBuckets, ddp.memory.gradients);
        QCOMPARE(ddp.memory.overheadComm, ddp.memory.comm.nccl + ddp.memory.gradients);
    }

    // reconcile: DDP's buckets and the graphs' pool come from the caching allocator, so they are in
    // the predicted allocated bytes, and a plan that counts the buckets does not offer them as a
    // reason for a gap.
    void reconcileCountsTheBucketsThePlanHas()
    {
        const auto sc = scenario({"parallel.zero=0", "step_time.framework=torchtitan", "step_time.cuda_graphs=true"});
        const auto p = core::estimate(sc);
        core::Measurement meas;
        meas.stepSeconds = 10;
        meas.peakAllocatedBytes = 90e9;
        core::Errors errors;
        const auto r = core::reconcile(sc, p, meas, errors);
        QVERIFY(errors.empty());
        QCOMPARE(r.predictedAllocated, core::tensorBytes(p.memory) + p.memory.overheadWorkspace + p.memory.gradients +
                                           0.20 * p.memory.activations);
        for (const auto& g : r.reasons)
            QVERIFY2(g.reason.find("DDP") == std::string::npos, g.reason.c_str());
    }

    // ZeRO-Offload on one GPU (Llama 2 7B, bf16-mixed): the fp32 master copy and Adam's two moments
    // leave the GPU (12 B/param on the host); the CPU update moves 30 B/param at the default host
    // bandwidth (614.4 GB/s on one GPU), the new bf16 parameters cross PCIe Gen5 at 0.87 · 64 GB/s.
    void optimizerOffloadToTheHost()
    {
        const auto sc =
            scenario({"cluster.gpus=1", "parallel.zero=0", "offload.optimizer=cpu", "step_time.mode=predicted"});
        const auto p = core::estimate(sc);
        const double P = p.params.total;
        QCOMPARE(p.memory.masterWeights, 0.0);
        QCOMPARE(p.memory.optimizerStates, 0.0);
        QCOMPARE(p.memory.gradients, P * 2); // one GPU: no gradient shard to send
        QCOMPARE(p.memory.host.master, P * 4);
        QCOMPARE(p.memory.host.optimizer, P * 8);
        QCOMPARE(p.memory.host.total, P * 12);
        QCOMPARE(p.memory.host.pcieBandwidth, 64e9 * 0.87);
        const double cpuAdam = P * 30 / 614.4e9, paramsBack = P * 2 / (64e9 * 0.87);
        NAPKIN_COMPARE_REL(p.stepTime.offload, cpuAdam + paramsBack, 1e-9);
        QCOMPARE(p.stepTime.optimizer, 0.0);
        QCOMPARE(p.memory.host.pcieBytesPerStep, P * 2 + P * 2);
        // In the MFU mode the assumed MFU leaves the offload out, and a warning says so.
        QVERIFY(hasWarning(core::estimate(scenario({"cluster.gpus=1", "parallel.zero=0", "offload.optimizer=cpu"})),
                           "offload_time_not_in_mfu"));
        QVERIFY(!hasWarning(p, "offload_time_not_in_mfu"));
        // The derivations say where the states went.
        const auto j = core::planToJson(p);
        QCOMPARE(j["memory"]["host"]["per_gpu"]["optimizer_states"].get<double>(), P * 8);
    }

    // ZeRO-2 + offload on 8 GPUs: the reduced gradient shards go to the host in fp32; a node's host
    // memory below the need is a warning, not a fit.
    void shardedGradientsAndHostMemoryShort()
    {
        const auto p = core::estimate(scenario(
            {"cluster.gpus=8", "parallel.zero=2", "offload.optimizer=cpu", "cluster.host_memory_bytes=100e9"}));
        const double P = p.params.total;
        QCOMPARE(p.memory.gradients, 0.0);
        QCOMPARE(p.memory.host.gradients, P * 4 / 8);
        QCOMPARE(p.memory.host.total, P * (4 + 8 + 4) / 8);
        QCOMPARE(p.memory.host.perNode, P * 16);
        QVERIFY(!p.memory.host.fits);
        QVERIFY(hasWarning(p, "host_memory_short"));
    }

    // ZeRO-Infinity: states on NVMe (read and written each step at offload.nvme_bandwidth), pinned
    // staging buffers on the host; parameter offload needs ZeRO-3 and NVMe needs its bandwidth.
    void nvmeAndTheErrorsThatNameTheKeys()
    {
        const auto p = core::estimate(scenario({"cluster.gpus=8", "parallel.zero=3", "offload.optimizer=nvme",
                                                "offload.params=cpu", "offload.nvme_bandwidth=5e9"}));
        const double P = p.params.total;
        QCOMPARE(p.memory.host.nvme, P * 12 / 8);
        QCOMPARE(p.memory.host.pinnedBuffers, 4 * 1e8 * 4);
        QCOMPARE(p.memory.weights, 0.0);
        QCOMPARE(p.memory.host.weights, P * 2 / 8);
        QCOMPARE(p.memory.host.nvmeBytesPerStep, 2 * P * 12 / 8);
        QVERIFY(hasError(test::scenarioErrors({"offload.params=cpu"}), "offload.params"));
        QVERIFY(hasError(test::scenarioErrors({"offload.optimizer=nvme"}), "offload.nvme_bandwidth"));
        QVERIFY(hasError(test::scenarioErrors({"offload.activations=gpu"}), "offload.activations"));
        QVERIFY(hasError(test::scenarioErrors({"offload.extra=1"}), "offload.extra"));
        QVERIFY(hasError(test::scenarioErrors({"offload.pcie_bandwidth=fast"}), "offload.pcie_bandwidth"));
        QVERIFY(hasError(test::scenarioErrors({"offload.nvme_bandwidth=-5"}), "offload.nvme_bandwidth"));
        QVERIFY(hasError(test::scenarioErrors({"cluster.host_memory_bytes=lots"}), "cluster.host_memory_bytes"));
        QVERIFY(
            hasError(test::scenarioErrors({"cluster.host_memory_bandwidth=quick"}), "cluster.host_memory_bandwidth"));
    }

    // Activation offload keeps two layers' saved tensors on the GPU; the rest of the L layers of the
    // micro-batch in flight wait on the host and cross PCIe twice per micro-batch.
    void activationOffloadKeepsTwoLayers()
    {
        const auto base = core::estimate(scenario({}));
        const auto p = core::estimate(scenario({"offload.activations=cpu"}));
        const double kept = base.memory.layerTensors.kept, L = 32;
        QCOMPARE(p.memory.host.activations, (L - 2) * kept);
        NAPKIN_COMPARE_REL(base.memory.activations - p.memory.activations, (L - 2) * kept, 1e-12);
        const double m = double(p.compute.accumulationSteps);
        QCOMPARE(p.memory.host.pcieBytesPerStep, 2 * m * (L - 2) * kept);
    }

    // torchtitan with PP does not reshard after the forward (parallelize_llama.py at 9dec370): the
    // stage's parameters stay all-gathered in bf16; without PP only two blocks and the root are.
    void torchtitanPipelineKeepsTheStageGathered()
    {
        const auto pp = core::estimate(scenario({"cluster.gpus=16", "parallel.zero=0", "parallel.fsdp=full",
                                                 "parallel.pp=2", "step_time.framework=torchtitan"}));
        // Llama 2 7B on two stages: 16 layers and the embedding (first) or the head and final norm
        // (last), all in bf16, on 8 data-parallel ranks that each hold the stage whole.
        const auto& c = pp.params;
        const double stage = pp.memory.mostLoadedStage == 0 ? c.layers / 2 + c.embedding + c.positional
                                                            : c.layers / 2 + c.head + c.finalNorm;
        QCOMPARE(pp.memory.gatheredWeights, stage * 2);
        const auto flat = core::estimate(
            scenario({"cluster.gpus=16", "parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan"}));
        const auto& pc = flat.params;
        QCOMPARE(flat.memory.gatheredWeights,
                 2 * pc.layers / 32 * 2 + (pc.embedding + pc.positional + pc.head + pc.finalNorm) * 2);
    }

    // FSDP2's backward of a block holds its unsharded bf16 gradients and the reduce-scatter input
    // (bf16 here): 4 bytes per parameter of one block, in temporaries at backward_start only.
    void fsdp2ReduceScatterBuffersInTheBackward()
    {
        const auto p = core::estimate(scenario(
            {"parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan", "training.recompute=full"}));
        QCOMPARE(std::string(p.memory.peakPhase), std::string("backward_start"));
        const double perLayer = p.params.layers / 32;
        QCOMPARE(p.memory.comm.reduceScatter, perLayer * (2 + 2));
        QCOMPARE(p.memory.temporaries, p.memory.gatheredWeights + perLayer * 4);
        // Megatron's distributed optimizer reduce-scatters from its contiguous grad buffer: none extra.
        QCOMPARE(
            core::estimate(scenario({"parallel.zero=3", "step_time.framework=megatron"})).memory.comm.reduceScatter,
            0.0);
    }

    // CUDA graphs keep the forward's temporaries: 20% of the activations (NeMo's measured ratio).
    void cudaGraphsKeepTheForwardsTemporaries()
    {
        const auto off = core::estimate(scenario({}));
        const auto on = core::estimate(scenario({"step_time.cuda_graphs=true"}));
        QCOMPARE(off.memory.overheadCudaGraphs, 0.0);
        QCOMPARE(on.memory.overheadCudaGraphs, 0.20 * on.memory.activations);
        NAPKIN_COMPARE_REL(on.memory.overhead - off.memory.overhead,
                           0.20 * on.memory.activations + (on.memory.overheadAllocator - off.memory.overheadAllocator),
                           1e-12);
    }

    // The timeline's highest point is the ledger's peak (less the allocator's reserve), at the
    // ledger's peak phase; time runs forward from 0 to 1.
    void timelinePeaksAtTheLedgersPeak()
    {
        const std::vector<std::vector<std::string>> cases{
            {},
            {"cluster.gpus=64", "parallel.tp=8", "parallel.pp=4", "parallel.dp=2"},
            {"training.recompute=full"},
            {"step_time.framework=deepspeed", "step_time.mode=predicted"},
            {"parallel.zero=0", "parallel.fsdp=full", "step_time.framework=torchtitan"},
            {"offload.activations=cpu", "step_time.mode=predicted"},
            {"step_time.cuda_graphs=true", "parallel.zero=0", "parallel.fsdp=full", "training.recompute=full"},
        };
        for (const auto& sets : cases) {
            nlohmann::json doc = core::defaultScenarioJson();
            core::Errors errors;
            for (const auto& s : sets)
                core::applySet(doc, s, errors);
            const auto sc = core::parseScenario(doc, core::builtinCatalog(), errors);
            QVERIFY(errors.empty());
            const auto p = core::estimate(sc);
            const auto& m = p.memory;
            QVERIFY(m.timelineCount >= 5);
            double peak = 0, last = 0;
            std::string_view peakEvent;
            for (int i = 0; i < m.timelineCount; ++i) {
                const auto& t = m.timeline[std::size_t(i)];
                QVERIFY(t.at >= last);
                last = t.at;
                QCOMPARE(t.total, t.states + t.activations + t.temporaries + t.runtime);
                if (t.total > peak) {
                    peak = t.total;
                    peakEvent = t.event;
                }
            }
            QCOMPARE(last, 1.0);
            NAPKIN_COMPARE_REL(peak, m.total - m.overheadAllocator, 1e-12);
            QCOMPARE(std::string(peakEvent), std::string(m.peakPhase));
        }
    }
};

QTEST_APPLESS_MAIN(TestOffload)
#include "tst_offload.moc"
