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

// An end whose writes not yet in the log hold at most this many bytes is logged by
// finishExecution() itself. Beyond it (a run that printed megabytes), encoding them would keep the
// caller's thread busy for milliseconds: the writer commits them at once instead.
constexpr qint64 kInlineLogBytes = 256 * 1024;

} // namespace

class HistoryWriter::Private {
public:
    void enqueue(Write write, qint64 heldBytes = 0);
    bool finish(FinishExecution finish);
    void run();
    // Applies the writes of the logs that the database does not hold yet (at open).
    Result<void> replayLogs();
    // Writes `batch` in one transaction, recording `logSeq` (if not 0) as applied in it. False
    // when the transaction failed as a whole (the database is as it was).
    bool writeBatch(const std::vector<Write> &batch, quint64 logSeq);
    // Tells the listener of the ends in `batch` that finishExecution() did not report durable.
    void announce(const std::vector<Write> &batch);
    Result<void> apply(const Write &write);
    bool batchFull() const
    {
        return queue.size() >= kBatchSize || queueBytes + inFlightBytes >= kBatchBytes;
    }
    void recordFailure(const QString &message);

    // One of the two pending logs. Callers append to logs[current], under the mutex; the writer
    // switches `current` when it takes the queue, commits what the other one holds and empties
    // it, without the mutex: between two switches each file has one user.
    struct Log {
        std::optional<PendingLog> file;
        quint64 lastSeq = 0;  // of the last record appended since the file was last taken
        bool usable = true;   // false after a failed append or clear, until it is emptied
        bool dirty = false;   // may hold records (or part of one) to clear after their commit
    };

    // Opened on the caller's thread by open(), then used only by `thread` (and destroyed after it
    // has been joined), so it is never used from two threads at once.
    std::unique_ptr<Store> store;
    std::chrono::milliseconds interval{0};  // constant after open()
    std::thread thread;

    // Held while the listener runs, so replacing it waits for a call in progress.
    std::mutex listenerMutex;
    CommitListener listener;

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
    qint64 inFlightBytes = 0;  // held by the writes being committed
    Log logs[2];
    int current = 0;
    quint64 logSeq = 0;                // of the last record appended to either log
    std::size_t loggedWrites = 0;      // queue[0, loggedWrites) are in logs[current]
    qint64 loggedBytes = 0;            // what those hold
    bool unloggedEnd = false;          // queue holds an end the log did not take: commit now
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
        // The writer needs waking only to start its interval or to cut it short.
        notify = queue.size() == 1 || (!wasFull && batchFull());
    }
    if (notify)
        wake.notify_one();
}

bool HistoryWriter::Private::finish(FinishExecution end)
{
    bool durable = false;
    bool notify = false;
    {
        std::unique_lock lock(mutex);
        if (queue.empty())
            oldestQueuedAt = Clock::now();
        queue.push_back(std::move(end));
        ++queuedCount;
        // What is queued up to this end goes to the log here, with one write(2): no thread
        // hand-off stands between a run's end and its answer. The writer commits the same
        // writes to SQLite when its interval is over.
        Log &log = logs[current];
        if (log.file && log.usable && queueBytes - loggedBytes <= kInlineLogBytes) {
            const auto from = queue.begin() + qsizetype(loggedWrites);
            materialize(from, queue.end());
            const QByteArray payload = encodeWrites(from, queue.cend());
            log.dirty = true;
            if (auto r = log.file->append(logSeq + 1, payload); r) {
                log.lastSeq = ++logSeq;
                loggedWrites = queue.size();
                loggedBytes = queueBytes;
                std::get<FinishExecution>(queue.back()).reported = true;
                durable = true;
            } else {
                log.usable = false;  // it may end in part of a record: emptied before reuse
                lastError = r.error().message;
            }
        }
        if (!durable)
            unloggedEnd = true;
        notify = queue.size() == 1 || !durable;
    }
    if (notify)
        wake.notify_one();
    return durable;
}

void HistoryWriter::Private::run()
{
    std::unique_lock lock(mutex);
    for (;;) {
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty())
            return;  // stopping, and everything queued is written
        const Clock::time_point due = oldestQueuedAt + interval;
        wake.wait_until(lock, due, [this] {
            return stopping || unloggedEnd || batchFull() || flushTarget > doneCount;
        });
        // Everything queued is taken, and the callers go on in the other log: the records of
        // this one stand for exactly the writes taken, so once these are committed it can be
        // emptied whatever is logged meanwhile.
        std::vector<Write> batch;
        batch.swap(queue);
        Log &log = logs[current];
        const quint64 batchSeq = std::exchange(log.lastSeq, 0);
        current ^= 1;
        loggedWrites = 0;
        loggedBytes = 0;
        unloggedEnd = false;
        inFlightBytes = std::exchange(queueBytes, 0);
        lock.unlock();

        const bool committedBatch = writeBatch(batch, batchSeq);
        // A transaction that failed as a whole leaves the log as it is, for a start after a
        // crash to try again; the next commit of this log empties it.
        if (log.file && log.dirty && committedBatch) {
            if (auto r = log.file->clear(); r) {
                log.dirty = false;
                log.usable = true;
            } else {
                log.usable = false;
                recordFailure(r.error().message);
            }
        }
        announce(batch);
        const auto written = quint64(batch.size());
        batch.clear();  // what the writes held is freed before their bytes are given back

        lock.lock();
        doneCount += written;
        inFlightBytes = 0;
        committed.notify_all();
    }
}

Result<void> HistoryWriter::Private::replayLogs()
{
    std::vector<PendingLog::Record> records;
    for (const Log &log : logs) {
        auto read = log.file->read();
        if (!read)
            return read.error();
        std::move(read->begin(), read->end(), std::back_inserter(records));
    }
    // Sequence numbers grow across both files: in their order, the writes are in queueing order.
    std::sort(records.begin(), records.end(),
              [](const PendingLog::Record &a, const PendingLog::Record &b) { return a.seq < b.seq; });
    auto applied = store->pendingLogApplied();
    if (!applied)
        return applied.error();
    logSeq = *applied;
    std::vector<Write> writes;
    quint64 lastSeq = 0;
    for (const PendingLog::Record &record : records) {
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
    if (!records.empty()) {
        for (Log &log : logs) {
            if (auto r = log.file->clear(); !r)
                return r.error();
        }
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
                                              w.truncated, w.inputs);
            },
            [this](const UpdateContextUsage &w) {
                return store->updateContextUsage(w.contextId, w.executionCount, w.cwd,
                                                 w.lastUsedAt);
            },
            [this](const SaveSnapshot &w) { return store->saveSnapshot(w.snapshot); },
        },
        write);
}

void HistoryWriter::Private::announce(const std::vector<Write> &batch)
{
    QStringList ids;
    for (const Write &write : batch) {
        if (const auto *finish = std::get_if<FinishExecution>(&write); finish && !finish->reported)
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
                execution.inputs = finish.inputs;
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
    for (int i = 0; i < 2; ++i) {
        auto log = PendingLog::open(pendingLogPath(path, i));
        if (!log)
            return log.error();
        d->logs[i].file = std::move(*log);
    }
    if (auto r = d->replayLogs(); !r)
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

bool HistoryWriter::finishExecution(const QString &id, const QString &status, qint64 durationMs,
                                    qint64 outputBytes, bool truncated, const QString &inputs)
{
    return d->finish(FinishExecution{id, status, durationMs, outputBytes, truncated, inputs});
}

QString HistoryWriter::pendingLogPath(const QString &databasePath, int which)
{
    return databasePath + (which == 0 ? QStringLiteral("-pending") : QStringLiteral("-pending.1"));
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
