// SPDX-License-Identifier: Apache-2.0
#include "historypruner.h"

#include "database.h"
#include "statement.h"
#include "transaction.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace replhost::storage {

namespace {

// Sizes of the steps: each is one write transaction, which is what the history writer may have
// to wait for. Small enough to take a few milliseconds on an ordinary disk.
constexpr int kMeasuredPerStep = 100;       // executions measured
constexpr int kExecutionsPerStep = 50;      // executions whose rows are deleted or kept
constexpr int kEventsPerStep = 2000;        // events deleted
// Pages given back by one incremental_vacuum.
#define PAGES_PER_STEP "128"
constexpr int kCandidatesPerPass = 5000;    // per workspace: the rest waits for the next pass

// With executions as e joined to their contexts as c. A replay from the base runs the
// executions of FROM_BASE; the context's latest snapshot, when it can be used, stands for every
// execution up to SNAPSHOT_COUNT (the conditions core::Context checks before using one); what a
// restore needs is what a replay would run on top of it.
#define FROM_BASE "(e.status = 'ok' AND e.replay = 1 AND e.execution_count > c.replay_base_count)"
#define SNAPSHOT_COUNT                                                                            \
    "COALESCE((SELECT s.execution_count FROM context_snapshots s WHERE s.context_id = c.id "      \
    "AND s.error = '' AND s.format <> '' AND s.execution_count > c.replay_base_count "            \
    "AND s.execution_count <= c.execution_count), 0)"
#define NEEDED "(" FROM_BASE " AND e.execution_count > " SNAPSHOT_COUNT ")"
// The ids of one step, bound as a JSON array.
#define STEP_IDS "(SELECT value FROM json_each(?1))"

QString idsJson(const QStringList &ids)
{
    return QString::fromUtf8(
            QJsonDocument(QJsonArray::fromStringList(ids)).toJson(QJsonDocument::Compact));
}

struct Pass {
    QList<RetentionLimits> limits;
    qint64 nowMs = 0;
};

} // namespace

class HistoryPruner::Private {
public:
    void run();
    Result<void> runPass(const Pass &pass, Totals &counts);
    Result<void> measure();
    Result<QStringList> candidates(const RetentionLimits &limits, qint64 nowMs);
    Result<void> pruneStep(const QStringList &ids, Totals &counts);
    Result<void> reclaim(Totals &counts);
    bool stopRequested() const { return stopping.load(std::memory_order_relaxed); }

    // Opened on the caller's thread by open(), then used only by `thread`.
    std::unique_ptr<Database> db;
    std::thread thread;
    std::atomic<bool> stopping{false};

    mutable std::mutex mutex;
    std::condition_variable wake;  // for the thread: a pass queued, or stop
    std::condition_variable idle;  // for waitIdle()
    // Guarded by mutex.
    std::optional<Pass> queued;
    bool running = false;
    Totals totals;
};

HistoryPruner::HistoryPruner() : d(std::make_unique<Private>()) {}

HistoryPruner::~HistoryPruner()
{
    {
        std::lock_guard lock(d->mutex);
        d->stopping = true;
    }
    d->wake.notify_all();
    if (d->thread.joinable())
        d->thread.join();
}

Result<std::unique_ptr<HistoryPruner>> HistoryPruner::open(const QString &path)
{
    auto db = Database::open(path);
    if (!db)
        return db.error();
    std::unique_ptr<HistoryPruner> pruner(new HistoryPruner);
    pruner->d->db = std::move(*db);
    pruner->d->thread = std::thread([d = pruner->d.get()] { d->run(); });
    return pruner;
}

void HistoryPruner::prune(QList<RetentionLimits> limits, qint64 nowMs)
{
    {
        std::lock_guard lock(d->mutex);
        d->queued = Pass{std::move(limits), nowMs};
    }
    d->wake.notify_one();
}

void HistoryPruner::waitIdle()
{
    std::unique_lock lock(d->mutex);
    d->idle.wait(lock, [this] { return d->stopping || (!d->queued && !d->running); });
}

HistoryPruner::Totals HistoryPruner::totals() const
{
    std::lock_guard lock(d->mutex);
    return d->totals;
}

void HistoryPruner::Private::run()
{
    std::unique_lock lock(mutex);
    for (;;) {
        wake.wait(lock, [this] { return stopping || queued; });
        if (stopping)
            break;
        const Pass pass = std::move(*queued);
        queued.reset();
        running = true;
        lock.unlock();
        Totals counts;
        const Result<void> result = runPass(pass, counts);
        lock.lock();
        running = false;
        ++totals.passes;
        totals.outputsPruned += counts.outputsPruned;
        totals.executionsDeleted += counts.executionsDeleted;
        totals.pagesReclaimed += counts.pagesReclaimed;
        if (!result) {
            ++totals.failedPasses;
            totals.lastError = result.error().message;
        }
        idle.notify_all();
    }
    running = false;
    idle.notify_all();
}

Result<void> HistoryPruner::Private::runPass(const Pass &pass, Totals &counts)
{
    if (auto r = measure(); !r)
        return r;
    for (const RetentionLimits &limits : pass.limits) {
        if (limits.maxExecutions <= 0 && limits.maxBytes <= 0 && limits.maxAgeMs <= 0)
            continue;
        auto ids = candidates(limits, pass.nowMs);
        if (!ids)
            return ids.error();
        for (qsizetype at = 0; at < ids->size(); at += kExecutionsPerStep) {
            if (stopRequested())
                return {};
            if (auto r = pruneStep(ids->mid(at, kExecutionsPerStep), counts); !r)
                return r;
        }
    }
    return reclaim(counts);
}

Result<void> HistoryPruner::Private::measure()
{
    // Once per execution, after it finished: its events do not change any more.
    for (;;) {
        if (stopRequested())
            return {};
        Statement s(*db,
                    "UPDATE executions SET stored_bytes = length(CAST(code AS BLOB)) + "
                    "COALESCE((SELECT SUM(length(v.json)) FROM execution_events v "
                    "WHERE v.execution_id = executions.id), 0) "
                    "WHERE rowid IN (SELECT rowid FROM executions "
                    "WHERE stored_bytes IS NULL AND status <> 'running' LIMIT ?1)");
        s.bind(1, kMeasuredPerStep);
        if (auto r = s.run(); !r)
            return r;
        if (db->changes() < kMeasuredPerStep)
            return {};
    }
}

Result<QStringList> HistoryPruner::Private::candidates(const RetentionLimits &limits,
                                                       qint64 nowMs)
{
    // Newest first across the workspace's contexts: an execution is beyond the count limit by
    // its rank, beyond the byte limit when it and everything newer take more than the limit,
    // beyond the age limit by its start. Those whose output is gone already and whose code a
    // restore needs stay as they are, so they are not visited again.
    Statement s(*db,
                "SELECT id FROM ("
                "  SELECT e.id, e.started_at, e.rowid AS r, e.output_pruned, " NEEDED " AS needed,"
                "         ROW_NUMBER() OVER newest AS newer_count,"
                "         SUM(COALESCE(e.stored_bytes, 0)) OVER newest AS newer_bytes"
                "  FROM executions e JOIN contexts c ON c.id = e.context_id"
                "  WHERE c.workspace_id = ?1 AND e.status <> 'running'"
                "  WINDOW newest AS (ORDER BY e.started_at DESC, e.rowid DESC"
                "                    ROWS UNBOUNDED PRECEDING))"
                " WHERE ((?2 > 0 AND newer_count > ?2) OR (?3 > 0 AND newer_bytes > ?3)"
                "        OR (?4 > 0 AND started_at < ?4))"
                "   AND NOT (output_pruned AND needed)"
                " ORDER BY started_at, r LIMIT ?5");
    s.bind(1, limits.workspaceId);
    s.bind(2, limits.maxExecutions);
    s.bind(3, limits.maxBytes);
    s.bind(4, limits.maxAgeMs > 0 ? nowMs - limits.maxAgeMs : qint64(0));
    s.bind(5, kCandidatesPerPass);
    QStringList ids;
    for (;;) {
        auto row = s.step();
        if (!row)
            return row.error();
        if (!*row)
            return ids;
        ids.append(s.columnString(0));
    }
}

Result<void> HistoryPruner::Private::pruneStep(const QStringList &ids, Totals &counts)
{
    const QString json = idsJson(ids);
    {
        // Marked first: while its events go, step by step, the record already says its output
        // is incomplete.
        Statement mark(*db, "UPDATE executions SET output_pruned = 1 "
                            "WHERE id IN " STEP_IDS " AND output_pruned = 0 "
                            "AND status <> 'running'");
        mark.bind(1, json);
        if (auto r = mark.run(); !r)
            return r;
        counts.outputsPruned += db->changes();
    }
    for (;;) {
        if (stopRequested())
            return {};
        Statement drop(*db, "DELETE FROM execution_events WHERE (execution_id, seq) IN ("
                            "SELECT v.execution_id, v.seq FROM execution_events v "
                            "JOIN executions e ON e.id = v.execution_id "
                            "WHERE v.execution_id IN " STEP_IDS " AND e.output_pruned = 1 "
                            "LIMIT ?2)");
        drop.bind(1, json);
        drop.bind(2, kEventsPerStep);
        if (auto r = drop.run(); !r)
            return r;
        if (db->changes() < kEventsPerStep)
            break;
    }

    // Whether a restore needs a row is decided here, under the write lock: a snapshot saved
    // since the candidates were read (or a failed one that replaced it) counts.
    Transaction tx(*db);
    if (!tx.ok())
        return tx.error();
    {
        Statement gone(*db,
                       "UPDATE contexts SET pruned_count = x.top FROM ("
                       "  SELECT e.context_id AS id, MAX(e.execution_count) AS top"
                       "  FROM executions e JOIN contexts c ON c.id = e.context_id"
                       "  WHERE e.id IN " STEP_IDS " AND e.output_pruned = 1"
                       "    AND " FROM_BASE " AND NOT " NEEDED
                       "  GROUP BY e.context_id) AS x"
                       " WHERE contexts.id = x.id AND x.top > contexts.pruned_count");
        gone.bind(1, json);
        if (auto r = gone.run(); !r)
            return r;
    }
    {
        Statement remove(*db, "DELETE FROM executions WHERE id IN ("
                              "SELECT e.id FROM executions e JOIN contexts c ON c.id = e.context_id"
                              " WHERE e.id IN " STEP_IDS " AND e.output_pruned = 1"
                              " AND NOT " NEEDED ")");
        remove.bind(1, json);
        if (auto r = remove.run(); !r)
            return r;
        counts.executionsDeleted += db->changes();
    }
    {
        Statement kept(*db, "UPDATE executions SET stored_bytes = length(CAST(code AS BLOB)) "
                            "WHERE id IN " STEP_IDS " AND output_pruned = 1");
        kept.bind(1, json);
        if (auto r = kept.run(); !r)
            return r;
    }
    return tx.commit();
}

Result<void> HistoryPruner::Private::reclaim(Totals &counts)
{
    // Each incremental_vacuum is a write transaction of its own that moves at most a step's
    // pages; it does nothing in a file still without auto_vacuum=INCREMENTAL (Store::open).
    qint64 before = -1;
    for (;;) {
        Statement freePages(*db, "PRAGMA freelist_count");
        auto row = freePages.step();
        if (!row)
            return row.error();
        const qint64 pages = *row ? freePages.columnInt64(0) : 0;
        freePages.reset();
        if (before >= 0)
            counts.pagesReclaimed += std::max<qint64>(0, before - pages);
        if (pages == 0 || pages == before || stopRequested())
            break;
        before = pages;
        if (auto r = db->execute("PRAGMA incremental_vacuum(" PAGES_PER_STEP ")"); !r)
            return r;
    }
    // The file shrinks when the WAL is checkpointed; a passive checkpoint waits for nobody.
    return db->execute("PRAGMA wal_checkpoint(PASSIVE)");
}

} // namespace replhost::storage
