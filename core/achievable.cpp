// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "achievable.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace napkin::core {

namespace {

// A CTA tile of 2^m x 2^n outputs (every library tile side is a power of two: the tile counts are
// shifts, not divisions, on the layout search's hot path).
struct Tile {
    int mShift, nShift;
};

// CTA tile shapes the GEMM libraries pick from (CUTLASS's default Ampere and Hopper tile shapes;
// cuBLAS heuristics choose among the same family). One CTA per SM at these sizes.
// Ampere: 256x128, 128x256, 128x128, 128x64, 64x128, 64x64; Hopper: 128x256, 256x128, 128x128, 64x128.
constexpr Tile kAmpereTiles[] = {{8, 7}, {7, 8}, {7, 7}, {7, 6}, {6, 7}, {6, 6}};
constexpr Tile kHopperTiles[] = {{7, 8}, {8, 7}, {7, 7}, {6, 7}};

constexpr double kAttentionBlock = 128; // FlashAttention-2/3 query and key block rows (head dim 128)

constexpr const char* kSrcFlash2Ampere =
    "Dao 2023 (FlashAttention-2, arXiv 2307.08691) §4.1 Figs. 4-5, A100, head dim 128, causal, seq 2k-16k: "
    "forward ~70% of the dense peak (up to 73%), backward ~55%; head dim 64: x0.90 (Fig. 4, forward + backward), "
    "interpolated in log2 d up to 128";
constexpr const char* kSrcFlash2Hopper =
    "Shah et al. 2024 (FlashAttention-3, arXiv 2407.08608) Figs. 4-5, FlashAttention-2 on H100 SXM5, head dim "
    "128, causal: ~330 TFLOP/s forward, ~310 backward (read from the figures; pytorch/benchmark PR 2296 measured "
    "SDPA at 287-304 TFLOP/s forward); head dim 64: x0.87 (FlashAttention-2 paper Fig. 7, forward + backward), "
    "interpolated in log2 d up to 128";
constexpr const char* kSrcFlash3 =
    "Shah et al. 2024 (FlashAttention-3, arXiv 2407.08608) Figs. 4-5, H100 SXM5, head dim 128, causal, seq "
    "2k-16k: ~610 TFLOP/s forward (up to 740 non-causal), ~500 backward (read from the figures); cuDNN 9 fused "
    "attention, which Transformer Engine uses, is of the same class; head dim 64: x0.77 forward, x0.85 backward "
    "(Figs. 5-6), interpolated in log2 d up to 128";
constexpr const char* kSrcFlash3Blackwell =
    "FlashAttention-3's H100 fractions (Shah et al. 2024) assumed for Blackwell: no per-kernel figure published "
    "for it in this catalogue";
constexpr const char* kSrcGroupedGemm =
    "hardware.achievable_flops scaled by the shape efficiency; the routed experts' share as one grouped GEMM over the "
    "local experts in one grid of every expert's tiles (step_time.grouped_gemm single: CUTLASS grouped GEMM, "
    "DeepGEMM), rows per "
    "expert = tokens x top-k x ep / experts (roofline.ops[].grouped_gemm)";
constexpr const char* kSrcGroupedGemmStreams =
    "hardware.achievable_flops scaled by the shape efficiency; the routed experts' share as Transformer Engine's "
    "grouped GEMM runs it (GroupedLinear -> nvte_multi_tensor_gemm, common/gemm/cublaslt_gemm.cu: one cuBLAS GEMM "
    "per local expert, round-robin on 4 compute streams, common/util/multi_stream.cpp): rounds of 4 GEMMs of rows x n "
    "x k sharing the SMs, rows per expert = tokens x top-k x ep / experts (roofline.ops[].grouped_gemm)";
constexpr const char* kSrcFlash1 =
    "FlashAttention-2's fractions on this device halved: Dao 2023 (FlashAttention-2, arXiv 2307.08691), abstract: "
    "FlashAttention reaches 'only 25-40% of the theoretical maximum FLOPs/s' on A100 and FlashAttention-2 'around 2x "
    "speedup compared to FlashAttention'; the Triton port (Dao-AILab/flash-attention flash_attn/flash_attn_triton.py, "
    "docstring): 'Overall Triton forward + backward is slightly slower than CUDA forward + backward' (CUDA: "
    "FlashAttention-1). The same 2x assumed on Hopper, where neither uses Hopper's instructions";
constexpr const char* kSrcMeasuredShapes =
    "hardware.achievable_flops at its measured shape, scaled by the shape efficiency, corrected by napkin-probe's "
    "measured GEMM shapes (calibration points gemm_shapes / gemm_m_sweep): measured over curve at the nearest "
    "measured shapes, inverse-distance weighted in log m, n, k (core/achievable.h measuredGemmRate)";
constexpr const char* kSrcFlashOther =
    "FlashAttention-2's A100 fractions (Dao 2023) assumed: no published figure for this device";

constexpr const char* kSustainedAttentionSuffix =
    "; at the GPU's sustained share of a burst tensor rate (gpus.json matmul_bf16_sustained_share, measured on "
    "GEMMs at the board's power limit: gpus.json sustained_source): attention kernels reach that limit too "
    "(flashinfer-ai/"
    "flashinfer PR 2899: FlashAttention-4 BF16 on B200 back to back, SM clock 1965 -> ~1580 MHz at ~1000 W, "
    "1450 -> 1237 TFLOP/s)";

// An attention source with the sustained-share note appended: one string per source, built once
// (thread-safe static initialisation; the layout search plans on several threads).
const char* sustainedAttentionSource(const char* base)
{
    static const std::array<std::pair<const char*, std::string>, 6> table = [] {
        std::array<std::pair<const char*, std::string>, 6> t;
        const std::array<const char*, 6> bases{kSrcFlash2Ampere,    kSrcFlash2Hopper, kSrcFlash3,
                                               kSrcFlash3Blackwell, kSrcFlash1,       kSrcFlashOther};
        for (std::size_t i = 0; i < bases.size(); ++i)
            t[i] = {bases[i], std::string(bases[i]) + kSustainedAttentionSuffix};
        return t;
    }();
    for (const auto& [b, s] : table)
        if (b == base)
            return s.c_str();
    return base;
}

} // namespace

AttentionEfficiency attentionEfficiency(AttentionKernel kernel, int computeCapability)
{
    const bool hopperPlus = computeCapability >= 90;
    if (kernel == AttentionKernel::Flash1) { // half of FlashAttention-2 on the same device (kSrcFlash1)
        const auto fa2 = attentionEfficiency(AttentionKernel::Flash2, computeCapability);
        return {fa2.forward / 2, fa2.backward / 2, kSrcFlash1, fa2.forward64, fa2.backward64};
    }
    // Head dim 64 against 128 at sequence 16k, causal unless said: FlashAttention-3 on H100 forward
    // 473 / 616 TFLOP/s = 0.77 (Shah et al. 2024 Fig. 5; 497 / 648 without the mask), backward 474 / 561
    // = 0.85 (Fig. 6); FlashAttention-2 forward + backward on A100 171 / 189 = 0.90 (Dao 2023 Fig. 4;
    // 140 / 155 at 2k), on H100 284 / 328 = 0.87 (Fig. 7; 257 / 294 at 4k), for both passes.
    if (kernel == AttentionKernel::Flash3 && hopperPlus)
        return {0.62, 0.50, computeCapability >= 100 ? kSrcFlash3Blackwell : kSrcFlash3, 0.77, 0.85};
    if (computeCapability >= 80 && computeCapability < 90)
        return {0.70, 0.55, kSrcFlash2Ampere, 0.90, 0.90};
    if (hopperPlus)
        return {0.33, 0.31, kSrcFlash2Hopper, 0.87, 0.87};
    return {0.70, 0.55, kSrcFlashOther, 0.90, 0.90};
}

double attentionHeadDimFactor(double headDim, double at64)
{
    if (!(headDim > 64))
        return at64;
    if (headDim >= 128)
        return 1.0;
    return at64 + (1 - at64) * std::log2(headDim / 64);
}

double gemmPipelineK0(int computeCapability)
{
    // Per output tile a GEMM kernel fills its shared-memory pipeline before the first MMA and drains
    // the accumulators through the epilogue after the last one: a fixed cost worth about K0 elements
    // of the K loop, so a CTA's main loop over k is k / (k + K0) of its time.
    //   Hopper 160: OpenXLA's default matmul perf table (xla/service/gpu/model/
    //   matmul_interpolator_data.h, "sm_90", bf16), m = n = 4096, batch 4 (16 waves at every k):
    //   505, 620, 722, 760, 789 TFLOP/s at k = 256, 512, 1024, 2048, 4096; each k against 4096 gives
    //   K0 = 160, 166, 131, 163.
    //   Ampere 180: Azure ND A100 v4 cuBLASLt fp16 (Azure/AI-benchmarking-guide): 253.7 TFLOP/s at
    //   8192^3 and 256.5 at 16384^3 (19 and 76 full waves): 253.7 / 256.5 = (1 + K0/16384) / (2 (1 +
    //   K0/8192)) x 2 gives K0 = 183. Volta takes Ampere's.
    //   Blackwell 370: the same XLA table's "sm_100" section, batch 4 of m = n = 4096: 789, 1092, 1350,
    //   1544, 1691 TFLOP/s at k = 256 ... 4096 give K0 = 338, 348, 376, 431 against k = 4096 (larger
    //   tiles, deeper pipelines: more per tile). No figure for other devices: no term.
    if (computeCapability >= 100)
        return 370;
    if (computeCapability >= 90)
        return 160;
    if (computeCapability >= 70)
        return 180;
    return 0;
}

double gemmShapeEfficiency(double m, double n, double k, double batch, int sms, int computeCapability)
{
    if (sms <= 0 || m <= 0 || n <= 0 || k <= 0)
        return 1.0;
    // Integer tile arithmetic (the dimensions are whole numbers of rows): one call per GEMM op per
    // plan, so this sits on the layout search's hot path.
    using I = std::int64_t;
    const I M = I(std::ceil(m)), N = I(std::ceil(n)), K = std::max<I>(1, I(std::floor(k))), S = sms;
    const I B = std::max<I>(1, I(batch));
    const double K0 = gemmPipelineK0(computeCapability);
    const double useful = double(M) * double(N);
    double best = 0;
    // One CTA per output tile and split of K, in waves over the SMs; each CTA's k loop pays K0.
    auto evaluate = [&](double tileUse, I tiles, I split) {
        const I ctas = tiles * split;
        const I waves = (ctas + S - 1) / S;
        const double kc = double(K) / double(split);
        best = std::max(best, tileUse * double(ctas) / double(waves * S) * kc / (kc + K0)); // wave quantisation
    };
    auto consider = [&](const Tile& t) {
        const I tm = I(1) << t.mShift, tn = I(1) << t.nShift;
        const I mt = (M + tm - 1) >> t.mShift, nt = (N + tn - 1) >> t.nShift;
        const double tileUse = useful / (double(mt * tm) * double(nt * tn)); // tile quantisation
        const I tiles = mt * nt * B;
        evaluate(tileUse, tiles, 1);
        if (tiles < S) // split-K: more CTAs along K, each at least 128 deep (cuBLAS/CUTLASS split-K)
            evaluate(tileUse, tiles, std::max<I>(1, std::min(S / tiles, K / 128)));
    };
    if (computeCapability >= 90)
        for (const auto& t : kHopperTiles)
            consider(t);
    else
        for (const auto& t : kAmpereTiles)
            consider(t);
    return std::clamp(best, 1e-6, 1.0);
}

double causalExecutedFraction(double queries, double keys, bool causal)
{
    if (!causal || keys <= 0)
        return 1.0;
    // Queries attend to the keys up to their own position: of nb x nb blocks, nb (nb + 1) / 2 are
    // computed. With context parallelism (queries = keys / cp), load-balanced chunks keep the same share.
    (void)queries;
    const double nb = std::ceil(keys / kAttentionBlock);
    return (nb + 1) / (2 * nb);
}

double measuredGemmRate(double m, double n, double k, const std::vector<MeasuredGemm>& measured, double cap,
                        double (*curve)(double, double, double, const void*), const void* context)
{
    const double model = curve(m, n, k, context);
    if (measured.empty() || !(model > 0))
        return model;
    constexpr double kPriorWeight = 1.0 / 16; // the curve, as a point at log2-distance 2
    double weights = kPriorWeight, logSum = 0, fastest = cap;
    double exactLogSum = 0; // a measured shape: its measurement (the geometric mean when measured twice,
    int exact = 0;          // e.g. the M-sweep's 8192 x 4096 x 4096 and a transformer shape's)
    for (const auto& p : measured) {
        const double at = curve(p.m, p.n, p.k, context);
        if (!(at > 0) || !(p.rate > 0))
            continue;
        fastest = std::max(fastest, p.rate);
        const double dm = std::log2(m / p.m), dn = std::log2(n / p.n), dk = std::log2(k / p.k);
        const double d2 = dm * dm + dn * dn + dk * dk;
        if (d2 < 1e-12) {
            exactLogSum += std::log(p.rate);
            ++exact;
            continue;
        }
        const double w = 1 / (d2 * d2);
        weights += w;
        logSum += w * std::log(p.rate / at);
    }
    if (exact > 0)
        return std::exp(exactLogSum / exact);
    return std::min(model * std::exp(logSum / weights), fastest);
}

void applyAchievable(RooflineOp& op, const RateModel& r)
{
    // A tensor op a low-precision recipe keeps in 16 bits runs at the 16-bit rates (chosen here, not
    // by copying the rate model: one call per op on the layout search's hot path).
    const bool hp = op.highPrecision;
    const double peak = op.tf32 ? r.peak32 : (hp ? r.peak16 : r.peak);
    const double gemm = op.tf32 ? r.gemm32 : (hp ? r.gemm16 : r.gemm);
    static const MeasuredGemms kNoMeasurements;
    const MeasuredGemms& measured = op.tf32 ? kNoMeasurements : (hp ? r.measured16 : r.measured);
    const double bw = r.bandwidth > 0 ? r.bandwidth : 0;
    const double memory = bw > 0 ? op.bytes / bw : 0;
    double compute = 0;
    op.executedFlops = op.flops;
    switch (op.kind) {
    case OpKind::Gemm: {
        // The achievable figure was measured at one shape (efficiency r.gemmShapeAtFigure there): scale
        // by this shape's efficiency against it, never above the figure itself (a maximum).
        struct Curve {
            const RateModel* r;
            double gemm, batch;
        };
        auto curve = [](double m, double n, double k, const void* ctx) {
            const auto& c = *static_cast<const Curve*>(ctx);
            const double eff = gemmShapeEfficiency(m, n, k, c.batch, c.r->sms, c.r->computeCapability);
            return std::min(c.gemm, c.gemm * eff / c.r->gemmShapeAtFigure);
        };
        auto rateAt = [&r, &curve, &measured, gemm](double m, double n, double k, double batch) {
            const Curve c{&r, gemm, batch};
            // A batch of products (attention-like bmm) is measured by no sweep: the curve alone.
            if (!measured || measured->empty() || batch > 1)
                return curve(m, n, k, &c);
            return measuredGemmRate(m, n, k, *measured, gemm, curve, &c);
        };
        // Run as `chunks` GEMMs of m / chunks rows one after another (tensor-parallel overlap).
        const double rate = rateAt(op.m / std::max(1.0, op.chunks), op.n, op.k, op.batch);
        compute = rate > 0 ? op.flops * (1 - op.groupedShare) / rate : 0;
        // A mixture of experts' routed share runs as one grouped GEMM over the local experts.
        op.efficiencySource = measured && !measured->empty() && op.batch <= 1 ? kSrcMeasuredShapes : r.gemmSource;
        if (op.groupedShare > 0) {
            // Transformer Engine's grouped GEMM (step_time.grouped_gemm "streams"): one cuBLAS GEMM per
            // expert, round-robin on 4 compute streams, so the experts run in rounds of 4 GEMMs sharing
            // the SMs (the last round with what is left), each round its own waves; "single": one grid.
            const auto& g = op.grouped;
            const double groups = std::max(1.0, g[3]);
            const double at = r.groupedStreams > 0 ? std::min(groups, double(r.groupedStreams)) : groups;
            const double full = std::floor(groups / at), rest = groups - full * at;
            const double perGroup = op.flops * op.groupedShare / groups;
            const double round = rateAt(g[0], g[1], g[2], at), last = rest > 0 ? rateAt(g[0], g[1], g[2], rest) : 0;
            compute += (round > 0 ? full * at * perGroup / round : 0) + (last > 0 ? rest * perGroup / last : 0);
            op.efficiencySource = r.groupedStreams > 0 ? kSrcGroupedGemmStreams : kSrcGroupedGemm;
            // Launches: one cuBLAS GEMM per local expert on the streams (nvte_multi_tensor_gemm, as
            // above), one grid otherwise, plus the shared experts' own GEMM where this op holds them.
            op.kernels = (op.groupedShare < 1 ? 1.0 : 0.0) + (r.groupedStreams > 0 ? groups : 1.0);
        }
        break;
    }
    case OpKind::Attention: {
        op.executedFlops = op.flops * causalExecutedFraction(op.m, op.n, op.causal);
        const bool fwd = op.pass == Pass::Forward;
        // op.k is the head dimension: the papers' fractions are at 128.
        const double kernel = (fwd ? r.attention.forward : r.attention.backward) *
                              attentionHeadDimFactor(op.k, fwd ? r.attention.forward64 : r.attention.backward64);
        // Work is spread over the SMs as (batch · heads · query blocks) CTAs.
        double wave = 1;
        if (r.sms > 0) {
            const double blocks = std::ceil(op.m / kAttentionBlock) * std::max(1.0, op.batch);
            wave = blocks / (std::ceil(blocks / double(r.sms)) * double(r.sms));
        }
        // Attention's matmuls cannot beat the GPU's achievable GEMM rate; the papers' fractions are
        // burst figures: at the sustained share where the GPU has one.
        const double sustained = r.attentionSustained > 0 ? r.attentionSustained : 1.0;
        const double rate = std::min(peak * kernel * r.clock * sustained, gemm > 0 ? gemm : peak) * wave;
        compute = rate > 0 ? op.executedFlops / rate : 0;
        op.efficiencySource = sustained < 1 ? sustainedAttentionSource(r.attention.source) : r.attention.source;
        break;
    }
    case OpKind::Elementwise:
        compute = r.vector > 0 ? op.flops / (r.vector * r.clock) : 0;
        op.efficiencySource = r.bandwidthSource;
        break;
    }
    op.achievableSeconds = std::max(compute, memory);
    if (op.kind != OpKind::Elementwise && memory > compute)
        op.efficiencySource = r.bandwidthSource; // memory-bound at this shape
    // The roofline bound of the executed work at spec rates over the achievable time: at most 1.
    const double bound = std::max(op.ceiling > 0 ? op.executedFlops / op.ceiling : 0.0,
                                  r.specBandwidth > 0 ? op.bytes / r.specBandwidth : 0.0);
    op.efficiency = op.achievableSeconds > 0 ? std::min(1.0, bound / op.achievableSeconds) : 1.0;
}

} // namespace napkin::core

#include "calibration.h"
#include "framework.h"

namespace napkin::core {

namespace {

// The profile's GEMM points with a shape in the dtype of a peak column (calibrationGemmDtype).
MeasuredGemms measuredGemms(const CalibrationDevice& dev, PeakColumn col)
{
    const std::string_view dtype = calibrationGemmDtype(col);
    if (dtype.empty())
        return nullptr;
    auto v = std::make_shared<std::vector<MeasuredGemm>>();
    for (const auto& p : dev.points)
        if (p.m > 0 && p.n > 0 && p.k > 0 && p.seconds > 0 && p.dtype == dtype &&
            (p.series == "gemm_shapes" || p.series == "gemm_m_sweep"))
            v->push_back({p.m, p.n, p.k, p.flopsPerSecond()});
    return v->empty() ? nullptr : MeasuredGemms(std::move(v));
}

// napkin-probe times square GEMMs (gpu/suite.cpp measureGemm) and records the bytes of A, B and C:
// 2 n² (input bytes) + n² (output bytes). The cube's side follows; 8192 when it cannot be read.
std::array<double, 3> measuredGemmShape(const Calibration& cal, PeakColumn col)
{
    const auto* res = cal.measuredDevice().result(cal.peakResult[static_cast<std::size_t>(col)]);
    double side = 8192;
    if (res && res->sizeBytes > 0) {
        const bool fp8 = res->dtype.rfind("fp8", 0) == 0, wide = res->dtype == "fp32" || res->dtype == "tf32";
        const double in = fp8 ? 1 : wide ? 4 : 2, out = wide ? 4 : 2;
        side = std::round(std::sqrt(res->sizeBytes / (2 * in + out)));
    }
    return {side, side, side};
}

// The catalogue entry behind a GPU: a calibration profile's catalogue match, else the GPU itself.
const GpuSpec& catalogueSpec(const GpuSpec& gpu)
{
    return gpu.calibration && gpu.calibration->spec ? *gpu.calibration->spec : gpu;
}

} // namespace

void resolveHardwareRates(HardwareSummary& hw, const GpuSpec& gpu, DType compute)
{
    const PeakColumn col = info(compute).peak;
    const auto& cal = gpu.calibration;
    const GpuSpec* spec = cal && cal->spec ? &*cal->spec : nullptr;
    // Spec-sheet rates (a profile without a catalogue match has only its measurements).
    hw.peakFlops = spec && spec->peak(col) > 0 ? spec->peak(col) : gpu.peak(col);
    hw.bandwidth =
        spec && spec->bandwidthBytesPerSecond > 0 ? spec->bandwidthBytesPerSecond : gpu.bandwidthBytesPerSecond;
    // Achievable: the catalogue's figure for this dtype where one is published (fp16, fp8 and fp4
    // GEMMs reach their own shares of their peaks: Azure's cuBLASLt FP8 runs sit at 0.70 of the H100's
    // FP8 peak where MAMF's bf16 sits at 0.80), else the bf16 figure at the same share of this
    // dtype's peak.
    const GpuSpec& cat = catalogueSpec(gpu);
    const double catBf16 = cat.peak(PeakColumn::Bf16) > 0 ? cat.peak(PeakColumn::Bf16) : cat.peak(PeakColumn::Fp16);
    double share = catBf16 > 0 && cat.achievableMatmulFlops > 0 ? cat.achievableMatmulFlops / catBf16 : 1.0;
    const std::array<double, 3>* shape = &cat.achievableMatmulShape;
    bool ownFp16 = false;
    auto own = [&](PeakColumn c, double figure, const std::array<double, 3>& at) {
        if (col == c && figure > 0 && cat.peak(c) > 0) {
            share = figure / cat.peak(c);
            shape = &at;
            ownFp16 = c == PeakColumn::Fp16;
        }
    };
    own(PeakColumn::Fp16, cat.achievableMatmulFp16Flops, cat.achievableMatmulFp16Shape);
    own(PeakColumn::Fp8, cat.achievableMatmulFp8Flops, cat.achievableMatmulFp8Shape);
    own(PeakColumn::Fp4, cat.achievableMatmulFp4Flops, cat.achievableMatmulFp4Shape);
    hw.achievableFlops = (col == PeakColumn::Fp32 ? 1.0 : std::min(1.0, share)) * hw.peakFlops;
    // A GPU held at its power limit under back-to-back tensor work keeps only part of a burst figure
    // (napkin-probe on an H200 after a 180 s soak: 30 transformer GEMMs at 0.876 (bf16) and 0.902 (fp8)
    // of the curve through the catalogue figure, SM clock 1,335-1,425 MHz at 700 W; mamf-finder's MSMF
    // on a B200 at 1,000 W; gpus.json sustained_source). The 16-bit share is measured against the bf16
    // figure; a published fp16 figure of its own (the A100's: Azure's cuBLASLt runs after 10,000
    // warm-up iterations) is already the sustained rate and takes none.
    const bool sixteen = col == PeakColumn::Bf16 || (col == PeakColumn::Fp16 && !ownFp16) || col == PeakColumn::Tf32;
    hw.sustainedShare = col == PeakColumn::Fp8 ? cat.sustainedShareFp8 : sixteen ? cat.sustainedShare16 : 1.0;
    hw.achievableFlops *= hw.sustainedShare;
    if ((*shape)[0] > 0)
        hw.achievableFlopsShape = *shape;
    hw.achievableBandwidth =
        cat.achievableBandwidth > 0 ? std::min(cat.achievableBandwidth, hw.bandwidth) : hw.bandwidth;
    if (cal) {
        if (cal->peakMeasured(col)) {
            hw.sustainedShare = 1; // the profile measured it, at whatever clock the board held
            hw.achievableFlops = gpu.peak(col);
            hw.achievableFlopsShape = measuredGemmShape(*cal, col);
        }
        if (cal->bandwidthMeasured())
            hw.achievableBandwidth = gpu.bandwidthBytesPerSecond;
    }
}

void applyPowerLimit(HardwareSummary& hw, const GpuSpec& gpu, DType compute, double powerLimitWatts)
{
    if (!(powerLimitWatts > 0) || !(hw.tdpWatts > 0) || powerLimitWatts >= hw.tdpWatts)
        return;
    hw.powerLimitWatts = powerLimitWatts;
    hw.clockFactor = std::cbrt(powerLimitWatts / hw.tdpWatts);
    const bool measured = gpu.calibration && gpu.calibration->peakMeasured(info(compute).peak);
    if (!measured)
        hw.achievableFlops *= hw.clockFactor;
}

double tf32PeakFlops(const HardwareSummary& hw)
{
    const double tf32 = hw.gpu ? hw.gpu->peak(PeakColumn::Tf32) : 0;
    return tf32 > 0 ? tf32 : (hw.peakFlops16 > 0 ? hw.peakFlops16 : hw.peakFlops);
}

RateModel rateModel(const Scenario& sc, const HardwareSummary& hw)
{
    RateModel r;
    const GpuSpec& gpu = *hw.gpu;
    r.peak = hw.peakFlops;
    r.gemm = hw.achievableFlops > 0 ? hw.achievableFlops : hw.peakFlops;
    r.peak16 = hw.peakFlops16 > 0 ? hw.peakFlops16 : r.peak;
    r.gemm16 = hw.achievableFlops16 > 0 ? hw.achievableFlops16 : r.gemm;
    // TF32 (the catalogue's achievable bf16 share applies to the tf32 column, catalog.h).
    r.peak32 = tf32PeakFlops(hw);
    r.gemm32 = r.peak16 > 0 ? r.gemm16 * r.peak32 / r.peak16 : r.gemm16;
    r.vector = hw.vectorFlops > 0 ? hw.vectorFlops : hw.peakFlops;
    r.bandwidth = hw.achievableBandwidth > 0 ? hw.achievableBandwidth : hw.bandwidth;
    r.specBandwidth = hw.bandwidth;
    r.clock = hw.clockFactor > 0 ? hw.clockFactor : 1.0;
    r.sms = gpu.smCount;
    r.computeCapability = gpu.computeCapability;
    if (gpu.calibration) {
        const auto& dev = gpu.calibration->measuredDevice();
        if (r.sms <= 0)
            r.sms = dev.sms;
        if (r.computeCapability <= 0 && dev.computeCapability.size() >= 3) // "9.0"
            r.computeCapability = (dev.computeCapability[0] - '0') * 10 + (dev.computeCapability[2] - '0');
    }
    r.attention = attentionEfficiency(attentionKernelFor(sc), r.computeCapability);
    // The catalogue's sustained share (a profile's GPU: its catalogue match's); attention is not probed.
    r.attentionSustained = catalogueSpec(gpu).sustainedShare16;
    r.groupedStreams = sc.stepTime.groupedGemm == GroupedGemm::Streams ? kGroupedGemmStreams : 0;
    if (gpu.calibration) {
        r.measured = measuredGemms(gpu.calibration->measuredDevice(), info(sc.precision.compute).peak);
        r.measured16 = measuredGemms(gpu.calibration->measuredDevice(), PeakColumn::Bf16);
    }
    const auto& at = hw.achievableFlopsShape;
    r.gemmShapeAtFigure = gemmShapeEfficiency(at[0], at[1], at[2], 1, r.sms, r.computeCapability);
    r.gemmSource = "hardware.achievable_flops at its measured shape, scaled by the shape efficiency (tile and wave "
                   "quantisation, NVIDIA Matrix Multiplication Background User's Guide; the per-tile pipeline fill and "
                   "epilogue, K0 from OpenXLA's sm_90 matmul table and Azure's A100 sweep)";
    r.bandwidthSource = "hardware.achievable_bandwidth";
    return r;
}

void applyAchievableRates(Plan& plan, const Scenario& sc)
{
    const RateModel r = rateModel(sc, plan.hardware);
    for (auto& op : plan.ops)
        applyAchievable(op, r);
}

} // namespace napkin::core
