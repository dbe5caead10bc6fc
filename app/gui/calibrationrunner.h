// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs napkin-probe out of process (the KDAB hotspot pattern: a crash-prone tool under QProcess, its
// exit codes mapped to readable messages, NAPKIN_PROBE pointing at another binary for tests), feeds
// a progress bar from its stderr JSON lines, validates the profile with the core loader and saves it
// atomically in the user's data directory. A crash, hang, garbage or refusal loses nothing.

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace napkin::app {

// A stored profile: its file and what the GPU chooser shows.
struct StoredProfile {
    QString path;  // absolute
    QString label; // "NVIDIA H100 80GB HBM3 (measured)"
};

class CalibrationRunner : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Saved, Cancelled, TimedOut, NotFound, Crashed, Refused, Garbage, SaveFailed };
    Q_ENUM(Outcome)

    explicit CalibrationRunner(QObject* parent = nullptr);
    ~CalibrationRunner() override;

    // NAPKIN_PROBE, else napkin-probe next to this executable (or in the build tree's gpu/), else
    // on PATH; empty when none is found.
    static QString probePath();
    // QStandardPaths::AppLocalDataLocation + "/calibration".
    static QString profileDir();
    // Valid profiles in profileDir(), newest first; invalid files are skipped.
    static QList<StoredProfile> storedProfiles();

    // Starts a run ("--quick" by default). False (with finished() already emitted) when it cannot start.
    bool start(const QStringList& arguments = {QStringLiteral("--quick")});
    void cancel();
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    void setTimeout(int milliseconds) { m_timeoutMs = milliseconds; }
    int timeout() const { return m_timeoutMs; }

    Outcome outcome() const { return m_outcome; }
    QString message() const { return m_message; }
    QString savedPath() const { return m_savedPath; }
    QString savedLabel() const { return m_savedLabel; } // as storedProfiles() labels it

signals:
    void progress(double fraction, const QString& step);
    void finished(napkin::app::CalibrationRunner::Outcome outcome, const QString& message);

private:
    void readProgress();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void finish(Outcome outcome, const QString& message);
    QString stderrTail() const;

    QProcess m_process;
    QTimer m_timer;
    int m_timeoutMs = 120000; // full mode is capped at 60 s; startup and cuBLASLt loading add some
    QByteArray m_stdout;
    QByteArray m_stderrLine;
    QStringList m_stderrText; // non-JSON stderr lines, for the message
    bool m_cancelled = false;
    bool m_timedOut = false;
    bool m_done = true;
    Outcome m_outcome = Outcome::Cancelled;
    QString m_message;
    QString m_savedPath;
    QString m_savedLabel;
};

} // namespace napkin::app
