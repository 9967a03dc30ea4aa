// SPDX-License-Identifier: Apache-2.0
#include "historywriter.h"

#include "store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <variant>
#include <vector>

namespace replhost::storage {

namespace {

using Clock = std::chrono::steady_clock;

// A batch is committed as soon as this many writes are queued, without waiting for the interval.
constexpr std::size_t kBatchSize = 1000;

struct InsertExecution {
    ExecutionRecord execution;
};
struct AppendEvent {
    ExecutionEventRecord event;
};
struct FinishExecution {
    QString id;
    QString status;
    qint64 durationMs;
    qint64 outputBytes;
    bool truncated;
};
struct UpdateContextUsage {
    QString contextId;
    int executionCount;
    QString cwd;
    qint64 lastUsedAt;
};
using Write = std::variant<InsertExecution, AppendEvent, FinishExecution, UpdateContextUsage>;

template <typename... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;  // not implied for aggregates by every compiler yet

} // namespace

class HistoryWriter::Private {
public:
    void enqueue(Write write);
    void run();
    void writeBatch(const std::vector<Write> &batch);
    Result<void> apply(const Write &write);
    void applyEvents(const QList<ExecutionEventRecord> &events, qint64 *failed, Error *lastFailure);

    // Opened on the caller's thread by open(), then used only by `thread` (and destroyed after it
    // has been joined), so the connection is never used from two threads at once.
    std::unique_ptr<Store> store;
    std::chrono::milliseconds interval{0};  // constant after open()
    std::thread thread;

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
    bool stopping = false;
    QString lastError;

    std::atomic<qint64> failedWrites{0};
};

void HistoryWriter::Private::enqueue(Write write)
{
    bool notify = false;
    {
        std::lock_guard lock(mutex);
        if (queue.empty())
            oldestQueuedAt = Clock::now();
        queue.push_back(std::move(write));
        ++queuedCount;
        // The writer needs waking only to start its interval or to cut it short.
        notify = queue.size() == 1 || queue.size() == kBatchSize;
    }
    if (notify)
        wake.notify_one();
}

void HistoryWriter::Private::run()
{
    std::unique_lock lock(mutex);
    for (;;) {
        wake.wait(lock, [this] { return stopping || !queue.empty(); });
        if (queue.empty())
            return;  // stopping, and everything queued is written
        wake.wait_until(lock, oldestQueuedAt + interval, [this] {
            return stopping || queue.size() >= kBatchSize || flushTarget > doneCount;
        });
        std::vector<Write> batch;
        batch.swap(queue);
        lock.unlock();
        writeBatch(batch);
        lock.lock();
        doneCount += batch.size();
        committed.notify_all();
    }
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
            [this](const AppendEvent &w) { return store->appendEvents({w.event}); },
            [this](const FinishExecution &w) {
                return store->finishExecution(w.id, w.status, w.durationMs, w.outputBytes,
                                              w.truncated);
            },
            [this](const UpdateContextUsage &w) -> Result<void> {
                // Read and write inside the batch's transaction, which holds the write lock, so
                // no other connection can change the context in between.
                auto found = store->context(w.contextId);
                if (!found)
                    return found.error();
                if (!*found) {
                    return makeError(QStringLiteral("not_found"),
                                     QStringLiteral("context %1 not found").arg(w.contextId));
                }
                ContextRecord context = **found;
                context.executionCount = w.executionCount;
                context.cwd = w.cwd;
                context.lastUsedAt = w.lastUsedAt;
                return store->updateContext(context);
            },
        },
        write);
}

void HistoryWriter::Private::applyEvents(const QList<ExecutionEventRecord> &events,
                                         qint64 *failed, Error *lastFailure)
{
    // Events come in runs of hundreds; one statement for the run is the fast path. Should the
    // run fail (it is rolled back as a whole), write its events one by one so that a single bad
    // event costs only itself.
    if (store->appendEvents(events))
        return;
    for (const ExecutionEventRecord &event : events) {
        if (auto r = store->appendEvents({event}); !r) {
            ++*failed;
            *lastFailure = r.error();
        }
    }
}

void HistoryWriter::Private::writeBatch(const std::vector<Write> &batch)
{
    qint64 failed = 0;
    Error lastFailure;
    // Each Store call inside is a savepoint (or a single statement), so a failed write undoes
    // only itself and the rest of the batch still commits.
    auto committedBatch = store->transaction([&]() -> Result<void> {
        for (std::size_t i = 0; i < batch.size();) {
            if (std::holds_alternative<AppendEvent>(batch[i])) {
                QList<ExecutionEventRecord> events;
                for (; i < batch.size() && std::holds_alternative<AppendEvent>(batch[i]); ++i)
                    events.append(std::get<AppendEvent>(batch[i]).event);
                applyEvents(events, &failed, &lastFailure);
                continue;
            }
            if (auto r = apply(batch[i]); !r) {
                ++failed;
                lastFailure = r.error();
            }
            ++i;
        }
        return {};
    });
    if (!committedBatch) {
        failed = static_cast<qint64>(batch.size());  // rolled back: none of it reached the disk
        lastFailure = committedBatch.error();
    }
    if (failed > 0) {
        failedWrites += failed;
        std::lock_guard lock(mutex);
        lastError = lastFailure.message;
    }
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
    d->enqueue(AppendEvent{event});
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
