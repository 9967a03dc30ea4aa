// SPDX-License-Identifier: Apache-2.0
// How a worker ends: its exit seen and reaped, the end reported in the run it hit and through the
// session's signals, and what it wrote until then delivered first.
#include "workerexit.h"

#include "workerprocess_p.h"
#include "workerguard.h"

#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <utility>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace replhost::sdk {

using namespace workerprocess;

ExitCause exitCause(const siginfo_t &info, bool sandboxed)
{
    if (info.si_code != CLD_EXITED)
        return {info.si_status, 0, false};
    if (sandboxed && info.si_status > 128 && info.si_status < 128 + NSIG)
        return {info.si_status - 128, 0, true};
    return {0, info.si_status, false};
}

QString describeExit(const ExitCause &cause)
{
    if (cause.signal == 0)
        return QStringLiteral("exited with code %1").arg(cause.code);
    const char *name = ::sigabbrev_np(cause.signal);
    QString text = name ? QStringLiteral("killed by signal %1 (SIG%2)")
                                  .arg(cause.signal)
                                  .arg(QString::fromLatin1(name))
                        : QStringLiteral("killed by signal %1").arg(cause.signal);
    if (cause.viaSandbox)
        text += QStringLiteral(" inside the sandbox");
    return text;
}

bool WorkerProcess::Private::finishReads()
{
    if (readDepth > 0 || !pendingEnd)
        return true;
    const PendingEnd end = *std::exchange(pendingEnd, std::nullopt);
    return endWorker(end.cause, end.detail);
}

void WorkerProcess::Private::onExitNotification()
{
    if (reaped || pid <= 0)
        return;
    siginfo_t info{};
    // Look first, reap later: while the worker is an unreaped zombie its pid (and so its process
    // group id) cannot be reused, so the group can still be killed safely.
    const idtype_t idType = pidfd >= 0 ? P_PIDFD : P_PID;
    const id_t id = pidfd >= 0 ? id_t(pidfd) : id_t(pid);
    if (::waitid(idType, id, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
        return;
    // Whatever the worker started in its group goes with it.
    ::killpg(pid, SIGKILL);
    siginfo_t reapedInfo{};
    while (::waitid(idType, id, &reapedInfo, WEXITED) != 0 && errno == EINTR) {
    }
    WorkerGuard::instance().forget(pid);
    reaped = true;
    exitPoll.stop();
    exitNotifier.reset();
    if (pidfd >= 0) {
        ::close(pidfd);
        pidfd = -1;
    }
    const ExitCause cause = exitCause(info, confinement.sandboxed());
    const QString description = describeExit(cause);
    qCDebug(lcWorker) << spec.program << "pid" << pid << description;
    if (ended)
        return;
    if (const auto hit = limits.explainDeath(cause.signal); hit && !shutdownRequested) {
        limitName = hit->limit;
        limitValue = hit->value;
        (void)endWorker(End::LimitReached,
                        QStringLiteral("%1: the interpreter was %2").arg(hit->message, description));
        return;
    }
    (void)endWorker(End::Exited, description);
}

bool WorkerProcess::Private::endWorker(End cause, const QString &detail)
{
    if (ended)
        return true;
    if (!reaped)
        ::killpg(pid, SIGKILL); // reaped when its exit is seen
    if (readDepth > 0) {
        if (!pendingEnd)
            pendingEnd = PendingEnd{cause, detail};
        return true;
    }
    ended = true;
    const State before = state;
    startTimer.stop();
    interrupts.stop();

    // Take in what is already in the pipes: a worker that exited may have finished its run
    // (done and all), and output written before the end belongs to the run it came from.
    if (!takeInWritten(cause == End::Exited || cause == End::LimitReached))
        return false;

    QString reason;
    QString ename;
    QString evalue;
    QString status = QStringLiteral("error");
    QStringList traceback;
    switch (cause) {
    case End::Exited:
        if (shutdownRequested) {
            reason = QStringLiteral("shut down");
            ename = QStringLiteral("WorkerShutDown");
            evalue = QStringLiteral("the session was shut down during this execution");
            status = QStringLiteral("interrupted");
        } else {
            reason = QStringLiteral("the interpreter %1").arg(detail);
            ename = QStringLiteral("WorkerDied");
            evalue = detail;
            traceback = stderrLines();
        }
        break;
    case End::LimitReached:
        reason = detail;
        ename = QStringLiteral("LimitExceeded");
        evalue = detail;
        traceback = stderrLines();
        break;
    case End::ProtocolError:
        reason = QStringLiteral("protocol error: %1").arg(detail);
        ename = QStringLiteral("ProtocolError");
        evalue = QStringLiteral("the driver broke the worker protocol (%1); it was killed and "
                                "its state is lost")
                     .arg(detail);
        break;
    case End::InterruptKilled:
        reason = QStringLiteral("killed because an interrupt did not stop it");
        ename = QStringLiteral("WorkerKilled");
        evalue = QStringLiteral("the interpreter did not stop after %1 interrupt(s) in %2 s; it "
                                "was killed and its state is lost")
                     .arg(interrupts.sigintsSent())
                     .arg(spec.interruptKillMs / 1000.0);
        status = QStringLiteral("interrupted");
        break;
    case End::StartTimeout:
        reason = QStringLiteral("no answer within %1 s").arg(spec.startTimeoutMs / 1000.0);
        break;
    }

    if (!emitOwedStarted())
        return false;
    if (exec) {
        const Execution run = *std::exchange(exec, std::nullopt);
        Event error = Event::error(run.id, ename, evalue, traceback);
        if (cause == End::LimitReached) {
            error.fields.insert(QStringLiteral("limit"), limitName);
            error.fields.insert(QStringLiteral("limit_value"), limitValue);
        }
        if (!emitEvent(error))
            return false;
        if (!emitEvent(Event::done(run.id, status,
                                   {{QStringLiteral("execution_count"), run.count},
                                    {QStringLiteral("state_lost"), true},
                                    {QStringLiteral("streams_synced"), false}})))
            return false;
    }

    closePipes();
    if (!setState(State::Dead))
        return false;

    const auto pending = std::exchange(replies, {});
    QPointer<WorkerProcess> guard(q);
    for (const auto &reply : pending) {
        reply(makeError(QStringLiteral("worker_died"),
                        QStringLiteral("the interpreter ended before it answered (%1)")
                            .arg(reason)));
    }
    if (!guard)
        return false;

    if (before == State::Starting && !shutdownRequested) {
        const QString program = QFileInfo(spec.program).fileName();
        QString message;
        switch (cause) {
        case End::Exited:
            message = QStringLiteral("%1 %2 before it was ready").arg(program, detail);
            break;
        case End::LimitReached:
            message = QStringLiteral("%1 stopped before it was ready: %2").arg(program, detail);
            break;
        case End::ProtocolError:
            message = QStringLiteral("%1 broke the worker protocol before it was ready: %2")
                          .arg(program, detail);
            break;
        case End::StartTimeout:
            message = QStringLiteral("%1 did not become ready within %2 s")
                          .arg(program)
                          .arg(spec.startTimeoutMs / 1000.0);
            break;
        case End::InterruptKilled:
            message = reason;
            break;
        }
        emit q->failed(withStderr(message));
    } else {
        emit q->terminated(shutdownRequested, reason);
    }
    return !guard.isNull();
}

bool WorkerProcess::Private::takeInWritten(bool events)
{
    if (events && !readEvents())
        return false;
    for (int i = 0; i < 2; ++i) {
        if (!readStream(i))
            return false;
    }
    for (int i = 0; i < 2; ++i) {
        StreamSink sink(this, i);
        if (!out[i].scanner.flush(sink))
            return false;
        if (!deliverText(i, std::exchange(out[i].chunk, QString())))
            return false;
    }
    // Marks still missing never come now. (Unless a release loop is already on the stack, under a
    // nested event loop: that one finishes the queue.)
    while (!queue.empty() && !releasing) {
        if (!releaseReady(true))
            return false;
    }
    return flushHeld(nullptr);
}

void WorkerProcess::Private::closePipes()
{
    for (Output &o : out) {
        o.notifier.reset();
        if (o.fd >= 0)
            ::close(o.fd);
        o.fd = -1;
    }
    eventNotifier.reset();
    if (eventFd >= 0)
        ::close(eventFd);
    eventFd = -1;
    requests.close();
}

void WorkerProcess::Private::appendStderr(const QString &text)
{
    stderrTail += text;
    if (stderrTail.size() > 2 * kStderrTailChars)
        stderrTail = stderrTail.right(kStderrTailChars);
}

QStringList WorkerProcess::Private::stderrLines() const
{
    QStringList lines = stderrTail.split(QLatin1Char('\n'));
    while (!lines.isEmpty() && lines.constLast().trimmed().isEmpty())
        lines.removeLast();
    if (lines.size() > kStderrTailLines)
        lines = lines.mid(lines.size() - kStderrTailLines);
    return lines;
}

QString WorkerProcess::Private::withStderr(QString message) const
{
    const QStringList lines = stderrLines();
    if (!lines.isEmpty())
        message += QStringLiteral(":\n") + lines.join(QLatin1Char('\n'));
    return message;
}

} // namespace replhost::sdk
