// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "records.h"

#include <replhost/sdk/result.h>

#include <QList>
#include <QString>

#include <memory>

namespace replhost::storage {

// Retention: keeps each workspace's history within its limits (RetentionLimits), on a thread of
// its own with its own connection.
//
// What goes, oldest first: an execution beyond one of its workspace's limits loses its events
// (output_pruned: the record says so), then its row, unless a restore of its context needs its
// code. A restore needs the executions a replay from the context's base would run (status "ok",
// not marked replay = false, after the replay base) that its latest usable snapshot does not
// cover. Those covered by the snapshot go; the highest count among them is kept as the
// context's pruned_count (Store::prunedExecutionCount), so that a restore that cannot use the
// snapshot after all knows the history it would replay is incomplete instead of replaying what
// is left. Running executions are never touched.
//
// Cost: a pass first measures the executions that finished since the last one (stored_bytes:
// their code and events, once each), then reads each workspace's candidates in one read
// transaction (WAL: writers do not wait for readers), then deletes in small write transactions
// (a few dozen executions, or a couple of thousand events, each), and gives the freed pages back
// to the file system with PRAGMA incremental_vacuum, a hundred or so at a time, never VACUUM.
// The history writer, which commits before every answer, waits at most for one such step.
//
// Threading: every method may be called from any thread.
class HistoryPruner {
public:
    // Opens its own connection to the database at `path` (already created and migrated by
    // Store::open).
    static Result<std::unique_ptr<HistoryPruner>> open(const QString &path);
    // Stops after the step in progress; what a pass left undone, the next pass does.
    ~HistoryPruner();

    // Queues a pass over the workspaces in `limits`, against the time `nowMs` (for maxAgeMs),
    // and returns at once. A pass queued and not yet begun is replaced by this one.
    void prune(QList<RetentionLimits> limits, qint64 nowMs);
    // Blocks until no pass is queued or running.
    void waitIdle();

    struct Totals {
        qint64 passes = 0;
        qint64 outputsPruned = 0;      // executions whose events were removed
        qint64 executionsDeleted = 0;  // rows removed
        qint64 pagesReclaimed = 0;     // given back to the file system
        qint64 failedPasses = 0;
        QString lastError;
    };
    // Since open(), over the passes that ended.
    Totals totals() const;

private:
    HistoryPruner();
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace replhost::storage
