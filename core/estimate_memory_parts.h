// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// The memory stage's shared parts (estimate_memory.cpp builds them, estimate_memory_derive.cpp
// explains them): what every stage's tensors are computed from, one stage's tensors, the sources.

#include "activations.h"
#include "comm_buffers.h"
#include "offload.h"
#include "estimate.h"

#include <cstdint>
#include <vector>

namespace napkin::core::detail {

inline constexpr const char* kSrcExpertShards =
    "Rajbhandari et al. 2019 (ZeRO) §3 per group: dense parameters' states sharded over the data-parallel ranks, the "
    "routed experts' over the expert data-parallel ranks EDP = tp·cp·dp / (etp·ep) (Megatron-Core distributed "
    "optimizer, one buffer per group; torchtitan MOE_SHARDING.md)";
inline constexpr const char* kSrcZero = "Rajbhandari et al. 2019 (ZeRO), §3: stage 1 shards optimizer states, 2 also "
                                        "gradients, 3 also parameters";
inline constexpr const char* kSrcKorthikanti = "Korthikanti et al. 2022 (arXiv 2205.05198), §4.1 Eq. 1 and Table 2";

// What every stage's tensors are computed from: the layout, the ZeRO/FSDP shard of each model state,
// the bytes per value of each dtype, and how the parameters and layers fall on the stages.
struct LedgerInputs {
    bool isMlp = false;
    std::int64_t tp = 1, pp = 1, cp = 1, accumulationSteps = 1;
    double P = 0;                                 // all parameters
    double shardW = 1, shardG = 1, shardO = 1;    // ZeRO-3 / -2 / -1 shard counts (1: replicated)
    double bw = 0, bg = 0, bm = 0, bo = 0, e = 0; // bytes per value: weights, grads, master, optimizer, activations
    double s = 0, b = 0;                          // sequence length, micro-batch
    double statesPerParam = 0;                    // optimizer states per parameter (Adafactor: factored)
    double scales = 0;                            // per-tensor scale bytes of a stage's weights (NVFP4)
    double layersAll = 0, firstParts = 0, lastParts = 0, allParts = 0;
    double L = 0, stageLayers = 0;                // layers, and layers per pipeline stage (even split)
    std::vector<double> layersOf;                 // layers of each stage (uneven: parallel.*_stage_layers)
    std::vector<double> stageLayerParams;         // mixed dense and MoE layers: each stage's layer parameters
    std::vector<double> stageExperts;             // routed-expert parameters of each stage (MTP's on the last)
    double bwExpert = 0;                          // bytes per routed-expert weight (precision.expert_weights)
    double expertSplit = 1;                       // ranks one stage's routed experts split over: ep · etp
    double shardWE = 1, shardGE = 1, shardOE = 1; // the experts' ZeRO shards, over expert data parallelism
    double inflightFirst = 0;                     // micro-batches in flight on the first stage
    const LayerTensors* layer = nullptr;          // one layer's saved tensors (the same on every stage): in the plan
    double lossBytesPerLogit = 0;                 // the loss path's bytes per logit at its peak
    const char* lossSource = "";
    bool eager = false;               // the eager tensor list (step_time.kernel_fusion)
    double gatheredLayers = 0;        // ZeRO-3: bytes of the layers held unsharded
    double gatheredRoot = 0;          // torchtitan: the root module's parameters, unsharded
    bool gatherWholeStage = false;    // torchtitan with PP: no reshard after forward, the stage stays gathered
    double reduceScatterBuffers = 0;  // FSDP2: a block's unsharded gradients + the reduce-scatter input
    double optimizerTempPerParam = 0; // bytes per parameter the optimizer step allocates (foreach AdamW)
    bool weightsAreMaster = false;
    // LoRA / QLoRA (core/finetune.h): the base frozen (weights only), its linear weights in the base
    // format, the adapters with gradients and optimizer states.
    double headParams = 0; // the output layer (its own FP8 copy when precision.low_precision_gemms has head)
    bool peft = false;
    double adapters = 0, quantised = 0; // whole model
    double bq = 0;                      // bytes per quantised base weight
    CommBuffers comm;                   // communicators and buckets (core/comm_buffers.h)
};

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
    double layers = 0;                       // transformer layers on this stage
    double mtpLayers = 0;                    // multi-token prediction depths (last stage only)
    double mtpSaved = 0;                     // their saved tensors (in outside)
    double offloaded = 0;                    // saved tensors on the host (offload.activations)
    double gathered = 0;                     // ZeRO-3 / FSDP parameters held all-gathered on this stage
    double expertParams = 0;                 // routed-expert parameters on this rank
    double weightBytesPerParam = 0;          // mean bytes per stored weight (expert_weights differ)
    HostMemory host;                         // what offload keeps off the GPU for this stage
    double fp8Cache = 0;                     // Transformer Engine's FP8 weight copies (in weights)
    double fp8Primary = 0;                   //   the 16-bit weights fp8_param_gather does not keep (out of weights)
    double trainable = 0;                    // LoRA / QLoRA: adapter parameters on this rank
    double quantised = 0;                    //   and frozen linear weights in the base format
    std::int64_t mirror = -1;                // DualPipe: the second stage this rank holds (pp - 1 - i)
    double mirrorParams = 0;                 //   and its parameters (included in memory.params)
};

// Derivations of the model states (parameters per rank, weights, gradients, master, optimizer) and of
// the activations and temporaries of the most loaded stage (estimate_memory_derive.cpp).
void deriveModelStates(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p);
void deriveActivations(const Scenario& sc, const LedgerInputs& in, const StageTensors& chosen, Plan& p);
// The model states under LoRA / QLoRA: a frozen base, trained adapters (estimate_memory_derive.cpp).
void derivePeftStates(const LedgerInputs& in, const StageTensors& chosen, Plan& p);

} // namespace napkin::core::detail
