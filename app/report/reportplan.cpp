// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "reportplan.h"

#include "buckets.h"
#include "format.h"
#include "summary.h"
#include "validate.h"

namespace napkin::report::detail {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Label | value rows, the label as a row header; a bad value in the warning colour.
QString keyValueTable(const QList<QPair<QString, QString>>& rows, const QList<bool>& bad = {})
{
    QString h = QStringLiteral("<table class=\"t\" border=\"1\" cellspacing=\"0\" cellpadding=\"4\" width=\"100%\">");
    for (int i = 0; i < rows.size(); ++i) {
        const bool red = i < bad.size() && bad[i];
        h += QStringLiteral("<tr><th align=\"left\" width=\"22%\">%1</th><td>%2%3%4</td></tr>")
                 .arg(esc(rows[i].first), red ? QStringLiteral("<span style=\"color: #b71c1c\"><b>") : QString(),
                      esc(rows[i].second), red ? QStringLiteral("</b></span>") : QString());
    }
    return h + QStringLiteral("</table>");
}

QString where(bool crossesNodes)
{
    return crossesNodes ? QStringLiteral("between nodes") : QStringLiteral("in a node");
}

} // namespace

Section summarySection(const Evaluated& c, const Options& o, const std::vector<core::Sensitivity>& sensitivities)
{
    const auto accuracy = core::accuracyFor(c.scenario, core::builtinValidationResults(), 5);
    const auto rows = core::executiveSummary(c.scenario, c.plan, sensitivities, &accuracy,
                                             [&](double b) { return bytesText(b, o.gib).toStdString(); });
    QList<QPair<QString, QString>> kv;
    QList<bool> bad;
    for (const auto& r : rows) {
        QString value = qs(r.value);
        if (!value.isEmpty()) // the rows are sentences' bodies: capitalised here, as a table shows them
            value[0] = value[0].toUpper();
        kv.push_back({qs(r.label), value});
        bad.push_back(r.bad);
    }
    return {QStringLiteral("Summary"), keyValueTable(kv, bad), {}, true};
}

std::optional<Section> layoutSection(const Evaluated& c)
{
    const auto& sc = c.scenario;
    const auto& p = c.plan;
    const auto& pa = sc.parallel;
    const auto& st = p.stepTime;
    const bool predicted = sc.stepTime.mode == core::TimeMode::Predicted && st.valid;
    if (sc.cluster.gpus <= 1)
        return std::nullopt;
    QList<QPair<QString, QString>> kv;
    kv.push_back({QStringLiteral("GPUs"), QStringLiteral("%1 = TP %2 × PP %3 × CP %4 × DP %5, %6 per node")
                                              .arg(qs(core::formatGrouped(double(sc.cluster.gpus))))
                                              .arg(pa.tp)
                                              .arg(pa.pp)
                                              .arg(pa.cp)
                                              .arg(qs(core::formatGrouped(double(p.compute.dataParallel))))
                                              .arg(pa.gpusPerNode)});
    auto link = [&](bool crosses) { return predicted ? QStringLiteral(", ") + where(crosses) : QString(); };
    if (pa.tp > 1)
        kv.push_back({QStringLiteral("Tensor parallel"),
                      QStringLiteral("TP %1%2%3")
                          .arg(pa.tp)
                          .arg(pa.sequenceParallel ? QStringLiteral(" with sequence parallelism") : QString(),
                               link(st.tpCrossesNodes))});
    if (pa.pp > 1)
        kv.push_back(
            {QStringLiteral("Pipeline parallel"),
             QStringLiteral("PP %1, %2 schedule%3; bubble %4% of the step%5")
                 .arg(pa.pp)
                 .arg(QLatin1String(core::scheduleName(pa.schedule)),
                      pa.virtualStages > 1 ? QStringLiteral(", %1 virtual stages").arg(pa.virtualStages) : QString())
                 .arg(100 * p.memory.bubbleFraction, 0, 'f', 1)
                 .arg(link(st.ppCrossesNodes))});
    if (pa.cp > 1)
        kv.push_back(
            {QStringLiteral("Context parallel"),
             QStringLiteral("CP %1: each rank holds 1/%1 of the sequence%2").arg(pa.cp).arg(link(st.cpCrossesNodes))});
    const QString sharding = pa.fsdp != core::Fsdp::None
                                 ? QStringLiteral("FSDP %1").arg(QLatin1String(core::toString(pa.fsdp)))
                             : pa.zeroStage > 0 ? QStringLiteral("ZeRO stage %1").arg(pa.zeroStage)
                                                : QStringLiteral("replicated model states (no ZeRO, no FSDP)");
    kv.push_back({QStringLiteral("Data parallel"), QStringLiteral("DP %1, %2%3")
                                                       .arg(qs(core::formatGrouped(double(p.compute.dataParallel))),
                                                            sharding, link(st.dpCrossesNodes))});
    if (p.moe.applies)
        kv.push_back({QStringLiteral("Experts"), QStringLiteral("EP %1 × ETP %2, expert data parallel EDP %3")
                                                     .arg(p.moe.expertRanks)
                                                     .arg(p.moe.expertTensorRanks)
                                                     .arg(p.moe.expertDataParallel)});
    kv.push_back(
        {QStringLiteral("Batch"), QStringLiteral("micro-batch %1 × %2 accumulation steps × DP %3 = global batch %4")
                                      .arg(sc.training.microBatch)
                                      .arg(qs(core::formatGrouped(double(p.compute.accumulationSteps))),
                                           qs(core::formatGrouped(double(p.compute.dataParallel))),
                                           qs(core::formatGrouped(double(p.compute.effectiveGlobalBatch))))});
    return Section{QStringLiteral("Parallel layout"), keyValueTable(kv), {}};
}

std::optional<Section> stagesSection(const Evaluated& c, const Options& o)
{
    const auto& p = c.plan;
    if (p.memory.perStage.size() <= 1)
        return std::nullopt;
    // Bytes as plain numbers in the report's unit (named in the caption): short cells leave the
    // headings room to stay whole words.
    const double unit = o.gib ? 1073741824.0 : 1e9;
    auto amount = [&](double bytes) { return QString::number(bytes / unit, 'f', 2); };
    QStringList header{QStringLiteral("Stage"), QStringLiteral("Params")};
    QList<int> right{1};
    for (int i = 0; i < core::kTensorBucketCount; ++i) {
        header << QLatin1String(core::tensorBucket(i).heading);
        right << i + 2;
    }
    header << QStringLiteral("Total") << QStringLiteral("In flight");
    right << core::kTensorBucketCount + 2 << core::kTensorBucketCount + 3;
    QList<QStringList> rows;
    const auto& stages = p.memory.perStage;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        QStringList row{QString::number(s), num(stages[s].params)};
        for (int i = 0; i < core::kTensorBucketCount; ++i)
            row << amount(core::bucketBytes(core::tensorBucket(i), stages[s]));
        row << amount(stages[s].tensors) << num(stages[s].inFlight);
        rows.push_back(row);
    }
    return Section{QStringLiteral("Memory per pipeline stage"),
                   QStringLiteral("<p>Each stage's tensors on one of its ranks, in %1 (before the runtime's own "
                                  "overhead). Stage %2 is the most loaded: the ledger above is its. In flight: the "
                                  "micro-batches whose activations the stage holds at its peak.</p>")
                           .arg(o.gib ? QStringLiteral("GiB") : QStringLiteral("GB"))
                           .arg(p.memory.mostLoadedStage) +
                       table(header, rows, right),
                   QStringLiteral("stages")};
}

std::optional<Section> stepTimeSection(const Evaluated& c)
{
    const auto& p = c.plan;
    const auto& st = p.stepTime;
    if (c.scenario.stepTime.mode != core::TimeMode::Predicted || !st.valid)
        return std::nullopt;
    return Section{QStringLiteral("Predicted step time"),
                   QStringLiteral("<p>One optimizer step of %1 s: %2 tokens/s, MFU %3 and HFU %4 against the "
                                  "dense spec peak; the best this layout's GEMMs allow is MFU %5 "
                                  "(time.mfu_ceiling). Each part below is the time it adds to the step after "
                                  "overlap; data loading is assumed hidden.</p>")
                       .arg(num(st.step), num(st.tokensPerSecond))
                       .arg(st.mfu, 0, 'f', 3)
                       .arg(st.hfu, 0, 'f', 3)
                       .arg(p.time.mfuCeiling, 0, 'f', 3),
                   QStringLiteral("steptime")};
}

} // namespace napkin::report::detail
