// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Derivations of the memory ledger's model states, activations and temporaries: the formula, its
// substituted values and its source for each bucket of the most loaded stage.

#include "buckets.h"
#include "estimate_memory_parts.h"
#include "estimate_stages.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

namespace napkin::core::detail {

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
    if (chosen.mirror >= 0)
        derive(p, "memory.params_per_rank", "{P_stage} + {P_mirror}", chosen.memory.params, "parameters",
               "DualPipe (arXiv 2412.19437 §3.2.1 Table 2, deepseek-ai/DualPipe examples/example_dualpipe.py): rank i "
               "holds the modules of stage i and of stage pp - 1 - i, two copies of the model over the pipeline",
               {{"P_stage", chosen.memory.params - chosen.mirrorParams}, {"P_mirror", chosen.mirrorParams}});
    else if (in.tp > 1 || in.pp > 1)
        derive(p, "memory.params_per_rank", "{P} · {stage_share} / {tp}", chosen.memory.params, "parameters",
               "Narayanan et al. 2021: layers split over p pipeline stages (embedding first, output layer last), "
               "each stage's matrices over t tensor-parallel ranks",
               {{"P", P}, {"stage_share", chosen.memory.params * tp / P}, {"tp", tp}});
    if (in.peft)
        return derivePeftStates(in, chosen, p);
    const double Pr = chosen.memory.params;
    if (chosen.expertParams > 0 && in.expertSplit > 1)
        derive(p, "memory.expert_params_per_rank", "{experts_stage} / ({ep} · {etp})", chosen.expertParams,
               "parameters",
               "Megatron-Core expert parallelism: each of ep ranks holds experts / ep of every MoE layer on its stage, "
               "each expert's matrices split over etp (included in memory.params_per_rank)",
               {{"experts_stage", chosen.expertParams * in.expertSplit},
                {"ep", double(sc.parallel.ep)},
                {"etp", double(sc.parallel.etp)}});
    // The experts' states shard over EDP, not DP: their own terms when the two groups differ.
    const bool expertShards = chosen.expertParams > 0 && (in.shardGE != in.shardG || in.shardOE != in.shardO);
    const auto& weights = memoryBucket(Bucket::Weights);
    const OffloadedStates off = offloadedStates(sc.offload, in.shardG, in.weightsAreMaster);
    const char* onHost = "offloaded (offload.*): on the host or NVMe, memory.host";
    if (off.weights)
        derive(p, weights.quantity, "{zero}", 0, "bytes", onHost, {{"zero", 0}});
    else if (m.weightsAreMaster)
        derive(
            p, weights.quantity, "{zero}", m.weights, "bytes",
            "PyTorch FSDP2 MixedPrecisionPolicy(param_dtype): the sharded fp32 parameter is the master copy "
            "(master_weights); the weight dtype exists only all-gathered, layer by layer (memory.per_gpu.temporaries)",
            {{"zero", 0}});
    else if (chosen.expertParams > 0 && (in.bwExpert != in.bw || in.shardWE != in.shardW))
        derive(p, weights.quantity,
               chosen.fp8Primary > 0 ? "(({P} − {P_experts}) · {bytes} + {scales}) / {shard} + {P_experts} · "
                                       "{expert_bytes} / {expert_shard} − {fp8_primary} + {fp8_cache}"
                                     : "(({P} − {P_experts}) · {bytes} + {scales}) / {shard} + {P_experts} · "
                                       "{expert_bytes} / {expert_shard} + {fp8_cache}",
               m.weights, "bytes",
               "the routed experts in precision.expert_weights (gpt-oss ships MXFP4 experts: 4-bit values with one "
               "8-bit scale per 32, OCP MX v1.0), the rest in precision.weights; ZeRO-3 shards the experts over the "
               "expert data-parallel group (Rajbhandari et al. 2019 §3; Megatron-Core expert_data_parallel_group)",
               {{"P", Pr},
                {"P_experts", chosen.expertParams},
                {"bytes", in.bw},
                {"expert_bytes", in.bwExpert},
                {"scales", in.scales},
                {"shard", in.shardW},
                {"expert_shard", in.shardWE},
                {"fp8_primary", chosen.fp8Primary},
                {"fp8_cache", chosen.fp8Cache}});
    else if (chosen.fp8Primary > 0)
        derive(p, weights.quantity, "({P} · {bytes} + {scales}) / {shard} − {fp8_primary} + {fp8_cache}", m.weights,
               "bytes",
               "ZeRO §3 for the parameters; Megatron-Core --fp8-param-gather (Transformer Engine's quantized model "
               "init): the low-precision GEMMs' weights live in FP8, the 16-bit copy (fp8_primary) is not kept, and "
               "fp8_cache is the FP8 weight with its transpose and scales (core/lowprecision.h)",
               {{"P", Pr},
                {"bytes", in.bw},
                {"scales", in.scales},
                {"shard", in.shardW},
                {"fp8_primary", chosen.fp8Primary},
                {"fp8_cache", chosen.fp8Cache}});
    else if (chosen.fp8Cache > 0)
        derive(
            p, weights.quantity, "({P} · {bytes} + {scales}) / {shard} + {fp8_cache}", m.weights, "bytes",
            "ZeRO §3 for the parameters; Transformer Engine keeps an FP8 copy of each low-precision GEMM's weight and "
            "its "
            "transpose (with their scales) from the first micro-batch to the end of the step (Megatron-Core "
            "is_first_microbatch; core/lowprecision.h)",
            {{"P", Pr}, {"bytes", in.bw}, {"scales", in.scales}, {"shard", in.shardW}, {"fp8_cache", chosen.fp8Cache}});
    else
        derive(p, weights.quantity, weights.formula, m.weights, "bytes", kSrcZero,
               {{"P", Pr}, {"bytes", in.bw}, {"scales", in.scales}, {"shard", in.shardW}});
    const auto& gradients = memoryBucket(Bucket::Gradients);
    if (off.gradients)
        derive(p, gradients.quantity, "{zero}", 0, "bytes",
               "ZeRO-Offload (Ren et al. 2021 §4.1): reduced gradient shards go to the host in fp32 (memory.host)",
               {{"zero", 0}});
    else if (expertShards)
        derive(p, gradients.quantity,
               "({P} − {P_experts}) · {bytes} / {shard} + {P_experts} · {bytes} / {expert_shard}", m.gradients, "bytes",
               kSrcExpertShards,
               {{"P", Pr},
                {"P_experts", chosen.expertParams},
                {"bytes", in.bg},
                {"shard", in.shardG},
                {"expert_shard", in.shardGE}});
    else
        derive(p, gradients.quantity, gradients.formula, m.gradients, "bytes", kSrcZero,
               {{"P", Pr}, {"bytes", in.bg}, {"shard", in.shardG}});
    const auto& master = memoryBucket(Bucket::MasterWeights);
    const auto& optimizer = memoryBucket(Bucket::OptimizerStates);
    if (off.master)
        derive(p, master.quantity, "{zero}", 0, "bytes", onHost, {{"zero", 0}});
    else if (expertShards)
        derive(p, master.quantity, "({P} − {P_experts}) · {bytes} / {shard} + {P_experts} · {bytes} / {expert_shard}",
               m.masterWeights, "bytes", kSrcExpertShards,
               {{"P", Pr},
                {"P_experts", chosen.expertParams},
                {"bytes", in.bm},
                {"shard", in.shardO},
                {"expert_shard", in.shardOE}});
    else
        derive(p, master.quantity, master.formula, m.masterWeights, "bytes",
               "ZeRO §3.1: fp32 master copy of the parameters (0 bytes when the plan keeps none)",
               {{"P", Pr}, {"bytes", in.bm}, {"shard", in.shardO}});
    if (off.optimizer)
        derive(p, optimizer.quantity, "{zero}", 0, "bytes",
               "ZeRO-Offload: the optimizer states and their update live on the CPU (memory.host)", {{"zero", 0}});
    else if (expertShards)
        derive(p, optimizer.quantity,
               "({P} − {P_experts}) · {states} · {bytes} / {shard} + {P_experts} · {states} · {bytes} / {expert_shard}",
               m.optimizerStates, "bytes", kSrcExpertShards,
               {{"P", Pr},
                {"P_experts", chosen.expertParams},
                {"states", in.statesPerParam},
                {"bytes", in.bo},
                {"shard", in.shardO},
                {"expert_shard", in.shardOE}});
    else if (sc.optimizer == OptimizerKind::Adafactor)
        derive(p, optimizer.quantity, "{factored_elements} · {bytes} / {shard}", m.optimizerStates, "bytes",
               "Shazeer & Stern 2018 (Adafactor): row + column second-moment factors per matrix, no momentum",
               {{"factored_elements", Pr * in.statesPerParam}, {"bytes", in.bo}, {"shard", in.shardO}});
    else
        derive(p, optimizer.quantity, optimizer.formula, m.optimizerStates, "bytes",
               "CS336 lecture 2 optimizer lattice: SGD 0, momentum/AdaGrad/RMSProp/Lion/Muon 1, Adam(W) 2 states",
               {{"P", Pr}, {"states", in.statesPerParam}, {"bytes", in.bo}, {"shard", in.shardO}});
}

void derivePeftStates(const LedgerInputs& in, const StageTensors& chosen, Plan& p)
{
    const auto& m = p.memory;
    const double base = chosen.memory.params - chosen.trainable, A = chosen.trainable;
    const char* src =
        "LoRA (Hu et al. 2021 §4.1): the pre-trained weights frozen, low-rank A and B trained; their "
        "gradients and optimizer states only (HF PEFT); QLoRA (Dettmers et al. 2023 §3) with the frozen linear "
        "weights in NF4, the embeddings, head and norms in the weight dtype; ZeRO shards as usual";
    const auto& weights = memoryBucket(Bucket::Weights);
    derive(p, weights.quantity,
           "(({P_base} − {P_quantised} + {P_adapters}) · {bytes} + {P_quantised} · {base_bytes} + {scales}) / {shard} "
           "+ {fp8_cache}",
           m.weights, "bytes", src,
           {{"P_base", base},
            {"P_quantised", chosen.quantised},
            {"P_adapters", A},
            {"bytes", in.bw},
            {"base_bytes", in.bq},
            {"scales", in.scales},
            {"shard", in.shardW},
            {"fp8_cache", chosen.fp8Cache}});
    derive(p, memoryBucket(Bucket::Gradients).quantity, "{P_adapters} · {bytes} / {shard}", m.gradients, "bytes", src,
           {{"P_adapters", A}, {"bytes", in.bg}, {"shard", in.shardG}});
    derive(p, memoryBucket(Bucket::MasterWeights).quantity, "{P_adapters} · {bytes} / {shard}", m.masterWeights,
           "bytes",
           "ZeRO §3.1's master copy, of the trained adapters only (0 bytes when the plan keeps none: QLoRA keeps none)",
           {{"P_adapters", A}, {"bytes", in.bm}, {"shard", in.shardO}});
    derive(p, memoryBucket(Bucket::OptimizerStates).quantity, "{P_adapters} · {states} · {bytes} / {shard}",
           m.optimizerStates, "bytes",
           "the optimizer's states of the trained adapters only (CS336 lecture 2 lattice: Adam(W) 2 per parameter); "
           "bitsandbytes' 8-bit states at 1 + 4/2048 bytes (fp32 under 4,096 elements) when precision.optimizer is "
           "int8_blockwise",
           {{"P_adapters", A}, {"states", in.statesPerParam}, {"bytes", in.bo}, {"shard", in.shardO}});
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
    const double inflightChosen = chosen.memory.inFlight; // the schedule's micro-batches on that stage (rank)
    if (in.isMlp) {
        const double D = double(sc.model.mlp.width);
        if (tr.recompute == Recompute::Full)
            derive(p, activations.quantity, "(ceil({L} / {k}) + {k}) · {B} · {D} · {bytes}", m.activations, "bytes",
                   "CS336 lecture 2: checkpoint every k layers of a chain, O(L/k + k), best near k = sqrt(L)",
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
    // One layer's kept tensors (memory.activation_tensors), with the source that counted them.
    auto derivePerLayer = [&](const char* source) {
        derive(p, "memory.activations_per_layer", "{s} · {b} · ({per_token} + {per_score} · {a} · {s}) + {stats}",
               lt.kept, "bytes", source,
               {{"s", sr},
                {"b", b},
                {"per_token", lt.keptPerToken},
                {"per_score", lt.keptPerScore},
                {"a", double(shape.heads)},
                {"stats", lt.keptStats}});
    };
    if (std::string_view(m.peakPhase) == "optimizer_step") {
        derivePerLayer("the kept tensors of memory.activation_tensors");
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
    derivePerLayer(in.eager ? "the kept tensors of memory.activation_tensors: eager PyTorch, what each ATen op's "
                              "backward saves (tools/autograd/derivatives.yaml; torchtitan's Llama block at 9dec370)"
                            : "the kept tensors of memory.activation_tensors: Korthikanti et al. 2022 §4.1 Table 2, "
                              "generalised to GQA, SwiGLU, QK-norm and models without dropout");
    if (chosen.mtpSaved > 0)
        derive(
            p, "memory.mtp_activations", "{mtp} · ({in_flight} · {per_layer} + {s} · {b} · {h} · 6 · {bytes} / {sp})",
            chosen.mtpSaved, "bytes",
            "multi-token prediction on the last stage (arXiv 2412.19437 §2.2; Megatron-Core "
            "multi_token_prediction.py): "
            "per depth one more layer's kept tensors (its input under full recompute) per micro-batch in flight, and "
            "hnorm/enorm inputs, eh_proj's concatenated input and the depth's final norm (6 values per token and "
            "channel); part of {outside} in memory.per_gpu.activations",
            {{"mtp", chosen.mtpLayers},
             {"in_flight", inflightChosen},
             {"per_layer", lt.kept},
             {"s", sr},
             {"b", b},
             {"h", double(shape.dModel)},
             {"bytes", in.e},
             {"sp", sc.parallel.sequenceParallel ? double(in.tp) : 1.0}});
    if (tr.recompute == Recompute::Full) {
        derive(p, activations.quantity,
               atBackward
                   ? (off ? "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {k} · {layer} + {outside} - {offloaded}"
                          : "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {k} · {layer} + {outside}")
                   : (off ? "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {outside} - {offloaded}"
                          : "ceil({L_stage} / {k}) · {boundary} · {in_flight} + {outside}"),
               m.activations, "bytes",
               "CS336 lecture 2 / Chen et al. 2016: checkpoint every k layers, O(L/k + k); boundary = the layer input "
               "(Korthikanti Table 2, full recompute); the k recomputed layers are back at backward_start",
               {{"L_stage", stageLayers},
                {"k", double(chosen.k)},
                {"boundary", chosen.boundary},
                {"in_flight", inflightChosen},
                {"layer", atBackward ? chosen.work : 0.0},
                {"outside", chosen.outside},
                {"offloaded", chosen.offloaded}});
        m.checkpointBestK = chosen.bestK;
        derive(p, "memory.checkpoint_best_k", "sqrt({L} · {boundary} / {layer})", chosen.bestK, "layers",
               "minimum of ceil(L/k) · boundary + k · layer (Chen et al. 2016 chain model)",
               {{"L", stageLayers}, {"boundary", chosen.boundary}, {"layer", chosen.work}});
    } else if (atBackward) {
        derive(
            p, activations.quantity,
            off ? "{L_stage} · {in_flight} · {per_layer} + {outside} + {recomputed} - {offloaded}"
                : "{L_stage} · {in_flight} · {per_layer} + {outside} + {recomputed}",
            m.activations, "bytes",
            "the kept tensors of every layer and micro-batch in flight, plus one layer's tensors the policy dropped, "
            "recomputed for its backward (the peak is at backward_start)",
            {{"L_stage", stageLayers},
             {"in_flight", inflightChosen},
             {"per_layer", lt.kept},
             {"outside", chosen.outside},
             {"recomputed", chosen.working},
             {"offloaded", chosen.offloaded}});
    } else {
        derive(p, activations.quantity,
               off ? "{L_stage} · {in_flight} · {per_layer} + {outside} - {offloaded}"
                   : "{L_stage} · {in_flight} · {per_layer} + {outside}",
               m.activations, "bytes",
               chosen.offloaded > 0
                   ? "Korthikanti et al. 2022 Table 2 per layer; offload.activations: all but two layers' "
                     "saved tensors on the host (Megatron-Core --cpu-offloading, double-buffered)"
                   : kSrcKorthikanti,
               {{"L_stage", stageLayers},
                {"in_flight", inflightChosen},
                {"per_layer", lt.kept},
                {"outside", chosen.outside},
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
               in.reduceScatterBuffers > 0 ? "{gathered} + {reduce_scatter}"
               : bucket > 0                ? "{gathered} + {bucket}"
                                           : "{gathered}",
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
               m.temporaries, "bytes", in.lossSource,
               {{"mtp", chosen.mtpLayers},
                {"s", sr},
                {"b", b},
                {"V", V},
                {"bytes_per_logit", in.lossBytesPerLogit},
                {"tp", double(in.tp)},
                {"gathered", m.gatheredWeights},
                {"bucket", bucket}});
    else
        derive(p, temporaries.quantity,
               bucket > 0 ? "{s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered} + {bucket}"
                          : "{s} · {b} · {V} · {bytes_per_logit} / {tp} + {gathered}",
               m.temporaries, "bytes", in.lossSource,
               {{"s", sr},
                {"b", b},
                {"V", V},
                {"bytes_per_logit", in.lossBytesPerLogit},
                {"tp", double(in.tp)},
                {"gathered", m.gatheredWeights},
                {"bucket", bucket}});
}

} // namespace napkin::core::detail
