// The memory stage of estimate(): every pipeline stage's tensors, the most loaded rank's ledger with
// the derivation of each bucket, the runtime overhead, the total and the fit.

#include "activations.h"
#include "buckets.h"
#include "comm_buffers.h"
#include "offload.h"
#include "kernels.h"
#include "estimate.h"
#include "estimate_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace napkin::core::detail {

namespace {

constexpr const char* kSrcZero = "Rajbhandari et al. 2019 (ZeRO), §3: stage 1 shards optimizer states, 2 also "
                                 "gradients, 3 also parameters";
constexpr const char* kSrcKorthikanti = "Korthikanti et al. 2022 (arXiv 2205.05198), §4.1 Eq. 1 and Table 2";


// What every stage's tensors are computed from: the layout, the ZeRO/FSDP shard of each model state,
// the bytes per value of each dtype, and how the parameters and layers fall on the stages.
struct LedgerInputs {
    bool isMlp = false;
    std::int64_t tp = 1, pp = 1, cp = 1, accumulationSteps = 1;
    double P = 0;                                // all parameters
    double shardW = 1, shardG = 1, shardO = 1;   // ZeRO-3 / -2 / -1 shard counts (1: replicated)
    double bw = 0, bg = 0, bm = 0, bo = 0, e = 0; // bytes per value: weights, grads, master, optimizer, activations
    double s = 0, b = 0;                         // sequence length, micro-batch
    double statesPerParam = 0;                   // optimizer states per parameter (Adafactor: factored)
    double scales = 0;                           // per-tensor scale bytes of a stage's weights (NVFP4)
    double layersAll = 0, firstParts = 0, lastParts = 0, allParts = 0;
    double L = 0, stageLayers = 0;               // layers, and layers per pipeline stage (even split)
    std::vector<double> layersOf;                // layers of each stage (uneven: parallel.*_stage_layers)
    std::vector<double> stageLayerParams;        // mixed dense and MoE layers: each stage's layer parameters
    std::vector<double> stageExperts;            // routed-expert parameters of each stage (MTP's on the last)
    double bwExpert = 0;                         // bytes per routed-expert weight (precision.expert_weights)
    double inflightFirst = 0;                    // micro-batches in flight on the first stage
    const LayerTensors* layer = nullptr;         // one layer's saved tensors (the same on every stage): in the plan
    double lossBytesPerLogit = 0;                // the loss path's bytes per logit at its peak
    const char* lossSource = "";
    bool eager = false;                          // the eager tensor list (step_time.kernel_fusion)
    double gatheredLayers = 0;                   // ZeRO-3: bytes of the layers held unsharded
    double gatheredRoot = 0;                     // torchtitan: the root module's parameters, unsharded
    bool gatherWholeStage = false;               // torchtitan with PP: no reshard after forward, the stage stays gathered
    double reduceScatterBuffers = 0;             // FSDP2: a block's unsharded gradients + the reduce-scatter input
    double optimizerTempPerParam = 0;            // bytes per parameter the optimizer step allocates (foreach AdamW)
    bool weightsAreMaster = false;
    CommBuffers comm;                            // communicators and buckets (core/comm_buffers.h)
};

// Dense and MoE layers of each pipeline stage (DeepSeek's dense first layers, Llama 4's
// interleaving), in Megatron's order. Without virtual stages a stage holds a contiguous run
// (parallel.*_stage_layers sizes); with v chunks per stage, chunk c of L / (p · v) layers sits on
// stage c mod p (Narayanan et al. 2021 §2.2).
struct StageLayerMix {
    double dense = 0, moe = 0;
};

std::vector<StageLayerMix> stageLayerMix(const TransformerShape& shape, const std::vector<double>& layersOf,
                                         std::int64_t virtualStages)
{
    const std::size_t pp = layersOf.size();
    std::vector<StageLayerMix> out(pp);
    auto add = [&](std::size_t st, std::int64_t i) { (isMoeLayer(shape, i) ? out[st].moe : out[st].dense) += 1; };
    const std::int64_t L = shape.layers;
    const std::int64_t chunk = virtualStages > 1 ? L / (std::int64_t(pp) * virtualStages) : 0;
    if (chunk > 0 && chunk * std::int64_t(pp) * virtualStages == L) {
        for (std::int64_t i = 0; i < L; ++i)
            add(std::size_t((i / chunk) % std::int64_t(pp)), i);
        return out;
    }
    std::int64_t i = 0;
    for (std::size_t st = 0; st < pp; ++st)
        for (std::int64_t n = 0; n < std::int64_t(std::llround(layersOf[st])) && i < L; ++n, ++i)
            add(st, i);
    return out;
}

// The loss path at its peak, per logit (a vocabulary-parallel rank's share). Megatron's
// vocab-parallel cross-entropy: the logits (e) and one fp32 copy that it turns into the softmax in
// place and keeps for the backward (Korthikanti et al. 2022 §4.3: 4sbv). PyTorch F.cross_entropy on
// logits.float() (torchtitan train.py at 9dec370, which deletes the logits before the backward):
// the forward holds the logits, their fp32 copy and log_softmax's fp32 output (e + 8); the backward
// holds that output, nll_loss's dense fp32 gradient and log_softmax's fp32 input gradient (12).
void setLossPath(const Scenario& sc, LedgerInputs& in)
{
    if (lossKernelFor(sc.stepTime.framework) == LossKernel::PyTorchCrossEntropy) {
        in.lossBytesPerLogit = std::max(in.e + 8, 12.0);
        in.lossSource = "PyTorch F.cross_entropy on logits.float() (torchtitan train.py): forward logits + fp32 copy + "
                        "log_softmax output (e + 8); backward log_softmax output + nll_loss's dense fp32 gradient + "
                        "log_softmax's fp32 input gradient (12); the larger, vocabulary-parallel over TP; last stage only";
    } else {
        in.lossBytesPerLogit = in.e + 4;
        in.lossSource = "logits s·b·V in the activation dtype + fp32 softmax/cross-entropy (Korthikanti et al. 2022 §4.3), "
                        "vocabulary-parallel over TP; on the last pipeline stage only";
    }
}

// ZeRO-3 and FSDP full shard all-gather each layer's parameters before its forward and backward and
// prefetch the next one: two layers unsharded in the weight dtype (PyTorch FSDP2's default prefetch
// of one module; DeepSpeed's stage-3 prefetch bucket). torchtitan leaves the root module (embedding,
// final norm, output layer) unsharded from the forward to the end of the backward
// (parallelize_llama.py: reshard_after_forward=not pp_enabled for the root). FSDP2 with a
// param_dtype keeps the sharded parameter in fp32: that shard is the master copy, and the weight
// dtype exists only unsharded.
void setGathered(const Scenario& sc, const Plan& p, LedgerInputs& in)
{
    if (in.shardW <= 1 || in.isMlp)
        return;
    const auto& pc = p.params;
    const double perLayer = in.L > 0 ? in.layersAll / in.L : 0;
    in.gatheredLayers = std::min(2.0, in.L) * perLayer / double(in.tp) * in.bw;
    const bool torchtitan = sc.stepTime.framework == Framework::Torchtitan;
    if (torchtitan && in.pp == 1)
        in.gatheredRoot = (pc.embedding + pc.positional + pc.head + pc.finalNorm) / double(in.tp) * in.bw;
    // With pipeline parallelism torchtitan does not reshard after the forward at all, "to avoid
    // per-microbatch all-gathers" (parallelize_llama.py apply_fsdp at 9dec370): every block and the
    // root of the stage stay unsharded from their first forward to the end of the backward.
    in.gatherWholeStage = torchtitan && in.pp > 1;
    // FSDP2's backward of a block yields its unsharded gradients in the parameter dtype, copied into a
    // reduce-scatter input in the reduce dtype (the gradient dtype here), which FSDP2 keeps until the
    // next block's reduce-scatter is issued (torch/distributed/_composable/fsdp/_fsdp_collectives.py
    // foreach_reduce; _fsdp_param_group.py reduce_scatter_state).
    if (torchtitan && in.shardG > 1)
        in.reduceScatterBuffers = perLayer / double(in.tp) * (in.bw + in.bg);
    in.weightsAreMaster = torchtitan && sc.parallel.fsdp != Fsdp::None && in.bm > 0;
}

LedgerInputs ledgerInputs(const Scenario& sc, Plan& p)
{
    LedgerInputs in;
    const auto& tr = sc.training;
    const auto& pr = sc.precision;
    const auto& c = p.compute;
    const Layout lay = layoutOf(sc);
    in.isMlp = sc.model.kind == ModelKind::Mlp;
    in.tp = lay.tp;
    in.pp = lay.pp;
    in.cp = lay.cp;
    in.accumulationSteps = c.accumulationSteps;
    // Multi-token prediction modules train with the model (arXiv 2412.19437 §2.2): their weights,
    // gradients and states are in the ledger although params.total leaves them out.
    in.P = p.params.total + p.params.mtp;
    const int zero = effectiveZeroStage(sc);
    const double N = double(shardGroupSize(sc, c.dataParallel));
    in.shardW = zero >= 3 ? N : 1;
    in.shardG = zero >= 2 ? N : 1;
    in.shardO = zero >= 1 ? N : 1;
    in.bw = bytesPerValue(pr.weights);
    in.bg = bytesPerValue(pr.gradients);
    in.bm = pr.master ? bytesPerValue(*pr.master) : 0.0;
    in.bo = bytesPerValue(pr.optimizer);
    in.e = bytesPerValue(pr.activations);
    in.s = double(tr.seqLen);
    in.b = double(tr.microBatch);
    in.statesPerParam = sc.optimizer == OptimizerKind::Adafactor ? p.params.adafactorStateElems / in.P
                                                                 : double(optimizerStates(sc.optimizer));
    // Parameters of a stage: its L/p layers, the embedding (first) and the output layer (last),
    // split over the tensor-parallel group (Narayanan et al. 2021 §3; Megatron places them so).
    const auto& pc = p.params;
    const double pp = double(in.pp);
    in.layersAll = in.isMlp ? in.P : pc.layers;
    // Megatron-Core builds the MTP block on the last stage, beside the output layer it shares.
    const double tail = pc.head + pc.finalNorm + pc.mtp;
    in.firstParts = in.layersAll / pp + pc.embedding + pc.positional + (in.pp == 1 ? tail : 0);
    in.lastParts = in.layersAll / pp + tail;
    in.allParts = in.layersAll + pc.embedding + pc.positional + tail;
    in.L = in.isMlp ? double(sc.model.mlp.layers) : double(sc.model.shape.layers);
    in.stageLayers = in.L / pp;
    in.layersOf = in.isMlp ? std::vector<double>(std::size_t(in.pp), in.stageLayers)
                           : stageLayerCounts(sc.parallel, sc.model.shape.layers);
    in.scales = info(pr.weights).perTensorScaleBytes * pc.matrices / pp;
    if (!in.isMlp && isMoe(sc.model.shape)) {
        const auto mix = stageLayerMix(sc.model.shape, in.layersOf, lay.virtualStages);
        for (const auto& st : mix)
            in.stageExperts.push_back(st.moe * pc.routedExpertsPerLayer);
        // Megatron-Core builds the MTP block on the last stage; its layer is the last layer's kind.
        if (isMoeLayer(sc.model.shape, sc.model.shape.layers - 1))
            in.stageExperts.back() += double(sc.model.shape.mtpLayers) * pc.routedExpertsPerLayer;
        if (in.pp > 1 && pc.denseLayer != pc.moeLayer)
            for (const auto& st : mix)
                in.stageLayerParams.push_back(st.dense * pc.denseLayer + st.moe * pc.moeLayer);
    }
    // precision.expert_weights: the routed experts' storage (gpt-oss: MXFP4, 4.25 bits a value).
    in.bwExpert = pr.expertWeights ? bytesPerValue(*pr.expertWeights) : in.bw;
    // 1F1B keeps min(p, m) micro-batches in flight on the first stage, one on the last; the
    // interleaved schedule adds (p - 1) / (p · v) (Korthikanti et al. 2022 §4.2.3).
    const std::int64_t vStages = lay.virtualStages;
    in.inflightFirst = double(std::min<std::int64_t>(in.pp, in.accumulationSteps)) *
                       (vStages > 1 ? 1.0 + double(in.pp - 1) / double(in.pp * vStages) : 1.0);
    in.eager = sc.stepTime.kernelFusion == KernelFusion::Eager;
    if (!in.isMlp) {
        TensorContext tc;
        tc.s = in.s / double(in.cp);
        tc.b = in.b;
        tc.e = in.e;
        tc.eName = info(pr.activations).id.data(); // a string literal in the dtype table
        tc.t = double(in.tp);
        tc.sequenceParallel = sc.parallel.sequenceParallel;
        tc.flash = tr.flashAttention;
        tc.eager = in.eager;
        tc.policy = tr.recompute;
        tc.modules = tr.recomputeModules;
        layerSavedTensors(sc.model.shape, tc, p.memory.layerTensors);
    }
    in.layer = &p.memory.layerTensors;
    // PyTorch's foreach AdamW (torch/optim/adamw.py _multi_tensor_adamw, torchtitan's default:
    // foreach = not fused) allocates exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs), one copy of the
    // second moments, for the update; Megatron's and DeepSpeed's fused Adam kernels allocate none.
    const bool adam = sc.optimizer == OptimizerKind::Adam || sc.optimizer == OptimizerKind::AdamW;
    if (adam && sc.stepTime.framework == Framework::Torchtitan)
        in.optimizerTempPerParam = in.bo;
    setLossPath(sc, in);
    setGathered(sc, p, in);
    in.comm = commBuffers(sc, c.dataParallel);
    return in;
}

// How each model state is stored per parameter on the reported rank.
void setStateRates(const LedgerInputs& in, MemoryLedger& m, bool keepsMaster)
{
    // FSDP2's sharded parameter is the master copy: no stored weight-dtype copy (in.weightsAreMaster).
    const double weightCopies = in.weightsAreMaster ? 0 : 1;
    m.statesBytesPerParam = weightCopies * in.bw + in.bg + in.bm + in.statesPerParam * in.bo;
    auto rate = [](double values, double bytes, double shard) { return StateRate{values, bytes, shard, values * bytes / shard}; };
    m.weightsRate = rate(weightCopies, in.bw, in.shardW);
    m.gradientsRate = rate(1, in.bg, in.shardG);
    m.masterRate = rate(keepsMaster ? 1 : 0, in.bm, in.shardO);
    m.optimizerRate = rate(in.statesPerParam, in.bo, in.shardO);
}

// One pipeline stage: the tensors the plan lists, and what the ledger's derivations quote when it is
// the most loaded one.
struct StageTensors {
    StageMemory memory;
    double perLayer = 0;
    std::int64_t k = 0;
    double bestK = 0;
    LayerActivationTerms terms;
    double outside = 0, boundary = 0, work = 0;
    double saved = 0, working = 0, loss = 0; // held at the loss / brought back at the backward's start
    double optimizerTemp = 0;                // allocated by the optimizer step
    double layers = 0; // transformer layers on this stage
    double mtpLayers = 0; // multi-token prediction depths (last stage only)
    double mtpSaved = 0;  // their saved tensors (in outside)
    double offloaded = 0;                    // saved tensors on the host (offload.activations)
    double gathered = 0;                     // ZeRO-3 / FSDP parameters held all-gathered on this stage
    double expertParams = 0;                 // routed-expert parameters on this rank
    double weightBytesPerParam = 0;          // mean bytes per stored weight (expert_weights differ)
    HostMemory host;                         // what offload keeps off the GPU for this stage
};

StageTensors buildStage(const Scenario& sc, const LedgerInputs& in, std::int64_t index)
{
    const auto& tr = sc.training;
    const TransformerShape& shape = sc.model.shape;
    const std::int64_t tp = in.tp, pp = in.pp;
    const bool first = index == 0, last = index == pp - 1;
    const double stageLayers = in.layersOf.empty() ? in.stageLayers : in.layersOf[std::size_t(index)];
    const double b = in.b, e = in.e, L = in.L;
    StageTensors st;
    st.layers = stageLayers;
    StageMemory& mem = st.memory;
    // The stage's share of the layers' parameters (uneven stages: its own layer count), plus the
    // embedding on the first and the output layer on the last.
    const double even = in.layersAll / double(pp);
    double layerParams = stageLayers == in.stageLayers || in.L <= 0 ? even : in.layersAll * stageLayers / in.L;
    if (!in.stageLayerParams.empty()) // dense and MoE layers differ: the stage's own layers
        layerParams = in.stageLayerParams[std::size_t(index)];
    double parts = first ? in.firstParts : (last ? in.lastParts : even);
    if (layerParams != even)
        parts += layerParams - even;
    const double share = (tp == 1 && pp == 1) ? 1.0 : parts / in.allParts / double(tp);
    mem.params = in.P * share;
    // Routed experts split over TP like the dense layers (expert parallelism: issue 16).
    st.expertParams = in.stageExperts.empty() ? 0.0 : in.stageExperts[std::size_t(index)] / double(tp);
    const double weightBytes = (mem.params - st.expertParams) * in.bw + st.expertParams * in.bwExpert;
    st.weightBytesPerParam = mem.params > 0 ? weightBytes / mem.params : in.bw;
    mem.weights = in.weightsAreMaster ? 0.0 : (weightBytes + in.scales) / in.shardW; // FSDP2: none stored
    mem.gradients = mem.params * in.bg / in.shardG;
    mem.master = mem.params * in.bm / in.shardO;
    mem.optimizer = mem.params * in.statesPerParam * in.bo / in.shardO;
    if (sc.offload.any())
        offloadStates(sc.offload, {mem.params, in.shardG, in.shardO, st.weightBytesPerParam, in.weightsAreMaster}, mem, st.host);
    // 1F1B: stage i holds min(p - i, m) micro-batches at its peak (Narayanan et al. 2021 §2.2.1).
    const double inflight = first ? in.inflightFirst : double(std::min<std::int64_t>(pp - index, in.accumulationSteps));
    mem.inFlight = inflight;
    if (in.isMlp) {
        const double D = double(sc.model.mlp.width);
        st.perLayer = b * D * e;
        if (tr.recompute == Recompute::Full) {
            st.k = tr.checkpointEvery > 0 ? tr.checkpointEvery : std::max<std::int64_t>(1, std::llround(std::sqrt(L)));
            mem.activations = (std::ceil(L / double(st.k)) + double(st.k)) * b * D * e;
        } else {
            mem.activations = b * D * L * e;
        }
        return st;
    }
    const double h = double(shape.dModel), V = double(shape.vocab), sr = in.s / double(in.cp);
    const bool sp = sc.parallel.sequenceParallel;
    // Outside the layers: embedding dropout mask (sbh) on the first stage, final norm input and
    // output-layer input (2 · e · sbh) on the last (Korthikanti §4.3); eager RMSNorm keeps its fp32
    // input and normalised tensor as well (4 + e + e per value, + the fp32 rsqrt). Split by SP and CP.
    const double finalNorm = in.eager && shape.norm == NormKind::RmsNorm ? 4 + 2 * e + 4 / h : 2 * e;
    // Multi-token prediction on the last stage (arXiv 2412.19437 §2.2; Megatron-Core
    // multi_token_prediction.py): per depth the norms' inputs (hnorm, enorm: 2 e·sbh), their
    // concatenation that eh_proj reads (2 e·sbh), one more transformer layer, and its own final norm
    // (2 e·sbh) before the shared output head and a second loss. Megatron-Core checkpoints the MTP
    // layer like the decoder's under full recompute.
    // The layer's kept tensors are its input alone under full recompute, so both cases keep lt.kept
    // per depth and micro-batch in flight. Counted in st.outside (derivation memory.mtp_activations).
    const LayerTensors& lt = *in.layer;
    const double mtp = last ? double(shape.mtpLayers) : 0.0;
    st.mtpLayers = mtp;
    st.mtpSaved = mtp * (inflight * lt.kept + sr * b * h * 6 * e / (sp ? double(tp) : 1.0));
    st.outside = sr * b * h * ((first && shape.dropout ? 1.0 : 0.0) + (last ? finalNorm : 0.0)) / (sp ? double(tp) : 1.0) +
                 st.mtpSaved;
    st.perLayer = lt.kept;
    if (tr.recompute == Recompute::Full) {
        st.k = tr.checkpointEvery > 0 ? tr.checkpointEvery : std::max<std::int64_t>(1, std::llround(std::sqrt(L)));
        const std::int64_t k = std::min<std::int64_t>(st.k, std::max<std::int64_t>(1, std::llround(stageLayers)));
        st.boundary = lt.kept;
        st.work = lt.autograd;
        // Chain model (Chen et al. 2016; CS336 lecture 2): L/k saved boundaries per micro-batch in
        // flight + one segment of k layers re-materialised during its backward: O(L/k + k).
        const double boundaries = std::ceil(stageLayers / double(k)) * inflight;
        st.offloaded = offloadActivations(sc.offload, boundaries, lt.kept, inflight, st.host);
        st.saved = boundaries * lt.kept - st.offloaded + st.outside;
        st.working = double(k) * lt.autograd;
        st.bestK = std::clamp(std::sqrt(stageLayers * lt.kept / lt.autograd), 1.0, std::max(1.0, stageLayers));
    } else {
        st.offloaded = offloadActivations(sc.offload, stageLayers * inflight, lt.kept, inflight, st.host);
        st.saved = stageLayers * lt.kept * inflight - st.offloaded + st.outside;
        st.working = lt.rematerialised; // one layer's recomputed tensors during its backward
    }
    // Logits on the last stage, vocabulary-parallel over TP (Megatron's parallel cross-entropy).
    // Each MTP depth computes its own logits and loss with the shared head; all are held until the
    // backward begins.
    st.loss = last ? (1 + mtp) * sr * b * V * in.lossBytesPerLogit / double(tp) : 0.0;
    // What ZeRO-3 / FSDP holds all-gathered is transient too: the working copy, not the model state.
    const double gathered = in.gatherWholeStage ? mem.params * in.bw : (first || last ? in.gatheredRoot : 0.0) + in.gatheredLayers;
    st.gathered = gathered;
    // The optimizer step: activations freed, parameters sharded again, the update's temporaries.
    st.optimizerTemp = sc.offload.optimizer != OffloadTarget::None ? 0.0 : mem.params * in.optimizerTempPerParam / in.shardO;
    // The peak: at the loss, at the start of the backward with the first recomputed region back (the
    // logits and the loss path are freed before the layers' backward begins), or in the optimizer step.
    // DeepSpeed's reduction bucket is allocated when the backward begins (core/comm_buffers.h).
    const double bucket = in.comm.reduceBucket;
    const double rs = in.reduceScatterBuffers; // during the blocks' backward only
    const double atLoss = st.saved + st.loss + bucket, atBackward = st.saved + st.working + bucket + rs;
    if (st.optimizerTemp > std::max(atLoss, atBackward) + gathered) {
        mem.peakPhase = "optimizer_step";
        mem.activations = 0;
        mem.temporaries = st.optimizerTemp;
    } else if (st.working + rs > st.loss || (st.loss <= 0 && bucket > 0)) {
        mem.peakPhase = "backward_start";
        mem.activations = st.saved + st.working;
        mem.temporaries = gathered + bucket + rs;
    } else {
        mem.peakPhase = st.loss > 0 ? "loss" : "forward_end";
        mem.activations = st.saved;
        mem.temporaries = st.loss + gathered + bucket;
    }
    return st;
}

// Every stage (cheap arithmetic) into m.perStage; returns the most loaded one, whose tensors become the
// ledger's. Middle stages hold fewer micro-batches than the first and no embedding or logits, so stage
// 0 or p - 1 wins, but each is listed for the per-stage ledger.
StageTensors chooseStage(const Scenario& sc, const LedgerInputs& in, MemoryLedger& m)
{
    StageTensors chosen;
    double chosenTensors = -1;
    m.perStage.clear();
    m.perStage.reserve(std::size_t(std::min<std::int64_t>(in.pp, 4096)));
    for (std::int64_t i = 0; i < in.pp; ++i) {
        StageTensors st = buildStage(sc, in, i);
        st.memory.tensors = tensorBytes(st.memory);
        if (int(m.perStage.size()) < 4096)
            m.perStage.push_back(st.memory);
        if (st.memory.tensors > chosenTensors) {
            chosen = st;
            chosenTensors = st.memory.tensors;
            m.mostLoadedStage = i;
        }
    }
    m.paramsPerRank = chosen.memory.params;
    m.peakPhase = chosen.memory.peakPhase;
    m.recompute = sc.training.recompute;
    m.recomputeModules = sc.training.recomputeModules;
    m.rematerialised = chosen.working;
    m.gatheredWeights = chosen.gathered;
    if (in.isMlp)
        m.gatheredWeights = 0;
    m.weightsAreMaster = in.weightsAreMaster;
    m.host = chosen.host;
    m.comm = in.comm;
    m.comm.reduceScatter = in.reduceScatterBuffers;
    const auto& cm = chosen.memory;
    m.phases = {cm.weights + cm.gradients + cm.master + cm.optimizer,
                chosen.saved,
                chosen.working,
                chosen.loss,
                chosen.gathered,
                in.comm.reduceBucket,
                in.reduceScatterBuffers,
                chosen.optimizerTemp,
                cm.inFlight};
    if (in.isMlp) {
        m.phases.saved = cm.activations;
        m.phases.gathered = 0;
    }
    for (const auto& bucket : kMemoryBuckets)
        if (bucket.stageBytes)
            m.*bucket.ledgerBytes = chosen.memory.*bucket.stageBytes;
    return chosen;
}

// Derivations of the model states: parameters per rank, weights, gradients, master weights, optimizer.
void deriveModelStates(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p)
{
    const auto& m = p.memory;
    const double P = in.P, tp = double(in.tp);
    if (p.params.mtp > 0)
        derive(p, "memory.params_trained", "{total} + {mtp}", P, "parameters",
               "arXiv 2412.19437 §2.2: the multi-token prediction modules train with the model; Megatron-Core "
               "builds them on the last pipeline stage",
               {{"total", p.params.total}, {"mtp", p.params.mtp}});
    if (in.tp > 1 || in.pp > 1)
        derive(p, "memory.params_per_rank", "{P} · {stage_share} / {tp}", chosen.memory.params, "parameters",
               "Narayanan et al. 2021: layers split over p pipeline stages (embedding first, output layer last), "
               "each stage's matrices over t tensor-parallel ranks",
               {{"P", P}, {"stage_share", chosen.memory.params * tp / P}, {"tp", tp}});
    const double Pr = chosen.memory.params;
    const auto& weights = memoryBucket(Bucket::Weights);
    const OffloadedStates off = offloadedStates(sc.offload, in.shardG, in.weightsAreMaster);
    const char* onHost = "offloaded (offload.*): on the host or NVMe, memory.host";
    if (off.weights)
        derive(p, weights.quantity, "{zero}", 0, "bytes", onHost, {{"zero", 0}});
    else if (m.weightsAreMaster)
        derive(p, weights.quantity, "{zero}", m.weights, "bytes",
               "PyTorch FSDP2 MixedPrecisionPolicy(param_dtype): the sharded fp32 parameter is the master copy "
               "(master_weights); the weight dtype exists only all-gathered, layer by layer (memory.per_gpu.temporaries)",
               {{"zero", 0}});
    else if (in.bwExpert != in.bw && chosen.expertParams > 0)
        derive(p, weights.quantity, "(({P} − {P_experts}) · {bytes} + {P_experts} · {expert_bytes} + {scales}) / {shard}",
               m.weights, "bytes",
               "precision.expert_weights: the routed experts stored in their own dtype (gpt-oss ships MXFP4 experts: "
               "4-bit values with one 8-bit scale per 32, OCP MX v1.0), the rest in precision.weights; sharded as "
               "Rajbhandari et al. 2019 (ZeRO) §3",
               {{"P", Pr}, {"P_experts", chosen.expertParams}, {"bytes", in.bw}, {"expert_bytes", in.bwExpert},
                {"scales", in.scales}, {"shard", in.shardW}});
    else
        derive(p, weights.quantity, weights.formula, m.weights, "bytes", kSrcZero,
               {{"P", Pr}, {"bytes", in.bw}, {"scales", in.scales}, {"shard", in.shardW}});
    const auto& gradients = memoryBucket(Bucket::Gradients);
    if (off.gradients)
        derive(p, gradients.quantity, "{zero}", 0, "bytes",
               "ZeRO-Offload (Ren et al. 2021 §4.1): reduced gradient shards go to the host in fp32 (memory.host)", {{"zero", 0}});
    else
        derive(p, gradients.quantity, gradients.formula, m.gradients, "bytes", kSrcZero,
               {{"P", Pr}, {"bytes", in.bg}, {"shard", in.shardG}});
    const auto& master = memoryBucket(Bucket::MasterWeights);
    const auto& optimizer = memoryBucket(Bucket::OptimizerStates);
    if (off.master)
        derive(p, master.quantity, "{zero}", 0, "bytes", onHost, {{"zero", 0}});
    else
        derive(p, master.quantity, master.formula, m.masterWeights, "bytes",
               "ZeRO §3.1: fp32 master copy of the parameters (0 bytes when the plan keeps none)",
               {{"P", Pr}, {"bytes", in.bm}, {"shard", in.shardO}});
    if (off.optimizer)
        derive(p, optimizer.quantity, "{zero}", 0, "bytes",
               "ZeRO-Offload: the optimizer states and their update live on the CPU (memory.host)", {{"zero", 0}});
    else if (sc.optimizer == OptimizerKind::Adafactor)
        derive(p, optimizer.quantity, "{factored_elements} · {bytes} / {shard}", m.optimizerStates, "bytes",
               "Shazeer & Stern 2018 (Adafactor): row + column second-moment factors per matrix, no momentum",
               {{"factored_elements", Pr * in.statesPerParam}, {"bytes", in.bo}, {"shard", in.shardO}});
    else
        derive(p, optimizer.quantity, optimizer.formula, m.optimizerStates, "bytes",
               "CS336 lecture 2 optimizer lattice: SGD 0, momentum/AdaGrad/RMSProp/Lion/Muon 1, Adam(W) 2 states",
               {{"P", Pr}, {"states", in.statesPerParam}, {"bytes", in.bo}, {"shard", in.shardO}});
}

// Activations and temporaries of the most loaded stage: the toy model's chain, or Korthikanti's layer
// with or without checkpointing; the logits on the last stage.
void deriveActivations(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p)
{
    auto& m = p.memory;
    const auto& tr = sc.training;
    const double b = in.b, e = in.e, L = in.L;
    const auto& activations = memoryBucket(Bucket::Activations);
    const auto& temporaries = memoryBucket(Bucket::Temporaries);
    m.activationsPerLayer = chosen.perLayer;
    m.checkpointEvery = chosen.k;
    const bool mostLoadedIsFirst = m.mostLoadedStage == 0;
    const double inflightChosen = mostLoadedIsFirst ? in.inflightFirst : 1.0;
    if (in.isMlp) {
        const double D = double(sc.model.mlp.width);
        if (tr.recompute == Recompute::Full)
            derive(p, activations.quantity, "(ceil({L} / {k}) + {k}) · {B} · {D} · {bytes}", m.activations,
                   "bytes", "CS336 lecture 2: checkpoint every k layers of a chain, O(L/k + k), best near k = sqrt(L)",
                   {{"L", L}, {"k", double(chosen.k)}, {"B", b}, {"D", D}, {"bytes", e}});
        else
            derive(p, activations.quantity, "{B} · {D} · {L} · {bytes}", m.activations, "bytes",
                   "CS336 lecture 2: activations B·D·L for the deep linear model",
                   {{"B", b}, {"D", D}, {"L", L}, {"bytes", e}});
        derive(p, temporaries.quantity, "{zero}", 0, "bytes", "the toy model has no logits", {{"zero", 0}});
        return;
    }
    const TransformerShape& shape = sc.model.shape;
    const double V = double(shape.vocab), sr = in.s / double(in.cp), stageLayers = chosen.layers;
    const LayerTensors& lt = *in.layer;
    const bool atBackward = std::string_view(m.peakPhase) == "backward_start";
    const bool off = chosen.offloaded > 0; // offload.activations moved some of the saved tensors
    if (std::string_view(m.peakPhase) == "optimizer_step") {
        derive(p, "memory.activations_per_layer", "{s} · {b} · ({per_token} + {per_score} · {a} · {s}) + {stats}", lt.kept,
               "bytes", "the kept tensors of memory.activation_tensors", {{"s", sr}, {"b", b}, {"per_token", lt.keptPerToken},
               {"per_score", lt.keptPerScore}, {"a", double(shape.heads)}, {"stats", lt.keptStats}});
        derive(p, activations.quantity, "{zero}", 0, "bytes",
               "freed after the backward: the peak is in the optimizer step (memory.peak_phase), whose temporaries "
               "outweigh every layer's saved tensors and the loss path",
               {{"zero", 0}});
        derive(p, temporaries.quantity, "{P} · {bytes} / {shard}", m.temporaries, "bytes",
               "PyTorch foreach AdamW (torch/optim/adamw.py _multi_tensor_adamw, torchtitan's default): "
               "_foreach_sqrt(exp_avg_sqs) allocates one copy of the second moments for the update",
               {{"P", chosen.memory.params}, {"bytes", in.optimizerTempPerParam}, {"shard", in.shardO}});
        return;
    }
    derive(p, "memory.activations_per_layer", "{s} · {b} · ({per_token} + {per_score} · {a} · {s}) + {stats}", lt.kept,
           "bytes",
           in.eager ? "the kept tensors of memory.activation_tensors: eager PyTorch, what each ATen op's backward saves "
                      "(tools/autograd/derivatives.yaml; torchtitan's Llama block at 9dec370)"
                    : "the kept tensors of memory.activation_tensors: Korthikanti et al. 2022 §4.1 Table 2, generalised "
                      "to GQA, SwiGLU, QK-norm and models without dropout",
           {{"s", sr}, {"b", b}, {"per_token", lt.keptPerToken}, {"per_score", lt.keptPerScore},
            {"a", double(shape.heads)}, {"stats", lt.keptStats}});
    if (chosen.mtpSaved > 0)
        derive(p, "memory.mtp_activations", "{mtp} · ({in_flight} · {per_layer} + {s} · {b} · {h} · 6 · {bytes} / {sp})",
               chosen.mtpSaved, "bytes",
               "multi-token prediction on the last stage (arXiv 2412.19437 §2.2; Megatron-Core multi_token_prediction.py): "
               "per depth one more layer's kept tensors (its input under full recompute) per micro-batch in flight, and "
               "hnorm/enorm inputs, eh_proj's concatenated input and the depth's final norm (6 values per token and "
               "channel); part of {outside} in memory.per_gpu.activations",
               {{"mtp", chosen.mtpLayers}, {"in_flight", inflightChosen}, {"per_layer", lt.kept}, {"s", sr}, {"b", b},
                {"h", double(shape.dModel)}, {"bytes", in.e},
                {"sp", sc.parallel.sequenceParallel ? double(in.tp) : 1.0}});
    if (tr.recompute == Recompute::Full) {
        derive(p, activations.quantity,
               atBackward ? (off ? "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {k} · {layer} + {outside} - {offloaded}"
                                 : "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {k} · {layer} + {outside}")
                          : (off ? "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {outside} - {offloaded}"
                                 : "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {outside}"),
               m.activations, "bytes",
               "CS336 lecture 2 / Chen et al. 2016: checkpoint every k layers, O(L/k + k); boundary = the layer input "
               "(Korthikanti Table 2, full recompute); the k recomputed layers are back at backward_start",
               {{"L_stage", stageLayers}, {"k", double(chosen.k)}, {"boundary", chosen.boundary},
                {"in_flight", inflightChosen}, {"layer", atBackward ? chosen.work : 0.0}, {"outside", chosen.outside},
                {"offloaded", chosen.offloaded}});
        m.checkpointBestK = chosen.bestK;
        derive(p, "memory.checkpoint_best_k", "sqrt({L} · {boundary} / {layer})", chosen.bestK, "layers",
               "minimum of ceil(L/k) · boundary + k · layer (Chen et al. 2016 chain model)",
               {{"L", stageLayers}, {"boundary", chosen.boundary}, {"layer", chosen.work}});
    } else if (atBackward) {
        derive(p, activations.quantity,
               off ? "{L_stage} · {in_flight} · {per_layer} + {outside} + {recomputed} - {offloaded}"
                   : "{L_stage} · {in_flight} · {per_layer} + {outside} + {recomputed}",
               m.activations,
               "bytes",
               "the kept tensors of every layer and micro-batch in flight, plus one layer's tensors the policy dropped, "
               "recomputed for its backward (the peak is at backward_start)",
               {{"L_stage", stageLayers}, {"in_flight", inflightChosen}, {"per_layer", lt.kept},
                {"outside", chosen.outside}, {"recomputed", chosen.working}, {"offloaded", chosen.offloaded}});
    } else {
        derive(p, activations.quantity,
               off ? "{L_stage} · {in_flight} · {per_layer} + {outside} - {offloaded}" : "{L_stage} · {in_flight} · {per_layer} + {outside}",
               m.activations, "bytes",
               chosen.offloaded > 0 ? "Korthikanti et al. 2022 Table 2 per layer; offload.activations: all but two layers' "
                                      "saved tensors on the host (Megatron-Core --cpu-offloading, double-buffered)"
                                    : kSrcKorthikanti,
               {{"L_stage", stageLayers}, {"in_flight", inflightChosen}, {"per_layer", lt.kept}, {"outside", chosen.outside},
                {"offloaded", chosen.offloaded}});
    }
    const double bucket = in.comm.reduceBucket;
    if (m.mostLoadedStage != in.pp - 1)
        derive(p, temporaries.quantity, bucket > 0 ? "{gathered} + {bucket}" : "{gathered}", m.temporaries, "bytes",
               "the logits live on the last pipeline stage; the ledger describes a more loaded stage "
               "(memory.most_loaded_stage); gathered: the parameters ZeRO-3 / FSDP holds all-gathered; bucket: "
               "DeepSpeed's gradient reduction bucket",
               {{"gathered", m.gatheredWeights}, {"bucket", bucket}});
    else if (atBackward)
        derive(p, temporaries.quantity,
               in.reduceScatterBuffers > 0 ? "{gathered} + {reduce_scatter}" : bucket > 0 ? "{gathered} + {bucket}" : "{gathered}",
               m.temporaries, "bytes",
               "the logits and the loss path are freed before the layers' backward: the peak is at backward_start, "
               "where the recomputed layer outweighs them (memory.peak_phase); gathered: the parameters ZeRO-3 / FSDP "
               "holds all-gathered (two layers, torchtitan's root module); bucket: DeepSpeed's gradient reduction "
               "bucket (reduce_bucket_size elements); reduce_scatter: FSDP2's unsharded gradients of a block and its "
               "reduce-scatter input (memory.comm_buffers.reduce_scatter)",
               {{"gathered", m.gatheredWeights}, {"bucket", bucket}, {"reduce_scatter", in.reduceScatterBuffers}});
    else if (chosen.mtpLayers > 0) // each MTP depth holds its own logits and loss path (arXiv 2412.19437 §2.2)
        derive(p, temporaries.quantity,
               bucket > 0 ? "(1 + {mtp}) · {s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered} + {bucket}"
                          : "(1 + {mtp}) · {s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered}",
               m.temporaries,
               "bytes", in.lossSource,
               {{"mtp", chosen.mtpLayers}, {"s", sr}, {"b", b}, {"V", V}, {"bytes_per_logit", in.lossBytesPerLogit},
                {"tp", double(in.tp)}, {"gathered", m.gatheredWeights}, {"bucket", bucket}});
    else
        derive(p, temporaries.quantity,
               bucket > 0 ? "{s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered} + {bucket}"
                          : "{s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered}",
               m.temporaries,
               "bytes", in.lossSource,
               {{"s", sr}, {"b", b}, {"V", V}, {"bytes_per_logit", in.lossBytesPerLogit}, {"tp", double(in.tp)},
                {"gathered", m.gatheredWeights}, {"bucket", bucket}});
}

// What ZeRO-3 / FSDP holds all-gathered at the peak (inside temporaries).
void deriveGathered(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p)
{
    const auto& m = p.memory;
    if (m.gatheredWeights <= 0)
        return;
    if (in.gatherWholeStage) {
        derive(p, "memory.gathered_weights", "{P_stage} · {bytes}", m.gatheredWeights, "bytes",
               "torchtitan with pipeline parallelism: reshard_after_forward=False for every block and the root "
               "(parallelize_llama.py apply_fsdp, 9dec370), so the stage's parameters stay all-gathered through the step",
               {{"P_stage", chosen.memory.params}, {"bytes", in.bw}});
        return;
    }
    const double root = m.mostLoadedStage == 0 || m.mostLoadedStage == in.pp - 1 ? in.gatheredRoot : 0.0;
    derive(p, "memory.gathered_weights", "{layers} · {P_layer} / {tp} · {bytes} + {root}", m.gatheredWeights, "bytes",
           sc.stepTime.framework == Framework::Torchtitan
               ? "FSDP2: the layer in use and the one prefetched, unsharded in the weight dtype; torchtitan keeps the "
                 "root module (embedding, final norm, output layer) unsharded from the forward to the backward"
               : "ZeRO-3 / FSDP full shard: the layer in use and the one prefetched, unsharded in the weight dtype",
           {{"layers", std::min(2.0, in.L)}, {"P_layer", in.L > 0 ? in.layersAll / in.L : 0.0}, {"tp", double(in.tp)},
            {"bytes", in.bw}, {"root", root}});
}

// memory.per_gpu.total's formula, "{weights} + {gradients} + ... + {overhead}", from the bucket table.
const char* totalFormula()
{
    static const std::string formula = [] {
        std::string f;
        for (const auto& bucket : kMemoryBuckets)
            f += (f.empty() ? "{" : " + {") + std::string(bucket.symbol) + "}";
        return f;
    }();
    return formula.c_str();
}

// The runtime overhead, the total against the GPU's capacity, the headroom and the fit.
void deriveOverheadAndTotal(const Scenario& sc, Plan& p)
{
    auto& m = p.memory;
    const GpuSpec& gpu = *sc.gpu;
    const double tensors = tensorBytes(m);
    m.overheadContext = sc.overhead.cudaContextBytes;
    m.overheadWorkspace = sc.overhead.workspaceBytes;
    finishCommBuffers(sc, m.gradients, m.comm);
    m.overheadComm = m.comm.total;
    if (m.comm.given)
        derive(p, "memory.comm_buffers.total", "{given}", m.overheadComm, "bytes", "overhead.comm_buffer_bytes", {{"given", m.overheadComm}});
    else
        derive(p, "memory.comm_buffers.total", "{nccl} + {ddp_buckets}", m.overheadComm, "bytes",
               "NCCL buffers of each communicator (memory.comm_buffers.groups: channels · connections · 9,633,792 B, "
               "NVIDIA/nccl src/include/device.h; NVLS multicast buffers on NVSwitch) and PyTorch DDP's gradient buckets",
               {{"nccl", m.comm.nccl}, {"ddp_buckets", m.comm.ddpBuckets}});
    m.overheadAllocator = sc.overhead.allocatorFraction * tensors;
    // CUDA graphs captured per layer keep the forward's temporaries allocated for the graph's
    // lifetime: "~20%" more activation memory (NVIDIA NeMo docs, features/optimizations/cudagraphs.md:
    // GPT-3 20B, +15 GB), the measured ratio of Megatron-Core's per-layer CudaGraphManager.
    m.overheadCudaGraphs = sc.stepTime.cudaGraphs ? kCudaGraphActivationFraction * m.activations : 0.0;
    m.overhead = m.overheadContext + m.overheadWorkspace + m.overheadComm + m.overheadCudaGraphs + m.overheadAllocator;
    const auto& overhead = memoryBucket(Bucket::Overhead);
    if (m.overheadCudaGraphs > 0)
        derive(p, overhead.quantity, "{context} + {workspace} + {comm} + {graphs} · {activations} + {fraction} · {tensors}",
               m.overhead, "bytes",
               "explicit runtime overhead: CUDA context, cuBLAS/attention workspaces, NCCL buffers, the forward "
               "temporaries CUDA graphs keep (~20% of activations: NVIDIA NeMo docs, cudagraphs.md), caching-allocator "
               "reserve (overhead.* in the scenario)",
               {{"context", m.overheadContext}, {"workspace", m.overheadWorkspace}, {"comm", m.overheadComm},
                {"graphs", kCudaGraphActivationFraction}, {"activations", m.activations},
                {"fraction", sc.overhead.allocatorFraction}, {"tensors", tensors}});
    else
        derive(p, overhead.quantity, overhead.formula, m.overhead, "bytes",
               "explicit runtime overhead: CUDA context, cuBLAS/attention workspaces, NCCL buffers, caching-allocator "
               "reserve (overhead.* in the scenario)",
               {{"context", m.overheadContext}, {"workspace", m.overheadWorkspace}, {"comm", m.overheadComm},
                {"fraction", sc.overhead.allocatorFraction}, {"tensors", tensors}});
    m.total = tensors + m.overhead;
    Derivation& total = derive(p, "memory.per_gpu.total", totalFormula(), m.total, "bytes", "sum of the buckets", {});
    for (const auto& bucket : kMemoryBuckets)
        if (total.termCount < int(total.terms.size()))
            total.terms[std::size_t(total.termCount++)] = {bucket.symbol, bucketBytes(bucket, m)};
    m.capacity = gpu.memoryBytes;
    m.headroom = m.capacity - m.total;
    m.fits = m.total <= m.capacity;
    derive(p, "memory.headroom", "{capacity} - {total}", m.headroom, "bytes", kSourceGpuMemory,
           {{"capacity", m.capacity}, {"total", m.total}});
    if (!m.fits)
        p.warnings.push_back({"does_not_fit", "needs " + gbText(m.total) + " per GPU but the " + gpu.name + " has " +
                                                  gbText(m.capacity) + ": short by " + gbText(-m.headroom)});
}

// Recompute that buys (almost) no memory but costs compute, and a torchtitan "selective" that is not
// torchtitan's.
void warnRecompute(const Scenario& sc, const LedgerInputs& in, Plan& p)
{
    const auto& tr = sc.training;
    if (in.isMlp || tr.recompute == Recompute::None)
        return;
    const LayerTensors& lt = *in.layer;
    const double saved = lt.autograd - lt.kept;
    if (saved < 0.01 * lt.autograd) {
        const std::string what = tr.recompute == Recompute::Modules ? "\"modules\" (" + recomputeModuleNames(tr.recomputeModules) + ")"
                                                                    : "\"" + std::string(toString(tr.recompute)) + "\"";
        p.warnings.push_back({"recompute_saves_nothing",
                              "training.recompute " + what + " keeps " + gbText(lt.kept) + " of " + gbText(lt.autograd) +
                                  " per layer (saves " + gbText(std::max(0.0, saved)) + ")" +
                                  (tr.flashAttention ? ": FlashAttention already keeps no attention scores" : "") +
                                  ", but recomputes its forward; \"none\" is as small and faster, \"full\" or \"op\" save memory"});
    }
    if (tr.recompute == Recompute::Selective && sc.stepTime.framework == Framework::Torchtitan)
        p.warnings.push_back({"selective_is_attention_core",
                              "training.recompute \"selective\" is Korthikanti's attention-core recompute; torchtitan's "
                              "selective activation checkpointing (selective_ac_option 'op', its default) is training.recompute \"op\""});
}

} // namespace

// The most loaded rank is reported: with pipeline parallelism the first stage holds the embedding and
// the most in-flight micro-batches, the last the output layer and the logits.
void estimateMemory(const Scenario& sc, Plan& p)
{
    const LedgerInputs in = ledgerInputs(sc, p);
    setStateRates(in, p.memory, sc.precision.master.has_value());
    // What offload moves off the GPU (core/offload.cpp offloadStates) is stored there at 0 bytes.
    const OffloadedStates off = offloadedStates(sc.offload, in.shardG, in.weightsAreMaster);
    p.memory.weightsRate.offloaded = off.weights;
    p.memory.gradientsRate.offloaded = off.gradients;
    p.memory.masterRate.offloaded = off.master;
    p.memory.optimizerRate.offloaded = off.optimizer;
    const StageTensors chosen = chooseStage(sc, in, p.memory);
    deriveModelStates(sc, in, chosen, p);
    deriveActivations(sc, in, chosen, p);
    deriveGathered(sc, in, chosen, p);
    deriveOverheadAndTotal(sc, p);
    warnRecompute(sc, in, p);
    finishHostMemory(sc, p);
}

} // namespace napkin::core::detail
