// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextmanager.h"

#include <replhost/sdk/confinedcommand.h>

#include <QObject>
#include <QProcess>
#include <QStringDecoder>
#include <QTimer>

namespace replhost::core {

// One running shell command: its /bin/sh process (in a process group of its own, or the
// launcher and bwrap in that group with the shell in the sandbox's own session) and the
// Execution its output becomes. Internal to CommandRunner; the faces see the Execution.
//
// The interrupt ladder, for an interrupt or a timeout: SIGINT to the group (and in a sandbox to
// the shell's group inside it, sdk::sandboxedProgramGroup), SIGTERM after a
// grace period, SIGKILL after another; once the shell has ended, whatever is left in its group
// is killed. A command that ends by itself may leave background jobs running. The output cap works as for executions: the pipes are
// always drained, output beyond the cap is dropped and a "truncated" event says so.
//
// Ownership: a child of the CommandRunner; deletes itself (later) once finished.
// Threading: the engine thread.
class CommandProcess : public QObject {
    Q_OBJECT
public:
    CommandProcess(ExecutionPtr execution, qint64 maxOutputBytes, QObject *parent);
    ~CommandProcess() override;

    // Starts `command` (sdk::confinedCommand: `/bin/sh -c text` under the workspace's
    // confinement) in `directory` with exactly `environment`.
    void start(const sdk::ConfinedCommand &command, const QString &directory,
               const QMap<QString, QString> &environment, int timeoutMs);
    // Starts the interrupt ladder; the execution ends "interrupted".
    void interrupt();
    // Kills the process group at once; the execution ends "aborted" with `reason`.
    void kill(const QString &reason);

    const ExecutionPtr &execution() const { return m_execution; }

signals:
    void finished(const replhost::core::ExecutionPtr &execution);

private:
    void readChannel(QProcess::ProcessChannel channel);
    void deliverText(const QString &name, const QString &text);
    void escalate();
    void signalGroup(int signal);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void end(const QString &status, const QJsonObject &fields);

    ExecutionPtr m_execution;
    qint64 m_maxOutput;
    qint64 m_output = 0;
    bool m_truncated = false;
    QProcess m_process;
    QStringDecoder m_stdoutDecoder{QStringDecoder::Utf8};
    QStringDecoder m_stderrDecoder{QStringDecoder::Utf8};
    QTimer m_timeout;
    QTimer m_ladder;
    int m_ladderStep = 0;       // 0: no interrupt yet; 1: SIGINT sent; 2: SIGTERM sent; 3: SIGKILL
    QString m_stopStatus;       // "interrupted" or "timeout" once the ladder runs
    int m_timeoutMs = 0;
    qint64 m_pid = 0;
    bool m_sandboxed = false;
    bool m_ended = false;
};

} // namespace replhost::core
