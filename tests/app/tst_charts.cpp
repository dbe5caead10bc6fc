// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The charts (napkin_charts) offscreen, following a PlanController as the window's panels do: the ledger bar and the
// roofline points follow the plan, the units and the seeds' overlay, and never plot a NaN.
#include "chartpanels.h"
#include "chartstyle.h"
#include "ledgerchart.h"
#include "plancontroller.h"
#include "rooflinechart.h"
#include "stageschart.h"

#include <QApplication>
#include <QTest>
#include <QToolTip>

#include <cmath>
#include <memory>

using napkin::app::PlanController;
using napkin::charts::LedgerChart;
using napkin::charts::RooflineChart;

namespace {

QVector<double> planBuckets(const napkin::core::MemoryLedger& m)
{
    return {m.weights, m.gradients, m.masterWeights, m.optimizerStates, m.activations, m.temporaries, m.overhead};
}

// Intensity of the plan's op `name` in the panel's points (plan order), or -1.
double intensityOf(const RooflineChart& panel, const napkin::core::Plan& plan, const char* name)
{
    const QVector<QPointF> points = panel.opPoints();
    for (std::size_t i = 0; i < plan.ops.size() && i < std::size_t(points.size()); ++i)
        if (qstrcmp(plan.ops[i].name, name) == 0)
            return points[qsizetype(i)].x();
    return -1;
}

QStringList itemTexts(QCustomPlot* plot)
{
    QStringList out;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->visible())
            out.append(t->text());
    return out;
}

bool finiteRange(const QCPRange& r) { return std::isfinite(r.lower) && std::isfinite(r.upper) && r.lower < r.upper; }

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }

private slots:
    void init()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_controller = std::make_unique<PlanController>();
        m_controller->recomputeNow();
        m_ledger.reset(napkin::app::followPlan(new LedgerChart, m_controller.get()));
        m_roofline.reset(napkin::app::followPlan(new RooflineChart, m_controller.get()));
        m_ledger->resize(900, 300);
        m_roofline->resize(700, 500);
    }
    void cleanup()
    {
        m_ledger.reset();
        m_roofline.reset();
        m_controller.reset();
    }

    void ledgerBucketsArePlanBuckets()
    {
        const auto& memory = m_controller->plan().memory;
        QVERIFY(memory.total > 0);
        QVERIFY(m_ledger->bucketValues() == planBuckets(memory)); // exactly, not fuzzily
        // The bars draw those bytes in GB, stacked in ledger order.
        QCOMPARE(m_ledger->plot()->plottableCount(), LedgerChart::BucketCount);
        for (int i = 0; i < LedgerChart::BucketCount; ++i) {
            auto* bars = qobject_cast<QCPBars*>(m_ledger->plot()->plottable(i));
            QVERIFY(bars);
            QCOMPARE(bars->data()->size(), 1);
            QCOMPARE(bars->data()->at(0)->value, planBuckets(memory)[i] / 1e9);
            QCOMPARE(bars->barBelow(), i == 0 ? nullptr : m_ledger->plot()->plottable(i - 1));
        }
        for (int i = 0; i < LedgerChart::BucketCount; ++i)
            QVERIFY(m_ledger->plot()->legend->hasItemWithPlottable(m_ledger->plot()->plottable(i)));
    }

    void ledgerFollowsMicroBatch()
    {
        const double before = m_ledger->bucketValues()[4];
        m_controller->set(QStringLiteral("training.micro_batch"), 4);
        m_controller->recomputeNow();
        const auto& memory = m_controller->plan().memory;
        QVERIFY(m_ledger->bucketValues()[4] != before);
        QCOMPARE(m_ledger->bucketValues()[4], memory.activations);
        QVERIFY(m_ledger->bucketValues() == planBuckets(memory));
    }

    void ledgerHeadroomOrShortfall()
    {
        for (int microBatch : {1, 16}) {
            m_controller->set(QStringLiteral("training.micro_batch"), microBatch);
            m_controller->recomputeNow();
            const auto& memory = m_controller->plan().memory;
            const QString expected =
                memory.fits ? QStringLiteral("headroom %1").arg(m_controller->formatBytes(memory.headroom))
                            : QStringLiteral("short by %1").arg(m_controller->formatBytes(-memory.headroom));
            QVERIFY2(itemTexts(m_ledger->plot()).contains(expected),
                     qPrintable(itemTexts(m_ledger->plot()).join(u'|')));
            QVERIFY(m_ledger->plot()->xAxis->range().contains(memory.capacity / 1e9));
            QVERIFY(m_ledger->plot()->xAxis->range().contains(memory.total / 1e9));
        }
        // Micro-batch 16 of a 7B model at 4096 tokens does not fit an 80 GB GPU: both branches ran.
        QVERIFY(!m_controller->plan().memory.fits);
    }

    void unitsChangeAxisNotBytes()
    {
        const QVector<double> bytes = m_ledger->bucketValues();
        const QString labelBefore = m_ledger->plot()->xAxis->label();
        m_controller->setUnits(PlanController::Units::GiB);
        QVERIFY(m_ledger->bucketValues() == bytes);
        const QString labelAfter = m_ledger->plot()->xAxis->label();
        QVERIFY(labelAfter != labelBefore);
        QVERIFY(labelAfter.contains(QStringLiteral("GiB")));
        auto* weights = qobject_cast<QCPBars*>(m_ledger->plot()->plottable(0));
        QCOMPARE(weights->data()->at(0)->value, bytes[0] / 1073741824.0);
    }

    // A narrow ledger (the panel in a 1024-px window) keeps its title inside the plot: the capacity and
    // the headroom fall back to a second line rather than being cut.
    void ledgerTitleFitsANarrowPlot()
    {
        m_ledger->resize(330, 260);
        m_ledger->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_ledger.get()));
        m_ledger->plot()->replot();
        QCoreApplication::processEvents();
        m_ledger->plot()->replot();
        const QString title = m_ledger->plot()->xAxis->label();
        const QFontMetricsF fm(m_ledger->plot()->xAxis->labelFont());
        const int width = m_ledger->plot()->axisRect()->width();
        QVERIFY(width > 150);
        for (const QString& line : title.split(u'\n'))
            QVERIFY2(fm.horizontalAdvance(line) <= width, qPrintable(line));
        QVERIFY2(title.contains(QStringLiteral("capacity")) || title.contains(QStringLiteral("H100")),
                 qPrintable(title));
        m_ledger->hide();
        m_ledger->resize(900, 300);
    }

    void rooflinePointsAreOps()
    {
        const auto& plan = m_controller->plan();
        QVERIFY(!plan.ops.empty());
        QCOMPARE(m_roofline->opPointCount(), int(plan.ops.size()));
        const QVector<QPointF> points = m_roofline->opPoints();
        QCOMPARE(points.size(), qsizetype(plan.ops.size()));
        for (std::size_t i = 0; i < plan.ops.size(); ++i) {
            QCOMPARE(points[qsizetype(i)].x(), plan.ops[i].intensity);
            QCOMPARE(points[qsizetype(i)].y(), plan.ops[i].attainable);
            // Axis ranges fit every point (y is drawn in TFLOP/s).
            QVERIFY(m_roofline->plot()->xAxis->range().contains(points[qsizetype(i)].x()));
            QVERIFY(m_roofline->plot()->yAxis->range().contains(points[qsizetype(i)].y() / 1e12));
        }
        QVERIFY(m_roofline->plot()->yAxis->range().contains(plan.hardware.peakFlops / 1e12));
        // The ridge and the compute ceiling are labelled with the plan's numbers.
        const QStringList texts = itemTexts(m_roofline->plot());
        QVERIFY2(texts.contains(QStringLiteral("ridge %1 FLOP/byte").arg(std::round(plan.hardware.ridge))),
                 qPrintable(texts.join(u'|')));
        QVERIFY(texts.filter(QStringLiteral("tensor peak")).size() == 1);
        // At a projector's narrow plot (the chart panel at 1024 px wide) the ridge label stays inside the
        // axis rect: a ridge in the right half of the axis is labelled to its left.
        auto* plot = m_roofline->plot();
        m_roofline->resize(420, 360);
        m_roofline->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_roofline.get()));
        plot->replot();
        QCPItemText* ridge = nullptr;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->text().startsWith(u"ridge"))
                ridge = t;
        QVERIFY(ridge);
        const QRect box = plot->axisRect()->rect();
        QVERIFY2(ridge->right->pixelPosition().x() <= box.right() + 1 && ridge->left->pixelPosition().x() >= box.left(),
                 qPrintable(QStringLiteral("label %1..%2, axis %3..%4")
                                .arg(ridge->left->pixelPosition().x())
                                .arg(ridge->right->pixelPosition().x())
                                .arg(box.left())
                                .arg(box.right())));
        QVERIFY(box.width() > 250);
        m_roofline->resize(700, 500);
    }

    // An FP8 plan has two roofs; their label named both on one line, which at the chart panel's width
    // in a 1024 x 768 window (about 470 px) ran past the plot's left edge. It stays inside now.
    void twoRoofLabelStaysInThePlot()
    {
        m_controller->set(QStringLiteral("precision.plan"), "fp8-mixed");
        m_controller->recomputeNow();
        auto* plot = m_roofline->plot();
        m_roofline->resize(470, 300);
        m_roofline->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_roofline.get()));
        plot->replot();
        QCPItemText* peak = nullptr;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->text().contains(u"tensor peak"))
                peak = t;
        QVERIFY(peak);
        QVERIFY2(peak->text().contains(u"bf16"), qPrintable(peak->text()));
        const QRect box = plot->axisRect()->rect();
        const QRectF label(peak->topLeft->pixelPosition(), peak->bottomRight->pixelPosition());
        QVERIFY2(label.left() >= box.left() && label.right() <= box.right() + 1 && label.top() >= box.top(),
                 qPrintable(QStringLiteral("label %1,%2 .. %3,%4; axis %5,%6 .. %7,%8")
                                .arg(label.left())
                                .arg(label.top())
                                .arg(label.right())
                                .arg(label.bottom())
                                .arg(box.left())
                                .arg(box.top())
                                .arg(box.right())
                                .arg(box.bottom())));
    }

    void rooflineFollowsMicroBatch()
    {
        const char* gemms[] = {"qkv_proj", "out_proj", "mlp_down"};
        std::vector<double> before;
        for (const char* g : gemms) {
            before.push_back(intensityOf(*m_roofline, m_controller->plan(), g));
            QVERIFY2(before.back() > 0, g);
        }
        m_controller->set(QStringLiteral("training.micro_batch"), 4);
        m_controller->recomputeNow();
        const auto& plan = m_controller->plan();
        QCOMPARE(m_roofline->opPointCount(), int(plan.ops.size()));
        for (std::size_t i = 0; i < std::size(gemms); ++i)
            QVERIFY2(intensityOf(*m_roofline, plan, gemms[i]) > before[i], gemms[i]);
        const QVector<QPointF> points = m_roofline->opPoints();
        for (std::size_t i = 0; i < plan.ops.size(); ++i)
            QCOMPARE(points[qsizetype(i)].x(), plan.ops[i].intensity);
    }

    void seedOverlay()
    {
        QVERIFY(!m_roofline->showSeedOps());
        QVERIFY(m_roofline->seedOpPoints().isEmpty());
        const int graphsBefore = m_roofline->plot()->graphCount();
        m_roofline->setShowSeedOps(true);
        QVERIFY(m_roofline->showSeedOps());
        const QVector<QPointF> seeds = m_roofline->seedOpPoints();
        QCOMPARE(seeds.size(), 7);
        QCOMPARE(m_roofline->plot()->graphCount(), graphsBefore + 1);
        QCPGraph* overlay = m_roofline->plot()->graph(m_roofline->plot()->graphCount() - 1);
        QCOMPARE(overlay->data()->size(), 7);
        // CS336 lecture 2: X[128 x 4096] W[4096 x 4096] in bf16 is 2·128·4096² FLOPs over
        // 2·(128·4096 + 4096² + 128·4096) bytes = 120.47 FLOP/byte.
        QVERIFY2(std::abs(seeds[1].x() - 120.47) < 1e-3, qPrintable(QString::number(seeds[1].x(), 'g', 10)));
        QVERIFY(itemTexts(m_roofline->plot()).contains(QStringLiteral("GEMM M=128")));
        for (const QPointF& p : seeds)
            QVERIFY(m_roofline->plot()->xAxis->range().contains(p.x()));
        QCOMPARE(m_roofline->opPointCount(), int(m_controller->plan().ops.size())); // plan points stay
        m_roofline->setShowSeedOps(false);
        QVERIFY(m_roofline->seedOpPoints().isEmpty());
        QCOMPARE(m_roofline->plot()->graphCount(), graphsBefore);
    }

    // Memory per pipeline stage (issue 20): PP 4 on 64 GPUs gives four columns, each stage's tensor
    // buckets exactly as memory.per_stage holds them, the line at the capacity less the overhead.
    void stagesAreThePlansStages()
    {
        m_controller->set(QStringLiteral("cluster.gpus"), 64);
        m_controller->set(QStringLiteral("parallel.pp"), 4);
        m_controller->recomputeNow();
        const auto& memory = m_controller->plan().memory;
        QCOMPARE(memory.perStage.size(), std::size_t(4));
        std::unique_ptr<napkin::charts::StagesChart> chart(
            napkin::app::followPlan(new napkin::charts::StagesChart, m_controller.get()));
        chart->resize(900, 360);
        for (int i = 0; i < napkin::core::kTensorBucketCount; ++i) {
            const auto values = chart->stageValues(i);
            QCOMPARE(values.size(), qsizetype(4));
            auto* bars = qobject_cast<QCPBars*>(chart->plot()->plottable(i));
            QVERIFY(bars);
            for (int s = 0; s < 4; ++s) {
                const double bytes =
                    napkin::core::bucketBytes(napkin::core::tensorBucket(i), memory.perStage[std::size_t(s)]);
                QCOMPARE(values[s], bytes);
                QCOMPARE(bars->data()->at(s)->value, bytes / 1e9);
            }
        }
        // The stacked columns add up to each stage's tensors.
        for (int s = 0; s < 4; ++s) {
            double sum = 0;
            for (int i = 0; i < napkin::core::kTensorBucketCount; ++i)
                sum += chart->stageValues(i)[s];
            QVERIFY(std::fabs(sum / memory.perStage[std::size_t(s)].tensors - 1) < 1e-12);
        }
        QCOMPARE(chart->tensorRoom(), memory.capacity - memory.overhead);
        QVERIFY(itemTexts(chart->plot()).contains(QStringLiteral("most loaded")));
        // The first stage holds the most micro-batches in flight under 1F1B: p of them.
        QCOMPARE(memory.perStage.front().inFlight, 4.0);
    }

    void nothingNonFinite()
    {
        m_roofline->setShowSeedOps(true);
        for (QCustomPlot* plot : {m_ledger->plot(), m_roofline->plot()}) {
            plot->replot();
            QVERIFY(finiteRange(plot->xAxis->range()));
            QVERIFY(finiteRange(plot->yAxis->range()));
            for (const QString& t : itemTexts(plot))
                QVERIFY2(!t.contains(QStringLiteral("nan"), Qt::CaseInsensitive) &&
                             !t.contains(QStringLiteral("inf"), Qt::CaseInsensitive),
                         qPrintable(t));
        }
    }

    void hoverShowsOp()
    {
        m_roofline->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_roofline.get()));
        QCustomPlot* plot = m_roofline->plot();
        plot->replot();
        const auto& op = m_controller->plan().ops.front();
        const QPoint at(int(std::lround(plot->xAxis->coordToPixel(op.intensity))),
                        int(std::lround(plot->yAxis->coordToPixel(op.attainable / 1e12))));
        QTest::mouseMove(plot, at);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QString::fromUtf8(op.name)), qPrintable(QToolTip::text()));
        QVERIFY(QToolTip::text().contains(QStringLiteral("FLOP/byte")));
        QVERIFY(QToolTip::text().contains(QStringLiteral("ideal time")));
    }

    void recolourOnPaletteChange()
    {
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
        dark.setColor(QPalette::Text, QColor(0xee, 0xee, 0xee));
        m_ledger->setPalette(dark);
        m_roofline->setPalette(dark);
        QCOMPARE(m_ledger->plot()->xAxis->labelColor(), QColor(0xee, 0xee, 0xee));
        QCOMPARE(m_roofline->plot()->xAxis->labelColor(), QColor(0xee, 0xee, 0xee));
        QCOMPARE(m_ledger->plot()->legend->textColor(), QColor(0xee, 0xee, 0xee));
        QCOMPARE(m_roofline->opPointCount(), int(m_controller->plan().ops.size()));
    }

private:
    std::unique_ptr<PlanController> m_controller;
    std::unique_ptr<LedgerChart> m_ledger;
    std::unique_ptr<RooflineChart> m_roofline;
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
