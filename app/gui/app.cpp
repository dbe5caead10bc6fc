#include "app.h"

#include "mainwindow.h"
#include "jsonreader.h"
#include "plancontroller.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QScreen>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

namespace napkin::app {

int runApp(int argc, char** argv)
{
    // A screenshot needs no display: render offscreen unless a platform was chosen.
    bool screenshot = false;
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--screenshot")
            screenshot = true;
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Napkin"));
    QApplication::setOrganizationName(QStringLiteral("Napkin"));
    QApplication::setApplicationVersion(QStringLiteral(NAPKIN_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Size an LLM training run: memory, compute and roofline."));
    parser.addHelpOption();
    parser.addVersionOption();
    QCommandLineOption scenarioOpt(QStringLiteral("scenario"), QStringLiteral("Open this scenario file."), QStringLiteral("FILE"));
    QCommandLineOption shotOpt(QStringLiteral("screenshot"), QStringLiteral("Render the window to a PNG and exit."),
                               QStringLiteral("OUT.png"));
    QCommandLineOption sizeOpt(QStringLiteral("size"), QStringLiteral("Window size for --screenshot (default 1280x800)."),
                               QStringLiteral("WxH"), QStringLiteral("1280x800"));
    QCommandLineOption setOpt(QStringLiteral("set"), QStringLiteral("Override one scenario path (napkin-cli rules)."),
                              QStringLiteral("PATH=VALUE"));
    QCommandLineOption darkOpt(QStringLiteral("dark"), QStringLiteral("Use the dark theme."));
    parser.addOptions({scenarioOpt, shotOpt, sizeOpt, setOpt, darkOpt});
    parser.process(app);

    PlanController controller;
    MainWindow window(&controller);
    if (parser.isSet(darkOpt))
        window.setDarkTheme(true);
    if (parser.isSet(scenarioOpt)) {
        if (!window.openFile(parser.value(scenarioOpt)))
            return 2;
    } else if (!screenshot) {
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
    if (controller.hasErrors()) {
        for (const auto& e : controller.errors())
            std::fprintf(stderr, "error: %s\n", core::describe(e).c_str());
        if (screenshot)
            return 2;
    }

    if (screenshot) {
        const QStringList wh = parser.value(sizeOpt).split(QLatin1Char('x'));
        const int w = wh.value(0).toInt(), h = wh.value(1).toInt();
        if (wh.size() != 2 || w < 320 || h < 240 || w > 8192 || h > 8192) {
            std::fprintf(stderr, "error: --size %s: expected WxH from 320x240 to 8192x8192\n", qPrintable(parser.value(sizeOpt)));
            return 2;
        }
        window.resize(w, h);
        window.show();
        // Let layouts settle and queued replots run before grabbing.
        for (int i = 0; i < 5; ++i)
            QApplication::processEvents();
        const QString out = parser.value(shotOpt);
        if (!window.grab().save(out, "PNG")) {
            std::fprintf(stderr, "error: cannot write %s\n", qPrintable(out));
            return 1;
        }
        return 0;
    }
    window.show();
    return QApplication::exec();
}

} // namespace napkin::app
