// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The memory stage of estimate(): every pipeline stage's tensors, the most loaded rank's ledger with
// the derivation of each bucket, the runtime overhead, the total and the fit.

#include "buckets.h"
#include "kernels.h"
#include "estimate_memory_parts.h"
#include "estimate_stages.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace napkin::core::detail {

namespace {

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
    const LossKernel loss = lossKernelFor(sc.stepTime.framework, sc.stepTime.crossEntropy);
    if (loss == LossKernel::Fused) {
        in.lossBytesPerLogit = in.e;
        in.lossSource = "fused cross-entropy (Transformer Engine's Triton kernel, step_time.cross_entropy fused): the "
                        "logits s·b·V in the activation dtype, their gradient written over them in the forward; "
                        "vocabulary-parallel over TP; on the last pipeline stage only";
    } else if (loss == LossKernel::PyTorchCrossEntropy) {
        in.lossBytesPerLogit = std::max(in.e + 8, 12.0);
        in.lossSource =
            "PyTorch F.cross_entropy on logits.float() (torchtitan train.py): forward logits + fp32 copy + "
            "log_softmax output (e + 8); backward log_softmax output + nll_loss's dense fp32 gradient + "
            "log_softmax's fp32 input gradient (12); the larger, vocabulary-parallel over TP; last stage only";
    } else {
        in.lossBytesPerLogit = in.e + 4;
        in.lossSource =
            "logits s·b·V in the activation dtype + fp32 softmax/cross-entropy (Korthikanti et al. 2022 §4.3), "
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
    // A quantised frozen base is gathered as stored (FSDP-QLoRA shards the packed NF4 storage) and
    // dequantised per GEMM; the adapters and the rest of the layer in the weight dtype.
    const double layerBytes = in.peft && in.L > 0 ? (perLayer - in.quantised / in.L + in.adapters / in.L) * in.bw +
                                                        in.quantised / in.L * in.bq
                                                  : perLayer * in.bw;
    in.gatheredLayers = std::min(2.0, in.L) * layerBytes / double(in.tp);
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

// LoRA / QLoRA: only the adapters train (Hu et al. 2021 §4.1), their optimizer states factored per
// A and B under Adafactor (Shazeer & Stern 2018: r + c per matrix). bitsandbytes' 8-bit optimizer
// stores blockwise int8 states except for tensors under 4,096 elements (fp32): bytes per state value
// averaged over the trained parameters.
void setFinetune(const Scenario& sc, const FinetuneCounts& ft, LedgerInputs& in)
{
    if (sc.finetune.peft()) {
        in.peft = true;
        in.adapters = ft.adapters;
        in.quantised = ft.quantised;
        in.bq = ft.baseBytesPerValue;
        if (sc.optimizer == OptimizerKind::Adafactor && ft.adaptersPerLayer > 0) {
            const double r = double(sc.finetune.loraRank);
            double factored = 0;
            for (const auto& lin : blockLinears(sc.model.shape))
                if (sc.finetune.targets & lin.target)
                    factored += (r + lin.in) + (lin.out + r);
            in.statesPerParam = factored / ft.adaptersPerLayer;
        }
    }
    if (sc.precision.optimizerInt8Blockwise && ft.trainable > 0)
        in.bo = (ft.smallTensorParams * 4 + (ft.trainable - ft.smallTensorParams) * kInt8BlockwiseBytes) / ft.trainable;
}

// A stage's model states with a frozen base: its layers' share of the adapters and of the quantised
// linear weights (split over TP like the layers), everything else of the base in the weight dtype.
void peftStates(const LedgerInputs& in, double stageLayers, double base, StageTensors& st)
{
    StageMemory& mem = st.memory;
    const double share = in.L > 0 ? stageLayers / in.L : 1.0, tp = double(in.tp);
    st.trainable = in.adapters * share / tp;
    st.quantised = in.quantised * share / tp;
    mem.params = base + st.trainable;
    mem.weights = ((base - st.quantised + st.trainable) * in.bw + st.quantised * in.bq + in.scales) / in.shardW;
    st.weightBytesPerParam = mem.params > 0 ? (mem.weights * in.shardW - in.scales) / mem.params : in.bw;
    mem.gradients = st.trainable * in.bg / in.shardG;
    mem.master = st.trainable * in.bm / in.shardO;
    mem.optimizer = st.trainable * in.statesPerParam * in.bo / in.shardO;
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
    // States shard over the ranks that reduce the gradients, data × context parallel (shardGroupSize).
    const double N = double(shardGroupSize(sc, c.dataParallel));
    in.shardW = zero >= 3 ? N : 1;
    in.shardG = zero >= 2 ? N : 1;
    in.shardO = zero >= 1 ? N : 1;
    // Routed experts shard their states over the expert data-parallel group, EDP = tp·cp·dp / (etp·ep)
    // ranks (Megatron-Core's distributed optimizer builds one buffer per group; torchtitan's
    // MOE_SHARDING.md: experts FSDP-sharded over dp_shard·cp·tp / ep): the dense group's N in
    // proportion (N = dp·cp: EDP itself; HYBRID_SHARD: its in-node share).
    const auto& par = sc.parallel;
    in.expertSplit = double(par.ep) * double(par.etp);
    const double NE = std::max(1.0, N * double(lay.tp) / in.expertSplit);
    in.shardWE = zero >= 3 ? NE : 1;
    in.shardGE = zero >= 2 ? NE : 1;
    in.shardOE = zero >= 1 ? NE : 1;
    in.bw = bytesPerValue(pr.weights);
    in.bg = bytesPerValue(pr.gradients);
    in.bm = pr.master ? bytesPerValue(*pr.master) : 0.0;
    in.bo = bytesPerValue(pr.optimizer);
    in.e = bytesPerValue(pr.activations);
    in.s = double(tr.seqLen);
    in.b = double(tr.microBatch);
    in.statesPerParam = sc.optimizer == OptimizerKind::Adafactor ? p.params.adafactorStateElems / in.P
                                                                 : double(optimizerStates(sc.optimizer));
    setFinetune(sc, p.finetune, in);
    // Parameters of a stage: its L/p layers, the embedding (first) and the output layer (last),
    // split over the tensor-parallel group (Narayanan et al. 2021 §3; Megatron places them so).
    const auto& pc = p.params;
    const double pp = double(in.pp);
    in.layersAll = in.isMlp ? in.P : pc.layers;
    // Megatron-Core builds the MTP block on the last stage, beside the output layer it shares.
    const double tail = pc.head + pc.finalNorm + pc.mtp;
    in.headParams = pc.head > 0 ? pc.head : pc.embedding; // tied: the embedding is the output layer
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
        tc.routingImbalance = p.moe.busiestRankLoad;
        const MoeTokenShare share = moeTokenShare(sc.parallel);
        tc.routedRows = share.gather / share.split;
        tc.expertWidthScale = share.widthScale;
        tc.sequenceParallel = sc.parallel.sequenceParallel;
        tc.flash = tr.flashAttention;
        tc.eager = in.eager;
        tc.policy = tr.recompute;
        tc.modules = tr.recomputeModules;
        // Transformer Engine's Linear layers save their inputs quantised; torchtitan's Float8Linear
        // (torchao float8/float8_linear.py matmul_with_hp_or_float8_args: ctx.save_for_backward(input_hp,
        // weight_hp_t)) saves them in high precision and casts again in the backward, so its saved
        // tensors are the 16-bit run's.
        if (pr.recipe != LowPrecisionRecipe::None && pr.lowPrecisionGemms != 0 &&
            sc.stepTime.framework != Framework::Torchtitan) {
            const RecipeInfo& ri = recipeInfo(pr.recipe);
            tc.lowInputs = pr.lowPrecisionGemms;
            tc.lowBytes = ri.elementBytes + ri.activationScales;
            tc.lowName = info(pr.compute).id.data();
        }
        if (sc.finetune.peft()) {
            tc.loraRank = double(sc.finetune.loraRank);
            tc.loraTargets = p.finetune.targetCount;
            tc.loraInputs = p.finetune.targetInputs;
            tc.loraDropout = sc.finetune.loraDropout > 0;
        }
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
    auto rate = [](double values, double bytes, double shard) {
        return StateRate{values, bytes, shard, values * bytes / shard};
    };
    m.weightsRate = rate(weightCopies, in.bw, in.shardW);
    m.gradientsRate = rate(1, in.bg, in.shardG);
    m.masterRate = rate(keepsMaster ? 1 : 0, in.bm, in.shardO);
    m.optimizerRate = rate(in.statesPerParam, in.bo, in.shardO);
}

// Where a stage's peak falls (at the loss, at the backward's start, in the optimizer step) and what
// its activations and temporaries are there.
void settlePeak(const LedgerInputs& in, StageTensors& st);

// inflight < 0: the schedule's own count for this stage (1F1B / interleaved).
StageTensors buildStage(const Scenario& sc, const LedgerInputs& in, std::int64_t index, double inflightGiven = -1)
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
    // The stage's parameters (allParts = P): dense ones split over TP, routed experts over EP · ETP
    // (Megatron-Core: each EP rank holds experts / ep, each split over etp).
    const double stageAll = (tp == 1 && pp == 1) ? in.P : parts * in.P / in.allParts;
    const double experts = in.stageExperts.empty() ? 0.0 : in.stageExperts[std::size_t(index)];
    st.expertParams = experts / in.expertSplit;
    const double dense = (stageAll - experts) / double(tp);
    mem.params = dense + st.expertParams;
    const double E = st.expertParams;
    mem.weights = in.weightsAreMaster ? 0.0 // FSDP2: none stored
                                      : (dense * in.bw + in.scales) / in.shardW + E * in.bwExpert / in.shardWE;
    st.weightBytesPerParam = mem.params > 0 ? (dense * in.bw + E * in.bwExpert) / mem.params : in.bw;
    mem.gradients = (dense / in.shardG + E / in.shardGE) * in.bg;
    mem.master = (dense / in.shardO + E / in.shardOE) * in.bm;
    mem.optimizer = (dense / in.shardO + E / in.shardOE) * in.statesPerParam * in.bo;
    if (in.peft)
        peftStates(in, stageLayers, dense, st);
    // Transformer Engine's FP8 copies of the low-precision GEMMs' weights (core/lowprecision.h).
    if (sc.precision.recipe != LowPrecisionRecipe::None && !in.isMlp) {
        double gemm = (layerParams - experts) / double(tp) + st.expertParams;
        if (last && (sc.precision.lowPrecisionGemms & kLowHead))
            gemm += in.headParams / double(tp);
        st.fp8Cache = lowPrecisionWeightCacheBytes(sc, gemm);
        mem.weights += st.fp8Cache;
        // --fp8-param-gather: those weights are stored in FP8 (the cache's rowwise copy), not in 16 bits.
        if (sc.precision.fp8ParamGather && st.fp8Cache > 0) {
            const double gemmExperts = st.expertParams, gemmDense = gemm - gemmExperts;
            st.fp8Primary = gemmDense * in.bw / in.shardW + gemmExperts * in.bwExpert / in.shardWE;
            mem.weights -= st.fp8Primary;
        }
    }
    if (sc.offload.any())
        offloadStates(sc.offload,
                      {mem.params, in.shardG, in.shardO, dense / in.shardG + E / in.shardGE,
                       dense / in.shardO + E / in.shardOE, st.weightBytesPerParam, in.weightsAreMaster},
                      mem, st.host);
    // 1F1B: stage i holds min(p - i, m) micro-batches at its peak (Narayanan et al. 2021 §2.2.1).
    const double inflight = inflightGiven >= 0 ? inflightGiven
                            : first            ? in.inflightFirst
                                               : double(std::min<std::int64_t>(pp - index, in.accumulationSteps));
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
    st.outside =
        sr * b * h * ((first && shape.dropout ? 1.0 : 0.0) + (last ? finalNorm : 0.0)) / (sp ? double(tp) : 1.0) +
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
    const double gathered =
        in.gatherWholeStage ? mem.params * in.bw : (first || last ? in.gatheredRoot : 0.0) + in.gatheredLayers;
    st.gathered = gathered;
    // The optimizer step: activations freed, parameters sharded again, the update's temporaries.
    st.optimizerTemp =
        sc.offload.optimizer != OffloadTarget::None ? 0.0 : mem.params * in.optimizerTempPerParam / in.shardO;
    settlePeak(in, st);
    return st;
}

void settlePeak(const LedgerInputs& in, StageTensors& st)
{
    StageMemory& mem = st.memory;
    const double gathered = st.gathered;
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
}

// DualPipe (arXiv 2412.19437 §3.2.1 Table 2; deepseek-ai/DualPipe README): rank i holds the modules
// of stage i and of stage pp − 1 − i (examples/example_dualpipe.py loads full_modules[rank] and
// full_modules[pp - 1 - rank]), so its parameters, gradients and optimizer states are the two stages'
// ("2x parameters"); half the micro-batches enter at each end, and the rank keeps min(pp − i, m/2)
// of the first direction and min(i + 1, m/2) of the second in flight: pp + 1 chunks.
StageTensors buildDualPipeRank(const Scenario& sc, const LedgerInputs& in, std::int64_t i)
{
    const std::int64_t pp = in.pp, half = std::max<std::int64_t>(1, in.accumulationSteps / 2), j = pp - 1 - i;
    StageTensors a = buildStage(sc, in, i, double(std::min(pp - i, half)));
    const StageTensors b = buildStage(sc, in, j, double(std::min(i + 1, half)));
    StageMemory& m = a.memory;
    const StageMemory& n = b.memory;
    a.mirror = j;
    a.mirrorParams = n.params;
    m.params += n.params, m.weights += n.weights, m.gradients += n.gradients, m.master += n.master,
        m.optimizer += n.optimizer;
    // Activation terms weighted so that layers · in_flight · per_layer stays the rank's sum.
    const double held = a.layers * m.inFlight + b.layers * n.inFlight;
    m.inFlight += n.inFlight;
    a.layers = m.inFlight > 0 ? held / m.inFlight : a.layers + b.layers;
    a.outside += b.outside, a.saved += b.saved, a.loss += b.loss, a.offloaded += b.offloaded;
    a.mtpLayers += b.mtpLayers, a.mtpSaved += b.mtpSaved, a.expertParams += b.expertParams;
    a.trainable += b.trainable, a.quantised += b.quantised, a.fp8Cache += b.fp8Cache, a.fp8Primary += b.fp8Primary;
    a.working = std::max(a.working, b.working);
    a.gathered += b.gathered;
    a.optimizerTemp += b.optimizerTemp;
    a.weightBytesPerParam =
        m.params > 0 ? (a.weightBytesPerParam * (m.params - n.params) + b.weightBytesPerParam * n.params) / m.params
                     : a.weightBytesPerParam;
    HostMemory& h = a.host;
    const HostMemory& g = b.host;
    h.weights += g.weights, h.gradients += g.gradients, h.master += g.master, h.optimizer += g.optimizer;
    h.activations += g.activations, h.pinnedBuffers += g.pinnedBuffers, h.total += g.total, h.nvme += g.nvme;
    h.nvmeStates += g.nvmeStates, h.activationsPerMicroBatch += g.activationsPerMicroBatch;
    h.pcieBytesPerStep += g.pcieBytesPerStep, h.nvmeBytesPerStep += g.nvmeBytesPerStep;
    settlePeak(in, a);
    return a;
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
        StageTensors st = sc.parallel.schedule == PipelineSchedule::DualPipe && in.pp > 1 ? buildDualPipeRank(sc, in, i)
                                                                                          : buildStage(sc, in, i);
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

// What ZeRO-3 / FSDP holds all-gathered at the peak (inside temporaries).
void deriveGathered(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p)
{
    const auto& m = p.memory;
    if (m.gatheredWeights <= 0)
        return;
    if (in.gatherWholeStage) {
        derive(
            p, "memory.gathered_weights", "{P_stage} · {bytes}", m.gatheredWeights, "bytes",
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
           {{"layers", std::min(2.0, in.L)},
            {"P_layer", in.L > 0 ? in.layersAll / in.L : 0.0},
            {"tp", double(in.tp)},
            {"bytes", in.bw},
            {"root", root}});
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
        derive(p, "memory.comm_buffers.total", "{given}", m.overheadComm, "bytes", "overhead.comm_buffer_bytes",
               {{"given", m.overheadComm}});
    else
        derive(
            p, "memory.comm_buffers.total", "{nccl} + {ddp_buckets}", m.overheadComm, "bytes",
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
        derive(p, overhead.quantity,
               "{context} + {workspace} + {comm} + {graphs} · {activations} + {fraction} · {tensors}", m.overhead,
               "bytes",
               "explicit runtime overhead: CUDA context, cuBLAS/attention workspaces, NCCL buffers, the forward "
               "temporaries CUDA graphs keep (~20% of activations: NVIDIA NeMo docs, cudagraphs.md), caching-allocator "
               "reserve (overhead.* in the scenario)",
               {{"context", m.overheadContext},
                {"workspace", m.overheadWorkspace},
                {"comm", m.overheadComm},
                {"graphs", kCudaGraphActivationFraction},
                {"activations", m.activations},
                {"fraction", sc.overhead.allocatorFraction},
                {"tensors", tensors}});
    else
        derive(p, overhead.quantity, overhead.formula, m.overhead, "bytes",
               "explicit runtime overhead: CUDA context, cuBLAS/attention workspaces, NCCL buffers, caching-allocator "
               "reserve (overhead.* in the scenario)",
               {{"context", m.overheadContext},
                {"workspace", m.overheadWorkspace},
                {"comm", m.overheadComm},
                {"fraction", sc.overhead.allocatorFraction},
                {"tensors", tensors}});
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
    // The line every stage's tensors are held against: the runtime overhead (the most loaded stage's,
    // as the ledger reports it) comes off the top on every GPU.
    m.tensorRoom = std::max(0.0, m.capacity - m.overhead);
    derive(p, "memory.tensor_room", "max(0, {capacity} - {overhead})", m.tensorRoom, "bytes", kSourceGpuMemory,
           {{"capacity", m.capacity}, {"overhead", m.overhead}});
    if (!m.fits)
        p.warnings.push_back({"does_not_fit", "needs " + gbText(m.total) + " per GPU but the " + gpu.name + " has " +
                                                  gbText(m.capacity) + ": short by " + gbText(-m.headroom)});
    if (!m.fits && sc.pagedOptimizer.on && m.optimizerStates > 0) {
        // bitsandbytes paged optimizers (QLoRA §3): the states sit in CUDA unified memory and page to
        // the host when the GPU runs out, and back for each update. Counted as host memory; the plan
        // still does not fit, since the pages move over the host link every step.
        m.host.pagedOptimizer = std::min(-m.headroom, m.optimizerStates);
        p.warnings.push_back(
            {"paged_optimizer",
             "optimizer.paged: " + gbText(m.host.pagedOptimizer) + " of the " + gbText(m.optimizerStates) +
                 " of optimizer states would page out to host memory (CUDA unified memory) and back for "
                 "every update" +
                 (m.host.pagedOptimizer >= -m.headroom ? ", which covers the shortfall at the cost of host-link "
                                                         "traffic each step; it is not counted as a fit"
                                                       : "; that does not cover the shortfall")});
    }
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
        const std::string what = tr.recompute == Recompute::Modules
                                     ? "\"modules\" (" + recomputeModuleNames(tr.recomputeModules) + ")"
                                     : "\"" + std::string(toString(tr.recompute)) + "\"";
        p.warnings.push_back(
            {"recompute_saves_nothing",
             "training.recompute " + what + " keeps " + gbText(lt.kept) + " of " + gbText(lt.autograd) +
                 " per layer (saves " + gbText(std::max(0.0, saved)) + ")" +
                 (tr.flashAttention ? ": FlashAttention already keeps no attention scores" : "") +
                 ", but recomputes its forward; \"none\" is as small and faster, \"full\" or \"op\" save memory"});
    }
    if (tr.recompute == Recompute::Selective && sc.stepTime.framework == Framework::Torchtitan)
        p.warnings.push_back(
            {"selective_is_attention_core",
             "training.recompute \"selective\" is Korthikanti's attention-core recompute; torchtitan's "
             "selective activation checkpointing (selective_ac_option 'op', its default) is training.recompute "
             "\"op\""});
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
    if (chosen.expertParams > 0 && chosen.memory.params > 0) {
        // Experts shard over EDP: each rate's shard becomes the rank's effective one, params / held.
        const double dense = chosen.memory.params - chosen.expertParams, E = chosen.expertParams;
        auto effective = [&](StateRate& r, double shard, double expertShard) {
            r.shard = chosen.memory.params / (dense / shard + E / expertShard);
            r.bytesPerParam = r.valuesPerParam * r.bytesPerValue / r.shard;
        };
        effective(p.memory.gradientsRate, in.shardG, in.shardGE);
        effective(p.memory.masterRate, in.shardO, in.shardOE);
        effective(p.memory.optimizerRate, in.shardO, in.shardOE);
        if (in.bwExpert == in.bw)
            effective(p.memory.weightsRate, in.shardW, in.shardWE);
    }
    if (in.peft && chosen.memory.params > 0) {
        // A frozen base: gradients, master and optimizer states for the adapters' share of the rank's
        // parameters only; the weights at their mean bytes (quantised base, adapters in the weight dtype).
        auto& m = p.memory;
        const double share = chosen.trainable / chosen.memory.params;
        for (StateRate* r : {&m.gradientsRate, &m.masterRate, &m.optimizerRate}) {
            r->valuesPerParam *= share;
            r->bytesPerParam = r->valuesPerParam * r->bytesPerValue / r->shard;
        }
        m.weightsRate.bytesPerValue = chosen.weightBytesPerParam;
        m.weightsRate.bytesPerParam = m.weightsRate.valuesPerParam * chosen.weightBytesPerParam / m.weightsRate.shard;
        m.statesBytesPerParam = chosen.weightBytesPerParam +
                                m.gradientsRate.valuesPerParam * m.gradientsRate.bytesPerValue +
                                m.masterRate.valuesPerParam * m.masterRate.bytesPerValue +
                                m.optimizerRate.valuesPerParam * m.optimizerRate.bytesPerValue;
    }
    if (p.moe.applies) { // the experts' share of the ledger's rank (plan.moe)
        p.moe.expertParamsPerRank = chosen.expertParams;
        p.moe.expertWeightBytesPerRank =
            in.weightsAreMaster || off.weights ? 0.0 : chosen.expertParams * in.bwExpert / in.shardWE;
    }
    deriveModelStates(sc, in, chosen, p);
    deriveActivations(sc, in, chosen, p);
    deriveGathered(sc, in, chosen, p);
    deriveOverheadAndTotal(sc, p);
    warnRecompute(sc, in, p);
    finishHostMemory(sc, p);
}

} // namespace napkin::core::detail
