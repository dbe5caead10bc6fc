// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "gemm.h"

#include "kernels.h"
#include "stats.h"

#include <algorithm>
#include <cmath>

namespace napkin::gpu {

namespace {

constexpr size_t kWorkspaceBytes = 32u << 20; // probe-methods.md section 2: workspace >= 32 MiB
// Floats per FP8 scale slot: each scale pointer on its own 16 bytes. With the B scale 4 bytes after the
// A scale, cuBLASLt offered FP8 algorithms but every launch returned CUBLAS_STATUS_NOT_SUPPORTED
// (napkin-probe on an H200, cuBLASLt 13.1, 2026-12-04); 16-byte aligned, they ran (1392 TFLOP/s).
constexpr std::size_t kScaleSlot = 4;
constexpr int kVerifySamples = 64;

struct Types {
    cudaDataType_t ab, cd;
    cublasComputeType_t compute;
    kernels::Elt abElt, cdElt;
    const char* computeName;
};

bool typesFor(const std::string& dtype, Types& t)
{
    using kernels::Elt;
    if (dtype == "fp32")
        t = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Elt::F32, Elt::F32, "COMPUTE_32F"};
    else if (dtype == "tf32")
        t = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Elt::F32, Elt::F32, "COMPUTE_32F_FAST_TF32"};
    else if (dtype == "fp16")
        t = {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, Elt::F16, Elt::F16, "COMPUTE_32F"};
    else if (dtype == "bf16")
        t = {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Elt::BF16, Elt::BF16, "COMPUTE_32F"};
    else if (dtype == "fp8_e4m3") // Hopper/Ada: TN only, scale pointers, C/D bf16 (probe-methods.md pitfall 7)
        t = {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, Elt::FP8E4M3, Elt::BF16, "COMPUTE_32F"};
    else
        return false;
    return true;
}

std::string cudaMessage(const char* what, cudaError_t e) { return std::string(what) + ": " + cudaGetErrorString(e); }
std::string ltMessage(const char* what, cublasStatus_t s)
{
    return std::string(what) + ": cublasStatus " + std::to_string(s);
}

// Owns every per-GEMM object; frees them whatever happens.
struct GemmObjects {
    const CublasLt& lt;
    void* a = nullptr;
    void* b = nullptr;
    void* d = nullptr;
    float* scales = nullptr;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    explicit GemmObjects(const CublasLt& l) : lt(l) {}
    ~GemmObjects()
    {
        if (pref)
            lt.preferenceDestroy(pref);
        if (la)
            lt.layoutDestroy(la);
        if (lb)
            lt.layoutDestroy(lb);
        if (ld)
            lt.layoutDestroy(ld);
        if (desc)
            lt.descDestroy(desc);
        for (void* p : {a, b, d, static_cast<void*>(scales)})
            if (p)
                cudaFree(p);
    }
};

} // namespace

GemmBench::GemmBench(const CublasLt& lt, cudaStream_t stream, int fillGrid)
    : m_lt(lt), m_stream(stream), m_fillGrid(fillGrid)
{
    if (!lt.info.loaded) {
        m_error = "cuBLASLt not loaded: " + lt.info.error;
        return;
    }
    if (const cublasStatus_t s = lt.create(&m_handle); s != CUBLAS_STATUS_SUCCESS) {
        m_handle = nullptr;
        m_error = ltMessage("cublasLtCreate", s);
        return;
    }
    if (const cudaError_t e = cudaMalloc(&m_workspace, kWorkspaceBytes); e != cudaSuccess) {
        m_workspace = nullptr;
        m_error = cudaMessage("workspace", e);
    }
}

GemmBench::~GemmBench()
{
    if (m_workspace)
        cudaFree(m_workspace);
    if (m_handle)
        m_lt.destroy(m_handle);
}

GemmMeasurement GemmBench::run(const GemmSpec& spec)
{
    GemmMeasurement out;
    Types t{};
    if (!m_error.empty()) {
        out.error = m_error;
        return out;
    }
    if (!typesFor(spec.dtype, t) || spec.m <= 0 || spec.n <= 0 || spec.k <= 0) {
        out.error = "unsupported GEMM " + spec.dtype;
        return out;
    }
    const long long m = spec.m, n = spec.n, k = spec.k;
    GemmObjects o(m_lt);
    const size_t abBytes = static_cast<size_t>(kernels::eltBytes(t.abElt));
    const size_t cdBytes = static_cast<size_t>(kernels::eltBytes(t.cdElt));
    const size_t aBytes = abBytes * k * m, bBytes = abBytes * k * n;
    const int sets =
        spec.rotateAboveBytes > 0
            ? static_cast<int>(std::clamp(std::ceil(spec.rotateAboveBytes / double(aBytes + bBytes)), 1.0, 16.0))
            : 1;
    out.operandSets = sets;
    cudaError_t e = cudaMalloc(&o.a, aBytes * sets);
    if (e == cudaSuccess)
        e = cudaMalloc(&o.b, bBytes * sets);
    if (e == cudaSuccess)
        e = cudaMalloc(&o.d, cdBytes * m * n);
    if (e == cudaSuccess)
        e = cudaMalloc(reinterpret_cast<void**>(&o.scales), 2 * kScaleSlot * sizeof(float));
    if (e != cudaSuccess) {
        cudaGetLastError(); // an allocation failure is not sticky; clear it
        out.error = cudaMessage("allocating the operands", e);
        return out;
    }
    // Random operands, never constants (constant data draws less power and overstates the rate).
    const float ones[2 * kScaleSlot] = {1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f};
    e = kernels::fillRandom(o.a, t.abElt, k * m * sets, 1, m_fillGrid, m_stream);
    if (e == cudaSuccess)
        e = kernels::fillRandom(o.b, t.abElt, k * n * sets, 2, m_fillGrid, m_stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(o.scales, ones, sizeof ones, cudaMemcpyHostToDevice, m_stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(m_stream);
    if (e != cudaSuccess) {
        out.error = cudaMessage("filling the operands", e);
        return out;
    }

    // TN: A is stored k x m (column-major, ld k) and transposed; B is k x n; D is m x n.
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    cublasStatus_t s = m_lt.descCreate(&o.desc, t.compute, CUDA_R_32F);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.descSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.descSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN);
    if (s == CUBLAS_STATUS_SUCCESS && t.abElt == kernels::Elt::FP8E4M3) {
        const float* sa = o.scales;
        const float* sb = o.scales + kScaleSlot;
        s = m_lt.descSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
        if (s == CUBLAS_STATUS_SUCCESS)
            s = m_lt.descSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
    }
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.layoutCreate(&o.la, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.layoutCreate(&o.lb, t.ab, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.layoutCreate(&o.ld, t.cd, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.preferenceCreate(&o.pref);
    const uint64_t ws = kWorkspaceBytes;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.preferenceSetAttribute(o.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    std::vector<cublasLtMatmulHeuristicResult_t> heur(static_cast<size_t>(std::max(spec.algorithms, 1)));
    int returned = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = m_lt.algoGetHeuristic(m_handle, o.desc, o.la, o.lb, o.ld, o.ld, o.pref, static_cast<int>(heur.size()),
                                  heur.data(), &returned);
    if (s != CUBLAS_STATUS_SUCCESS || returned == 0) {
        out.error =
            s != CUBLAS_STATUS_SUCCESS ? ltMessage("cuBLASLt setup", s) : "cuBLASLt has no algorithm for this GEMM";
        return out;
    }

    const float alpha = 1.f, beta = 0.f;
    const cublasLtMatmulAlgo_t* algo = nullptr;
    int next = 0; // the operand set of the next launch
    auto launch = [&]() -> cudaError_t {
        const char* a = static_cast<const char*>(o.a) + aBytes * next;
        const char* b = static_cast<const char*>(o.b) + bBytes * next;
        next = (next + 1) % sets;
        const cublasStatus_t r = m_lt.matmul(m_handle, o.desc, &alpha, a, o.la, b, o.lb, &beta, o.d, o.ld, o.d, o.ld,
                                             algo, m_workspace, kWorkspaceBytes, m_stream);
        return r == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    };

    // Auto-tune: time every candidate briefly, keep the fastest (the top heuristic is not always it).
    int bestIndex = -1;
    double bestTime = INFINITY;
    TimingPlan trial = spec.timing;
    trial.warmups = 1;
    trial.samples = 2;
    trial.minSamples = 1;
    trial.capSeconds = spec.timing.capSeconds / (2.0 * returned);
    for (int i = 0; i < returned; ++i) {
        if (heur[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        algo = &heur[i].algo;
        std::vector<double> secs;
        if (timeLaunches(launch, m_stream, trial, secs) != cudaSuccess || secs.empty()) {
            if (cudaGetLastError() != cudaSuccess || cudaStreamSynchronize(m_stream) != cudaSuccess) {
                out.error = "a cuBLASLt launch failed on the device";
                return out;
            }
            continue; // cuBLASLt rejected this candidate
        }
        ++out.algorithmsTimed;
        const double tmin = *std::min_element(secs.begin(), secs.end());
        if (tmin < bestTime) {
            bestTime = tmin;
            bestIndex = i;
        }
    }
    if (bestIndex < 0) {
        out.error = "no cuBLASLt algorithm ran";
        return out;
    }
    algo = &heur[bestIndex].algo;
    if (timeLaunches(launch, m_stream, spec.timing, out.seconds) != cudaSuccess || out.seconds.empty()) {
        out.error = "timing the best cuBLASLt algorithm failed";
        return out;
    }
    out.detail = "cuBLASLt TN, " + std::string(t.computeName) +
                 (t.abElt == kernels::Elt::FP8E4M3 ? ", scale pointers, bf16 output" : "") + ", fastest of " +
                 std::to_string(out.algorithmsTimed) + " heuristic algorithms" +
                 (sets > 1 ? ", " + std::to_string(sets) + " operand sets rotated (past the L2)" : "");

    if (!spec.verify)
        return out.ok = true, out;
    // D from the first operand set, the one verified below.
    next = 0;
    if (launch() != cudaSuccess || cudaStreamSynchronize(m_stream) != cudaSuccess) {
        out.error = "the verification launch failed";
        return out;
    }
    // Verification: kVerifySamples outputs against an fp64 host dot product of the stored operands.
    std::vector<long long> idx;
    idx.reserve(static_cast<size_t>(kVerifySamples * (2 * k + 1)));
    std::vector<std::pair<long long, long long>> at;
    unsigned long long lcg = 12345;
    for (int s2 = 0; s2 < kVerifySamples; ++s2) {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL; // Knuth's MMIX LCG
        const long long i = static_cast<long long>((lcg >> 33) % static_cast<unsigned long long>(m));
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        const long long j = static_cast<long long>((lcg >> 33) % static_cast<unsigned long long>(n));
        at.emplace_back(i, j);
    }
    GemmObjects g(m_lt);
    const int total = static_cast<int>(kVerifySamples * (2 * k + 1));
    std::vector<float> host(static_cast<size_t>(total));
    long long* dIdx = nullptr;
    float* dOut = nullptr;
    e = cudaMalloc(reinterpret_cast<void**>(&dIdx), sizeof(long long) * static_cast<size_t>(kVerifySamples) * k);
    if (e == cudaSuccess)
        e = cudaMalloc(reinterpret_cast<void**>(&dOut), sizeof(float) * static_cast<size_t>(total));
    g.a = dIdx;
    g.b = dOut;
    // Three gathers: rows of op(A) (contiguous in A), columns of B (contiguous), then the outputs.
    // Every copy on m_stream, then a sync: m_stream is non-blocking, so a plain cudaMemcpy (legacy
    // default stream) is not ordered after the gather kernel and read stale samples (gemm_fp32/fp16
    // "unverified" at 1-4 % on an H200, 2026-12-04).
    auto gather = [&](const void* src, kernels::Elt elt, const std::vector<long long>& list, float* dst) {
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dIdx, list.data(), sizeof(long long) * list.size(), cudaMemcpyHostToDevice, m_stream);
        if (e == cudaSuccess)
            e = kernels::gatherToFloat(src, elt, dIdx, static_cast<int>(list.size()), dOut, m_stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dst, dOut, sizeof(float) * list.size(), cudaMemcpyDeviceToHost, m_stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(m_stream);
    };
    for (int part = 0; part < 2; ++part) {
        idx.clear();
        for (const auto& [i, j] : at)
            for (long long q = 0; q < k; ++q)
                idx.push_back((part == 0 ? i : j) * k + q);
        gather(part == 0 ? o.a : o.b, t.abElt, idx, host.data() + static_cast<long long>(part) * kVerifySamples * k);
    }
    idx.clear();
    for (const auto& [i, j] : at)
        idx.push_back(j * m + i);
    gather(o.d, t.cdElt, idx, host.data() + 2LL * kVerifySamples * k);
    if (e != cudaSuccess) {
        out.error = cudaMessage("reading samples back", e);
        return out;
    }
    double worst = 0;
    for (int s2 = 0; s2 < kVerifySamples; ++s2) {
        const float* ra = host.data() + s2 * k;
        const float* cb = host.data() + kVerifySamples * k + s2 * k;
        double ref = 0, sumAbs = 0;
        for (long long q = 0; q < k; ++q) {
            ref += static_cast<double>(ra[q]) * cb[q];
            sumAbs += std::fabs(static_cast<double>(ra[q]) * cb[q]);
        }
        worst =
            std::max(worst, gemmRelativeError(host[static_cast<size_t>(2LL * kVerifySamples * k + s2)], ref, sumAbs));
    }
    out.verified = std::isfinite(worst) && worst <= gemmTolerance(spec.dtype);
    out.maxRelErr = std::isfinite(worst) ? worst : 1.0; // a NaN or inf output: recorded as 100 %, unverified
    out.ok = true;
    return out;
}

} // namespace napkin::gpu
