// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Nothing drawn outside its box (issue 20): at the window sizes lecturers and users meet, every shown
// label of the window, of each tab and of each dialog has the room its text needs. A label on one
// line needs its whole text width; a wrapping label needs the height its text takes at its width.
// Labels inside a scroll area's content scroll, so they are measured against their own box only.

#include "derivationpanel.h"
#include "layoutsearchdialog.h"
#include "lecturecontroller.h"
#include "mainwindow.h"
#include "plancontroller.h"

#include <QApplication>
#include <QDialog>
#include <QLabel>
#include <QHeaderView>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>

using namespace napkin::app;

namespace {

// Why a label is short of room, or an empty string when it has enough.
QString clipped(const QLabel* label)
{
    if (label->text().isEmpty() || !label->pixmap().isNull())
        return {};
    const QSize have = label->size();
    if (label->wordWrap()) {
        const int need = label->heightForWidth(have.width());
        return need > have.height() + 1 ? QStringLiteral("needs %1 px of height at width %2, has %3")
                                              .arg(need)
                                              .arg(have.width())
                                              .arg(have.height())
                                        : QString();
    }
    const int need = label->minimumSizeHint().width();
    return need > have.width() + 1 ? QStringLiteral("needs %1 px of width, has %2").arg(need).arg(have.width())
                                   : QString();
}

// A label in a scroll area that never scrolls sideways must end inside its viewport (the lecture
// panel's presenter text was cut at the right edge when a long derivation widened its content).
QString pastViewport(const QLabel* label)
{
    for (const QWidget* w = label->parentWidget(); w; w = w->parentWidget()) {
        const auto* area = qobject_cast<const QScrollArea*>(w);
        if (!area || area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff)
            continue;
        const int right = label->mapTo(area->viewport(), QPoint(label->width(), 0)).x();
        return right > area->viewport()->width() + 1
                   ? QStringLiteral("ends at x = %1 in a viewport %2 px wide").arg(right).arg(area->viewport()->width())
                   : QString();
    }
    return {};
}

QStringList clippedLabels(const QWidget* root, int* examined = nullptr)
{
    QStringList out;
    for (const QLabel* label : root->findChildren<QLabel*>()) {
        if (!label->isVisibleTo(root) || label->inherits("QTipLabel"))
            continue;
        if (examined && !label->text().isEmpty())
            ++*examined;
        QString why = clipped(label);
        if (why.isEmpty() && !label->text().isEmpty())
            why = pastViewport(label);
        if (!why.isEmpty())
            out << QStringLiteral("\"%1\" (%2): %3").arg(label->text().left(40), label->objectName(), why);
    }
    return out;
}

// The shown tables whose columns do not fit their width (a column behind a horizontal scroll bar).
QStringList tablesThatScroll(const QWidget* root)
{
    QStringList out;
    for (const QTableView* table : root->findChildren<QTableView*>()) {
        if (!table->isVisibleTo(root) || !table->horizontalScrollBar()->isVisibleTo(root))
            continue;
        const int model = table->horizontalHeader()->length();
        QStringList widths;
        for (int c = 0; c < table->horizontalHeader()->count(); ++c)
            widths << QString::number(table->columnWidth(c));
        out << QStringLiteral("%1 (columns %2): %3 px of columns in %4 px")
                   .arg(table->objectName(), widths.join(QLatin1Char('+')))
                   .arg(model)
                   .arg(table->viewport()->width());
    }
    return out;
}

void settle()
{
    for (int i = 0; i < 20; ++i)
        QApplication::processEvents();
}

} // namespace

class TestGeometry : public QObject {
    Q_OBJECT
private slots:
    // The measure itself: a label squeezed below its text is reported, one with room is not.
    void theCheckSeesClipping()
    {
        QWidget box;
        auto* line = new QLabel(QStringLiteral("Activation recomputation"), &box);
        auto* wrapped = new QLabel(QStringLiteral("a long sentence that wraps onto several lines here"), &box);
        wrapped->setWordWrap(true);
        box.show();
        line->resize(line->minimumSizeHint());
        wrapped->resize(120, wrapped->heightForWidth(120));
        QCOMPARE(clippedLabels(&box), QStringList());
        line->resize(40, line->height());
        wrapped->resize(120, 10);
        QCOMPARE(clippedLabels(&box).size(), 2);
    }

    void initTestCase()
    {
        m_font = QApplication::font();
        m_palette = QApplication::palette();
    }

    void init()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_controller = new PlanController;
        m_window = new MainWindow(m_controller);
        m_controller->recomputeNow();
    }
    void cleanup()
    {
        delete m_window;
        delete m_controller;
        // A lecture enlarges the application font and sets its palette: the next row starts from the
        // desktop's, as a user's session does (without this the fonts grew row after row).
        QApplication::setFont(m_font);
        QApplication::setPalette(m_palette);
    }

    void windowAndTabs_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize s :
             {QSize(1024, 768), QSize(1280, 720), QSize(1280, 800), QSize(1366, 768), QSize(1920, 1080)})
            QTest::newRow(qPrintable(QStringLiteral("%1x%2").arg(s.width()).arg(s.height()))) << s;
    }
    void windowAndTabs()
    {
        QFETCH(QSize, size);
        m_window->resize(size);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        for (const QString& tab : MainWindow::tabNames()) {
            QVERIFY(m_window->showTab(tab));
            settle();
            int examined = 0;
            const QStringList bad = clippedLabels(m_window, &examined);
            QVERIFY2(bad.isEmpty(), qPrintable(tab + QStringLiteral(": ") + bad.join(QStringLiteral("; "))));
            QVERIFY2(examined >= 20, qPrintable(QString::number(examined))); // the controls' labels at least
            // No column behind a scroll bar (issue 20: at 1024x768 the ledger's were).
            const QStringList scrolling = tablesThatScroll(m_window);
            QVERIFY2(scrolling.isEmpty(),
                     qPrintable(tab + QStringLiteral(": ") + scrolling.join(QStringLiteral("; "))));
        }
    }

    // The Derivation panel is ~150 px wide at 1024x768: a quantity's name breaks after its dots, never
    // inside a word ("memory.per_gpu.t" / "otal" before the fix).
    void derivationNamesBreakBetweenWords()
    {
        m_window->resize(1024, 768);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        m_controller->showDerivation(QStringLiteral("memory.per_gpu.total"));
        settle();
        auto* text = m_window->derivation()->findChild<QTextBrowser*>();
        QVERIFY(text);
        QVERIFY2(text->viewport()->width() < text->fontMetrics().horizontalAdvance(
                                                 QStringLiteral("memory.per_gpu.total = weights + gradients")),
                 "the panel is wide enough that nothing wraps: the test would prove nothing");
        const QTextDocument* doc = text->document();
        int breaks = 0;
        const auto word = [](QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); };
        // The title and the formula: the blocks that name the quantity.
        QTextBlock block = doc->begin();
        for (int b = 0; b < 2 && block.isValid(); ++b, block = block.next()) {
            const QString t = block.text();
            QTextLayout* layout = block.layout();
            for (int l = 0; l + 1 < layout->lineCount(); ++l) {
                const int at = layout->lineAt(l).textStart() + layout->lineAt(l).textLength();
                ++breaks;
                QVERIFY2(at <= 0 || at >= t.size() || !word(t[at - 1]) || !word(t[at]),
                         qPrintable(QStringLiteral("breaks \"%1|%2\"").arg(t.left(at), t.mid(at))));
            }
        }
        QVERIFY(breaks > 0);
    }

    void dialogs_data() { windowAndTabs_data(); }
    void dialogs()
    {
        QFETCH(QSize, size);
        m_window->resize(size);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        for (const QString& name : MainWindow::dialogNames()) {
            QDialog* dialog = m_window->openDialog(name);
            QVERIFY2(dialog, qPrintable(name));
            if (auto* search = qobject_cast<LayoutSearchDialog*>(dialog)) // its table fills when the search ends
                QVERIFY(search->waitForResults(30000));
            settle();
            const QStringList bad = clippedLabels(dialog) + tablesThatScroll(dialog);
            dialog->close();
            QVERIFY2(bad.isEmpty(), qPrintable(name + QStringLiteral(": ") + bad.join(QStringLiteral("; "))));
        }
    }

    // Every step of the CS336 walkthrough on the projectors lecturers meet: the presenter text, the
    // numbers and the step's panel, each with its room.
    void lectureSteps_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize s : {QSize(1024, 768), QSize(1280, 720), QSize(1366, 768), QSize(1920, 1080)})
            QTest::newRow(qPrintable(QStringLiteral("%1x%2").arg(s.width()).arg(s.height()))) << s;
    }
    void lectureSteps()
    {
        QFETCH(QSize, size);
        m_window->setLectureFullScreen(false);
        QString why;
        QVERIFY2(m_window->lecture()->load(QStringLiteral("cs336-lecture2"), &why), qPrintable(why));
        m_window->resize(size);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window));
        for (int step = 0; step < m_window->lecture()->stepCount(); ++step) {
            m_window->startLecture(step);
            settle();
            const QStringList bad = clippedLabels(m_window);
            QVERIFY2(bad.isEmpty(),
                     qPrintable(QStringLiteral("step %1: ").arg(step + 1) + bad.join(QStringLiteral("; "))));
        }
    }

private:
    QFont m_font;
    QPalette m_palette;
    PlanController* m_controller = nullptr;
    MainWindow* m_window = nullptr;
};

QTEST_MAIN(TestGeometry)
#include "tst_geometry.moc"
