// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A training plan as the user states it (napkin.scenario/1), resolved against the catalogues.

#include "catalog.h"
#include "errors.h"
#include "finetune.h"
#include "lowprecision.h"
#include "model.h"
#include "saved_tensors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace napkin::core {

enum class OptimizerKind { Sgd, Momentum, AdaGrad, RmsProp, Adam, AdamW, Lion, Adafactor, Muon };
// How the optimizer update runs (optimizer.implementation). Fused: one kernel pass over each tensor
// (Apex / Transformer Engine FusedAdam in Megatron-LM and DeepSpeed, PyTorch fused=True); foreach:
// PyTorch's multi-tensor path, one pass per _foreach_* call (torch/optim/adam.py _multi_tensor_adam);
// forloop: a loop over the tensors with the first moment as mul_ then add_ (Composer's DecoupledAdamW,
// PyTorch's _single_tensor_adam before 2.0). Auto is fused: the default of Megatron-LM, DeepSpeed and
// today's torchtitan.
enum class OptimizerImpl { Auto, Fused, Foreach, ForLoop };
enum class FlopsConvention { Auto, SixPT, Palm, Megatron, MegatronCore };
// PyTorch FSDP sharding strategies (Zhao et al. 2023, PyTorch FSDP): FULL_SHARD is ZeRO-3,
// SHARD_GRAD_OP is ZeRO-2, HYBRID_SHARD is ZeRO-3 inside a node and replication across nodes.
enum class Fsdp { None, Full, GradOp, Hybrid };
// Pipeline schedules (parallel.pipeline_schedule): 1F1B and its interleaved form (Narayanan et al.
// 2021 §2.2), and DeepSeek's bidirectional DualPipe (arXiv 2412.19437 §3.2.1, deepseek-ai/DualPipe):
// each rank holds stage i and stage pp − 1 − i and feeds micro-batches from both ends.
enum class PipelineSchedule { OneFOneB, Interleaved, DualPipe };
enum class TimeMode { Mfu, Predicted };
// Whose rules decide what overlaps with what in the predicted step (core/framework.h).
enum class Framework { Auto, Megatron, Torchtitan, Deepspeed };
// How a mixture of experts' tokens reach their experts (step_time.moe_dispatcher): Megatron-Core's
// all-to-all dispatcher permutes before the all-to-all and sorts by local expert after it; DeepEP
// (DeepSeek's kernels, Megatron-Core's flex dispatcher) lays the received tokens out by expert itself.
enum class MoeDispatcher { AllToAll, DeepEp };
// How the routed experts' GEMMs run (step_time.grouped_gemm): Transformer Engine's grouped GEMM, one
// cuBLAS GEMM per local expert on 4 streams (what Megatron-Core runs), or one kernel over every
// expert's tiles (CUTLASS grouped GEMM, DeepGEMM).
enum class GroupedGemm { Streams, Single };
// The loss kernel (step_time.cross_entropy): the framework's unfused loss, or a fused cross-entropy
// that reads the logits and writes their gradient in place in the forward (Transformer Engine's
// Triton kernel: Megatron's --cross-entropy-loss-fusion --cross-entropy-fusion-impl te).
enum class CrossEntropyChoice { Auto, Unfused, Fused };
enum class AttentionKernelChoice { Auto, Flash1, Flash2, Flash3 };
// How the elementwise ops of a layer run (core/kernels.h): fused kernels (Megatron/Transformer
// Engine, Apex, torch.compile) read and write each tensor once; eager PyTorch runs every ATen op of
// the model's Python code as its own kernel, with fp32 intermediates where the code upcasts.
enum class KernelFusion { Auto, Fused, Eager };

// The router's load-balancing loss (training.moe_aux_loss; Megatron-Core
// --moe-router-load-balancing-type): its kernels run in every MoE layer (core/kernels.h routerCost).
// Auto: seq_aux_loss for a model with a score-correction bias (DeepSeek-V3's aux-loss-free balancing
// keeps a small sequence-wise loss, arXiv 2412.19437 §2.1.2), else aux_loss (Megatron-Core's default).
enum class MoeAuxLoss { Auto, None, AuxLoss, SeqAuxLoss, GlobalAuxLoss };

struct TrainingConfig {
    double tokens = 0;
    std::int64_t seqLen = 0;
    std::int64_t microBatch = 0;
    std::int64_t globalBatch = 0;
    Recompute recompute = Recompute::None;
    std::uint8_t recomputeModules = 0; // training.recompute_modules bits (core/saved_tensors.h)
    std::int64_t checkpointEvery = 0;  // 0: auto (round(sqrt(L)))
    bool flashAttention = true;
    // Mixture-of-experts run properties (moe-notes.md §3): the load of the busiest expert-parallel
    // rank over the mean (1: balanced; "worst": every token's k experts on one rank), and the
    // per-expert capacity factor (nullopt: dropless, Megatron-Core's default).
    double routingImbalance = 1;
    bool routingImbalanceWorst = false;
    std::optional<double> capacityFactor;
    MoeAuxLoss moeAuxLoss = MoeAuxLoss::Auto;
    // training.moe_router_dtype "fp32" (Megatron-Core --moe-router-dtype fp32): the router's GEMM writes
    // fp32 logits and its backward runs on fp32 operands (core/roofline.cpp routerFp32); "auto": the
    // activation dtype, Megatron-Core's default.
    bool moeRouterFp32 = false;
};

struct PrecisionConfig {
    std::string plan;
    DType weights = DType::Bf16;
    DType gradients = DType::Bf16;
    std::optional<DType> master;
    DType optimizer = DType::Fp32;
    DType activations = DType::Bf16;
    DType compute = DType::Bf16;
    // Storage dtype of the routed experts' weights (gpt-oss ships them in MXFP4); nullopt: weights.
    std::optional<DType> expertWeights;
    // precision.optimizer "int8_blockwise": bitsandbytes' 8-bit states (core/finetune.h), fp32 for
    // tensors under 4,096 elements (optimizer then holds Fp32).
    bool optimizerInt8Blockwise = false;
    // FP8 / FP4 recipe (core/lowprecision.h): resolved; "auto" follows the compute dtype (fp8: delayed
    // scaling, mxfp8, nvfp4; 16-bit: none). The GEMM classes it runs in the compute dtype.
    LowPrecisionRecipe recipe = LowPrecisionRecipe::None;
    bool recipeAuto = true;
    std::uint8_t lowPrecisionGemms = kLowDefault;
    // precision.fp8_param_gather (Megatron-Core --fp8-param-gather, Transformer Engine's quantized model
    // init): the low-precision GEMMs' weights are stored in the recipe's format, with no 16-bit copy.
    bool fp8ParamGather = false;
};

struct ClusterConfig {
    std::string gpuId;
    std::int64_t gpus = 1;
    double mfu = 0.5;
    double pricePerGpuHour = 0;
    double powerLimitWatts = 0;     // board power limit; 0: the GPU's TDP (no cap)
    double hostMemoryBytes = 0;     // host DRAM per node; 0: not given (no check)
    double hostMemoryBandwidth = 0; // host DRAM bytes/s per node; 0: auto (kDefaultHostMemoryBandwidth)
};

// How context-parallel attention exchanges the sequence (Megatron-Core / Transformer Engine
// --cp-comm-type): p2p rings K and V past the cp ranks behind each block's attention (Liu et al.
// 2023); all_gather gathers K and V before attention and reduce-scatters their gradients after
// (Llama 3, Dubey et al. 2024 §3.3.2: "the all-gather communication latency is exposed");
// a2a exchanges heads for sequence before and after attention (DeepSpeed-Ulysses, Jacobs et al. 2023).
enum class CpComm { P2p, AllGather, A2a };

struct ParallelConfig {
    int zeroStage = 0;
    // Megatron-LM layout (Narayanan et al. 2021): GPUs = tp · pp · cp · dp.
    int tp = 1;
    int pp = 1;
    int virtualStages = 1; // interleaved pipeline chunks per stage
    int cp = 1;            // context parallelism: the sequence split over cp ranks
    CpComm cpComm = CpComm::P2p;
    std::int64_t dp = 0; // resolved: GPUs / (tp · pp · cp)
    bool sequenceParallel = false;
    int gpusPerNode = 8;
    Fsdp fsdp = Fsdp::None;
    // Uneven pipeline stages (Megatron-LM --decoder-first/last-pipeline-num-layers): the first and
    // last stage hold these many layers, the middle stages split the rest equally; or an explicit
    // layers-per-stage list (pipeline_layout). Empty / 0: L / pp on every stage.
    int firstStageLayers = 0;
    int lastStageLayers = 0;
    std::vector<int> pipelineLayout;
    // Expert parallelism (Megatron-Core): the routed experts split over ep ranks, each expert's
    // matrices over etp; the MoE layers fold ETP · EP · EDP · PP onto the GPUs TP · CP · DP · PP
    // cover, so EDP = tp · cp · dp / (etp · ep) (megatron/core/parallel_state.py
    // initialize_model_parallel, expert_tensor_parallel_size).
    int ep = 1;  // resolved: 1 for a model without routed experts
    int etp = 1; // resolved: tp when "auto"
    bool etpAuto = true;
    std::int64_t edp = 1; // resolved: expert data-parallel ranks
    int epUnused = 0;     // an ep > 1 given for a model without routed experts (warned, then 1)
    // Node-limited routing (DeepSeek-V3 §3.2.2): each token's experts lie on at most this many nodes,
    // and the dispatch sends one copy per remote node, fanned out over NVLink there. 0: no limit.
    int epNodeLimit = 0;
    // Resolved: "auto" is interleaved when virtual_stages > 1, else 1F1B.
    PipelineSchedule schedule = PipelineSchedule::OneFOneB;
    bool scheduleAuto = true;
};

// DualPipe's micro-batch rule (deepseek-ai/DualPipe dualpipe.py: num_chunks even and >= 2 · num_ranks):
// m micro-batches per step and replica on pp stages.
bool dualPipeMicroBatchesOk(std::int64_t m, std::int64_t pp);
// The schedule a layout runs: DualPipe when asked for, else interleaved when v > 1, else 1F1B.
PipelineSchedule resolvedSchedule(PipelineSchedule requested, int virtualStages);
// Expert data parallelism EDP = tp · cp · dp / (ep · etp) (Megatron-Core's folding rule), at least 1.
std::int64_t expertDataParallelSize(const ParallelConfig& parallel);

// Layers each pipeline stage holds, first to last (parallel.*_stage_layers, pipeline_layout, or
// L / pp). The embedding sits on the first stage, the output layer and loss on the last.
std::vector<double> stageLayerCounts(const ParallelConfig& parallel, std::int64_t layers);

// How step time is obtained: the seeds' "assume an MFU", or predicted from per-op roofline times
// plus communication over the interconnect (core/steptime.h).
struct StepTimeConfig {
    TimeMode mode = TimeMode::Mfu;
    double intraNodeBandwidth = 0;    // bytes/s per GPU, one direction; 0: auto (catalogue interconnect / 2)
    double interNodeBandwidth = 5e10; // bytes/s per GPU, one direction (one 400 Gb/s NIC per GPU)
    bool overlapDp = true;            // resolved: data-parallel traffic overlaps compute
    bool overlapDpAuto = true;        // overlap_dp was "auto": the framework's rule
    bool overlapTp = false;           // resolved: tensor-parallel collectives overlap the GEMMs
    bool overlapTpAuto = true;
    // Resolved: sharded parameters are copied out of the all-gather buffer and gradients into the
    // reduce-scatter buffer on the compute stream (PyTorch FSDP2; "auto": torchtitan's rule,
    // core/framework.h fsdpCopyBytes). FSDP1 gathers into its flat parameter and casts on a side stream.
    bool fsdpCopies = false;
    bool fsdpCopiesAuto = true;
    // Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm with
    // --delay-wgrad-compute): a micro-batch's forward runs beside another's backward, each one's
    // dispatch and combine behind the other's compute. Opt-in in every framework ("auto": false).
    bool overlapEp = false;
    bool overlapEpAuto = true;
    // The MoE dispatch (and the backward's gradient dispatch) in FP8 with 1 x 128 scales, the combine in
    // BF16 (DeepSeek-V3 §3.3.3). Resolved: "auto" is on with the blockwise recipe.
    bool fp8Dispatch = false;
    bool fp8DispatchAuto = true;
    // The router's softmax, top-k and load-balancing loss as Transformer Engine's fused kernels
    // (Megatron-Core --moe-router-fusion) rather than PyTorch ops. "auto": off (Megatron-Core's default).
    bool moeRouterFusion = false;
    bool moeRouterFusionAuto = true;
    MoeDispatcher moeDispatcher = MoeDispatcher::AllToAll;
    // SMs the expert-parallel dispatch and combine kernels hold while their traffic hides behind compute
    // (step_time.ep_comm_sms; 0: "auto", the dispatcher's default, core/steptime.cpp chargeHiddenTrafficSms).
    int epCommSms = 0;
    GroupedGemm groupedGemm = GroupedGemm::Streams;
    CrossEntropyChoice crossEntropy = CrossEntropyChoice::Auto; // Auto: the framework's default (unfused)
    Framework framework = Framework::Auto;                      // resolved (never Auto after parseScenario)
    bool frameworkAuto = true;
    AttentionKernelChoice attentionKernel = AttentionKernelChoice::Auto; // Auto: the framework's kernel
    KernelFusion kernelFusion = KernelFusion::Auto;                      // resolved (never Auto after parseScenario)
    bool kernelFusionAuto = true;
    bool cudaGraphs = false;         // CUDA graphs replay the step: no per-kernel CPU launch cost
    double collectiveEfficiency = 0; // achieved bus bandwidth / nominal link rate; 0: auto (sourced default)
    std::int64_t saveEverySteps = 0; // checkpoint saves; 0: none counted
    double saveBandwidth = 0;        // bytes/s per GPU writing its shard (required with saves)
};

struct OverheadConfig {
    double cudaContextBytes = 0;
    double workspaceBytes = 0;
    std::optional<double> commBufferBytes; // nullopt: auto (0 on one GPU)
    double allocatorFraction = 0;
};

// ZeRO-Offload (Ren et al. 2021) and ZeRO-Infinity (Rajbhandari et al. 2021): where model states
// live during the step; activation offload (Megatron-Core --cpu-offloading) moves saved tensors to
// the host between a layer's forward and its backward.
enum class OffloadTarget { None, Cpu, Nvme };

struct OffloadConfig {
    OffloadTarget optimizer =
        OffloadTarget::None; // master copy, optimizer states (and ZeRO-2 gradients); the update on the CPU
    OffloadTarget params = OffloadTarget::None; // the sharded parameters (ZeRO-3 / FSDP full shard only)
    bool activations = false;                   // offload.activations "cpu"
    double nvmeBandwidth = 0;                   // bytes/s per GPU, read or write (required with nvme)
    double pcieBandwidth = 0;                   // bytes/s one direction, achieved; 0: auto
    bool any() const { return optimizer != OffloadTarget::None || params != OffloadTarget::None || activations; }
};

struct Scenario {
    std::string name;
    ModelSpec model;
    TrainingConfig training;
    PrecisionConfig precision;
    OptimizerKind optimizer = OptimizerKind::AdamW;
    PagedOptimizer pagedOptimizer;                     // optimizer.paged
    OptimizerImpl optimizerImpl = OptimizerImpl::Auto; // optimizer.implementation
    FinetuneConfig finetune;                           // the finetune section (core/finetune.h)
    ClusterConfig cluster;
    // Resolved cluster.gpu, shared with every Plan made from this scenario (no string copies).
    std::shared_ptr<const GpuSpec> gpu = std::make_shared<const GpuSpec>();
    ParallelConfig parallel;
    FlopsConvention flops = FlopsConvention::Auto;
    // Names the reader resolved for the user ("h100" -> h100-sxm): each becomes an "alias" warning.
    std::vector<std::string> aliasNotes;
    OverheadConfig overhead;
    StepTimeConfig stepTime;
    OffloadConfig offload;
};

// The sharding stage that applies (FSDP strategies map to ZeRO stages); the ranks the gradients are
// reduced over, data × context parallel (context-parallel ranks hold the same parameters); and the
// ranks the states are sharded over: that group, or under HYBRID_SHARD its ranks inside one node.
// dp: the data-parallel degree.
int effectiveZeroStage(const Scenario& scenario);
std::int64_t gradientGroupSize(const Scenario& scenario, std::int64_t dp);
std::int64_t shardGroupSize(const Scenario& scenario, std::int64_t dp);

// Host DRAM bandwidth of a node when cluster.host_memory_bandwidth is "auto": two sockets of eight
// DDR5-4800 channels (38.4 GB/s each, JEDEC JESD79-5), as the DGX H100's two Xeon Platinum 8480C
// (NVIDIA DGX H100 user guide). The CPU optimizer step is bound by it (core/offload.h).
constexpr double kDefaultHostMemoryBandwidth = 2 * 8 * 38.4e9;

const char* toString(OffloadTarget t);
const char* toString(OptimizerKind o);
const char* toString(FlopsConvention f);
const char* toString(Fsdp f);
const char* toString(PipelineSchedule s);
const char* toString(TimeMode m);
const char* toString(Framework f);
const char* toString(AttentionKernelChoice k);
const char* toString(KernelFusion k);
int optimizerStates(OptimizerKind o); // per parameter; Adafactor is factored (see ledger)

// The built-in default scenario document (resources/default-scenario.json).
const nlohmann::json& defaultScenarioJson();

// base with user's keys laid over it; "model" is replaced whole, other sections key by key.
nlohmann::json mergeScenario(const nlohmann::json& base, const nlohmann::json& user);

// ZeRO stages and FSDP strategies are two names for one choice (a ZeRO stage other than 0 beside an
// FSDP strategy is an error): after `changedPath` was set, the one set last decides (parallel.fsdp
// set to a strategy zeroes parallel.zero; parallel.zero set beside a strategy turns FSDP off).
// Likewise training.recompute set to anything but "full" resets training.checkpoint_every to "auto";
// set to "modules" it starts training.recompute_modules at ["core_attn"], set to another drops it.
void resolveShardingChoice(nlohmann::json& doc, std::string_view changedPath);

// Applies PATH=VALUE. VALUE is parsed as JSON when valid, else taken as a string. Setting
// model.preset, model.hf_config, model.params or model.kind replaces the model.
void applySet(nlohmann::json& doc, std::string_view assignment, Errors& errors);
// The same with VALUE already parsed (the app's controls, a Make-it-fit change): nothing is printed
// and read back as text.
void setPath(nlohmann::json& doc, const std::string& path, const nlohmann::json& value, Errors& errors);

// Reads a file's text (HF configs); returns nullopt with an error message when unreadable.
using FileReader = std::function<std::optional<std::string>(const std::string& path, std::string& error)>;
std::optional<std::string> readTextFile(const std::string& path, std::string& error);

// Parses a complete scenario document (defaults already merged) strictly. baseDir resolves
// relative hf_config paths.
Scenario parseScenario(const nlohmann::json& doc, const Catalog& catalog, Errors& errors,
                       const std::string& baseDir = {}, const FileReader& reader = readTextFile);

// Text of a scenario file -> merged over the defaults -> parsed. JSON syntax errors are user errors.
std::optional<nlohmann::json> parseScenarioText(std::string_view text, const std::string& origin, Errors& errors);

// The default scenario, parsed.
Scenario defaultScenario();

} // namespace napkin::core
