// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What Napkin computes from a Scenario: the three budgets, each number with its derivation.

#include "catalog.h"
#include "finetune.h"
#include "model.h"
#include "saved_tensors.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace napkin::core {

// One substituted symbol of a derivation: {P} in the formula becomes "P" in the formula text and
// the value in the substituted text.
struct Term {
    const char* symbol = "";
    double value = 0;
};

// formula: "6 · {P} · {T}"; terms give P and T. Rendered lazily (see format.h) so that estimate()
// stays allocation-light.
struct Derivation {
    // User-provided, so that a derivation built in place (derive()) is not zero-filled as a whole
    // first (240 bytes, a `rep stos` perf found at 8% of estimate()); `= default` would bring it back.
    Derivation() noexcept {}   // NOLINT(modernize-use-equals-default)
    const char* quantity = ""; // plan JSON path, e.g. "compute.training_flops"
    const char* formula = "";
    std::array<Term, 12> terms{};
    int termCount = 0;
    double value = 0;
    const char* unit = "";
    const char* source = "";
};

// One pipeline stage's tensors on one of its ranks (Megatron layout).
struct StageMemory {
    double params = 0;
    double weights = 0, gradients = 0, master = 0, optimizer = 0, activations = 0, temporaries = 0;
    double tensors = 0;                    // sum of the above (before runtime overhead)
    double inFlight = 0;                   // micro-batches whose activations the stage holds at its peak
    const char* peakPhase = "forward_end"; // where the stage's peak falls (MemoryLedger::peakPhase)
};

// How one model-state bucket is stored per parameter on the reported rank: values per parameter
// (1, or the optimizer's states) × bytes per value, divided by the ZeRO/FSDP shard count.
struct StateRate {
    double valuesPerParam = 0;
    double bytesPerValue = 0;
    double shard = 1;
    double bytesPerParam = 0; // valuesPerParam · bytesPerValue / shard
    bool offloaded = false;   // offload.* keeps this state on the host or NVMe: none of it on the GPU
};

// One communicator the reported rank belongs to, and the NCCL buffers it holds on the GPU
// (core/comm_buffers.h).
struct CommGroup {
    const char* name = ""; // "tp", "cp", "dp", "pp"
    double ranks = 0;      // ranks in the group; pp: the neighbouring stages this rank exchanges with
    bool crossesNodes = false;
    bool p2p = false;       // point-to-point sends (pp, the cp ring) rather than collectives
    double channels = 0;    // NCCL channels (per peer for p2p)
    double connections = 0; // buffer sets per channel (per peer for p2p)
    double bytes = 0;       // channels · connections · bytes per connection
    double nvlsBytes = 0;   // NVLink SHARP multicast buffers (NVSwitch systems)
};

// The communication runtime's GPU memory: NCCL buffers per communicator, and the data-parallel
// framework's buckets.
struct CommBuffers {
    std::array<CommGroup, 4> groups{};
    int count = 0;
    double nccl = 0;       // the groups' bytes + nvlsBytes
    double ddpBuckets = 0; // PyTorch DDP: buckets that copy the gradients (persistent)
    bool ddpCopiesGradients = false;
    double reduceBucket = 0;  // DeepSpeed ZeRO: the gradient reduction bucket, allocated for the backward
    double reduceScatter = 0; // FSDP2: one block's unsharded gradients + its reduce-scatter input (temporaries)
    double total = 0;         // what memory.per_gpu.overhead counts as comm buffers (nccl + ddpBuckets)
    bool given = false;       // overhead.comm_buffer_bytes was given: total is that number
};

// Where the offloaded bytes live (ZeRO-Offload / ZeRO-Infinity, activation offload) and what moving
// them costs per step (core/offload.h). Per GPU; the host's share of a node is per GPU as well.
struct HostMemory {
    double weights = 0, gradients = 0, master = 0, optimizer = 0, activations = 0;
    double pinnedBuffers = 0;            // staging buffers for NVMe transfers
    double pagedOptimizer = 0;           // optimizer.paged: states that page out to host memory when the GPU is short
    double total = 0;                    // host DRAM per GPU
    double nvme = 0;                     // bytes per GPU on NVMe (ZeRO-Infinity)
    double nvmeStates = 0;               // of which the optimizer's (master + moments), read and written each step
    double activationsPerMicroBatch = 0; // offloaded saved tensors of one micro-batch
    double perNode = 0;                  // total · GPUs on a node
    double capacityPerNode = 0;          // cluster.host_memory_bytes (0: not given, no check)
    bool fits = true;
    double pcieBytesPerStep = 0; // host link traffic per GPU per step, both directions
    double nvmeBytesPerStep = 0;
    double pcieBandwidth = 0; // achieved, one direction
};

// Allocated GPU bytes at one instant of the step, by kind (core/memory_timeline.h).
struct TimelinePoint {
    const char* event = ""; // "step_start", "forward_end", "loss", "backward_start", ...
    double at = 0;          // seconds from the start of the step
    double states = 0;      // weights + gradients + master + optimizer on the GPU
    double activations = 0;
    double temporaries = 0; // logits and loss path, gathered parameters, buckets, optimizer temporaries
    double runtime = 0;     // CUDA context, workspaces, comm buffers (not the allocator's reserve)
    double total = 0;       // allocated: the sum of the above
};
inline constexpr int kTimelineCapacity = 12;

// The most loaded stage's transient bytes at each phase of the step, from which the peak and the
// timeline are drawn (core/estimate_memory.cpp).
struct StepPhases {
    double states = 0;        // weights + gradients + master + optimizer on the GPU
    double saved = 0;         // saved tensors of every micro-batch in flight (incl. outside the layers)
    double working = 0;       // recomputed tensors back during a layer's backward
    double loss = 0;          // logits and the loss path (last stage)
    double gathered = 0;      // ZeRO-3 / FSDP parameters held all-gathered
    double bucket = 0;        // DeepSpeed's gradient reduction bucket (backward)
    double reduceScatter = 0; // FSDP2: a block's unsharded gradients and reduce-scatter input (blocks' backward)
    double optimizerTemp = 0; // the optimizer step's temporaries
    double inFlight = 1;
};

struct MemoryLedger {
    double weights = 0;
    double gradients = 0;
    double masterWeights = 0;
    double optimizerStates = 0;
    double activations = 0;
    double temporaries = 0;
    double overhead = 0;
    double total = 0;
    double capacity = 0;
    double headroom = 0;   // capacity - total (negative: short by)
    double tensorRoom = 0; // capacity - overhead, at least 0: what one stage's tensors may hold (per-stage chart)
    bool fits = false;
    // Detail
    double activationsPerLayer = 0; // stored per layer at the current micro-batch (Korthikanti row)
    // The layer's saved tensors one by one (core/saved_tensors.h), the policy they are kept under,
    // and what the policy's recompute brings back during one layer's backward.
    LayerTensors layerTensors;
    Recompute recompute = Recompute::None;
    std::uint8_t recomputeModules = 0;
    double rematerialised = 0;
    // Where in the step the reported peak falls: "forward_end" (every micro-batch in flight has run
    // its forward), "loss" (the logits and the fp32 loss path on the last stage), "backward_start"
    // (the first recomputed region back, the logits freed), "optimizer_step" (activations freed, the
    // update's temporaries). The buckets hold what they hold then.
    const char* peakPhase = "forward_end";
    // ZeRO-3 / FSDP full shard: parameters held unsharded at the peak (inside weights).
    double gatheredWeights = 0;
    bool weightsAreMaster = false;    // FSDP2 mixed precision: the sharded parameter is the master copy
    std::int64_t checkpointEvery = 0; // layers per checkpointed segment (full recompute)
    double checkpointBestK = 0;       // continuous optimum sqrt(L · boundary / layer), full recompute only
    double overheadContext = 0, overheadWorkspace = 0, overheadComm = 0, overheadAllocator = 0;
    double overheadCudaGraphs = 0;  // step_time.cuda_graphs: forward temporaries the graphs keep allocated
    double statesBytesPerParam = 0; // unsharded weights+grads+master+optimizer per parameter
    StateRate weightsRate, gradientsRate, masterRate, optimizerRate; // per bucket, sharded
    // Model parallelism (Megatron layout): the ledger above is the most loaded rank's.
    double paramsPerRank = 0;
    std::int64_t mostLoadedStage = 0;  // pipeline stage the ledger describes
    std::vector<StageMemory> perStage; // every pipeline stage, first to last (one entry when pp = 1)
    double bubbleFraction = 0;         // (p - 1) / (v · m); 0 without pipeline parallelism
    StepPhases phases;                 // the most loaded stage's phases (the timeline's inputs)
    CommBuffers comm;                  // inside overhead: NCCL buffers per communicator, DDP buckets
    HostMemory host;                   // offloaded bytes (offload.*) and their traffic
    // Allocated bytes through one step of the most loaded stage (forward ramp, backward, optimizer).
    std::array<TimelinePoint, kTimelineCapacity> timeline{};
    int timelineCount = 0;
};

// Mixture-of-experts run properties as they resolve for this layout (core/moe_run.cpp): what the
// expert-parallel step time and memory (issue 16) take, shown now so a plan can explain them.
struct MoeRun {
    bool applies = false;                // the model has routed experts
    std::int64_t expertRanks = 1;        // expert-parallel ranks (parallel.ep)
    std::int64_t expertTensorRanks = 1;  // parallel.etp, resolved
    std::int64_t expertDataParallel = 1; // EDP = tp·cp·dp / (etp·ep)
    bool crossesNodes = false;           // ep · etp > gpus_per_node: the all-to-all leaves the node
    double routingImbalance = 1;         // max / mean routed rows per expert rank, resolved
    double busiestRankLoad = 1;          // what the busiest rank carries: routingImbalance with ep > 1, else 1
    double routedTokens = 0;             // tokens a rank routes per micro-batch: s / cp · b (/ tp with SP)
    bool worst = false;                  // training.routing_imbalance "worst"
    double capacityFactor = 0;           // 0: dropless
    double rowsPerExpert = 0;            // mean routed rows per expert per micro-batch: T·k / E
    double expertCapacity = 0;           // rows per expert per micro-batch under the capacity factor (0: dropless)
    const char* expertWeights = "";      // storage dtype of the routed experts' weights
    double expertParamsPerRank = 0;      // routed-expert parameters on the ledger's rank
    double expertWeightBytesPerRank = 0; // their stored weights (0 when offloaded or FSDP2's master)
};

struct ComputeBudget {
    double flopsPerToken = 0; // model FLOPs per token (the chosen convention)
    double trainingFlops = 0; // model FLOPs for all tokens
    double hardwareFlops = 0; // including recomputation
    double flopsPerStep = 0;
    double tokensPerStep = 0;
    double steps = 0;
    std::int64_t accumulationSteps = 0;
    std::int64_t effectiveGlobalBatch = 0;
    std::int64_t requestedGlobalBatch = 0; // training.global_batch as written
    // More data-parallel ranks than global_batch / micro_batch: the batch the plan trains with is
    // larger than requested (at least twice). Said in the text, the JSON and a warning.
    bool batchScaled = false;
    std::int64_t dataParallel = 0;
    const char* convention = "";
};

struct TimeBudget {
    const char* mode = "mfu"; // "mfu": cluster.mfu assumed; "predicted": from the step-time model
    double seconds = 0;
    double days = 0;
    double gpuHours = 0;
    double mfu = 0;
    double hfu = 0;
    double stepSeconds = 0;
    double tokensPerSecond = 0;
    double mfuCeiling = 0; // model / executed FLOPs × achievable / spec GEMM rate: no predicted MFU is above it
};

// Predicted step time (core/steptime.h): seconds per optimizer step on the critical path.
struct StepTimeBreakdown {
    bool valid = false;
    double compute = 0;              // model work of all micro-batches, each op at its achievable rate
    double recompute = 0;            // recomputed forward work (selective or full)
    double tpComm = 0;               // tensor-parallel all-reduce / all-gather + reduce-scatter, exposed
    double cpComm = 0;               // context-parallel K/V ring traffic not hidden behind attention
    double ppComm = 0;               // pipeline point-to-point sends
    double epComm = 0;               // expert-parallel dispatch and combine all-to-all (not overlapped)
    double epBytesPerMicroBatch = 0; // what the busiest rank receives in them per micro-batch
    bool epCrossesNodes = false;
    double epBandwidth = 0;
    double epOffNodeShare = 0; // share of an all-to-all's bytes that leaves the node (node limit lowers it)
    double epNvlinkShare = -1; // share over NVLink under a de-duplicating dispatcher (deepep); -1: the rest
    double epGroupRanks = 0, epGroupNodes = 0; // the expert all-to-all's group: ranks and the nodes they span
    double epMissNode = 1, epMissRank = 1;     // deepep: chance a node's / a rank's experts hold none of a token's k
    bool epNodeLimited = false;                // parallel.ep_node_limit binds (deepep)
    bool edpCrossesNodes = false;              // the experts' data-parallel group (gradients of the routed experts)
    double edpBandwidth = 0;
    double bubble = 0;             // (p - 1) / v micro-batch slots of idle pipeline; DualPipe (p/2 - 1)(F&B + B - 3W)
    double dpComm = 0;             // data-parallel gradient / parameter traffic not overlapped
    double optimizer = 0;          // optimizer step: its bytes (optimizer.implementation) at achievable bandwidth
    double optimizerBytes = 0;     //   the update's memory traffic on this rank in one step
    double optimizerBandwidth = 0; //   the rate it runs at
    double offload = 0;            // offload.*: host-link / NVMe traffic not hidden, the CPU update (core/offload.h)
    // Overheads of a real step
    double launch = 0;            // per-kernel launch and framework time not hidden behind the GPU
    double gradClip = 0;          // gradient-norm clipping: a read of every local gradient + an all-reduce
    double checkpointSave = 0;    // checkpoint saves amortised per step (step_time.save_every_steps)
    double commSmShare = 0;       // compute slowed by the SMs communication kernels hold while traffic is hidden
    double fsdpCopies = 0;        // FSDP2's parameter copy-out and gradient copy-in on the compute stream
    double fsdpCopyBytes = 0;     //   their bytes per micro-batch (framework.h fsdpCopyBytes)
    double fsdpCopyBandwidth = 0; //   the memory-bound rate they run at (achievable, else spec)
    double overheads = 0;         // launch + gradClip + checkpointSave + commSmShare + fsdpCopies
    double dpCommHidden = 0;      // data-parallel traffic hidden behind compute (dpCommTotal - dpComm)
    double pipeCommHidden = 0;    // DualPipe: expert all-to-all and pipeline sends hidden behind the paired chunk
    double pipeCommSms = 0;       //   and the SMs its communication kernels hold meanwhile
    double tpCommHidden = 0;      // tensor-parallel traffic hidden behind the GEMMs (step_time.overlap_tp)
    double tpCommSms = 0;         //   and the SMs its reduce-scatters hold meanwhile (Transformer Engine userbuffers)
    double epCommTotal = 0;       // before overlap (DualPipe hides it)
    double ppCommTotal = 0;       // before overlap
    double chunkForward = 0, chunkBackward = 0, chunkWgrad = 0; // DualPipe's F, B, W on the slowest rank
    const char* pipelineSchedule = "1f1b";
    double ncclCtas = 0;          // CTAs (SMs) one NCCL collective holds: one per channel
    double step = 0;              // sum of the above
    double microBatches = 0;      // m: micro-batches per step on one replica (at least 1)
    double microBatchSeconds = 0; // one micro-batch through the slowest stage (compute + TP + CP + PP)
    double tokensPerSecond = 0;
    double mfu = 0;
    double hfu = 0;
    // Link bandwidths used (bytes/s, one direction, achieved) and whether each group crosses nodes.
    double tpBandwidth = 0, cpBandwidth = 0, ppBandwidth = 0, dpBandwidth = 0;
    bool tpCrossesNodes = false, cpCrossesNodes = false, ppCrossesNodes = false, dpCrossesNodes = false;
    double dpCommTotal = 0;          // before overlap
    double cpCommTotal = 0;          // before overlap
    double tpCommTotal = 0;          // before overlap
    double tpAmaxReductions = 0;     // amax all-reduces over TP per micro-batch (per-tensor FP8 scales under SP)
    double tpAmaxSeconds = 0;        //   one of them (α of a 4-byte all-reduce), part of tpComm
    double collectiveEfficiency = 0; // achieved / nominal link bandwidth used
    double executedFlops = 0;        // FLOPs the kernels execute per step, all GPUs (causal skipping, recompute)
    double kernelsPerMicroBatch = 0;
    const char* framework = "";
};

struct CostBudget {
    double usd = 0;
    double energyKwh = 0; // at TDP: an upper bound for the GPUs alone
};

struct HardwareSummary {
    std::shared_ptr<const GpuSpec> gpu; // id, name, sources
    const char* computeDtype = "";
    double peakFlops = 0; // dense, compute dtype (tensor cores): the spec sheet's, also with a profile
    // What the best kernels reach (core/achievable.h): a calibration profile's measurement, else the
    // catalogue's published figure (or its median-ratio fallback), scaled to the compute dtype.
    double achievableFlops = 0;
    // The GEMM shape (m, n, k) achievableFlops was measured at: the shape model is calibrated there.
    std::array<double, 3> achievableFlopsShape{8192, 8192, 8192};
    // The catalogue's sustained share of that figure (a GPU held at its power limit, measured by
    // napkin-probe), already applied to achievableFlops; 1 where none is recorded or a profile measured.
    double sustainedShare = 1;
    double achievableBandwidth = 0;
    double vectorFlops = 0; // dense fp32 non-tensor rate (elementwise ops)
    double bandwidth = 0;
    double ridge = 0; // peakFlops / bandwidth
    double memoryBytes = 0;
    double tdpWatts = 0;
    // cluster.power_limit below the TDP: the sustained SM clock falls as the cube root of the power
    // (core/achievable.h). 1 without a cap.
    double powerLimitWatts = 0;
    double clockFactor = 1;
    // With an FP8 / FP4 recipe (precision.recipe): the 16-bit rates of the ops it keeps in BF16
    // (attention, the output layer); equal to the above without one.
    double peakFlops16 = 0;
    double achievableFlops16 = 0;
    const char* recipe = "none";        // precision.recipe, resolved
    std::uint8_t lowPrecisionGemms = 0; // the GEMM classes it runs in the compute dtype (0 without a recipe)

    const std::string& id() const { return gpu->id; }
    const std::string& name() const { return gpu->name; }
    // "spec sheet: URL", or for a calibration profile "measured by napkin-probe (FILE): gemm_bf16 ..."
    // (or "spec (not measured in FILE): ..." for a column the probe did not measure). estimate.cpp.
    std::string source() const;
    std::string bandwidthSource() const;
    std::string memorySource() const;
    std::string tdpSource() const;
    std::string achievableFlopsSource() const;
    std::string achievableBandwidthSource() const;
};

enum class Pass { Forward, Backward };
enum class Bound { Memory, Compute };
enum class OpUnit { Tensor, Vector }; // which ceiling the op runs against
// What kind of kernel runs the op (core/achievable.h picks its achievable rate from this).
enum class OpKind { Gemm, Attention, Elementwise };

struct RooflineOp {
    const char* name = "";
    Pass pass = Pass::Forward;
    OpUnit unit = OpUnit::Tensor;
    double flops = 0;
    double bytes = 0;
    double intensity = 0;
    double ceiling = 0;     // FLOP/s of the unit it runs on
    double attainable = 0;  // min(ceiling, bandwidth * intensity)
    double timeSeconds = 0; // max(F / C, Q / beta)
    Bound bound = Bound::Memory;
    double count = 1;                // times per step on this GPU's micro-batch (layers)
    bool highPrecision = false;      // a low-precision recipe keeps this tensor op in 16 bits (core/lowprecision.h)
    bool tf32 = false;               // fp32 operands: TF32 rates (the fp32 router's backward GEMMs)
    double kernels = 1;              // kernel launches it takes (eager frameworks split an op into several)
    const char* implementation = ""; // the kernels it runs (core/kernels.h); "" for one plain kernel
    // Shape: a GEMM's M, N, K over `batch` independent products; attention: queries (m) and keys
    // (n) per head, head dimension (k), batch · heads (batch), causal masking.
    OpKind kind = OpKind::Elementwise;
    double m = 0, n = 0, k = 0, batch = 1;
    bool causal = false;
    double chunks = 1; // a GEMM run as `chunks` GEMMs of m / chunks rows one after another (TP overlap)
    // A mixture of experts' MLP GEMM: `groupedShare` of its FLOPs is one grouped GEMM over the rank's
    // local experts (grouped[3] of them), each grouped[0] rows x grouped[1] x grouped[2] deep.
    double groupedShare = 0;
    std::array<double, 4> grouped{};
    // At achievable rates (core/achievable.h): FLOPs the kernel executes (a causal attention kernel
    // skips the masked tiles), its time, efficiency = the roofline bound of the executed work at spec
    // rates / achievableSeconds (at most 1) and where the rate comes from.
    double executedFlops = 0;
    double achievableSeconds = 0;
    double efficiency = 0;
    const char* efficiencySource = "";
};

struct Warning {
    std::string code;
    std::string message;
};

struct Plan {
    std::string scenarioName; // the scenario's own name: "" when the user wrote none
    std::string modelName;
    // What derivedName() names: training.tokens (0: none given) and cluster.gpus; the GPU is
    // hardware.name(). Stored as numbers and formatted on demand: estimate() runs on every slider
    // step, the name is needed only when a plan is shown.
    double nameTokens = 0;
    std::int64_t nameGpus = 0;
    // What the plan is: "model, tokens, GPUs" (core/format.cpp).
    std::string derivedName() const;
    // The name to show: the user's, else the derived one (never the default document's).
    std::string title() const { return scenarioName.empty() ? derivedName() : scenarioName; }
    ParamCounts params;
    FinetuneCounts finetune; // what trains and what stays frozen (finetune.method)
    MemoryLedger memory;
    ComputeBudget compute;
    TimeBudget time;
    StepTimeBreakdown stepTime;
    StepTimeBreakdown stepTimeAtPeak; // the same layout with every op at its roofline bound, links nominal
    CostBudget cost;
    HardwareSummary hardware;
    MoeRun moe;
    std::vector<RooflineOp> ops; // one layer forward and backward, then the logits
    std::vector<Derivation> derivations;
    bool recordDerivations = true; // false in estimateForSearch(): derive() writes to a scratch entry
    std::vector<Warning> warnings;
};

const char* toString(Pass p);
const char* toString(Bound b);

} // namespace napkin::core
