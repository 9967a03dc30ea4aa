// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/session.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace replhost::sdk {

// How to start a worker that speaks the worker protocol (docs/worker-protocol.md).
// startTimeoutMs, interruptRepeatMs and interruptKillMs of 0 or less disable that step.
struct WorkerSpec {
    QString program;             // absolute path of the executable
    QStringList arguments;
    QJsonObject initOptions;     // sent as "options" in the init request
    int startTimeoutMs = 30000;  // no hello by then: start fails
    int interruptRepeatMs = 1000;  // SIGINT again after this long without done
    int interruptRepeats = 3;      // SIGINTs in all before waiting for the kill
    int interruptKillMs = 10000;   // SIGKILL the group this long after the first SIGINT
    int syncGraceMs = 2000;        // release an event whose sync mark never arrives
    int shutdownGraceMs = 2000;    // after the shutdown request, before SIGTERM, then SIGKILL
};

// The protocol implemented once, for every process-based handler: a Session whose interpreter is
// a child process started from a WorkerSpec.
//
// The process runs in its own process group with default signal dispositions, an empty signal
// mask, fds ≥ 5 closed, fd 0 on /dev/null, fd 1/2 on pipes read as raw streams (so output of
// the worker's own children is captured), fd 3/4 carrying length-prefixed JSON frames. Events
// carrying a sync mark are held back until the mark has been read on both fd 1 and fd 2; events
// without one (a done the driver sent after finding both pipes empty) come after all output read
// before them. So no output of a run ever arrives after its Done event. Interrupts follow the
// ladder of protocol §7.
//
// Under a confinement (SessionOptions::settings["confinement"], see session.h) the worker is
// started through the replhost-confine launcher, which applies the limits and joins the cgroups
// before it execs the worker in place (same pid, same process group). A run during which the
// worker's cgroup refused to create processes ends with a stderr Stream event, before its Done,
// naming the process limit. A confinement that cannot be applied (bad settings, launcher
// missing or failing) is a start failure with the launcher's message.
//
// Stream events carry the id of the execution that wrote them from its "started" until its
// final mark. For a driver that declares "implicit_started" (protocol §4), the run counts as
// started once execute() has written the request, and the Started event is made here, emitted
// from the event loop (never inside execute()), before any other event of the run and at the
// latest 1 ms after execute(). Anything else (output of background jobs, of the driver before its
// hello) has an empty execution id. Sync marks and the "mark" field never reach the host.
//
// Failures are reported in the run they hit, then through the session's signals:
//   - the worker exits during a run: Error "WorkerDied" (evalue "exited with code N" or "killed
//     by signal N (SIGNAME)", traceback: its last 50 stderr lines), then Done status "error"
//     with state_lost; then terminated(false, ...);
//   - the worker is ended by a limit of its confinement (session.h): Error "LimitExceeded"
//     whose evalue names the limit and its value ("CPU time limit of 2 s reached: the
//     interpreter was killed by signal 24 (SIGXCPU)") and whose fields "limit" and
//     "limit_value" carry the limit's key and value; otherwise as for WorkerDied;
//   - an interrupt that does not stop the run (protocol §7): Error "WorkerKilled", Done status
//     "interrupted" with state_lost; then terminated(false, ...);
//   - a malformed frame: the worker is killed; Error "ProtocolError", Done status "error" with
//     state_lost; then terminated(false, ...);
//   - anything before hello (exit, malformed frame, startTimeoutMs): failed() with the worker's
//     stderr output, and no terminated();
//   - shutdown(): terminated(true, ...) once the worker is gone.
// The session is Dead afterwards; it never restarts itself.
//
// Threading and ownership as for Session. Everything runs on the owner's thread (socket
// notifiers and timers, no threads of its own). Deleting a WorkerProcess kills the worker's
// process group and reaps it before returning, and emits nothing; a slot may delete the session
// from any of its signals. The first start() in a process sets SIGPIPE to ignored if it was at
// its default (as QProcess does), so a write to a worker that just died cannot end the host.
class REPLHOST_SDK_EXPORT WorkerProcess : public Session {
    Q_OBJECT
public:
    WorkerProcess(WorkerSpec spec, SessionOptions options, QObject *parent = nullptr);
    ~WorkerProcess() override;

    State state() const override;
    SessionInfo info() const override;
    void start() override;
    void execute(const ExecuteRequest &request) override;
    void interrupt(const QString &executionId) override;
    void complete(const QString &code, int cursor, ReplyCallback reply) override;
    void variables(ReplyCallback reply) override;
    void shutdown() override;

    // Process id of the worker (also its process group id); 0 when not running.
    qint64 pid() const;

    // The environment a worker started for `options` runs with: options.environment with what
    // every worker gets (docs/worker-protocol.md §1: LANG=C.UTF-8 unless one is chosen,
    // TERM=dumb, PAGER and GIT_PAGER cat, GIT_TERMINAL_PROMPT=0, MPLBACKEND=Agg,
    // REPLHOST_CONTEXT_ID), and, in a sandbox (settings' confinement), what the sandbox changes
    // (HOME is its root, TMPDIR /tmp, no XDG_RUNTIME_DIR). The one rule the worker is started
    // with, for a host that shows a context's effective environment. Pure; any thread.
    static QMap<QString, QString> workerEnvironment(const SessionOptions &options);

    // Reads what the worker has written so far and delivers it at once (event() for each event
    // and piece of output; output still waiting for a sync mark is released as at the worker's
    // end). For an owner about to delete a running session, so that what the run wrote in its
    // last instant is not lost with it; the session stays usable. Emits synchronously, and a slot
    // may delete the session meanwhile. Invokable by name, so a host can call it on any session
    // (QMetaObject::invokeMethod returns false for sessions that lack it).
    Q_INVOKABLE void takeInWrittenOutput();

    // Answers the input_request of the running execution `executionId` (SDK 1.3, protocol
    // revision 2): `value` is the line read (without its line end), or with `eof` the end of
    // input. False, and nothing sent, when that execution is not waiting for input (it never
    // asked, it was answered already, it was interrupted or it has ended). Invokable by name,
    // like takeInWrittenOutput(), so a host can ask any session: a session that lacks it never
    // asks for input.
    Q_INVOKABLE bool answerInput(const QString &executionId, const QString &value, bool eof);

    // Snapshots (docs/worker-protocol.md §9), for drivers whose hello declares
    // "snapshot": "on_request"; otherwise the reply is Error "unsupported". Only while idle, with
    // the reply rules of complete().
    // requestSnapshot replies with the driver's snapshot_reply fields: {format, data, lost} or
    // {error, unserialisable}. restoreSnapshot sends {format, data} (what a snapshot_reply gave)
    // and replies with the restore_reply fields: {lost} or {error}.
    void requestSnapshot(ReplyCallback reply);
    void restoreSnapshot(const QJsonObject &snapshot, ReplyCallback reply);

private:
    void sendWhenIdle(const QString &type, QJsonObject fields, ReplyCallback reply);

    class Private;
    std::unique_ptr<Private> d;
};

// A session that cannot start: start() fails with `reason`. Lets createSession() keep its
// never-null contract when the runtime is missing.
class REPLHOST_SDK_EXPORT FailedSession : public Session {
    Q_OBJECT
public:
    explicit FailedSession(QString reason, QObject *parent = nullptr);

    State state() const override;
    SessionInfo info() const override;
    void start() override;
    void execute(const ExecuteRequest &request) override;
    void interrupt(const QString &executionId) override;
    void shutdown() override;

private:
    QString m_reason;
    State m_state = State::NotStarted;
};

} // namespace replhost::sdk
