// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The executive summary (core/summary.h): each row against numbers worked out here by hand.
#include "estimate.h"
#include "summary.h"
#include "testsupport.h"

#include <QtTest>

#include <string>

using namespace napkin;

using test::scenario;

namespace {

std::string gb(double bytes) { return std::to_string(bytes); }

const core::SummaryRow& row(const std::vector<core::SummaryRow>& rows, const std::string& label)
{
    for (const auto& r : rows)
        if (r.label == label)
            return r;
    static const core::SummaryRow none{"(missing)", "", false};
    return none;
}

bool has(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

} // namespace

class TestSummary : public QObject {
    Q_OBJECT
private slots:
    // TP 8 x PP 4 on 64 GPUs: DP = 64 / (8 * 4) = 2; the default global batch 1,024 at micro-batch 1
    // takes 1024 / (1 * 2) = 512 accumulation steps.
    void layoutLineByHand()
    {
        const auto sc = scenario({"cluster.gpus=64", "parallel.tp=8", "parallel.pp=4", "parallel.zero=1"});
        const auto plan = core::estimate(sc);
        QCOMPARE(core::layoutLine(sc, plan),
                 std::string("TP 8 × PP 4 × CP 1 × DP 2 = 64 GPUs (8 per node); ZeRO-1; micro-batch 1, global batch "
                             "1,024 (512 accumulation steps); 1F1B schedule"));
        const auto fsdp =
            scenario({"cluster.gpus=16", "parallel.zero=3", "parallel.fsdp=full", "training.micro_batch=4"});
        // 1024 / (4 * 16) = 16 steps; no pipeline: no schedule.
        QCOMPARE(core::layoutLine(fsdp, core::estimate(fsdp)),
                 std::string("TP 1 × PP 1 × CP 1 × DP 16 = 16 GPUs (8 per node); FSDP full; micro-batch 4, global "
                             "batch 1,024 (16 accumulation steps)"));
    }

    // 6 · 7e9 · 2e12 = 8.4e22 FLOPs on 64 H100s (989.5 TFLOP/s dense bf16) at MFU 0.5:
    // 8.4e22 / (64 · 989.5e12 · 0.5) = 2,652,855 s = 30.7 days; 64 · 2,652,855 / 3600 = 47,162 GPU-hours,
    // $117.9 K at $2.50.
    void rowsOfAPlanThatFits()
    {
        const auto sc = scenario(
            {"model.params=7e9", "training.tokens=2e12", "cluster.gpus=64", "flops.convention=6PT", "parallel.zero=3"});
        const auto plan = core::estimate(sc);
        const auto rows = core::executiveSummary(sc, plan, {}, nullptr, [](double b) { return gb(b); });
        QVERIFY(plan.memory.fits);
        QVERIFY(has(row(rows, "Verdict").value, "fits: "));
        QVERIFY(!row(rows, "Verdict").bad);
        QVERIFY2(has(row(rows, "Time").value, "30.7 days"), row(rows, "Time").value.c_str());
        QVERIFY(has(row(rows, "Time").value, "at an assumed MFU of 0.50"));
        QVERIFY(has(row(rows, "GPUs").value, "64 × NVIDIA H100"));
        QVERIFY(has(row(rows, "GPUs").value, "spec sheet figures"));
        QVERIFY2(has(row(rows, "GPU-hours").value, "47.2 K GPU-hours"), row(rows, "GPU-hours").value.c_str());
        QVERIFY2(has(row(rows, "Cost").value, "$118 K at $2.50 per GPU-hour"), row(rows, "Cost").value.c_str());
        QVERIFY(has(row(rows, "Layout").value, "DP 64 = 64 GPUs"));
        QCOMPARE(row(rows, "Accuracy of the time").label, std::string("(missing)")); // not asked for
        // No price: said so, not "$0".
        const auto free = scenario({"cluster.price_per_gpu_hour=0"});
        const auto freeRows = core::executiveSummary(free, core::estimate(free), {}, nullptr, gb);
        QVERIFY(has(row(freeRows, "Cost").value, "not estimated"));
    }

    // Llama 2 70B in bf16-mixed with Adam on one 80 GB GPU: 16 bytes per parameter alone are 1.1 TB.
    // The verdict and the main risk (the does_not_fit warning, before any other) are bad.
    void aPlanThatDoesNotFit()
    {
        const auto sc = scenario({"model.preset=llama-2-70b", "cluster.gpus=1"});
        const auto plan = core::estimate(sc);
        QVERIFY(!plan.memory.fits);
        const auto rows = core::executiveSummary(sc, plan, {}, nullptr, gb);
        QVERIFY(row(rows, "Verdict").bad);
        QVERIFY(has(row(rows, "Verdict").value, "does not fit: "));
        QVERIFY(has(row(rows, "Verdict").value, "short by "));
        QVERIFY(row(rows, "Main risk").bad);
        QVERIFY2(has(row(rows, "Main risk").value, "needs "), row(rows, "Main risk").value.c_str());
    }

    // No warning: the most sensitive input is the risk, with its numbers.
    void sensitivityIsTheRiskWithoutWarnings()
    {
        core::Plan plan;
        core::Sensitivity s;
        s.input = "training.micro_batch";
        s.change = "1 → 2";
        s.memoryBefore = 60e9;
        s.memoryAfter = 90e9;
        s.fitsBefore = true;
        s.fitsAfter = false;
        s.daysBefore = 10;
        s.daysAfter = 9.5;
        const auto risk = core::mainRisk(plan, {s}, [](double b) { return std::to_string(int(b / 1e9)) + " GB"; });
        QCOMPARE(risk.value,
                 std::string("most sensitive input: training.micro_batch 1 → 2 moves memory per GPU 60 GB → "
                             "90 GB (then it no longer fits) and the time 10.0 → 9.5 days"));
        QVERIFY(risk.bad);
        QVERIFY(has(core::mainRisk(plan, {}, gb).value, "none found"));
    }

    void scheduleNames()
    {
        QCOMPARE(std::string(core::scheduleName(core::PipelineSchedule::OneFOneB)), std::string("1F1B"));
        QCOMPARE(std::string(core::scheduleName(core::PipelineSchedule::Interleaved)), std::string("interleaved 1F1B"));
        QCOMPARE(std::string(core::scheduleName(core::PipelineSchedule::DualPipe)), std::string("DualPipe"));
    }
};

QTEST_GUILESS_MAIN(TestSummary)
#include "tst_summary.moc"
