// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "activations.h"

#include "saved_tensors.h"

#include <cmath>

namespace napkin::core {

LayerActivationTerms layerActivations(const TransformerShape& m, double s, double b, double e, Recompute recompute,
                                      bool flash, double t, bool sequenceParallel)
{
    // The sum of the fused list's kept tensors (core/saved_tensors.h), split as Korthikanti writes it.
    TensorContext c;
    c.s = s;
    c.b = b;
    c.e = e;
    c.t = t;
    c.sequenceParallel = sequenceParallel;
    c.flash = flash;
    c.policy = recompute;
    c.modules = recompute == Recompute::Selective ? kModuleCoreAttn : 0;
    const LayerTensors lt = layerSavedTensors(m, c);
    LayerActivationTerms r;
    r.perTokenBytes = lt.keptPerToken;
    r.perScoreBytes = lt.keptPerScore;
    r.flashStatsBytes = lt.keptStats;
    r.total = lt.kept;
    return r;
}

double checkpointedActivations(double layers, double k, double boundaryBytes, double layerBytes)
{
    return std::ceil(layers / k) * boundaryBytes + k * layerBytes;
}

CheckpointCurve checkpointCurve(std::int64_t layers, double boundaryBytes, double layerBytes)
{
    CheckpointCurve c;
    if (layers < 1)
        return c;
    c.bytes.reserve(std::size_t(layers));
    for (std::int64_t k = 1; k <= layers; ++k) {
        const double v = checkpointedActivations(double(layers), double(k), boundaryBytes, layerBytes);
        c.bytes.push_back(v);
        if (c.bestK == 0 || v < c.bestBytes) {
            c.bestK = k;
            c.bestBytes = v;
        }
    }
    return c;
}

} // namespace napkin::core
