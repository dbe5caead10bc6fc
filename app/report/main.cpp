// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-report: writes the reports and charts that need Qt's painters (PDF, HTML, Markdown with
// chart images, PNG/SVG/PDF charts) for napkin-cli, which stays free of Qt Widgets. Installed in
// libexec/napkin/; users run napkin-cli, which finds it (NAPKIN_REPORT overrides). Reads one
// napkin.report-request/1 document (app/report/reportrequest.h) from a file or stdin ("-").

#include "reportrequest.h"

#include <nlohmann/json.hpp>

#include <QApplication>

#include <sys/stat.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>

namespace {

// An offscreen QApplication: no display needed. Qt wants a private runtime directory; without one
// it warns on every run.
void prepareEnvironment()
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        const QByteArray dir = QByteArray("/tmp/napkin-runtime-") + QByteArray::number(uint(getuid()));
        ::mkdir(dir.constData(), 0700);
        qputenv("XDG_RUNTIME_DIR", dir);
    }
}

int run(int argc, char** argv)
{
    if (argc != 2 || std::strcmp(argv[1], "--help") == 0) {
        std::fprintf(argc == 2 ? stdout : stderr,
                     "usage: napkin-report REQUEST.json | -\n"
                     "Writes the report or chart a napkin.report-request/1 document asks for. napkin-cli runs it for\n"
                     "--format pdf|html, Markdown reports with charts and `chart`; run napkin-cli instead.\n");
        return argc == 2 ? 0 : 2;
    }
    std::string text;
    if (std::strcmp(argv[1], "-") == 0)
        text.assign(std::istreambuf_iterator<char>(std::cin), {});
    else {
        std::ifstream in(argv[1], std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "error: cannot read %s\n", argv[1]);
            return napkin::report::RequestFailed;
        }
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto request = nlohmann::json::parse(text, nullptr, false);
    if (request.is_discarded()) {
        std::fprintf(stderr, "error: %s: not JSON\n", argv[1]);
        return napkin::report::RequestInvalid;
    }
    prepareEnvironment();
    QApplication app(argc, argv);
    std::setlocale(LC_NUMERIC, "C"); // QApplication adopted the environment's locale (see app/gui/app.cpp)
    QString message;
    const int status = napkin::report::runRequest(request, &message);
    if (status != napkin::report::RequestOk)
        std::fprintf(stderr, "error: %s\n", message.toUtf8().constData());
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    // Nothing is expected to throw past runRequest (it reports through its message); an allocation
    // failure or a library exception still ends as an error line and an exit status, not abort().
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "error: unexpected exception\n");
    }
    return napkin::report::RequestFailed;
}
