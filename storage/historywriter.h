// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "records.h"

#include <replhost/sdk/result.h>

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

namespace replhost::storage {

// Keeps persistence off the engine's thread: execution starts, events and ends are queued here
// and written by one background thread with its own connection, in batches (group commit).
//
// Durability: an execution's end (finishExecution) is what clients are told, so it is committed
// as soon as the writer has it: the writer wakes at once instead of waiting for its interval, and
// everything queued meanwhile (other runs' ends, output, usage updates) joins that transaction,
// so concurrent runs share one commit. After each batch's transaction the commit listener gets
// the ids of the executions whose end it held. Other writes wait at most the interval. WAL with
// synchronous=NORMAL: a commit survives a crash of the process at once, and a power loss once
// SQLite has checkpointed it (or the WAL reached the disk); a crash never breaks consistency.
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
    // Store::open). `batchIntervalMs`: the longest a queued write waits before a commit.
    static Result<std::unique_ptr<HistoryWriter>> open(const QString &path,
                                                       int batchIntervalMs = 20);
    ~HistoryWriter();  // flushes what is queued, then stops the thread

    void insertExecution(const ExecutionRecord &execution);  // seq assigned by storage
    void appendEvent(const ExecutionEventRecord &event);
    // The same, with the event's JSON made by `makeJson` on the writer's thread, so that the
    // caller does not spend its own time serializing. `makeJson` must use only what it holds by
    // value (implicitly shared Qt values are fine: the caller may change its own copies).
    // `heldBytes`: about how much memory `makeJson` holds, counted against the queue's bound.
    void appendEvent(const QString &executionId, int seq, std::function<QByteArray()> makeJson,
                     qint64 heldBytes = 0);
    void finishExecution(const QString &id, const QString &status, qint64 durationMs,
                         qint64 outputBytes, bool truncated);
    void updateContextUsage(const QString &contextId, int executionCount, const QString &cwd,
                            qint64 lastUsedAt);

    // Replaces the context's snapshot (Store::saveSnapshot). Queued in order with the rest: a
    // snapshot queued before an execution's finish is committed no later than that finish.
    void saveSnapshot(const SnapshotRecord &snapshot);

    // Blocks until everything queued before the call is committed.
    void flush();

    // Called on the writer's thread after each batch whose writes include execution ends, with
    // the ids of those executions, in the order their ends were queued; before flush() waiters
    // are released, so a flush() returns only after the listener has been called for every end
    // it waited for. Called whether the batch committed or failed (see failedWrites(): a client
    // is never left waiting because the disk refused a write). The listener must not call back
    // into the writer. Setting another (or none) waits for a call in progress to return, so once
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

private:
    HistoryWriter();
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace replhost::storage
