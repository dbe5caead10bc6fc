// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "calibrationrunner.h"

#include "calibration.h"
#include "catalog.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStandardPaths>

#include <algorithm>

namespace napkin::app {

namespace {

constexpr qint64 kMaxProfileBytes = 64LL << 20; // a full profile is tens of kB

QString deviceLabel(const core::CalibrationProfile& p)
{
    return QCoreApplication::translate("CalibrationRunner", "%1 (measured)")
        .arg(QString::fromStdString(p.devices.front().name));
}

} // namespace

CalibrationRunner::CalibrationRunner(QObject* parent) : QObject(parent)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (!isRunning())
            return;
        m_timedOut = true;
        m_process.kill();
    });
    connect(&m_process, &QProcess::readyReadStandardError, this, &CalibrationRunner::readProgress);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, [this] {
        m_stdout += m_process.readAllStandardOutput();
        if (m_stdout.size() > kMaxProfileBytes)
            m_process.kill(); // reported as garbage in onFinished
    });
    connect(&m_process, &QProcess::finished, this, &CalibrationRunner::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, &CalibrationRunner::onError);
}

CalibrationRunner::~CalibrationRunner()
{
    if (isRunning()) {
        m_done = true; // no signals from a dying runner
        m_process.kill();
        m_process.waitForFinished(2000);
    }
}

QString CalibrationRunner::probePath()
{
    QString env = qEnvironmentVariable("NAPKIN_PROBE");
    if (!env.isEmpty())
        return env;
    // Installed: bin/../libexec/napkin/napkin-probe (GNUInstallDirs); beside the app; as built.
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& candidate :
         {dir + QStringLiteral("/" NAPKIN_RELATIVE_LIBEXEC "/napkin-probe"), dir + QStringLiteral("/napkin-probe"),
          dir + QStringLiteral("/../../gpu/napkin-probe")})
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    return QStandardPaths::findExecutable(QStringLiteral("napkin-probe"));
}

QString CalibrationRunner::profileDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/calibration");
}

QList<StoredProfile> CalibrationRunner::storedProfiles()
{
    QList<StoredProfile> out;
    const QFileInfoList files = QDir(profileDir()).entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Time);
    for (const QFileInfo& fi : files) {
        QFile f(fi.absoluteFilePath());
        if (fi.size() > kMaxProfileBytes || !f.open(QIODevice::ReadOnly))
            continue;
        core::Errors errors;
        const auto p = core::loadCalibrationProfile(f.readAll().toStdString(), core::builtinCatalog(), errors);
        if (p)
            out.append({fi.absoluteFilePath(), deviceLabel(*p) + QStringLiteral(" · ") + fi.completeBaseName()});
    }
    return out;
}

bool CalibrationRunner::start(const QStringList& arguments)
{
    if (isRunning())
        return false;
    m_stdout.clear();
    m_stderrLine.clear();
    m_stderrText.clear();
    m_savedPath.clear();
    m_savedLabel.clear();
    m_cancelled = m_timedOut = false;
    m_done = false;
    const QString path = probePath();
    if (path.isEmpty()) {
        finish(Outcome::NotFound, tr("napkin-probe was not found next to Napkin or on PATH. Build it where CUDA is "
                                     "installed (gpu/), or set NAPKIN_PROBE to its path."));
        return false;
    }
    m_process.setProgram(path);
    m_process.setArguments(arguments);
    m_process.start(QIODevice::ReadOnly);
    if (m_done) // errorOccurred(FailedToStart) has already reported it
        return false;
    m_timer.start(m_timeoutMs);
    emit progress(0, tr("starting"));
    return true;
}

void CalibrationRunner::cancel()
{
    if (!isRunning())
        return;
    m_cancelled = true;
    m_process.kill();
}

void CalibrationRunner::readProgress()
{
    // {"event":"progress","step":3,"of":12,"id":"intensity_sweep","fraction":0.25} per line
    // (docs/probe.md); anything else is text for a person, kept for the message.
    m_stderrLine += m_process.readAllStandardError();
    qsizetype nl;
    while ((nl = m_stderrLine.indexOf('\n')) >= 0) {
        const QByteArray line = m_stderrLine.left(nl).trimmed();
        m_stderrLine.remove(0, nl + 1);
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        const QJsonObject o = doc.object();
        if (doc.isObject() && o.value(QStringLiteral("event")).toString() == QLatin1String("progress")) {
            const double f = o.value(QStringLiteral("fraction")).toDouble(-1);
            if (f >= 0 && f <= 1)
                emit progress(f, o.value(QStringLiteral("id")).toString());
        } else if (!line.isEmpty()) {
            m_stderrText.append(QString::fromUtf8(line.left(500)));
            if (m_stderrText.size() > 20)
                m_stderrText.removeFirst();
        }
    }
    if (m_stderrLine.size() > 1 << 16) // a line without end: not progress
        m_stderrLine.clear();
}

QString CalibrationRunner::stderrTail() const
{
    return m_stderrText.isEmpty() ? QString()
                                  : m_stderrText.mid(std::max<qsizetype>(0, m_stderrText.size() - 3)).join(u'\n');
}

void CalibrationRunner::onError(QProcess::ProcessError error)
{
    if (error == QProcess::FailedToStart && !m_done)
        finish(Outcome::NotFound,
               tr("napkin-probe could not be started (%1): %2. Set NAPKIN_PROBE to the probe's path.")
                   .arg(m_process.program(), m_process.errorString()));
}

void CalibrationRunner::onFinished(int exitCode, QProcess::ExitStatus status)
{
    if (m_done)
        return;
    m_timer.stop();
    m_stdout += m_process.readAllStandardOutput();
    readProgress();
    const QString keep = tr("The current plan is unchanged.");
    if (m_cancelled)
        return finish(Outcome::Cancelled, tr("Calibration cancelled. %1").arg(keep));
    if (m_timedOut)
        return finish(Outcome::TimedOut, tr("napkin-probe did not finish within %1 s and was stopped. %2")
                                             .arg(m_timeoutMs / 1000.0, 0, 'g', 3)
                                             .arg(keep));
    const QString tail = stderrTail();
    const QString detail = tail.isEmpty() ? QString() : tr("\n\nIts last words:\n%1").arg(tail);
    if (status == QProcess::CrashExit)
        return finish(Outcome::Crashed, tr("napkin-probe crashed. %1%2").arg(keep, detail));
    if (m_stdout.size() > kMaxProfileBytes)
        return finish(Outcome::Garbage, tr("napkin-probe printed more than 64 MiB: not a profile. %1").arg(keep));
    const std::string text = m_stdout.toStdString();
    if (exitCode != 0) {
        // Statuses other than ok come with a complete JSON document (docs/probe.md, exit 3 and 1).
        const QJsonObject o = QJsonDocument::fromJson(m_stdout).object();
        const QString st = o.value(QStringLiteral("status")).toString();
        if (!st.isEmpty())
            return finish(Outcome::Refused, tr("The probe did not measure (%1): %2 %3")
                                                .arg(st, o.value(QStringLiteral("message")).toString(), keep));
        return finish(Outcome::Refused, tr("napkin-probe exited with code %1. %2%3").arg(exitCode).arg(keep, detail));
    }
    core::Errors errors;
    const auto profile = core::loadCalibrationProfile(text, core::builtinCatalog(), errors);
    if (!profile)
        return finish(
            Outcome::Garbage,
            tr("napkin-probe printed no valid profile: %1. %2")
                .arg(QString::fromStdString(errors.empty() ? std::string("no output") : core::describe(errors.front())),
                     keep));
    // Saved atomically (QSaveFile: a temporary, then a rename), named after the device and the time.
    QString slug = QString::fromStdString(profile->devices.front().name).toLower();
    static const QRegularExpression nonSlug(QStringLiteral("[^a-z0-9]+"));
    slug.replace(nonSlug, QStringLiteral("-"));
    slug = slug.mid(0, 48);
    if (slug.startsWith(u'-'))
        slug.remove(0, 1);
    if (slug.endsWith(u'-'))
        slug.chop(1);
    const QString dir = profileDir();
    const QString file = dir + u'/' + slug + u'-' +
                         QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")) +
                         QStringLiteral(".json");
    QSaveFile out(file);
    if (!QDir().mkpath(dir) || !out.open(QIODevice::WriteOnly) || out.write(m_stdout) != m_stdout.size() ||
        !out.commit())
        return finish(Outcome::SaveFailed,
                      tr("The profile is valid but could not be saved to %1: %2").arg(file, out.errorString()));
    m_savedPath = file;
    m_savedLabel = deviceLabel(*profile) + QStringLiteral(" · ") + QFileInfo(file).completeBaseName();
    finish(Outcome::Saved, tr("Measured %1; saved as %2.").arg(deviceLabel(*profile), QDir::toNativeSeparators(file)));
}

void CalibrationRunner::finish(Outcome outcome, const QString& message)
{
    m_done = true;
    m_timer.stop();
    m_outcome = outcome;
    m_message = message;
    emit finished(outcome, message);
}

} // namespace napkin::app
