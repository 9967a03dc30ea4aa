// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "records.h"

#include <replhost/sdk/result.h>

#include <QHash>
#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace replhost::storage {

class Database;

// The repository of everything replhost keeps: workspaces, env layers, contexts and execution
// history, in one SQLite file in WAL mode (busy_timeout, foreign keys on). The only SQL in
// replhost lives behind this class and the ones in this folder.
//
// Threading: a Store (and its connection) belongs to the thread that opened it. Use one Store per
// thread; SQLite's WAL mode lets them share the file.
// Errors: every method returns a Result; a failed write leaves the database as it was (one
// transaction per logical change). Error codes: "not_found", "conflict", "storage".
class Store {
public:
    ~Store();
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;

    // Opens (creating if needed) the database file and migrates it to the current schema, step
    // by step inside one transaction per step. Refuses a database written by a newer replhost.
    // A file from before schema 6 is then rewritten once (VACUUM) to auto_vacuum=INCREMENTAL,
    // so that space retention frees can be given back (see convertToIncrementalVacuum).
    static Result<std::unique_ptr<Store>> open(const QString &path);

    static int currentSchemaVersion();
    int schemaVersion() const;
    QString path() const;

    // Workspaces
    // `settings`: a JSON object as text (see WorkspaceRecord::settings); anything else fails with
    // "storage" (the schema checks it).
    Result<WorkspaceRecord> createWorkspace(const QString &name, const QString &directory,
                                            const QString &settings = QStringLiteral("{}"));
    Result<std::optional<WorkspaceRecord>> workspaceByName(const QString &name);
    Result<std::optional<WorkspaceRecord>> workspaceById(const QString &id);
    Result<QList<WorkspaceRecord>> workspaces();
    // Replaces the workspace's settings text (the caller merges). Errors: "not_found", "storage".
    Result<void> setWorkspaceSettings(const QString &id, const QString &settings);
    Result<void> deleteWorkspace(const QString &id);  // its contexts, env and history too

    // Env layers. setEnv/unsetEnv upsert one key; clearEnv removes the key from the layer
    // entirely (neither set nor unset).
    Result<void> setEnv(EnvScope scope, const QString &scopeId, const QString &key,
                        const QString &value);
    Result<void> unsetEnv(EnvScope scope, const QString &scopeId, const QString &key);
    Result<void> clearEnv(EnvScope scope, const QString &scopeId, const QString &key);
    Result<QList<EnvVarRecord>> env(EnvScope scope, const QString &scopeId);  // sorted by key

    // Contexts
    Result<void> insertContext(const ContextRecord &context);
    Result<void> renameContext(const QString &id, const QString &name);  // the name only
    // Moves the context's replay base (see ContextRecord) and changes nothing else.
    Result<void> setReplayBase(const QString &id, int executionCount, const QString &cwd);
    // What a run changes in its context, and nothing else (no read, so no lost update of the
    // other columns either).
    Result<void> updateContextUsage(const QString &id, int executionCount, const QString &cwd,
                                    qint64 lastUsedAt);
    Result<std::optional<ContextRecord>> context(const QString &id);
    Result<QList<ContextRecord>> contexts(const QString &workspaceId);  // oldest first
    Result<void> deleteContext(const QString &id);  // its env and history too

    // Snapshots: the latest one per context, replaced by each newer one (deleted with the
    // context). A failed snapshot (empty data, an error) is stored too, so that an older one
    // cannot stand for a state it does not describe.
    Result<void> saveSnapshot(const SnapshotRecord &snapshot);
    Result<std::optional<SnapshotRecord>> snapshot(const QString &contextId);
    Result<void> deleteSnapshot(const QString &contextId);

    // Executions
    //
    // insertExecution assigns seq: one more than the context's highest, unique per context even
    // with several connections inserting. The highest seq per context is remembered on this
    // connection, so that inserting does not search the context's history each time; it is
    // forgotten whenever another connection has committed anything (PRAGMA data_version) or a
    // transaction on this one was rolled back.
    Result<ExecutionRecord> insertExecution(ExecutionRecord execution);
    // `inputs`: ExecutionRecord::inputs (empty: the run asked nothing).
    Result<void> finishExecution(const QString &id, const QString &status, qint64 durationMs,
                                 qint64 outputBytes, bool truncated, const QString &inputs = {});
    Result<void> appendEvents(const QList<ExecutionEventRecord> &events);  // one transaction
    Result<void> appendEvent(const ExecutionEventRecord &event);
    Result<std::optional<ExecutionRecord>> execution(const QString &id);
    // Newest first; `beforeSeq` <= 0 means from the newest.
    Result<QList<ExecutionRecord>> executions(const QString &contextId, qint64 beforeSeq,
                                              int limit);
    // What a restore replays: the context's executions with status "ok", not marked never to be
    // replayed, and an execution count above `afterExecutionCount`, oldest first.
    Result<QList<ExecutionRecord>> replayableExecutions(const QString &contextId,
                                                        int afterExecutionCount);
    // The highest execution count that a replay of the context from its base would run and
    // that retention removed from the history because a snapshot covered it (0: none). A
    // replay from below it cannot rebuild the state. Error "not_found".
    Result<int> prunedExecutionCount(const QString &contextId);
    Result<QList<ExecutionEventRecord>> events(const QString &executionId);  // in order
    // Those with fromSeq <= seq < toSeq, in order.
    Result<QList<ExecutionEventRecord>> events(const QString &executionId, int fromSeq, int toSeq);
    // Marks executions left "running" by a process that ended without finishing them.
    Result<int> abandonRunningExecutions(const QString &status);

    // The size of the database: its pages (`bytes`, the main file once the WAL is
    // checkpointed), those of them free for reuse, and the WAL file beside it.
    struct DatabaseSize {
        qint64 bytes = 0;
        qint64 freeBytes = 0;
        qint64 walBytes = 0;
        bool incrementalVacuum = false;  // free pages can be given back (auto_vacuum=INCREMENTAL)
    };
    Result<DatabaseSize> databaseSize();

    // The sequence number of the last PendingLog record whose writes this database holds (0:
    // none). HistoryWriter sets it inside the transaction that commits the record's writes.
    Result<quint64> pendingLogApplied();
    Result<void> setPendingLogApplied(quint64 seq);

    // Runs `work` inside one transaction; rolls back if it returns an error.
    Result<void> transaction(const std::function<Result<void>()> &work);

private:
    explicit Store(std::unique_ptr<Database> db);
    void convertToIncrementalVacuum();
    Result<qint64> nextExecutionSeq(const QString &contextId);
    void forgetExecutionSeqs();

    std::unique_ptr<Database> m_db;
    // The highest seq of each context as this connection last saw it, valid while the data
    // version and the rollback count below are unchanged.
    QHash<QString, qint64> m_lastSeq;
    qint64 m_seqDataVersion = -1;
    quint64 m_seqRollbackCount = 0;
};

} // namespace replhost::storage
