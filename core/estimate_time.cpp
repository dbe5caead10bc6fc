// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The time and cost stage of estimate(): the step time (assumed MFU or predicted from the layout),
// training time, GPU-hours, cost and energy.

#include "achievable.h"
#include "estimate.h"
#include "estimate_stages.h"
#include "format.h"
#include "steptime.h"

#include <cmath>
#include <string>
#include <string_view>

namespace napkin::core::detail {

namespace {

// time.comm_sm_share: hidden traffic still holds SMs for its duration, term by term.
void deriveCommSmShare(Plan& p, const StepTimeBreakdown& st, double sms)
{
    static constexpr const char* kSource =
        "hidden traffic still holds SMs for its duration: one per NCCL channel for data-parallel traffic and "
        "Megatron's EP all-to-all overlap (a floor: NVIDIA developer forum t/337991), DeepEP's 20 (Megatron-Core "
        "moe_deepep_num_sms) or step_time.ep_comm_sms for its dispatcher's; DualPipe reserves 20 of them for "
        "its all-to-all and pipeline sends while the chunks compute (arXiv 2412.19437 §3.2.2 and §3.5.1: 'we allocate "
        "20 out of the 132 SMs ... which will limit the computational throughput'; deepseek-ai/profile-data: GEMM "
        "grids of 112 CTAs); Transformer Engine's userbuffers reduce-scatters 16, beside GEMMs that leave them free, "
        "the all-gathers on the copy engines (module/base.py initialize_ub)";
    // The formula strings live as long as the plan: one literal per combination of terms
    // [none, overlapped all-to-all, DualPipe][without, with userbuffers].
    static constexpr const char* kFormulas[3][2] = {
        {"{hidden} · {ctas} / {SMs}", "{hidden} · {ctas} / {SMs} + {tp_hidden} / 2 · {tp_sms} / {SMs}"},
        {"{hidden} · {ctas} / {SMs} + {pipe_hidden} · {pipe_sms} / {SMs}",
         "{hidden} · {ctas} / {SMs} + {pipe_hidden} · {pipe_sms} / {SMs} + {tp_hidden} / 2 · {tp_sms} / {SMs}"},
        {"{hidden} · {ctas} / {SMs} + {compute} · {pipe_sms} / ({SMs} - {pipe_sms})",
         "{hidden} · {ctas} / {SMs} + {compute} · {pipe_sms} / ({SMs} - {pipe_sms}) + {tp_hidden} / 2 · {tp_sms} / "
         "{SMs}"}};
    const bool dual = st.pipeCommSms > 0 && std::string_view(st.pipelineSchedule) == "dualpipe";
    const int pipe = st.pipeCommSms > 0 ? (dual ? 2 : 1) : 0, tp = st.tpCommSms > 0 ? 1 : 0;
    const char* formula = kFormulas[pipe][tp];
    const Term dp[] = {{"hidden", st.dpCommHidden}, {"ctas", st.ncclCtas}, {"SMs", sms}};
    const Term pipeHeld = dual ? Term{"compute", st.compute + st.recompute} : Term{"pipe_hidden", st.pipeCommHidden};
    const Term pipeSms{"pipe_sms", st.pipeCommSms}, tpHidden{"tp_hidden", st.tpCommHidden},
        tpSms{"tp_sms", st.tpCommSms};
    if (pipe > 0 && tp > 0)
        derive(p, "time.comm_sm_share", formula, st.commSmShare, "s", kSource,
               {dp[0], dp[1], dp[2], pipeHeld, pipeSms, tpHidden, tpSms});
    else if (pipe > 0)
        derive(p, "time.comm_sm_share", formula, st.commSmShare, "s", kSource,
               {dp[0], dp[1], dp[2], pipeHeld, pipeSms});
    else if (tp > 0)
        derive(p, "time.comm_sm_share", formula, st.commSmShare, "s", kSource, {dp[0], dp[1], dp[2], tpHidden, tpSms});
    else
        derive(p, "time.comm_sm_share", formula, st.commSmShare, "s", kSource, {dp[0], dp[1], dp[2]});
}

// DeepEP's one copy per target rank and per remote node (core/collectives.h deduplicatedCopies).
void deriveDeduplicatedDispatch(const Scenario& sc, Plan& p, const StepTimeBreakdown& st)
{
    const double k = double(sc.model.shape.moe.topK), n = st.epGroupRanks, N = st.epGroupNodes;
    const char* source = "DeepEP (get_dispatch_layout; internode dispatch over RDMA to the same local rank, "
                         "forwarded over NVLink; DeepSeek-V3 §3.2.2): one copy per rank holding any of a token's k "
                         "experts, one per remote node; balanced routing, k experts of E drawn without repetition: "
                         "P = Π over i < k of (E - c - i) / (E - i) that c given experts hold none";
    derive(p, "time.breakdown.ep_nvlink_share", "{N} · ({G} - 1) · (1 - {P_rank}) / {k}", st.epNvlinkShare, "", source,
           {{"N", N}, {"G", n / N}, {"P_rank", st.epMissRank}, {"k", k}});
    if (N <= 1)
        return;
    if (st.epNodeLimited)
        derive(p, "time.breakdown.ep_off_node_share", "({N} - 1) / {N} · {M} / {k}", st.epOffNodeShare, "",
               "node-limited routing (DeepSeek-V3 §3.2.2): a token's experts on M nodes, one copy to each remote one",
               {{"N", N}, {"M", double(sc.parallel.epNodeLimit)}, {"k", k}});
    else
        derive(p, "time.breakdown.ep_off_node_share", "({N} - 1) · (1 - {P_node}) / {k}", st.epOffNodeShare, "", source,
               {{"N", N}, {"P_node", st.epMissNode}, {"k", k}});
}

} // namespace

void estimateTimeAndCost(const Scenario& sc, double recomputePerToken, Plan& p, bool withPeak)
{
    const auto& c = p.compute;
    const auto& hw = p.hardware;
    auto& t = p.time;
    const double G = double(sc.cluster.gpus);
    applyAchievableRates(p, sc);
    p.stepTime = predictStepTime(sc, p);
    if (sc.stepTime.mode == TimeMode::Predicted && withPeak) // the spec-peak comparison of a predicted plan
        p.stepTimeAtPeak = predictStepTime(sc, p, true);
    const auto& st = p.stepTime;
    if (sc.stepTime.mode == TimeMode::Predicted && st.valid) {
        t.mode = "predicted";
        t.stepSeconds = st.step;
        derive(p, "time.step_seconds",
               "{compute} + {recompute} + {tp_comm} + {cp_comm} + {ep_comm} + {pp_comm} + {bubble} + {dp_comm} + "
               "{optimizer} + {offload} + {overheads}",
               t.stepSeconds, "s",
               "predicted: each op of one rank at its achievable rate + exposed communication (NCCL α–β) + the "
               "pipeline bubble + optimizer, offload traffic and the CPU update, clipping, launches and saves "
               "(core/steptime.h, core/offload.h; Narayanan et al. 2021)",
               {{"compute", st.compute},
                {"recompute", st.recompute},
                {"tp_comm", st.tpComm},
                {"cp_comm", st.cpComm},
                {"ep_comm", st.epComm},
                {"pp_comm", st.ppComm},
                {"bubble", st.bubble},
                {"dp_comm", st.dpComm},
                {"optimizer", st.optimizer},
                {"offload", st.offload},
                {"overheads", st.overheads}});
        if (st.commSmShare > 0)
            deriveCommSmShare(p, st, double(hw.gpu->smCount));
        if (st.tpAmaxReductions > 0)
            derive(p, "time.tp_amax_reduce", "{m} · {n} · {t}",
                   st.microBatches * st.tpAmaxReductions * st.tpAmaxSeconds, "s",
                   "Transformer Engine d0067d0da (linear.py, layernorm_linear.py: set_quantizer_amax_reduction_group; "
                   "quantizer.cpp: amax_reduction_group->allreduce(MAX)->wait()): under sequence parallelism a "
                   "current-scaling or NVFP4 quantizer reduces the amax of each column-parallel GEMM's input and "
                   "each row-parallel GEMM's output gradient over the TP group before the cast; n per micro-batch "
                   "on the slowest stage (again for the forward under full recompute), each a 4-byte NCCL "
                   "all-reduce priced at its latency (NCCL tuning model), on the critical path; included in tp_comm",
                   {{"m", st.microBatches}, {"n", st.tpAmaxReductions}, {"t", st.tpAmaxSeconds}});
        if (st.fsdpCopies > 0)
            derive(p, "time.fsdp_copies", "{m} · {bytes} / {bw}", st.fsdpCopies, "s",
                   "PyTorch FSDP2 (_fsdp_collectives.py foreach_all_gather_copy_out, foreach_reduce_scatter_copy_in): "
                   "per micro-batch each gather's buffer read and the unsharded parameters written, the gradients "
                   "read and written in the reduce dtype, on the compute stream at the memory-bound rate",
                   {{"m", st.microBatches}, {"bytes", st.fsdpCopyBytes}, {"bw", st.fsdpCopyBandwidth}});
        if (st.optimizer > 0) {
            const char* src =
                sc.optimizerImpl == OptimizerImpl::Foreach
                    ? "PyTorch foreach Adam(W) (torch/optim/adam.py _multi_tensor_adam): one pass per _foreach_* call, "
                      "4 e_p + 14 e_s + 2 e_g bytes per parameter of this rank's shard for AdamW (steptime.cpp "
                      "unfusedAdamBytes), at the memory-bound rate"
                : sc.optimizerImpl == OptimizerImpl::ForLoop
                    ? "a loop over the tensors, one kernel per operation, the first moment as mul_ then add_ (Composer "
                      "DecoupledAdamW, PyTorch _single_tensor_adam before 2.0): 4 e_p + 16 e_s + 2 e_g bytes per "
                      "parameter of this rank's shard for AdamW (steptime.cpp unfusedAdamBytes), at the memory-bound "
                      "rate"
                    : "fused multi-tensor Adam (Apex / Transformer Engine FusedAdam, PyTorch fused=True): one pass "
                      "reading and writing the master copy and each state, reading the gradient and writing the "
                      "weight, for this rank's shard, at the memory-bound rate";
            derive(p, "time.optimizer", "{bytes} / {bw}", st.optimizer, "s", src,
                   {{"bytes", st.optimizerBytes}, {"bw", st.optimizerBandwidth}});
        }
        if (st.epCommTotal > 0 && st.epNvlinkShare >= 0)
            deriveDeduplicatedDispatch(sc, p, st);
        if (st.chunkForward > 0)
            derive(
                p, "time.breakdown.bubble", "({p} / 2 - 1) · ({F} + {B} + {B} - 3 · {W})", st.bubble, "s",
                "DualPipe (arXiv 2412.19437 §3.2.1 Table 2): (PP/2 - 1)(F&B + B - 3W), F&B = F + B with the pair's "
                "all-to-all and sends hidden; F, B (recompute included) and W (weight-gradient GEMMs) of one "
                "micro-batch chunk on the slowest rank",
                {{"p", double(sc.parallel.pp)}, {"F", st.chunkForward}, {"B", st.chunkBackward}, {"W", st.chunkWgrad}});
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
        if (st.executedFlops > 0) {
            t.mfuCeiling = c.flopsPerStep / st.executedFlops * hw.achievableFlops / hw.peakFlops;
            derive(p, "time.mfu_ceiling", "{flops_per_step} / {executed_flops} · {C_ach} / {C}", t.mfuCeiling, "",
                   "every executed FLOP at the achievable GEMM rate, nothing else: no predicted MFU is above it",
                   {{"flops_per_step", c.flopsPerStep},
                    {"executed_flops", st.executedFlops},
                    {"C_ach", hw.achievableFlops},
                    {"C", hw.peakFlops}});
        }
    } else {
        t.mfu = sc.cluster.mfu;
        // The assumed MFU says nothing of offload's traffic and CPU update: the prediction does.
        if (st.valid && st.offload > 0 && st.step > 0)
            p.warnings.push_back({"offload_time_not_in_mfu",
                                  "offload adds " + humanNumber(st.offload, Quantity::Seconds) + " per step (" +
                                      std::to_string(int(std::lround(100 * st.offload / st.step))) +
                                      "% of the predicted step) that cluster.mfu does not account for; "
                                      "step_time.mode \"predicted\" includes it"});
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
}

} // namespace napkin::core::detail
