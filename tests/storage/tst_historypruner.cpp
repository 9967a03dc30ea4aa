// SPDX-License-Identifier: Apache-2.0
#include "storagetest.h"

#include "storage/historypruner.h"
#include "storage/store.h"

#include <QTemporaryDir>
#include <QTest>

using namespace replhost;
using namespace replhost::storage;
using namespace replhost::storage::test;

namespace {

// Six executions of one context, a second apart, each with three events of about 1 KiB.
constexpr int kExecutions = 6;
constexpr int kEventsEach = 3;
constexpr int kEventBytes = 1000;

QByteArray eventJson(int seq)
{
    QByteArray json = "{\"type\":\"stream\",\"text\":\"";
    json += QByteArray(kEventBytes - 40, 'x');
    json += "\",\"seq\":" + QByteArray::number(seq) + '}';
    return json;
}

} // namespace

class TstHistoryPruner : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void eachLimitPrunesTheOldestBeyondIt_data();
    void eachLimitPrunesTheOldestBeyondIt();
    void codeARestoreNeedsStaysWithoutItsOutput_data();
    void codeARestoreNeedsStaysWithoutItsOutput();
    void aSnapshotMakesTheCodeItCoversUnnecessary();
    void aFailedSnapshotCoversNothing();
    void runsNeverReplayedAndRunsBeforeTheBaseGo();
    void runningExecutionsAreNeverTouched();
    void onlyTheWorkspaceOverItsLimitIsPruned();
    void noLimitPrunesNothing();
    void freedPagesAreGivenBackToTheFileSystem();

private:
    QString dbPath() const { return m_dir->filePath(QStringLiteral("replhost.db")); }
    QString addWorkspace(const QString &name);
    void addContext(const QString &id, const QString &workspaceId);
    // Executions e1…e6 (or `prefix`1…6) of `contextId`, finished with `status`, counts 1…6,
    // started at 1000, 2000, … ms.
    void addExecutions(const QString &contextId, const QString &status, bool replay = true,
                       const QString &prefix = QStringLiteral("e"));
    void prune(const RetentionLimits &limits, qint64 nowMs = 10000);
    // Each of `ids` exists with its events, or (kept = false) is gone.
    void verifyExecutions(const QStringList &ids, bool exists, bool withOutput);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Store> m_store;
    std::unique_ptr<HistoryPruner> m_pruner;
    QString m_workspaceId;
};

void TstHistoryPruner::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    auto store = Store::open(dbPath());
    QVERIFY_OK(store);
    m_store = std::move(*store);
    auto pruner = HistoryPruner::open(dbPath());
    QVERIFY_OK(pruner);
    m_pruner = std::move(*pruner);
    m_workspaceId = addWorkspace(QStringLiteral("default"));
    addContext(QStringLiteral("c1"), m_workspaceId);
}

void TstHistoryPruner::cleanup()
{
    m_pruner.reset();
    m_store.reset();
    m_dir.reset();
}

QString TstHistoryPruner::addWorkspace(const QString &name)
{
    auto ws = m_store->createWorkspace(name, QStringLiteral("/w/") + name);
    if (!ws)
        qFatal("cannot create workspace: %s", qPrintable(ws.error().message));
    return ws->id;
}

void TstHistoryPruner::addContext(const QString &id, const QString &workspaceId)
{
    ContextRecord c;
    c.id = id;
    c.workspaceId = workspaceId;
    c.language = QStringLiteral("python");
    c.cwd = QStringLiteral("/w");
    c.createdAt = 1;
    c.lastUsedAt = 1;
    QVERIFY_OK(m_store->insertContext(c));
}

void TstHistoryPruner::addExecutions(const QString &contextId, const QString &status, bool replay,
                                     const QString &prefix)
{
    for (int i = 1; i <= kExecutions; ++i) {
        ExecutionRecord e;
        e.id = prefix + QString::number(i);
        e.contextId = contextId;
        e.code = QStringLiteral("x = %1").arg(i);
        e.status = QStringLiteral("running");
        e.executionCount = i;
        e.startedAt = 1000 * i;
        e.replay = replay;
        QVERIFY_OK(m_store->insertExecution(e));
        QList<ExecutionEventRecord> events;
        for (int seq = 0; seq < kEventsEach; ++seq)
            events.append({e.id, seq, eventJson(seq)});
        QVERIFY_OK(m_store->appendEvents(events));
        QVERIFY_OK(m_store->finishExecution(e.id, status, 5, kEventsEach * kEventBytes, false));
    }
    QVERIFY_OK(m_store->updateContextUsage(contextId, kExecutions, QStringLiteral("/w"), 1));
}

void TstHistoryPruner::prune(const RetentionLimits &limits, qint64 nowMs)
{
    m_pruner->prune({limits}, nowMs);
    m_pruner->waitIdle();
    const HistoryPruner::Totals totals = m_pruner->totals();
    QVERIFY2(totals.failedPasses == 0, qPrintable(totals.lastError));
}

void TstHistoryPruner::verifyExecutions(const QStringList &ids, bool exists, bool withOutput)
{
    for (const QString &id : ids) {
        auto row = m_store->execution(id);
        QVERIFY_OK(row);
        QVERIFY2(row->has_value() == exists, qPrintable(id));
        if (!exists)
            continue;
        QCOMPARE((*row)->outputPruned, !withOutput);
        QCOMPARE((*row)->code, QStringLiteral("x = %1").arg(id.right(1)));
        auto events = m_store->events(id);
        QVERIFY_OK(events);
        QCOMPARE(events->size(), withOutput ? kEventsEach : 0);
    }
}

// Each limit alone, set so that the newest two executions are within it: the four older ones
// go, code and output, since a restore needs none of them (they failed).
void TstHistoryPruner::eachLimitPrunesTheOldestBeyondIt_data()
{
    QTest::addColumn<int>("maxExecutions");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<qint64>("maxAgeMs");
    // Each execution takes a little more than kEventsEach * kEventBytes.
    QTest::newRow("history.max_executions") << 2 << qint64(0) << qint64(0);
    QTest::newRow("history.max_bytes") << 0 << qint64(2.5 * kEventsEach * kEventBytes) << qint64(0);
    // Now is 10000: e5 started 5000 ms before, e4 6000.
    QTest::newRow("history.max_age") << 0 << qint64(0) << qint64(5500);
}

void TstHistoryPruner::eachLimitPrunesTheOldestBeyondIt()
{
    QFETCH(int, maxExecutions);
    QFETCH(qint64, maxBytes);
    QFETCH(qint64, maxAgeMs);
    addExecutions(QStringLiteral("c1"), QStringLiteral("error"));
    prune({m_workspaceId, maxExecutions, maxBytes, maxAgeMs});
    verifyExecutions({"e1", "e2", "e3", "e4"}, false, false);
    verifyExecutions({"e5", "e6"}, true, true);
    QCOMPARE(m_pruner->totals().executionsDeleted, 4);

    // A second pass finds nothing more to do.
    prune({m_workspaceId, maxExecutions, maxBytes, maxAgeMs});
    verifyExecutions({"e5", "e6"}, true, true);
    QCOMPARE(m_pruner->totals().executionsDeleted, 4);
}

void TstHistoryPruner::codeARestoreNeedsStaysWithoutItsOutput_data()
{
    eachLimitPrunesTheOldestBeyondIt_data();
}

// Successful runs with nothing to stand for them are what a replay rebuilds the state from:
// beyond the limit their output goes, their code stays, and the replay still has all of them.
void TstHistoryPruner::codeARestoreNeedsStaysWithoutItsOutput()
{
    QFETCH(int, maxExecutions);
    QFETCH(qint64, maxBytes);
    QFETCH(qint64, maxAgeMs);
    addExecutions(QStringLiteral("c1"), QStringLiteral("ok"));
    prune({m_workspaceId, maxExecutions, maxBytes, maxAgeMs});
    verifyExecutions({"e1", "e2", "e3", "e4"}, true, false);
    verifyExecutions({"e5", "e6"}, true, true);
    auto replay = m_store->replayableExecutions(QStringLiteral("c1"), 0);
    QVERIFY_OK(replay);
    QCOMPARE(replay->size(), kExecutions);
    auto pruned = m_store->prunedExecutionCount(QStringLiteral("c1"));
    QVERIFY_OK(pruned);
    QCOMPARE(*pruned, 0);
    QCOMPARE(m_pruner->totals().outputsPruned, 4);
    QCOMPARE(m_pruner->totals().executionsDeleted, 0);
}

// A usable snapshot stands for every execution up to its count: those go, the ones after it stay
// (a restore replays them on top), and the context records how far its history is gone.
void TstHistoryPruner::aSnapshotMakesTheCodeItCoversUnnecessary()
{
    addExecutions(QStringLiteral("c1"), QStringLiteral("ok"));
    SnapshotRecord snapshot;
    snapshot.contextId = QStringLiteral("c1");
    snapshot.executionCount = 3;
    snapshot.format = QStringLiteral("python-pickle");
    snapshot.data = QByteArray("state");
    QVERIFY_OK(m_store->saveSnapshot(snapshot));

    prune({m_workspaceId, 1, 0, 0});
    verifyExecutions({"e1", "e2", "e3"}, false, false);
    verifyExecutions({"e4", "e5"}, true, false);
    verifyExecutions({"e6"}, true, true);
    auto pruned = m_store->prunedExecutionCount(QStringLiteral("c1"));
    QVERIFY_OK(pruned);
    QCOMPARE(*pruned, 3);
    auto onTop = m_store->replayableExecutions(QStringLiteral("c1"), 3);
    QVERIFY_OK(onTop);
    QCOMPARE(onTop->size(), 3);
}

// A snapshot that could not be taken stands for nothing: every successful run stays needed.
void TstHistoryPruner::aFailedSnapshotCoversNothing()
{
    addExecutions(QStringLiteral("c1"), QStringLiteral("ok"));
    SnapshotRecord snapshot;
    snapshot.contextId = QStringLiteral("c1");
    snapshot.executionCount = 6;
    snapshot.format = QStringLiteral("python-pickle");
    snapshot.error = QStringLiteral("sock: cannot pickle 'socket' object");
    QVERIFY_OK(m_store->saveSnapshot(snapshot));

    prune({m_workspaceId, 1, 0, 0});
    verifyExecutions({"e1", "e2", "e3", "e4", "e5"}, true, false);
    verifyExecutions({"e6"}, true, true);
    auto pruned = m_store->prunedExecutionCount(QStringLiteral("c1"));
    QVERIFY_OK(pruned);
    QCOMPARE(*pruned, 0);
}

// Runs marked never to be replayed and runs before the replay base are not part of the state a
// restore rebuilds: they go like failed ones, and the history is no less complete for it.
void TstHistoryPruner::runsNeverReplayedAndRunsBeforeTheBaseGo()
{
    addExecutions(QStringLiteral("c1"), QStringLiteral("ok"), false);
    addContext(QStringLiteral("c2"), m_workspaceId);
    addExecutions(QStringLiteral("c2"), QStringLiteral("ok"), true, QStringLiteral("b"));
    QVERIFY_OK(m_store->setReplayBase(QStringLiteral("c2"), kExecutions, QStringLiteral("/w")));

    prune({m_workspaceId, 2, 0, 0});
    QCOMPARE(m_pruner->totals().executionsDeleted, 2 * kExecutions - 2);
    for (const QString &context : {QStringLiteral("c1"), QStringLiteral("c2")}) {
        auto pruned = m_store->prunedExecutionCount(context);
        QVERIFY_OK(pruned);
        QCOMPARE(*pruned, 0);
    }
}

void TstHistoryPruner::runningExecutionsAreNeverTouched()
{
    ExecutionRecord running;
    running.id = QStringLiteral("r1");
    running.contextId = QStringLiteral("c1");
    running.code = QStringLiteral("while True: pass");
    running.status = QStringLiteral("running");
    running.startedAt = 1;
    QVERIFY_OK(m_store->insertExecution(running));
    QVERIFY_OK(m_store->appendEvent({running.id, 0, eventJson(0)}));
    addExecutions(QStringLiteral("c1"), QStringLiteral("error"));

    prune({m_workspaceId, 1, 1, 1});
    auto row = m_store->execution(running.id);
    QVERIFY_OK(row);
    QVERIFY(row->has_value());
    QCOMPARE((*row)->outputPruned, false);
    auto events = m_store->events(running.id);
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
    // Its events can still be appended and it can still finish.
    QVERIFY_OK(m_store->appendEvent({running.id, 1, eventJson(1)}));
    QVERIFY_OK(m_store->finishExecution(running.id, QStringLiteral("interrupted"), 9, 0, false));
}

void TstHistoryPruner::onlyTheWorkspaceOverItsLimitIsPruned()
{
    const QString other = addWorkspace(QStringLiteral("other"));
    addContext(QStringLiteral("c2"), other);
    addExecutions(QStringLiteral("c1"), QStringLiteral("error"));
    addExecutions(QStringLiteral("c2"), QStringLiteral("error"), true, QStringLiteral("o"));

    m_pruner->prune({{m_workspaceId, 1, 0, 0}, {other, 100, 0, 0}}, 10000);
    m_pruner->waitIdle();
    verifyExecutions({"e1", "e2", "e3", "e4", "e5"}, false, false);
    verifyExecutions({"e6"}, true, true);
    verifyExecutions({"o1", "o2", "o3", "o4", "o5", "o6"}, true, true);
}

void TstHistoryPruner::noLimitPrunesNothing()
{
    addExecutions(QStringLiteral("c1"), QStringLiteral("error"));
    prune({m_workspaceId, 0, 0, 0});
    verifyExecutions({"e1", "e2", "e3", "e4", "e5", "e6"}, true, true);
}

// Space is given back without VACUUM: a new file is in auto_vacuum=INCREMENTAL mode, and the
// pass ends with no free page left in it.
void TstHistoryPruner::freedPagesAreGivenBackToTheFileSystem()
{
    // About 4 MiB of output in executions that a restore does not need.
    for (int i = 1; i <= 64; ++i) {
        ExecutionRecord e;
        e.id = QStringLiteral("big") + QString::number(i);
        e.contextId = QStringLiteral("c1");
        e.code = QStringLiteral("print(big)");
        e.status = QStringLiteral("running");
        e.startedAt = i;
        QVERIFY_OK(m_store->insertExecution(e));
        QList<ExecutionEventRecord> events;
        for (int seq = 0; seq < 64; ++seq)
            events.append({e.id, seq, QByteArray(1024, 'y')});
        QVERIFY_OK(m_store->appendEvents(events));
        QVERIFY_OK(m_store->finishExecution(e.id, QStringLiteral("error"), 1, 65536, false));
    }
    auto before = m_store->databaseSize();
    QVERIFY_OK(before);
    QVERIFY(before->incrementalVacuum);
    QVERIFY2(before->bytes > 4 * 1024 * 1024, qPrintable(QString::number(before->bytes)));

    prune({m_workspaceId, 1, 0, 0});
    auto after = m_store->databaseSize();
    QVERIFY_OK(after);
    QCOMPARE(after->freeBytes, 0);
    QVERIFY2(after->bytes < before->bytes / 4,
             qPrintable(QStringLiteral("%1 -> %2").arg(before->bytes).arg(after->bytes)));
    QVERIFY(m_pruner->totals().pagesReclaimed > 0);
}

QTEST_GUILESS_MAIN(TstHistoryPruner)
#include "tst_historypruner.moc"
