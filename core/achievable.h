// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Achievable rates: each op of one rank at what the best kernels of its class reach on this GPU,
// not at the spec sheet's peak.
//
//   GEMM        t = max(F / min(C_ach, C_ach · eff(shape) / eff(measured shape)), Q / beta_ach)
//               C_ach: the GPU's maximum achievable matmul rate (published per GPU model, or measured
//               by napkin-probe); shape efficiency: tile and wave quantisation (NVIDIA, "Matrix
//               Multiplication Background User's Guide", §"Dimension Quantization Effects").
//   attention   t = max(F_exec / (C · eff_kernel · wave efficiency), Q / beta_ach)
//               F_exec: a causal kernel skips the masked tiles (FlashAttention-2 §3.1.1);
//               eff_kernel: the kernel's published fraction of the dense peak (forward, backward).
//   elementwise t = max(F / C_vector, Q / beta_ach), beta_ach a STREAM-class bandwidth.
//
// Power: cluster.power_limit below the TDP lowers the sustained clock as (limit / TDP)^(1/3).
// Not modelled: split-K heuristics beyond "fill the SMs", L2 reuse across kernels, thermal throttling.

#include "plan.h"

#include <memory>
#include <string>
#include <vector>

namespace napkin::core {

enum class AttentionKernel { Auto, Flash1, Flash2, Flash3 };

struct AttentionEfficiency {
    double forward = 0, backward = 0; // fractions of the dense peak at long sequences, head dim 128
    const char* source = "";
    // The same kernel at head dim 64 over head dim 128 (the papers' figures per head dim): a smaller
    // head does less matmul work per byte of Q, K, V and per softmax element.
    double forward64 = 1, backward64 = 1;
};

// attentionEfficiency's fraction at a head dimension: times `at64` at 64 and below (no smaller head
// was measured), 1 at 128 and above (FlashAttention-3 at 256 is no slower than at 128: Shah et al.
// 2024 Fig. 5), interpolated in log2(d) between (80, 96, 112: no published figure).
double attentionHeadDimFactor(double headDim, double at64);

// Published efficiency of a FlashAttention-class kernel on an NVIDIA compute capability (×10).
// Flash3 stands for the Hopper-native kernels (FlashAttention-3, cuDNN 9 fused attention); Flash1 for
// the first FlashAttention and its Triton port (flash_attn_triton.py, MosaicML's attn_impl triton).
AttentionEfficiency attentionEfficiency(AttentionKernel kernel, int computeCapability);

// A GEMM napkin-probe timed (calibration points gemm_shapes and gemm_m_sweep with a shape).
struct MeasuredGemm {
    double m = 0, n = 0, k = 0;
    double rate = 0; // FLOP/s
};
using MeasuredGemms = std::shared_ptr<const std::vector<MeasuredGemm>>;

// Transformer Engine's compute streams for grouped GEMMs (common/util/multi_stream.cpp).
inline constexpr int kGroupedGemmStreams = 4;

struct RateModel {
    double peak = 0;               // spec dense FLOP/s of the compute dtype
    double gemm = 0;               // achievable dense GEMM FLOP/s of the compute dtype
    double peak16 = 0, gemm16 = 0; // the same in 16 bits, for the ops a low-precision recipe keeps there
    double peak32 = 0, gemm32 = 0; // TF32, for GEMMs on fp32 operands: the spec's tf32 column, and the
                                   // 16-bit achievable figure at the same share of its peak
    double vector = 0;             // non-tensor FLOP/s
    double bandwidth = 0;          // achievable HBM bytes/s
    double specBandwidth = 0;
    double clock = 1; // sustained clock under cluster.power_limit / at TDP (tensor and vector units)
    // The GPU's sustained share of a burst tensor rate in 16 bits (gpus.json matmul_bf16_sustained_share),
    // applied to attention kernels: their fractions are the papers' short benchmarks, and they drive the
    // board to its power limit as GEMMs do (flashinfer-ai/flashinfer PR 2899: FlashAttention-4 on B200
    // back to back, SM clock 1965 -> ~1580 MHz at ~1000 W, 1450 -> 1237 TFLOP/s, -15%).
    double attentionSustained = 1;
    int sms = 0; // 0: no wave quantisation (not an SM-based device)
    int computeCapability = 0;
    AttentionEfficiency attention;
    double gemmShapeAtFigure = 1; // gemmShapeEfficiency at the shape the achievable figure was measured at
    // A calibration profile's measured GEMM shapes in the compute dtype and in 16 bits (null: none);
    // when present they correct the built-in shape curve (measuredShapeFactor).
    MeasuredGemms measured, measured16;
    int groupedStreams = 4; // GEMMs of a grouped GEMM that run at once (0: one grid over all groups)
    const char* gemmSource = "";
    const char* bandwidthSource = "";
};

// Fraction of a GEMM's tensor-core time that does useful work: C[m x n] in tiles (the best of the
// CUTLASS/cuBLAS tile shapes of this architecture), tiles spread over the SMs in waves; when there
// are fewer tiles than SMs, the K dimension may be split to fill them (split-K); each CTA's k loop
// pays a fixed pipeline fill and epilogue worth K0 elements: k_cta / (k_cta + K0). 1 for an SM-less
// device. The achievable figure is scaled by this efficiency relative to the one at the shape it
// was measured at (hardware.achievable_flops is a maximum: never exceeded).
double gemmShapeEfficiency(double m, double n, double k, double batch, int sms, int computeCapability);

// The GEMM rate at (m, n, k) from the built-in curve (`curve`, a function of the shape) corrected by
// measured shapes: each measured GEMM i gives c_i = rate_i / curve(shape_i); the factor at a shape is
// the weighted geometric mean of the c_i with weights 1 / d_i^4, d_i the distance in (log2 m, log2 n,
// log2 k), beside the curve itself (c = 1) at weight 1 / 2^4 (as if measured at a factor 4 away): at
// a measured shape the measurement, near one mostly it, far from all the curve (Shepard's inverse
// distance weighting, 1968). Never above the fastest measured rate or `cap`, whichever is larger.
double measuredGemmRate(double m, double n, double k, const std::vector<MeasuredGemm>& measured, double cap,
                        double (*curve)(double m, double n, double k, const void* context), const void* context);

// The per-tile fixed cost in elements of K for a compute capability (0: not modelled).
double gemmPipelineK0(int computeCapability);

// Tiles a causal attention kernel computes out of all (query blocks x key blocks), with 128-row
// blocks: (nb + 1) / (2 nb) for nb key blocks (FlashAttention-2 §3.1.1: blocks above the diagonal
// are skipped). 1 when not causal.
double causalExecutedFraction(double queries, double keys, bool causal);

// Fills executedFlops, achievableSeconds, efficiency and efficiencySource of op.
void applyAchievable(RooflineOp& op, const RateModel& rates);

} // namespace napkin::core

namespace napkin::core {

struct GpuSpec;
struct Scenario;

// hardware.peak_flops / bandwidth are the spec sheet's (also with a calibration profile: MFU and HFU
// are against the spec, as the industry reports them); hardware.achievable_* are the profile's
// measurements where it has them, else the catalogue's published achievable figures.
void resolveHardwareRates(HardwareSummary& hw, const GpuSpec& gpu, DType compute);

// A board power limit below the TDP: hw.clockFactor = (limit / TDP)^(1/3) (dynamic power ~ f·V², V ~
// f), applied to the achievable GEMM rate unless a calibration profile measured it (the probe ran
// at whatever limit the board had).
void applyPowerLimit(HardwareSummary& hw, const GpuSpec& gpu, DType compute, double powerLimitWatts);

// The rate model of a scenario's hardware (achievable rates, SMs, the attention kernel it runs).
RateModel rateModel(const Scenario& scenario, const HardwareSummary& hw);

// Dense TF32 FLOP/s for GEMMs on fp32 operands: the catalogue's tf32 column, else the 16-bit peak
// (a device without TF32 mode runs them no faster). The roofline ceiling and RateModel::peak32.
double tf32PeakFlops(const HardwareSummary& hw);

// Fills the achievable fields of every op of the plan (plan.ops).
void applyAchievableRates(Plan& plan, const Scenario& scenario);

} // namespace napkin::core
