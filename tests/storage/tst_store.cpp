// SPDX-License-Identifier: Apache-2.0
#include "storagetest.h"

#include "storage/database.h"
#include "storage/statement.h"
#include "storage/store.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace replhost;
using namespace replhost::storage;
using replhost::storage::test::RawDatabase;

class TstStore : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void openCreatesMissingParentDirectory();
    void unusableLocationIsReportedClearly();
    void walModeIsOn();
    void connectionIsConfiguredForConcurrentUse();
    void reopenKeepsData();
    void secondStoreSeesCommittedWrites();
    void textRoundTripsExactly();
    void keptStatementsStartClean();
    void statementInUseTwiceGetsItsOwn();
    void releasedStatementHoldsNoSnapshot();

    void createdWorkspaceIsFoundByNameAndId();
    void workspaceNamesAreUnique();
    void workspacesAreListedOldestFirst();
    void workspaceDeleteCascadesToContextsEnvAndHistory();
    void deletingUnknownRowsIsNotFound();
    void workspaceSettingsRoundTrip();
    void workspaceSettingsMustBeAJsonObject_data();
    void workspaceSettingsMustBeAJsonObject();
    void settingsOfUnknownWorkspaceIsNotFound();

    void unsetIsDistinctFromAbsent();
    void setAndUnsetReplaceEachOther();
    void clearEnvRemovesTheKeyEntirely();
    void envIsSortedByKey();
    void envLayersAreKeptApart();
    void envOfUnknownScopeIsNotFound();

    void contextRoundTrips();
    void contextInUnknownWorkspaceIsNotFound();
    void duplicateContextIdIsConflict();
    void renameContextChangesOnlyTheName();
    void renamingUnknownContextIsNotFound();
    void updateContextUsageChangesOnlyUsage();
    void contextsAreListedOldestFirst();
    void restorePolicyAndReplayBaseRoundTrip();
    void setReplayBaseChangesOnlyTheBase();
    void snapshotIsReplacedByTheNewerOne();
    void replayableExecutionsAreTheSuccessfulOnesAfterTheBase();
    void contextDeleteCascadesToHistoryAndEnv();

    void executionSeqIncreasesPerContext();
    void executionSeqStaysUniqueAcrossConnections();
    void executionSeqFollowsOtherConnectionsWrites();
    void executionSeqIsNotSkippedAfterRollback();
    void executionSeqRestartsForARecreatedContext();
    void executionSeqInsideTransactionNeedsNoSavepoint();
    void duplicateExecutionIdIsConflict();
    void executionInUnknownContextIsNotFound();
    void finishExecutionRecordsOutcome();
    void pagingNewestFirst();
    void eventsRoundTripInOrder();
    void appendEventsIsAllOrNothing();
    void eventOfUnknownExecutionIsNotFound();
    void appendEventStoresOne();
    void abandonRunningExecutionsMarksOnlyRunning();

    void transactionRollsBackWhenWorkFails();
    void failedCallInsideTransactionUndoesOnlyItself();

private:
    QString dbPath() const { return m_dir->filePath(QStringLiteral("data/replhost.db")); }
    ContextRecord makeContext(const QString &id, const QString &workspaceId, qint64 createdAt = 1);
    WorkspaceRecord addWorkspace(const QString &name);
    ExecutionRecord addExecution(const QString &contextId, const QString &code);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Store> m_store;
    WorkspaceRecord m_workspace;  // "default", created by init()
};

void TstStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    auto store = Store::open(dbPath());
    QVERIFY_OK(store);
    m_store = std::move(*store);
    auto ws = m_store->createWorkspace(QStringLiteral("default"), QStringLiteral("/w/default"));
    QVERIFY_OK(ws);
    m_workspace = *ws;
}

void TstStore::cleanup()
{
    m_store.reset();
    m_dir.reset();
}

ContextRecord TstStore::makeContext(const QString &id, const QString &workspaceId,
                                    qint64 createdAt)
{
    ContextRecord c;
    c.id = id;
    c.workspaceId = workspaceId;
    c.language = QStringLiteral("python");
    c.name = QStringLiteral("name of ") + id;
    c.cwd = QStringLiteral("/w/") + id;
    c.executionCount = 0;
    c.createdAt = createdAt;
    c.lastUsedAt = createdAt;
    return c;
}

WorkspaceRecord TstStore::addWorkspace(const QString &name)
{
    auto ws = m_store->createWorkspace(name, QStringLiteral("/w/") + name);
    if (!ws)
        qFatal("createWorkspace: %s", qPrintable(ws.error().message));
    return *ws;
}

ExecutionRecord TstStore::addExecution(const QString &contextId, const QString &code)
{
    ExecutionRecord e;
    e.contextId = contextId;
    e.code = code;
    e.status = QStringLiteral("running");
    e.startedAt = 1000;
    auto inserted = m_store->insertExecution(e);
    if (!inserted)
        qFatal("insertExecution: %s", qPrintable(inserted.error().message));
    return *inserted;
}

void TstStore::openCreatesMissingParentDirectory()
{
    const QString path = m_dir->filePath(QStringLiteral("a/b/c/history.db"));
    QVERIFY(!QDir(m_dir->filePath(QStringLiteral("a"))).exists());
    auto store = Store::open(path);
    QVERIFY_OK(store);
    QVERIFY(QFile::exists(path));
    QCOMPARE((*store)->path(), path);
    QCOMPARE((*store)->schemaVersion(), Store::currentSchemaVersion());
}

void TstStore::unusableLocationIsReportedClearly()
{
    // A regular file where the parent directory should be.
    const QString blocker = m_dir->filePath(QStringLiteral("file"));
    QFile f(blocker);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto store = Store::open(blocker + QStringLiteral("/replhost.db"));
    QVERIFY_ERROR(store, "storage");
    QVERIFY2(store.error().message.contains(blocker), qPrintable(store.error().message));

    // A directory where the database file should be.
    const QString dir = m_dir->filePath(QStringLiteral("dir.db"));
    QVERIFY(QDir().mkpath(dir));
    auto onDir = Store::open(dir);
    QVERIFY_ERROR(onDir, "storage");
    QVERIFY2(onDir.error().message.contains(dir), qPrintable(onDir.error().message));
}

void TstStore::walModeIsOn()
{
    RawDatabase raw(dbPath());
    // journal_mode=WAL is stored in the file, so any connection sees it.
    QCOMPARE(raw.value("PRAGMA journal_mode"), QStringLiteral("wal"));
    QVERIFY(QFile::exists(dbPath() + QStringLiteral("-wal")));
}

void TstStore::connectionIsConfiguredForConcurrentUse()
{
    auto db = Database::open(dbPath());
    QVERIFY_OK(db);
    auto pragma = [&](const char *sql) {
        Statement s(**db, sql);
        auto row = s.step();
        return row.ok() && *row ? s.columnInt64(0) : -1;
    };
    QCOMPARE(pragma("PRAGMA synchronous"), 1);  // NORMAL
    QCOMPARE(pragma("PRAGMA busy_timeout"), 5000);
    QCOMPARE(pragma("PRAGMA foreign_keys"), 1);
}

void TstStore::reopenKeepsData()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("c1"), QStringLiteral("K"),
                               QStringLiteral("v")));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("1+1"));
    QVERIFY_OK(m_store->appendEvents({{e.id, 0, QByteArray("{\"type\":\"result\"}")}}));
    m_store.reset();

    auto reopened = Store::open(dbPath());
    QVERIFY_OK(reopened);
    Store &store = **reopened;
    auto ws = store.workspaceByName(QStringLiteral("default"));
    QVERIFY_OK(ws);
    QVERIFY(ws->has_value());
    QCOMPARE((*ws)->id, m_workspace.id);
    auto ctx = store.context(QStringLiteral("c1"));
    QVERIFY_OK(ctx);
    QVERIFY(ctx->has_value());
    auto env = store.env(EnvScope::Context, QStringLiteral("c1"));
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    auto events = store.events(e.id);
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
    QCOMPARE(events->at(0).json, QByteArray("{\"type\":\"result\"}"));
}

void TstStore::secondStoreSeesCommittedWrites()
{
    auto other = Store::open(dbPath());
    QVERIFY_OK(other);
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    auto seen = (*other)->context(QStringLiteral("c1"));
    QVERIFY_OK(seen);
    QVERIFY(seen->has_value());
}

void TstStore::textRoundTripsExactly()
{
    const QString code = QStringLiteral("print('héllo, 世界 🌍')\n\tx = \"a\\0b\"\n");
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    ExecutionRecord e = addExecution(QStringLiteral("c1"), code);
    auto read = m_store->execution(e.id);
    QVERIFY_OK(read);
    QCOMPARE((*read)->code, code);

    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, m_workspace.id, QStringLiteral("EMPTY"),
                               QString()));
    auto env = m_store->env(EnvScope::Workspace, m_workspace.id);
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QCOMPARE(env->at(0).value, QString());
    QVERIFY(!env->at(0).isUnset);
}

void TstStore::keptStatementsStartClean()
{
    auto db = Database::open(dbPath());
    QVERIFY_OK(db);
    const char *sql = "SELECT ?1, ?2";
    {
        Statement s(**db, sql);
        s.bind(1, QStringLiteral("first"));
        s.bind(2, qint64(7));
        auto row = s.step();
        QVERIFY_OK(row);
        QVERIFY(*row);
        QCOMPARE(s.columnString(0), QStringLiteral("first"));
    }
    // The same statement again: no row pending and no binding left over from the last use.
    Statement again(**db, sql);
    again.bind(2, qint64(8));
    auto row = again.step();
    QVERIFY_OK(row);
    QVERIFY(*row);
    QVERIFY(again.isNull(0));
    QCOMPARE(again.columnInt64(1), 8);
}

void TstStore::statementInUseTwiceGetsItsOwn()
{
    auto db = Database::open(dbPath());
    QVERIFY_OK(db);
    QVERIFY_OK((*db)->execute("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)"));
    const char *sql = "SELECT v FROM t WHERE v >= ?1 ORDER BY v";
    for (int round = 0; round < 2; ++round) {  // the second round runs on kept statements
        Statement outer(**db, sql);
        outer.bind(1, 1);
        QList<qint64> pairs;
        for (;;) {
            auto row = outer.step();
            QVERIFY_OK(row);
            if (!*row)
                break;
            Statement inner(**db, sql);  // the same SQL while `outer` is mid-way
            inner.bind(1, outer.columnInt64(0) + 1);
            auto innerRow = inner.step();
            QVERIFY_OK(innerRow);
            pairs << outer.columnInt64(0) * 10 + (*innerRow ? inner.columnInt64(0) : 0);
        }
        QCOMPARE(pairs, (QList<qint64>{12, 23, 30}));
    }
}

void TstStore::releasedStatementHoldsNoSnapshot()
{
    QVERIFY_OK(m_store->createWorkspace(QStringLiteral("a"), QStringLiteral("/w/a")));
    QVERIFY_OK(m_store->createWorkspace(QStringLiteral("b"), QStringLiteral("/w/b")));
    auto db = Database::open(dbPath());
    QVERIFY_OK(db);
    const char *sql = "SELECT name FROM workspaces ORDER BY name";
    {
        // Left after its first row: were it kept as it is, its read transaction would stay open
        // and this connection would go on reading the file as it was then.
        Statement s(**db, sql);
        auto row = s.step();
        QVERIFY_OK(row);
        QVERIFY(*row);
    }
    QVERIFY_OK(m_store->createWorkspace(QStringLiteral("c"), QStringLiteral("/w/c")));
    Statement count(**db, "SELECT COUNT(*) FROM workspaces");
    auto row = count.step();
    QVERIFY_OK(row);
    QCOMPARE(count.columnInt64(0), 4);  // default, a, b, c
}

void TstStore::createdWorkspaceIsFoundByNameAndId()
{
    QVERIFY(!m_workspace.id.isEmpty());
    QVERIFY(m_workspace.createdAt > 0);
    auto byName = m_store->workspaceByName(QStringLiteral("default"));
    QVERIFY_OK(byName);
    QVERIFY(byName->has_value());
    QCOMPARE((*byName)->id, m_workspace.id);
    QCOMPARE((*byName)->directory, QStringLiteral("/w/default"));
    QCOMPARE((*byName)->createdAt, m_workspace.createdAt);

    auto byId = m_store->workspaceById(m_workspace.id);
    QVERIFY_OK(byId);
    QVERIFY(byId->has_value());
    QCOMPARE((*byId)->name, QStringLiteral("default"));

    auto missing = m_store->workspaceByName(QStringLiteral("nope"));
    QVERIFY_OK(missing);
    QVERIFY(!missing->has_value());
}

void TstStore::workspaceSettingsRoundTrip()
{
    // A new workspace has no settings of its own.
    QCOMPARE(m_workspace.settings, QStringLiteral("{}"));
    const QString given = QStringLiteral(R"({"limits":{"max_contexts":3}})");
    auto created = m_store->createWorkspace(QStringLiteral("limited"), QStringLiteral("/w/l"), given);
    QVERIFY_OK(created);
    QCOMPARE(created->settings, given);
    auto byName = m_store->workspaceByName(QStringLiteral("limited"));
    QVERIFY_OK(byName);
    QCOMPARE((*byName)->settings, given);

    const QString changed = QStringLiteral(R"({"network":false})");
    QVERIFY_OK(m_store->setWorkspaceSettings(created->id, changed));
    auto byId = m_store->workspaceById(created->id);
    QVERIFY_OK(byId);
    QCOMPARE((*byId)->settings, changed);
    // Only that workspace changed.
    auto listed = m_store->workspaces();
    QVERIFY_OK(listed);
    QCOMPARE(listed->size(), 2);
    QCOMPARE(listed->at(0).settings, QStringLiteral("{}"));
    QCOMPARE(listed->at(1).settings, changed);
}

void TstStore::workspaceSettingsMustBeAJsonObject_data()
{
    QTest::addColumn<QString>("settings");
    QTest::newRow("not json") << "{limits:";
    QTest::newRow("array") << "[]";
    QTest::newRow("number") << "3";
    QTest::newRow("empty") << "";
}

void TstStore::workspaceSettingsMustBeAJsonObject()
{
    QFETCH(QString, settings);
    QVERIFY_ERROR(m_store->createWorkspace(QStringLiteral("bad"), QStringLiteral("/w/b"), settings),
                  "storage");
    auto none = m_store->workspaceByName(QStringLiteral("bad"));
    QVERIFY_OK(none);
    QVERIFY(!none->has_value());
    QVERIFY_ERROR(m_store->setWorkspaceSettings(m_workspace.id, settings), "storage");
    auto kept = m_store->workspaceById(m_workspace.id);
    QVERIFY_OK(kept);
    QCOMPARE((*kept)->settings, QStringLiteral("{}"));
}

void TstStore::settingsOfUnknownWorkspaceIsNotFound()
{
    QVERIFY_ERROR(m_store->setWorkspaceSettings(QStringLiteral("nope"), QStringLiteral("{}")),
                  "not_found");
}

void TstStore::workspaceNamesAreUnique()
{
    auto again = m_store->createWorkspace(QStringLiteral("default"), QStringLiteral("/elsewhere"));
    QVERIFY_ERROR(again, "conflict");
    QVERIFY2(again.error().message.contains(QStringLiteral("\"default\"")),
             qPrintable(again.error().message));
    auto all = m_store->workspaces();
    QVERIFY_OK(all);
    QCOMPARE(all->size(), 1);
}

void TstStore::workspacesAreListedOldestFirst()
{
    addWorkspace(QStringLiteral("b"));
    addWorkspace(QStringLiteral("a"));
    auto all = m_store->workspaces();
    QVERIFY_OK(all);
    QCOMPARE(all->size(), 3);
    QCOMPARE(all->at(0).name, QStringLiteral("default"));
    QCOMPARE(all->at(1).name, QStringLiteral("b"));
    QCOMPARE(all->at(2).name, QStringLiteral("a"));
}

void TstStore::workspaceDeleteCascadesToContextsEnvAndHistory()
{
    const WorkspaceRecord other = addWorkspace(QStringLiteral("other"));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), other.id)));
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, m_workspace.id, QStringLiteral("W"),
                               QStringLiteral("1")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("c1"), QStringLiteral("C"),
                               QStringLiteral("1")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("c2"), QStringLiteral("C"),
                               QStringLiteral("2")));
    const ExecutionRecord e1 = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    const ExecutionRecord e2 = addExecution(QStringLiteral("c2"), QStringLiteral("y"));
    QVERIFY_OK(m_store->appendEvents({{e1.id, 0, "{}"}, {e2.id, 0, "{}"}}));

    QVERIFY_OK(m_store->deleteWorkspace(m_workspace.id));

    auto ws = m_store->workspaceById(m_workspace.id);
    QVERIFY_OK(ws);
    QVERIFY(!ws->has_value());
    auto ctx = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(ctx);
    QVERIFY(!ctx->has_value());
    auto exec = m_store->execution(e1.id);
    QVERIFY_OK(exec);
    QVERIFY(!exec->has_value());
    auto events = m_store->events(e1.id);
    QVERIFY_OK(events);
    QVERIFY(events->isEmpty());
    auto wsEnv = m_store->env(EnvScope::Workspace, m_workspace.id);
    QVERIFY_OK(wsEnv);
    QVERIFY(wsEnv->isEmpty());
    auto ctxEnv = m_store->env(EnvScope::Context, QStringLiteral("c1"));
    QVERIFY_OK(ctxEnv);
    QVERIFY(ctxEnv->isEmpty());

    // The other workspace is untouched.
    auto otherEnv = m_store->env(EnvScope::Context, QStringLiteral("c2"));
    QVERIFY_OK(otherEnv);
    QCOMPARE(otherEnv->size(), 1);
    auto otherEvents = m_store->events(e2.id);
    QVERIFY_OK(otherEvents);
    QCOMPARE(otherEvents->size(), 1);

    // Nothing is left behind that the API cannot see.
    RawDatabase raw(dbPath());
    QCOMPARE(raw.value("SELECT COUNT(*) FROM env_vars"), QStringLiteral("1"));
    QCOMPARE(raw.value("SELECT COUNT(*) FROM execution_events"), QStringLiteral("1"));
}

void TstStore::deletingUnknownRowsIsNotFound()
{
    QVERIFY_ERROR(m_store->deleteWorkspace(QStringLiteral("nope")), "not_found");
    QVERIFY_ERROR(m_store->deleteContext(QStringLiteral("nope")), "not_found");
}

void TstStore::unsetIsDistinctFromAbsent()
{
    const QString ws = m_workspace.id;
    QVERIFY_OK(m_store->unsetEnv(EnvScope::Workspace, ws, QStringLiteral("HOME")));
    auto env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QCOMPARE(env->at(0).key, QStringLiteral("HOME"));
    QVERIFY(env->at(0).isUnset);

    // Absent keys are simply not listed.
    QVERIFY(std::none_of(env->cbegin(), env->cend(),
                         [](const EnvVarRecord &v) { return v.key == QLatin1String("PATH"); }));
}

void TstStore::setAndUnsetReplaceEachOther()
{
    const QString ws = m_workspace.id;
    const QString key = QStringLiteral("K");
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, ws, key, QStringLiteral("one")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, ws, key, QStringLiteral("two")));
    auto env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QCOMPARE(env->at(0).value, QStringLiteral("two"));
    QVERIFY(!env->at(0).isUnset);

    QVERIFY_OK(m_store->unsetEnv(EnvScope::Workspace, ws, key));
    env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QVERIFY(env->at(0).isUnset);
    QCOMPARE(env->at(0).value, QString());

    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, ws, key, QStringLiteral("three")));
    env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QCOMPARE(env->size(), 1);
    QVERIFY(!env->at(0).isUnset);
    QCOMPARE(env->at(0).value, QStringLiteral("three"));
}

void TstStore::clearEnvRemovesTheKeyEntirely()
{
    const QString ws = m_workspace.id;
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, ws, QStringLiteral("A"), QStringLiteral("1")));
    QVERIFY_OK(m_store->unsetEnv(EnvScope::Workspace, ws, QStringLiteral("B")));
    QVERIFY_OK(m_store->clearEnv(EnvScope::Workspace, ws, QStringLiteral("A")));
    QVERIFY_OK(m_store->clearEnv(EnvScope::Workspace, ws, QStringLiteral("B")));
    // Clearing what is not there is not an error: the key ends up absent either way.
    QVERIFY_OK(m_store->clearEnv(EnvScope::Workspace, ws, QStringLiteral("C")));
    auto env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QVERIFY(env->isEmpty());
}

void TstStore::envIsSortedByKey()
{
    const QString ws = m_workspace.id;
    for (const char *key : {"b", "C", "a", "B"})
        QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, ws, QString::fromLatin1(key),
                                   QStringLiteral("x")));
    auto env = m_store->env(EnvScope::Workspace, ws);
    QVERIFY_OK(env);
    QStringList keys;
    for (const EnvVarRecord &v : *env)
        keys << v.key;
    QCOMPARE(keys, (QStringList{"B", "C", "a", "b"}));  // byte order, like the environment
}

void TstStore::envLayersAreKeptApart()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), m_workspace.id)));
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, m_workspace.id, QStringLiteral("K"),
                               QStringLiteral("ws")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("c1"), QStringLiteral("K"),
                               QStringLiteral("c1")));
    QVERIFY_OK(m_store->unsetEnv(EnvScope::Context, QStringLiteral("c2"), QStringLiteral("K")));

    auto ws = m_store->env(EnvScope::Workspace, m_workspace.id);
    auto c1 = m_store->env(EnvScope::Context, QStringLiteral("c1"));
    auto c2 = m_store->env(EnvScope::Context, QStringLiteral("c2"));
    QVERIFY_OK(ws);
    QVERIFY_OK(c1);
    QVERIFY_OK(c2);
    QCOMPARE(ws->size(), 1);
    QCOMPARE(ws->at(0).value, QStringLiteral("ws"));
    QCOMPARE(c1->size(), 1);
    QCOMPARE(c1->at(0).value, QStringLiteral("c1"));
    QCOMPARE(c2->size(), 1);
    QVERIFY(c2->at(0).isUnset);
}

void TstStore::envOfUnknownScopeIsNotFound()
{
    QVERIFY_ERROR(m_store->setEnv(EnvScope::Context, QStringLiteral("nope"), QStringLiteral("K"),
                                  QStringLiteral("v")),
                  "not_found");
    QVERIFY_ERROR(m_store->unsetEnv(EnvScope::Workspace, QStringLiteral("nope"),
                                    QStringLiteral("K")),
                  "not_found");
    // A context id is not a workspace id, even when the strings are equal.
    QVERIFY_ERROR(m_store->setEnv(EnvScope::Context, m_workspace.id, QStringLiteral("K"),
                                  QStringLiteral("v")),
                  "not_found");
    RawDatabase raw(dbPath());
    QCOMPARE(raw.value("SELECT COUNT(*) FROM env_vars"), QStringLiteral("0"));
}

void TstStore::contextRoundTrips()
{
    ContextRecord c = makeContext(QStringLiteral("c1"), m_workspace.id, 1234);
    c.executionCount = 7;
    c.lastUsedAt = 5678;
    QVERIFY_OK(m_store->insertContext(c));
    auto read = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QVERIFY(read->has_value());
    const ContextRecord &r = **read;
    QCOMPARE(r.id, c.id);
    QCOMPARE(r.workspaceId, c.workspaceId);
    QCOMPARE(r.language, c.language);
    QCOMPARE(r.name, c.name);
    QCOMPARE(r.cwd, c.cwd);
    QCOMPARE(r.executionCount, 7);
    QCOMPARE(r.createdAt, 1234);
    QCOMPARE(r.lastUsedAt, 5678);

    auto missing = m_store->context(QStringLiteral("nope"));
    QVERIFY_OK(missing);
    QVERIFY(!missing->has_value());
}

void TstStore::restorePolicyAndReplayBaseRoundTrip()
{
    ContextRecord c = makeContext(QStringLiteral("c1"), m_workspace.id);
    QCOMPARE(c.restorePolicy, RestorePolicy::Replay);
    c.restorePolicy = RestorePolicy::Fresh;
    c.replayBaseCount = 4;
    c.replayBaseCwd = QStringLiteral("/w/base");
    QVERIFY_OK(m_store->insertContext(c));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), m_workspace.id)));
    auto read = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QCOMPARE((*read)->restorePolicy, RestorePolicy::Fresh);
    QCOMPARE((*read)->replayBaseCount, 4);
    QCOMPARE((*read)->replayBaseCwd, QStringLiteral("/w/base"));
    auto listed = m_store->contexts(m_workspace.id);
    QVERIFY_OK(listed);
    QCOMPARE(listed->size(), 2);
    QCOMPARE(listed->at(0).restorePolicy, RestorePolicy::Fresh);
    QCOMPARE(listed->at(1).restorePolicy, RestorePolicy::Replay);
    QCOMPARE(listed->at(1).replayBaseCount, 0);
}

void TstStore::setReplayBaseChangesOnlyTheBase()
{
    ContextRecord c = makeContext(QStringLiteral("c1"), m_workspace.id, 10);
    c.executionCount = 6;
    QVERIFY_OK(m_store->insertContext(c));
    QVERIFY_OK(m_store->setReplayBase(QStringLiteral("c1"), 6, QStringLiteral("/w/sub")));
    auto read = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QCOMPARE((*read)->replayBaseCount, 6);
    QCOMPARE((*read)->replayBaseCwd, QStringLiteral("/w/sub"));
    QCOMPARE((*read)->executionCount, 6);
    QCOMPARE((*read)->cwd, c.cwd);
    QCOMPARE((*read)->restorePolicy, RestorePolicy::Replay);
    QVERIFY_ERROR(m_store->setReplayBase(QStringLiteral("nope"), 1, QStringLiteral("/w")),
                  "not_found");
}

void TstStore::snapshotIsReplacedByTheNewerOne()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    auto none = m_store->snapshot(QStringLiteral("c1"));
    QVERIFY_OK(none);
    QVERIFY(!none->has_value());

    SnapshotRecord first{QStringLiteral("c1"), 2, QStringLiteral("bash-source"),
                         QByteArray("x=1\0binary\xff", 11), {}, QStringLiteral("[]"), 10};
    QVERIFY_OK(m_store->saveSnapshot(first));
    auto read = m_store->snapshot(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QVERIFY(read->has_value());
    QCOMPARE((*read)->executionCount, 2);
    QCOMPARE((*read)->data, first.data);
    QVERIFY((*read)->isUsable());

    // A snapshot that could not be taken replaces the older one: the older one is not the state.
    SnapshotRecord failed{QStringLiteral("c1"), 5, QStringLiteral("python-pickle"), {},
                          QStringLiteral("s: cannot pickle 'socket' object"),
                          QStringLiteral(R"(["s"])"), 11};
    QVERIFY_OK(m_store->saveSnapshot(failed));
    read = m_store->snapshot(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QCOMPARE((*read)->executionCount, 5);
    QVERIFY((*read)->data.isEmpty());
    QCOMPARE((*read)->error, failed.error);
    QCOMPARE((*read)->lost, failed.lost);
    QVERIFY(!(*read)->isUsable());

    // It goes with its context.
    QVERIFY_OK(m_store->deleteContext(QStringLiteral("c1")));
    read = m_store->snapshot(QStringLiteral("c1"));
    QVERIFY_OK(read);
    QVERIFY(!read->has_value());
}

void TstStore::replayableExecutionsAreTheSuccessfulOnesAfterTheBase()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), m_workspace.id)));
    const QStringList statuses{QStringLiteral("ok"), QStringLiteral("ok"), QStringLiteral("error"),
                               QStringLiteral("ok"), QStringLiteral("interrupted"),
                               QStringLiteral("timeout"), QStringLiteral("aborted"),
                               QStringLiteral("running"), QStringLiteral("ok")};
    for (int i = 0; i < statuses.size(); ++i) {
        ExecutionRecord e;
        e.contextId = QStringLiteral("c1");
        e.code = QStringLiteral("run %1").arg(i + 1);
        e.status = statuses.at(i);
        e.executionCount = i + 1;
        QVERIFY_OK(m_store->insertExecution(e));
    }
    ExecutionRecord other;
    other.contextId = QStringLiteral("c2");
    other.code = QStringLiteral("elsewhere");
    other.status = QStringLiteral("ok");
    other.executionCount = 5;
    QVERIFY_OK(m_store->insertExecution(other));

    auto codesAfter = [this](int base) {
        QStringList codes;
        auto rows = m_store->replayableExecutions(QStringLiteral("c1"), base);
        if (rows)
            for (const ExecutionRecord &e : *rows)
                codes.append(e.code);
        return codes;
    };
    QCOMPARE(codesAfter(0), (QStringList{"run 1", "run 2", "run 4", "run 9"}));
    QCOMPARE(codesAfter(2), (QStringList{"run 4", "run 9"}));
    QCOMPARE(codesAfter(9), QStringList());
}

void TstStore::contextInUnknownWorkspaceIsNotFound()
{
    auto r = m_store->insertContext(makeContext(QStringLiteral("c1"), QStringLiteral("nope")));
    QVERIFY_ERROR(r, "not_found");
    QVERIFY2(r.error().message.contains(QStringLiteral("workspace nope")),
             qPrintable(r.error().message));
}

void TstStore::duplicateContextIdIsConflict()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_ERROR(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)),
                  "conflict");
}

void TstStore::renameContextChangesOnlyTheName()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id, 10)));
    QVERIFY_OK(m_store->updateContextUsage(QStringLiteral("c1"), 3, QStringLiteral("/w/sub"), 500));
    QVERIFY_OK(m_store->renameContext(QStringLiteral("c1"), QStringLiteral("renamed")));

    auto read = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(read);
    const ContextRecord &r = **read;
    QCOMPARE(r.name, QStringLiteral("renamed"));
    QCOMPARE(r.cwd, QStringLiteral("/w/sub"));
    QCOMPARE(r.executionCount, 3);
    QCOMPARE(r.lastUsedAt, 500);
    QCOMPARE(r.workspaceId, m_workspace.id);
    QCOMPARE(r.language, QStringLiteral("python"));
    QCOMPARE(r.createdAt, 10);
}

void TstStore::renamingUnknownContextIsNotFound()
{
    QVERIFY_ERROR(m_store->renameContext(QStringLiteral("nope"), QStringLiteral("x")), "not_found");
}

void TstStore::updateContextUsageChangesOnlyUsage()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id, 10)));
    QVERIFY_OK(m_store->updateContextUsage(QStringLiteral("c1"), 7, QStringLiteral("/w/sub"), 900));
    auto read = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(read);
    const ContextRecord &r = **read;
    QCOMPARE(r.executionCount, 7);
    QCOMPARE(r.cwd, QStringLiteral("/w/sub"));
    QCOMPARE(r.lastUsedAt, 900);
    QCOMPARE(r.name, QStringLiteral("name of c1"));
    QCOMPARE(r.language, QStringLiteral("python"));
    QCOMPARE(r.workspaceId, m_workspace.id);
    QCOMPARE(r.createdAt, 10);

    QVERIFY_ERROR(m_store->updateContextUsage(QStringLiteral("nope"), 1, QStringLiteral("/"), 1),
                  "not_found");
}

void TstStore::contextsAreListedOldestFirst()
{
    const WorkspaceRecord other = addWorkspace(QStringLiteral("other"));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("late"), m_workspace.id, 30)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("early"), m_workspace.id, 10)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("tie-1"), m_workspace.id, 20)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("tie-2"), m_workspace.id, 20)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("elsewhere"), other.id, 5)));
    auto list = m_store->contexts(m_workspace.id);
    QVERIFY_OK(list);
    QStringList ids;
    for (const ContextRecord &c : *list)
        ids << c.id;
    QCOMPARE(ids, (QStringList{"early", "tie-1", "tie-2", "late"}));
}

void TstStore::contextDeleteCascadesToHistoryAndEnv()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("gone"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("kept"), m_workspace.id)));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("gone"), QStringLiteral("K"),
                               QStringLiteral("v")));
    QVERIFY_OK(m_store->unsetEnv(EnvScope::Context, QStringLiteral("gone"), QStringLiteral("U")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Context, QStringLiteral("kept"), QStringLiteral("K"),
                               QStringLiteral("v")));
    QVERIFY_OK(m_store->setEnv(EnvScope::Workspace, m_workspace.id, QStringLiteral("K"),
                               QStringLiteral("v")));
    const ExecutionRecord gone = addExecution(QStringLiteral("gone"), QStringLiteral("a"));
    const ExecutionRecord kept = addExecution(QStringLiteral("kept"), QStringLiteral("b"));
    QVERIFY_OK(m_store->appendEvents({{gone.id, 0, "{}"}, {gone.id, 1, "{}"}, {kept.id, 0, "{}"}}));

    QVERIFY_OK(m_store->deleteContext(QStringLiteral("gone")));

    auto ctx = m_store->context(QStringLiteral("gone"));
    QVERIFY_OK(ctx);
    QVERIFY(!ctx->has_value());
    auto history = m_store->executions(QStringLiteral("gone"), 0, 100);
    QVERIFY_OK(history);
    QVERIFY(history->isEmpty());
    auto events = m_store->events(gone.id);
    QVERIFY_OK(events);
    QVERIFY(events->isEmpty());
    auto env = m_store->env(EnvScope::Context, QStringLiteral("gone"));
    QVERIFY_OK(env);
    QVERIFY(env->isEmpty());

    auto keptEnv = m_store->env(EnvScope::Context, QStringLiteral("kept"));
    QVERIFY_OK(keptEnv);
    QCOMPARE(keptEnv->size(), 1);
    auto wsEnv = m_store->env(EnvScope::Workspace, m_workspace.id);
    QVERIFY_OK(wsEnv);
    QCOMPARE(wsEnv->size(), 1);
    auto keptEvents = m_store->events(kept.id);
    QVERIFY_OK(keptEvents);
    QCOMPARE(keptEvents->size(), 1);
}

void TstStore::executionSeqIncreasesPerContext()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), m_workspace.id)));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("a")).seq, 1);
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("b")).seq, 2);
    QCOMPARE(addExecution(QStringLiteral("c2"), QStringLiteral("c")).seq, 1);
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("d")).seq, 3);

    // The seq passed in is ignored; an id is made up when none is given.
    ExecutionRecord e;
    e.contextId = QStringLiteral("c2");
    e.seq = 42;
    auto inserted = m_store->insertExecution(e);
    QVERIFY_OK(inserted);
    QCOMPARE(inserted->seq, 2);
    QVERIFY(!inserted->id.isEmpty());
    QCOMPARE(inserted->status, QStringLiteral("running"));
    auto read = m_store->execution(inserted->id);
    QVERIFY_OK(read);
    QCOMPARE((*read)->seq, 2);
}

void TstStore::executionSeqStaysUniqueAcrossConnections()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    auto other = Store::open(dbPath());
    QVERIFY_OK(other);
    QList<qint64> seqs;
    for (int i = 0; i < 10; ++i) {
        Store &store = i % 2 ? **other : *m_store;
        ExecutionRecord e;
        e.contextId = QStringLiteral("c1");
        auto inserted = store.insertExecution(e);
        QVERIFY_OK(inserted);
        seqs << inserted->seq;
    }
    QCOMPARE(seqs, (QList<qint64>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

void TstStore::executionSeqFollowsOtherConnectionsWrites()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("a")).seq, 1);
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("b")).seq, 2);
    // Rows this connection did not write: another Store, and a raw connection that writes a seq
    // of its own choosing, as a future replhost might.
    auto other = Store::open(dbPath());
    QVERIFY_OK(other);
    ExecutionRecord e;
    e.contextId = QStringLiteral("c1");
    auto fromOther = (*other)->insertExecution(e);
    QVERIFY_OK(fromOther);
    QCOMPARE(fromOther->seq, 3);
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("c")).seq, 4);
    {
        RawDatabase raw(dbPath());
        QCOMPARE(raw.exec("INSERT INTO executions (id, context_id, seq, code, status, started_at) "
                          "VALUES ('raw', 'c1', 10, '', 'ok', 1)"),
                 QString());
    }
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("d")).seq, 11);
    auto next = (*other)->insertExecution(e);
    QVERIFY_OK(next);
    QCOMPARE(next->seq, 12);
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("e")).seq, 13);
}

void TstStore::executionSeqIsNotSkippedAfterRollback()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("a")).seq, 1);
    auto r = m_store->transaction([&]() -> Result<void> {
        ExecutionRecord e;
        e.contextId = QStringLiteral("c1");
        auto inserted = m_store->insertExecution(e);
        if (!inserted)
            return inserted.error();
        if (inserted->seq != 2)
            return makeError(QStringLiteral("internal"), QStringLiteral("unexpected seq"));
        return makeError(QStringLiteral("internal"), QStringLiteral("changed my mind"));
    });
    QVERIFY_ERROR(r, "internal");
    QCOMPARE(r.error().message, QStringLiteral("changed my mind"));
    // The row is gone, so its seq is free again: no gap.
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("b")).seq, 2);

    // The same for a savepoint rolled back inside a transaction that commits.
    QVERIFY_OK(m_store->transaction([&]() -> Result<void> {
        auto inner = m_store->transaction([&]() -> Result<void> {
            addExecution(QStringLiteral("c1"), QStringLiteral("undone"));
            return makeError(QStringLiteral("internal"), QStringLiteral("undo"));
        });
        if (inner.ok())
            return makeError(QStringLiteral("internal"), QStringLiteral("expected a failure"));
        addExecution(QStringLiteral("c1"), QStringLiteral("kept"));
        return {};
    }));
    auto history = m_store->executions(QStringLiteral("c1"), 0, -1);
    QVERIFY_OK(history);
    QStringList order;
    for (const ExecutionRecord &e : *history)
        order << QStringLiteral("%1=%2").arg(e.code).arg(e.seq);
    QCOMPARE(order, (QStringList{"kept=3", "b=2", "a=1"}));
}

void TstStore::executionSeqRestartsForARecreatedContext()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    addExecution(QStringLiteral("c1"), QStringLiteral("a"));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("b")).seq, 2);
    QVERIFY_OK(m_store->deleteContext(QStringLiteral("c1")));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("c")).seq, 1);

    // And through a workspace, whose deletion takes its contexts' histories along.
    const WorkspaceRecord ws = addWorkspace(QStringLiteral("other"));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), ws.id)));
    QCOMPARE(addExecution(QStringLiteral("c2"), QStringLiteral("d")).seq, 1);
    QVERIFY_OK(m_store->deleteWorkspace(ws.id));
    const WorkspaceRecord again = addWorkspace(QStringLiteral("other"));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), again.id)));
    QCOMPARE(addExecution(QStringLiteral("c2"), QStringLiteral("e")).seq, 1);
}

void TstStore::executionSeqInsideTransactionNeedsNoSavepoint()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    // Inside a transaction a failed insert undoes only itself and uses up no seq, and the
    // inserts around it number on without a gap.
    QVERIFY_OK(m_store->transaction([&]() -> Result<void> {
        addExecution(QStringLiteral("c1"), QStringLiteral("a"));
        ExecutionRecord bad;
        bad.contextId = QStringLiteral("nope");
        if (m_store->insertExecution(bad).ok())
            return makeError(QStringLiteral("internal"), QStringLiteral("expected not_found"));
        ExecutionRecord duplicate;
        duplicate.id = QStringLiteral("dup");
        duplicate.contextId = QStringLiteral("c1");
        if (auto first = m_store->insertExecution(duplicate); !first)
            return first.error();
        if (m_store->insertExecution(duplicate).ok())
            return makeError(QStringLiteral("internal"), QStringLiteral("expected a conflict"));
        addExecution(QStringLiteral("c1"), QStringLiteral("b"));
        return {};
    }));
    auto history = m_store->executions(QStringLiteral("c1"), 0, -1);
    QVERIFY_OK(history);
    QList<qint64> seqs;
    for (const ExecutionRecord &e : *history)
        seqs.prepend(e.seq);
    QCOMPARE(seqs, (QList<qint64>{1, 2, 3}));
}

void TstStore::duplicateExecutionIdIsConflict()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    ExecutionRecord e;
    e.id = QStringLiteral("same");
    e.contextId = QStringLiteral("c1");
    QVERIFY_OK(m_store->insertExecution(e));
    auto again = m_store->insertExecution(e);
    QVERIFY_ERROR(again, "conflict");
    QVERIFY2(again.error().message.contains(QStringLiteral("already exists")),
             qPrintable(again.error().message));
    QCOMPARE(addExecution(QStringLiteral("c1"), QStringLiteral("next")).seq, 2);
}

void TstStore::executionInUnknownContextIsNotFound()
{
    ExecutionRecord e;
    e.contextId = QStringLiteral("nope");
    auto inserted = m_store->insertExecution(e);
    QVERIFY_ERROR(inserted, "not_found");
    QVERIFY2(inserted.error().message.contains(QStringLiteral("context nope")),
             qPrintable(inserted.error().message));
}

void TstStore::finishExecutionRecordsOutcome()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    QCOMPARE(e.durationMs, -1);
    QVERIFY_OK(m_store->finishExecution(e.id, QStringLiteral("error"), 250, 4096, true));
    auto read = m_store->execution(e.id);
    QVERIFY_OK(read);
    const ExecutionRecord &r = **read;
    QCOMPARE(r.status, QStringLiteral("error"));
    QCOMPARE(r.durationMs, 250);
    QCOMPARE(r.outputBytes, 4096);
    QVERIFY(r.truncated);
    QCOMPARE(r.code, QStringLiteral("x"));
    QCOMPARE(r.startedAt, 1000);

    QVERIFY_ERROR(m_store->finishExecution(QStringLiteral("nope"), QStringLiteral("ok"), 1, 0,
                                           false),
                  "not_found");
}

void TstStore::pagingNewestFirst()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c2"), m_workspace.id)));
    for (int i = 1; i <= 7; ++i)
        addExecution(QStringLiteral("c1"), QString::number(i));
    addExecution(QStringLiteral("c2"), QStringLiteral("other"));

    auto seqsOf = [](const QList<ExecutionRecord> &page) {
        QList<qint64> seqs;
        for (const ExecutionRecord &e : page)
            seqs << e.seq;
        return seqs;
    };
    auto page1 = m_store->executions(QStringLiteral("c1"), 0, 3);
    QVERIFY_OK(page1);
    QCOMPARE(seqsOf(*page1), (QList<qint64>{7, 6, 5}));
    QCOMPARE(page1->at(0).code, QStringLiteral("7"));
    auto page2 = m_store->executions(QStringLiteral("c1"), page1->last().seq, 3);
    QVERIFY_OK(page2);
    QCOMPARE(seqsOf(*page2), (QList<qint64>{4, 3, 2}));
    auto page3 = m_store->executions(QStringLiteral("c1"), page2->last().seq, 3);
    QVERIFY_OK(page3);
    QCOMPARE(seqsOf(*page3), (QList<qint64>{1}));
    auto past = m_store->executions(QStringLiteral("c1"), 1, 3);
    QVERIFY_OK(past);
    QVERIFY(past->isEmpty());
    auto negative = m_store->executions(QStringLiteral("c1"), -5, 2);
    QVERIFY_OK(negative);
    QCOMPARE(seqsOf(*negative), (QList<qint64>{7, 6}));
}

void TstStore::eventsRoundTripInOrder()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    const QByteArray binary("a\0b\xff", 4);
    // Stored out of order; read back by seq.
    QVERIFY_OK(m_store->appendEvents({{e.id, 2, "{\"n\":2}"}, {e.id, 0, binary}}));
    QVERIFY_OK(m_store->appendEvents({{e.id, 1, QByteArray()}}));
    auto events = m_store->events(e.id);
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 3);
    QCOMPARE(events->at(0).seq, 0);
    QCOMPARE(events->at(0).json, binary);
    QCOMPARE(events->at(0).executionId, e.id);
    QCOMPARE(events->at(1).seq, 1);
    QVERIFY(events->at(1).json.isEmpty());
    QCOMPARE(events->at(2).json, QByteArray("{\"n\":2}"));
    QVERIFY_OK(m_store->appendEvents({}));
}

void TstStore::appendEventsIsAllOrNothing()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    QVERIFY_OK(m_store->appendEvents({{e.id, 0, "{}"}}));
    QVERIFY_ERROR(m_store->appendEvents({{e.id, 1, "{}"}, {e.id, 2, "{}"}, {e.id, 0, "{}"}}),
                  "conflict");
    auto events = m_store->events(e.id);
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
}

void TstStore::eventOfUnknownExecutionIsNotFound()
{
    QVERIFY_ERROR(m_store->appendEvents({{QStringLiteral("nope"), 0, "{}"}}), "not_found");
}

void TstStore::appendEventStoresOne()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    QVERIFY_OK(m_store->appendEvent({e.id, 0, "{\"n\":0}"}));
    QVERIFY_OK(m_store->appendEvent({e.id, 1, "{\"n\":1}"}));
    QVERIFY_ERROR(m_store->appendEvent({e.id, 1, "{}"}), "conflict");
    QVERIFY_ERROR(m_store->appendEvent({QStringLiteral("nope"), 0, "{}"}), "not_found");
    auto events = m_store->events(e.id);
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 2);
    QCOMPARE(events->at(1).json, QByteArray("{\"n\":1}"));
}

void TstStore::abandonRunningExecutionsMarksOnlyRunning()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord done = addExecution(QStringLiteral("c1"), QStringLiteral("a"));
    const ExecutionRecord left1 = addExecution(QStringLiteral("c1"), QStringLiteral("b"));
    const ExecutionRecord left2 = addExecution(QStringLiteral("c1"), QStringLiteral("c"));
    QVERIFY_OK(m_store->finishExecution(done.id, QStringLiteral("ok"), 5, 0, false));

    auto count = m_store->abandonRunningExecutions(QStringLiteral("aborted"));
    QVERIFY_OK(count);
    QCOMPARE(*count, 2);
    for (const auto &[id, status] : {std::pair{done.id, "ok"}, std::pair{left1.id, "aborted"},
                                     std::pair{left2.id, "aborted"}}) {
        auto e = m_store->execution(id);
        QVERIFY_OK(e);
        QCOMPARE((*e)->status, QString::fromLatin1(status));
    }
    auto again = m_store->abandonRunningExecutions(QStringLiteral("aborted"));
    QVERIFY_OK(again);
    QCOMPARE(*again, 0);
}

void TstStore::transactionRollsBackWhenWorkFails()
{
    auto r = m_store->transaction([&]() -> Result<void> {
        if (auto c = m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)); !c)
            return c;
        if (auto s = m_store->setEnv(EnvScope::Context, QStringLiteral("c1"), QStringLiteral("K"),
                                     QStringLiteral("v"));
            !s)
            return s;
        return makeError(QStringLiteral("internal"), QStringLiteral("changed my mind"));
    });
    QVERIFY_ERROR(r, "internal");
    auto ctx = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(ctx);
    QVERIFY(!ctx->has_value());
    RawDatabase raw(dbPath());
    QCOMPARE(raw.value("SELECT COUNT(*) FROM env_vars"), QStringLiteral("0"));

    // The connection is usable afterwards, in and out of transactions.
    QVERIFY_OK(m_store->transaction([&]() -> Result<void> {
        return m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id));
    }));
    ctx = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(ctx);
    QVERIFY(ctx->has_value());
}

void TstStore::failedCallInsideTransactionUndoesOnlyItself()
{
    QVERIFY_OK(m_store->insertContext(makeContext(QStringLiteral("c1"), m_workspace.id)));
    const ExecutionRecord e = addExecution(QStringLiteral("c1"), QStringLiteral("x"));
    QVERIFY_OK(m_store->appendEvents({{e.id, 0, "{}"}}));
    QVERIFY_OK(m_store->transaction([&]() -> Result<void> {
        if (auto r = m_store->appendEvents({{e.id, 1, "{}"}}); !r)
            return r;
        // Fails on its second event: its first one must not survive.
        auto failedCall = m_store->appendEvents({{e.id, 2, "{}"}, {e.id, 0, "{}"}});
        if (failedCall.ok())
            return makeError(QStringLiteral("internal"), QStringLiteral("expected a conflict"));
        return m_store->appendEvents({{e.id, 3, "{}"}});
    }));
    auto events = m_store->events(e.id);
    QVERIFY_OK(events);
    QList<int> seqs;
    for (const ExecutionEventRecord &ev : *events)
        seqs << ev.seq;
    QCOMPARE(seqs, (QList<int>{0, 1, 3}));
}

QTEST_GUILESS_MAIN(TstStore)
#include "tst_store.moc"
