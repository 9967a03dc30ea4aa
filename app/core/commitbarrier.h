// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "execution.h"

#include <replhost/sdk/event.h>

#include <QHash>
#include <QObject>
#include <QStringList>

#include <functional>
#include <memory>

namespace replhost::storage { class HistoryWriter; }

namespace replhost::core {

using ExecutionPtr = std::shared_ptr<Execution>;

// Holds back an execution's completion until its history is durable: "done" is what every
// client takes as "it happened" (the end of an SSE stream, the ?wait=true document, E2B's
// end_of_execution, OpenSandbox's execution_complete, the workbench's status, the CLI's exit),
// so it reaches the Execution only once the writer has made the execution's row, its events and
// its context's usage survive a crash (in its pending log, or committed). Output events are not
// held: a stream shows them as they come.
//
// The context queues the execution's end with the writer (HistoryWriter::finishExecution), which
// logs it before it returns in the common case, and hands the done to hold() with what the writer
// said. A durable end is released at the next turn of this thread's event loop, as a client
// would have seen it anyway; one the log could not take is released once the writer has
// committed it (its listener runs on the writer's thread and posts the ids to this object's
// thread). Then the done is added to the Execution and `released` is called. The engine thread
// never waits for SQLite.
//
// Threading: lives in the engine thread; hold() and releaseCommitted() are called there. The
// writer must outlive this object (the destructor detaches its listener).
class CommitBarrier : public QObject {
    Q_OBJECT
public:
    // `released` runs on this object's thread for every execution once its done was added.
    CommitBarrier(storage::HistoryWriter *writer,
                  std::function<void(const ExecutionPtr &)> released, QObject *parent = nullptr);
    ~CommitBarrier() override;

    // `execution` ends with `done` (taking `durationMs` as its duration) once the writer has
    // made its end durable: at the next loop turn when `durable` (finishExecution's answer), else
    // when the writer announces its commit. Call after queueing the end with the writer.
    void hold(const ExecutionPtr &execution, const sdk::Event &done, qint64 durationMs,
              bool durable);
    // After HistoryWriter::flush(): releases now, without the event loop, what the writer has
    // made durable (at exit, when the loop may not turn again).
    void releaseCommitted();
    // How many executions wait for durability, and whether `executionId` does.
    int held() const { return int(m_held.size()); }
    bool isHolding(const QString &executionId) const { return m_held.contains(executionId); }

private:
    void release(const QStringList &executionIds);
    void releaseDurable();

    struct Held {
        ExecutionPtr execution;
        sdk::Event done;
        qint64 durationMs = -1;
    };
    storage::HistoryWriter *m_writer;
    std::function<void(const ExecutionPtr &)> m_released;
    QHash<QString, Held> m_held;
    QStringList m_durable;  // held ends that are durable, released at the next loop turn
};

} // namespace replhost::core
