// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextmanager.h"
#include "envlayers.h"
#include "replay.h"
#include "storage/records.h"

#include <replhost/sdk/session.h>

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QQueue>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

namespace replhost::core {

struct PluginEntry;

// One context: its row, its interpreter (a Session, started on demand) and its execution queue.
// Internal to the engine; the faces see ContextInfo snapshots and Execution objects.
//
// Invariants: at most one execution is running (m_running) and it is the one the session is
// executing; queued executions have not been sent to the session; m_appliedEnv is the
// workspace+context environment the interpreter has now (spawn environment plus every context
// delta sent since), so the next delta is diff(m_appliedEnv, desired).
//
// Durability: a context without a worker is dormant. Its state is defined by its replay base
// (storage::ContextRecord): when m_restorePending, the next interpreter replays the history
// after the base before it takes anything else (m_replay while it does); the report goes to the
// next run as a "restored" event. State that is lost for good (a run killed the interpreter, a
// "fresh" context went dormant) moves the base, and the next run says so with "state_reset".
// A restart moves the base silently.
class Context : public QObject {
    Q_OBJECT
public:
    Context(ContextManager *manager, storage::ContextRecord record, QString workspaceName,
            bool dormant);
    ~Context() override;

    const storage::ContextRecord &record() const { return m_record; }
    QString workspaceName() const { return m_workspaceName; }
    ContextInfo info() const;

    // Starts the interpreter now instead of on first run.
    void warmUp();
    // Whether a worker runs (or starts, or is restoring) for this context.
    bool isResident() const { return bool(m_session); }
    // Resident and doing nothing: no run, nothing queued, no restore, no question waiting.
    bool isEvictable() const;
    // Its worker is starting with nothing to do yet: evictable once ready.
    bool isWarmingUp() const;
    // When the context last started or finished something (monotonicNow() clock), and the same
    // as a rank among all contexts (no ties, unlike milliseconds): larger is more recent.
    qint64 lastActive() const { return m_lastActive; }
    quint64 activityOrder() const { return m_activityOrder; }
    static qint64 monotonicNow();
    // Stops the worker cleanly and makes the context dormant; its next use restores it (or, with
    // the "fresh" policy, starts afresh). Only when isEvictable().
    void evict();
    // What bounds one execution; fixed when it is queued, so a later change of the workspace's
    // settings reaches the executions queued after it.
    struct RunLimits {
        int timeoutMs = 0;             // 0: none
        bool timeoutIsWorkspaceLimit = false;  // the workspace's limits.timeout_ms, not the request's
        qint64 outputBytes = 0;        // output kept; 0: no cap
    };
    void enqueue(const ExecutionPtr &execution, const QMap<QString, QString> &execEnv,
                 const QStringList &execUnset, const RunLimits &limits);
    void interruptExecution(const QString &executionId);
    // Hands the answer to the running execution's interpreter and records it (see
    // ContextManager::answerInput); false when the interpreter does not wait for one.
    bool answerInput(const ExecutionPtr &execution, const QString &value, bool eof);
    void interruptAll();
    // The first step of an exit: what is queued ends "aborted" with `reason`, and the running
    // execution is interrupted, so that it ends as usual (its output read to the end, its done
    // recorded). stop() ends whatever is still running afterwards.
    void beginStop(const QString &reason);
    bool hasRunningExecution() const { return bool(m_running.execution); }
    // Ends everything queued or running with `status`, stops the interpreter.
    void stop(const QString &reason);
    void restart();
    void rename(const QString &name);  // the stored row is the manager's to change
    void complete(const QString &code, int cursor, ContextManager::Reply reply);
    void variables(ContextManager::Reply reply);
    const BackgroundOutput &backgroundOutput() const { return m_background; }
    // How the context last came back from dormancy (RestoreReport::toJson); empty until then.
    QJsonObject lastRestore() const { return m_lastRestore; }
    // For an exit: asks an idle interpreter whose driver takes snapshots on request for one and
    // stores it; `done` runs once it is stored or refused (also when the session goes first).
    // False when there is nothing to ask, and `done` is not called.
    bool snapshotBeforeStop(std::function<void()> done);
    // The workspace or context env layer changed: recompute before the next run.
    void invalidateEnvironment();
    // base → workspace → context, as the next run must see it.
    Environment desiredEnvironment();

signals:
    void changed();

private:
    struct Pending {
        ExecutionPtr execution;
        sdk::EnvChange execEnv;
        RunLimits limits;
    };

    Result<void> ensureSession();
    void onSessionReady();
    void pump();
    void onSessionEvent(const sdk::Event &event);
    void onSessionFailed(const QString &message);
    void onSessionTerminated(bool expected, const QString &reason);
    void finish(const ExecutionPtr &execution, const sdk::Event &done);
    // An event of the running execution (not its done): recorded, then added to the execution.
    void deliver(const ExecutionPtr &execution, const sdk::Event &event);
    // Queues `event` for the history.
    void record(const ExecutionPtr &execution, const sdk::Event &event);
    // Ends `execution` with `done`: records it and its end, and hands the done to the commit
    // barrier, which adds it to the execution once the writer has committed them.
    void conclude(const ExecutionPtr &execution, const sdk::Event &done, qint64 outputBytes,
                  bool truncated);
    void abort(const Pending &pending, const QString &ename, const QString &evalue);
    void dropSession();
    // Disconnects the session and deletes it later; nothing else.
    void detachSession();
    void setState(const QString &state);
    sdk::EnvChange takeContextDelta();
    // Fills in what every request to the interpreter carries: the context env delta, and for
    // the first request to a pooled worker, the cwd and the context id it was not spawned with.
    void prepareRequest(sdk::ExecuteRequest &request);

    // Durability (see the class comment).
    bool hasStateSinceBase() const { return m_record.executionCount > m_record.replayBaseCount; }
    // The interpreter went away but the state is not declared lost: replay it on next use.
    void expectRestore();
    // The interpreter's state is gone for good: say so on the next run, move the replay base.
    void startAfresh();
    void moveReplayBase();
    void beginRestore();
    // Starts replaying the executions after `afterCount`; `part` has what came before (the
    // snapshot the replay goes on from, or why none was used).
    void beginReplay(int afterCount, const RestoreReport &part);
    void continueRestore();
    // Hands an answer to the question of the request `requestId` (a run's or a replayed one's)
    // to the session; false when it waits for none.
    bool sendAnswer(const QString &requestId, const QString &value, bool eof);
    void finishRestore();
    // The end of every restore, from a snapshot or a replay.
    void endRestore(RestoreReport report, const QString &cwd, bool lostInterpreter);
    // The end of a restore that replays nothing (`report` says why): the fresh interpreter is
    // the state from now on, and the base moves to here.
    void restoreAfresh(RestoreReport report);
    // Snapshots ("Snapshots" in docs/architecture.md).
    QString snapshotCapability() const;
    void onSnapshotEvent(const sdk::Event &event);
    bool onSnapshotRestoreEvent(const sdk::Event &event);
    void snapshotRestored(const QJsonObject &reply);
    void snapshotRestoreFailed(const QString &why);
    // The Bash default context is never replayed: without a snapshot it starts afresh.
    void restoreWithoutSnapshot(const QString &why);
    // Nobody waits for the restore any more: stop it, kill its interpreter, stay dormant.
    void stopUnwantedRestore();
    void touch();
    // Completion and variables asked before the interpreter was ready wait for it.
    void answerWhenReady();
    void failWhenReady(const QString &message);

    ContextManager *m_manager;
    storage::ContextRecord m_record;
    QString m_workspaceName;
    QString m_state;
    QString m_languageVersion;
    std::unique_ptr<sdk::Session> m_session;
    bool m_sessionReady = false;
    bool m_hadWorker = false;       // a worker was started for this context before (metrics)
    bool m_noticeStateLoss = false; // the next run must say the earlier state is gone
    bool m_restorePending = false;  // the next interpreter replays the history first
    std::optional<Replay> m_replay; // the restore in progress
    // A restore from a snapshot in progress (before any replay on top of it).
    struct SnapshotRestore {
        QString requestId;          // the execute that runs a "bash-source" snapshot
        storage::SnapshotRecord snapshot;
        QString ename, evalue;      // the first error it reported
    };
    std::optional<SnapshotRestore> m_snapshotRestore;
    RestoreReport m_restorePart;    // what came before the replay of the restore in progress
    QJsonObject m_lastRestore;
    QString m_stateResetReason;     // for the next "state_reset", when it is not the usual one
    // The interpreter evicted last is still taking its snapshot: a restore waits for it.
    QPointer<sdk::Session> m_snapshotting;
    bool m_restoreWaitsForSnapshot = false;
    bool isRestoring() const { return m_replay || m_snapshotRestore || m_restoreWaitsForSnapshot; }
    std::optional<RestoreReport> m_restoreReport;  // for the next run to tell
    QElapsedTimer m_restoreClock;
    qint64 m_lastActive = 0;
    quint64 m_activityOrder = 0;
    Environment m_appliedEnv;
    Environment m_desiredEnv;       // cache of desiredEnvironment()
    bool m_desiredEnvValid = false;
    // The interpreter has every layer change: the next run needs no context delta (saves a
    // diff over the whole environment on every run).
    bool m_appliedIsDesired = false;
    // Non-empty while the worker came from the warm pool and has not had a request yet: the
    // directory a cold start would have given it.
    QString m_bindCwd;
    QQueue<Pending> m_queue;
    struct Query {
        std::function<void()> ask;      // asks the (now ready) interpreter
        ContextManager::Reply reply;    // answers with an error if it never becomes ready
    };
    QList<Query> m_whenReady;
    Pending m_running;
    QString m_lastExecutionId;  // the last execution sent to the interpreter
    BackgroundOutput m_background;
    qint64 m_runningOutput = 0;
    bool m_runningTruncated = false;
    bool m_timedOut = false;
    QTimer m_timeout;
};

} // namespace replhost::core
