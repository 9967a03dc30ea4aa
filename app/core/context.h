// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextmanager.h"
#include "envlayers.h"
#include "storage/records.h"

#include <replhost/sdk/session.h>

#include <QObject>
#include <QQueue>
#include <QTimer>

#include <functional>
#include <memory>

namespace replhost::core {

struct PluginEntry;

// One context: its row, its interpreter (a Session, started on demand) and its execution queue.
// Internal to the engine; the faces see ContextInfo snapshots and Execution objects.
//
// Invariants: at most one execution is running (m_running) and it is the one the session is
// executing; queued executions have not been sent to the session; m_appliedEnv is the
// workspace+context environment the interpreter has now (spawn environment plus every context
// delta sent since), so the next delta is diff(m_appliedEnv, desired).
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
    void enqueue(const ExecutionPtr &execution, const QMap<QString, QString> &execEnv,
                 const QStringList &execUnset, int timeoutMs);
    void interruptExecution(const QString &executionId);
    void interruptAll();
    // Ends everything queued or running with `status`, stops the interpreter.
    void stop(const QString &reason);
    void restart();
    void rename(const QString &name);  // the stored row is the manager's to change
    void complete(const QString &code, int cursor, ContextManager::Reply reply);
    void variables(ContextManager::Reply reply);
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
        int timeoutMs = 0;
    };

    Result<void> ensureSession();
    void pump();
    void onSessionEvent(const sdk::Event &event);
    void onSessionFailed(const QString &message);
    void onSessionTerminated(bool expected, const QString &reason);
    void finish(const ExecutionPtr &execution, const sdk::Event &done);
    void deliver(const ExecutionPtr &execution, const sdk::Event &event);
    void abort(const Pending &pending, const QString &ename, const QString &evalue);
    void dropSession();
    void setState(const QString &state);
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
    bool m_hadState = false;        // executions ran in an interpreter that is gone
    bool m_noticeStateLoss = false; // the next run must say the earlier state is gone
    Environment m_appliedEnv;
    Environment m_desiredEnv;       // cache of desiredEnvironment()
    bool m_desiredEnvValid = false;
    // The interpreter has every layer change: the next run needs no context delta (saves a
    // diff over the whole environment on every run).
    bool m_appliedIsDesired = false;
    QQueue<Pending> m_queue;
    struct Query {
        std::function<void()> ask;      // asks the (now ready) interpreter
        ContextManager::Reply reply;    // answers with an error if it never becomes ready
    };
    QList<Query> m_whenReady;
    Pending m_running;
    qint64 m_runningOutput = 0;
    bool m_runningTruncated = false;
    bool m_timedOut = false;
    QTimer m_timeout;
};

} // namespace replhost::core
