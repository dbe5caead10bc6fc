// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// What the report tests share: scenarios merged over the defaults, their plans, files and the
// poppler tools (pdftotext, pdfinfo) that read the PDFs back.
#include "report.h"

#include "catalog.h"
#include "errors.h"
#include "estimate.h"
#include "scenario.h"

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QString>

#include <nlohmann/json.hpp>

namespace napkin::test::reports {

using nlohmann::json;
namespace report = napkin::report;
namespace core = napkin::core;

inline json mergedDocument(const json& user) { return core::mergeScenario(core::defaultScenarioJson(), user); }

inline report::Input inputOf(const json& user, const QString& label = QString())
{
    return report::Input{mergedDocument(user), label, QString()};
}

inline core::Plan corePlan(const json& document)
{
    core::Errors errors;
    const auto sc = core::parseScenario(document, core::builtinCatalog(), errors);
    if (!errors.empty())
        qFatal("invalid test scenario: %s", core::describe(errors.front()).c_str());
    return core::estimate(sc);
}

inline QString qs(const std::string& s) { return QString::fromStdString(s); }

inline QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeAll(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

inline QString tool(const char* name) { return QStandardPaths::findExecutable(QLatin1String(name)); }

// stdout of a program, or a null string when it fails.
inline QString runTool(const QString& program, const QStringList& args)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return QString();
    return QString::fromUtf8(p.readAllStandardOutput());
}

// pdftotext's text with ligatures undone and all whitespace removed (it splits and joins cells freely).
inline QString squeeze(QString s)
{
    s.replace(QChar(0xFB00), QStringLiteral("ff"));
    s.replace(QChar(0xFB01), QStringLiteral("fi"));
    s.replace(QChar(0xFB02), QStringLiteral("fl"));
    s.replace(QChar(0xFB03), QStringLiteral("ffi"));
    s.replace(QChar(0xFB04), QStringLiteral("ffl"));
    s.remove(QChar(0x200B)); // the zero-width spaces that let identifiers break after a dot
    s.remove(QRegularExpression(QStringLiteral("\\s+")));
    return s;
}

inline QString pageSizeLine(const QString& pdfPath)
{
    const QString info = runTool(tool("pdfinfo"), {pdfPath});
    for (const auto& line : info.split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("Page size:")))
            return line;
    return QString();
}

// Each page's text, squeezed (empty when pdfinfo or pdftotext is missing).
inline QStringList pageTexts(const QString& pdfPath)
{
    const QString info = runTool(tool("pdfinfo"), {pdfPath});
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("^Pages:\\s+(\\d+)"), QRegularExpression::MultilineOption).match(info);
    QStringList out;
    for (int n = 1; m.hasMatch() && n <= m.captured(1).toInt(); ++n)
        out << squeeze(runTool(tool("pdftotext"), {QStringLiteral("-f"), QString::number(n), QStringLiteral("-l"),
                                                   QString::number(n), pdfPath, QStringLiteral("-")}));
    return out;
}

// The first page (from 1) whose text holds needle, 0 when none does.
inline int pageOf(const QStringList& pages, const QString& needle)
{
    for (int n = 0; n < pages.size(); ++n)
        if (pages[n].contains(squeeze(needle)))
            return n + 1;
    return 0;
}

} // namespace napkin::test::reports
