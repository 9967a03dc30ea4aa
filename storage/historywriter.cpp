// SPDX-License-Identifier: Apache-2.0
#include "historywriter.h"

#include "historywrites.h"
#include "pendinglog.h"
#include "store.h"

#include <QHash>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <optional>
#include <variant>
#include <vector>

namespace replhost::storage {

namespace {

using Clock = std::chrono::steady_clock;

// A batch is committed as soon as this many writes are queued, without waiting for the interval.
constexpr std::size_t kBatchSize = 1000;
// ... or as soon as the queued events hold this many bytes.
constexpr qint64 kBatchBytes = 4 * 1024 * 1024;
// HistoryWriter::kMaxHeldBytes is four batches, so the engine rarely waits while the writer
// commits the batch before.

} // namespace

class HistoryWriter::Private {
public:
    void enqueue(Write write, qint64 heldBytes = 0);
    void run();
    // Appends the pending writes not yet in the log to it: true when they are in it.
    bool logPending();
    // Commits everything pending to SQLite and empties the log.
    void commitPending();
    // Applies the writes of the log that the database does not hold yet (at open).
    Result<void> replayLog();
    // Writes `batch` in one transaction, recording `logSeq` (if not 0) as applied in it. False
    // when the transaction failed as a whole (the database is as it was).
    bool writeBatch(const std::vector<Write> &batch, quint64 logSeq);
    void announce(const std::vector<Write> &batch, std::size_t from);
    Result<void> apply(const Write &write);
    bool batchFull() const
    {
        return queue.size() + pendingCount >= kBatchSize || queueBytes + inFlightBytes >= kBatchBytes;
    }
    void recordFailure(const QString &message);

    // Opened on the caller's thread by open(), then used only by `thread` (and destroyed after it
    // has been joined), so neither is ever used from two threads at once.
    std::unique_ptr<Store> store;
    std::optional<PendingLog> log;
    std::chrono::milliseconds interval{0};  // constant after open()
    std::thread thread;

    // Held while the listener runs, so replacing it waits for a call in progress.
    std::mutex listenerMutex;
    CommitListener listener;

    // Used only by the writer's thread: the writes taken from the queue and not yet committed.
    // pending[0, loggedCount) are in the log (and their ends announced); logSeq is the sequence
    // number of the log's last record, or of the last one the database applied.
    std::vector<Write> pending;
    std::size_t loggedCount = 0;
    Clock::time_point pendingSince;  // when the oldest pending write was queued
    quint64 logSeq = 0;
    bool logDirty = false;  // the log may hold records (or part of one) to clear after a commit

    std::mutex mutex;
    std::condition_variable wake;       // for the writer: writes queued, a flush, or stop
    std::condition_variable committed;  // for flush(): doneCount moved on
    // Guarded by mutex. Writes are numbered in queueing order; a write is done when it has been
    // committed or has failed. Everything numbered up to doneCount is done, so flush() waits
    // for doneCount to reach the number queuedCount had when it was called.
    std::vector<Write> queue;
    Clock::time_point oldestQueuedAt;  // when queue last became non-empty
    quint64 queuedCount = 0;
    quint64 doneCount = 0;
    quint64 flushTarget = 0;  // highest queuedCount a flush() waits for
    qint64 queueBytes = 0;     // held by the writes in queue
    qint64 inFlightBytes = 0;  // held by the pending writes
    std::size_t pendingCount = 0;  // pending.size(), for other threads
    bool endQueued = false;    // queue holds an execution's end: make it durable without waiting
    bool stopping = false;
    QString lastError;

    std::atomic<qint64> failedWrites{0};
};

void HistoryWriter::Private::enqueue(Write write, qint64 heldBytes)
{
    bool notify = false;
    {
        std::unique_lock lock(mutex);
        if (heldBytes > 0 && queueBytes + inFlightBytes + heldBytes > kMaxHeldBytes
            && queueBytes + inFlightBytes > 0) {
            // Back-pressure: wait for the writer rather than hold output without bound. It is
            // woken now, not at the end of its interval.
            wake.notify_one();
            committed.wait(lock, [this, heldBytes] {
                return stopping || queueBytes + inFlightBytes + heldBytes <= kMaxHeldBytes
                        || queueBytes + inFlightBytes == 0;
            });
        }
        if (queue.empty())
            oldestQueuedAt = Clock::now();
        const bool wasFull = batchFull();
        queue.push_back(std::move(write));
        ++queuedCount;
        queueBytes += heldBytes;
        const bool firstEnd = !endQueued && std::holds_alternative<FinishExecution>(queue.back());
        endQueued = endQueued || firstEnd;
        // The writer needs waking only to start its interval or to cut it short.
        notify = queue.size() == 1 || (!wasFull && batchFull()) || firstEnd;
    }
    if (notify)
        wake.notify_one();
}

void HistoryWriter::Private::run()
{
    std::unique_lock lock(mutex);
    for (;;) {
        wake.wait(lock, [this] { return stopping || !queue.empty() || pendingCount > 0; });
        if (queue.empty() && pendingCount == 0)
            return;  // stopping, and everything queued is written
        const Clock::time_point due = (pendingCount > 0 ? pendingSince : oldestQueuedAt) + interval;
        wake.wait_until(lock, due, [this] {
            return stopping || endQueued || batchFull() || flushTarget > doneCount;
        });
        const bool commitNow = stopping || batchFull() || flushTarget > doneCount
                || Clock::now() >= due;
        const bool hasEnds = std::exchange(endQueued, false);
        if (pending.empty() && !queue.empty())
            pendingSince = oldestQueuedAt;
        std::move(queue.begin(), queue.end(), std::back_inserter(pending));
        queue.clear();
        pendingCount = pending.size();
        inFlightBytes += std::exchange(queueBytes, 0);
        lock.unlock();

        // An end is what a client is told, so it must be durable before it is announced; the
        // log makes it so at the cost of one write(2), and SQLite takes the pages of many runs
        // at once when the interval is over. Only when the log fails does an end cost a commit.
        if (!commitNow && hasEnds && logPending()) {
            announce(pending, loggedCount);
            loggedCount = pending.size();
            lock.lock();
            continue;
        }
        if (!commitNow && !hasEnds) {
            lock.lock();
            continue;
        }
        const std::size_t written = pending.size();
        commitPending();
        lock.lock();
        doneCount += written;
        pendingCount = 0;
        inFlightBytes = 0;
        committed.notify_all();
    }
}

bool HistoryWriter::Private::logPending()
{
    if (!log)
        return false;
    const auto from = qsizetype(loggedCount);
    materialize(pending.begin() + from, pending.end());
    const QByteArray payload = encodeWrites(pending.cbegin() + from, pending.cend());
    logDirty = true;
    if (auto r = log->append(logSeq + 1, payload); !r) {
        recordFailure(r.error().message);
        return false;
    }
    ++logSeq;
    return true;
}

void HistoryWriter::Private::commitPending()
{
    const bool committedBatch = writeBatch(pending, loggedCount > 0 ? logSeq : 0);
    // What the log held is in the database now (or was refused by it write by write, which a
    // replay would not change): it goes, so that the next crash has only newer records to
    // replay. A transaction that failed as a whole leaves the log as it is, for a start after a
    // crash to try again; the next batch that commits empties it.
    if (log && logDirty && committedBatch) {
        if (auto r = log->clear(); r)
            logDirty = false;
        else
            recordFailure(r.error().message);
    }
    announce(pending, loggedCount);
    pending.clear();  // what the writes held is freed before their bytes are given back
    loggedCount = 0;
}

Result<void> HistoryWriter::Private::replayLog()
{
    auto records = log->read();
    if (!records)
        return records.error();
    auto applied = store->pendingLogApplied();
    if (!applied)
        return applied.error();
    logSeq = *applied;
    std::vector<Write> writes;
    quint64 lastSeq = 0;
    for (const PendingLog::Record &record : *records) {
        logSeq = std::max(logSeq, record.seq);
        if (record.seq <= *applied)
            continue;  // committed before the crash that kept the log from being emptied
        auto decoded = decodeWrites(record.payload);
        if (!decoded)
            return decoded.error();
        std::move(decoded->begin(), decoded->end(), std::back_inserter(writes));
        lastSeq = record.seq;
    }
    if (!writes.empty())
        writeBatch(writes, lastSeq);
    if (!records->empty()) {
        if (auto r = log->clear(); !r)
            return r.error();
    }
    return {};
}

void HistoryWriter::Private::recordFailure(const QString &message)
{
    std::lock_guard lock(mutex);
    lastError = message;
}

Result<void> HistoryWriter::Private::apply(const Write &write)
{
    return std::visit(
        Overloaded{
            [this](const InsertExecution &w) -> Result<void> {
                auto inserted = store->insertExecution(w.execution);
                if (!inserted)
                    return inserted.error();
                return {};
            },
            [this](const AppendEvent &w) {
                if (!w.makeJson)
                    return store->appendEvent(w.event);
                ExecutionEventRecord event = w.event;
                event.json = w.makeJson();
                return store->appendEvent(event);
            },
            [this](const FinishExecution &w) {
                return store->finishExecution(w.id, w.status, w.durationMs, w.outputBytes,
                                              w.truncated);
            },
            [this](const UpdateContextUsage &w) {
                return store->updateContextUsage(w.contextId, w.executionCount, w.cwd,
                                                 w.lastUsedAt);
            },
            [this](const SaveSnapshot &w) { return store->saveSnapshot(w.snapshot); },
        },
        write);
}

void HistoryWriter::Private::announce(const std::vector<Write> &batch, std::size_t from)
{
    QStringList ids;
    for (std::size_t i = from; i < batch.size(); ++i) {
        if (const auto *finish = std::get_if<FinishExecution>(&batch[i]))
            ids.append(finish->id);
    }
    if (ids.isEmpty())
        return;
    std::lock_guard lock(listenerMutex);
    if (listener)
        listener(ids);
}

bool HistoryWriter::Private::writeBatch(const std::vector<Write> &batch, quint64 logSeq)
{
    // Two kinds of write are folded into another one of the same batch, each with an outcome
    // that does not differ from writing both:
    //
    // - A context's usage is queued when each of its runs starts and ends, and every update sets
    //   the same columns outright: only the last one in the batch is written. Nothing else in a
    //   batch reads those columns, so writing it where it stands changes no outcome. The ones it
    //   stands for share its fate in the failure count, as if each had been written.
    // - A run that starts and ends within one batch (the usual case: batches last 20 ms) is
    //   inserted with its outcome, rather than inserted as running and then updated. Should the
    //   insert fail, the finish is written on its own where it stands, as it would have been.
    struct LastUsage {
        std::size_t index;  // of the last update of the context in the batch
        qint64 writes;      // how many updates of the context the batch holds
    };
    QHash<QString, LastUsage> lastUsage;
    QHash<QString, std::size_t> firstInsert;  // execution id → its first insert in the batch
    QHash<std::size_t, std::size_t> finishOf;  // index of an insert → index of its finish
    std::vector<bool> folded(batch.size(), false);  // finishes written with their insert
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (const auto *usage = std::get_if<UpdateContextUsage>(&batch[i])) {
            LastUsage &last = lastUsage[usage->contextId];
            last.index = i;
            ++last.writes;
        } else if (const auto *insert = std::get_if<InsertExecution>(&batch[i])) {
            if (!firstInsert.contains(insert->execution.id))
                firstInsert.insert(insert->execution.id, i);
        } else if (const auto *finish = std::get_if<FinishExecution>(&batch[i])) {
            const auto insert = firstInsert.constFind(finish->id);
            if (insert != firstInsert.constEnd() && !finishOf.contains(*insert)) {
                finishOf.insert(*insert, i);
                folded[i] = true;
            }
        }
    }

    qint64 failed = 0;
    Error lastFailure;
    // Every write is one statement (or, for an execution, a look-up and one statement) inside
    // the batch's transaction, with no savepoint of its own: a statement that fails undoes only
    // itself, so a failed write costs only itself and the rest of the batch still commits.
    auto committedBatch = store->transaction([&]() -> Result<void> {
        for (std::size_t i = 0; i < batch.size(); ++i) {
            Result<void> r;
            qint64 writes = 1;
            if (const auto *usage = std::get_if<UpdateContextUsage>(&batch[i])) {
                const LastUsage &last = lastUsage[usage->contextId];
                if (last.index != i)
                    continue;  // a later update of the same context stands for this one
                writes = last.writes;
                r = apply(batch[i]);
            } else if (std::holds_alternative<FinishExecution>(batch[i]) && folded[i]) {
                continue;  // written with its insert
            } else if (const auto it = finishOf.constFind(i); it != finishOf.constEnd()) {
                const auto &finish = std::get<FinishExecution>(batch[*it]);
                ExecutionRecord execution = std::get<InsertExecution>(batch[i]).execution;
                execution.status = finish.status;
                execution.durationMs = finish.durationMs;
                execution.outputBytes = finish.outputBytes;
                execution.truncated = finish.truncated;
                if (auto inserted = store->insertExecution(execution); !inserted) {
                    r = inserted.error();
                    folded[*it] = false;  // not written after all: it goes on its own
                }
            } else {
                r = apply(batch[i]);
            }
            if (!r) {
                failed += writes;
                lastFailure = r.error();
            }
        }
        // In the same transaction: a log record is applied exactly when its writes are.
        if (logSeq > 0)
            return store->setPendingLogApplied(logSeq);
        return {};
    });
    if (!committedBatch) {
        failed = static_cast<qint64>(batch.size());  // rolled back: none of it reached the disk
        lastFailure = committedBatch.error();
    }
    if (failed > 0) {
        failedWrites += failed;
        recordFailure(lastFailure.message);
    }
    return bool(committedBatch);
}

HistoryWriter::HistoryWriter() : d(std::make_unique<Private>()) {}

HistoryWriter::~HistoryWriter()
{
    {
        std::lock_guard lock(d->mutex);
        d->stopping = true;
    }
    d->wake.notify_one();
    if (d->thread.joinable())  // not if open() failed to start it
        d->thread.join();      // the thread writes what is still queued before it returns
}

Result<std::unique_ptr<HistoryWriter>> HistoryWriter::open(const QString &path,
                                                           int batchIntervalMs)
{
    auto store = Store::open(path);
    if (!store)
        return store.error();
    std::unique_ptr<HistoryWriter> writer(new HistoryWriter);
    Private *d = writer->d.get();
    d->store = std::move(*store);
    auto log = PendingLog::open(path + QStringLiteral("-pending"));
    if (!log)
        return log.error();
    d->log = std::move(*log);
    if (auto r = d->replayLog(); !r)
        return r.error();
    d->interval = std::chrono::milliseconds(std::max(0, batchIntervalMs));
    try {
        d->thread = std::thread([d] { d->run(); });
    } catch (const std::system_error &e) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("could not start the history writer thread: %1")
                             .arg(QString::fromLocal8Bit(e.what())));
    }
    return writer;
}

void HistoryWriter::insertExecution(const ExecutionRecord &execution)
{
    d->enqueue(InsertExecution{execution});
}

void HistoryWriter::appendEvent(const ExecutionEventRecord &event)
{
    d->enqueue(AppendEvent{event, {}}, event.json.size());
}

void HistoryWriter::appendEvent(const QString &executionId, int seq,
                                std::function<QByteArray()> makeJson, qint64 heldBytes)
{
    d->enqueue(AppendEvent{ExecutionEventRecord{executionId, seq, {}}, std::move(makeJson)},
               heldBytes);
}

void HistoryWriter::finishExecution(const QString &id, const QString &status, qint64 durationMs,
                                    qint64 outputBytes, bool truncated)
{
    d->enqueue(FinishExecution{id, status, durationMs, outputBytes, truncated});
}

void HistoryWriter::updateContextUsage(const QString &contextId, int executionCount,
                                       const QString &cwd, qint64 lastUsedAt)
{
    d->enqueue(UpdateContextUsage{contextId, executionCount, cwd, lastUsedAt});
}

void HistoryWriter::saveSnapshot(const SnapshotRecord &snapshot)
{
    d->enqueue(SaveSnapshot{snapshot}, snapshot.data.size());
}

void HistoryWriter::flush()
{
    std::unique_lock lock(d->mutex);
    const quint64 target = d->queuedCount;
    if (d->doneCount >= target)
        return;
    d->flushTarget = std::max(d->flushTarget, target);
    d->wake.notify_one();
    d->committed.wait(lock, [this, target] { return d->doneCount >= target; });
}

void HistoryWriter::setCommitListener(CommitListener listener)
{
    std::lock_guard lock(d->listenerMutex);
    d->listener = std::move(listener);
}

qint64 HistoryWriter::heldBytes() const
{
    std::lock_guard lock(d->mutex);
    return d->queueBytes + d->inFlightBytes;
}

qint64 HistoryWriter::failedWrites() const
{
    return d->failedWrites.load();
}

QString HistoryWriter::lastError() const
{
    std::lock_guard lock(d->mutex);
    return d->lastError;
}

} // namespace replhost::storage
