// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs napkin-cli as a separate process for the CLI test suites (tst_cli, tst_locale).

#include <QProcess>
#include <QString>
#include <QStringList>

namespace {

struct CliResult {
    bool finished = false;
    QProcess::ExitStatus status = QProcess::CrashExit;
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

inline QString cliPath() { return QStringLiteral(NAPKIN_CLI_PATH); }
inline QString dataPath(const QString& rel) { return QStringLiteral(NAPKIN_TEST_DATA) + u'/' + rel; }

inline CliResult runCli(const QStringList& args,
                        const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    CliResult r;
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProgram(cliPath());
    p.setArguments(args);
    p.start();
    if (!p.waitForStarted(10000))
        return r;
    p.closeWriteChannel();
    r.finished = p.waitForFinished(60000);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
    }
    r.status = p.exitStatus();
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

inline QString describe(const QStringList& args, const CliResult& r)
{
    return QStringLiteral("napkin-cli %1\n  exit %2 (%3)\n  stdout: %4\n  stderr: %5")
        .arg(args.join(u' '))
        .arg(r.exitCode)
        .arg(r.status == QProcess::NormalExit ? QStringLiteral("normal") : QStringLiteral("CRASH/signal"))
        .arg(QString::fromUtf8(r.out.left(400)), QString::fromUtf8(r.err.left(800)));
}

} // namespace
