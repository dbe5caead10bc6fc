// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Activation memory of one transformer layer (Korthikanti et al. 2022, §4.1 and Table 2), in bytes.

#include "model.h"
#include "scenario.h"

#include <cstdint>
#include <vector>

namespace napkin::core {

struct LayerActivationTerms {
    double perTokenBytes = 0;   // bytes per (token of the micro-batch) that scale with s·b
    double perScoreBytes = 0;   // bytes per attention score element (a·s²·b); 0 with FlashAttention
    double flashStatsBytes = 0; // FlashAttention's fp32 log-sum-exp, a·s·b·4
    double total = 0;
};

// Korthikanti et al. 2022 Table 2 with activation bytes e (2 in the paper) and 1-byte dropout masks:
//   no recompute            sbh(10 + 24/t) + 5as²b/t   (t = 1: sbh(34 + 5as/h))
//   + sequence parallel     sbh·34/t + 5as²b/t
//   selective recompute     drops the 5as²b term (FlashAttention does not store it either)
//   full recompute          2sbh (the layer input only)
// generalised to GQA (K, V of kv_heads·head_dim), SwiGLU (gate, up and down inputs: 3 e sb·ffn)
// and models without dropout.
LayerActivationTerms layerActivations(const TransformerShape& m, double s, double b, double e, Recompute recompute,
                                      bool flash, double t = 1, bool sequenceParallel = false);

// Activation memory of a chain of L equal layers checkpointed every k layers (Chen et al. 2016;
// CS336 lecture 2): ceil(L / k) saved boundaries plus one segment of k layers re-materialised during
// its backward, ceil(L / k) · boundary + k · layer bytes, O(L/k + k), smallest near k = sqrt(L) when
// boundary = layer.
double checkpointedActivations(double layers, double k, double boundaryBytes, double layerBytes);

// The curve over k = 1 .. L (index k - 1) and the k where it is smallest (the smallest such k on ties).
struct CheckpointCurve {
    std::vector<double> bytes;
    std::int64_t bestK = 0;
    double bestBytes = 0;
};
CheckpointCurve checkpointCurve(std::int64_t layers, double boundaryBytes, double layerBytes);

} // namespace napkin::core
