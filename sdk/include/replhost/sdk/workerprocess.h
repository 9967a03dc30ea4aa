// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/session.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace replhost::sdk {

// How to start a worker that speaks the worker protocol (docs/worker-protocol.md).
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
// carrying a sync mark are held back until the mark has been read on both fd 1 and fd 2, so no
// output of a run ever arrives after its Done event. Interrupts follow the ladder of protocol §7.
//
// Threading and ownership as for Session. Deleting a WorkerProcess kills the worker's process
// group and reaps it.
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

private:
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
