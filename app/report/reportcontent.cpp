// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportcontent.h"
#include "reportplan.h"
#include "wordbreaks.h"

#include "buckets.h"
#include "format.h"
#include "sensitivity.h"
#include "summary.h"
#include "accuracy.h"
#include "validate.h"

#include <QDateTime>

#include <cmath>
#include <functional>

namespace napkin::report::detail {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString dt(core::DType t) { return QString::fromLatin1(core::info(t).id.data(), qsizetype(core::info(t).id.size())); }

QString intText(double v) { return QString::fromStdString(core::formatGrouped(std::round(v))); }

} // namespace

QString table(const QStringList& header, const QList<QStringList>& rows, const QList<int>& rightAligned,
              const QList<int>& widths)
{
    QString h =
        QStringLiteral("<table class=\"t\" border=\"1\" cellspacing=\"0\" cellpadding=\"3\" width=\"100%\"><tr>");
    for (qsizetype i = 0; i < header.size(); ++i)
        h += (i < widths.size() ? QStringLiteral("<th width=\"%1%\">").arg(widths[i]) : QStringLiteral("<th>")) +
             esc(header[i]) + QStringLiteral("</th>");
    h += QStringLiteral("</tr>");
    for (const auto& r : rows) {
        h += QStringLiteral("<tr>");
        for (int i = 0; i < r.size(); ++i)
            h += (rightAligned.contains(i) ? QStringLiteral("<td align=\"right\">") : QStringLiteral("<td>")) +
                 esc(r[i]) + QStringLiteral("</td>");
        h += QStringLiteral("</tr>");
    }
    return h + QStringLiteral("</table>");
}

namespace {

const core::Derivation* find(const core::Plan& p, const char* q)
{
    for (const auto& d : p.derivations)
        if (std::string_view(d.quantity) == q)
            return &d;
    return nullptr;
}

// Sources cited by number in the body, listed in an appendix (issue 20): the body stays readable
// and each URL or code excerpt is printed once.
class Citations {
public:
    QString cite(const QString& source)
    {
        if (source.isEmpty())
            return {};
        qsizetype i = m_sources.indexOf(source);
        if (i < 0) {
            m_sources << source;
            i = m_sources.size() - 1;
        }
        return QStringLiteral("[%1]").arg(i + 1);
    }
    // The "Sources" appendix, or no section when nothing was cited.
    void appendTo(std::vector<Section>& out) const
    {
        if (m_sources.isEmpty())
            return;
        QString h;
        for (qsizetype i = 0; i < m_sources.size(); ++i)
            h += QStringLiteral("<p>[%1] %2</p>").arg(i + 1).arg(esc(m_sources[i]));
        out.push_back({QStringLiteral("Sources"), h, {}});
    }

private:
    QStringList m_sources;
};

QString words(const Evaluated& c, const Options& o, Citations& citations)
{
    const auto& sc = c.scenario;
    const auto& p = c.plan;
    const auto& s = sc.model.shape;
    QString model =
        esc(qs(sc.model.name)) + QStringLiteral(", ") + intText(p.params.total) + QStringLiteral(" parameters");
    if (p.params.active < p.params.total) // mixture of experts: the convention named (moe-notes.md §0.3)
        model += QStringLiteral(" (%1 active per token with the input embedding, %2 without)")
                     .arg(intText(p.params.active), intText(p.params.activeExclEmbedding));
    if (sc.model.kind == core::ModelKind::Mlp)
        model += QStringLiteral(" (deep linear model: %1 layers of width %2)")
                     .arg(sc.model.mlp.layers)
                     .arg(sc.model.mlp.width);
    else
        model += QStringLiteral(" (%1%2 layers, d_model %3, %4 heads, %5 KV heads, %6 ffn %7, vocab %8)")
                     .arg(p.params.derivedShape ? QStringLiteral("derived shape: ") : QString())
                     .arg(s.layers)
                     .arg(s.dModel)
                     .arg(s.heads)
                     .arg(s.kvHeads)
                     .arg(QLatin1String(core::toString(s.ffnKind)))
                     .arg(s.ffn)
                     .arg(s.vocab);
    if (core::isMoe(s))
        model += QStringLiteral("; %1 of %2 experts of width %3 per token on %4 of %5 layers%6")
                     .arg(s.moe.topK)
                     .arg(s.moe.experts)
                     .arg(s.moe.expertFfn)
                     .arg(core::moeLayerCount(s))
                     .arg(s.layers)
                     .arg(s.moe.sharedExperts > 0 ? QStringLiteral(", %1 shared").arg(s.moe.sharedExperts) : QString());
    if (s.attention == core::AttentionKind::Mla)
        model += QStringLiteral("; latent attention (q rank %1, kv rank %2, head dims %3 + %4 / %5)")
                     .arg(s.mla.qLoraRank)
                     .arg(s.mla.kvLoraRank)
                     .arg(s.mla.qkNopeHeadDim)
                     .arg(s.mla.qkRopeHeadDim)
                     .arg(s.mla.vHeadDim);
    if (p.params.mtp > 0)
        model += QStringLiteral("; %1 multi-token prediction depth(s), %2 parameters not in the total")
                     .arg(s.mtpLayers)
                     .arg(intText(p.params.mtp));
    const auto& pr = sc.precision;
    QString h;
    h += QStringLiteral("<p><b>Model:</b> %1.</p>").arg(model);
    if (const auto& ft = p.finetune; ft.adapters > 0) // LoRA / QLoRA: what trains, how the base is stored
        h += QStringLiteral("<p><b>Fine-tuning:</b> %1, rank %2 adapters on %3 of every block: %4 trainable parameters "
                            "(%5% of %6); the frozen base's linear layers in %7 (%8 bytes per weight)%9.</p>")
                 .arg(ft.method == std::string_view("qlora") ? QStringLiteral("QLoRA") : QStringLiteral("LoRA"))
                 .arg(ft.loraRank)
                 .arg(esc(qs(core::loraTargetNames(ft.targets))), intText(ft.trainable))
                 .arg(100 * ft.trainable / (p.params.total + ft.adapters), 0, 'f', 2)
                 .arg(intText(p.params.total + ft.adapters), esc(qs(ft.baseDtype)))
                 .arg(ft.baseBytesPerValue, 0, 'g', 4)
                 .arg(ft.pagedOptimizer ? QStringLiteral("; paged optimizer") : QString());
    if (sc.model.kind == core::ModelKind::Mlp)
        h += QStringLiteral("<p><b>Training:</b> %1 examples; batch %2 per GPU, global batch %3 (%4 accumulation steps "
                            "× %5 data-parallel GPUs).</p>")
                 .arg(num(sc.training.tokens))
                 .arg(sc.training.microBatch)
                 .arg(p.compute.effectiveGlobalBatch)
                 .arg(p.compute.accumulationSteps)
                 .arg(p.compute.dataParallel);
    else
        h += QStringLiteral("<p><b>Training:</b> %1 tokens in sequences of %2; micro-batch %3, global batch %4 (%5 "
                            "accumulation steps × %6 data-parallel GPUs); recomputation %7%8.</p>")
                 .arg(num(sc.training.tokens))
                 .arg(sc.training.seqLen)
                 .arg(sc.training.microBatch)
                 .arg(p.compute.effectiveGlobalBatch)
                 .arg(p.compute.accumulationSteps)
                 .arg(p.compute.dataParallel)
                 .arg(QLatin1String(core::toString(sc.training.recompute)))
                 .arg(sc.training.flashAttention ? QStringLiteral(", FlashAttention") : QString());
    h += QStringLiteral("<p><b>Precision:</b> %1 (weights %2, gradients %3, master %4, optimizer states %5, "
                        "activations %6, matmuls %7); optimizer %8.</p>")
             .arg(esc(qs(pr.plan)), dt(pr.weights), dt(pr.gradients),
                  pr.master ? dt(*pr.master) : QStringLiteral("none"), dt(pr.optimizer), dt(pr.activations),
                  dt(pr.compute), QLatin1String(core::toString(sc.optimizer)));
    h += QStringLiteral("<p><b>Cluster:</b> %1 × %2, ZeRO stage %3, $%4 per GPU-hour. GPU figures: %5.</p>")
             .arg(sc.cluster.gpus)
             .arg(esc(qs(sc.gpu->name)))
             .arg(sc.parallel.zeroStage)
             .arg(sc.cluster.pricePerGpuHour, 0, 'f', 2)
             .arg(esc(qs(p.hardware.gpu->origin) + QLatin1Char(' ') + citations.cite(qs(p.hardware.source()))));
    // MFU is against the spec sheet's dense peak in both modes; in the predicted mode it is an output.
    const QString mfu = sc.stepTime.mode == core::TimeMode::Predicted
                            ? QStringLiteral("MFU predicted %1 (the step-time model) of the dense %2 peak (%3 TFLOP/s)")
                            : QStringLiteral("MFU assumed %1 of the dense %2 peak (%3 TFLOP/s)");
    h += QStringLiteral("<p><b>Conventions:</b> FLOPs per token by %1; sizes in %2; %3.</p>")
             .arg(QLatin1String(p.compute.convention),
                  o.gib ? QStringLiteral("GiB (2^30 bytes)") : QStringLiteral("GB (10^9 bytes)"),
                  mfu.arg(sc.stepTime.mode == core::TimeMode::Predicted ? p.time.mfu : sc.cluster.mfu, 0, 'f', 2)
                      .arg(QLatin1String(p.hardware.computeDtype), num(p.hardware.peakFlops / 1e12)));
    return h;
}

QList<QStringList> ledgerRows(const core::Plan& p, bool gib)
{
    const auto& m = p.memory;
    auto row = [&](const char* n, double v) {
        return QStringList{QLatin1String(n), bytesText(v, gib),
                           QStringLiteral("%1 %").arg(m.total > 0 ? 100 * v / m.total : 0, 0, 'f', 1)};
    };
    QList<QStringList> rows;
    for (const auto& b : core::kMemoryBuckets)
        rows.push_back(row(b.title, core::bucketBytes(b, m)));
    rows.push_back(row("Total", m.total));
    rows.push_back({QStringLiteral("Capacity"), bytesText(m.capacity, gib), QString()});
    return rows;
}

} // namespace

QString esc(const QString& s) { return s.toHtmlEscaped(); }

// core::humanNumber, the one formatter every front end uses for people.
QString human(double v, core::Quantity q) { return QString::fromStdString(core::humanNumber(v, q)); }

QString num(double v)
{
    if (!std::isfinite(v))
        return QStringLiteral("n/a");
    const double a = std::fabs(v);
    if (a >= 1e6 && a < 1e15) // counts as people write them: "15 T", "1.206 M" (core::formatCount)
        return qs(core::formatCount(v));
    if (a >= 1e15) // "6.3e24"
        return qs(core::formatScientific(v, 4));
    if (a >= 1e4) // never 5.263e+04 for hours or money: 52,634
        return qs(core::formatGrouped(std::round(v)));
    if (a > 0 && a < 1e-3)
        return QString::number(v, 'g', 4);
    if (v == std::floor(v))
        return qs(core::formatGrouped(v));
    return QString::number(v, 'g', 4);
}

QString bytesText(double bytes, bool gib)
{
    if (gib)
        return QStringLiteral("%1 GiB").arg(bytes / 1073741824.0, 0, 'f', 2);
    return qs(core::formatBytes(bytes));
}

namespace {

// How far to trust the time (core/accuracy.h): the validated runs most like the scenario.
QString accuracyLine(const core::Scenario& sc)
{
    const auto a = core::accuracyFor(sc, core::builtinValidationResults(), 5);
    QString ids;
    for (const auto& r : a.closest)
        ids += (ids.isEmpty() ? QString() : QStringLiteral(", ")) + qs(r.result->c->id);
    return QStringLiteral("Accuracy of the time: ") + qs(core::accuracyText(a)) +
           (ids.isEmpty() ? QString() : QStringLiteral(" Runs: %1 (docs/validation.md).").arg(ids)) +
           (sc.stepTime.mode == core::TimeMode::Predicted
                ? QString()
                : QStringLiteral(" These errors are of the predicted step time; this plan assumes its MFU."));
}

} // namespace

std::vector<Section> reportSections(const Evaluated& c, const Options& o)
{
    const auto& p = c.plan;
    const auto& sc = c.scenario;
    const auto& m = p.memory;
    std::vector<Section> out;
    // The user's title or scenario name, else what the plan is; a user name that no longer says what
    // the plan is (edited GPUs, tokens or model) is shown with the derived description under it.
    const QString title = o.title.isEmpty() ? qs(p.title()) : o.title;
    const QString derived = title != qs(p.derivedName())
                                ? QStringLiteral("<p class=\"derived\">Plan: %1</p>").arg(esc(qs(p.derivedName())))
                                : QString();
    out.push_back(
        {QString(),
         QStringLiteral(
             "<h1>%1</h1>%2<p>Napkin %3 · %4 · a training budget: memory per GPU, compute and time, data movement.</p>")
             .arg(esc(title), derived, esc(o.napkinVersion), QDate::currentDate().toString(Qt::ISODate)),
         {}});
    // Sensitivities once: the summary's main risk and the last section read them.
    const auto sens = core::sensitivities(c.document, 3, c.baseDir.toStdString());
    out.push_back(summarySection(c, o, sens));
    Citations citations;
    out.push_back({QStringLiteral("The plan"), words(c, o, citations), {}});
    if (auto s = layoutSection(c))
        out.push_back(*s);
    const QString verdict =
        m.fits ? QStringLiteral("<p class=\"ok\"><b>Fits:</b> %1 per GPU of %2, headroom %3.</p>")
                     .arg(bytesText(m.total, o.gib), bytesText(m.capacity, o.gib), bytesText(m.headroom, o.gib))
               : QStringLiteral("<p class=\"bad\"><b>Does not fit:</b> %1 per GPU of %2, short by %3.</p>")
                     .arg(bytesText(m.total, o.gib), bytesText(m.capacity, o.gib), bytesText(-m.headroom, o.gib));
    out.push_back({QStringLiteral("Memory per GPU"),
                   verdict + table({QStringLiteral("Bucket"), QStringLiteral("Per GPU"), QStringLiteral("Share")},
                                   ledgerRows(p, o.gib), {1, 2}),
                   QStringLiteral("ledger")});
    if (auto s = stagesSection(c, o))
        out.push_back(*s);
    if (m.timelineCount > 0) {
        QString peakEvent = QString::fromLatin1(m.peakPhase).replace(QLatin1Char('_'), QLatin1Char(' '));
        out.push_back({QStringLiteral("Memory through one step"),
                       QStringLiteral(
                           "<p>Allocated on the most loaded GPU through one optimizer step (memory.timeline): model "
                           "states, the activations of the micro-batches in flight, temporaries (logits and loss, "
                           "gathered parameters, buckets, optimizer temporaries) and the runtime's own. The peak falls "
                           "at %1; the ledger's total adds the caching allocator's reserve.</p>")
                           .arg(esc(peakEvent)),
                       QStringLiteral("timeline")});
    }
    const QList<QStringList> compute{
        {QStringLiteral("FLOPs per token (%1)").arg(QLatin1String(p.compute.convention)),
         human(p.compute.flopsPerToken, core::Quantity::Flops)},
        {QStringLiteral("Training FLOPs (model)"), human(p.compute.trainingFlops, core::Quantity::Flops)},
        {QStringLiteral("Hardware FLOPs (with recomputation)"), human(p.compute.hardwareFlops, core::Quantity::Flops)},
        {QStringLiteral("Time"), QStringLiteral("%1 (%2)").arg(human(p.time.days, core::Quantity::Days),
                                                               human(p.time.seconds, core::Quantity::Seconds))},
        {QStringLiteral("GPU-hours"), human(p.time.gpuHours, core::Quantity::GpuHours)},
        {QStringLiteral("Cost"), human(p.cost.usd, core::Quantity::Usd)},
        {QStringLiteral("Energy (GPUs at TDP)"),
         p.cost.energyKwh > 0 ? human(p.cost.energyKwh, core::Quantity::EnergyKwh) : QStringLiteral("n/a")},
        {sc.stepTime.mode == core::TimeMode::Predicted ? QStringLiteral("MFU predicted / HFU")
                                                       : QStringLiteral("MFU assumed / HFU"),
         QStringLiteral("%1 / %2").arg(p.time.mfu, 0, 'f', 2).arg(p.time.hfu, 0, 'f', 2)},
        {QStringLiteral("Step time, throughput"),
         QStringLiteral("%1 s, %2 tokens/s").arg(num(p.time.stepSeconds), num(p.time.tokensPerSecond))},
    };
    out.push_back({QStringLiteral("Compute, time and cost"),
                   table({QStringLiteral("Quantity"), QStringLiteral("Value")}, compute, {1}) +
                       QStringLiteral("<p>%1</p>").arg(esc(accuracyLine(sc))),
                   {}});
    if (auto s = stepTimeSection(c))
        out.push_back(*s);
    QList<QStringList> ops;
    for (const auto& op : p.ops)
        ops.push_back({QLatin1String(op.name), QLatin1String(core::toString(op.pass)), num(op.flops), num(op.bytes),
                       QString::number(op.intensity, 'g', 4), QLatin1String(core::toString(op.bound)),
                       num(op.timeSeconds)});
    out.push_back(
        {QStringLiteral("Roofline of one layer"),
         QStringLiteral("<p>%1 at %2 TFLOP/s dense %3 and %4 TB/s: ridge %5 FLOP/byte. Each op of one layer "
                        "at micro-batch %6, forward and backward; below the ridge an op waits on memory.</p>")
             .arg(esc(qs(p.hardware.name())), num(p.hardware.peakFlops / 1e12), QLatin1String(p.hardware.computeDtype),
                  num(p.hardware.bandwidth / 1e12), QString::number(p.hardware.ridge, 'f', 1))
             .arg(sc.training.microBatch),
         QStringLiteral("roofline")});
    // Long tables go in chunks: a PDF page break then falls between chunks, never inside a row.
    const QStringList opHeader{
        QStringLiteral("Op"),        QStringLiteral("Pass"),  QStringLiteral("FLOPs"),         QStringLiteral("Bytes"),
        QStringLiteral("FLOP/byte"), QStringLiteral("Bound"), QStringLiteral("Ideal time (s)")};
    for (int i = 0; i < ops.size(); i += 15)
        out.push_back(
            {i == 0 ? QStringLiteral("Roofline ops") : QString(), table(opHeader, ops.mid(i, 15), {2, 3, 4, 6}), {}});
    QList<QStringList> ders;
    for (const char* q : {"params.total", "params.trainable", "memory.per_gpu.weights",
                          "memory.per_gpu.optimizer_states", "memory.per_gpu.activations", "memory.per_gpu.temporaries",
                          "memory.per_gpu.total", "compute.flops_per_token", "compute.training_flops", "time.seconds",
                          "time.days", "time.gpu_hours", "cost.usd", "cost.energy_kwh", "hardware.ridge"}) {
        if (const auto* d = find(p, q))
            ders.push_back({breakAfter(QLatin1String(d->quantity)), qs(core::formulaText(*d)),
                            qs(core::substitutedText(*d)), qs(core::resultText(*d)),
                            citations.cite(qs(core::sourceText(*d, p)))});
    }
    const QStringList derHeader{QStringLiteral("Quantity"), QStringLiteral("Formula"), QStringLiteral("Values"),
                                QStringLiteral("Result"), QStringLiteral("Source")};
    for (int i = 0; i < ders.size(); i += 5)
        // Quantities break after their dots (wordbreaks.h), formulas and values at the spaces around
        // their operators.
        out.push_back({i == 0 ? QStringLiteral("Derivations") : QString(),
                       table(derHeader, ders.mid(i, 5), {}, {24, 25, 25, 18, 8}),
                       {}});
    QString warn;
    for (const auto& w : p.warnings)
        warn += QStringLiteral("<li>") + esc(qs(w.message)) + QStringLiteral("</li>");
    out.push_back({QStringLiteral("Warnings"),
                   warn.isEmpty() ? QStringLiteral("<p>None: the plan fits and its inputs are consistent.</p>")
                                  : QStringLiteral("<ul>") + warn + QStringLiteral("</ul>"),
                   {}});
    QList<QStringList> sensRows;
    for (const auto& s : sens)
        sensRows.push_back(
            {qs(s.input), QString::fromUtf8(s.change.c_str()),
             bytesText(s.memoryBefore, o.gib) + QStringLiteral(" → ") + bytesText(s.memoryAfter, o.gib) +
                 (s.fitsAfter != s.fitsBefore
                      ? (s.fitsAfter ? QStringLiteral(" (now fits)") : QStringLiteral(" (no longer fits)"))
                      : QString()),
             QString::number(s.daysBefore, 'f', 1) + QStringLiteral(" → ") + QString::number(s.daysAfter, 'f', 1)});
    out.push_back({QStringLiteral("What would change the answer"),
                   QStringLiteral("<p>The inputs this plan is most sensitive to, each moved one step with everything "
                                  "else fixed (re-estimated, not rules of thumb).</p>") +
                       table({QStringLiteral("Input"), QStringLiteral("Change"), QStringLiteral("Memory per GPU"),
                              QStringLiteral("Days")},
                             sensRows, {2, 3}),
                   {}});
    citations.appendTo(out);
    return out;
}

std::vector<Section> comparisonSections(const std::vector<const Evaluated*>& cs, const QStringList& labels,
                                        const Options& o)
{
    std::vector<Section> out;
    out.push_back(
        {QString(),
         QStringLiteral("<h1>%1</h1><p>Napkin %2 · %3 · %4 scenarios side by side; Δ is against the first.</p>")
             .arg(esc(o.title.isEmpty() ? QStringLiteral("Comparison") : o.title), esc(o.napkinVersion),
                  QDate::currentDate().toString(Qt::ISODate))
             .arg(cs.size()),
         {}});
    struct Row {
        QString name;
        std::function<double(const core::Plan&)> value;
        bool bytes;
    };
    std::vector<Row> rows{
        {QStringLiteral("Parameters"), [](const core::Plan& p) { return p.params.total; }, false},
        {QStringLiteral("Trainable"), [](const core::Plan& p) { return p.finetune.trainable; }, false}};
    for (const auto& b : core::kMemoryBuckets) {
        // "Master weights per GPU", "Overhead per GPU": the bucket's label, capitalised.
        QString name = QLatin1String(b.label) + QStringLiteral(" per GPU");
        name[0] = name[0].toUpper();
        rows.push_back({name, [&b](const core::Plan& p) { return core::bucketBytes(b, p.memory); }, true});
    }
    rows.insert(
        rows.end(),
        {
            {QStringLiteral("Total per GPU"), [](const core::Plan& p) { return p.memory.total; }, true},
            {QStringLiteral("Training FLOPs"), [](const core::Plan& p) { return p.compute.trainingFlops; }, false},
            {QStringLiteral("Hardware FLOPs"), [](const core::Plan& p) { return p.compute.hardwareFlops; }, false},
            {QStringLiteral("Days"), [](const core::Plan& p) { return p.time.days; }, false},
            {QStringLiteral("GPU-hours"), [](const core::Plan& p) { return p.time.gpuHours; }, false},
            {QStringLiteral("Cost (USD)"), [](const core::Plan& p) { return p.cost.usd; }, false},
            {QStringLiteral("Energy (kWh)"), [](const core::Plan& p) { return p.cost.energyKwh; }, false},
        });
    QStringList header{QStringLiteral("Quantity")};
    QList<int> right;
    for (int i = 0; i < int(cs.size()); ++i) {
        header << labels.value(i);
        right << int(header.size() - 1);
        if (i > 0) {
            header << QStringLiteral("Δ ") + labels.value(i);
            right << int(header.size() - 1);
        }
    }
    QList<QStringList> body;
    for (const auto& r : rows) {
        QStringList line{r.name};
        const double first = r.value(cs.front()->plan);
        for (int i = 0; i < int(cs.size()); ++i) {
            const double v = r.value(cs[std::size_t(i)]->plan);
            line << (r.bytes ? bytesText(v, o.gib) : num(v));
            if (i > 0) {
                const double d = v - first;
                // One sign style (U+2212 minus) and no break inside "(+3.9%)": a narrow column wrapped
                // the "%)" onto a line of its own.
                const QString sign = d >= 0 ? QStringLiteral("+") : QStringLiteral("\u2212");
                const QString pct =
                    first != 0 ? QStringLiteral(" (%1%2%)").arg(sign).arg(std::fabs(100 * d / first), 0, 'f', 1)
                               : QString();
                line << sign + (r.bytes ? bytesText(std::fabs(d), o.gib) : num(std::fabs(d))) + pct;
            }
        }
        body << line;
    }
    QStringList fits{QStringLiteral("Fits")};
    for (int i = 0; i < int(cs.size()); ++i) {
        fits << (cs[std::size_t(i)]->plan.memory.fits ? QStringLiteral("yes") : QStringLiteral("no"));
        if (i > 0)
            fits << QString();
    }
    body << fits;
    out.push_back({QStringLiteral("Side by side"), table(header, body, right), {}});
    Citations citations;
    for (int i = 0; i < int(cs.size()); ++i)
        out.push_back({labels.value(i), words(*cs[std::size_t(i)], o, citations), QStringLiteral("ledger")});
    citations.appendTo(out);
    return out;
}

QString reportMarkdown(const Evaluated& c, const Options& o, const QString& ledgerPng, const QString& rooflinePng)
{
    const auto sens = core::sensitivities(c.document, 3, c.baseDir.toStdString());
    // The executive summary under the title (core/summary.h), as in the PDF's page 1.
    const auto accuracy = core::accuracyFor(c.scenario, core::builtinValidationResults(), 5);
    QString md = qs(core::planMarkdownWithSummary(c.scenario, c.plan, sens, &accuracy,
                                                  [&](double b) { return bytesText(b, o.gib).toStdString(); }));
    // Charts beside the text, right after the section they illustrate.
    md.replace(QStringLiteral("## Memory per GPU\n"),
               QStringLiteral("## Memory per GPU\n\n![Memory per GPU](%1)\n").arg(ledgerPng));
    md.replace(QStringLiteral("## Roofline (one layer)\n"),
               QStringLiteral("## Roofline (one layer)\n\n![Roofline](%1)\n").arg(rooflinePng));
    return md;
}

QString comparisonMarkdown(const std::vector<const Evaluated*>& cs, const QStringList& labels, const Options& o)
{
    QString md = QStringLiteral("# %1\n\n").arg(o.title.isEmpty() ? QStringLiteral("Comparison") : o.title);
    md += QStringLiteral("| quantity |");
    for (const auto& l : labels)
        md += QStringLiteral(" %1 |").arg(l);
    md += QStringLiteral("\n|---|") + QStringLiteral("---:|").repeated(labels.size()) + QStringLiteral("\n");
    auto row = [&](const QString& name, auto value, bool bytes) {
        md += QStringLiteral("| ") + name + QStringLiteral(" |");
        for (const auto* c : cs)
            md += QStringLiteral(" ") + (bytes ? bytesText(value(c->plan), o.gib) : num(value(c->plan))) +
                  QStringLiteral(" |");
        md += QStringLiteral("\n");
    };
    row(
        QStringLiteral("parameters"), [](const core::Plan& p) { return p.params.total; }, false);
    row(
        QStringLiteral("memory per GPU"), [](const core::Plan& p) { return p.memory.total; }, true);
    row(
        QStringLiteral("training FLOPs"), [](const core::Plan& p) { return p.compute.trainingFlops; }, false);
    row(
        QStringLiteral("days"), [](const core::Plan& p) { return p.time.days; }, false);
    row(
        QStringLiteral("GPU-hours"), [](const core::Plan& p) { return p.time.gpuHours; }, false);
    row(
        QStringLiteral("cost (USD)"), [](const core::Plan& p) { return p.cost.usd; }, false);
    return md;
}

} // namespace napkin::report::detail
