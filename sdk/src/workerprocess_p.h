// SPDX-License-Identifier: Apache-2.0
#pragma once

// The private half of WorkerProcess, shared by the files that implement it, one idea each:
//   workerprocess.cpp    the session's lifecycle: start, state, the public calls, shutdown
//   frameintake.cpp      fd 4: reading event frames and taking them in
//   streamsequencer.cpp  fd 1/2: reading output, and the sync barrier that orders it with events
//   workerexit.cpp       the worker's end: reaping, reporting, what it wrote last
// with the request pipe (RequestChannel) and the interrupt ladder (InterruptLadder) as classes
// of their own.

#include "replhost/sdk/workerprocess.h"

#include "confinement.h"
#include "doneframe.h"
#include "framecheck.h"
#include "framing.h"
#include "interruptladder.h"
#include "limitmonitor.h"
#include "loopturn.h"
#include "markscanner.h"
#include "requestchannel.h"

#include <QElapsedTimer>
#include <QHash>
#include <QLoggingCategory>
#include <QPointer>
#include <QSocketNotifier>
#include <QStringDecoder>
#include <QTimer>

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>

#include <sys/types.h>

namespace replhost::sdk {

Q_DECLARE_LOGGING_CATEGORY(lcWorker)

namespace workerprocess {

inline constexpr qsizetype kReadChunk = 64 * 1024;
// Reads per wake-up before other event sources get their turn (4 MiB); the notifiers are
// level-triggered, so whatever is left is read on the next turn of the event loop.
inline constexpr int kMaxReadsPerWakeup = 64;
inline constexpr int kStderrTailLines = 50;
inline constexpr qsizetype kStderrTailChars = 32 * 1024;
// Output held back behind an event whose mark is missing on the other stream. Past this the event
// is released early (as when its grace period ends), so memory stays bounded under a flood.
inline constexpr qsizetype kMaxHeldChars = 8 * 1024 * 1024;
inline constexpr int kFallbackExitPollMs = 50;

inline const QString kType = QStringLiteral("type");
inline const QString kId = QStringLiteral("id");
inline const QString kMark = QStringLiteral("mark");

enum class End { Exited, LimitReached, ProtocolError, InterruptKilled, StartTimeout };

// Answers a call that cannot be served with `error`, from the event loop.
void replyLater(Session::ReplyCallback reply, Error error);

} // namespace workerprocess

// Hidden: not part of the SDK's ABI, although the class it belongs to is.
class Q_DECL_HIDDEN WorkerProcess::Private final : public LoopTurn::Client {
public:
    using End = workerprocess::End;

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
    QString nextId(const char *kind)
    {
        return QStringLiteral("rh-%1-%2").arg(QLatin1String(kind)).arg(++requestCount);
    }

    [[nodiscard]] bool readEvents();
    [[nodiscard]] bool readStream(int index);
    // One frame from fd 4 (frameintake.cpp). Worker output is untrusted input (code in the
    // context can write frames of its own on fd 4), so every frame is checked against protocol
    // §4 and against the run before anything is done with it. A `done` that DoneFrame can take
    // apart goes to handleDone() without being parsed into an object first; the rest is parsed,
    // checked by checkWorkerFrame() and goes to handleMessage().
    //
    // These share FrameReader's handler contract: true when the frame was taken (or dropped as
    // harmless); false with `*error` set when it breaks the protocol (the reader then fails for
    // good and readEvents() ends the worker, with `this` alive); false with `*error` empty when
    // a slot deleted the WorkerProcess.
    [[nodiscard]] bool handleFrame(QByteArrayView body, QString *error);
    // May move from `message`: an event's fields are the frame's object, taken without a copy.
    [[nodiscard]] bool handleMessage(QJsonObject &message, WorkerMessage kind, QString *error);
    [[nodiscard]] bool handleDone(DoneFrame frame, QString *error);
    // Whether an event of execution `id` is the running execution's and fits where it is in
    // that run (after its `started`, before its `done`). A `display` or `error` of no execution
    // (a background thread's) or of the execution that has just ended (a thread that raced its
    // end) is dropped: false with `*error` empty. Anything else that does not fit is forged or
    // broken: false with `*error` saying why.
    bool fitsRun(WorkerMessage kind, const QString &id, QString *error) const;
    // Records that the running execution's `done` has arrived.
    void noteDone(bool hasMark, quint64 mark);
    [[nodiscard]] bool handleHello(const QJsonObject &message, QString *error);
    [[nodiscard]] bool handleExecutionEvent(WorkerMessage kind, const QString &type,
                                            const QString &id, QJsonObject fields, QString *error);
    [[nodiscard]] bool handleReply(WorkerMessage kind, const QString &id,
                                   const QJsonObject &message, QString *error);

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
    // A sandbox that sees its workspace elsewhere (sandbox.h, hasOwnView): the cwd of a request
    // goes in as the sandbox's path and the cwd of a `done` comes out as the host's, so the host
    // keeps host paths and the code sees its own.
    std::optional<SandboxPolicy> view;
    LimitMonitor limits;      // the worker's cgroup counters, opened once it is spawned
    QString limitName;        // End::LimitReached: the limit's key and value
    qint64 limitValue = 0;

    State state = State::NotStarted;
    State reportedState = State::NotStarted;
    SessionInfo info;

    pid_t pid = 0;        // the worker, also its process group; valid until reaped
    bool reaped = false;
    int pidfd = -1;
    int eventFd = -1;
    RequestChannel requests;  // fd 3
    std::unique_ptr<QSocketNotifier> exitNotifier;
    std::unique_ptr<QSocketNotifier> eventNotifier;
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
    // The plugin's requests have ExecuteRequest::allowInput: its settings' "sdk_version" is 1.3
    // or later, or absent (a host that passes no version passes requests of this SDK).
    bool requestsHaveAllowInput = true;
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

    QByteArray nonce;
    struct Execution {
        QString id;
        int count = 0;
        bool started = false;
        bool startedOwed = false; // implicit_started: started, but the event not yet emitted
        bool interruptPending = false;
        bool inputAllowed = false;  // the request's allowInput (protocol revision 2)
        bool inputPending = false;  // an input_request waits for its input_reply
        bool doneReceived = false;
        bool doneMarked = false;
        quint64 doneMark = 0;
        quint64 doneReads[2] = {0, 0}; // an unmarked done: the streams' read counts when it came
    };
    std::optional<Execution> exec;
    QString endedId;  // the last execution whose `done` arrived

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
    InterruptLadder interrupts;
    QTimer shutdownTimer;
    int shutdownStage = 0;
    bool shutdownRequested = false;
    bool ended = false;

    QHash<QString, ReplyCallback> replies;
    quint64 requestCount = 0;
    QString stderrTail;
};

} // namespace replhost::sdk
