// SPDX-License-Identifier: Apache-2.0
#include "migrations.h"

#include "database.h"
#include "statement.h"
#include "transaction.h"

#include <iterator>

namespace replhost::storage::migrations {

namespace {

struct Migration {
    int version;            // the schema this step produces
    int compatibleVersion;  // recorded with it: the oldest schema that can use the result
    const char *sql;
};

// Append only. Invariants of the schema that the code relies on:
// - Every row hangs off a workspace: deleting one cascades through contexts to executions and
//   their events (foreign keys, enforced by Database).
// - env_vars.scope_id cannot have a foreign key (it names a workspace or a context), so triggers
//   delete a layer with its owner; they also fire for rows deleted by a cascade.
// - seq is unique per context (executions) and per execution (events); the unique indexes also
//   serve paging newest first and MAX(seq).
// - Times are milliseconds since the Unix epoch; booleans are 0 or 1.
constexpr Migration kMigrations[] = {
    {1, 1, R"sql(
CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE workspaces (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    directory  TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE env_vars (
    scope    TEXT NOT NULL CHECK (scope IN ('workspace', 'context')),
    scope_id TEXT NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL DEFAULT '',
    is_unset INTEGER NOT NULL DEFAULT 0 CHECK (is_unset IN (0, 1)),
    PRIMARY KEY (scope, scope_id, key)
) WITHOUT ROWID;

CREATE TABLE contexts (
    id              TEXT NOT NULL PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    language        TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    cwd             TEXT NOT NULL,
    execution_count INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    last_used_at    INTEGER NOT NULL
);
CREATE INDEX contexts_by_workspace ON contexts (workspace_id, created_at);

CREATE TABLE executions (
    id              TEXT NOT NULL PRIMARY KEY,
    context_id      TEXT NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    code            TEXT NOT NULL,
    status          TEXT NOT NULL,
    execution_count INTEGER NOT NULL DEFAULT 0,
    started_at      INTEGER NOT NULL,
    duration_ms     INTEGER NOT NULL DEFAULT -1,
    output_bytes    INTEGER NOT NULL DEFAULT 0,
    truncated       INTEGER NOT NULL DEFAULT 0 CHECK (truncated IN (0, 1)),
    UNIQUE (context_id, seq)
);
-- Only the few unfinished rows, for abandoning them at start-up.
CREATE INDEX executions_running ON executions (status) WHERE status = 'running';

CREATE TABLE execution_events (
    execution_id TEXT NOT NULL REFERENCES executions (id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    json         BLOB NOT NULL,
    PRIMARY KEY (execution_id, seq)
) WITHOUT ROWID;

CREATE TRIGGER workspaces_delete_env AFTER DELETE ON workspaces BEGIN
    DELETE FROM env_vars WHERE scope = 'workspace' AND scope_id = OLD.id;
END;
CREATE TRIGGER contexts_delete_env AFTER DELETE ON contexts BEGIN
    DELETE FROM env_vars WHERE scope = 'context' AND scope_id = OLD.id;
END;
)sql"},
    // Durable contexts: the restore policy and the replay base (see ContextRecord). Schema 1
    // recorded neither restarts nor the cwd a context started in, so its histories are not
    // replayed: the base of every existing context is where it stands now. Compatible only with
    // 2: a schema 1 replhost would restart contexts without moving their base.
    {2, 2, R"sql(
ALTER TABLE contexts ADD COLUMN restore_policy TEXT NOT NULL DEFAULT 'replay'
    CHECK (restore_policy IN ('replay', 'fresh'));
ALTER TABLE contexts ADD COLUMN replay_base_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE contexts ADD COLUMN replay_base_cwd TEXT NOT NULL DEFAULT '';
UPDATE contexts SET replay_base_count = execution_count, replay_base_cwd = cwd;
)sql"},
    // Workspace settings: the workspace's own choices as a JSON object (core::WorkspaceSettings),
    // each absent key taking the server's default. Compatible only with 3: a schema 2 replhost
    // would run every workspace without the limits an administrator set on it.
    {3, 3, R"sql(
ALTER TABLE workspaces ADD COLUMN settings TEXT NOT NULL DEFAULT '{}'
    CHECK (json_valid(settings) AND json_type(settings) = 'object');
)sql"},
    // The latest state snapshot of a context (core::Context, "Snapshots" in docs/architecture.md):
    // one row per context, replaced by each newer one. `data` is NULL when the interpreter could
    // not take one (`error` says why): the context then falls back to replay. Compatible only
    // with 4: a schema 3 replhost would run a context on without replacing its snapshot, which
    // would then stand for runs it never saw.
    {4, 4, R"sql(
CREATE TABLE context_snapshots (
    context_id      TEXT NOT NULL PRIMARY KEY REFERENCES contexts (id) ON DELETE CASCADE,
    execution_count INTEGER NOT NULL,
    format          TEXT NOT NULL,
    data            BLOB,
    error           TEXT NOT NULL DEFAULT '',
    lost            TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(lost) AND json_type(lost) = 'array'),
    created_at      INTEGER NOT NULL
);
)sql"},
    // Runs marked never to be replayed (a side effect such as a deployment or a payment): a
    // restore skips them. Compatible only with 5: a schema 4 replhost would replay them.
    {5, 5, R"sql(
ALTER TABLE executions ADD COLUMN replay INTEGER NOT NULL DEFAULT 1 CHECK (replay IN (0, 1));
)sql"},
    // Retention (storage::HistoryPruner): an execution beyond its workspace's history limits
    // loses its events (output_pruned) and, unless a restore needs its code, its row.
    // stored_bytes is what its code and events take, measured once it has finished (NULL until
    // then); contexts.pruned_count is the highest execution count that a replay from the base
    // would have run and that is gone because a snapshot covered it. Compatible only with 6: a
    // schema 5 replhost would replay such a context from its base without the executions that
    // are gone, and call the result complete. The file's auto_vacuum mode is changed by
    // Store::open, outside this transaction (it needs a VACUUM).
    {6, 6, R"sql(
ALTER TABLE executions ADD COLUMN output_pruned INTEGER NOT NULL DEFAULT 0
    CHECK (output_pruned IN (0, 1));
ALTER TABLE executions ADD COLUMN stored_bytes INTEGER;
CREATE INDEX executions_unmeasured ON executions (started_at) WHERE stored_bytes IS NULL;
ALTER TABLE contexts ADD COLUMN pruned_count INTEGER NOT NULL DEFAULT 0;
)sql"},
    // The answers a run's questions were given (a JSON array; NULL: it asked none), which a
    // restore gives the replayed run again. Compatible with 6: a schema 6 replhost replays such a
    // run with the end of input, as it always did.
    {7, 6, R"sql(
ALTER TABLE executions ADD COLUMN inputs TEXT
    CHECK (inputs IS NULL OR (json_valid(inputs) AND json_type(inputs) = 'array'));
)sql"},
};

constexpr bool numberedFromOneWithoutGaps()
{
    int expected = 1;
    for (const Migration &m : kMigrations) {
        if (m.version != expected++ || m.compatibleVersion < 1 || m.compatibleVersion > m.version)
            return false;
    }
    return true;
}
static_assert(numberedFromOneWithoutGaps(), "migrations are numbered 1, 2, 3, … in order");

constexpr int kCurrentVersion = static_cast<int>(std::size(kMigrations));

Error storageError(QString message)
{
    return makeError(QStringLiteral("storage"), std::move(message));
}

Result<void> checkCompatible(const Database &db, const SchemaVersion &v)
{
    if (v.compatibleVersion <= kCurrentVersion)
        return {};
    return storageError(QStringLiteral("database %1 was written by a newer replhost (schema %2); "
                                       "upgrade replhost")
                            .arg(db.path())
                            .arg(v.version));
}

Result<void> writeVersion(Database &db, const SchemaVersion &v)
{
    Statement s(db, "INSERT OR REPLACE INTO meta (key, value) VALUES "
                    "('schema_version', :version), ('compatible_version', :compatible)");
    s.bind(":version", v.version);
    s.bind(":compatible", v.compatibleVersion);
    return s.run();
}

} // namespace

int currentVersion()
{
    return kCurrentVersion;
}

Result<SchemaVersion> readVersion(Database &db)
{
    Statement tables(db, "SELECT COUNT(*), COALESCE(SUM(name = 'meta'), 0) "
                         "FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
                         "ESCAPE '\\'");
    auto row = tables.step();
    if (!row)
        return row.error();
    const qint64 tableCount = tables.columnInt64(0);
    const bool hasMeta = tables.columnInt64(1) > 0;
    if (!hasMeta) {
        if (tableCount == 0)
            return SchemaVersion{};
        return storageError(QStringLiteral("%1 is not a replhost database (it has tables but no "
                                           "meta table); move it away or use another data "
                                           "directory")
                                .arg(db.path()));
    }

    Statement meta(db, "SELECT key, value FROM meta "
                       "WHERE key IN ('schema_version', 'compatible_version')");
    SchemaVersion v;
    int found = 0;
    for (;;) {
        auto next = meta.step();
        if (!next)
            return next.error();
        if (!*next)
            break;
        ++found;
        if (meta.columnString(0) == QLatin1String("schema_version"))
            v.version = meta.columnInt(1);
        else
            v.compatibleVersion = meta.columnInt(1);
    }
    if (found != 2 || v.version < 1 || v.compatibleVersion < 1) {
        return storageError(QStringLiteral("database %1 has no valid schema version in its meta "
                                           "table; it is damaged or not a replhost database")
                                .arg(db.path()));
    }
    return v;
}

Result<SchemaVersion> migrate(Database &db, int targetVersion)
{
    if (targetVersion < 0 || targetVersion > kCurrentVersion) {
        return storageError(QStringLiteral("cannot migrate to schema %1: this replhost knows "
                                           "schemas up to %2")
                                .arg(targetVersion)
                                .arg(kCurrentVersion));
    }
    auto read = readVersion(db);
    if (!read)
        return read.error();
    SchemaVersion current = *read;
    if (auto r = checkCompatible(db, current); !r)
        return r.error();

    for (const Migration &m : kMigrations) {
        if (m.version > targetVersion)
            break;
        if (m.version <= current.version)
            continue;
        auto stepError = [&](const Error &cause) {
            return makeError(cause.code, QStringLiteral("could not upgrade database %1 to schema "
                                                        "%2: %3")
                                             .arg(db.path())
                                             .arg(m.version)
                                             .arg(cause.message));
        };
        Transaction tx(db);
        if (!tx.ok())
            return stepError(tx.error());
        // Read again under the write lock: another connection may have upgraded the file
        // since the read above.
        auto locked = readVersion(db);
        if (!locked)
            return stepError(locked.error());
        current = *locked;
        if (auto r = checkCompatible(db, current); !r)
            return r.error();
        if (m.version <= current.version)
            continue;  // nothing written; tx rolls back an empty transaction

        if (auto r = db.execute(m.sql); !r)
            return stepError(r.error());
        const SchemaVersion next{m.version, m.compatibleVersion};
        if (auto r = writeVersion(db, next); !r)
            return stepError(r.error());
        if (auto r = tx.commit(); !r)
            return stepError(r.error());
        current = next;
    }
    return current;
}

} // namespace replhost::storage::migrations
