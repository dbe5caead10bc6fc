#include "steptime.h"

#include "roofline.h"

#include <algorithm>
#include <string_view>

namespace napkin::core {

double allReduceSeconds(double bytes, double ranks, double bandwidth)
{
    if (ranks <= 1 || bandwidth <= 0)
        return 0;
    return 2 * (ranks - 1) / ranks * bytes / bandwidth;
}

double allGatherSeconds(double bytes, double ranks, double bandwidth)
{
    if (ranks <= 1 || bandwidth <= 0)
        return 0;
    return (ranks - 1) / ranks * bytes / bandwidth;
}

namespace {

bool isAttentionCore(std::string_view name)
{
    return name.rfind("attention_flash", 0) == 0 || name.rfind("scores_", 0) == 0 || name.rfind("softmax", 0) == 0;
}

} // namespace

StepTimeBreakdown predictStepTime(const Scenario& sc, const Plan& p)
{
    StepTimeBreakdown r;
    const auto& hw = p.hardware;
    if (hw.peakFlops <= 0 || hw.bandwidth <= 0 || p.ops.empty() || sc.cluster.gpus <= 0)
        return r;
    const auto& par = sc.parallel;
    const auto& tr = sc.training;
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const double tp = std::max(1, par.tp), pp = std::max(1, par.pp), cp = std::max(1, par.cp);
    const double v = std::max(1, par.virtualStages);
    const double dp = double(std::max<std::int64_t>(1, p.compute.dataParallel));
    const double m = double(std::max<std::int64_t>(1, p.compute.accumulationSteps));
    const double e = bytesPerValue(sc.precision.activations);
    const double ew = bytesPerValue(sc.precision.weights), eg = bytesPerValue(sc.precision.gradients);
    const double s = isMlp ? 1.0 : double(tr.seqLen), b = double(tr.microBatch);
    const double h = isMlp ? double(sc.model.mlp.width) : double(sc.model.shape.dModel);
    const double L = isMlp ? double(sc.model.mlp.layers) : double(sc.model.shape.layers);

    // ---- Compute of one micro-batch on the slowest stage (the last: it also runs the logits).
    // plan.ops hold one rank's layer (count = L) and the logits / loss (count 1).
    double layerFwd = 0, layerBwd = 0, attnFwd = 0, attnBwd = 0, head = 0;
    for (const auto& op : p.ops) {
        const std::string_view name = op.name;
        const bool perLayer = isMlp || !(name.rfind("logits", 0) == 0 || name.rfind("cross_entropy", 0) == 0);
        const double t = op.timeSeconds;
        if (!perLayer) {
            head += t;
            continue;
        }
        const double layers = isMlp ? op.count : 1.0; // the toy model's ops stand for all L layers
        (op.pass == Pass::Forward ? layerFwd : layerBwd) += t * layers;
        if (isAttentionCore(name))
            (op.pass == Pass::Forward ? attnFwd : attnBwd) += t;
    }
    const double stageLayers = isMlp ? 1.0 : L / pp;
    double recomputeFwd = 0;
    if (tr.recompute == Recompute::Full)
        recomputeFwd = layerFwd;      // the whole forward again (Chen et al. 2016)
    else if (tr.recompute == Recompute::Selective)
        recomputeFwd = attnFwd;       // QK^T, softmax, PV again (Korthikanti et al. 2022 §5)
    const double mbCompute = stageLayers * (layerFwd + layerBwd) + head;
    const double mbRecompute = stageLayers * recomputeFwd;

    // ---- Links. Megatron orders ranks TP, CP, DP, PP from the innermost; a group stays inside a
    // node while its span fits gpus_per_node (Narayanan et al. 2021 §3.1 place TP inside a node).
    const double gpn = std::max(1, par.gpusPerNode);
    const auto& gpu = *hw.gpu;
    double intra = sc.stepTime.intraNodeBandwidth;
    if (intra <= 0)
        // Catalogue figures are bidirectional totals (NVLink 4: 900 GB/s = 450 GB/s each way).
        intra = gpu.interconnectBytesPerSecond > 0 ? gpu.interconnectBytesPerSecond / 2 : gpu.hostLinkBytesPerSecond / 2;
    const double inter = sc.stepTime.interNodeBandwidth;
    if (intra <= 0)
        intra = inter;
    r.tpCrossesNodes = tp > gpn;
    r.cpCrossesNodes = tp * cp > gpn;
    r.dpCrossesNodes = tp * cp * dp > gpn;
    r.ppCrossesNodes = tp * cp * dp * pp > gpn;
    r.tpBandwidth = r.tpCrossesNodes ? std::min(intra, inter) : intra;
    r.cpBandwidth = r.cpCrossesNodes ? std::min(intra, inter) : intra;
    r.dpBandwidth = r.dpCrossesNodes ? std::min(intra, inter) : intra;
    r.ppBandwidth = r.ppCrossesNodes ? std::min(intra, inter) : intra;

    // ---- Tensor parallelism: per layer 2 all-reduces forward and 2 backward of the s·b·h activations
    // (Shoeybi et al. 2019 §3, Fig. 4); with SP each becomes an all-gather + reduce-scatter of the same
    // volume (Korthikanti et al. 2022 §4.2.2). Full recompute repeats the forward's two.
    double mbTp = 0;
    if (tp > 1 && !isMlp) {
        const double msg = (s / cp) * b * h * e;
        const double perLayer = 4 + (tr.recompute == Recompute::Full ? 2 : 0);
        mbTp = stageLayers * perLayer * allReduceSeconds(msg, tp, r.tpBandwidth);
    }

    // ---- Context parallelism: ring attention passes K and V around the cp ranks (forward), and K, V
    // plus dK, dV backward (Liu et al. 2023, Ring Attention; Megatron-Core context parallel), hidden
    // behind the attention computation where it is long enough.
    double mbCp = 0, mbCpTotal = 0;
    if (cp > 1 && !isMlp) {
        const auto shard = tensorParallelShard(sc.model.shape, int(tp));
        const double kv = 2 * (s / cp) * b * double(shard.kvHeads) * double(shard.headDim) * e; // K and V of one chunk
        const double fwd = (cp - 1) * kv / r.cpBandwidth;
        const double bwd = 2 * fwd;
        const double fwdTimes = tr.recompute == Recompute::None ? 1.0 : 2.0;
        mbCpTotal = stageLayers * (fwdTimes * fwd + bwd);
        mbCp = stageLayers * (fwdTimes * std::max(0.0, fwd - attnFwd) + std::max(0.0, bwd - attnBwd));
    }

    // ---- Pipeline: each micro-batch crosses each of the v chunk boundaries forward and backward;
    // with TP the message is split over the t ranks (Narayanan et al. 2021 §4.1 scatter/gather).
    double mbPp = 0;
    if (pp > 1) {
        const double msg = (s / cp) * b * h * e / tp;
        mbPp = 2 * v * msg / r.ppBandwidth;
    }

    r.microBatchSeconds = mbCompute + mbRecompute + mbTp + mbCp + mbPp;
    r.compute = m * mbCompute;
    r.recompute = m * mbRecompute;
    r.tpComm = m * mbTp;
    r.cpComm = m * mbCp;
    r.cpCommTotal = m * mbCpTotal;
    r.ppComm = m * mbPp;
    r.bubble = (pp - 1) / v * r.microBatchSeconds; // Narayanan et al. 2021 §2.2

    // ---- Data parallelism (ZeRO / FSDP). Bytes of this rank's (model-parallel) parameters.
    const double Pr = p.memory.paramsPerRank > 0 ? p.memory.paramsPerRank : p.params.total;
    const int zero = effectiveZeroStage(sc);
    const double group = double(shardGroupSize(sc, std::int64_t(dp)));
    double dpTotal = 0, dpExposed = 0;
    if (dp > 1) {
        if (zero <= 2) {
            // Stage 0: all-reduce the gradients. Stages 1-2: reduce-scatter gradients + all-gather the
            // updated parameters, the same volume (Rajbhandari et al. 2019 §7.1). Once per step.
            dpTotal = zero == 0 ? allReduceSeconds(Pr * eg, dp, r.dpBandwidth)
                                : allGatherSeconds(Pr * eg, dp, r.dpBandwidth) + allGatherSeconds(Pr * ew, dp, r.dpBandwidth);
            // Overlapped with the last micro-batch's backward (bucketed reduction, PyTorch DDP).
            const double window = stageLayers * layerBwd;
            dpExposed = sc.stepTime.overlapDp ? std::max(0.0, dpTotal - window) : dpTotal;
        } else {
            // ZeRO-3 / FSDP: gather the parameters for the forward and again for the backward (and the
            // recomputed forward), reduce-scatter the gradients, every micro-batch (ZeRO §7.2: 1.5x DP).
            const double gathers = tr.recompute == Recompute::Full ? 3.0 : 2.0;
            const double inner = group, bwInner = group >= dp ? r.dpBandwidth
                                                              : (group * tp * cp > gpn ? std::min(intra, inter) : intra);
            const double perMb = gathers * allGatherSeconds(Pr * ew, inner, bwInner) + allGatherSeconds(Pr * eg, inner, bwInner);
            // HYBRID_SHARD: the gradient shards are then all-reduced across the dp / group replicas.
            const double replicas = dp / group;
            const double acrossReplicas = allReduceSeconds(Pr * eg / group, replicas, std::min(intra, inter));
            dpTotal = m * perMb + acrossReplicas;
            // Prefetching overlaps each micro-batch's gathers with its compute.
            const double exposedPerMb = sc.stepTime.overlapDp ? std::max(0.0, perMb - mbCompute) : perMb;
            dpExposed = m * exposedPerMb +
                        (sc.stepTime.overlapDp ? std::max(0.0, acrossReplicas - stageLayers * layerBwd) : acrossReplicas);
        }
    }
    r.dpCommTotal = dpTotal;
    r.dpComm = dpExposed;

    // ---- Optimizer update: memory-bound; read the gradient and write the weight, read and write the
    // master copy and each optimizer state, for this rank's shard (Calculon counts Adam the same way).
    const auto& mem = p.memory;
    const double updated = Pr / std::max(1.0, mem.optimizerRate.shard); // the shard this rank updates (ledger)
    const double statesBytes = updated > 0 ? (mem.optimizerStates + mem.masterWeights) * 2 : 0;
    r.optimizer = (statesBytes + updated * (eg + ew)) / hw.bandwidth;

    r.step = r.compute + r.recompute + r.tpComm + r.cpComm + r.ppComm + r.bubble + r.dpComm + r.optimizer;
    if (!(r.step > 0))
        return r;
    const double G = double(sc.cluster.gpus);
    r.mfu = p.compute.flopsPerStep / (G * hw.peakFlops * r.step);
    // HFU = MFU · hardware / model FLOPs (exactly MFU without recomputation).
    r.hfu = r.mfu * (p.compute.trainingFlops > 0 ? p.compute.hardwareFlops / p.compute.trainingFlops : 1.0);
    r.tokensPerSecond = p.compute.tokensPerStep / r.step;
    r.valid = true;
    return r;
}

} // namespace napkin::core
