// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "app.h"

#include "accuracydialog.h"
#include "layoutsearchdialog.h"
#include "mainwindow.h"
#include "makefitdialog.h"
#include "jsonreader.h"
#include "lecturecontroller.h"
#include "plancontroller.h"
#include "report.h"

#include <QApplication>
#include <QIcon>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QMessageBox>
#include <QScreen>
#include <QThread>
#include <QTimer>

#include <sys/stat.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace napkin::app {

int runApp(int argc, char** argv)
{
    // --screenshot and --handout need no display: render offscreen unless a platform was chosen.
    // --help and --version print and exit, so they need none either (without one, the default
    // platform plugin would abort before the parser runs).
    bool screenshot = false, batch = false, printOnly = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto is = [&a](std::string_view opt) {
            return a == opt || (a.size() > opt.size() && a.substr(0, opt.size() + 1) == std::string(opt) + "=");
        };
        screenshot = screenshot || is("--screenshot");
        batch = batch || is("--screenshot") || is("--handout");
        printOnly = printOnly || a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version";
    }
    const bool noDisplay = qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
    if ((batch || printOnly) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && noDisplay)
        qputenv("QT_QPA_PLATFORM", "offscreen");
    if ((batch || printOnly) && qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        // Qt wants a private runtime directory; without one it warns on stderr, which scripts read.
        const QByteArray dir = QByteArray("/tmp/napkin-runtime-") + QByteArray::number(uint(getuid()));
        ::mkdir(dir.constData(), 0700);
        qputenv("XDG_RUNTIME_DIR", dir);
    }

    QApplication app(argc, argv);
    // QApplication adopts the environment's locale (setlocale(LC_ALL, "")). Napkin's core converts
    // numbers with {fmt} and std::from_chars, which ignore it; C numeric rules for anything else
    // (Qt's advice for POSIX conversions) keep "2.5T" and "989.5" the same under de_DE.
    std::setlocale(LC_NUMERIC, "C");
    QApplication::setApplicationName(QStringLiteral("Napkin"));
    QApplication::setOrganizationName(QStringLiteral("Napkin"));
    QApplication::setApplicationVersion(QStringLiteral(NAPKIN_VERSION));
    // The desktop entry (resources/desktop): Wayland shells match the window to it and its icon.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.napkin_llm.Napkin"));
    QApplication::setWindowIcon(
        QIcon::fromTheme(QStringLiteral("io.github.napkin_llm.Napkin"),
                         QIcon(QStringLiteral(":/napkin/icons/io.github.napkin_llm.Napkin.png"))));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Size an LLM training run: memory, compute and roofline."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption scenarioOpt(QStringLiteral("scenario"), QStringLiteral("Open this scenario file."),
                                   QStringLiteral("FILE"));
    QCommandLineOption shotOpt(QStringLiteral("screenshot"), QStringLiteral("Render the window to a PNG and exit."),
                               QStringLiteral("OUT.png"));
    QCommandLineOption sizeOpt(QStringLiteral("size"),
                               QStringLiteral("Window size for --screenshot (default 1280x800)."),
                               QStringLiteral("WxH"), QStringLiteral("1280x800"));
    QCommandLineOption setOpt(QStringLiteral("set"), QStringLiteral("Override one scenario path (napkin-cli rules)."),
                              QStringLiteral("PATH=VALUE"));
    QCommandLineOption darkOpt(QStringLiteral("dark"), QStringLiteral("Use the dark theme."));
    QCommandLineOption lectureOpt(
        QStringLiteral("lecture"),
        QStringLiteral("Start lecture mode with a walkthrough file or a built-in id (default cs336-lecture2)."),
        QStringLiteral("FILE|ID"));
    QCommandLineOption stepOpt(QStringLiteral("lecture-step"),
                               QStringLiteral("Start the walkthrough at step N (1-based)."), QStringLiteral("N"),
                               QStringLiteral("1"));
    QCommandLineOption handoutOpt(QStringLiteral("handout"),
                                  QStringLiteral("Write the walkthrough's PDF handout and exit."),
                                  QStringLiteral("OUT.pdf"));
    QCommandLineOption calibrationOpt(
        QStringLiteral("calibration"),
        QStringLiteral("A calibration profile for the walkthrough's steps that ask for one."), QStringLiteral("FILE"));
    QCommandLineOption chartOpt(
        QStringLiteral("chart-tab"),
        QStringLiteral("Show this chart tab (1 = roofline, 2 = step time, 3 = memory through the step, "
                       "4 = routing imbalance, 5 = memory per stage), e.g. for --screenshot."),
        QStringLiteral("N"), QStringLiteral("1"));
    QCommandLineOption fitOpt(
        QStringLiteral("make-fit"),
        QStringLiteral("Open Tools > Make it fit (with --screenshot: render that dialog instead of the window)."));
    QCommandLineOption accuracyOpt(
        QStringLiteral("accuracy"),
        QStringLiteral("Open Help > How accurate is this? (with --screenshot: render that dialog)."));
    QCommandLineOption tabOpt(QStringLiteral("tab"),
                              QStringLiteral("Show this tab: %1 (e.g. for --screenshot).")
                                  .arg(MainWindow::tabNames().join(QStringLiteral(", "))),
                              QStringLiteral("NAME"));
    QCommandLineOption dialogOpt(QStringLiteral("dialog"),
                                 QStringLiteral("Open this dialog: %1 (with --screenshot: render it instead of the "
                                                "window).")
                                     .arg(MainWindow::dialogNames().join(QStringLiteral(", "))),
                                 QStringLiteral("NAME"));
    parser.addOptions({scenarioOpt, shotOpt, sizeOpt, setOpt, darkOpt, lectureOpt, stepOpt, handoutOpt, calibrationOpt,
                       chartOpt, fitOpt, accuracyOpt, tabOpt, dialogOpt});
    // The desktop entry's Exec=napkin %f: a scenario file opened from a file manager.
    parser.addPositionalArgument(QStringLiteral("FILE"), QStringLiteral("A scenario file to open (as --scenario)."),
                                 QStringLiteral("[FILE]"));
    // --lecture takes an optional value: alone (or before another option) it means the built-in one.
    QStringList args = QApplication::arguments();
    for (int i = 1; i < args.size(); ++i)
        if (args[i] == QLatin1String("--lecture") && (i + 1 == args.size() || args[i + 1].startsWith(QLatin1Char('-'))))
            args.insert(i + 1, QStringLiteral("cs336-lecture2"));
    parser.process(args);

    if (parser.positionalArguments().size() > 1 ||
        (parser.isSet(scenarioOpt) && !parser.positionalArguments().isEmpty())) {
        std::fprintf(stderr,
                     "error: FILE: one scenario file at most (allowed: napkin [FILE] or napkin --scenario FILE)\n");
        return 2;
    }
    const QString scenarioFile =
        parser.isSet(scenarioOpt) ? parser.value(scenarioOpt) : parser.positionalArguments().value(0);
    // --make-fit and --accuracy are the older spellings of --dialog fit and --dialog accuracy.
    QString dialogName = parser.value(dialogOpt);
    if (dialogName.isEmpty() && parser.isSet(fitOpt))
        dialogName = QStringLiteral("fit");
    if (dialogName.isEmpty() && parser.isSet(accuracyOpt))
        dialogName = QStringLiteral("accuracy");
    if (parser.isSet(tabOpt) && !MainWindow::tabNames().contains(parser.value(tabOpt))) {
        std::fprintf(stderr, "error: --tab %s: expected one of %s\n", qPrintable(parser.value(tabOpt)),
                     qPrintable(MainWindow::tabNames().join(QStringLiteral(", "))));
        return 2;
    }
    if (!dialogName.isEmpty() && !MainWindow::dialogNames().contains(dialogName)) {
        std::fprintf(stderr, "error: --dialog %s: expected one of %s\n", qPrintable(dialogName),
                     qPrintable(MainWindow::dialogNames().join(QStringLiteral(", "))));
        return 2;
    }

    PlanController controller;
    MainWindow window(&controller);
    if (parser.isSet(darkOpt))
        window.setDarkTheme(true);
    if (!scenarioFile.isEmpty()) {
        // Without a user to answer a dialog (--screenshot, --handout), a bad file is an error on
        // stderr and exit 2, as napkin-cli does; interactively the dialog says it too.
        QString error;
        if (!controller.open(scenarioFile, &error)) {
            std::fprintf(stderr, "error: %s\n", qPrintable(error));
            if (!batch)
                QMessageBox::warning(&window, QObject::tr("Cannot open scenario"), error);
            return 2;
        }
    } else if (!batch) {
        window.restoreSession();
    }
    for (const auto& s : parser.values(setOpt)) {
        const int eq = int(s.indexOf(QLatin1Char('=')));
        if (eq <= 0) {
            std::fprintf(stderr, "error: --set %s: expected PATH=VALUE\n", qPrintable(s));
            return 2;
        }
        const auto text = s.mid(eq + 1).toStdString();
        auto value = core::parseJsonLimited(text);
        controller.set(s.left(eq), value.is_discarded() ? nlohmann::json(text) : value);
    }
    controller.recomputeNow();
    const bool lecture = parser.isSet(lectureOpt) || parser.isSet(handoutOpt);
    int lectureStep = 0;
    if (lecture) {
        QString why;
        auto* lc = window.lecture();
        if (!lc->load(parser.isSet(lectureOpt) ? parser.value(lectureOpt) : QStringLiteral("cs336-lecture2"), &why)) {
            std::fprintf(stderr, "error: --lecture %s\n", qPrintable(why));
            return 2;
        }
        lc->setCalibrationProfile(parser.value(calibrationOpt));
        bool ok = false;
        const int step = parser.value(stepOpt).toInt(&ok);
        if (!ok || step < 1 || step > lc->stepCount()) {
            std::fprintf(stderr, "error: --lecture-step %s: expected a step from 1 to %d\n",
                         qPrintable(parser.value(stepOpt)), lc->stepCount());
            return 2;
        }
        if (parser.isSet(handoutOpt)) {
            const QString out = parser.value(handoutOpt);
            const QString err = window.exportLectureHandout(out, false);
            if (!err.isEmpty()) {
                std::fprintf(stderr, "error: %s\n", qPrintable(err));
                return 1;
            }
            return 0;
        }
        window.setLectureFullScreen(!screenshot);
        lectureStep = step;
        if (!screenshot)
            window.startLecture(step - 1);
    }
    if (controller.hasErrors()) {
        for (const auto& e : controller.errors())
            std::fprintf(stderr, "error: %s\n", core::describe(e).c_str());
        if (batch)
            return 2;
    }

    if (screenshot) {
        const QStringList wh = parser.value(sizeOpt).split(QLatin1Char('x'));
        const int w = wh.value(0).toInt(), h = wh.value(1).toInt();
        if (wh.size() != 2 || w < 320 || h < 240 || w > 8192 || h > 8192) {
            std::fprintf(stderr, "error: --size %s: expected WxH from 320x240 to 8192x8192\n",
                         qPrintable(parser.value(sizeOpt)));
            return 2;
        }
        window.resize(w, h);
        const int tab = parser.value(chartOpt).toInt();
        if (tab < 1 || tab > window.chartTabs()->count()) {
            std::fprintf(stderr, "error: --chart-tab %s: expected 1 to %d\n", qPrintable(parser.value(chartOpt)),
                         window.chartTabs()->count());
            return 2;
        }
        window.chartTabs()->setCurrentIndex(tab - 1);
        if (parser.isSet(tabOpt))
            window.showTab(parser.value(tabOpt));
        if (lectureStep > 0) // after the resize: the presenter panel takes its share of this width
            window.startLecture(lectureStep - 1);
        window.show();
        // Let layouts settle, queued replots run and the throttled panels (derivation, warnings:
        // 100 ms) catch up before grabbing.
        QElapsedTimer settle;
        settle.start();
        while (settle.elapsed() < 300) {
            QApplication::processEvents(QEventLoop::AllEvents, 20);
            QThread::msleep(10);
        }
        QApplication::processEvents();
        const QString out = parser.value(shotOpt);
        QWidget* shot = &window;
        if (!dialogName.isEmpty()) {
            QDialog* dialog = window.openDialog(dialogName);
            if (auto* search = qobject_cast<LayoutSearchDialog*>(dialog))
                search->waitForResults(); // the ranked layouts, not "searching…"
            for (int i = 0; i < 20; ++i)
                QApplication::processEvents(QEventLoop::AllEvents, 20);
            shot = dialog;
        }
        if (!shot->grab().save(out, "PNG")) {
            std::fprintf(stderr, "error: cannot write %s\n", qPrintable(out));
            return 1;
        }
        return 0;
    }
    if (parser.isSet(tabOpt))
        window.showTab(parser.value(tabOpt));
    window.show();
    if (!dialogName.isEmpty())
        window.openDialog(dialogName);
    return QApplication::exec();
}

} // namespace napkin::app
