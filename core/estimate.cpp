#include "estimate.h"

#include "activations.h"
#include "calibration.h"
#include "roofline.h"
#include "steptime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace napkin::core {

const char* const kSourceGpu = "@gpu";
const char* const kSourceGpuMemory = "@gpu-memory";
const char* const kSourceGpuTdp = "@gpu-tdp";

namespace {

constexpr const char* kSrcCs336 = "CS336 lecture 2 (Stanford, Spring 2026)";
constexpr const char* kSrcZero = "Rajbhandari et al. 2019 (ZeRO), §3: stage 1 shards optimizer states, 2 also "
                                 "gradients, 3 also parameters";
constexpr const char* kSrcKorthikanti = "Korthikanti et al. 2022 (arXiv 2205.05198), §4.1 Eq. 1 and Table 2";

Derivation& derive(Plan& p, const char* quantity, const char* formula, double value, const char* unit,
                   const char* source, std::initializer_list<Term> terms)
{
    Derivation& d = p.derivations.emplace_back(); // built in place: no copy of the term array
    d.quantity = quantity;
    d.formula = formula;
    d.value = value;
    d.unit = unit;
    d.source = source;
    for (const auto& t : terms)
        if (d.termCount < int(d.terms.size()))
            d.terms[std::size_t(d.termCount++)] = t;
    return d;
}

std::string gb(double bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
    return buf;
}

} // namespace

std::string HardwareSummary::source() const
{
    if (gpu->calibration) {
        const auto dtype = parseDType(computeDtype);
        return gpu->calibration->peakSource(info(dtype.value_or(DType::Bf16)).peak);
    }
    return gpu->origin + ": " + gpu->sourceFlops;
}

std::string HardwareSummary::bandwidthSource() const
{
    if (gpu->calibration)
        return gpu->calibration->bandwidthSource();
    return gpu->origin + ": " + gpu->sourceBandwidth;
}

std::string HardwareSummary::memorySource() const
{
    // A profile keeps the catalogue's capacity (calibration.h); without a catalogue match the
    // driver's total memory is used.
    if (const auto& cal = gpu->calibration)
        return cal->spec ? cal->spec->origin + ": " + cal->spec->sourceMemory : cal->citation() + ": " + gpu->sourceMemory;
    return gpu->origin + ": " + gpu->sourceMemory;
}

std::string HardwareSummary::tdpSource() const
{
    if (const auto& cal = gpu->calibration)
        return cal->spec ? cal->spec->origin + ": " + cal->spec->sourceTdp : std::string("not published");
    return gpu->origin + ": " + gpu->sourceTdp;
}

FlopsConvention effectiveConvention(const Scenario& sc)
{
    if (sc.flops != FlopsConvention::Auto)
        return sc.flops;
    return sc.model.kind == ModelKind::Transformer ? FlopsConvention::Palm : FlopsConvention::SixPT;
}

Plan estimate(const Scenario& sc)
{
    Plan p;
    p.derivations.reserve(32);
    p.ops.reserve(40);
    p.scenarioName = sc.name;
    p.modelName = sc.model.name;
    const auto& tr = sc.training;
    const auto& pr = sc.precision;
    const bool isMlp = sc.model.kind == ModelKind::Mlp;
    const TransformerShape& shape = sc.model.shape;

    // ---- Hardware --------------------------------------------------------------------------
    auto& hw = p.hardware;
    const GpuSpec& gpu = *sc.gpu;
    hw.gpu = sc.gpu;
    hw.computeDtype = info(pr.compute).id.data();
    hw.peakFlops = gpu.peak(info(pr.compute).peak);
    hw.vectorFlops = gpu.peak(PeakColumn::Fp32);
    hw.bandwidth = gpu.bandwidthBytesPerSecond;
    hw.ridge = hw.bandwidth > 0 ? hw.peakFlops / hw.bandwidth : 0;
    hw.memoryBytes = gpu.memoryBytes;
    hw.tdpWatts = gpu.tdpWatts;
    derive(p, "hardware.peak_flops", "{C}", hw.peakFlops, "FLOP/s", kSourceGpu, {{"C", hw.peakFlops}});
    derive(p, "hardware.ridge", "{C} / {beta}", hw.ridge, "FLOP/byte",
           "CS336 lecture 2: accelerator intensity = peak FLOP/s / memory bandwidth",
           {{"C", hw.peakFlops}, {"beta", hw.bandwidth}});

    // ---- Parameters ------------------------------------------------------------------------
    p.params = countParams(sc.model);
    const double P = p.params.total;
    if (isMlp)
        derive(p, "params.total", "{D} · {D} · {L} + {head}", P, "parameters",
               "CS336 lecture 2: D^2 L + D for the toy deep linear model",
               {{"D", double(sc.model.mlp.width)}, {"L", double(sc.model.mlp.layers)}, {"head", p.params.head}});
    else if (p.params.derivedShape)
        derive(p, "params.total", "{P}", P, "parameters", "as given in the scenario (model.params)", {{"P", P}});
    else
        derive(p, "params.total", "{L} · {per_layer} + {embedding} + {positions} + {head} + {final_norm}", P,
               "parameters",
               "exact count from the architecture (Touvron et al. 2023 layout; nanoGPT for GPT-2/3 biases and positions)",
               {{"L", double(shape.layers)}, {"per_layer", p.params.perLayer}, {"embedding", p.params.embedding},
                {"positions", p.params.positional}, {"head", p.params.head}, {"final_norm", p.params.finalNorm}});

    // ---- Batch -----------------------------------------------------------------------------
    auto& c = p.compute;
    const auto& par = sc.parallel;
    const std::int64_t tp = std::max(1, par.tp), pp = std::max(1, par.pp), cp = std::max(1, par.cp);
    const std::int64_t vStages = std::max(1, par.virtualStages);
    // Megatron-LM layout: GPUs = TP · PP · CP · DP (resolved and checked when the scenario is read).
    const std::int64_t dp = par.dp > 0 ? par.dp : std::max<std::int64_t>(1, sc.cluster.gpus / (tp * pp * cp));
    c.dataParallel = dp;
    const std::int64_t perStep = tr.microBatch * dp;
    c.accumulationSteps = perStep > 0 ? std::max<std::int64_t>(1, (tr.globalBatch + perStep - 1) / perStep) : 1;
    c.effectiveGlobalBatch = c.accumulationSteps * perStep;
    const double seq = isMlp ? 1.0 : double(tr.seqLen);
    c.tokensPerStep = double(c.effectiveGlobalBatch) * seq;
    c.steps = tr.tokens / c.tokensPerStep;
    derive(p, "compute.accumulation_steps", "ceil({global_batch} / ({micro_batch} · {dp}))",
           double(c.accumulationSteps), "steps", "global batch = micro-batch × accumulation × data parallel",
           {{"global_batch", double(tr.globalBatch)}, {"micro_batch", double(tr.microBatch)}, {"dp", double(dp)}});
    if (c.effectiveGlobalBatch != tr.globalBatch) {
        p.warnings.push_back({"batch_not_divisible",
                              "training.global_batch " + std::to_string(tr.globalBatch) +
                                  " is not a multiple of micro_batch × data-parallel GPUs = " + std::to_string(perStep) +
                                  "; the plan uses " + std::to_string(c.effectiveGlobalBatch) + " (" +
                                  std::to_string(c.accumulationSteps) + " accumulation steps)"});
    }
    if (pp > 1) {
        // Narayanan et al. 2021 §2.2: pipeline bubble (p - 1) / m for 1F1B, (p - 1) / (v · m) interleaved.
        p.memory.bubbleFraction = double(pp - 1) / (double(vStages) * double(c.accumulationSteps));
        derive(p, "parallel.bubble_fraction", "({p} - 1) / ({v} · {m})", p.memory.bubbleFraction, "",
               "Narayanan et al. 2021 (Megatron-LM) §2.2: pipeline bubble of 1F1B (v = 1) and interleaved schedules",
               {{"p", double(pp)}, {"v", double(vStages)}, {"m", double(c.accumulationSteps)}});
    }

    // ---- Memory, stage by stage ----------------------------------------------------------------
    // The most loaded rank is reported: with pipeline parallelism the first stage holds the
    // embedding and the most in-flight micro-batches, the last the output layer and the logits.
    auto& m = p.memory;
    const int zero = effectiveZeroStage(sc);
    const double N = double(shardGroupSize(sc, dp));
    const double shardW = zero >= 3 ? N : 1, shardG = zero >= 2 ? N : 1, shardO = zero >= 1 ? N : 1;
    const double bw = bytesPerValue(pr.weights), bg = bytesPerValue(pr.gradients);
    const double bm = pr.master ? bytesPerValue(*pr.master) : 0.0, bo = bytesPerValue(pr.optimizer);
    const double e = bytesPerValue(pr.activations);
    const double s = double(tr.seqLen), b = double(tr.microBatch);
    const double statesPerParam = sc.optimizer == OptimizerKind::Adafactor ? p.params.adafactorStateElems / P
                                                                           : double(optimizerStates(sc.optimizer));
    m.statesBytesPerParam = bw + bg + bm + statesPerParam * bo;
    auto rate = [](double values, double bytes, double shard) { return StateRate{values, bytes, shard, values * bytes / shard}; };
    m.weightsRate = rate(1, bw, shardW);
    m.gradientsRate = rate(1, bg, shardG);
    m.masterRate = rate(pr.master ? 1 : 0, bm, shardO);
    m.optimizerRate = rate(statesPerParam, bo, shardO);
    // Parameters of a stage: its L/p layers, the embedding (first) and the output layer (last),
    // split over the tensor-parallel group (Narayanan et al. 2021 §3; Megatron places them so).
    const auto& pc = p.params;
    const double layersAll = isMlp ? P : pc.layers;
    const double firstParts = layersAll / double(pp) + pc.embedding + pc.positional + (pp == 1 ? pc.head + pc.finalNorm : 0);
    const double lastParts = layersAll / double(pp) + pc.head + pc.finalNorm;
    const double allParts = layersAll + pc.embedding + pc.positional + pc.head + pc.finalNorm;
    const double L = isMlp ? double(sc.model.mlp.layers) : double(shape.layers);
    const double stageLayers = L / double(pp);
    // 1F1B keeps min(p, m) micro-batches in flight on the first stage, one on the last; the
    // interleaved schedule adds (p - 1) / (p · v) (Korthikanti et al. 2022 §4.2.3).
    const double inflightFirst = double(std::min<std::int64_t>(pp, c.accumulationSteps)) *
                                 (vStages > 1 ? 1.0 + double(pp - 1) / double(pp * vStages) : 1.0);

    struct Stage {
        double params = 0, weights = 0, gradients = 0, master = 0, optimizer = 0, activations = 0, temporaries = 0;
        double perLayer = 0;
        std::int64_t k = 0;
        double bestK = 0;
        LayerActivationTerms terms;
        double outside = 0, boundary = 0, work = 0;
    };
    auto buildStage = [&](std::int64_t index) {
        const bool first = index == 0, last = index == pp - 1;
        Stage st;
        const double parts = first ? firstParts : (last ? lastParts : layersAll / double(pp));
        const double share = (tp == 1 && pp == 1) ? 1.0 : parts / allParts / double(tp);
        st.params = P * share;
        const double scales = info(pr.weights).perTensorScaleBytes * pc.matrices / double(pp);
        st.weights = (st.params * bw + scales) / shardW;
        st.gradients = st.params * bg / shardG;
        st.master = st.params * bm / shardO;
        st.optimizer = st.params * statesPerParam * bo / shardO;
        // 1F1B: stage i holds min(p - i, m) micro-batches at its peak (Narayanan et al. 2021 §2.2.1).
        const double inflight = first ? inflightFirst : double(std::min<std::int64_t>(pp - index, c.accumulationSteps));
        if (isMlp) {
            const double D = double(sc.model.mlp.width);
            st.perLayer = b * D * e;
            if (tr.recompute == Recompute::Full) {
                st.k = tr.checkpointEvery > 0 ? tr.checkpointEvery : std::max<std::int64_t>(1, std::llround(std::sqrt(L)));
                st.activations = (std::ceil(L / double(st.k)) + double(st.k)) * b * D * e;
            } else {
                st.activations = b * D * L * e;
            }
            return st;
        }
        const double h = double(shape.dModel), V = double(shape.vocab), sr = s / double(cp);
        const bool sp = par.sequenceParallel;
        // Outside the layers: embedding dropout mask (sbh) on the first stage, final norm input and
        // output-layer input (2 · e · sbh) on the last (Korthikanti §4.3); split by SP and CP.
        st.outside = sr * b * h * ((first && shape.dropout ? 1.0 : 0.0) + (last ? 2 * e : 0.0)) / (sp ? double(tp) : 1.0);
        if (tr.recompute == Recompute::Full) {
            st.k = tr.checkpointEvery > 0 ? tr.checkpointEvery : std::max<std::int64_t>(1, std::llround(std::sqrt(L)));
            const std::int64_t k = std::min<std::int64_t>(st.k, std::max<std::int64_t>(1, std::llround(stageLayers)));
            const auto kept = layerActivations(shape, sr, b, e, Recompute::Full, tr.flashAttention, double(tp), sp);
            const auto work = layerActivations(shape, sr, b, e, Recompute::None, tr.flashAttention, double(tp), sp);
            st.boundary = kept.total;
            st.work = work.total;
            st.perLayer = kept.total;
            // Chain model (Chen et al. 2016; CS336 lecture 2): L/k saved boundaries per micro-batch in
            // flight + one segment of k layers re-materialised during its backward: O(L/k + k).
            st.activations = std::ceil(stageLayers / double(k)) * kept.total * inflight + double(k) * work.total + st.outside;
            st.bestK = std::clamp(std::sqrt(stageLayers * kept.total / work.total), 1.0, std::max(1.0, stageLayers));
        } else {
            st.terms = layerActivations(shape, sr, b, e, tr.recompute, tr.flashAttention, double(tp), sp);
            st.perLayer = st.terms.total;
            st.activations = stageLayers * st.terms.total * inflight + st.outside;
        }
        // Logits on the last stage, vocabulary-parallel over TP (Megatron's parallel cross-entropy):
        // s·b·V in the activation dtype + the fp32 cross-entropy path (Korthikanti §4.3: 4sbv).
        st.temporaries = last ? sr * b * V * (e + 4) / double(tp) : 0.0;
        return st;
    };
    auto stageTensors = [](const Stage& st) {
        return st.weights + st.gradients + st.master + st.optimizer + st.activations + st.temporaries;
    };
    // Every stage (cheap arithmetic); the ledger is the most loaded one's. Middle stages hold fewer
    // micro-batches than the first and no embedding or logits, so stage 0 or p - 1 wins, but each is
    // listed for the per-stage ledger.
    Stage chosen;
    double chosenTensors = -1;
    m.perStage.clear();
    m.perStage.reserve(std::size_t(std::min<std::int64_t>(pp, 4096)));
    for (std::int64_t i = 0; i < pp; ++i) {
        const Stage st = buildStage(i);
        const double tensors = stageTensors(st);
        if (int(m.perStage.size()) < 4096)
            m.perStage.push_back({st.params, st.weights, st.gradients, st.master, st.optimizer, st.activations,
                                  st.temporaries, tensors,
                                  i == 0 ? inflightFirst : double(std::min<std::int64_t>(pp - i, c.accumulationSteps))});
        if (tensors > chosenTensors) {
            chosen = st;
            chosenTensors = tensors;
            m.mostLoadedStage = i;
        }
    }
    m.paramsPerRank = chosen.params;
    if (tp > 1 || pp > 1)
        derive(p, "memory.params_per_rank", "{P} · {stage_share} / {tp}", chosen.params, "parameters",
               "Narayanan et al. 2021: layers split over p pipeline stages (embedding first, output layer last), "
               "each stage's matrices over t tensor-parallel ranks",
               {{"P", P}, {"stage_share", chosen.params * double(tp) / P}, {"tp", double(tp)}});
    const double Pr = chosen.params;
    m.weights = chosen.weights;
    derive(p, "memory.per_gpu.weights", "({P} · {bytes} + {scales}) / {shard}", m.weights, "bytes", kSrcZero,
           {{"P", Pr}, {"bytes", bw}, {"scales", info(pr.weights).perTensorScaleBytes * pc.matrices / double(pp)}, {"shard", shardW}});
    m.gradients = chosen.gradients;
    derive(p, "memory.per_gpu.gradients", "{P} · {bytes} / {shard}", m.gradients, "bytes", kSrcZero,
           {{"P", Pr}, {"bytes", bg}, {"shard", shardG}});
    m.masterWeights = chosen.master;
    derive(p, "memory.per_gpu.master_weights", "{P} · {bytes} / {shard}", m.masterWeights, "bytes",
           "ZeRO §3.1: fp32 master copy of the parameters (0 bytes when the plan keeps none)",
           {{"P", Pr}, {"bytes", bm}, {"shard", shardO}});
    m.optimizerStates = chosen.optimizer;
    if (sc.optimizer == OptimizerKind::Adafactor)
        derive(p, "memory.per_gpu.optimizer_states", "{factored_elements} · {bytes} / {shard}", m.optimizerStates,
               "bytes", "Shazeer & Stern 2018 (Adafactor): row + column second-moment factors per matrix, no momentum",
               {{"factored_elements", Pr * statesPerParam}, {"bytes", bo}, {"shard", shardO}});
    else
        derive(p, "memory.per_gpu.optimizer_states", "{P} · {states} · {bytes} / {shard}", m.optimizerStates, "bytes",
               "CS336 lecture 2 optimizer lattice: SGD 0, momentum/AdaGrad/RMSProp/Lion/Muon 1, Adam(W) 2 states",
               {{"P", Pr}, {"states", statesPerParam}, {"bytes", bo}, {"shard", shardO}});

    m.activations = chosen.activations;
    m.activationsPerLayer = chosen.perLayer;
    m.checkpointEvery = chosen.k;
    m.temporaries = chosen.temporaries;
    const bool mostLoadedIsFirst = m.mostLoadedStage == 0;
    const double inflightChosen = mostLoadedIsFirst ? inflightFirst : 1.0;
    if (isMlp) {
        const double D = double(sc.model.mlp.width);
        if (tr.recompute == Recompute::Full)
            derive(p, "memory.per_gpu.activations", "(ceil({L} / {k}) + {k}) · {B} · {D} · {bytes}", m.activations,
                   "bytes", "CS336 lecture 2: checkpoint every k layers of a chain, O(L/k + k), best near k = sqrt(L)",
                   {{"L", L}, {"k", double(chosen.k)}, {"B", b}, {"D", D}, {"bytes", e}});
        else
            derive(p, "memory.per_gpu.activations", "{B} · {D} · {L} · {bytes}", m.activations, "bytes",
                   "CS336 lecture 2: activations B·D·L for the deep linear model",
                   {{"B", b}, {"D", D}, {"L", L}, {"bytes", e}});
        derive(p, "memory.per_gpu.temporaries", "{zero}", 0, "bytes", "the toy model has no logits", {{"zero", 0}});
    } else {
        const double V = double(shape.vocab), sr = s / double(cp);
        if (tr.recompute == Recompute::Full) {
            derive(p, "memory.per_gpu.activations",
                   "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {k} · {layer} + {outside}", m.activations, "bytes",
                   "CS336 lecture 2 / Chen et al. 2016: checkpoint every k layers, O(L/k + k); boundary = 2sbh "
                   "(Korthikanti Table 2, full recompute)",
                   {{"L_stage", stageLayers}, {"k", double(chosen.k)}, {"boundary", chosen.boundary},
                    {"in_flight", inflightChosen}, {"layer", chosen.work}, {"outside", chosen.outside}});
            m.checkpointBestK = chosen.bestK;
            derive(p, "memory.checkpoint_best_k", "sqrt({L} · {boundary} / {layer})", chosen.bestK, "layers",
                   "minimum of ceil(L/k) · boundary + k · layer (Chen et al. 2016 chain model)",
                   {{"L", stageLayers}, {"boundary", chosen.boundary}, {"layer", chosen.work}});
        } else {
            derive(p, "memory.per_gpu.activations",
                   "{L_stage} · {in_flight} · ({s} · {b} · ({per_token} + {per_score} · {a} · {s}) + {stats}) + {outside}",
                   m.activations, "bytes", kSrcKorthikanti,
                   {{"L_stage", stageLayers}, {"in_flight", inflightChosen}, {"s", sr}, {"b", b},
                    {"per_token", chosen.terms.perTokenBytes}, {"per_score", chosen.terms.perScoreBytes},
                    {"a", double(shape.heads)}, {"stats", chosen.terms.flashStatsBytes}, {"outside", chosen.outside}});
        }
        if (m.mostLoadedStage != pp - 1)
            derive(p, "memory.per_gpu.temporaries", "{zero}", 0, "bytes",
                   "the logits live on the last pipeline stage; the ledger describes a more loaded stage "
                   "(memory.most_loaded_stage)",
                   {{"zero", 0}});
        else
            derive(p, "memory.per_gpu.temporaries", "{s} · {b} · {V} · ({bytes} + 4) / {tp}", m.temporaries, "bytes",
                   "logits s·b·V in the activation dtype + fp32 softmax/cross-entropy (Korthikanti et al. 2022 §4.3), "
                   "vocabulary-parallel over TP; on the last pipeline stage only",
                   {{"s", sr}, {"b", b}, {"V", V}, {"bytes", e}, {"tp", double(tp)}});
    }

    // ---- Memory: overhead and total ----------------------------------------------------------
    const double tensors = m.weights + m.gradients + m.masterWeights + m.optimizerStates + m.activations + m.temporaries;
    m.overheadContext = sc.overhead.cudaContextBytes;
    m.overheadWorkspace = sc.overhead.workspaceBytes;
    m.overheadComm = sc.overhead.commBufferBytes ? *sc.overhead.commBufferBytes
                                                 : (sc.cluster.gpus > 1 ? kDefaultCommBufferBytes : 0.0);
    m.overheadAllocator = sc.overhead.allocatorFraction * tensors;
    m.overhead = m.overheadContext + m.overheadWorkspace + m.overheadComm + m.overheadAllocator;
    derive(p, "memory.per_gpu.overhead", "{context} + {workspace} + {comm} + {fraction} · {tensors}", m.overhead,
           "bytes",
           "explicit runtime overhead: CUDA context, cuBLAS/attention workspaces, NCCL buffers, caching-allocator "
           "reserve (overhead.* in the scenario)",
           {{"context", m.overheadContext}, {"workspace", m.overheadWorkspace}, {"comm", m.overheadComm},
            {"fraction", sc.overhead.allocatorFraction}, {"tensors", tensors}});
    m.total = tensors + m.overhead;
    derive(p, "memory.per_gpu.total", "{weights} + {gradients} + {master} + {optimizer} + {activations} + {temporaries} + {overhead}",
           m.total, "bytes", "sum of the buckets",
           {{"weights", m.weights}, {"gradients", m.gradients}, {"master", m.masterWeights},
            {"optimizer", m.optimizerStates}, {"activations", m.activations}, {"temporaries", m.temporaries},
            {"overhead", m.overhead}});
    m.capacity = gpu.memoryBytes;
    m.headroom = m.capacity - m.total;
    m.fits = m.total <= m.capacity;
    derive(p, "memory.headroom", "{capacity} - {total}", m.headroom, "bytes", kSourceGpuMemory,
           {{"capacity", m.capacity}, {"total", m.total}});
    if (!m.fits)
        p.warnings.push_back({"does_not_fit", "needs " + gb(m.total) + " per GPU but the " + gpu.name + " has " +
                                                  gb(m.capacity) + ": short by " + gb(-m.headroom)});

    // ---- Compute -----------------------------------------------------------------------------
    const auto conv = effectiveConvention(sc);
    c.convention = isMlp ? toString(FlopsConvention::SixPT) : toString(conv);
    double forwardRecompute = 0; // extra forward FLOPs per token from recomputation
    if (conv == FlopsConvention::SixPT || isMlp) {
        c.flopsPerToken = 6 * P;
        derive(p, "compute.flops_per_token", "6 · {P}", c.flopsPerToken, "FLOP",
               "Kaplan et al. 2020; CS336 lecture 2: forward 2P + backward 4P per token", {{"P", P}});
        forwardRecompute = 2 * P;
    } else if (conv == FlopsConvention::Palm) {
        // PaLM (Chowdhery et al. 2022) App. B: 6N + 12 L H Q T; N excludes learned position tables
        // (nanoGPT estimate_mfu).
        const double Nn = P - p.params.positional;
        const double L = double(shape.layers), H = double(shape.heads), Q = double(shape.headDim);
        c.flopsPerToken = 6 * Nn + 12 * L * H * Q * s;
        derive(p, "compute.flops_per_token", "6 · {N} + 12 · {L} · {H} · {Q} · {T}", c.flopsPerToken, "FLOP",
               "Chowdhery et al. 2022 (PaLM), Appendix B; no causal-mask halving",
               {{"N", Nn}, {"L", L}, {"H", H}, {"Q", Q}, {"T", s}});
        forwardRecompute = 2 * Nn + 4 * L * H * Q * s;
    } else {
        // Narayanan et al. 2021 eq. 3 without recompute, per token: 72 l h² (1 + s/6h + V/12hl).
        const double l = double(shape.layers), h = double(shape.dModel), V = double(shape.vocab);
        c.flopsPerToken = 72 * l * h * h * (1 + s / (6 * h) + V / (12 * h * l));
        derive(p, "compute.flops_per_token", "72 · {l} · {h} · {h} · (1 + {s} / (6 · {h}) + {V} / (12 · {h} · {l}))",
               c.flopsPerToken, "FLOP", "Narayanan et al. 2021 (Megatron-LM), eq. 3 without recomputation",
               {{"l", l}, {"h", h}, {"s", s}, {"V", V}});
        forwardRecompute = 24 * l * h * h * (1 + s / (6 * h)); // eq. 3 with recompute adds one forward (no logits)
    }
    c.trainingFlops = c.flopsPerToken * tr.tokens;
    derive(p, "compute.training_flops", "{flops_per_token} · {T}", c.trainingFlops, "FLOP", kSrcCs336,
           {{"flops_per_token", c.flopsPerToken}, {"T", tr.tokens}});
    c.flopsPerStep = c.flopsPerToken * c.tokensPerStep;
    derive(p, "compute.flops_per_step", "{flops_per_token} · {tokens_per_step}", c.flopsPerStep, "FLOP", kSrcCs336,
           {{"flops_per_token", c.flopsPerToken}, {"tokens_per_step", c.tokensPerStep}});
    double recomputePerToken = 0;
    if (tr.recompute == Recompute::Full)
        recomputePerToken = forwardRecompute;
    else if (tr.recompute == Recompute::Selective && !isMlp)
        // Selective recompute re-runs QK^T and PV: 4 L H Q T per token (Korthikanti §5).
        recomputePerToken = 4 * double(shape.layers) * double(shape.heads) * double(shape.headDim) * s;
    c.hardwareFlops = (c.flopsPerToken + recomputePerToken) * tr.tokens;
    derive(p, "compute.hardware_flops", "({flops_per_token} + {recompute_per_token}) · {T}", c.hardwareFlops, "FLOP",
           "Korthikanti et al. 2022: hardware FLOPs add the recomputed forward work",
           {{"flops_per_token", c.flopsPerToken}, {"recompute_per_token", recomputePerToken}, {"T", tr.tokens}});

    // ---- Roofline of one layer ------------------------------------------------------------------
    const double ew = bytesPerValue(pr.weights), eg = bytesPerValue(pr.gradients);
    if (isMlp) {
        const double D = double(sc.model.mlp.width), L = double(sc.model.mlp.layers);
        p.ops.push_back(makeOp("linear", Pass::Forward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
        p.ops.push_back(makeOp("linear.dgrad", Pass::Backward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
        p.ops.push_back(makeOp("linear.wgrad", Pass::Backward, OpUnit::Tensor, gemmCost(b, D, D, e), hw, L));
    } else {
        // One rank's share: its tensor-parallel shard of the matrices, s / cp queries against all s keys.
        appendLayerOps(p.ops, tensorParallelShard(shape, int(tp)), s / double(cp), b, e, ew, eg, tr.flashAttention, hw, s);
        if (par.sequenceParallel && tp > 1) {
            // Sequence parallelism splits the norms, residuals and dropouts over the TP ranks
            // (Korthikanti et al. 2022 §4.2.2).
            for (auto& op : p.ops) {
                const std::string_view name = op.name;
                if (name.rfind("norm_", 0) == 0 || name.rfind("residual_", 0) == 0)
                    op = makeOp(op.name, op.pass, op.unit, {op.flops / double(tp), op.bytes / double(tp)}, hw, op.count);
            }
        }
        // Roofline bound on MFU: model FLOPs of one micro-batch over the ideal time of its ops.
        double ideal = 0;
        for (const auto& op : p.ops)
            ideal += op.timeSeconds * op.count;
        const double microFlops = c.flopsPerToken * s * b / double(tp * cp); // this rank's share
        const double rooflineMfu = ideal > 0 ? microFlops / (ideal * hw.peakFlops) : 0;
        derive(p, "roofline.max_mfu", "{model_flops} / ({ideal_time} · {C})", rooflineMfu, "",
               "roofline: each op at max(F / C, Q / beta), no overlap between ops",
               {{"model_flops", microFlops}, {"ideal_time", ideal}, {"C", hw.peakFlops}});
        if (sc.stepTime.mode == TimeMode::Mfu && sc.cluster.mfu > rooflineMfu) {
            char buf[160];
            std::snprintf(buf, sizeof buf,
                          "cluster.mfu %.2f is above the %.2f that the roofline allows for this layer at micro-batch %lld",
                          sc.cluster.mfu, rooflineMfu, static_cast<long long>(tr.microBatch));
            p.warnings.push_back({"mfu_above_roofline", buf});
        }
    }
    // ---- Time and cost -------------------------------------------------------------------------
    auto& t = p.time;
    const double G = double(sc.cluster.gpus);
    p.stepTime = predictStepTime(sc, p);
    const auto& st = p.stepTime;
    if (sc.stepTime.mode == TimeMode::Predicted && st.valid) {
        t.mode = "predicted";
        t.stepSeconds = st.step;
        derive(p, "time.step_seconds",
               "{compute} + {recompute} + {tp_comm} + {cp_comm} + {pp_comm} + {bubble} + {dp_comm} + {optimizer}",
               t.stepSeconds, "s",
               "predicted: per-op roofline times of one rank + exposed communication over the interconnect + the "
               "pipeline bubble (core/steptime.h; Narayanan et al. 2021)",
               {{"compute", st.compute}, {"recompute", st.recompute}, {"tp_comm", st.tpComm}, {"cp_comm", st.cpComm},
                {"pp_comm", st.ppComm}, {"bubble", st.bubble}, {"dp_comm", st.dpComm}, {"optimizer", st.optimizer}});
        t.seconds = c.steps * t.stepSeconds;
        derive(p, "time.seconds", "{steps} · {step_seconds}", t.seconds, "s", "predicted step time × steps",
               {{"steps", c.steps}, {"step_seconds", t.stepSeconds}});
        t.mfu = st.mfu;
        derive(p, "time.mfu", "{flops_per_step} / ({G} · {C} · {step_seconds})", t.mfu, "",
               "Chowdhery et al. 2022 App. B: MFU = model FLOP/s achieved / peak FLOP/s",
               {{"flops_per_step", c.flopsPerStep}, {"G", G}, {"C", hw.peakFlops}, {"step_seconds", t.stepSeconds}});
        t.hfu = st.hfu;
        derive(p, "time.hfu", "{MFU} · {hardware_flops} / {model_flops}", t.hfu, "",
               "Chowdhery et al. 2022 App. B; Korthikanti et al. 2022: HFU counts recomputation",
               {{"MFU", t.mfu}, {"hardware_flops", c.hardwareFlops}, {"model_flops", c.trainingFlops}});
    } else {
        t.mfu = sc.cluster.mfu;
        t.seconds = c.trainingFlops / (G * hw.peakFlops * t.mfu);
        derive(p, "time.seconds", "{F} / ({G} · {C} · {MFU})", t.seconds, "s",
               "CS336 lecture 2: time = FLOPs / (GPUs × dense peak × MFU)",
               {{"F", c.trainingFlops}, {"G", G}, {"C", hw.peakFlops}, {"MFU", t.mfu}});
        t.hfu = t.mfu * ((c.flopsPerToken + recomputePerToken) / c.flopsPerToken); // exactly MFU without recompute
        derive(p, "time.hfu", "{MFU} · {hardware_flops} / {model_flops}", t.hfu, "",
               "Chowdhery et al. 2022 App. B; Korthikanti et al. 2022: HFU counts recomputation",
               {{"MFU", t.mfu}, {"hardware_flops", c.hardwareFlops}, {"model_flops", c.trainingFlops}});
        t.stepSeconds = c.flopsPerStep / (G * hw.peakFlops * t.mfu);
        derive(p, "time.step_seconds", "{flops_per_step} / ({G} · {C} · {MFU})", t.stepSeconds, "s", kSrcCs336,
               {{"flops_per_step", c.flopsPerStep}, {"G", G}, {"C", hw.peakFlops}, {"MFU", t.mfu}});
    }
    t.days = t.seconds / 86400.0;
    derive(p, "time.days", "{seconds} / 86400", t.days, "days", kSrcCs336, {{"seconds", t.seconds}});
    t.gpuHours = t.seconds * G / 3600.0;
    derive(p, "time.gpu_hours", "{seconds} · {G} / 3600", t.gpuHours, "GPU-hours", "definition",
           {{"seconds", t.seconds}, {"G", G}});
    t.tokensPerSecond = c.tokensPerStep / t.stepSeconds;
    p.cost.usd = t.gpuHours * sc.cluster.pricePerGpuHour;
    derive(p, "cost.usd", "{gpu_hours} · {price}", p.cost.usd, "USD", "cluster.price_per_gpu_hour",
           {{"gpu_hours", t.gpuHours}, {"price", sc.cluster.pricePerGpuHour}});
    p.cost.energyKwh = t.gpuHours * hw.tdpWatts / 1000.0;
    derive(p, "cost.energy_kwh", "{gpu_hours} · {tdp} / 1000", p.cost.energyKwh, "kWh", kSourceGpuTdp,
           {{"gpu_hours", t.gpuHours}, {"tdp", hw.tdpWatts}});
    if (gpu.calibration)
        p.warnings.insert(p.warnings.end(), gpu.calibration->warnings.begin(), gpu.calibration->warnings.end());
    if (hw.tdpWatts <= 0)
        p.warnings.push_back({"no_tdp", gpu.name + " has no published TDP: energy is not estimated"});
    if (c.steps < 1)
        p.warnings.push_back({"fewer_tokens_than_a_step",
                              "training.tokens is less than one global batch of tokens: the plan has under one step"});

    if (p.params.derivedShape)
        p.warnings.push_back({"derived_shape", "activations and the roofline use a derived shape: " + sc.model.shapeNote});
    return p;
}

} // namespace napkin::core
