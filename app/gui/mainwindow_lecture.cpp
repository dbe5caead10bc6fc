// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// MainWindow's lecture mode (issue 20): projector fonts and palette, the lecture layout (the step's
// panel beside the presenter text, the rest collapsed), the focus ring, the handout.
#include "mainwindow.h"

#include "focusring.h"
#include "lecturecontroller.h"
#include "lecturehandout.h"
#include "lecturepanel.h"
#include "plancontroller.h"
#include "report.h"
#include "rooflinechart.h"

#include <QApplication>
#include <QDockWidget>
#include <QGroupBox>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QStyleFactory>
#include <QTimer>

namespace napkin::app {

void MainWindow::setProjectorMode(bool on)
{
    QFont f = QApplication::font();
    f.setPointSize(m_baseFontPoints + (on ? 6 : 0) + m_zoom);
    QApplication::setFont(f);
    if (on)
        showFullScreen();
    else
        showNormal();
}

void MainWindow::startLecture(int step)
{
    if (m_lecture->isActive())
        m_lecture->goTo(step);
    else
        m_lecture->start(step);
}

void MainWindow::setLectureMode(bool on)
{
    // Projector fonts (+8 pt) and a high-contrast theme: white on black, yellow for the focus.
    QFont f = QApplication::font();
    f.setPointSize(m_baseFontPoints + (on ? 5 : 0) + m_zoom);
    QApplication::setFont(f);
    if (on) {
        m_paletteBeforeLecture = QApplication::palette();
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(LecturePanel::highContrastPalette());
        // Widgets with their own style sheet (the summary's value buttons) take the new palette
        // only when polished again.
        for (auto* w : findChildren<QWidget*>())
            if (!w->styleSheet().isEmpty()) {
                w->style()->unpolish(w);
                w->style()->polish(w);
            }
    } else {
        QApplication::setPalette(m_paletteBeforeLecture);
        highlightPanel(QString());
        m_roofline->setShowSeedOps(false);
    }
    m_lectureDock->setVisible(on);
    applyLectureLayout();
    // The presenter panel takes about 40% of the screen beside the step's panel. Again once the
    // collapsed panels have left the layout: started from a shown window, the central widget still
    // had the controls' minimum width and the dock stayed ~70 px wide (tst_geometry::lectureSteps).
    const auto sizeDock = [this] {
        if (m_lectureDock->isVisible())
            resizeDocks({m_lectureDock}, {width() * 40 / 100}, Qt::Horizontal);
    };
    if (on) {
        sizeDock();
        QTimer::singleShot(0, this, sizeDock);
    }
    if (m_lectureFullScreen)
        on ? showFullScreen() : showNormal();
}

void MainWindow::highlightPanel(const QString& focus)
{
    m_highlighted = m_frames.contains(focus) ? focus : QString();
    const QString color = LecturePanel::highContrastPalette().color(QPalette::Highlight).name();
    for (auto it = m_frames.begin(); it != m_frames.end(); ++it) {
        // A ring drawn over the panel, not a style sheet: the panel's labels and charts keep
        // inheriting the projector font (app/gui/focusring.h).
        const auto rings = it.value()->findChildren<FocusRing*>(QString(), Qt::FindDirectChildrenOnly);
        for (FocusRing* ring : rings)
            delete ring;
        it.value()->setStyleSheet(QString());
        it.value()->setFont(QFont());
        const bool on = it.key() == m_highlighted;
        if (on)
            new FocusRing(it.value(), QColor(color));
        // The ring runs along the frame's edge: a centred title stays clear of it.
        it.value()->setAlignment(on ? Qt::AlignHCenter : Qt::AlignLeft);
    }
    applyLectureLayout();
}

// The lecture layout (issue 20): the step's panel beside the presenter text, drawn with the room of
// the whole window; the controls, the warnings and the other panels collapsed. A step whose focus
// has no panel of its own (the dtype and checkpoint tables live in the presenter text) keeps the
// summary beside it. View > Whole window (F6) shows everything, as outside a lecture.
void MainWindow::applyLectureLayout()
{
    const bool compact = m_lecture->isActive() && !m_lectureWholeWindow;
    const QString shown = m_frames.contains(m_highlighted) ? m_highlighted : QStringLiteral("summary");
    m_controlsScroll->setVisible(!compact);
    m_warningsFrame->setVisible(!compact);
    for (auto it = m_frames.begin(); it != m_frames.end(); ++it)
        it.value()->setVisible(!compact || it.key() == shown);
    // A splitter whose panels are all collapsed gives its room away too.
    auto anyVisible = [](const QSplitter* s) {
        for (int i = 0; i < s->count(); ++i)
            if (!s->widget(i)->isHidden())
                return true;
        return false;
    };
    m_sideSplit->setVisible(anyVisible(m_sideSplit));
    m_notesSplit->setVisible(anyVisible(m_notesSplit));
    m_topSplit->setVisible(anyVisible(m_topSplit));
    m_bottomSplit->setVisible(anyVisible(m_bottomSplit));
}

QString MainWindow::exportLectureHandout(const QString& file, bool letter)
{
    report::Options options;
    options.page = letter ? report::PageSize::Letter : report::PageSize::A4;
    options.gib = m_controller->units() == PlanController::Units::GiB;
    options.napkinVersion = QApplication::applicationVersion();
    return report::writeLectureHandout(m_lecture->lecture(), file, options, m_lecture->calibrationProfile());
}

} // namespace napkin::app
