// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "steptime.h"

#include "steptime_parts.h"

#include "comm_buffers.h"

#include "offload.h"

#include "framework.h"
#include "lowprecision.h"
#include "roofline.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace napkin::core {

using steptime_detail::contextParallelTraffic;
using steptime_detail::CpTraffic;
using steptime_detail::dataParallelTraffic;
using steptime_detail::ExpertTraffic;
using steptime_detail::expertTraffic;
using steptime_detail::groupLink;
using steptime_detail::recomputeMoe;
using steptime_detail::StageWork;
using steptime_detail::Work;

namespace {

// Achieved bus bandwidth / nominal one-direction link rate for large NCCL collectives. NVLink:
// 8×A100 all-reduce reaches 231.6 GB/s busbw of NVLink 3's 300 GB/s (Azure ND A100 v4 nccl-tests,
// shared reference table), and NCCL's own tuning model caps A100 at 235 GB/s (src/graph/tuning.cc):
// 0.77-0.78. InfiniBand NDR nodes (8 × 400 Gb/s) reach 400-450 GB/s all-reduce busbw per node with
// NVLink SHARP (published nccl-tests guides); without it ~0.8 is usual. One figure for both.
constexpr double kCollectiveEfficiency = 0.80;

// Kernel launch costs. GPU side: back-to-back kernels on one stream leave ~1 µs between them, ~0.5
// µs when replayed from a CUDA graph (Gray 2019, NVIDIA developer blog "Getting Started with CUDA
// Graphs": 2.9 µs kernels take 3.8 µs each from a stream, 3.4 µs from a graph). CPU side: eager
// PyTorch spends on the order of 10 µs of host time per operator (He 2022, "Making Deep Learning Go
// Brrrr From First Principles", overhead); it binds only when kernels are shorter than that.
// SMs DeepSeek-V3's communication kernels take while DualPipe hides them (arXiv 2412.19437 §3.2.2).
constexpr double kDualPipeCommSms = 20;
// DeepEP's dispatch and combine kernels: 20 SMs by default (Megatron-Core transformer_config.py
// moe_deepep_num_sms = 20; DeepEP Buffer's own default). HybridEP defaults to 16
// (moe_hybridep_num_sms = 16, "in pure NVL scenarios, 16 SMs can generally achieve good bandwidth");
// Megatron-Bridge's performance recipes set 32 (perf_recipes/_common.py _benchmark_common):
// step_time.ep_comm_sms says which.
constexpr double kDeepEpCommSms = 20;

constexpr double kGapEager = 1.0e-6, kGapGraphs = 0.5e-6, kHostPerKernelEager = 10e-6;

bool isHead(std::string_view name) { return name.rfind("logits", 0) == 0 || name.rfind("cross_entropy", 0) == 0; }

bool isAttentionCore(std::string_view name)
{
    return name.rfind("attention_flash", 0) == 0 || name.rfind("scores_", 0) == 0 || name.rfind("softmax", 0) == 0 ||
           name.rfind("attn_dropout", 0) == 0;
}

// One micro-batch's work on one rank, per layer (forward, backward) and for the head.
bool isMlpOp(std::string_view name)
{
    return name.rfind("mlp_", 0) == 0 || name.rfind("silu_mul", 0) == 0 || name.rfind("gelu", 0) == 0;
}
bool isNormOp(std::string_view name) { return name.rfind("norm_", 0) == 0; }

bool isWgrad(std::string_view name) { return name.size() > 6 && name.substr(name.size() - 6) == ".wgrad"; }

// The busiest expert-parallel rank runs imbalance × the routed experts' rows: its MLP ops (the
// average layer's, of width k·I_e + shared on MoE layers) take f_busy / f as long (the weights they
// read stay the same: a small overestimate where they are memory-bound).
double busiestRankMlpScale(const Scenario& sc, double load)
{
    const auto& m = sc.model.shape;
    if (sc.model.kind != ModelKind::Transformer || load <= 1)
        return 1;
    const double f = mlpWidth(m);
    return f > 0 ? busiestRankMlpWidth(m, load) / f : 1;
}

StageWork sumOps(const Plan& p, const TrainingConfig& tr, const TransformerShape& shape, bool isMlp, bool atPeak,
                 double mlpScale = 1)
{
    // Per-op groups only for the policies that recompute part of a layer (string tests per op).
    const bool byOp = !isMlp && (tr.recompute == Recompute::Op || tr.recompute == Recompute::Modules);
    StageWork w;
    const double L = double(shape.layers);
    for (const auto& op : p.ops) {
        const std::string_view name = op.name;
        // A layer op runs op.count times in the L layers of one micro-batch: the router on the MoE layers
        // only, weight casts a recipe caches once per step (count L / m). Per average layer: count / L.
        const double perLayer = !isMlp && !isHead(name) && L > 0 ? op.count / L : 1.0;
        const double t =
            (atPeak ? op.timeSeconds : op.achievableSeconds) * perLayer * (!isMlp && isMlpOp(name) ? mlpScale : 1.0);
        const double exec = (op.executedFlops > 0 ? op.executedFlops : op.flops) * perLayer;
        if (!isMlp && isHead(name)) {
            if (op.pass != Pass::Forward)
                w.headBwd += t;
            if (isWgrad(name))
                w.headWgrad += t;
            w.head += t;
            w.kernelsHead += op.kernels;
            w.execHead += exec;
            continue;
        }
        const double layers = isMlp ? op.count : 1.0; // the toy model's ops stand for all L layers
        const bool fwd = op.pass == Pass::Forward;
        (fwd ? w.layerFwd : w.layerBwd) += t * layers;
        (fwd ? w.kernelsFwd : w.kernelsBwd) += op.kernels * perLayer * layers;
        (fwd ? w.execFwd : w.execBwd) += exec * layers;
        if (isWgrad(name))
            w.wgrad += t * layers;
        if (fwd && byOp) {
            if (op.kind == OpKind::Gemm) {
                const double share = opPolicyRecomputedShare(name, shape);
                w.opGemm.add(share * t, share * op.kernels * perLayer, share * exec);
            }
            if (isMlpOp(name))
                w.mlp.add(t, op.kernels * perLayer, exec);
            if (name == "silu_mul" || name == "gelu")
                w.act.add(t, op.kernels * perLayer, exec);
            if (name == "router" || name == "router_topk") // recompute of the MoE layer routes again
                w.router.add(t, op.kernels * perLayer, exec);
            if (name == "qkv_proj")
                w.qkv.add(t, op.kernels * perLayer, exec);
            if (name == "rope")
                w.rope.add(t, op.kernels * perLayer, exec);
            if (isNormOp(name))
                w.norm.add(t, op.kernels * perLayer, exec);
        }
        if (op.kind == OpKind::Gemm) {
            (fwd ? w.gemmFwd : w.gemmBwd) += t * layers;
            if (fwd) {
                w.execGemmFwd += exec * layers;
                w.kernelsGemmFwd += op.kernels * perLayer * layers;
            }
        }
        if (fwd && op.kind == OpKind::Attention)
            w.fusedAttnFwd += t * layers;
        if (isAttentionCore(name)) {
            (fwd ? w.attnFwd : w.attnBwd) += t;
            if (fwd) {
                w.execAttnFwd += exec;
                w.kernelsAttnFwd += op.kernels * perLayer;
            }
        }
    }
    return w;
}

// Shares of the average layer's MLP ops (at the busiest expert rank's width) by the module that runs
// them: dense MLP layers, routed experts (× load), shared experts; by FLOPs (width), as the op list
// holds the average layer. And MLA's up-projections' share of the QKV projection FLOPs.
struct ModuleShares {
    double dense = 1, routed = 0, shared = 0, mlaUp = 0;
};

ModuleShares moduleShares(const TransformerShape& m, double load)
{
    ModuleShares r;
    if (m.attention == AttentionKind::Mla) {
        const auto pr = mlaProjections(m);
        const double H = double(m.heads), a = double(m.mla.qkNopeHeadDim + m.mla.qkRopeHeadDim);
        const double up = double(m.mla.qLoraRank) * H * a +
                          double(m.mla.kvLoraRank) * H * double(m.mla.qkNopeHeadDim + m.mla.vHeadDim);
        r.mlaUp = pr.q + pr.kv > 0 ? up / (pr.q + pr.kv) : 0;
    }
    if (!isMoe(m) || m.layers <= 0)
        return r;
    const double share = double(moeLayerCount(m)) / double(m.layers), f = busiestRankMlpWidth(m, load);
    if (f <= 0)
        return r;
    r.routed = share * double(m.moe.topK) * double(m.moe.expertFfn) * std::max(1.0, load) / f;
    r.shared = share * sharedExpertWidth(m.moe) / f;
    r.dense = (1 - share) * double(m.ffn) / f;
    return r;
}

// What the policy runs again per layer and micro-batch (forward time, launches, executed FLOPs).
Work recomputeWork(const TrainingConfig& tr, const StageWork& w, bool isMlp, const ModuleShares& ms = {})
{
    Work r;
    const bool attnCore = tr.recompute == Recompute::Selective ||
                          (tr.recompute == Recompute::Modules && (tr.recomputeModules & kModuleCoreAttn));
    if (tr.recompute == Recompute::Full) {
        r.add(w.layerFwd, w.kernelsFwd, w.execFwd); // the whole forward again (Chen et al. 2016)
    } else if (tr.recompute == Recompute::Op && !isMlp) {
        // torchtitan's op-level policy: the even forward matmuls and every op that is neither a
        // matmul nor SDPA again (SDPA's outputs and the odd matmuls are saved). Unfused attention's
        // bmm/softmax ops are not on its save list: recomputed with the elementwise ones.
        const double elementwise = std::max(0.0, w.layerFwd - w.gemmFwd - w.fusedAttnFwd);
        r.add(w.opGemm.t + elementwise,
              w.opGemm.kernels + std::max(0.0, w.kernelsFwd - w.kernelsGemmFwd - w.kernelsAttnFwd), w.opGemm.exec);
    } else {
        if (attnCore) // QK^T, softmax, PV again (Korthikanti et al. 2022 §5)
            r.add(w.attnFwd, isMlp ? 0 : w.kernelsAttnFwd, w.execAttnFwd);
        const std::uint8_t mods = tr.recompute == Recompute::Modules && !isMlp ? tr.recomputeModules : 0;
        auto share = [&r](const Work& x, double f) { r.add(f * x.t, f * x.kernels, f * x.exec); };
        if (mods & kModuleMlp)
            share(w.mlp, ms.dense); // the dense MLP layers' GEMMs and activation again
        if (mods & kModuleMoe) {    // the MoE layer: router, experts, shared experts (its all-to-all: expertTraffic)
            share(w.mlp, ms.routed + ms.shared);
            share(w.router, 1);
        } else {
            if (mods & kModuleShared)
                share(w.mlp, ms.shared);
            if (mods & kModuleMoeAct) // the routed experts' activation from their kept fc1 output
                share(w.act, ms.routed);
        }
        if (mods & kModuleMlaUp) { // MLA's up-projections and RoPE from the kept latents
            share(w.qkv, ms.mlaUp);
            share(w.rope, 1);
        }
        if (mods & kModuleLayernorm)
            r.add(w.norm.t, w.norm.kernels, w.norm.exec); // the two norms again
    }
    return r;
}

} // namespace

double defaultCollectiveEfficiency() { return kCollectiveEfficiency; }

// The slowest stage sets the pace: its layers (uneven stages: parallel.first/last_stage_layers,
// pipeline_layout) and, on the last stage, the logits and loss (w.head: kept, halved under DualPipe, or
// cleared when another stage is slower). perLayer: one layer's forward + backward + recompute.
double slowestStageLayers(const Scenario& sc, StageWork& w, double perLayer, bool dual, double evenLayers)
{
    const auto& par = sc.parallel;
    double stageLayers = evenLayers;
    if (dual) {
        // DualPipe (deepseek-ai/DualPipe dualpipe.py): rank i runs stage i for the half of the
        // micro-batches that enter at the front and stage pp - 1 - i for the half that enter at the
        // back, so per micro-batch it runs the mean of the two; both end ranks hold the last stage and
        // run the logits and loss for half the micro-batches each.
        const auto layers = stageLayerCounts(par, sc.model.shape.layers);
        const std::size_t n = layers.size();
        double slowest = -1;
        bool endIsSlowest = true;
        for (std::size_t i = 0; i < n / 2; ++i) {
            const double pair = (layers[i] + layers[n - 1 - i]) / 2;
            const double t = pair * perLayer + (i == 0 ? w.head / 2 : 0.0);
            if (t > slowest) {
                slowest = t;
                stageLayers = pair;
                endIsSlowest = i == 0;
            }
        }
        const double share = endIsSlowest ? 0.5 : 0.0;
        w.head *= share, w.kernelsHead *= share, w.headBwd *= share, w.headWgrad *= share;
    } else if (par.pp > 1) {
        const auto layers = stageLayerCounts(par, sc.model.shape.layers);
        double slowest = -1;
        bool lastIsSlowest = true;
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const bool last = i + 1 == layers.size();
            const double t = layers[i] * perLayer + (last ? w.head : 0.0);
            if (t > slowest) {
                slowest = t;
                stageLayers = layers[i];
                lastIsSlowest = last;
            }
        }
        if (!lastIsSlowest) { // the logits and loss run on another stage
            w.head = 0;
            w.kernelsHead = 0;
        }
    }
    return stageLayers;
}

// Launch time of one micro-batch not hidden behind the GPU: ~1 µs between kernels on the GPU, and for
// eager frameworks ~10 µs of host time per kernel, which binds when the kernels are shorter.
double launchSeconds(const Scenario& sc, double kernels, double gpuBusy)
{
    const double gap = sc.stepTime.cudaGraphs ? kGapGraphs : kGapEager;
    const double host = sc.stepTime.cudaGraphs ? 0.0 : kHostPerKernelEager;
    return std::max(kernels * gap, kernels * host - gpuBusy);
}

// The pipeline bubble of one step; DualPipe also records its F, B and W per chunk in r.
double pipelineBubble(StepTimeBreakdown& r, const StageWork& w, double stageLayers, double mbRecompute, double chunk,
                      double pp, double v, bool dual)
{
    if (!dual)
        return (pp - 1) / v * r.microBatchSeconds; // Narayanan et al. 2021 §2.2
    // DualPipe's bubble (arXiv 2412.19437 §3.2.1 Table 2): (p/2 - 1)(F&B + B - 3W), F&B = F + B with
    // the pair's traffic hidden, B the full backward (recompute included), W its weight-gradient
    // GEMMs; TP, CP and launch time scale with the chunk.
    const double F = stageLayers * w.layerFwd + (w.head - w.headBwd);
    const double B = stageLayers * w.layerBwd + mbRecompute + w.headBwd;
    const double W = stageLayers * w.wgrad + w.headWgrad;
    const double scale = F + B > 0 ? chunk / (F + B) : 1.0;
    r.chunkForward = F * scale, r.chunkBackward = B * scale, r.chunkWgrad = W * scale;
    return std::max(0.0, (pp / 2 - 1) * (chunk + (B - 3 * W) * scale));
}

// The optimizer step, gradient clipping and checkpoint saves of one step (world: the link of all GPUs).
// PyTorch's foreach Adam(W) (torch/optim/adam.py _multi_tensor_adam, PyTorch 2.4-2.6, not capturable):
// one pass per _foreach_* call over the updated copy p (the fp32 master where there is one), the
// gradient g and the moments m, v, plus a temporary d of the states' dtype. Bytes per parameter:
//   AdamW: decoupled decay  mul_(p)               2 e_p
//   Adam: L2 decay          g' = add(g, p)        e_p + 2 e_g (a non-zero weight decay assumed)
//   m = lerp(m, g)          lerp_                 2 e_s + e_g
//   v = beta2 v + g^2       mul_, addcmul_        4 e_s + e_g
//   d = sqrt(v) / bc2 + eps sqrt, div_, add_      6 e_s
//   p -= lr m / d           addcdiv_(p, m, d)     2 e_p + 2 e_s
// AdamW: 4 e_p + 14 e_s + 2 e_g (80 bytes in fp32, against 28 for one fused pass); with a master copy
// the framework then writes the model's weights from it (e_p + e_w). The forloop update (Composer's
// DecoupledAdamW, composer/optim/decoupled_weight_decay.py; PyTorch's _single_tensor_adam before 2.0)
// runs the same kernels one tensor at a time, but the first moment as mul_ then add_: 2 e_s more.
double unfusedAdamBytes(bool decoupled, bool mulAdd, double updated, double statesBytes, double masterBytes, double ew,
                        double eg)
{
    const double es = statesBytes / (2 * updated), em = masterBytes / updated;
    const double ep = em > 0 ? em : ew;
    const double decay = decoupled ? 2 * ep : ep + 2 * eg;
    return updated * (decay + 2 * ep + (mulAdd ? 16 : 14) * es + 2 * eg + (em > 0 ? em + ew : 0.0));
}

void optimizerAndSaves(StepTimeBreakdown& r, const Scenario& sc, const Plan& p, bool atPeak, const Link& world)
{
    const auto& hw = p.hardware;
    // Optimizer update: memory-bound; read the gradient and write the weight, read and write the
    // master copy and each optimizer state, for this rank's shard (fused multi-tensor Adam). Without a
    // master copy the update reads the weight it writes (Apex FusedAdam reads p, g, m, v, writes p, m, v).
    const auto& mem = p.memory;
    const double Pr = mem.paramsPerRank > 0 ? mem.paramsPerRank : p.params.total;
    const double ew = bytesPerValue(sc.precision.weights), eg = bytesPerValue(sc.precision.gradients);
    const double bw = atPeak ? hw.bandwidth : (hw.achievableBandwidth > 0 ? hw.achievableBandwidth : hw.bandwidth);
    const double trainedShare =
        sc.finetune.peft() ? mem.gradientsRate.valuesPerParam : 1.0; // a frozen base is not updated
    const double updated = Pr * trainedShare / std::max(1.0, mem.optimizerRate.shard);
    const double statesBytes = updated > 0 ? (mem.optimizerStates + mem.masterWeights) * 2 : 0;
    r.optimizerBytes = statesBytes + updated * (eg + (mem.masterWeights > 0 ? ew : 2 * ew));
    const bool loop = sc.optimizerImpl == OptimizerImpl::ForLoop;
    if ((sc.optimizerImpl == OptimizerImpl::Foreach || loop) && updated > 0)
        r.optimizerBytes = unfusedAdamBytes(sc.optimizer == OptimizerKind::AdamW, loop, updated, mem.optimizerStates,
                                            mem.masterWeights, ew, eg);
    r.optimizerBandwidth = bw;
    r.optimizer = r.optimizerBytes / bw;
    // ZeRO-Offload: the CPU runs the update (core/offload.h); the GPU's share is the traffic.
    if (sc.offload.optimizer != OffloadTarget::None)
        r.optimizer = 0;
    r.offload = offloadSeconds(sc, p, r.compute + r.recompute).total;

    if (!atPeak) {
        // Gradient-norm clipping: read this rank's gradients once, all-reduce one norm over all GPUs.
        r.gradClip = mem.gradients / bw + collectiveSeconds(Collective::AllReduce, 4, world);
        // Checkpoint saves: each rank writes its weights, master copy and optimizer states.
        if (sc.stepTime.saveEverySteps > 0 && sc.stepTime.saveBandwidth > 0)
            r.checkpointSave = (mem.weights + mem.masterWeights + mem.optimizerStates) / sc.stepTime.saveBandwidth /
                               double(sc.stepTime.saveEverySteps);
    }
}

// The SMs communication kernels hold while hidden traffic runs (time.comm_sm_share).
void chargeHiddenTrafficSms(StepTimeBreakdown& r, const Scenario& sc, const GpuSpec& gpu, bool dual, bool overlapEp)
{
    // Hidden is not free: NCCL runs one CTA per channel on the SMs the GEMMs need (src/device: one block
    // per channel; 24 collective channels on an 8 x H100 node, core/comm_buffers.h), for as long as the
    // collective lasts. Conservation of SM time: compute loses ctas/SMs of the GPU for the hidden
    // traffic's duration, a floor (a GEMM sized to one wave of all SMs spills a second wave: an H100
    // all-gather of 24 CTAs took a 132-CTA GEMM from 80% to 47% of peak, NVIDIA developer forum
    // t/337991). Context-parallel p2p is not counted.
    if (gpu.smCount <= 0)
        return;
    r.dpCommHidden = std::max(0.0, r.dpCommTotal - r.dpComm);
    r.ncclCtas = std::min(kNcclCollChannels, double(gpu.smCount));
    r.commSmShare = r.dpCommHidden * r.ncclCtas / double(gpu.smCount);
    // DualPipe's all-to-all and sends run on 20 SMs of the H800's 132 (arXiv 2412.19437 §3.2.2: "only
    // 20 SMs are sufficient to fully utilize the bandwidths of IB and NVLink"), reserved while the
    // chunks compute, not only while traffic flows (§3.5.1: "we allocate 20 out of the 132 SMs ...
    // which will limit the computational throughput"; deepseek-ai/profile-data train.json: the GEMMs'
    // persistent grids are 112 CTAs): compute runs on SMs - 20, taking SMs / (SMs - 20) as long.
    // step_time.ep_comm_sms (at most half the SMs) replaces either default.
    const double chosen = sc.stepTime.epCommSms > 0 ? double(sc.stepTime.epCommSms) : 0.0;
    if (dual && r.pipeCommHidden > 0) {
        r.pipeCommSms = chosen > 0 ? chosen : std::min(kDualPipeCommSms, double(gpu.smCount) / 2);
        r.commSmShare += (r.compute + r.recompute) * r.pipeCommSms / (double(gpu.smCount) - r.pipeCommSms);
    } else if (overlapEp && r.pipeCommHidden > 0) {
        // Megatron-Core's all-to-all: NCCL, one CTA per channel; DeepEP / HybridEP: their own kernels.
        r.pipeCommSms = chosen > 0 ? chosen
                        : sc.stepTime.moeDispatcher == MoeDispatcher::DeepEp
                            ? std::min(kDeepEpCommSms, double(gpu.smCount))
                            : r.ncclCtas;
        r.commSmShare += r.pipeCommHidden * r.pipeCommSms / double(gpu.smCount);
    }
    // Megatron's TP overlap (Transformer Engine userbuffers, core/roofline.h): the reduce-scatter half
    // of the hidden TP traffic (pipeline forward, bulk backward) runs on 16 SMs the GEMMs leave free;
    // the all-gathers move by ring exchange on the copy engines (1 SM, not counted).
    r.tpCommHidden = std::max(0.0, r.tpCommTotal - r.tpComm);
    if (userbuffersTpOverlap(sc) && r.tpCommHidden > 0) {
        r.tpCommSms = std::min(kUserbuffersSms, double(gpu.smCount));
        r.commSmShare += r.tpCommHidden / 2 * r.tpCommSms / double(gpu.smCount);
    }
}

StepTimeBreakdown predictStepTime(const Scenario& sc, const Plan& p, bool atPeak)
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
    r.microBatches = m;
    const double G = double(sc.cluster.gpus);
    const double e = bytesPerValue(sc.precision.activations);
    const double s = isMlp ? 1.0 : double(tr.seqLen), b = double(tr.microBatch);
    const double h = isMlp ? double(sc.model.mlp.width) : double(sc.model.shape.dModel);
    const double L = isMlp ? double(sc.model.mlp.layers) : double(sc.model.shape.layers);
    r.framework = toString(sc.stepTime.framework);

    // ---- Compute of one micro-batch on the slowest stage (the last: it also runs the logits).
    StageWork w = sumOps(p, tr, sc.model.shape, isMlp, atPeak, busiestRankMlpScale(sc, p.moe.busiestRankLoad));
    const Work re =
        recomputeWork(tr, w, isMlp, isMlp ? ModuleShares{} : moduleShares(sc.model.shape, p.moe.busiestRankLoad));
    const double recomputeFwd = re.t, recomputeKernels = re.kernels, recomputeExec = re.exec;
    // Executed FLOPs: tp·cp·dp rank positions, each running every layer of m micro-batches.
    r.executedFlops = G / pp * m * (L * (w.execFwd + w.execBwd + recomputeExec) / (isMlp ? L : 1.0) + w.execHead);
    // The slowest stage sets the pace: its layers (uneven stages: parallel.first/last_stage_layers,
    // pipeline_layout) and, on the last stage, the logits and loss.
    const bool dual = !isMlp && pp > 1 && par.schedule == PipelineSchedule::DualPipe;
    const double stageLayers =
        isMlp ? 1.0 : slowestStageLayers(sc, w, w.layerFwd + w.layerBwd + recomputeFwd, dual, L / pp);
    const double mbCompute = stageLayers * (w.layerFwd + w.layerBwd) + w.head;
    const double mbRecompute = stageLayers * recomputeFwd;

    // ---- Links (Megatron order TP, CP, DP, PP from the innermost; Narayanan et al. 2021 §3.1).
    const double gpn = std::max(1, par.gpusPerNode);
    const auto& gpu = *hw.gpu;
    double intra = sc.stepTime.intraNodeBandwidth;
    if (intra <= 0) // catalogue figures are bidirectional totals (NVLink 4: 900 GB/s = 450 GB/s each way)
        intra =
            gpu.interconnectBytesPerSecond > 0 ? gpu.interconnectBytesPerSecond / 2 : gpu.hostLinkBytesPerSecond / 2;
    const double inter = sc.stepTime.interNodeBandwidth;
    if (intra <= 0)
        intra = inter;
    const double eff =
        atPeak ? 1.0
               : (sc.stepTime.collectiveEfficiency > 0 ? sc.stepTime.collectiveEfficiency : kCollectiveEfficiency);
    r.collectiveEfficiency = eff;
    const Link tpLink = groupLink(tp, 1, gpn, intra, inter, eff);
    const Link cpLink = groupLink(cp, tp, gpn, intra, inter, eff);
    // The gradients are reduced over data × context parallel ranks, TP innermost (gradientGroupSize).
    const double gradientGroup = double(gradientGroupSize(sc, std::int64_t(dp)));
    const Link dpLink = groupLink(gradientGroup, tp, gpn, intra, inter, eff);
    Link ppLink = groupLink(2, tp * cp * dp, gpn, intra, inter, eff);
    ppLink.crossesNodes = tp * cp * dp * pp > gpn;
    ppLink.nominal = ppLink.crossesNodes ? std::min(intra, inter) : intra;
    ppLink.busbw = ppLink.nominal * eff;
    r.tpCrossesNodes = tpLink.crossesNodes;
    r.cpCrossesNodes = cpLink.crossesNodes;
    r.dpCrossesNodes = dpLink.crossesNodes;
    r.ppCrossesNodes = ppLink.crossesNodes;
    r.tpBandwidth = tpLink.busbw;
    r.cpBandwidth = cpLink.busbw;
    r.dpBandwidth = dpLink.busbw;
    r.ppBandwidth = ppLink.busbw;

    // ---- Tensor parallelism: per layer 2 all-reduces forward and 2 backward of the s·b·h activations
    // (Shoeybi et al. 2019 §3); with SP each is an all-gather + a reduce-scatter (Korthikanti et al.
    // 2022 §4.2.2). Full recompute repeats the forward's two.
    double mbTp = 0, mbTpTotal = 0;
    if (tp > 1 && !isMlp) {
        const double msg = (s / cp) * b * h * e;
        const double perLayer = 4 + (tr.recompute == Recompute::Full ? 2 : 0);
        // torchtitan with Float8 tensorwise scaling gathers in FP8 (torchao float8_tensor_parallel.py:
        // Float8ColwiseParallel casts the input before the all-gather, Float8RowwiseParallel the output
        // gradient before the backward's): every all-gather carries 1-byte values when the QKV, output
        // and MLP GEMMs all run in FP8; the reduce-scatters stay in the activation dtype.
        const auto& pr = sc.precision;
        const bool fp8Gather = par.sequenceParallel && sc.stepTime.framework == Framework::Torchtitan &&
                               pr.recipe == LowPrecisionRecipe::Current &&
                               (pr.lowPrecisionGemms & kLowDefault) == kLowDefault;
        const double gathered = fp8Gather ? (s / cp) * b * h * recipeInfo(pr.recipe).elementBytes : msg;
        const double one = par.sequenceParallel ? collectiveSeconds(Collective::AllGather, gathered, tpLink, atPeak) +
                                                      collectiveSeconds(Collective::ReduceScatter, msg, tpLink, atPeak)
                                                : collectiveSeconds(Collective::AllReduce, msg, tpLink, atPeak);
        mbTpTotal = stageLayers * perLayer * one;
        // Overlapped (--tp-comm-overlap, async TP): hidden behind the layer's GEMMs.
        mbTp = sc.stepTime.overlapTp ? std::max(0.0, mbTpTotal - stageLayers * (w.gemmFwd + w.gemmBwd)) : mbTpTotal;
        // Per-tensor FP8 / NVFP4 scales under SP: a 4-byte amax all-reduce before each gathered tensor's
        // cast (core/lowprecision.h), latency-bound and on the compute stream's path: never hidden.
        const AmaxReductions amax = tensorParallelAmaxReductions(sc);
        const double reductions =
            stageLayers * (amax.forward * (1 + (tr.recompute == Recompute::Full ? 1 : 0)) + amax.backward);
        if (reductions > 0) {
            const double each = collectiveSeconds(Collective::AllReduce, 4, tpLink, atPeak);
            r.tpAmaxReductions = reductions;
            r.tpAmaxSeconds = each;
            mbTpTotal += reductions * each;
            mbTp += reductions * each;
        }
    }

    // ---- Context parallelism (parallel.cp_comm, Megatron-Core / Transformer Engine --cp-comm-type).
    const CpTraffic cpt =
        cp > 1 && !isMlp ? contextParallelTraffic(sc, w, stageLayers, cpLink, inter, atPeak) : CpTraffic{};
    const double mbCp = cpt.exposed, mbCpTotal = cpt.total;

    // ---- Expert parallelism: dispatch and combine all-to-all per MoE layer (core/collectives.h).
    const ExpertTraffic ept = expertTraffic(sc, p.moe, stageLayers, recomputeMoe(tr), intra, inter, eff, atPeak);
    const double mbEp = ept.seconds;
    r.epBytesPerMicroBatch = ept.bytes;
    r.epCrossesNodes = ept.crossesNodes;
    r.epBandwidth = ept.bandwidth;
    r.epOffNodeShare = ept.offNodeShare;
    r.epNvlinkShare = ept.onNodeShare;
    r.epGroupRanks = ept.ranks;
    r.epGroupNodes = ept.nodes;
    r.epMissNode = ept.missNode;
    r.epMissRank = ept.missRank;
    r.epNodeLimited = ept.nodeLimited;

    // ---- Pipeline: each micro-batch crosses the v chunk boundaries forward and backward; with TP
    // the message is split over the t ranks (Narayanan et al. 2021 §4.1 scatter/gather).
    const double mbPp = pp > 1 ? 2 * v * sendRecvSeconds((s / cp) * b * h * e / tp, ppLink, atPeak) : 0.0;

    // ---- Kernel launches: the GPU waits ~1 µs between kernels; eager frameworks also need ~10 µs of
    // host time per kernel, which binds when kernels are shorter.
    const double kernels = stageLayers * (w.kernelsFwd + w.kernelsBwd + recomputeKernels) + w.kernelsHead;
    r.kernelsPerMicroBatch = kernels;
    const double mbLaunch = atPeak ? 0.0 : launchSeconds(sc, kernels, mbCompute + mbRecompute);

    r.pipelineSchedule = toString(par.schedule);
    const double chunk = mbCompute + mbRecompute + mbTp + mbCp + mbLaunch; // F + B of one micro-batch, no EP / PP
    const bool overlapEp = !dual && sc.stepTime.overlapEp && mbEp > 0;
    double mbEpExposed = mbEp, mbPpExposed = mbPp; // per micro-batch, after overlap
    if (dual) {
        // DualPipe overlaps a forward chunk with a backward chunk of the other direction and runs the
        // all-to-all and the pipeline sends of each behind the other's compute (arXiv 2412.19437
        // §3.2.1): per pair of chunks only what exceeds their compute is exposed (shared pro rata).
        const double share = std::max(0.0, mbEp + mbPp - chunk) / (mbEp + mbPp > 0 ? mbEp + mbPp : 1.0);
        mbEpExposed = mbEp * share, mbPpExposed = mbPp * share;
    } else if (overlapEp) {
        // Megatron-Core's EP all-to-all overlap: the same pairing of a forward with another
        // micro-batch's backward inside 1F1B, for the all-to-all only (the pipeline sends stay).
        mbEpExposed = std::max(0.0, mbEp - chunk);
    }
    r.microBatchSeconds = chunk + mbEpExposed + mbPpExposed;
    r.compute = m * mbCompute;
    r.recompute = m * mbRecompute;
    r.tpComm = m * mbTp;
    r.tpCommTotal = m * mbTpTotal;
    r.cpComm = m * mbCp;
    r.cpCommTotal = m * mbCpTotal;
    r.ppComm = m * mbPpExposed;
    r.ppCommTotal = m * mbPp;
    r.epComm = m * mbEpExposed;
    r.epCommTotal = m * mbEp;
    r.pipeCommHidden = m * (mbEp + mbPp - mbEpExposed - mbPpExposed);
    r.launch = m * mbLaunch;
    r.bubble = pipelineBubble(r, w, stageLayers, mbRecompute, chunk, pp, v, dual);

    // ---- Data parallelism. HYBRID_SHARD shards inside a node and replicates across nodes.
    const double group = double(shardGroupSize(sc, std::int64_t(dp)));
    const Link innerLink = groupLink(group, tp, gpn, intra, inter, eff);
    const Link replicaLink = groupLink(gradientGroup / group, tp * group, gpn, intra, inter, eff);
    // Expert data parallelism: EDP ranks etp · ep apart (Megatron-Core expert order ETP, EP, EDP, PP).
    const double edp = double(std::max<std::int64_t>(1, p.moe.expertDataParallel));
    const Link edpLink = groupLink(edp, double(std::max<std::int64_t>(1, p.moe.expertTensorRanks * p.moe.expertRanks)),
                                   gpn, intra, inter, eff);
    r.edpCrossesNodes = edpLink.crossesNodes;
    r.edpBandwidth = edpLink.busbw;
    const auto dpt =
        dataParallelTraffic(sc, p, w, stageLayers, m, mbRecompute, dpLink, innerLink, replicaLink, edpLink, atPeak);
    r.dpCommTotal = dpt.total;
    r.dpComm = dpt.exposed;
    // FSDP2's copies on the compute stream (framework.h fsdpCopyBytes), at the memory-bound rate.
    const double copyBw = atPeak || !(hw.achievableBandwidth > 0) ? hw.bandwidth : hw.achievableBandwidth;
    r.fsdpCopyBandwidth = copyBw;
    r.fsdpCopyBytes = fsdpCopyBytes(sc, p.memory.paramsPerRank > 0 ? p.memory.paramsPerRank : p.params.total, group,
                                    sc.finetune.peft() ? p.memory.gradientsRate.valuesPerParam : 1.0);
    r.fsdpCopies = copyBw > 0 ? m * r.fsdpCopyBytes / copyBw : 0.0;

    optimizerAndSaves(r, sc, p, atPeak, groupLink(G, 1, gpn, intra, inter, eff));
    if (!atPeak)
        chargeHiddenTrafficSms(r, sc, gpu, dual, overlapEp);
    r.overheads = r.launch + r.gradClip + r.checkpointSave + r.commSmShare + r.fsdpCopies;
    r.step = r.compute + r.recompute + r.tpComm + r.cpComm + r.epComm + r.ppComm + r.bubble + r.dpComm + r.optimizer +
             r.offload + r.overheads;
    if (!(r.step > 0))
        return r;
    r.mfu = p.compute.flopsPerStep / (G * hw.peakFlops * r.step);
    // HFU = MFU · hardware / model FLOPs (exactly MFU without recomputation).
    r.hfu = r.mfu * (p.compute.trainingFlops > 0 ? p.compute.hardwareFlops / p.compute.trainingFlops : 1.0);
    r.tokensPerSecond = p.compute.tokensPerStep / r.step;
    r.valid = true;
    return r;
}

} // namespace napkin::core
