// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "stats.h"

#include <algorithm>
#include <cmath>

namespace napkin::gpu {

Stats rateStats(const std::vector<double>& rates)
{
    Stats s;
    for (double r : rates)
        if (std::isfinite(r) && r > 0)
            s.samples.push_back(r);
    if (s.samples.empty())
        return s;
    std::vector<double> sorted = s.samples;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    s.best = sorted.back();
    s.median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    return s;
}

double bytesMoved(Kernel k, double n, double elementBytes)
{
    switch (k) {
    case Kernel::Copy:      // c = a: read a, write c
    case Kernel::Scale:     // b = s c
    case Kernel::MemcpyD2D: // one read and one write of the buffer
    case Kernel::Relu:
    case Kernel::Gelu:
    case Kernel::Intensity: return 2 * n * elementBytes;
    case Kernel::Triad: return 3 * n * elementBytes; // c = a + s b: read a and b, write c
    case Kernel::Read: return n * elementBytes;      // read a; the per-block partial sums are negligible
    }
    return 0;
}

double flopsOf(Kernel k, double n, int fmasPerElement)
{
    switch (k) {
    case Kernel::Relu: return n;                             // CS336 lecture 2: one comparison per value
    case Kernel::Gelu: return 20 * n;                        // CS336 lecture 2: ~20 ops per value (core/roofline.cpp)
    case Kernel::Intensity: return 2.0 * fmasPerElement * n; // an FMA is 2 FLOP
    case Kernel::Scale: return n;
    case Kernel::Triad: return 2 * n;
    default: return 0;
    }
}

double allReduceBusBw(double algbwBytesPerSecond, int ranks)
{
    if (ranks <= 1)
        return 0;
    return algbwBytesPerSecond * 2.0 * (ranks - 1) / ranks; // nccl-tests doc/PERFORMANCE.md
}

double gemmFlops(double m, double n, double k) { return 2 * m * n * k; }

double gemmRelativeError(double got, double ref, double sumAbs)
{
    if (!std::isfinite(got))
        return INFINITY;
    const double e = std::fabs(got - ref);
    return sumAbs > 0 ? e / sumAbs : e;
}

double gemmTolerance(const std::string& dtype)
{
    if (dtype == "fp32")
        return 1e-4;
    if (dtype == "tf32" || dtype == "fp16")
        return 1e-2;
    if (dtype == "bf16")
        return 2e-2;
    return 5e-2; // fp8_e4m3
}

int fmasForIntensity(double flopPerByte)
{
    const int f = static_cast<int>(std::lround(flopPerByte * 8 / 2));
    return std::max(f, 1);
}

double streamPatternSum(long long n)
{
    // sum over i < n of (i mod 1024): full cycles of 0..1023 (523776 each) plus a partial cycle
    const long long cycles = n / 1024;
    const long long rest = n % 1024;
    const long long partial = rest * (rest - 1) / 2; // 0 + 1 + ... + (rest - 1), a whole number
    return static_cast<double>(cycles) * 523776.0 + static_cast<double>(partial);
}

std::vector<GemmShape> transformerGemmShapes(bool quick)
{
    // Llama 3 proportions (Llama 3 paper Table 3: 8 KV heads, head dim 128, FFN 3.5 h, vocab 128256).
    constexpr long long kKvWidth = 2LL * 8 * 128, kVocab = 128256;
    const std::vector<long long> widths =
        quick ? std::vector<long long>{4096} : std::vector<long long>{2048, 4096, 8192};
    const std::vector<long long> tokens = quick ? std::vector<long long>{8192} : std::vector<long long>{2048, 8192};
    std::vector<GemmShape> shapes;
    for (long long t : tokens)
        for (long long h : widths) {
            const std::string at = " h=" + std::to_string(h) + " T=" + std::to_string(t);
            const long long ffn = h * 7 / 2;
            shapes.push_back({"qkv" + at, t, h + kKvWidth, h});
            shapes.push_back({"proj" + at, t, h, h});
            shapes.push_back({"fc1" + at, t, 2 * ffn, h});
            shapes.push_back({"fc2" + at, t, h, ffn});
            shapes.push_back({"logits" + at, t, kVocab, h});
        }
    return shapes;
}

} // namespace napkin::gpu
