// SPDX-License-Identifier: Apache-2.0
#include "workerprocess_p.h"

#include "replhost/sdk/version.h"

#include "sandbox.h"
#include "spawn.h"
#include "workerguard.h"

#include <QDir>
#include <QRandomGenerator>

#include <cerrno>
#include <utility>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace replhost::sdk {

Q_LOGGING_CATEGORY(lcWorker, "replhost.worker")

using namespace workerprocess;

namespace {

// Answers an execute() that cannot run with an error and an "aborted" done, from the event loop:
// the caller is still inside execute() and must see the events after it returns.
void rejectLater(Session *session, const ExecuteRequest &request, const QString &ename,
                 const QString &evalue)
{
    QMetaObject::invokeMethod(
        session,
        [session, id = request.id, count = request.executionCount, ename, evalue] {
            QPointer<Session> guard(session);
            emit session->event(Event::error(id, ename, evalue));
            if (guard)
                emit session->event(
                    Event::done(id, QStringLiteral("aborted"),
                                {{QStringLiteral("execution_count"), count}}));
        },
        Qt::QueuedConnection);
}

// Whether a plugin built against SDK `version` ("MAJOR.MINOR") makes ExecuteRequests with
// allowInput, the member SDK 1.3 appended. Unknown or absent: yes, as for this SDK's own.
bool sdkVersionHasAllowInput(const QString &version)
{
    const qsizetype dot = version.indexOf(QLatin1Char('.'));
    bool majorOk = false, minorOk = false;
    const int major = version.left(dot).toInt(&majorOk);
    const int minor = dot < 0 ? 0 : version.mid(dot + 1).toInt(&minorOk);
    if (!majorOk || !minorOk)
        return true;
    return major > 1 || (major == 1 && minor >= 3);
}

} // namespace

void workerprocess::replyLater(Session::ReplyCallback reply, Error error)
{
    QTimer::singleShot(0, [reply = std::move(reply), error = std::move(error)] { reply(error); });
}

namespace {

// The answer to a request that needs an idle interpreter, asked while there is none.
Error notIdle(Session::State state, const QString &need)
{
    return state == Session::State::Dead
               ? makeError(QStringLiteral("worker_died"), QStringLiteral("the interpreter has ended"))
               : makeError(QStringLiteral("busy"), need);
}

} // namespace

WorkerProcess::Private::Private(WorkerProcess *q, WorkerSpec spec, SessionOptions options)
    : q(q),
      spec(std::move(spec)),
      options(std::move(options)),
      requests(q),
      interrupts(
          q,
          {this->spec.interruptRepeatMs, this->spec.interruptRepeats, this->spec.interruptKillMs},
          [this] { signalInterrupt(); }, [this] { return exec && !reaped; },
          [this] { (void)endWorker(End::InterruptKilled, {}); })
{
    out[0].name = QStringLiteral("stdout");
    out[1].name = QStringLiteral("stderr");
    requestsHaveAllowInput = sdkVersionHasAllowInput(
        this->options.settings.value(QLatin1String("sdk_version")).toString());
    clock.start();
    syncTimer.setSingleShot(true);
    startTimer.setSingleShot(true);
    shutdownTimer.setSingleShot(true);
    QObject::connect(&syncTimer, &QTimer::timeout, q, [this] { onSyncTimeout(); });
    QObject::connect(&startTimer, &QTimer::timeout, q, [this] {
        (void)endWorker(End::StartTimeout, {});
    });
    QObject::connect(&shutdownTimer, &QTimer::timeout, q, [this] {
        if (reaped)
            return;
        if (shutdownStage++ == 0) {
            ::killpg(pid, SIGTERM);
            shutdownTimer.start(std::max(0, this->spec.shutdownGraceMs));
        } else {
            ::killpg(pid, SIGKILL);
        }
    });
    QObject::connect(&exitPoll, &QTimer::timeout, q, [this] { onExitNotification(); });
}

WorkerProcess::Private::~Private()
{
    disarmOwedStarted();
    closePipes();
    exitNotifier.reset();
    if (pid > 0 && !reaped) {
        // Synchronously: the caller expects the interpreter and everything it started to be gone
        // when delete returns, and no zombie may be left behind.
        ::killpg(pid, SIGKILL);
        siginfo_t info{};
        int rc;
        do {
            rc = pidfd >= 0 ? ::waitid(P_PIDFD, id_t(pidfd), &info, WEXITED)
                            : ::waitid(P_PID, id_t(pid), &info, WEXITED);
        } while (rc != 0 && errno == EINTR);
        WorkerGuard::instance().forget(pid);
    }
    if (pidfd >= 0)
        ::close(pidfd);
    // Every reply callback runs exactly once, even now; from the event loop, as the session is
    // being destroyed under the caller.
    for (auto &reply : replies)
        replyLater(std::move(reply), makeError(QStringLiteral("worker_died"),
                                               QStringLiteral("the session was closed")));
}

bool WorkerProcess::Private::setState(State s)
{
    state = s;
    if (reportedState == s)
        return true;
    reportedState = s;
    QPointer<WorkerProcess> guard(q);
    emit q->stateChanged(s);
    return !guard.isNull();
}

bool WorkerProcess::Private::emitEvent(const Event &e)
{
    if (exec && exec->startedOwed && !emitOwedStarted())
        return false;
    QPointer<WorkerProcess> guard(q);
    emit q->event(e);
    return !guard.isNull();
}

bool WorkerProcess::Private::emitOwedStarted()
{
    if (!exec || !exec->startedOwed)
        return true;
    exec->startedOwed = false;
    disarmOwedStarted();
    return emitEvent(Event::started(exec->id, exec->count));
}

void WorkerProcess::Private::armOwedStarted()
{
    if (owedStartedTurn)
        return;  // still waiting for an earlier run that ended before the loop turned
    // Without an event loop the event goes out with the run's first event.
    owedStartedTurn = LoopTurn::current();
    if (owedStartedTurn)
        owedStartedTurn->schedule(this);
}

void WorkerProcess::Private::disarmOwedStarted()
{
    if (LoopTurn *turn = std::exchange(owedStartedTurn, nullptr))
        turn->cancel(this);
}

void WorkerProcess::Private::onLoopTurn()
{
    owedStartedTurn = nullptr;
    (void)emitOwedStarted();  // nothing to do after it, whether or not we still exist
}

QMap<QString, QString> WorkerProcess::workerEnvironment(const SessionOptions &options)
{
    QMap<QString, QString> env = options.environment;
    // Protocol §1. LANG only when the caller chose none: a deliberate locale is kept.
    if (!env.contains(QStringLiteral("LANG")))
        env.insert(QStringLiteral("LANG"), QStringLiteral("C.UTF-8"));
    env.insert(QStringLiteral("TERM"), QStringLiteral("dumb"));
    env.insert(QStringLiteral("PAGER"), QStringLiteral("cat"));
    env.insert(QStringLiteral("GIT_PAGER"), QStringLiteral("cat"));
    env.insert(QStringLiteral("GIT_TERMINAL_PROMPT"), QStringLiteral("0"));
    env.insert(QStringLiteral("MPLBACKEND"), QStringLiteral("Agg"));
    env.insert(QStringLiteral("REPLHOST_CONTEXT_ID"), options.contextId);
    // bwrap sets these for the program it starts (bwrapCommand); bwrap and the launchers get
    // them too, which changes nothing for them.
    const Result<Confinement> confinement = Confinement::fromSettings(options.settings);
    if (const std::optional<SandboxPolicy> policy = confinement ? confinement->sandboxPolicy() : std::nullopt) {
        for (const auto &[key, value] : sandboxEnvironment(*policy)) {
            if (value)
                env.insert(key, *value);
            else
                env.remove(key);
        }
    }
    return env;
}

QByteArrayList WorkerProcess::Private::environment() const
{
    const QMap<QString, QString> env = workerEnvironment(options);
    QByteArrayList list;
    list.reserve(env.size());
    for (auto it = env.constBegin(); it != env.constEnd(); ++it) {
        if (it.key().isEmpty() || it.key().contains(QLatin1Char('=')))
            continue;
        list.append(it.key().toUtf8() + '=' + it.value().toUtf8());
    }
    return list;
}

void WorkerProcess::Private::failStart(const QString &message)
{
    state = State::Dead;
    QMetaObject::invokeMethod(
        q,
        [this, message] {
            if (!setState(State::Dead))
                return;
            emit q->failed(message);
        },
        Qt::QueuedConnection);
}

void WorkerProcess::Private::start()
{
    ignoreSigpipe();
    auto parsed = Confinement::fromSettings(options.settings);
    if (!parsed) {
        failStart(parsed.error().message);
        return;
    }
    confinement = std::move(*parsed);
    if (std::optional<SandboxPolicy> policy = confinement.sandboxPolicy(); policy && hasOwnView(*policy))
        view = std::move(policy);
    // Under a confinement the launcher is spawned and becomes the worker (same pid) once it
    // has applied the limits; a launcher failure is an exit before hello, with its message.
    auto argv = confinement.command(spec.program, spec.arguments, options.workingDirectory);
    if (!argv) {
        failStart(argv.error().message);
        return;
    }
    const QString program = argv->takeFirst();
    auto spawned = spawnProcess(program, *argv, environment(), options.workingDirectory);
    if (!spawned) {
        failStart(spawned.error().message);
        return;
    }
    if (!confinement.isEmpty())
        limits = LimitMonitor(confinement);
    const SpawnedProcess &p = *spawned;
    pid = p.pid;
    pidfd = p.pidfd;
    requests.open(p.requestFd);
    eventFd = p.eventFd;
    out[0].fd = p.stdoutFd;
    out[1].fd = p.stderrFd;

    QRandomGenerator *random = QRandomGenerator::system();
    quint32 words[4];
    random->fillRange(words);
    nonce = QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();

    for (int i = 0; i < 2; ++i) {
        Output &o = out[i];
        o.buffer.reset(new char[kReadChunk]);
        o.scanner.setNonce(nonce);
        o.notifier = std::make_unique<QSocketNotifier>(o.fd, QSocketNotifier::Read);
        QObject::connect(o.notifier.get(), &QSocketNotifier::activated, q,
                         [this, i] { (void)readStream(i); });
    }
    eventBuffer.reset(new char[kReadChunk]);
    eventNotifier = std::make_unique<QSocketNotifier>(eventFd, QSocketNotifier::Read);
    QObject::connect(eventNotifier.get(), &QSocketNotifier::activated, q,
                     [this] { (void)readEvents(); });
    if (pidfd >= 0) {
        exitNotifier = std::make_unique<QSocketNotifier>(pidfd, QSocketNotifier::Read);
        QObject::connect(exitNotifier.get(), &QSocketNotifier::activated, q,
                         [this] { onExitNotification(); });
    } else {
        exitPoll.start(kFallbackExitPollMs);
    }

    requests.send({{kType, QStringLiteral("init")},
                   {kId, nextId("init")},
                   {QStringLiteral("protocol"), kWorkerProtocolVersion},
                   {QStringLiteral("revision"), kWorkerProtocolRevision},
                   {QStringLiteral("mark_nonce"), QString::fromLatin1(nonce)},
                   {QStringLiteral("context_id"), options.contextId},
                   {QStringLiteral("options"), spec.initOptions}});
    if (spec.startTimeoutMs > 0)
        startTimer.start(spec.startTimeoutMs);
    (void)setState(State::Starting);
}

bool WorkerProcess::Private::beginInterrupt()
{
    exec->interruptPending = false;
    // An interrupt ends the wait for input too: the driver takes the `interrupt` as its answer.
    exec->inputPending = false;
    requests.send({{kType, QStringLiteral("interrupt")},
                   {kId, nextId("interrupt")},
                   {QStringLiteral("target"), exec->id}});
    interrupts.begin();
    return setState(State::Interrupting);
}

void WorkerProcess::Private::signalInterrupt()
{
    ::killpg(pid, SIGINT);
    if (confinement.sandboxed())
        if (const pid_t inner = sandboxedProgramGroup(pid); inner > 0)
            ::killpg(inner, SIGINT);
}

WorkerProcess::WorkerProcess(WorkerSpec spec, SessionOptions options, QObject *parent)
    : Session(parent), d(std::make_unique<Private>(this, std::move(spec), std::move(options)))
{
}

WorkerProcess::~WorkerProcess()
{
    // Nothing is emitted from here: the owner is tearing the session down. Private's destructor
    // kills and reaps the process group.
    d.reset();
}

Session::State WorkerProcess::state() const
{
    return d->state;
}

SessionInfo WorkerProcess::info() const
{
    return d->info;
}

void WorkerProcess::takeInWrittenOutput()
{
    if (d->ended || d->state == State::NotStarted || d->state == State::Dead)
        return;
    (void)d->takeInWritten(true);  // false: a slot deleted this session; nothing more to do
}

qint64 WorkerProcess::pid() const
{
    return d->reaped ? 0 : d->pid;
}

void WorkerProcess::start()
{
    if (d->state != State::NotStarted) {
        qCWarning(lcWorker) << "start() called twice; ignored";
        return;
    }
    d->start();
}

void WorkerProcess::execute(const ExecuteRequest &request)
{
    if (d->state != State::Idle || d->ended) {
        QString ename;
        QString evalue;
        switch (d->ended ? State::Dead : d->state) {
        case State::Busy:
        case State::Interrupting:
            ename = QStringLiteral("SessionBusy");
            evalue = QStringLiteral("another execution is running in this session; wait for its "
                                    "done event");
            break;
        case State::NotStarted:
        case State::Starting:
            ename = QStringLiteral("SessionNotReady");
            evalue = QStringLiteral("the interpreter is not ready yet; wait for ready()");
            break;
        case State::Idle:
        case State::Dead:
            ename = QStringLiteral("SessionEnded");
            evalue = QStringLiteral("the interpreter has ended; start a new session");
            break;
        }
        rejectLater(this, request, ename, evalue);
        return;
    }
    d->exec = Private::Execution{request.id, request.executionCount};
    // A plugin built against SDK 1.0-1.2 may pass a request it made itself: its ExecuteRequest
    // ends before allowInput, so that member is read (and the request copied) only for plugins
    // that have it. Their drivers never ask for input anyway.
    const bool allowInput = d->requestsHaveAllowInput && request.allowInput;
    d->exec->inputAllowed = allowInput;
    if (d->view && !request.cwd.isEmpty()) {
        ExecuteRequest inside;
        inside.id = request.id;
        inside.code = request.code;
        inside.executionCount = request.executionCount;
        inside.env = request.env;
        inside.cwd = sandboxPathOf(*d->view, QDir::cleanPath(request.cwd));
        d->requests.send(executeFrameBody(inside, allowInput));
    } else {
        d->requests.send(executeFrameBody(request, allowInput));
    }
    if (d->implicitStarted) {
        // The driver sends no `started` (protocol §4): the run counts as started from here, for
        // its output and for interrupts, and its event goes out from the event loop, since no
        // event is emitted inside execute().
        d->exec->started = true;
        d->exec->startedOwed = true;
        d->armOwedStarted();
    }
    (void)d->setState(State::Busy);
}

void WorkerProcess::interrupt(const QString &executionId)
{
    auto &exec = d->exec;
    if (!exec || exec->id != executionId || exec->doneReceived || d->ended
        || d->state == State::Interrupting)
        return;
    // Before `started` a signal could hit the driver's own code rather than the user's: wait.
    if (!exec->started) {
        exec->interruptPending = true;
        return;
    }
    (void)d->beginInterrupt();
}

bool WorkerProcess::answerInput(const QString &executionId, const QString &value, bool eof)
{
    auto &exec = d->exec;
    if (!exec || exec->id != executionId || !exec->inputPending || exec->doneReceived || d->ended)
        return false;
    exec->inputPending = false;
    QJsonObject reply{{kType, QStringLiteral("input_reply")},
                      {kId, d->nextId("input")},
                      {QStringLiteral("target"), executionId}};
    if (eof)
        reply.insert(QStringLiteral("eof"), true);
    else
        reply.insert(QStringLiteral("value"), value);
    d->requests.send(reply);
    return true;
}

void WorkerProcess::complete(const QString &code, int cursor, ReplyCallback reply)
{
    if (d->state != State::Idle || d->ended) {
        replyLater(std::move(reply),
                   notIdle(d->state, QStringLiteral("completion is only available while the "
                                                    "interpreter is idle")));
        return;
    }
    const QJsonValue capability = d->info.capabilities.value(QStringLiteral("complete"));
    if (capability.isBool() && !capability.toBool()) {
        Session::complete(code, cursor, std::move(reply));
        return;
    }
    const QString id = d->nextId("complete");
    d->replies.insert(id, std::move(reply));
    d->requests.send({{kType, QStringLiteral("complete")},
                      {kId, id},
                      {QStringLiteral("code"), code},
                      {QStringLiteral("cursor"), cursor}});
}

void WorkerProcess::variables(ReplyCallback reply)
{
    if (d->state != State::Idle || d->ended) {
        replyLater(std::move(reply),
                   notIdle(d->state, QStringLiteral("variables are only available while the "
                                                    "interpreter is idle")));
        return;
    }
    const QJsonValue capability = d->info.capabilities.value(QStringLiteral("variables"));
    if (capability.isBool() && !capability.toBool()) {
        Session::variables(std::move(reply));
        return;
    }
    const QString id = d->nextId("variables");
    d->replies.insert(id, std::move(reply));
    d->requests.send({{kType, QStringLiteral("variables")}, {kId, id}});
}

void WorkerProcess::requestSnapshot(ReplyCallback reply)
{
    sendWhenIdle(QStringLiteral("snapshot"), {}, std::move(reply));
}

void WorkerProcess::restoreSnapshot(const QJsonObject &snapshot, ReplyCallback reply)
{
    sendWhenIdle(QStringLiteral("restore"), snapshot, std::move(reply));
}

void WorkerProcess::sendWhenIdle(const QString &type, QJsonObject fields, ReplyCallback reply)
{
    if (d->state != State::Idle || d->ended) {
        replyLater(std::move(reply),
                   notIdle(d->state, QStringLiteral("a %1 request needs an idle interpreter")
                                         .arg(type)));
        return;
    }
    if (d->info.capabilities.value(QStringLiteral("snapshot")).toString()
        != QLatin1String("on_request")) {
        replyLater(std::move(reply),
                   makeError(QStringLiteral("unsupported"),
                             QStringLiteral("the %1 driver takes no snapshots on request")
                                 .arg(d->info.language)));
        return;
    }
    const QString id = d->nextId(type.toLatin1().constData());
    d->replies.insert(id, std::move(reply));
    fields.insert(kType, type);
    fields.insert(kId, id);
    d->requests.send(fields);
}

void WorkerProcess::shutdown()
{
    switch (d->state) {
    case State::Dead:
        return;
    case State::NotStarted:
        d->state = State::Dead;
        d->shutdownRequested = true;
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (!d->setState(State::Dead))
                    return;
                emit terminated(true, QStringLiteral("shut down before it started"));
            },
            Qt::QueuedConnection);
        return;
    default:
        break;
    }
    if (d->shutdownRequested || d->ended)
        return;
    d->shutdownRequested = true;
    d->requests.send({{kType, QStringLiteral("shutdown")}, {kId, d->nextId("shutdown")}});
    // Escalation: request, then SIGTERM to the group, then SIGKILL, one grace period apart.
    d->shutdownTimer.start(std::max(0, d->spec.shutdownGraceMs));
}

FailedSession::FailedSession(QString reason, QObject *parent)
    : Session(parent), m_reason(std::move(reason))
{
}

Session::State FailedSession::state() const
{
    return m_state;
}

SessionInfo FailedSession::info() const
{
    return {};
}

void FailedSession::start()
{
    if (m_state != State::NotStarted)
        return;
    m_state = State::Dead;
    QMetaObject::invokeMethod(
        this,
        [this] {
            QPointer<FailedSession> guard(this);
            emit stateChanged(State::Dead);
            if (guard)
                emit failed(m_reason);
        },
        Qt::QueuedConnection);
}

void FailedSession::execute(const ExecuteRequest &request)
{
    rejectLater(this, request, QStringLiteral("SessionUnavailable"), m_reason);
}

void FailedSession::interrupt(const QString &executionId)
{
    Q_UNUSED(executionId);
}

void FailedSession::shutdown()
{
    const bool wasStarted = m_state != State::NotStarted;
    m_state = State::Dead;
    if (wasStarted)
        return; // it never ran, and it already said so through failed()
    QMetaObject::invokeMethod(
        this,
        [this] {
            QPointer<FailedSession> guard(this);
            emit stateChanged(State::Dead);
            if (guard)
                emit terminated(true, QStringLiteral("shut down before it started"));
        },
        Qt::QueuedConnection);
}

} // namespace replhost::sdk
