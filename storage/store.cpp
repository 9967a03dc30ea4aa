// SPDX-License-Identifier: Apache-2.0
#include "store.h"

#include "database.h"
#include "migrations.h"
#include "statement.h"
#include "transaction.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QUuid>

#include <sqlite3.h>

#include <climits>
#include <limits>
#include <optional>

namespace replhost::storage {

namespace {

const QString kConflict = QStringLiteral("conflict");
const QString kNotFound = QStringLiteral("not_found");

QString newId()
{
    return QUuid::createUuid().toString(QUuid::WithoutBraces);
}

QString scopeName(EnvScope scope)
{
    return scope == EnvScope::Workspace ? QStringLiteral("workspace") : QStringLiteral("context");
}

// Keeps the cause's code and says what was being done.
Error failed(const QString &what, const Error &cause)
{
    return makeError(cause.code, QStringLiteral("could not %1: %2").arg(what, cause.message));
}

Error notFound(const QString &what, const QString &id)
{
    return makeError(kNotFound, QStringLiteral("%1 %2 not found").arg(what, id));
}

// Reads every remaining row of `s` with `read`.
template <typename T, typename Read>
Result<QList<T>> collect(Statement &s, Read read)
{
    QList<T> rows;
    for (;;) {
        auto row = s.step();
        if (!row)
            return row.error();
        if (!*row)
            return rows;
        rows.append(read(s));
    }
}

// Reads the first row of `s`, if any, with `read`.
template <typename T, typename Read>
Result<std::optional<T>> first(Statement &s, Read read)
{
    auto row = s.step();
    if (!row)
        return row.error();
    if (!*row)
        return std::optional<T>();
    return std::optional<T>(read(s));
}

// The columns readWorkspace() expects, in its order.
#define WORKSPACE_COLUMNS "id, name, directory, created_at, settings"

WorkspaceRecord readWorkspace(const Statement &s)
{
    return WorkspaceRecord{s.columnString(0), s.columnString(1), s.columnString(2),
                           s.columnInt64(3), s.columnString(4)};
}

QString policyName(RestorePolicy policy)
{
    return policy == RestorePolicy::Fresh ? QStringLiteral("fresh") : QStringLiteral("replay");
}

// The columns readContext() expects, in its order.
#define CONTEXT_COLUMNS                                                                          \
    "id, workspace_id, language, name, cwd, execution_count, created_at, last_used_at, "        \
    "restore_policy, replay_base_count, replay_base_cwd"

ContextRecord readContext(const Statement &s)
{
    return ContextRecord{s.columnString(0), s.columnString(1), s.columnString(2),
                         s.columnString(3), s.columnString(4), s.columnInt(5),
                         s.columnInt64(6),  s.columnInt64(7),
                         s.columnString(8) == QLatin1String("fresh") ? RestorePolicy::Fresh
                                                                     : RestorePolicy::Replay,
                         s.columnInt(9),    s.columnString(10)};
}

// The columns readExecution() expects, in its order.
#define EXECUTION_COLUMNS                                                             \
    "id, context_id, seq, code, status, execution_count, started_at, duration_ms, "            \
    "output_bytes, truncated, replay, output_pruned, inputs"
ExecutionRecord readExecution(const Statement &s)
{
    return ExecutionRecord{s.columnString(0), s.columnString(1), s.columnInt64(2),
                           s.columnString(3), s.columnString(4), s.columnInt(5),
                           s.columnInt64(6),  s.columnInt64(7),  s.columnInt64(8),
                           s.columnBool(9),   s.columnBool(10), s.columnBool(11),
                           s.columnString(12)};
}

// An env layer belongs to a workspace or a context. scope_id cannot carry a foreign key, so
// writes check the owner here, inside the writing transaction; deleting the owner deletes the
// layer (triggers in the schema).
Result<void> checkScopeExists(Database &db, EnvScope scope, const QString &scopeId)
{
    Statement s(db, scope == EnvScope::Workspace ? "SELECT 1 FROM workspaces WHERE id = ?1"
                                                 : "SELECT 1 FROM contexts WHERE id = ?1");
    s.bind(1, scopeId);
    auto row = s.step();
    if (!row)
        return row.error();
    if (!*row)
        return notFound(scopeName(scope), scopeId);
    return {};
}

// What appending `event` failed with, in the caller's terms.
Error eventError(const Error &cause, const ExecutionEventRecord &event)
{
    if (cause.code == kNotFound)
        return notFound(QStringLiteral("execution"), event.executionId);
    if (cause.code == kConflict) {
        return makeError(kConflict, QStringLiteral("event %1 of execution %2 is already stored")
                                        .arg(event.seq)
                                        .arg(event.executionId));
    }
    return failed(QStringLiteral("store events"), cause);
}

Result<void> upsertEnv(Database &db, EnvScope scope, const QString &scopeId, const QString &key,
                       const QString &value, bool isUnset)
{
    Transaction tx(db);
    if (!tx.ok())
        return tx.error();
    if (auto r = checkScopeExists(db, scope, scopeId); !r)
        return r;
    Statement s(db, "INSERT INTO env_vars (scope, scope_id, key, value, is_unset) "
                    "VALUES (?1, ?2, ?3, ?4, ?5) "
                    "ON CONFLICT (scope, scope_id, key) "
                    "DO UPDATE SET value = excluded.value, is_unset = excluded.is_unset");
    s.bind(1, scopeName(scope));
    s.bind(2, scopeId);
    s.bind(3, key);
    s.bind(4, value);
    s.bind(5, isUnset ? 1 : 0);
    if (auto r = s.run(); !r)
        return r;
    return tx.commit();
}

} // namespace

Store::Store(std::unique_ptr<Database> db) : m_db(std::move(db)) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const QString &path)
{
    const QString dir = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(dir)) {
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("could not create directory %1 for database %2; check "
                                        "its permissions or choose another data directory")
                             .arg(dir, path));
    }
    auto db = Database::open(path);
    if (!db)
        return db.error();
    if (auto v = migrations::migrate(**db); !v)
        return v.error();
    std::unique_ptr<Store> store(new Store(std::move(*db)));
    store->convertToIncrementalVacuum();
    return store;
}

void Store::convertToIncrementalVacuum()
{
    // A file made before schema 6 has auto_vacuum=NONE (Database::open asked for INCREMENTAL,
    // which a file with tables takes only through a VACUUM). The VACUUM rewrites the whole file
    // once, here, before the engine serves anything, so it delays the start of that one upgrade
    // by about the time it takes to copy the file, and never an answer. It needs free disk for
    // a copy of the file and no other connection in a transaction; if it fails, the file keeps
    // its mode (freed pages are reused for new history, but the file does not shrink,
    // databaseSize().incrementalVacuum says so) and the next open tries again.
    Statement mode(*m_db, "PRAGMA auto_vacuum");
    auto row = mode.step();
    if (!row || !*row || mode.columnInt(0) != 0)
        return;
    mode.reset();
    (void)m_db->execute("VACUUM");
}

int Store::currentSchemaVersion()
{
    return migrations::currentVersion();
}

int Store::schemaVersion() const
{
    // Read each time: another replhost may have upgraded the file since this Store opened it.
    auto v = migrations::readVersion(*m_db);
    return v ? v->version : 0;
}

QString Store::path() const
{
    return m_db->path();
}

// Workspaces

Result<WorkspaceRecord> Store::createWorkspace(const QString &name, const QString &directory,
                                               const QString &settings)
{
    WorkspaceRecord w{newId(), name, directory, QDateTime::currentMSecsSinceEpoch(), settings};
    Statement s(*m_db, "INSERT INTO workspaces (id, name, directory, created_at, settings) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)");
    s.bind(1, w.id);
    s.bind(2, w.name);
    s.bind(3, w.directory);
    s.bind(4, w.createdAt);
    s.bind(5, w.settings);
    if (auto r = s.run(); !r) {
        if (r.error().code == kConflict) {
            return makeError(kConflict,
                             QStringLiteral("a workspace named \"%1\" already exists").arg(name));
        }
        return failed(QStringLiteral("create workspace \"%1\"").arg(name), r.error());
    }
    return w;
}

Result<std::optional<WorkspaceRecord>> Store::workspaceByName(const QString &name)
{
    Statement s(*m_db, "SELECT " WORKSPACE_COLUMNS " FROM workspaces WHERE name = ?1");
    s.bind(1, name);
    return first<WorkspaceRecord>(s, readWorkspace);
}

Result<std::optional<WorkspaceRecord>> Store::workspaceById(const QString &id)
{
    Statement s(*m_db, "SELECT " WORKSPACE_COLUMNS " FROM workspaces WHERE id = ?1");
    s.bind(1, id);
    return first<WorkspaceRecord>(s, readWorkspace);
}

Result<QList<WorkspaceRecord>> Store::workspaces()
{
    Statement s(*m_db, "SELECT " WORKSPACE_COLUMNS " FROM workspaces ORDER BY created_at, rowid");
    return collect<WorkspaceRecord>(s, readWorkspace);
}

Result<void> Store::setWorkspaceSettings(const QString &id, const QString &settings)
{
    Statement s(*m_db, "UPDATE workspaces SET settings = ?2 WHERE id = ?1");
    s.bind(1, id);
    s.bind(2, settings);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("store the settings of workspace %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("workspace"), id);
    return {};
}

Result<void> Store::deleteWorkspace(const QString &id)
{
    // One statement, so one transaction: foreign keys cascade to contexts, executions and
    // events, and triggers delete the env layers of the workspace and of its contexts.
    Statement s(*m_db, "DELETE FROM workspaces WHERE id = ?1");
    s.bind(1, id);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("delete workspace %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("workspace"), id);
    forgetExecutionSeqs();  // its contexts' histories are gone: a context made again starts at 1
    return {};
}

// Env layers

Result<void> Store::setEnv(EnvScope scope, const QString &scopeId, const QString &key,
                           const QString &value)
{
    auto r = upsertEnv(*m_db, scope, scopeId, key, value, false);
    if (!r && r.error().code != kNotFound)
        return failed(QStringLiteral("set %1").arg(key), r.error());
    return r;
}

Result<void> Store::unsetEnv(EnvScope scope, const QString &scopeId, const QString &key)
{
    auto r = upsertEnv(*m_db, scope, scopeId, key, QString(), true);
    if (!r && r.error().code != kNotFound)
        return failed(QStringLiteral("unset %1").arg(key), r.error());
    return r;
}

Result<void> Store::clearEnv(EnvScope scope, const QString &scopeId, const QString &key)
{
    Statement s(*m_db, "DELETE FROM env_vars WHERE scope = ?1 AND scope_id = ?2 AND key = ?3");
    s.bind(1, scopeName(scope));
    s.bind(2, scopeId);
    s.bind(3, key);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("clear %1").arg(key), r.error());
    return {};
}

Result<QList<EnvVarRecord>> Store::env(EnvScope scope, const QString &scopeId)
{
    Statement s(*m_db, "SELECT key, value, is_unset FROM env_vars "
                       "WHERE scope = ?1 AND scope_id = ?2 ORDER BY key");
    s.bind(1, scopeName(scope));
    s.bind(2, scopeId);
    return collect<EnvVarRecord>(s, [](const Statement &row) {
        return EnvVarRecord{row.columnString(0), row.columnString(1), row.columnBool(2)};
    });
}

// Contexts

Result<void> Store::insertContext(const ContextRecord &c)
{
    Statement s(*m_db, "INSERT INTO contexts (" CONTEXT_COLUMNS ") "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    s.bind(1, c.id);
    s.bind(2, c.workspaceId);
    s.bind(3, c.language);
    s.bind(4, c.name);
    s.bind(5, c.cwd);
    s.bind(6, c.executionCount);
    s.bind(7, c.createdAt);
    s.bind(8, c.lastUsedAt);
    s.bind(9, policyName(c.restorePolicy));
    s.bind(10, c.replayBaseCount);
    s.bind(11, c.replayBaseCwd);
    if (auto r = s.run(); !r) {
        if (r.error().code == kNotFound)
            return notFound(QStringLiteral("workspace"), c.workspaceId);
        if (r.error().code == kConflict) {
            return makeError(kConflict,
                             QStringLiteral("a context with id %1 already exists").arg(c.id));
        }
        return failed(QStringLiteral("create context %1").arg(c.id), r.error());
    }
    return {};
}

Result<void> Store::renameContext(const QString &id, const QString &name)
{
    // Only the name: usage columns are written by the HistoryWriter's connection, and a full-row
    // update from here could overwrite a newer count with an older one.
    Statement s(*m_db, "UPDATE contexts SET name = ?2 WHERE id = ?1");
    s.bind(1, id);
    s.bind(2, name);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("rename context %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("context"), id);
    return {};
}

Result<void> Store::setReplayBase(const QString &id, int executionCount, const QString &cwd)
{
    Statement s(*m_db, "UPDATE contexts SET replay_base_count = ?2, replay_base_cwd = ?3 "
                       "WHERE id = ?1");
    s.bind(1, id);
    s.bind(2, executionCount);
    s.bind(3, cwd);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("move the replay base of context %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("context"), id);
    return {};
}

Result<void> Store::updateContextUsage(const QString &id, int executionCount, const QString &cwd,
                                      qint64 lastUsedAt)
{
    if (auto r = m_db->checkEnclosingTransaction(); !r)
        return failed(QStringLiteral("update context %1").arg(id), r.error());
    Statement s(*m_db, "UPDATE contexts SET execution_count = ?2, cwd = ?3, last_used_at = ?4 "
                       "WHERE id = ?1");
    s.bind(1, id);
    s.bind(2, executionCount);
    s.bind(3, cwd);
    s.bind(4, lastUsedAt);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("update context %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("context"), id);
    return {};
}

Result<std::optional<ContextRecord>> Store::context(const QString &id)
{
    Statement s(*m_db, "SELECT " CONTEXT_COLUMNS " FROM contexts WHERE id = ?1");
    s.bind(1, id);
    return first<ContextRecord>(s, readContext);
}

Result<QList<ContextRecord>> Store::contexts(const QString &workspaceId)
{
    Statement s(*m_db, "SELECT " CONTEXT_COLUMNS " FROM contexts WHERE workspace_id = ?1 "
                       "ORDER BY created_at, rowid");
    s.bind(1, workspaceId);
    return collect<ContextRecord>(s, readContext);
}

Result<void> Store::deleteContext(const QString &id)
{
    // One statement: cascades to executions and events; a trigger deletes the context's env.
    Statement s(*m_db, "DELETE FROM contexts WHERE id = ?1");
    s.bind(1, id);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("delete context %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("context"), id);
    m_lastSeq.remove(id);  // its history is gone: a context made again with this id starts at 1
    return {};
}

// Snapshots

Result<void> Store::saveSnapshot(const SnapshotRecord &snapshot)
{
    if (auto r = m_db->checkEnclosingTransaction(); !r)
        return failed(QStringLiteral("save the snapshot of context %1").arg(snapshot.contextId),
                      r.error());
    Statement s(*m_db, "INSERT OR REPLACE INTO context_snapshots "
                       "(context_id, execution_count, format, data, error, lost, created_at) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    s.bind(1, snapshot.contextId);
    s.bind(2, snapshot.executionCount);
    s.bind(3, snapshot.format);
    if (snapshot.error.isEmpty())
        s.bind(4, snapshot.data);
    else
        s.bindNull(4);
    s.bind(5, snapshot.error);
    s.bind(6, snapshot.lost.isEmpty() ? QStringLiteral("[]") : snapshot.lost);
    s.bind(7, snapshot.createdAt);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("save the snapshot of context %1").arg(snapshot.contextId),
                      r.error());
    return {};
}

Result<std::optional<SnapshotRecord>> Store::snapshot(const QString &contextId)
{
    Statement s(*m_db, "SELECT context_id, execution_count, format, data, error, lost, created_at "
                       "FROM context_snapshots WHERE context_id = ?1");
    s.bind(1, contextId);
    return first<SnapshotRecord>(s, [](const Statement &row) {
        SnapshotRecord snapshot;
        snapshot.contextId = row.columnString(0);
        snapshot.executionCount = row.columnInt(1);
        snapshot.format = row.columnString(2);
        snapshot.data = row.columnBlob(3);
        snapshot.error = row.columnString(4);
        snapshot.lost = row.columnString(5);
        snapshot.createdAt = row.columnInt64(6);
        return snapshot;
    });
}

Result<void> Store::deleteSnapshot(const QString &contextId)
{
    Statement s(*m_db, "DELETE FROM context_snapshots WHERE context_id = ?1");
    s.bind(1, contextId);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("delete the snapshot of context %1").arg(contextId),
                      r.error());
    return {};
}

// Executions

void Store::forgetExecutionSeqs()
{
    m_lastSeq.clear();
}

Result<quint64> Store::pendingLogApplied()
{
    Statement s(*m_db, "SELECT value FROM meta WHERE key = 'pending_log_applied'");
    auto row = s.step();
    if (!row)
        return failed(QStringLiteral("read the pending log's position"), row.error());
    return *row ? s.columnString(0).toULongLong() : quint64(0);
}

Result<void> Store::setPendingLogApplied(quint64 seq)
{
    Statement s(*m_db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('pending_log_applied', ?1)");
    s.bind(1, QString::number(seq));
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("record the pending log's position"), r.error());
    return {};
}

Result<qint64> Store::nextExecutionSeq(const QString &contextId)
{
    // The caller holds the write lock (a transaction of its own or an enclosing one), so no other
    // connection can commit between this look-up and the insert that uses it. data_version
    // changes when another connection has committed since this one last looked: what this one
    // remembers may be stale then, and is dropped.
    Statement version(*m_db, "PRAGMA data_version");
    auto row = version.step();
    if (!row)
        return row.error();
    const qint64 dataVersion = *row ? version.columnInt64(0) : -1;
    if (dataVersion != m_seqDataVersion || m_db->rollbackCount() != m_seqRollbackCount) {
        forgetExecutionSeqs();
        m_seqDataVersion = dataVersion;
        m_seqRollbackCount = m_db->rollbackCount();
    }
    if (auto it = m_lastSeq.constFind(contextId); it != m_lastSeq.constEnd())
        return *it + 1;
    Statement highest(*m_db, "SELECT COALESCE(MAX(seq), 0) FROM executions WHERE context_id = ?1");
    highest.bind(1, contextId);
    if (auto found = highest.step(); !found)
        return found.error();
    return highest.columnInt64(0) + 1;
}

Result<ExecutionRecord> Store::insertExecution(ExecutionRecord e)
{
    if (e.id.isEmpty())
        e.id = newId();
    if (e.status.isEmpty())
        e.status = QStringLiteral("running");
    const auto fail = [&e](const Error &cause) {
        return failed(QStringLiteral("record execution %1").arg(e.id), cause);
    };

    // The seq look-up and the INSERT must not be split by another connection's insert. Alone,
    // that takes a transaction. Inside an enclosing one (the history writer's batch) the write
    // lock is held already, and a single INSERT that fails undoes only itself, so no savepoint
    // is needed.
    std::optional<Transaction> tx;
    if (m_db->inTransaction()) {
        if (auto r = m_db->checkEnclosingTransaction(); !r)
            return fail(r.error());
    } else {
        tx.emplace(*m_db);
        if (!tx->ok())
            return fail(tx->error());
    }
    for (int attempt = 0;; ++attempt) {
        auto seq = nextExecutionSeq(e.contextId);
        if (!seq)
            return fail(seq.error());
        Statement insert(*m_db,
                         "INSERT INTO executions (" EXECUTION_COLUMNS ") "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULLIF(?13, ''))");
        insert.bind(1, e.id);
        insert.bind(2, e.contextId);
        insert.bind(3, *seq);
        insert.bind(4, e.code);
        insert.bind(5, e.status);
        insert.bind(6, e.executionCount);
        insert.bind(7, e.startedAt);
        insert.bind(8, e.durationMs);
        insert.bind(9, e.outputBytes);
        insert.bind(10, e.truncated ? 1 : 0);
        insert.bind(11, e.replay ? 1 : 0);
        insert.bind(12, e.outputPruned ? 1 : 0);
        insert.bind(13, e.inputs);
        if (auto r = insert.run(); !r) {
            // UNIQUE is (context_id, seq); a duplicate id is a PRIMARYKEY violation. A taken seq
            // means what this connection remembered was wrong after all: ask the table, once.
            if (m_db->lastExtendedErrorCode() == SQLITE_CONSTRAINT_UNIQUE) {
                m_lastSeq.remove(e.contextId);
                if (attempt == 0)
                    continue;
                return fail(r.error());
            }
            if (r.error().code == kNotFound)
                return notFound(QStringLiteral("context"), e.contextId);
            if (r.error().code == kConflict) {
                return makeError(kConflict,
                                 QStringLiteral("an execution with id %1 already exists").arg(e.id));
            }
            return fail(r.error());
        }
        e.seq = *seq;
        break;
    }
    m_lastSeq.insert(e.contextId, e.seq);
    if (tx) {
        // A failed commit rolls back, which also makes this connection forget the seq.
        if (auto r = tx->commit(); !r)
            return fail(r.error());
    }
    return e;
}

Result<void> Store::finishExecution(const QString &id, const QString &status, qint64 durationMs,
                                    qint64 outputBytes, bool truncated, const QString &inputs)
{
    if (auto r = m_db->checkEnclosingTransaction(); !r)
        return failed(QStringLiteral("finish execution %1").arg(id), r.error());
    Statement s(*m_db, "UPDATE executions SET status = ?2, duration_ms = ?3, output_bytes = ?4, "
                       "truncated = ?5, inputs = NULLIF(?6, '') WHERE id = ?1");
    s.bind(1, id);
    s.bind(2, status);
    s.bind(3, durationMs);
    s.bind(4, outputBytes);
    s.bind(5, truncated ? 1 : 0);
    s.bind(6, inputs);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("finish execution %1").arg(id), r.error());
    if (m_db->changes() == 0)
        return notFound(QStringLiteral("execution"), id);
    return {};
}

Result<void> Store::appendEvents(const QList<ExecutionEventRecord> &events)
{
    if (events.isEmpty())
        return {};
    if (events.size() == 1)
        return appendEvent(events.first());
    Transaction tx(*m_db);
    if (!tx.ok())
        return failed(QStringLiteral("store events"), tx.error());
    Statement s(*m_db,
                "INSERT INTO execution_events (execution_id, seq, json) VALUES (?1, ?2, ?3)");
    for (const ExecutionEventRecord &event : events) {
        s.reset();
        s.bind(1, event.executionId);
        s.bind(2, event.seq);
        s.bind(3, event.json);
        if (auto r = s.run(); !r)
            return eventError(r.error(), event);
    }
    return tx.commit();
}

Result<void> Store::appendEvent(const ExecutionEventRecord &event)
{
    // One statement is atomic by itself: no transaction, and no savepoint inside an enclosing one.
    if (auto r = m_db->checkEnclosingTransaction(); !r)
        return failed(QStringLiteral("store events"), r.error());
    Statement s(*m_db,
                "INSERT INTO execution_events (execution_id, seq, json) VALUES (?1, ?2, ?3)");
    s.bind(1, event.executionId);
    s.bind(2, event.seq);
    s.bind(3, event.json);
    if (auto r = s.run(); !r)
        return eventError(r.error(), event);
    return {};
}

Result<std::optional<ExecutionRecord>> Store::execution(const QString &id)
{
    Statement s(*m_db, "SELECT " EXECUTION_COLUMNS " FROM executions WHERE id = ?1");
    s.bind(1, id);
    return first<ExecutionRecord>(s, readExecution);
}

Result<QList<ExecutionRecord>> Store::executions(const QString &contextId, qint64 beforeSeq,
                                                 int limit)
{
    // A negative limit means no limit and 0 means no rows, as LIMIT does in SQLite.
    Statement s(*m_db, "SELECT " EXECUTION_COLUMNS " FROM executions "
                       "WHERE context_id = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3");
    s.bind(1, contextId);
    s.bind(2, beforeSeq > 0 ? beforeSeq : std::numeric_limits<qint64>::max());
    s.bind(3, limit);
    return collect<ExecutionRecord>(s, readExecution);
}

Result<QList<ExecutionRecord>> Store::replayableExecutions(const QString &contextId,
                                                            int afterExecutionCount)
{
    Statement s(*m_db, "SELECT " EXECUTION_COLUMNS " FROM executions "
                       "WHERE context_id = ?1 AND status = 'ok' AND replay = 1 "
                       "AND execution_count > ?2 "
                       "ORDER BY seq");
    s.bind(1, contextId);
    s.bind(2, afterExecutionCount);
    return collect<ExecutionRecord>(s, readExecution);
}

Result<int> Store::prunedExecutionCount(const QString &contextId)
{
    Statement s(*m_db, "SELECT pruned_count FROM contexts WHERE id = ?1");
    s.bind(1, contextId);
    auto count = first<int>(s, [](const Statement &row) { return row.columnInt(0); });
    if (!count)
        return count.error();
    if (!count->has_value())
        return notFound(QStringLiteral("context"), contextId);
    return **count;
}

Result<Store::DatabaseSize> Store::databaseSize()
{
    // page_count and freelist_count read the header of the main file (and the WAL's newer copy
    // of it): no table is scanned.
    Statement s(*m_db, "SELECT page_count * page_size, freelist_count * page_size, auto_vacuum "
                       "FROM pragma_page_count(), pragma_page_size(), pragma_freelist_count(), "
                       "pragma_auto_vacuum()");
    auto row = s.step();
    if (!row)
        return row.error();
    DatabaseSize size;
    if (*row) {
        size.bytes = s.columnInt64(0);
        size.freeBytes = s.columnInt64(1);
        size.incrementalVacuum = s.columnInt(2) == 2;
    }
    size.walBytes = QFileInfo(m_db->path() + QStringLiteral("-wal")).size();
    return size;
}

Result<QList<ExecutionEventRecord>> Store::events(const QString &executionId)
{
    return events(executionId, 0, INT_MAX);
}

Result<QList<ExecutionEventRecord>> Store::events(const QString &executionId, int fromSeq,
                                                  int toSeq)
{
    Statement s(*m_db, "SELECT execution_id, seq, json FROM execution_events "
                       "WHERE execution_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq");
    s.bind(1, executionId);
    s.bind(2, fromSeq);
    s.bind(3, toSeq);
    return collect<ExecutionEventRecord>(s, [](const Statement &row) {
        return ExecutionEventRecord{row.columnString(0), row.columnInt(1), row.columnBlob(2)};
    });
}

Result<int> Store::abandonRunningExecutions(const QString &status)
{
    Statement s(*m_db, "UPDATE executions SET status = ?1 WHERE status = 'running'");
    s.bind(1, status);
    if (auto r = s.run(); !r)
        return failed(QStringLiteral("mark unfinished executions"), r.error());
    return static_cast<int>(m_db->changes());
}

Result<void> Store::transaction(const std::function<Result<void>()> &work)
{
    Transaction tx(*m_db);
    if (!tx.ok())
        return tx.error();
    if (auto r = work(); !r)
        return r;  // tx rolls back
    return tx.commit();
}

} // namespace replhost::storage
