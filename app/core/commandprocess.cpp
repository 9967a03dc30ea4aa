// SPDX-License-Identifier: Apache-2.0
#include "commandprocess.h"

#include <QJsonObject>

#include <csignal>

#include <linux/close_range.h>
#include <unistd.h>

namespace replhost::core {

using sdk::Event;

namespace {

// Between the steps of the interrupt ladder.
constexpr int kGraceMs = 2000;

} // namespace

CommandProcess::CommandProcess(ExecutionPtr execution, qint64 maxOutputBytes, QObject *parent)
    : QObject(parent), m_execution(std::move(execution)), m_maxOutput(maxOutputBytes)
{
    m_timeout.setSingleShot(true);
    connect(&m_timeout, &QTimer::timeout, this, [this] {
        if (m_ended || !m_stopStatus.isEmpty())
            return;
        m_stopStatus = QStringLiteral("timeout");
        escalate();
    });
    m_ladder.setSingleShot(true);
    m_ladder.setInterval(kGraceMs);
    connect(&m_ladder, &QTimer::timeout, this, &CommandProcess::escalate);

    connect(&m_process, &QProcess::readyReadStandardOutput, this,
            [this] { readChannel(QProcess::StandardOutput); });
    connect(&m_process, &QProcess::readyReadStandardError, this,
            [this] { readChannel(QProcess::StandardError); });
    connect(&m_process, &QProcess::finished, this, &CommandProcess::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, &CommandProcess::onError);
}

CommandProcess::~CommandProcess()
{
    // Nothing the command started may outlive the runner.
    if (m_process.state() != QProcess::NotRunning) {
        m_process.disconnect(this);
        signalGroup(SIGKILL);
        m_process.waitForFinished(1000);
    }
}

void CommandProcess::start(const sdk::ConfinedCommand &command, const QString &directory,
                           const QMap<QString, QString> &environment, int timeoutMs)
{
    QProcessEnvironment env;
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        env.insert(it.key(), it.value());
    m_process.setProcessEnvironment(env);
    m_process.setWorkingDirectory(directory);
    m_process.setStandardInputFile(QProcess::nullDevice());
    // A group of its own, so an interrupt reaches everything the command started and nothing
    // of the host's.
    // Nothing of the server's beyond stdin, stdout and stderr: descriptors opened without
    // close-on-exec are closed at the exec (not now: QProcess still reports a failed exec
    // through one of its own).
    m_process.setChildProcessModifier([] {
        ::setsid();
        ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    });
    m_timeoutMs = timeoutMs;

    m_execution->markRunning();
    m_execution->addEvent(Event::started(m_execution->id(), 0));
    if (timeoutMs > 0)
        m_timeout.start(timeoutMs);
    m_sandboxed = command.sandboxed;
    m_process.start(command.argv.first(), command.argv.mid(1));
    // Known as soon as fork() returned, before the exec: an interrupt from now on reaches it.
    m_pid = m_process.processId();
}

void CommandProcess::interrupt()
{
    if (m_ended || !m_stopStatus.isEmpty())
        return;
    m_stopStatus = QStringLiteral("interrupted");
    escalate();
}

void CommandProcess::kill(const QString &reason)
{
    if (m_ended)
        return;
    m_process.disconnect(this);
    signalGroup(SIGKILL);
    m_process.waitForFinished(1000);
    m_execution->addEvent(Event::error(m_execution->id(), QStringLiteral("Aborted"), reason));
    end(QStringLiteral("aborted"), {});
}

void CommandProcess::escalate()
{
    if (m_ended)
        return;
    static const int ladder[] = {SIGINT, SIGTERM, SIGKILL};
    if (m_ladderStep >= 3)
        return;
    signalGroup(ladder[m_ladderStep]);
    ++m_ladderStep;
    if (m_ladderStep < 3)
        m_ladder.start();
}

void CommandProcess::signalGroup(int signal)
{
    if (m_pid <= 0)
        return;
    ::kill(-pid_t(m_pid), signal);
    // Inside a sandbox the shell has a session and group of its own.
    if (m_sandboxed)
        if (const pid_t inner = sdk::sandboxedProgramGroup(pid_t(m_pid)); inner > 0)
            ::kill(-inner, signal);
}

void CommandProcess::readChannel(QProcess::ProcessChannel channel)
{
    m_process.setReadChannel(channel);
    const QByteArray bytes = m_process.readAll();
    if (bytes.isEmpty())
        return;
    const bool isOut = channel == QProcess::StandardOutput;
    QStringDecoder &decoder = isOut ? m_stdoutDecoder : m_stderrDecoder;
    const QString name = isOut ? QStringLiteral("stdout") : QStringLiteral("stderr");

    if (m_output >= m_maxOutput) {
        m_output += bytes.size();
        return;  // drained and dropped
    }
    QByteArray kept = bytes;
    if (m_output + bytes.size() > m_maxOutput) {
        kept = bytes.left(m_maxOutput - m_output);
        // Never cut inside a UTF-8 sequence: drop the lead byte of an incomplete one.
        qsizetype end = kept.size();
        qsizetype back = end - 1;
        while (back >= 0 && (uchar(kept[back]) & 0xC0) == 0x80)
            --back;
        if (back >= 0 && uchar(kept[back]) >= 0xC0) {
            const int need = uchar(kept[back]) >= 0xF0 ? 4 : uchar(kept[back]) >= 0xE0 ? 3 : 2;
            if (end - back < need)
                kept.truncate(back);
        }
    }
    m_output += bytes.size();
    const QString text = decoder.decode(kept);
    if (!text.isEmpty())
        deliverText(name, text);
    if (kept.size() < bytes.size() && !m_truncated) {
        m_truncated = true;
        m_execution->addEvent(Event::other(
            m_execution->id(), QStringLiteral("truncated"),
            {{QStringLiteral("limit"), QStringLiteral("output_bytes")},
             {QStringLiteral("limit_value"), m_maxOutput},
             {QStringLiteral("limit_bytes"), m_maxOutput},
             {QStringLiteral("message"),
              QStringLiteral("output beyond %1 bytes was dropped").arg(m_maxOutput)}}));
    }
}

void CommandProcess::deliverText(const QString &name, const QString &text)
{
    m_execution->addEvent(Event::stream(m_execution->id(), name, text));
}

void CommandProcess::onFinished(int exitCode, QProcess::ExitStatus status)
{
    // A stopped command takes its whole group with it: a non-interactive shell starts its
    // background jobs with SIGINT ignored, so they can outlive the shell that the ladder ended.
    if (!m_stopStatus.isEmpty())
        signalGroup(SIGKILL);
    readChannel(QProcess::StandardOutput);
    readChannel(QProcess::StandardError);
    // Killed by a signal: the shell convention, 128 + the signal number.
    const int code = status == QProcess::CrashExit ? 128 + exitCode : exitCode;
    if (m_stopStatus == QLatin1String("timeout")) {
        Event timeout = Event::error(m_execution->id(), QStringLiteral("Timeout"),
                                     QStringLiteral("the command exceeded its time limit of %1 ms "
                                                    "and was interrupted")
                                         .arg(m_timeoutMs));
        timeout.fields.insert(QStringLiteral("limit"), QStringLiteral("timeout_ms"));
        timeout.fields.insert(QStringLiteral("limit_value"), m_timeoutMs);
        m_execution->addEvent(timeout);
    }
    QString outcome = m_stopStatus;
    if (outcome.isEmpty())
        outcome = code == 0 ? QStringLiteral("ok") : QStringLiteral("error");
    end(outcome, {{QStringLiteral("exit_code"), code}});
}

void CommandProcess::onError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart || m_ended)
        return;  // the others are followed by finished()
    m_execution->addEvent(Event::error(m_execution->id(), QStringLiteral("StartFailed"),
                                       QStringLiteral("cannot start the command: %1")
                                           .arg(m_process.errorString())));
    end(QStringLiteral("error"), {});
}

void CommandProcess::end(const QString &status, const QJsonObject &fields)
{
    if (m_ended)
        return;
    m_ended = true;
    m_timeout.stop();
    m_ladder.stop();
    QJsonObject extra = fields;
    extra.insert(QStringLiteral("duration_ms"),
                 double(m_execution->startedAt().msecsTo(QDateTime::currentDateTimeUtc())));
    if (m_truncated)
        extra.insert(QStringLiteral("truncated"), true);
    m_execution->addEvent(Event::done(m_execution->id(), status, extra));
    emit finished(m_execution);
    deleteLater();
}

} // namespace replhost::core
