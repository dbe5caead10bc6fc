// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "lecturepanel.h"

#include "checkpointchart.h"
#include "dtypeexplain.h"
#include "lecturecontroller.h"
#include "lecturehandout.h"
#include "plancontroller.h"

#include <QAbstractSpinBox>
#include <QApplication>
#include <QEvent>
#include <QFontDatabase>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTableWidget>
#include <QTextDocument>
#include <QVBoxLayout>

#include <algorithm>

namespace napkin::app {

namespace {
QLabel* wrapped()
{
    auto* l = new QLabel;
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}
QString plain(const QString& html)
{
    QTextDocument d;
    d.setHtml(html);
    return d.toPlainText().remove(QChar(0x200B)); // the break opportunities are not text
}
} // namespace

LecturePanel::LecturePanel(LectureController* lecture, PlanController* plan, QWidget* parent)
    : QWidget(parent), m_lecture(lecture), m_plan(plan), m_counter(new QLabel), m_title(wrapped()),
      m_narration(wrapped()), m_note(wrapped()), m_numbersHeading(new QLabel(tr("The numbers"))), m_numbers(wrapped()),
      m_derivationHeading(new QLabel(tr("Derivation"))), m_derivation(wrapped()), m_dtypeFrame(new QFrame),
      m_dtypeTable(new QTableWidget), m_chart(new charts::CheckpointChart), m_hint(wrapped()),
      m_keys(new QLabel(tr("Page Down / Space: next · Page Up: back · Home / End · F6: whole window · Esc: leave")))
{
    setObjectName(QStringLiteral("lecturePanel"));
    setAutoFillBackground(true);
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(12, 8, 12, 8);
    v->addWidget(m_counter);
    v->addWidget(m_title);
    v->addWidget(m_narration);
    v->addWidget(m_note);
    v->addWidget(m_numbersHeading);
    v->addWidget(m_numbers);
    v->addWidget(m_derivationHeading);
    v->addWidget(m_derivation);
    m_dtypeFrame->setObjectName(QStringLiteral("lectureFocusFrame"));
    auto* dv = new QVBoxLayout(m_dtypeFrame);
    dv->setContentsMargins(4, 4, 4, 4);
    dv->addWidget(m_dtypeTable);
    dv->addWidget(m_chart);
    v->addWidget(m_dtypeFrame, 1);
    v->addWidget(m_hint);
    v->addStretch();
    v->addWidget(m_keys);
    m_dtypeTable->setColumnCount(3);
    m_dtypeTable->verticalHeader()->hide();
    m_dtypeTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_dtypeTable->setFocusPolicy(Qt::NoFocus);
    m_dtypeTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_dtypeTable->horizontalHeader()->setStretchLastSection(true);
    // Every line wraps: a label that does not sets the panel's minimum width, and on a 1024- or
    // 1366-pixel projector the presenter text would run past the screen's edge (issue 20).
    for (QLabel* l : {m_counter, m_numbersHeading, m_derivationHeading, m_keys})
        l->setWordWrap(true);
    m_dtypeTable->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
    m_note->setStyleSheet(QStringLiteral("font-style: italic;"));
    m_hint->setStyleSheet(QStringLiteral("font-style: italic;"));
    connect(lecture, &LectureController::stepChanged, this, &LecturePanel::refreshStep);
    connect(lecture, &LectureController::activeChanged, this, &LecturePanel::onActiveChanged);
    connect(plan, &PlanController::planChanged, this, &LecturePanel::refreshLive);
    connect(plan, &PlanController::unitsChanged, this, &LecturePanel::refreshLive);
    updateFonts();
    refreshStep();
}

LecturePanel::~LecturePanel()
{
    if (m_filtering)
        qApp->removeEventFilter(this);
}

QPalette LecturePanel::highContrastPalette()
{
    QPalette p;
    const QColor black(0, 0, 0), white(255, 255, 255), yellow(255, 214, 0), grey(40, 40, 40);
    p.setColor(QPalette::Window, black);
    p.setColor(QPalette::WindowText, white);
    p.setColor(QPalette::Base, black);
    p.setColor(QPalette::AlternateBase, grey);
    p.setColor(QPalette::Text, white);
    p.setColor(QPalette::Button, grey);
    p.setColor(QPalette::ButtonText, white);
    p.setColor(QPalette::BrightText, yellow);
    p.setColor(QPalette::Highlight, yellow);
    p.setColor(QPalette::HighlightedText, black);
    p.setColor(QPalette::ToolTipBase, grey);
    p.setColor(QPalette::ToolTipText, white);
    p.setColor(QPalette::PlaceholderText, QColor(190, 190, 190));
    p.setColor(QPalette::Link, yellow);
    return p;
}

QString LecturePanel::titleText() const { return m_title->text(); }
QString LecturePanel::numbersText() const { return plain(m_numbers->text()); }
QString LecturePanel::derivationText() const { return plain(m_derivation->text()); }

void LecturePanel::onActiveChanged(bool active)
{
    if (active && !m_filtering)
        qApp->installEventFilter(this);
    else if (!active && m_filtering)
        qApp->removeEventFilter(this);
    m_filtering = active;
}

bool LecturePanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::KeyPress || !m_lecture->isActive())
        return QWidget::eventFilter(watched, event);
    // Only the window's keys: a dialog of its own (the dtype explorer, a file dialog) keeps them.
    auto* w = qobject_cast<QWidget*>(watched);
    if (!w || w->window() != window())
        return false;
    const auto* key = static_cast<QKeyEvent*>(event);
    // Typing into a slider's box keeps Space, Home, End and Backspace for the text.
    QWidget* focus = QApplication::focusWidget();
    const bool editing = qobject_cast<QLineEdit*>(focus) || qobject_cast<QAbstractSpinBox*>(focus);
    switch (key->key()) {
    case Qt::Key_PageDown: m_lecture->next(); return true;
    case Qt::Key_PageUp: m_lecture->previous(); return true;
    case Qt::Key_Escape: m_lecture->stop(); return true;
    case Qt::Key_Space:
        if (editing)
            return false;
        m_lecture->next();
        return true;
    case Qt::Key_Backspace:
        if (editing)
            return false;
        m_lecture->previous();
        return true;
    case Qt::Key_Home:
        if (editing)
            return false;
        m_lecture->first();
        return true;
    case Qt::Key_End:
        if (editing)
            return false;
        m_lecture->last();
        return true;
    default: return false;
    }
}

void LecturePanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        updateFonts();
}

void LecturePanel::updateFonts()
{
    const QFont base = font();
    const double pt = base.pointSizeF() > 0 ? base.pointSizeF() : 10.0;
    QFont title = base;
    title.setPointSizeF(pt * 1.8);
    title.setBold(true);
    m_title->setFont(title);
    QFont heading = base;
    heading.setPointSizeF(pt * 1.15);
    heading.setBold(true);
    m_numbersHeading->setFont(heading);
    m_derivationHeading->setFont(heading);
    QFont body = base;
    body.setPointSizeF(pt * 1.2);
    m_narration->setFont(body);
    m_numbers->setFont(body);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setPointSizeF(pt * 1.25);
    m_derivation->setFont(mono);
    m_dtypeTable->setFont(body);
    m_dtypeTable->verticalHeader()->setDefaultSectionSize(QFontMetrics(body).height() + 8);
    QFont small = base;
    small.setPointSizeF(pt * 0.85);
    m_counter->setFont(small);
    m_keys->setFont(small);
    sizeFormatColumn();
}

// The format names at the table's own (lecture) font, sized again whenever the font or the rows
// change: the header's contents size came from the font before the lecture's and elided them
// ("fp8_…" at 1366x768, issue 20).
void LecturePanel::sizeFormatColumn()
{
    if (m_dtypeTable->rowCount() == 0 || !m_dtypeTable->horizontalHeaderItem(0))
        return;
    const QFontMetrics fm(m_dtypeTable->font());
    for (int c = 0; c < 2; ++c) { // the format and the stored value; the bits stretch
        const auto* header = m_dtypeTable->horizontalHeaderItem(c);
        int width = header ? m_dtypeTable->horizontalHeader()->fontMetrics().horizontalAdvance(header->text()) : 0;
        for (int r = 0; r < m_dtypeTable->rowCount(); ++r)
            if (const auto* item = m_dtypeTable->item(r, c))
                width = std::max(width, fm.horizontalAdvance(item->text()));
        m_dtypeTable->horizontalHeader()->setSectionResizeMode(c, QHeaderView::Fixed);
        m_dtypeTable->horizontalHeader()->resizeSection(c, width + 2 * fm.averageCharWidth() + 8);
    }
}

void LecturePanel::refreshStep()
{
    const auto* step = m_lecture->currentStep();
    if (!step) {
        m_counter->setText(tr("No walkthrough loaded"));
        m_title->clear();
        m_narration->clear();
        m_note->hide();
        m_dtypeFrame->hide();
        m_chart->hide();
        m_hint->hide();
        refreshLive();
        return;
    }
    m_counter->setText(tr("Step %1 of %2 · %3")
                           .arg(m_lecture->stepIndex() + 1)
                           .arg(m_lecture->stepCount())
                           .arg(QString::fromStdString(m_lecture->lecture().title)));
    m_title->setText(QString::fromStdString(step->title).toHtmlEscaped());
    m_narration->setText(QString::fromStdString(step->narration).toHtmlEscaped());
    if (step->calibration) {
        m_note->setText(m_lecture->stepUsesCalibration()
                            ? tr("Peaks measured on this machine: calibration profile %1.")
                                  .arg(m_lecture->calibrationProfile().toHtmlEscaped())
                            : QString::fromStdString(
                                  step->fallback.empty() ? "No calibration profile: spec-sheet peaks." : step->fallback)
                                  .toHtmlEscaped());
        m_note->show();
    } else {
        m_note->hide();
    }
    m_hint->setText(tr("Try: %1").arg(QString::fromStdString(step->hint).toHtmlEscaped()));
    m_hint->setVisible(!step->hint.empty());

    m_dtypeTable->setVisible(step->dtypeValue.has_value());
    if (step->dtypeValue) {
        const auto all = core::storeInAll(*step->dtypeValue);
        m_dtypeTable->setRowCount(int(all.size()));
        QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        mono.setPointSizeF(m_dtypeTable->font().pointSizeF() * 0.9);
        for (int r = 0; r < int(all.size()); ++r) {
            const auto& s = all[std::size_t(r)];
            const auto& f = core::info(s.type);
            QString stored = QString::number(s.stored, 'g', 6);
            if (s.underflow)
                stored += tr(" (underflow)");
            else if (s.overflow)
                stored += f.hasInfinity ? tr(" (overflow)") : tr(" (saturated)");
            const QString cells[] = {QString::fromLatin1(f.id.data(), qsizetype(f.id.size())), stored,
                                     QString::fromStdString(s.signBits + " " + s.exponentBits + " " + s.mantissaBits)};
            for (int c = 0; c < 3; ++c) {
                auto* item = new QTableWidgetItem(cells[c]);
                if (c == 2)
                    item->setFont(mono);
                m_dtypeTable->setItem(r, c, item);
            }
        }
        m_dtypeTable->setHorizontalHeaderLabels({tr("Format"),
                                                 tr("%1 is stored as").arg(QString::number(*step->dtypeValue, 'g', 9)),
                                                 tr("Bits: sign exponent mantissa")});
    }
    m_chart->setVisible(step->focus == core::LectureFocus::Checkpoint);
    m_dtypeFrame->setVisible(step->dtypeValue.has_value() || step->focus == core::LectureFocus::Checkpoint);
    const bool focusHere = step->focus == core::LectureFocus::Dtype || step->focus == core::LectureFocus::Checkpoint;
    const QString color = highContrastPalette().color(QPalette::Highlight).name();
    m_dtypeFrame->setStyleSheet(
        focusHere ? QStringLiteral("QFrame#lectureFocusFrame { border: 4px solid %1; }").arg(color) : QString());
    m_dtypeFrame->setFont(font());
    sizeFormatColumn();
    refreshLive();
}

void LecturePanel::refreshLive()
{
    const auto* step = m_lecture->currentStep();
    const bool gib = m_plan->units() == PlanController::Units::GiB;
    const QString numbers = step ? report::lectureNumbersHtml(m_lecture->checks(), gib) : QString();
    m_numbers->setText(numbers);
    m_numbers->setVisible(!numbers.isEmpty());
    m_numbersHeading->setVisible(!numbers.isEmpty());
    const QString derivation =
        step && !step->derivation.empty() ? report::lectureDerivationHtml(m_plan->plan(), step->derivation) : QString();
    m_derivation->setText(derivation);
    m_derivation->setVisible(!derivation.isEmpty());
    m_derivationHeading->setVisible(!derivation.isEmpty());
    if (step && step->focus == core::LectureFocus::Checkpoint)
        m_chart->setCurve(core::checkpointCurveFor(m_plan->scenario()), m_plan->plan().memory.checkpointEvery, gib);
}

} // namespace napkin::app
