// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/event.h"
#include "replhost/sdk/result.h"
#include "replhost/sdk/sdk_export.h"

#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

namespace replhost::sdk {

// One layer's change of environment: keys to set and keys to remove.
struct EnvChange {
    QMap<QString, QString> set;
    QStringList unset;

    bool isEmpty() const { return set.isEmpty() && unset.isEmpty(); }
};

// The environment change carried by one execution (docs/worker-protocol.md §6).
// `context` persists in the interpreter; `exec` applies to this execution only and is restored
// by the driver before the execution ends.
struct EnvDelta {
    EnvChange context;
    EnvChange exec;
};

struct ExecuteRequest {
    QString id;         // unique per session; every event of the run carries it
    QString code;
    int executionCount = 0; // assigned by the host, survives worker restarts
    EnvDelta env;
    QString cwd;        // absolute directory to run in; empty = stay where the last run left off
    // Someone can answer the run's questions (SDK 1.3): the interpreter may then ask for input
    // with an InputRequest event and wait for the answer (WorkerProcess::answerInput). When
    // false, reading input finds the end of input at once, as it always did.
    bool allowInput = false;
};

// What the host knows of a started interpreter (from the worker's hello).
struct SessionInfo {
    QString language;
    QString languageVersion;
    QString implementation;
    qint64 pid = 0;
    QJsonObject capabilities;
};

// Everything a handler needs to create a session for a context.
struct SessionOptions {
    QString contextId;
    QString workingDirectory;            // absolute; the context's initial cwd
    QMap<QString, QString> environment;  // full environment of the worker (base + env layers)
    // Per-language settings from the host's configuration, plus the host's "confinement" for
    // this worker. Handlers read their own keys and pass the whole object on unchanged to
    // WorkerProcess, which applies the confinement; a handler never sets or edits it.
    //
    // "pooled": true when the host starts the worker ahead of demand for its warm pool: start-up
    // time is then spent in the background, so a handler may use more of it to make the first
    // run fast. Absent for a worker started for a context.
    //
    // "confinement" (absent or {} = run the worker as is):
    //   { "launcher": "/abs/path/replhost-confine",   // required when anything below is present
    //     "limits": { "memory_bytes": N,     // address space (RLIMIT_AS) of each process
    //                 "cpu_seconds": N,      // CPU time of each process over its life
    //                 "processes": N,        // RLIMIT_NPROC: per user, and not for root
    //                 "file_size_bytes": N }, // largest file a process may write
    //     "cgroups": [ "/sys/fs/cgroup/.../cgroup.procs", ... ], // made by the host, joined
    //     "sandbox": { ... } }                // bubblewrap isolation (docs/plugin-sdk.md)
    // Limits of 0 or absent are none. The launcher applies them before it execs the worker, so
    // they hold for the worker and everything it starts. A limit that ends the worker ends its
    // run with an Error "LimitExceeded" naming the limit (see WorkerProcess). Bad values make
    // start() fail with a message naming the field.
    QJsonObject settings;
};

// One live interpreter for one context.
//
// Threading: a Session is a QObject living in the thread that created it (the host's engine
// thread); every method must be called from that thread and every signal is emitted there.
// Ownership: the host owns sessions (createSession() hands ownership to the caller); deleting a
// session ends its interpreter and everything it started.
//
// Life cycle: start() → ready() (or failed()) → any number of execute() → shutdown() or delete.
// One execute() at a time: the host queues; calling execute() while busy is a programming error
// and is answered with an error event and a done event of status "aborted".
class REPLHOST_SDK_EXPORT Session : public QObject {
    Q_OBJECT
public:
    enum class State { NotStarted, Starting, Idle, Busy, Interrupting, Dead };
    Q_ENUM(State)

    explicit Session(QObject *parent = nullptr);
    ~Session() override;

    virtual State state() const = 0;
    virtual SessionInfo info() const = 0;

    // Starts the interpreter asynchronously. Emits ready() once it accepts work, or failed()
    // with a message for people (the driver's own words when it printed any).
    virtual void start() = 0;

    // Runs code. Emits event() for each event of the run, ending with exactly one Done event.
    // If the interpreter dies during the run, the Done event has "state_lost": true and the
    // session is Dead afterwards (the host creates a new one).
    virtual void execute(const ExecuteRequest &request) = 0;

    // Interrupts the execution with this id if it is running; ignored otherwise. The run ends
    // with a Done event of status "interrupted"; "state_lost": true when the interpreter had to
    // be killed to stop it.
    virtual void interrupt(const QString &executionId) = 0;

    using ReplyCallback = std::function<void(Result<QJsonObject>)>;

    // Completion at `cursor` (code points). Replies {matches, cursor_start, cursor_end}.
    // Called only while idle; the callback runs in the session's thread, exactly once, and never
    // inside this call. It still runs (with an error) when the session dies or is deleted first.
    // The default implementation replies Error{"unsupported", ...}.
    virtual void complete(const QString &code, int cursor, ReplyCallback reply);

    // The interpreter's top-level variables. Replies {variables: [{name, type, repr}]}.
    // Same reply rules as complete().
    virtual void variables(ReplyCallback reply);

    // Asks the interpreter to exit; escalates to SIGTERM/SIGKILL of its process group when it
    // does not comply within a grace period. Emits terminated() when it is gone.
    virtual void shutdown() = 0;

signals:
    void ready();
    void failed(const QString &message);
    void event(const replhost::sdk::Event &event);
    void stateChanged(replhost::sdk::Session::State state);
    // The interpreter ended. `expected` is true after shutdown(), false when it died on its own.
    void terminated(bool expected, const QString &reason);
};

} // namespace replhost::sdk
