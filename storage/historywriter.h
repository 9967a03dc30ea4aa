// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "records.h"

#include <replhost/sdk/result.h>

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace replhost::storage {

// Keeps SQLite off the engine's thread: execution starts, events and ends are queued here and
// written by one background thread with its own connection, in batches (group commit).
//
// Durability: an execution's end (finishExecution) is what clients are told, so it is made
// durable before finishExecution() returns, on the caller's thread and without waiting for the
// writer: everything queued up to it (other runs' ends, their output, usage updates) is appended
// to a PendingLog, a file beside the database, with one write(2). SQLite commits the same writes
// when the interval is over, together with whatever else came meanwhile, so a run costs its
// B-tree pages once per batch instead of once per run. There are two logs, used in turn: when
// the writer takes the queue to commit it, later ends go to the other one, and the taken one is
// emptied once its writes are committed. open() first applies what the logs hold and the
// database does not (the writes a crash kept from their commit), so after a crash nothing
// finishExecution() reported durable is missing. Both files have SQLite's guarantee with WAL and
// synchronous=NORMAL: a write survives a crash of the process at once, and a power loss once the
// kernel has written it back (or SQLite has checkpointed); a crash never breaks consistency.
// Reads go through Store, which sees a write once it is committed: flush() first where that
// matters.
//
// Memory: the queue is bounded by the bytes of the events it holds (event JSON, or what
// appendEvent's `heldBytes` says). A write that would go beyond the bound waits, in the calling
// thread, until the writer has committed enough: when output arrives faster than the disk takes
// it, its producer is slowed down instead of the queue growing with the output.
//
// Threading: every method may be called from any thread. Writes are applied in the order they
// were queued, except that of several usage updates of one context in a batch only the last is
// written (each sets the same columns outright, so the outcome is the same). Errors of the background writes are counted and the last one is kept (lastError);
// they never reach the caller's thread as exceptions.
class HistoryWriter {
public:
    // Opens its own connection to the database at `path` (already created and migrated by
    // Store::open) and the pending log beside it, and applies what the log holds that the
    // database does not, before it returns: open the writer before anything reads history that
    // an earlier process may have left in its log. `batchIntervalMs`: the longest a queued write
    // waits before its commit to SQLite.
    static Result<std::unique_ptr<HistoryWriter>> open(const QString &path,
                                                       int batchIntervalMs = 20);
    ~HistoryWriter();  // flushes what is queued, then stops the thread

    void insertExecution(const ExecutionRecord &execution);  // seq assigned by storage
    void appendEvent(const ExecutionEventRecord &event);
    // The same, with the event's JSON made by `makeJson` only when it is needed: when the
    // writes are logged (by finishExecution(), on its caller's thread) or committed (on the
    // writer's), so that the caller of appendEvent does not spend its own time serializing.
    // `makeJson` must use only what it holds by value (implicitly shared Qt values are fine: the
    // caller may change its own copies) and must not call the writer.
    // `heldBytes`: about how much memory `makeJson` holds, counted against the queue's bound.
    void appendEvent(const QString &executionId, int seq, std::function<QByteArray()> makeJson,
                     qint64 heldBytes = 0);
    // True when the end is durable on return (in the pending log). False when the log could not
    // take it (it failed, or the run's output not yet logged is too large to encode on the
    // caller's thread): the writer then commits it to SQLite at once and tells the commit
    // listener, which is how the caller learns that it is durable.
    // `inputs`: ExecutionRecord::inputs.
    bool finishExecution(const QString &id, const QString &status, qint64 durationMs,
                         qint64 outputBytes, bool truncated, const QString &inputs = {});
    void updateContextUsage(const QString &contextId, int executionCount, const QString &cwd,
                            qint64 lastUsedAt);

    // Replaces the context's snapshot (Store::saveSnapshot). Queued in order with the rest: a
    // snapshot queued before an execution's finish is durable no later than that finish.
    void saveSnapshot(const SnapshotRecord &snapshot);

    // Blocks until everything queued before the call is committed.
    void flush();

    // Called on the writer's thread once writes that include execution ends for which
    // finishExecution() returned false are committed, with the ids of those executions, in the
    // order their ends were queued; before flush() waiters are released, so a
    // flush() returns only after the listener has been called for every end it waited for.
    // Called whether the writes were kept or failed (see failedWrites(): a client is never left
    // waiting because the disk refused a write). The listener must not call back into the
    // writer. Setting another (or none) waits for a call in progress to return, so once
    // setCommitListener({}) returns the old listener is never called again.
    using CommitListener = std::function<void(const QStringList &executionIds)>;
    void setCommitListener(CommitListener listener);

    // The bound on what queued and in-flight events hold (see Memory above), and what they hold
    // now. A write waits while it would take heldBytes() past the bound, unless nothing else is
    // held (an event larger than the bound is still written, on its own).
    static constexpr qint64 kMaxHeldBytes = 16 * 1024 * 1024;
    qint64 heldBytes() const;

    qint64 failedWrites() const;
    QString lastError() const;

    // The files of the two pending logs (`which` 0 or 1) of the database at `databasePath`.
    static QString pendingLogPath(const QString &databasePath, int which);

private:
    HistoryWriter();
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace replhost::storage
