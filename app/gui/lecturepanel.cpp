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
    return d.toPlainText();
}
} // namespace

LecturePanel::LecturePanel(LectureController* lecture, PlanController* plan, QWidget* parent)
    : QWidget(parent), m_lecture(lecture), m_plan(plan), m_counter(new QLabel), m_title(wrapped()), m_narration(wrapped()),
      m_note(wrapped()), m_numbersHeading(new QLabel(tr("The numbers"))), m_numbers(wrapped()),
      m_derivationHeading(new QLabel(tr("Derivation"))), m_derivation(wrapped()), m_dtypeFrame(new QFrame),
      m_dtypeTable(new QTableWidget), m_chart(new CheckpointChart), m_hint(wrapped()),
      m_keys(new QLabel(tr("Page Down / Space: next · Page Up: back · Home / End · Esc: leave")))
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
    auto* dv = new QVBoxLayout(m_dtypeFrame);
    dv->setContentsMargins(0, 0, 0, 0);
    dv->addWidget(m_dtypeTable);
    v->addWidget(m_dtypeFrame, 1);
    v->addWidget(m_chart, 1);
    v->addWidget(m_hint);
    v->addStretch();
    v->addWidget(m_keys);
    m_dtypeTable->setColumnCount(4);
    m_dtypeTable->setHorizontalHeaderLabels({tr("Format"), tr("Bits"), tr("Stored"), tr("Note")});
    m_dtypeTable->verticalHeader()->hide();
    m_dtypeTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_dtypeTable->setFocusPolicy(Qt::NoFocus);
    m_dtypeTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_dtypeTable->horizontalHeader()->setStretchLastSection(true);
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
        if (editing) return false;
        m_lecture->next();
        return true;
    case Qt::Key_Backspace:
        if (editing) return false;
        m_lecture->previous();
        return true;
    case Qt::Key_Home:
        if (editing) return false;
        m_lecture->first();
        return true;
    case Qt::Key_End:
        if (editing) return false;
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
    QFont small = base;
    small.setPointSizeF(pt * 0.85);
    m_counter->setFont(small);
    m_keys->setFont(small);
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
                            ? tr("Peaks measured on this machine: calibration profile %1.").arg(m_lecture->calibrationProfile().toHtmlEscaped())
                            : QString::fromStdString(step->fallback.empty() ? "No calibration profile: spec-sheet peaks." : step->fallback)
                                  .toHtmlEscaped());
        m_note->show();
    } else {
        m_note->hide();
    }
    m_hint->setText(tr("Try: %1").arg(QString::fromStdString(step->hint).toHtmlEscaped()));
    m_hint->setVisible(!step->hint.empty());

    m_dtypeFrame->setVisible(step->dtypeValue.has_value());
    if (step->dtypeValue) {
        const auto all = core::storeInAll(*step->dtypeValue);
        m_dtypeTable->setRowCount(int(all.size()));
        const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        for (int r = 0; r < int(all.size()); ++r) {
            const auto& s = all[std::size_t(r)];
            const auto& f = core::info(s.type);
            QString note = QString::fromStdString(s.note);
            if (s.underflow)
                note = tr("underflows to zero");
            else if (s.overflow)
                note = f.hasInfinity ? tr("overflows to infinity") : tr("saturates");
            const QString cells[] = {QString::fromLatin1(f.id.data(), qsizetype(f.id.size())),
                                     QString::fromStdString(s.signBits + " " + s.exponentBits + " " + s.mantissaBits),
                                     QString::number(s.stored, 'g', 9), note};
            for (int c = 0; c < 4; ++c) {
                auto* item = new QTableWidgetItem(cells[c]);
                if (c == 1)
                    item->setFont(mono);
                m_dtypeTable->setItem(r, c, item);
            }
        }
        m_dtypeTable->setHorizontalHeaderLabels({tr("Format"), tr("Bits (sign exponent mantissa)"),
                                                 tr("%1 is stored as").arg(QString::number(*step->dtypeValue, 'g', 9)), tr("Note")});
    }
    m_chart->setVisible(step->focus == core::LectureFocus::Checkpoint);
    const bool focusHere = step->focus == core::LectureFocus::Dtype || step->focus == core::LectureFocus::Checkpoint;
    const QString frame = QStringLiteral("border: 3px solid %1;").arg(palette().color(QPalette::Highlight).name());
    m_dtypeFrame->setStyleSheet(focusHere ? QStringLiteral("QFrame { %1 }").arg(frame) : QString());
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
    const QString derivation = step && !step->derivation.empty() ? report::lectureDerivationHtml(m_plan->plan(), step->derivation) : QString();
    m_derivation->setText(derivation);
    m_derivation->setVisible(!derivation.isEmpty());
    m_derivationHeading->setVisible(!derivation.isEmpty());
    if (step && step->focus == core::LectureFocus::Checkpoint)
        m_chart->setCurve(core::checkpointCurveFor(m_plan->scenario()), m_plan->plan().memory.checkpointEvery, gib);
}

} // namespace napkin::app
