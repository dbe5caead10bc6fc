#include "activations.h"

#include <cmath>

namespace napkin::core {

LayerActivationTerms layerActivations(const TransformerShape& m, double s, double b, double e, Recompute recompute,
                                      bool flash, double t, bool sequenceParallel)
{
    LayerActivationTerms r;
    const double h = double(m.dModel), a = double(m.heads);
    const double qd = double(m.heads) * double(m.headDim), kvd = double(m.kvHeads) * double(m.headDim);
    const double f = double(m.ffn);
    const double mask = m.dropout ? 1.0 : 0.0;
    if (recompute == Recompute::Full) {
        // Only the layer input is kept: 2sbh at 16 bits (Korthikanti §5, Table 2 last row).
        r.perTokenBytes = e * h / (sequenceParallel ? t : 1.0);
        r.total = s * b * r.perTokenBytes;
        return r;
    }
    // Not split by tensor parallelism (unless sequence parallel): the two norm inputs (2·e·h), the
    // QKV and MLP inputs (2·e·h) and the two dropout masks after attention and MLP (2·h bytes).
    // Korthikanti: 4sbh + 4sbh + 2sbh = 10sbh at e = 2.
    const double replicated = 4 * e * h + 2 * mask * h;
    // Split by t: Q, K, V and the output-projection input (4·e·h for MHA), the MLP's saved inputs
    // (GELU: its input and fc2's input, 2·e·ffn = 16sbh at ffn = 4h; SwiGLU: gate, up, down inputs).
    const double mlp = (m.ffnKind == FfnKind::Swiglu ? 3.0 : 2.0) * e * f;
    const double split = e * (2 * qd + 2 * kvd) + mlp;
    r.perTokenBytes = (sequenceParallel ? replicated / t : replicated) + split / t;
    // Attention scores: softmax output (e) + dropout mask (1) + dropout output (e) per element:
    // 5as²b at e = 2. FlashAttention and selective recompute do not keep them.
    const bool keepScores = !flash && recompute == Recompute::None;
    r.perScoreBytes = keepScores ? (e + mask * (1 + e)) / t : 0.0;
    r.flashStatsBytes = flash ? 4.0 * a * s * b / t : 0.0; // fp32 log-sum-exp per row (Dao 2023)
    r.total = s * b * r.perTokenBytes + r.perScoreBytes * a * s * s * b + r.flashStatsBytes;
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
