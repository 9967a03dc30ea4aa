// SPDX-License-Identifier: Apache-2.0
#include "storagetest.h"

#include "storage/database.h"
#include "storage/migrations.h"
#include "storage/store.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <thread>
#include <vector>

using namespace replhost;
using namespace replhost::storage;
using replhost::storage::test::RawDatabase;

namespace {

// Rows written the way replhost at schema `version` wrote them, with that version's SQL. A new
// schema version that changes what is stored adds a branch here (never changes an old one) and
// checks it in verifySeed.
void seedAtVersion(RawDatabase &raw, int version)
{
    if (version >= 1) {
        const QString error = raw.exec(R"sql(
INSERT INTO workspaces (id, name, directory, created_at) VALUES ('w1', 'seeded', '/w', 1);
INSERT INTO contexts (id, workspace_id, language, name, cwd, execution_count, created_at,
                      last_used_at)
    VALUES ('c1', 'w1', 'python', 'old', '/w', 1, 2, 3);
INSERT INTO env_vars (scope, scope_id, key, value, is_unset) VALUES
    ('workspace', 'w1', 'A', 'a', 0), ('context', 'c1', 'B', '', 1);
INSERT INTO executions (id, context_id, seq, code, status, execution_count, started_at,
                        duration_ms, output_bytes, truncated)
    VALUES ('e1', 'c1', 1, 'print(1)', 'ok', 1, 4, 5, 6, 0);
INSERT INTO execution_events (execution_id, seq, json) VALUES ('e1', 0, X'7B7D');
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    if (version >= 2) {
        const QString error = raw.exec(R"sql(
INSERT INTO contexts (id, workspace_id, language, name, cwd, execution_count, created_at,
                      last_used_at, restore_policy, replay_base_count, replay_base_cwd)
    VALUES ('c2', 'w1', 'bash', 'durable', '/w/sub', 3, 5, 6, 'fresh', 2, '/w');
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    if (version >= 3) {
        const QString error = raw.exec(R"sql(
INSERT INTO workspaces (id, name, directory, created_at, settings)
    VALUES ('w2', 'limited', '/l', 7, '{"limits":{"max_contexts":2}}');
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    if (version >= 4) {
        const QString error = raw.exec(R"sql(
INSERT INTO context_snapshots (context_id, execution_count, format, data, error, lost, created_at)
    VALUES ('c2', 3, 'bash-source', X'783D31', '', '["background jobs"]', 8);
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    if (version >= 5) {
        const QString error = raw.exec(R"sql(
INSERT INTO executions (id, context_id, seq, code, status, execution_count, started_at,
                        duration_ms, output_bytes, truncated, replay)
    VALUES ('e2', 'c1', 2, 'deploy()', 'ok', 2, 7, 8, 0, 0, 0);
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    if (version >= 7) {
        const QString error = raw.exec(R"sql(
INSERT INTO executions (id, context_id, seq, code, status, execution_count, started_at,
                        duration_ms, output_bytes, truncated, replay, inputs)
    VALUES ('e3', 'c1', 3, 'name = input()', 'ok', 3, 9, 10, 0, 0, 1, '[{"value":"ada"}]');
)sql");
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
}

// What seedAtVersion(version) wrote, read back through the current API.
void verifySeed(Store &store, int version)
{
    if (version < 1)
        return;
    auto ws = store.workspaceByName(QStringLiteral("seeded"));
    QVERIFY_OK(ws);
    QVERIFY(ws->has_value());
    QCOMPARE((*ws)->id, QStringLiteral("w1"));
    // Workspaces from before schema 3 have no settings of their own: the server's defaults.
    QCOMPARE((*ws)->settings, QStringLiteral("{}"));
    auto ctx = store.context(QStringLiteral("c1"));
    QVERIFY_OK(ctx);
    QVERIFY(ctx->has_value());
    QCOMPARE((*ctx)->name, QStringLiteral("old"));
    // Schema 1 recorded no replay base: a context upgraded from it replays nothing it ran then.
    QCOMPARE((*ctx)->restorePolicy, RestorePolicy::Replay);
    QCOMPARE((*ctx)->replayBaseCount, version >= 2 ? 0 : 1);
    QCOMPARE((*ctx)->replayBaseCwd, version >= 2 ? QString() : QStringLiteral("/w"));
    auto env = store.env(EnvScope::Context, QStringLiteral("c1"));
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QVERIFY(env->at(0).isUnset);
    auto exec = store.execution(QStringLiteral("e1"));
    QVERIFY_OK(exec);
    QVERIFY(exec->has_value());
    QCOMPARE((*exec)->seq, 1);
    auto events = store.events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
    QCOMPARE(events->at(0).json, QByteArray("{}"));
    // Runs from before schema 5 were all replayable, and stay so.
    QCOMPARE((*exec)->replay, true);
    if (version < 2)
        return;
    auto durable = store.context(QStringLiteral("c2"));
    QVERIFY_OK(durable);
    QVERIFY(durable->has_value());
    QCOMPARE((*durable)->restorePolicy, RestorePolicy::Fresh);
    QCOMPARE((*durable)->replayBaseCount, 2);
    QCOMPARE((*durable)->replayBaseCwd, QStringLiteral("/w"));
    if (version < 3)
        return;
    auto limited = store.workspaceByName(QStringLiteral("limited"));
    QVERIFY_OK(limited);
    QVERIFY(limited->has_value());
    QCOMPARE((*limited)->settings, QStringLiteral(R"({"limits":{"max_contexts":2}})"));
    // Contexts from before schema 4 have no snapshot: they restore by replay.
    auto none = store.snapshot(QStringLiteral("c1"));
    QVERIFY_OK(none);
    QVERIFY(!none->has_value());
    if (version < 4)
        return;
    auto snapshot = store.snapshot(QStringLiteral("c2"));
    QVERIFY_OK(snapshot);
    QVERIFY(snapshot->has_value());
    QCOMPARE((*snapshot)->executionCount, 3);
    QCOMPARE((*snapshot)->format, QStringLiteral("bash-source"));
    QCOMPARE((*snapshot)->data, QByteArray("x=1"));
    QCOMPARE((*snapshot)->lost, QStringLiteral(R"(["background jobs"])"));
    QVERIFY((*snapshot)->isUsable());
    if (version < 5)
        return;
    auto never = store.execution(QStringLiteral("e2"));
    QVERIFY_OK(never);
    QVERIFY(never->has_value());
    QCOMPARE((*never)->replay, false);
    // A restore of c1 replays e1, never e2.
    auto replayable = store.replayableExecutions(QStringLiteral("c1"), 0);
    QVERIFY_OK(replayable);
    QCOMPARE(replayable->size(), version >= 7 ? 2 : 1);
    QCOMPARE(replayable->at(0).id, QStringLiteral("e1"));
    // Runs from before schema 7 have no answers recorded: a restore gives them the end of input.
    QCOMPARE(replayable->at(0).inputs, QString());
    if (version < 7)
        return;
    QCOMPARE(replayable->at(1).inputs, QStringLiteral(R"([{"value":"ada"}])"));
}

// The schema as SQLite records it, to compare an upgraded file with a fresh one.
QString schemaOf(const QString &path)
{
    RawDatabase raw(path);
    return raw.value("SELECT group_concat(type || ' ' || name || ': ' || ifnull(sql, ''), "
                     "char(10)) FROM (SELECT * FROM sqlite_master ORDER BY type, name)");
}

} // namespace

class TstMigrations : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void freshDatabaseGetsCurrentSchema();
    void migrationFromEachVersionReachesCurrent_data();
    void migrationFromEachVersionReachesCurrent();
    void reopeningChangesNothing();
    void olderFileIsRewrittenForIncrementalVacuum_data();
    void olderFileIsRewrittenForIncrementalVacuum();
    void newerSchemaIsRefused();
    void newerCompatibleSchemaIsUsedAsIs();
    void foreignDatabaseIsRefused();
    void fileThatIsNotSqliteIsRefused();
    void damagedMetaIsRefused();
    void unknownTargetVersionIsRefused();
    void concurrentOpensMigrateOnce();

private:
    QString path(const char *name = "replhost.db") const
    {
        return m_dir->filePath(QString::fromLatin1(name));
    }
    std::unique_ptr<QTemporaryDir> m_dir;
};

void TstMigrations::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TstMigrations::cleanup()
{
    m_dir.reset();
}

void TstMigrations::freshDatabaseGetsCurrentSchema()
{
    auto store = Store::open(path());
    QVERIFY_OK(store);
    QCOMPARE(Store::currentSchemaVersion(), migrations::currentVersion());
    QCOMPARE((*store)->schemaVersion(), Store::currentSchemaVersion());
    RawDatabase raw(path());
    QCOMPARE(raw.value("SELECT value FROM meta WHERE key = 'schema_version'").toInt(),
             migrations::currentVersion());
    QVERIFY(raw.value("SELECT value FROM meta WHERE key = 'compatible_version'").toInt() >= 1);
    for (const char *table : {"workspaces", "env_vars", "contexts", "executions",
                              "execution_events"}) {
        const QByteArray sql = "SELECT COUNT(*) FROM sqlite_master "
                               "WHERE type = 'table' AND name = '"
                               + QByteArray(table) + "'";
        QCOMPARE(raw.value(sql.constData()), QStringLiteral("1"));
    }
}

void TstMigrations::migrationFromEachVersionReachesCurrent_data()
{
    QTest::addColumn<int>("fromVersion");
    QTest::newRow("new file") << 0;
    for (int v = 1; v <= migrations::currentVersion(); ++v)
        QTest::addRow("schema %d", v) << v;
}

void TstMigrations::migrationFromEachVersionReachesCurrent()
{
    QFETCH(int, fromVersion);
    {
        auto db = Database::open(path());
        QVERIFY_OK(db);
        auto v = migrations::migrate(**db, fromVersion);
        QVERIFY_OK(v);
        QCOMPARE(v->version, fromVersion);
    }
    {
        RawDatabase raw(path());
        seedAtVersion(raw, fromVersion);
    }
    if (QTest::currentTestFailed())
        return;

    {
        auto store = Store::open(path());
        QVERIFY_OK(store);
        QCOMPARE((*store)->schemaVersion(), Store::currentSchemaVersion());
        verifySeed(**store, fromVersion);
    }
    // An upgraded file has exactly the schema of a new one.
    {
        auto fresh = Store::open(path("fresh.db"));
        QVERIFY_OK(fresh);
    }
    QCOMPARE(schemaOf(path()), schemaOf(path("fresh.db")));
}

void TstMigrations::olderFileIsRewrittenForIncrementalVacuum_data()
{
    QTest::addColumn<int>("fromVersion");
    for (int v = 1; v < 6; ++v)
        QTest::addRow("schema %d", v) << v;
}

// Files made before schema 6 have auto_vacuum=NONE, which only a VACUUM changes: opening one
// rewrites it once, with its rows, so that retention can give freed pages back.
void TstMigrations::olderFileIsRewrittenForIncrementalVacuum()
{
    QFETCH(int, fromVersion);
    {
        // As replhost before schema 6 made its files: WAL first, which fixes the mode.
        RawDatabase raw(path());
        QCOMPARE(raw.value("PRAGMA journal_mode = WAL"), QStringLiteral("wal"));
    }
    {
        auto db = Database::open(path());
        QVERIFY_OK(db);
        QVERIFY_OK(migrations::migrate(**db, fromVersion));
    }
    {
        RawDatabase raw(path());
        QCOMPARE(raw.value("PRAGMA auto_vacuum"), QStringLiteral("0"));
        seedAtVersion(raw, fromVersion);
    }
    if (QTest::currentTestFailed())
        return;
    {
        auto store = Store::open(path());
        QVERIFY_OK(store);
        auto size = (*store)->databaseSize();
        QVERIFY_OK(size);
        QVERIFY(size->incrementalVacuum);
        verifySeed(**store, fromVersion);
    }
    RawDatabase raw(path());
    QCOMPARE(raw.value("PRAGMA auto_vacuum"), QStringLiteral("2"));
    QCOMPARE(raw.value("PRAGMA journal_mode"), QStringLiteral("wal"));
}

void TstMigrations::reopeningChangesNothing()
{
    { QVERIFY_OK(Store::open(path())); }
    const QString before = schemaOf(path());
    RawDatabase raw(path());
    const QString metaBefore = raw.value("SELECT group_concat(key || '=' || value) FROM meta");
    { QVERIFY_OK(Store::open(path())); }
    QCOMPARE(schemaOf(path()), before);
    QCOMPARE(raw.value("SELECT group_concat(key || '=' || value) FROM meta"), metaBefore);
    QCOMPARE(raw.value("SELECT COUNT(*) FROM meta"), QStringLiteral("2"));
}

void TstMigrations::newerSchemaIsRefused()
{
    { QVERIFY_OK(Store::open(path())); }
    const int newer = migrations::currentVersion() + 1;
    {
        RawDatabase raw(path());
        const QByteArray sql = "UPDATE meta SET value = " + QByteArray::number(newer)
                               + " WHERE key IN ('schema_version', 'compatible_version');"
                                 "CREATE TABLE from_the_future (x);";
        const QString error = raw.exec(sql.constData());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    const QString schemaBefore = schemaOf(path());

    auto store = Store::open(path());
    QVERIFY_ERROR(store, "storage");
    const QString expected = QStringLiteral("database %1 was written by a newer replhost "
                                            "(schema %2); upgrade replhost")
                                 .arg(path())
                                 .arg(newer);
    QCOMPARE(store.error().message, expected);
    // Refused without touching it.
    QCOMPARE(schemaOf(path()), schemaBefore);
    RawDatabase raw(path());
    QCOMPARE(raw.value("SELECT value FROM meta WHERE key = 'schema_version'").toInt(), newer);
}

void TstMigrations::newerCompatibleSchemaIsUsedAsIs()
{
    { QVERIFY_OK(Store::open(path())); }
    const int newer = migrations::currentVersion() + 1;
    {
        // A newer replhost that only added a table keeps the compatible version down.
        RawDatabase raw(path());
        const QByteArray sql = "UPDATE meta SET value = " + QByteArray::number(newer)
                               + " WHERE key = 'schema_version'; CREATE TABLE added_later (x);";
        const QString error = raw.exec(sql.constData());
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    auto store = Store::open(path());
    QVERIFY_OK(store);
    QCOMPARE((*store)->schemaVersion(), newer);
    QVERIFY_OK((*store)->createWorkspace(QStringLiteral("w"), QStringLiteral("/w")));
    RawDatabase raw(path());
    QCOMPARE(raw.value("SELECT value FROM meta WHERE key = 'schema_version'").toInt(), newer);
}

void TstMigrations::foreignDatabaseIsRefused()
{
    {
        RawDatabase raw(path());
        QCOMPARE(raw.exec("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x')"),
                 QString());
    }
    auto store = Store::open(path());
    QVERIFY_ERROR(store, "storage");
    QVERIFY2(store.error().message.contains(QStringLiteral("not a replhost database")),
             qPrintable(store.error().message));
    RawDatabase raw(path());
    QCOMPARE(raw.value("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"),
             QStringLiteral("1"));
}

void TstMigrations::fileThatIsNotSqliteIsRefused()
{
    const QByteArray content(4096, 'x');
    {
        QFile f(path());
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
    }
    auto store = Store::open(path());
    QVERIFY_ERROR(store, "storage");
    QVERIFY2(store.error().message.contains(QStringLiteral("not a replhost database")),
             qPrintable(store.error().message));
    QFile f(path());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), content);
}

void TstMigrations::damagedMetaIsRefused()
{
    { QVERIFY_OK(Store::open(path())); }
    {
        RawDatabase raw(path());
        QCOMPARE(raw.exec("DELETE FROM meta WHERE key = 'compatible_version'"), QString());
    }
    auto store = Store::open(path());
    QVERIFY_ERROR(store, "storage");
    QVERIFY2(store.error().message.contains(QStringLiteral("no valid schema version")),
             qPrintable(store.error().message));
}

void TstMigrations::unknownTargetVersionIsRefused()
{
    auto db = Database::open(path());
    QVERIFY_OK(db);
    QVERIFY_ERROR(migrations::migrate(**db, migrations::currentVersion() + 1), "storage");
    auto v = migrations::readVersion(**db);
    QVERIFY_OK(v);
    QCOMPARE(v->version, 0);
}

void TstMigrations::concurrentOpensMigrateOnce()
{
    // Several connections finding the same new file at once: each step runs once, and every
    // opener ends up with the current schema.
    constexpr int kOpeners = 8;
    std::vector<std::optional<Error>> errors(kOpeners);
    std::vector<std::thread> threads;
    for (int i = 0; i < kOpeners; ++i) {
        threads.emplace_back([this, i, &errors] {
            auto store = Store::open(path());
            if (!store)
                errors[i] = store.error();
            else if ((*store)->schemaVersion() != Store::currentSchemaVersion())
                errors[i] = makeError(QStringLiteral("test"), QStringLiteral("wrong version"));
        });
    }
    for (std::thread &t : threads)
        t.join();
    for (const auto &error : errors)
        QVERIFY2(!error, error ? qPrintable(error->message) : "");
    { QVERIFY_OK(Store::open(path("fresh.db"))); }
    QCOMPARE(schemaOf(path()), schemaOf(path("fresh.db")));
}

QTEST_GUILESS_MAIN(TstMigrations)
#include "tst_migrations.moc"
