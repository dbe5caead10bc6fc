// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Megatron-Core's model FLOPs: num_floating_point_operations in megatron/training/training.py, the
// formula behind NVIDIA's published "Model TFLOP/s" tables (moe-notes.md §0.1, §1.2-1.3). Per token,
// forward + both backward GEMMs (3 × 2 FLOPs per multiply-add):
//   linear  6 · (d·(qd + 2·kvd) + qd·d) per layer; MLA: 6 × its projection parameters (norms included)
//   core    12 · H · (d_qk + d_v)/2 · ctx per layer, ctx = s/2 (causal), W − W(W−1)/(2s) on sliding
//           layers with W < s (Megatron-Bridge flop_utils), chunk likewise for chunked attention
//   mlp     6 · d · (g·ffn on dense layers, g·(k·I_e + shared·I_s) on MoE layers); the router is not counted
//   logits  6 · d · V · (1 + mtp)
//   mtp     each depth: one more layer of the last layer's kind + 6 · (3d + 2d²) (norms, eh_proj)

#include "model.h"

namespace napkin::core {

struct MegatronCoreFlops {
    double linear = 0, core = 0, mlp = 0, logits = 0, mtp = 0;
    double total = 0; // per token
};

// m: the model shape, s: the sequence length.
MegatronCoreFlops megatronCoreFlopsPerToken(const TransformerShape& m, double s);

// Mean keys a query attends to over the layers under a causal mask: s/2 on full layers, W − W(W−1)/(2s)
// on sliding (or chunked) layers with W < s (Megatron-Bridge flop_utils.py).
double meanCausalContext(const TransformerShape& m, double s);

} // namespace napkin::core
