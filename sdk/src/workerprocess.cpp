// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/workerprocess.h"

#include "replhost/sdk/version.h"

#include "confinement.h"
#include "doneframe.h"
#include "framing.h"
#include "limitmonitor.h"
#include "loopturn.h"
#include "markscanner.h"
#include "sandbox.h"
#include "spawn.h"
#include "workerguard.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QLoggingCategory>
#include <QPointer>
#include <QRandomGenerator>
#include <QSocketNotifier>
#include <QStringDecoder>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace replhost::sdk {

Q_LOGGING_CATEGORY(lcWorker, "replhost.worker")

namespace {

constexpr qsizetype kReadChunk = 64 * 1024;
// Reads per wake-up before other event sources get their turn (4 MiB); the notifiers are
// level-triggered, so whatever is left is read on the next turn of the event loop.
constexpr int kMaxReadsPerWakeup = 64;
constexpr int kStderrTailLines = 50;
constexpr qsizetype kStderrTailChars = 32 * 1024;
// Output held back behind an event whose mark is missing on the other stream. Past this the event
// is released early (as when its grace period ends), so memory stays bounded under a flood.
constexpr qsizetype kMaxHeldChars = 8 * 1024 * 1024;
constexpr int kFallbackExitPollMs = 50;

enum class End { Exited, LimitReached, ProtocolError, InterruptKilled, StartTimeout };

// Whether ignoreSigpipe() left SIGPIPE ignored; if not, the host has a handler of its own.
std::atomic<bool> sigpipeIgnored{false};

// Writing to fd 3 after the worker has died raises SIGPIPE, whose default action would end the
// host. Ignoring it once per process is what Qt itself does for QProcess and local sockets; the
// worker is unaffected because its dispositions are reset at spawn.
void ignoreSigpipe()
{
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction current {};
        if (::sigaction(SIGPIPE, nullptr, &current) != 0)
            return;
        if (current.sa_handler == SIG_DFL) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            sigemptyset(&ignore.sa_mask);
            sigpipeIgnored = ::sigaction(SIGPIPE, &ignore, nullptr) == 0;
        } else {
            sigpipeIgnored = current.sa_handler == SIG_IGN;
        }
    });
}

// writev() to a worker's request pipe. Where the host handles SIGPIPE itself (a crash reporter,
// a test framework), the signal a write to a worker that just died raises must not reach that
// handler: it is blocked around the write and, when raised, taken back before it is unblocked,
// as Qt does for its own pipes. A launcher that refuses its options exits within a millisecond,
// before the init request is written, so this is an ordinary case, not a corner.
ssize_t writeToWorker(int fd, const iovec *parts, int count)
{
    if (sigpipeIgnored.load(std::memory_order_relaxed))
        return ::writev(fd, parts, count);
    sigset_t pipe, previous;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe, &previous);
    const ssize_t written = ::writev(fd, parts, count);
    const int error = errno;
    if (written < 0 && error == EPIPE && !sigismember(&previous, SIGPIPE)) {
        const timespec none{0, 0};
        ::sigtimedwait(&pipe, nullptr, &none); // the write's SIGPIPE is pending on this thread
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    errno = error;
    return written;
}

// How a worker ended: the signal that killed it (0 if none) and its exit code otherwise.
// Inside a sandbox the worker is bwrap's child, and bwrap exits with 128 + N when it is killed
// by signal N, so such a code stands for the signal.
struct ExitCause {
    int signal = 0;
    int code = 0;
    bool viaSandbox = false;
};

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

void appendEnvChange(QByteArray &out, const EnvChange &change)
{
    out.append("{\"set\":{");
    for (auto it = change.set.constBegin(); it != change.set.constEnd(); ++it) {
        if (it != change.set.constBegin())
            out.append(',');
        appendJsonString(out, it.key());
        out.append(':');
        appendJsonString(out, it.value());
    }
    out.append("},\"unset\":[");
    for (qsizetype i = 0; i < change.unset.size(); ++i) {
        if (i > 0)
            out.append(',');
        appendJsonString(out, change.unset[i]);
    }
    out.append("]}");
}

// The request's `env` member, with the comma before it.
void appendEnvDelta(QByteArray &out, const EnvDelta &env)
{
    out.append(",\"env\":{\"context\":");
    appendEnvChange(out, env.context);
    out.append(",\"exec\":");
    appendEnvChange(out, env.exec);
    out.append('}');
}

// The execute request (protocol §3), written field by field: one pass, ASCII from the start,
// instead of a QJsonObject that is serialized and then escaped.
QByteArray executeFrameBody(const ExecuteRequest &request)
{
    QByteArray body;
    body.reserve(160 + request.code.size() + request.id.size());
    body.append("{\"type\":\"execute\",\"id\":");
    appendJsonString(body, request.id);
    body.append(",\"code\":");
    appendJsonString(body, request.code);
    body.append(",\"execution_count\":");
    char count[16];
    const char *const countEnd = std::to_chars(count, count + sizeof count,
                                               request.executionCount).ptr;
    body.append(count, countEnd - count);
    if (request.env.context.isEmpty() && request.env.exec.isEmpty()) {
        // The usual run changes no environment: its text, made once, in one append.
        static const QByteArray unchanged = [] {
            QByteArray text;
            appendEnvDelta(text, EnvDelta());
            return text;
        }();
        body.append(unchanged);
    } else {
        appendEnvDelta(body, request.env);
    }
    if (!request.cwd.isEmpty()) {
        body.append(",\"cwd\":");
        appendJsonString(body, request.cwd);
    }
    body.append('}');
    return body;
}

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

void replyLater(Session::ReplyCallback reply, Error error)
{
    QTimer::singleShot(0, [reply = std::move(reply), error = std::move(error)] { reply(error); });
}

// The answer to a request that needs an idle interpreter, asked while there is none.
Error notIdle(Session::State state, const QString &need)
{
    return state == Session::State::Dead
               ? makeError(QStringLiteral("worker_died"), QStringLiteral("the interpreter has ended"))
               : makeError(QStringLiteral("busy"), need);
}

const QString kType = QStringLiteral("type");
const QString kId = QStringLiteral("id");
const QString kMark = QStringLiteral("mark");

} // namespace

class WorkerProcess::Private final : public LoopTurn::Client {
public:
    Private(WorkerProcess *q, WorkerSpec spec, SessionOptions options);
    ~Private();

    // Functions that can emit a signal return whether the WorkerProcess still exists: a slot may
    // delete it. After false nothing may touch `this`; callers return at once.
    [[nodiscard]] bool setState(State s);
    [[nodiscard]] bool emitEvent(const Event &e);
    // The `started` the host makes for a driver with the implicit_started capability (protocol
    // §4), if it is still owed: emitted before anything else of the run, or when the event loop
    // next turns (armOwedStarted), whichever comes first.
    [[nodiscard]] bool emitOwedStarted();
    void armOwedStarted();
    void disarmOwedStarted();
    void onLoopTurn() override;

    void start();
    void failStart(const QString &message);
    QByteArrayList environment() const;
    void sendFrame(const QJsonObject &message);
    void sendFrameBody(const QByteArray &body);  // ASCII JSON already
    void writeOutgoing();
    QString nextId(const char *kind)
    {
        return QStringLiteral("rh-%1-%2").arg(QLatin1String(kind)).arg(++requestCount);
    }

    [[nodiscard]] bool readEvents();
    [[nodiscard]] bool readStream(int index);
    // One frame from fd 4: a `done` that DoneFrame can take apart goes to handleDone() without
    // being parsed into an object first; the rest is parsed and goes to handleMessage(). Sets
    // `*error` for a body that is not a JSON object (returning false, with `this` alive).
    [[nodiscard]] bool handleFrame(QByteArrayView body, QString *error);
    // May move from `message`: an event's fields are the frame's object, taken without a copy.
    [[nodiscard]] bool handleMessage(QJsonObject &message);
    [[nodiscard]] bool handleDone(DoneFrame frame);
    // Whether an event of execution `id` belongs to the running execution and comes before its
    // done; events after done (or of another run) would break "no output after done", so the
    // caller drops them.
    bool acceptsEventOf(const QString &type, const QString &id) const;
    // Records that the running execution's `done` has arrived.
    void noteDone(bool hasMark, quint64 mark);
    [[nodiscard]] bool handleHello(const QJsonObject &message);
    [[nodiscard]] bool handleExecutionEvent(const QString &type, const QString &id,
                                            QJsonObject fields);
    [[nodiscard]] bool handleReply(const QString &type, const QString &id,
                                   const QJsonObject &message);

    // The sync barrier (protocol §5). Events are released in arrival order, each once its
    // barrier allows:
    // - Mark: its sync mark seen on both streams; output read after the mark waits with it.
    // - Position, for an event without a mark: no mark to wait for. What had been read by the
    //   time the event was read goes before it (once handled, if a read was in hand), everything
    //   read later after it. Exact for a done the driver sent after finding both pipes empty:
    //   every byte written before it had been read by then.
    // - None: nothing (`started`, which precedes the run's output rather than following it).
    // A mark can also be read before its event: the host may read a stream between the driver's
    // write of the mark and its write of the event. Output read after such a mark waits for the
    // event as it would wait with it (awaitedEventDeadline bounds the wait, as syncGraceMs
    // bounds the wait for a mark).
    enum class Barrier { None, Mark, Position };
    struct Bound {
        Barrier barrier = Barrier::None;
        quint64 mark = 0;         // Mark: the mark awaited. Position: the highest mark of the
                                  // events before it (text after a later mark came after it)
        quint64 reads[2] = {0, 0}; // Position: the streams' read counts when it was read
    };
    // `doneFrame`: the fields of a `done` taken apart by DoneFrame, made when it is released.
    [[nodiscard]] bool enqueue(Event event, Barrier barrier, quint64 mark = 0,
                               std::optional<DoneFrame> doneFrame = std::nullopt);
    [[nodiscard]] bool releaseReady(bool forceHead);
    [[nodiscard]] bool release(Event event, bool synced, std::optional<DoneFrame> doneFrame);
    // Emits the held text that goes before `before` (all of it for null).
    [[nodiscard]] bool flushHeld(const Bound *before);
    // The highest mark read on either stream is one whose event has not been read yet.
    bool markAheadOfEvents() const
    {
        return std::max(out[0].seq, out[1].seq) > highestEventMark;
    }
    // Stops waiting for the events of the marks read so far: text after them goes out as if
    // they had come (a driver that wrote a mark and no event, or more text than may be held).
    void stopAwaitingEvents();
    bool isReady(const Bound &bound) const;
    bool positionQueued() const;
    // Delivers what the scanners hold back as a possible mark, where it is known not to be one,
    // ahead of an event without a mark that is about to be released.
    [[nodiscard]] bool takeTrailingText(const Bound &before);
    [[nodiscard]] bool deliverText(int index, QString text);
    [[nodiscard]] bool handleMark(int index, quint64 seq);
    void armSyncTimer();
    void onSyncTimeout();
    QString ownerOf(int index) const;

    // Collects the decoded text of one read and hands marks to the barrier.
    class StreamSink final : public MarkScanner::Sink {
    public:
        StreamSink(Private *d, int index) : m_d(d), m_index(index) {}
        bool text(const char *data, qsizetype size) override;
        bool mark(quint64 seq) override;

    private:
        Private *m_d;
        int m_index;
    };

    [[nodiscard]] bool beginInterrupt();
    // SIGINT to the worker's process group, and in a sandbox to the group the worker may have
    // made for itself there (sandboxedProgramGroup).
    void signalInterrupt();
    void stopInterruptLadder();

    void onExitNotification();
    [[nodiscard]] bool endWorker(End cause, const QString &detail);
    // Reads what the worker has written so far (its event frames too, when `events`) and
    // delivers it, releasing what waits for marks as if no more were coming: at the worker's end,
    // and for an owner about to delete the session.
    [[nodiscard]] bool takeInWritten(bool events);
    [[nodiscard]] bool finishReads();
    void closePipes();
    void appendStderr(const QString &text);
    QStringList stderrLines() const;
    QString withStderr(QString message) const;

    WorkerProcess *const q;
    const WorkerSpec spec;
    const SessionOptions options;
    Confinement confinement;  // from options.settings, parsed at start()
    LimitMonitor limits;      // the worker's cgroup counters, opened once it is spawned
    QString limitName;        // End::LimitReached: the limit's key and value
    qint64 limitValue = 0;

    State state = State::NotStarted;
    State reportedState = State::NotStarted;
    SessionInfo info;

    pid_t pid = 0;        // the worker, also its process group; valid until reaped
    bool reaped = false;
    int pidfd = -1;
    int requestFd = -1;
    int eventFd = -1;
    std::unique_ptr<QSocketNotifier> exitNotifier;
    std::unique_ptr<QSocketNotifier> eventNotifier;
    std::unique_ptr<QSocketNotifier> writeNotifier;
    QTimer exitPoll; // only without pidfd_open

    // fd 1 and fd 2 of the worker.
    struct Held {
        quint64 afterMark; // the stream's mark seq when the text was read
        quint64 read;      // the stream's read count then: the text came from that read or before
        QString owner;
        QString text;
    };
    struct Output {
        QString name;
        int fd = -1;
        std::unique_ptr<QSocketNotifier> notifier;
        std::unique_ptr<char[]> buffer;
        MarkScanner scanner;
        QStringDecoder decoder{QStringDecoder::Utf8, QStringDecoder::Flag::ConvertInitialBom};
        quint64 seq = 0;     // highest mark read on this stream, after the text before it
        // Reads that returned bytes, and how many of those have been scanned and delivered (held
        // or emitted) in full. They differ only while a read's bytes are being handled, which
        // can take in events (a mark, or output before `started`, makes the stream read fd 4).
        quint64 reads = 0;
        quint64 delivered = 0;
        bool lastReadShort = true; // the pipe was empty after the last read
        QString chunk;       // text decoded from the current read, not yet delivered
        std::deque<Held> held;
        bool reading = false;
        bool deferred = false; // notifier disabled while a read of this fd is on the stack
        bool eof = false;
    };
    Output out[2];

    FrameReader frames;
    bool implicitStarted = false; // from hello: the driver leaves `started` to the host
    std::unique_ptr<char[]> eventBuffer;
    bool readingEvents = false;
    bool eventsDeferred = false;
    bool eventsEof = false;
    int readDepth = 0;        // reads on the stack
    // An end found while reads are on the stack waits for them to unwind: bytes they hold belong
    // to the run and must be delivered before its end is reported.
    struct PendingEnd {
        End cause;
        QString detail;
    };
    std::optional<PendingEnd> pendingEnd;

    QByteArray outgoing;      // request bytes fd 3 did not take yet
    qsizetype outgoingOffset = 0;

    QByteArray nonce;
    struct Execution {
        QString id;
        int count = 0;
        bool started = false;
        bool startedOwed = false; // implicit_started: started, but the event not yet emitted
        bool interruptPending = false;
        bool doneReceived = false;
        bool doneMarked = false;
        quint64 doneMark = 0;
        quint64 doneReads[2] = {0, 0}; // an unmarked done: the streams' read counts when it came
    };
    std::optional<Execution> exec;

    struct Pending {
        Event event;
        Bound bound;
        qint64 deadline;
        std::optional<DoneFrame> doneFrame;  // a done's fields, still as frame text
    };
    DoneFrame::Recent recentDone;  // the shape of this worker's last parsed `done`
    std::deque<Pending> queue;     // events waiting for their barriers, in arrival order
    // Whether held text of stream `index` goes out before an event bound by `before`.
    static bool precedes(const Held &h, int index, const Bound &before);
    quint64 highestEventMark = 0;
    // While markAheadOfEvents(): when the wait for those events ends (clock), else -1.
    qint64 awaitedEventDeadline = -1;
    qsizetype heldChars = 0;
    bool releasing = false;
    QElapsedTimer clock;
    QTimer syncTimer;
    // Where an owed `started` of a run that has sent nothing else yet waits for the next turn of
    // the event loop (see LoopTurn for why not a queued call or a timer); set while it waits.
    QPointer<LoopTurn> owedStartedTurn;

    QTimer startTimer;
    QTimer interruptRepeatTimer;
    QTimer interruptKillTimer;
    int sigintsSent = 0;
    QTimer shutdownTimer;
    int shutdownStage = 0;
    bool shutdownRequested = false;
    bool ended = false;

    QHash<QString, ReplyCallback> replies;
    quint64 requestCount = 0;
    QString stderrTail;
};

WorkerProcess::Private::Private(WorkerProcess *q, WorkerSpec spec, SessionOptions options)
    : q(q), spec(std::move(spec)), options(std::move(options))
{
    out[0].name = QStringLiteral("stdout");
    out[1].name = QStringLiteral("stderr");
    clock.start();
    syncTimer.setSingleShot(true);
    startTimer.setSingleShot(true);
    interruptKillTimer.setSingleShot(true);
    shutdownTimer.setSingleShot(true);
    QObject::connect(&syncTimer, &QTimer::timeout, q, [this] { onSyncTimeout(); });
    QObject::connect(&startTimer, &QTimer::timeout, q, [this] {
        (void)endWorker(End::StartTimeout, {});
    });
    QObject::connect(&interruptRepeatTimer, &QTimer::timeout, q, [this] {
        if (!exec || reaped || sigintsSent >= this->spec.interruptRepeats) {
            interruptRepeatTimer.stop();
            return;
        }
        signalInterrupt();
        if (++sigintsSent >= this->spec.interruptRepeats)
            interruptRepeatTimer.stop();
    });
    QObject::connect(&interruptKillTimer, &QTimer::timeout, q, [this] {
        (void)endWorker(End::InterruptKilled, {});
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

QByteArrayList WorkerProcess::Private::environment() const
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
    requestFd = p.requestFd;
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
    writeNotifier = std::make_unique<QSocketNotifier>(requestFd, QSocketNotifier::Write);
    writeNotifier->setEnabled(false);
    QObject::connect(writeNotifier.get(), &QSocketNotifier::activated, q,
                     [this] { writeOutgoing(); });
    if (pidfd >= 0) {
        exitNotifier = std::make_unique<QSocketNotifier>(pidfd, QSocketNotifier::Read);
        QObject::connect(exitNotifier.get(), &QSocketNotifier::activated, q,
                         [this] { onExitNotification(); });
    } else {
        exitPoll.start(kFallbackExitPollMs);
    }

    sendFrame({{kType, QStringLiteral("init")},
               {kId, nextId("init")},
               {QStringLiteral("protocol"), kWorkerProtocolVersion},
               {QStringLiteral("mark_nonce"), QString::fromLatin1(nonce)},
               {QStringLiteral("context_id"), options.contextId},
               {QStringLiteral("options"), spec.initOptions}});
    if (spec.startTimeoutMs > 0)
        startTimer.start(spec.startTimeoutMs);
    (void)setState(State::Starting);
}

void WorkerProcess::Private::sendFrame(const QJsonObject &message)
{
    if (requestFd >= 0)
        sendFrameBody(asciiJson(message));
}

void WorkerProcess::Private::sendFrameBody(const QByteArray &body)
{
    if (requestFd < 0)
        return;
    char header[24];
    const int headerSize = writeFrameHeader(header, body.size());
    if (outgoingOffset == outgoing.size()) {
        // Nothing queued: hand both parts to the kernel at once, without joining them first.
        iovec parts[2] = {{header, size_t(headerSize)},
                          {const_cast<char *>(body.constData()), size_t(body.size())}};
        ssize_t written;
        do {
            written = writeToWorker(requestFd, parts, 2);
        } while (written < 0 && errno == EINTR);
        if (written < 0) {
            if (errno != EAGAIN) {
                // The worker closed fd 3; its exit (seen through the pidfd) will be reported.
                qCDebug(lcWorker) << "request pipe closed:" << std::strerror(errno);
                return;
            }
            written = 0;
        }
        if (written == headerSize + body.size())
            return;
        outgoing.clear();
        outgoingOffset = 0;
        if (written < headerSize) {
            outgoing.append(header + written, headerSize - written);
            outgoing.append(body);
        } else {
            outgoing.append(body.constData() + (written - headerSize),
                            body.size() - (written - headerSize));
        }
    } else {
        outgoing.append(header, headerSize);
        outgoing.append(body);
    }
    writeNotifier->setEnabled(true);
}

void WorkerProcess::Private::writeOutgoing()
{
    while (outgoingOffset < outgoing.size()) {
        const iovec rest{const_cast<char *>(outgoing.constData()) + outgoingOffset,
                         size_t(outgoing.size() - outgoingOffset)};
        const ssize_t written = writeToWorker(requestFd, &rest, 1);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            qCDebug(lcWorker) << "request pipe closed:" << std::strerror(errno);
            break;
        }
        outgoingOffset += written;
    }
    outgoing.clear();
    outgoingOffset = 0;
    writeNotifier->setEnabled(false);
}

bool WorkerProcess::Private::readEvents()
{
    if (eventFd < 0)
        return true;
    if (readingEvents) {
        // Re-entered from a nested event loop or from the stream side: the read on the stack
        // finishes the job. Quiet the level-triggered notifier until then.
        if (eventNotifier && eventNotifier->isEnabled()) {
            eventNotifier->setEnabled(false);
            eventsDeferred = true;
        }
        return true;
    }
    readingEvents = true;
    ++readDepth;
    bool protocolError = false;
    for (int n = 0; n < kMaxReadsPerWakeup; ++n) {
        const ssize_t got = ::read(eventFd, eventBuffer.get(), size_t(kReadChunk));
        if (got > 0) {
            bool alive = true;
            const bool ok = frames.feed(QByteArrayView(eventBuffer.get(), got),
                                              [this, &alive](QByteArrayView body, QString *error) {
                                                  const bool handled = handleFrame(body, error);
                                                  // A malformed body leaves us alive.
                                                  alive = handled || !error->isEmpty();
                                                  return handled;
                                              });
            if (!alive)
                return false;
            if (!ok) {
                protocolError = true;
                break;
            }
            if (got < kReadChunk)
                break;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0 || errno != EAGAIN) {
            // Closed or broken: the worker is dying or closed fd 4 itself. Liveness comes from
            // the pidfd, so only stop listening (a level-triggered EOF would fire forever).
            eventsEof = true;
            if (eventNotifier)
                eventNotifier->setEnabled(false);
        }
        break;
    }
    readingEvents = false;
    --readDepth;
    if (eventsDeferred) {
        eventsDeferred = false;
        if (eventNotifier && !eventsEof)
            eventNotifier->setEnabled(true);
    }
    if (protocolError && !endWorker(End::ProtocolError, frames.error()))
        return false;
    return finishReads();
}

bool WorkerProcess::Private::readStream(int index)
{
    Output &o = out[index];
    if (o.fd < 0)
        return true;
    if (o.reading) {
        if (o.notifier && o.notifier->isEnabled()) {
            o.notifier->setEnabled(false);
            o.deferred = true;
        }
        return true;
    }
    o.reading = true;
    ++readDepth;
    StreamSink sink(this, index);
    for (int n = 0; n < kMaxReadsPerWakeup; ++n) {
        // A run's `started` is in fd 4 before any byte the run writes, so after reading output
        // while a run waits for its `started`, fd 4 is read first: otherwise the run's first
        // bytes would pass for background output. Under a read of fd 4 that cannot be done, so
        // the bytes stay in the pipe until the notifier brings us back.
        if (exec && !exec->started && readingEvents)
            break;
        const ssize_t got = ::read(o.fd, o.buffer.get(), size_t(kReadChunk));
        if (got > 0) {
            ++o.reads;
            o.lastReadShort = got < kReadChunk;
            if (exec && !exec->started && !readEvents())
                return false;
            if (!o.scanner.feed(o.buffer.get(), got, sink))
                return false;
            // Every byte of the read is now in o.chunk, which is delivered next with nothing in
            // between that could release an event.
            o.delivered = o.reads;
            if (!deliverText(index, std::exchange(o.chunk, QString())))
                return false;
            // An event without a mark that came in while these bytes were in hand waited only
            // for them: release it before reading on, so that it does not wait for later bytes.
            if (!queue.empty() && queue.front().bound.barrier == Barrier::Position
                && !releaseReady(false))
                return false;
            if (got < kReadChunk)
                break; // a short read from a pipe means it was empty: save the EAGAIN round trip
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            o.lastReadShort = true;
        if (got == 0 || errno != EAGAIN) {
            o.eof = true;
            if (o.notifier)
                o.notifier->setEnabled(false);
        }
        break;
    }
    o.reading = false;
    --readDepth;
    if (o.deferred) {
        o.deferred = false;
        if (o.notifier && !o.eof)
            o.notifier->setEnabled(true);
    }
    return finishReads();
}

bool WorkerProcess::Private::finishReads()
{
    if (readDepth > 0 || !pendingEnd)
        return true;
    const PendingEnd end = *std::exchange(pendingEnd, std::nullopt);
    return endWorker(end.cause, end.detail);
}

bool WorkerProcess::Private::StreamSink::text(const char *data, qsizetype size)
{
    Output &o = m_d->out[m_index];
    o.chunk += o.decoder.decode(QByteArrayView(data, size));
    return true;
}

bool WorkerProcess::Private::StreamSink::mark(quint64 seq)
{
    return m_d->handleMark(m_index, seq);
}

QString WorkerProcess::Private::ownerOf(int index) const
{
    // Output belongs to a run from its `started` until its final mark; the rest is background
    // (timers, servers, jobs a run left behind) and must not be pinned on any run.
    if (!exec || !exec->started)
        return {};
    if (exec->doneReceived
        && (exec->doneMarked ? out[index].seq >= exec->doneMark
                             : out[index].reads > exec->doneReads[index]))
        return {};
    return exec->id;
}

bool WorkerProcess::Private::deliverText(int index, QString text)
{
    if (text.isEmpty())
        return true;
    Output &o = out[index];
    if (index == 1)
        appendStderr(text);
    QString owner = ownerOf(index);
    // Text read after a mark whose event is still waiting (for the other stream) was written
    // after that event: it waits too, so order is kept per stream. Text read while an event
    // without a mark waits is placed by when it was read, so it waits as well.
    bool hold = !o.held.empty() || o.seq > highestEventMark;
    if (!hold && !queue.empty()) {
        const Bound &head = queue.front().bound;
        hold = head.barrier != Barrier::Mark || head.mark <= o.seq;
    }
    if (hold) {
        heldChars += text.size();
        Held *last = o.held.empty() ? nullptr : &o.held.back();
        // Merged texts take the later read count, which must not carry earlier text past an
        // event placed between the two reads.
        if (last && last->afterMark == o.seq && last->owner == owner
            && (last->read == o.reads || !positionQueued())) {
            last->text += text;
            last->read = o.reads;
        } else {
            o.held.push_back({o.seq, o.reads, std::move(owner), std::move(text)});
        }
        if (heldChars > kMaxHeldChars) {
            stopAwaitingEvents();
            return releaseReady(true);
        }
        if (o.seq > highestEventMark && awaitedEventDeadline < 0) {
            awaitedEventDeadline = clock.elapsed() + std::max(0, spec.syncGraceMs);
            armSyncTimer();
        }
        return true;
    }
    return emitEvent(Event::stream(owner, o.name, text));
}

bool WorkerProcess::Private::handleMark(int index, quint64 seq)
{
    Output &o = out[index];
    if (!deliverText(index, std::exchange(o.chunk, QString())))
        return false;
    o.seq = std::max(o.seq, seq);
    // The driver writes the event right after its mark; learn it now, so that the text after
    // the mark is attributed and ordered correctly.
    if (seq > highestEventMark && !readingEvents && !readEvents())
        return false;
    return releaseReady(false);
}

bool WorkerProcess::Private::enqueue(Event event, Barrier barrier, quint64 mark,
                                     std::optional<DoneFrame> doneFrame)
{
    Pending pending{std::move(event), {}, clock.elapsed() + std::max(0, spec.syncGraceMs),
                    std::move(doneFrame)};
    Bound &bound = pending.bound;
    bound.barrier = barrier;
    if (barrier == Barrier::Mark) {
        bound.mark = mark;
        highestEventMark = std::max(highestEventMark, mark);
        if (!markAheadOfEvents())
            awaitedEventDeadline = -1;
    } else if (barrier == Barrier::Position) {
        // A done ends the run: its driver wrote every event of the run before it, so a mark
        // still without its event will not get one, and the text after it belongs before done.
        if (pending.event.kind == Event::Kind::Done)
            stopAwaitingEvents();
        bound.mark = highestEventMark;
        for (int i = 0; i < 2; ++i)
            bound.reads[i] = out[i].reads;
    }
    queue.push_back(std::move(pending));
    if (!releaseReady(false))
        return false;
    if (queue.empty())
        return true;
    // The driver wrote the marks before the event, so they are in the pipes already (unless the
    // driver is broken): read them now instead of waiting for the notifiers' turn.
    for (int i = 0; i < 2 && !queue.empty(); ++i) {
        const Bound &head = queue.front().bound;
        if (head.barrier == Barrier::Mark && out[i].seq < head.mark && !readStream(i))
            return false;
    }
    if (!queue.empty())
        armSyncTimer();
    return true;
}

bool WorkerProcess::Private::precedes(const Held &h, int index, const Bound &before)
{
    switch (before.barrier) {
    case Barrier::Mark:
        return h.afterMark < before.mark;
    case Barrier::Position:
        return h.afterMark <= before.mark && h.read <= before.reads[index];
    case Barrier::None:
        break;
    }
    return false;
}

bool WorkerProcess::Private::isReady(const Bound &bound) const
{
    switch (bound.barrier) {
    case Barrier::Mark:
        return out[0].seq >= bound.mark && out[1].seq >= bound.mark;
    case Barrier::Position:
        return out[0].delivered >= bound.reads[0] && out[1].delivered >= bound.reads[1];
    case Barrier::None:
        break;
    }
    return true;
}

bool WorkerProcess::Private::takeTrailingText(const Bound &before)
{
    for (int i = 0; i < 2; ++i) {
        Output &o = out[i];
        // Bytes the scanner holds back as a possible mark cannot be the start of one when the
        // pipe was empty after them (a mark is written whole, in one write()): they are text,
        // written before the event. Only while nothing has been read since the event came (the
        // scanner's state is then that of the bytes before it) and no read is being handled.
        if (o.reading || o.reads != before.reads[i] || !o.lastReadShort
            || !o.scanner.holdsPartialMark())
            continue;
        StreamSink sink(this, i);
        if (!o.scanner.flush(sink) || !deliverText(i, std::exchange(o.chunk, QString())))
            return false;
    }
    return true;
}

bool WorkerProcess::Private::positionQueued() const
{
    for (const Pending &p : queue) {
        if (p.bound.barrier == Barrier::Position)
            return true;
    }
    return false;
}

bool WorkerProcess::Private::flushHeld(const Bound *before)
{
    for (int i = 0; i < 2; ++i) {
        Output &o = out[i];
        while (!o.held.empty() && (!before || precedes(o.held.front(), i, *before))) {
            Held h = std::move(o.held.front());
            o.held.pop_front();
            heldChars -= h.text.size();
            if (!emitEvent(Event::stream(h.owner, o.name, h.text)))
                return false;
        }
    }
    return true;
}

bool WorkerProcess::Private::releaseReady(bool forceHead)
{
    // One release loop at a time; a nested call (from a slot running a nested event loop) leaves
    // the work to the loop already on the stack, which re-reads the queue after every emit.
    if (releasing)
        return true;
    releasing = true;
    while (!queue.empty()) {
        // A copy: the emits below run slots, which may change the queue.
        const Bound bound = queue.front().bound;
        const bool ready = isReady(bound);
        if (!ready && !forceHead)
            break;
        forceHead = false;
        if (bound.barrier == Barrier::Position && !takeTrailingText(bound))
            return false;
        if (!flushHeld(&bound))
            return false;
        if (queue.empty())
            break;
        Pending p = std::move(queue.front());
        queue.pop_front();
        if (!release(std::move(p.event), ready && bound.barrier != Barrier::None,
                     std::move(p.doneFrame)))
            return false;
    }
    releasing = false;
    if (queue.empty()) {
        if (!markAheadOfEvents()) {
            syncTimer.stop();
            return flushHeld(nullptr);
        }
        // Text after a mark whose event has not come yet waits for it.
        Bound known;
        known.barrier = Barrier::Mark;
        known.mark = highestEventMark + 1;
        return flushHeld(&known);
    }
    const Bound head = queue.front().bound;
    return flushHeld(&head);
}

void WorkerProcess::Private::stopAwaitingEvents()
{
    highestEventMark = std::max({highestEventMark, out[0].seq, out[1].seq});
    awaitedEventDeadline = -1;
}

bool WorkerProcess::Private::release(Event event, bool synced,
                                     std::optional<DoneFrame> doneFrame)
{
    if (event.kind != Event::Kind::Done)
        return emitEvent(event);
    if (doneFrame) {
        event.fields = doneFrame->takeFields(synced, &recentDone);
    } else {
        event.fields.insert(QStringLiteral("streams_synced"), synced);
        event.fields.insert(QStringLiteral("state_lost"), false);
    }
    if (!emitOwedStarted())
        return false;
    // fork() failing with EAGAIN is the program's own error to report; this says which limit
    // made it fail, which the program cannot know.
    if (const qint64 refused = limits.takeProcessLimitHits(); refused > 0
        && !emitEvent(Event::stream(event.executionId, QStringLiteral("stderr"),
                                    limits.processLimitNote(refused))))
        return false;
    // The run is over before anyone hears of it, so a slot may start the next one right away.
    exec.reset();
    stopInterruptLadder();
    const bool becameIdle =
        !ended && (state == State::Busy || state == State::Interrupting);
    if (becameIdle)
        state = State::Idle;
    if (!emitEvent(event))
        return false;
    if (becameIdle && state == State::Idle)
        return setState(State::Idle);
    return true;
}

void WorkerProcess::Private::armSyncTimer()
{
    if (syncTimer.isActive())
        return;
    qint64 deadline = queue.empty() ? -1 : queue.front().deadline;
    if (awaitedEventDeadline >= 0 && (deadline < 0 || awaitedEventDeadline < deadline))
        deadline = awaitedEventDeadline;
    if (deadline >= 0)
        syncTimer.start(int(std::max<qint64>(0, deadline - clock.elapsed())));
}

void WorkerProcess::Private::onSyncTimeout()
{
    // A mark did not arrive in time (a driver that forgot it, output redirected beyond reach):
    // let the event go rather than hold the run forever. Done says streams_synced: false.
    const qint64 now = clock.elapsed();
    while (!queue.empty() && queue.front().deadline <= now) {
        qCDebug(lcWorker) << "sync mark" << queue.front().bound.mark << "missing; releasing"
                          << queue.front().event.type;
        if (!releaseReady(true))
            return;
    }
    if (awaitedEventDeadline >= 0 && awaitedEventDeadline <= now) {
        qCDebug(lcWorker) << "no event for sync mark" << std::max(out[0].seq, out[1].seq)
                          << "; releasing the output after it";
        stopAwaitingEvents();
        if (!releaseReady(false))
            return;
    }
    armSyncTimer();
}

bool WorkerProcess::Private::handleFrame(QByteArrayView body, QString *error)
{
    if (std::optional<DoneFrame> done = DoneFrame::scan(body))
        return handleDone(std::move(*done));
    QJsonObject message;
    if (!FrameReader::parse(body, &message, error))
        return false;
    return handleMessage(message);
}

bool WorkerProcess::Private::handleDone(DoneFrame frame)
{
    // Read while the frame's body is at hand; the running execution's id string is shared
    // when it is the same text, which saves making one per run.
    const QLatin1StringView idText(frame.idText());
    const QString id = exec && exec->id == idText ? exec->id : QString(idText);
    if (!acceptsEventOf(QStringLiteral("done"), id))
        return true;
    noteDone(frame.hasMark(), frame.mark());
    Event done;
    done.kind = Event::Kind::Done;
    done.type = QStringLiteral("done");
    done.executionId = id;
    const bool hasMark = frame.hasMark();
    const quint64 mark = frame.mark();
    return enqueue(std::move(done), hasMark ? Barrier::Mark : Barrier::Position, mark,
                   std::move(frame));
}

bool WorkerProcess::Private::acceptsEventOf(const QString &type, const QString &id) const
{
    if (!exec || id != exec->id || exec->doneReceived) {
        qCDebug(lcWorker) << "ignoring" << type << "of execution" << id;
        return false;
    }
    return true;
}

void WorkerProcess::Private::noteDone(bool hasMark, quint64 mark)
{
    exec->doneReceived = true;
    exec->doneMarked = hasMark;
    exec->doneMark = hasMark ? mark : 0;
    for (int i = 0; i < 2; ++i)
        exec->doneReads[i] = out[i].reads;
    // The run has ended in the worker: no more signals for it, even while its output drains.
    stopInterruptLadder();
}

bool WorkerProcess::Private::handleMessage(QJsonObject &message)
{
    const QString type = message.value(kType).toString();
    const QString id = message.value(kId).toString();
    if (type == QLatin1String("started") || type == QLatin1String("display")
        || type == QLatin1String("result") || type == QLatin1String("error")
        || type == QLatin1String("done"))
        return handleExecutionEvent(type, id, std::move(message));
    if (type == QLatin1String("complete_reply") || type == QLatin1String("variables_reply")
        || type == QLatin1String("error_reply"))
        return handleReply(type, id, message);
    // Snapshots (protocol §9): a "snapshot" event belongs to the running execution; the replies
    // answer snapshot and restore requests.
    if (type == QLatin1String("snapshot"))
        return handleExecutionEvent(type, id, std::move(message));
    if (type == QLatin1String("snapshot_reply") || type == QLatin1String("restore_reply"))
        return handleReply(type, id, message);
    if (type == QLatin1String("hello"))
        return handleHello(message);
    if (type == QLatin1String("log")) {
        qCDebug(lcWorker).noquote() << spec.program
                                    << message.value(QStringLiteral("level")).toString()
                                    << message.value(QStringLiteral("message")).toString();
        return true;
    }
    if (type == QLatin1String("shutdown_reply"))
        return true; // its exit follows; that is what counts
    // Newer drivers may send more: pass events of the running execution on, drop the rest.
    if (exec && id == exec->id && !exec->doneReceived) {
        QJsonObject fields = std::move(message);
        fields.remove(kType);
        fields.remove(kId);
        const bool hasMark = fields.contains(kMark);
        const quint64 mark = quint64(std::max<qint64>(0, fields.take(kMark).toInteger()));
        return enqueue(Event::other(id, type, fields), hasMark ? Barrier::Mark : Barrier::Position,
                       mark);
    }
    qCDebug(lcWorker) << "ignoring message of type" << type;
    return true;
}

bool WorkerProcess::Private::handleHello(const QJsonObject &message)
{
    if (state != State::Starting)
        return true;
    const int protocol = message.value(QStringLiteral("protocol")).toInt();
    if (protocol != kWorkerProtocolVersion)
        return endWorker(End::ProtocolError,
                         QStringLiteral("the driver speaks worker protocol %1, the host speaks %2")
                             .arg(protocol)
                             .arg(kWorkerProtocolVersion));
    startTimer.stop();
    info.language = message.value(QStringLiteral("language")).toString();
    info.languageVersion = message.value(QStringLiteral("language_version")).toString();
    info.implementation = message.value(QStringLiteral("implementation")).toString();
    // In a sandbox the driver's pid is the one inside its PID namespace, which means nothing to
    // the host: the host's own (bwrap's, and the process group's) is given instead.
    info.pid = confinement.sandboxed() ? pid : message.value(QStringLiteral("pid")).toInteger(pid);
    info.capabilities = message.value(QStringLiteral("capabilities")).toObject();
    implicitStarted = info.capabilities.value(QStringLiteral("implicit_started")).toBool();
    if (!setState(State::Idle))
        return false;
    QPointer<WorkerProcess> guard(q);
    emit q->ready();
    return !guard.isNull();
}

bool WorkerProcess::Private::handleExecutionEvent(const QString &type, const QString &id,
                                                  QJsonObject fields)
{
    if (!acceptsEventOf(type, id))
        return true;
    fields.remove(kType);
    fields.remove(kId);
    const bool hasMark = fields.contains(kMark);
    const quint64 mark = quint64(std::max<qint64>(0, fields.take(kMark).toInteger()));

    if (type == QLatin1String("started")) {
        if (exec->started)
            return true;
        exec->started = true;
        if (!fields.contains(QStringLiteral("execution_count")))
            fields.insert(QStringLiteral("execution_count"), exec->count);
        if (!enqueue(Event::other(id, type, fields), Barrier::None))
            return false;
        if (exec && exec->id == id && exec->interruptPending)
            return beginInterrupt();
        return true;
    }
    if (type == QLatin1String("done")) {
        noteDone(hasMark, mark);
        // Not through Event::done(): release() sets state_lost and streams_synced, and the
        // driver's fields are kept as they are, so only a missing status needs filling in.
        if (!fields.value(QLatin1String("status")).isString())
            fields.insert(QStringLiteral("status"), QStringLiteral("ok"));
        Event done;
        done.kind = Event::Kind::Done;
        done.type = QStringLiteral("done");
        done.executionId = id;
        done.fields = std::move(fields);
        return enqueue(std::move(done), hasMark ? Barrier::Mark : Barrier::Position, mark);
    }
    return enqueue(Event::other(id, type, fields), hasMark ? Barrier::Mark : Barrier::Position,
                   mark);
}

bool WorkerProcess::Private::handleReply(const QString &type, const QString &id,
                                         const QJsonObject &message)
{
    ReplyCallback reply = replies.take(id);
    if (!reply) {
        qCDebug(lcWorker) << "ignoring" << type << "for unknown request" << id;
        return true;
    }
    QPointer<WorkerProcess> guard(q);
    if (type == QLatin1String("error_reply")) {
        reply(makeError(QStringLiteral("unsupported"),
                        QStringLiteral("the driver rejected the request: %1")
                            .arg(message.value(QStringLiteral("reason")).toString())));
    } else {
        QJsonObject fields = message;
        fields.remove(kType);
        fields.remove(kId);
        reply(fields);
    }
    return !guard.isNull();
}

bool WorkerProcess::Private::beginInterrupt()
{
    exec->interruptPending = false;
    sendFrame({{kType, QStringLiteral("interrupt")},
               {kId, nextId("interrupt")},
               {QStringLiteral("target"), exec->id}});
    signalInterrupt();
    sigintsSent = 1;
    if (spec.interruptRepeats > 1 && spec.interruptRepeatMs > 0)
        interruptRepeatTimer.start(spec.interruptRepeatMs);
    if (spec.interruptKillMs > 0)
        interruptKillTimer.start(spec.interruptKillMs);
    return setState(State::Interrupting);
}

void WorkerProcess::Private::signalInterrupt()
{
    ::killpg(pid, SIGINT);
    if (confinement.sandboxed())
        if (const pid_t inner = sandboxedProgramGroup(pid); inner > 0)
            ::killpg(inner, SIGINT);
}

void WorkerProcess::Private::stopInterruptLadder()
{
    interruptRepeatTimer.stop();
    interruptKillTimer.stop();
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
    stopInterruptLadder();

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
                     .arg(sigintsSent)
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
    writeNotifier.reset();
    if (eventFd >= 0)
        ::close(eventFd);
    if (requestFd >= 0)
        ::close(requestFd);
    eventFd = requestFd = -1;
    outgoing.clear();
    outgoingOffset = 0;
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
    d->sendFrameBody(executeFrameBody(request));
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
    d->sendFrame({{kType, QStringLiteral("complete")},
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
    d->sendFrame({{kType, QStringLiteral("variables")}, {kId, id}});
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
    d->sendFrame(fields);
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
    d->sendFrame({{kType, QStringLiteral("shutdown")}, {kId, d->nextId("shutdown")}});
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
