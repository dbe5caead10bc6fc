// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Live update: from a slider value change to a recomputed and repainted ledger, table and roofline,
// driving the real window offscreen (QT_QPA_PLATFORM=offscreen unless set). Each sample: move the
// slider as a drag does, run the event loop (coalesced recompute, view updates, queued replots),
// then deliver one frame (the dirty widgets paint). Prints percentiles.
// Usage: bench_live [iterations] [slider path, default training.micro_batch]
// Environment: BENCH_FULL_REPAINT=1 repaints the whole window every step (the worst case, as after an
// expose); BENCH_PAINTS=1 lists the widgets that painted in at least half of the steps.
#include "controlspanel.h"
#include "mainwindow.h"
#include "plancontroller.h"
#include "quantityslider.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QWindow>

#include <algorithm>
#include <map>
#include <cstdio>
#include <vector>

namespace {
// With BENCH_PAINTS set: counts paint events per widget class (and object name), to find widgets
// that repaint on a drag without showing anything new.
class PaintCounter : public QObject {
public:
    std::map<QString, int> counts;
    bool eventFilter(QObject* o, QEvent* e) override
    {
        if (e->type() == QEvent::Resize || e->type() == QEvent::Move || e->type() == QEvent::LayoutRequest)
            ++counts[QStringLiteral("[%1] ").arg(int(e->type())) + QString::fromLatin1(o->metaObject()->className()) +
                     u' ' + (o->parent() ? QString::fromLatin1(o->parent()->metaObject()->className()) : QString())];
        if (e->type() == QEvent::Paint)
            ++counts[QString::fromLatin1(o->metaObject()->className()) + u' ' + o->objectName() + u' ' +
                     (o->parent() ? QString::fromLatin1(o->parent()->metaObject()->className()) : QString())];
        return false;
    }
};
} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 400;
    const QString path = argc > 2 ? QString::fromLocal8Bit(argv[2]) : QStringLiteral("training.micro_batch");
    napkin::app::PlanController controller;
    napkin::app::MainWindow window(&controller);
    window.resize(1280, 800);
    window.show();
    for (int i = 0; i < 10; ++i)
        QApplication::processEvents();
    auto* s = window.controls()->slider(path);
    if (!s) {
        std::fprintf(stderr, "no slider %s\n", qPrintable(path));
        return 2;
    }
    const int a = s->positionFor(s->minimum() < 1 ? 1 : s->minimum()),
              b = s->positionFor(s->maximum() > 8 ? 8 : s->maximum());
    const bool fullRepaint = qEnvironmentVariableIntValue("BENCH_FULL_REPAINT") != 0;
    PaintCounter counter;
    if (qEnvironmentVariableIsSet("BENCH_PAINTS"))
        app.installEventFilter(&counter);
    std::vector<double> ms, events, paint;
    QElapsedTimer t;
    for (int i = 0; i < iterations + 20; ++i) {
        t.start();
        s->slider()->setValue(i % 2 ? a : b + (i % 7)); // one drag step
        QApplication::processEvents();                  // coalesced recompute, model resets, queued replots
        QApplication::processEvents();
        const double afterEvents = double(t.nsecsElapsed()) / 1e6;
        // Deliver the frame now, as Qt's repaint manager does (it posts QEvent::UpdateRequest to the
        // top-level widget): the widgets marked dirty paint (slider, number box, ledger, table,
        // charts, numbers, derivation). Not to window.windowHandle(): QWidgetWindow treats an
        // UpdateRequest as "repaint the whole window" (an expose), which is not what a drag costs.
        // BENCH_FULL_REPAINT=1 measures that worst case instead (every widget repaints each step).
        QEvent frame(QEvent::UpdateRequest);
        if (fullRepaint)
            QCoreApplication::sendEvent(window.windowHandle(), &frame);
        else
            QCoreApplication::sendEvent(&window, &frame);
        const double elapsed = double(t.nsecsElapsed()) / 1e6;
        if (i >= 20) { // after warm-up
            ms.push_back(elapsed);
            events.push_back(afterEvents);
            paint.push_back(elapsed - afterEvents);
        }
    }
    for (const auto& [name, n] : counter.counts)
        if (n >= iterations / 2)
            std::printf("  paints: %5d  %s\n", n, qPrintable(name));
    for (auto* v : {&ms, &events, &paint})
        std::sort(v->begin(), v->end());
    auto pctOf = [](const std::vector<double>& v, double p) {
        return v[std::min(v.size() - 1, std::size_t(p * double(v.size())))];
    };
    auto pct = [&](double p) { return pctOf(ms, p); };
    std::printf("live update (%s drag -> recompute -> repaint%s, 1280x800 offscreen, %d samples): "
                "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                qPrintable(path), fullRepaint ? " of the whole window" : "", int(ms.size()), pct(0.50), pct(0.90),
                pct(0.99), ms.back());
    std::printf("  of which recompute + views updated: p50 %.2f ms, p99 %.2f ms; painting the frame: p50 %.2f ms, p99 "
                "%.2f ms\n",
                pctOf(events, 0.5), pctOf(events, 0.99), pctOf(paint, 0.5), pctOf(paint, 0.99));
    return 0;
}
