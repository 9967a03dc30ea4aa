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
// would have seen it anyway, or sooner, when a Batch open around the hold() closes; one the log
// could not take is released once the writer has committed it (its listener runs on the
// writer's thread and posts the ids to this object's thread). Then the done is added to the
// Execution and `released` is called. The engine thread never waits for SQLite.
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

    // Open around work that ends runs and has bookkeeping of its own after hold() (a context
    // concluding a run from its worker's done: its state, the next queued run): the durable ends
    // held meanwhile are released when the outermost Batch closes, at the end of that work,
    // instead of at the next loop turn. That turn costs a posted event and a wake-up of the event
    // loop (an eventfd write, a poll and a read) in every round trip. Durability is the same:
    // only ends the writer has made durable are released, either way. On this object's thread.
    class Batch {
    public:
        explicit Batch(CommitBarrier *barrier);
        ~Batch();
        Batch(const Batch &) = delete;
        Batch &operator=(const Batch &) = delete;

    private:
        CommitBarrier *m_barrier;
    };

    // `execution` ends with `done` (taking `durationMs` as its duration) once the writer has
    // made its end durable: at the next loop turn when `durable` (finishExecution's answer), else
    // when the writer announces its commit. Call after queueing the end with the writer.
    void hold(const ExecutionPtr &execution, const sdk::Event &done, qint64 durationMs,
              bool durable);
    // After HistoryWriter::flush(): releases now, without the event loop, what the writer has
    // made durable (at exit, when the loop may not turn again), open Batches or not.
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
    int m_batches = 0;      // Batches open; while any is, m_durable waits for the last to close
    bool m_turnQueued = false;  // a releaseDurable() is posted for the next loop turn
};

} // namespace replhost::core
