// SPDX-License-Identifier: Apache-2.0
#include "storagetest.h"

#include "storage/historywriter.h"
#include "storage/store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

using namespace replhost;
using namespace replhost::storage;

namespace {

ExecutionRecord newExecution(const QString &id, const QString &contextId)
{
    ExecutionRecord e;
    e.id = id;
    e.contextId = contextId;
    e.code = QStringLiteral("code of ") + id;
    e.status = QStringLiteral("running");
    e.startedAt = 1000;
    return e;
}

ExecutionEventRecord makeEvent(const QString &executionId, int seq)
{
    return ExecutionEventRecord{executionId, seq,
                                QByteArray("{\"seq\":") + QByteArray::number(seq) + '}'};
}

} // namespace

class TstHistoryWriter : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();

    void writerFlushPersistsInOrder();
    void writerAssignsSeqPerContext();
    void writerCommitsWithinTheIntervalWithoutFlush();
    void fullBatchCommitsWithoutWaitingForTheInterval();
    void acknowledgedEndSurvivesACrashBeforeItsCommit();
    void answersOfAnEndAreKept_data();
    void answersOfAnEndAreKept();
    void recordsTheDatabaseHoldsAreNotAppliedAgain();
    void aCutOrDamagedRecordEndsTheReplay_data();
    void aCutOrDamagedRecordEndsTheReplay();
    void endsLoggedAfterACommitGoToTheOtherLog();
    void durableEndsAreNotAnnouncedAgain();
    void endsTooLargeToLogAreAnnouncedOnceCommitted();
    void destructorWritesWhatIsQueued();
    void flushWithNothingQueuedReturns();
    void writerSurvivesConcurrentProducers();
    void failedWriteIsCountedAndTheRestCommits();
    void contextUsageIsUpdated();
    void contextUsageUpdatesInABatchEndAtTheLast();
    void writerSeqFollowsInsertsOfOtherConnections();
    void failedInsertInABatchUsesUpNoSeq();
    void finishStillLandsWhenItsInsertFails();
    void eventJsonCanBeMadeOnTheWriterThread();
    void queuedEventsStayWithinTheBound();
    void openFailsForAnUnusablePath();

private:
    QString dbPath() const { return m_dir->filePath(QStringLiteral("replhost.db")); }
    QString logPath() const { return dbPath() + QStringLiteral("-pending"); }
    // Runs `work` in a child process with a writer whose interval outlasts the test, then ends
    // the child with _exit(0): no destructor runs, so nothing the writer has not committed by
    // then reaches SQLite, as with a kill -9. `work` gets the writer and a function to hand what
    // each finishExecution() returned, which ends the child with status 3 unless it is true (the
    // end reported durable). The child's exit status (0 when `work` returned and the writer
    // opened).
    using Durable = std::function<void(bool)>;
    int crashAfter(const std::function<void(HistoryWriter &, const Durable &)> &work);
    void addContext(const QString &id);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Store> m_store;  // the reading side, as the rest of replhost has it
    QString m_workspaceId;
};

void TstHistoryWriter::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    auto store = Store::open(dbPath());
    QVERIFY_OK(store);
    m_store = std::move(*store);
    auto ws = m_store->createWorkspace(QStringLiteral("default"), QStringLiteral("/w"));
    QVERIFY_OK(ws);
    m_workspaceId = ws->id;
    addContext(QStringLiteral("c1"));
}

void TstHistoryWriter::cleanup()
{
    m_store.reset();
    m_dir.reset();
}

void TstHistoryWriter::addContext(const QString &id)
{
    ContextRecord c;
    c.id = id;
    c.workspaceId = m_workspaceId;
    c.language = QStringLiteral("python");
    c.cwd = QStringLiteral("/w");
    c.createdAt = 1;
    c.lastUsedAt = 1;
    QVERIFY_OK(m_store->insertContext(c));
}

int TstHistoryWriter::crashAfter(const std::function<void(HistoryWriter &, const Durable &)> &work)
{
    const pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        auto writer = HistoryWriter::open(dbPath(), 60'000);
        if (!writer)
            _exit(2);
        work(**writer, [](bool durable) {
            if (!durable)
                _exit(3);
        });
        _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

// An interval far beyond the test's length: nothing is committed, but finishExecution() logs the
// end, with everything queued before it, before it returns. The process then dies without any
// destructor (as a kill -9 would end it): the next writer opened on the file applies what the log
// holds, so nothing that was reported durable is missing, output and usage included.
void TstHistoryWriter::acknowledgedEndSurvivesACrashBeforeItsCommit()
{
    const int status = crashAfter([this](HistoryWriter &w, const Durable &durable) {
        w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        w.appendEvent(QStringLiteral("e1"), 0, [] { return QByteArray("{\"made\":true}"); });
        w.updateContextUsage(QStringLiteral("c1"), 7, QStringLiteral("/w/sub"), 5000);
        durable(w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 3, 11, false));
    });
    QCOMPARE(status, 0);
    auto before = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(before);
    QVERIFY2(!before->has_value(), "the crash came before the commit");
    QVERIFY(QFileInfo(logPath()).size() > 0);

    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    auto e = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(e);
    QVERIFY(e->has_value());
    QCOMPARE((*e)->status, QStringLiteral("ok"));
    QCOMPARE((*e)->outputBytes, 11);
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
    QCOMPARE(events->at(0).json, QByteArray("{\"made\":true}"));
    auto c1 = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(c1);
    QCOMPARE((*c1)->executionCount, 7);
    QCOMPARE((*c1)->cwd, QStringLiteral("/w/sub"));
    QCOMPARE((*writer)->failedWrites(), 0);
    QCOMPARE(QFileInfo(logPath()).size(), 0);  // applied, so emptied
}

void TstHistoryWriter::answersOfAnEndAreKept_data()
{
    QTest::addColumn<bool>("crash");
    QTest::newRow("committed") << false;
    QTest::newRow("from the pending log after a crash") << true;
}

// The answers a run was given are written with its end (an insert and its finish folded into
// one row, or a finish alone), and a crash before the commit keeps them in the pending log.
void TstHistoryWriter::answersOfAnEndAreKept()
{
    QFETCH(bool, crash);
    const QString answers = QStringLiteral(R"([{"value":"ada"},{"eof":true}])");
    const auto work = [&](HistoryWriter &w, const Durable &durable) {
        w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("c1")));
        if (!crash)
            w.flush();  // e2's finish then updates its row instead of being folded into it
        durable(w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 3, 0, false, answers));
        durable(w.finishExecution(QStringLiteral("e2"), QStringLiteral("ok"), 3, 0, false));
        if (!crash)
            w.flush();
    };
    if (crash) {
        QCOMPARE(crashAfter(work), 0);
        QVERIFY_OK(HistoryWriter::open(dbPath(), 60'000));
    } else {
        auto writer = HistoryWriter::open(dbPath(), 60'000);
        QVERIFY_OK(writer);
        work(**writer, [](bool) {});
    }
    auto replayable = m_store->replayableExecutions(QStringLiteral("c1"), -1);
    QVERIFY_OK(replayable);
    QCOMPARE(replayable->size(), 2);
    QCOMPARE(replayable->at(0).inputs, answers);
    QCOMPARE(replayable->at(1).inputs, QString());
}

// A crash between SQLite's commit and the log's emptying leaves records that the database
// already holds: they are recognised and skipped, so a change made after them stands.
void TstHistoryWriter::recordsTheDatabaseHoldsAreNotAppliedAgain()
{
    const QString saved = m_dir->filePath(QStringLiteral("saved-log"));
    const int status = crashAfter([&](HistoryWriter &w, const Durable &durable) {
        w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        w.updateContextUsage(QStringLiteral("c1"), 1, QStringLiteral("/w"), 5000);
        durable(w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 3, 0, false));
        QFile::copy(logPath(), saved);
        w.flush();  // committed, and the log emptied
    });
    QCOMPARE(status, 0);
    QVERIFY_OK(m_store->updateContextUsage(QStringLiteral("c1"), 2, QStringLiteral("/w/later"), 6000));
    QVERIFY(QFile::remove(logPath()));
    QVERIFY(QFile::copy(saved, logPath()));
    QVERIFY(QFileInfo(logPath()).size() > 0);

    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    QCOMPARE((*writer)->failedWrites(), 0);  // no second insert of e1 was even tried
    auto c1 = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(c1);
    QCOMPARE((*c1)->executionCount, 2);
    QCOMPARE((*c1)->cwd, QStringLiteral("/w/later"));
    auto runs = m_store->executions(QStringLiteral("c1"), 0, 10);
    QVERIFY_OK(runs);
    QCOMPARE(runs->size(), 1);
}

void TstHistoryWriter::aCutOrDamagedRecordEndsTheReplay_data()
{
    QTest::addColumn<bool>("cut");
    QTest::newRow("cut by a crash during the write") << true;
    QTest::newRow("damaged on the disk") << false;
}

// Two runs, each announced on its own record; the second record is then cut short or damaged.
// The first run is applied; the second, and nothing made up from its bytes, is not.
void TstHistoryWriter::aCutOrDamagedRecordEndsTheReplay()
{
    QFETCH(bool, cut);
    qint64 firstRecordEnd = 0;
    const int status = crashAfter([&](HistoryWriter &w, const Durable &durable) {
        w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        durable(w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 3, 0, false));
        firstRecordEnd = QFileInfo(logPath()).size();
        w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("c1")));
        durable(w.finishExecution(QStringLiteral("e2"), QStringLiteral("ok"), 3, 0, false));
        // The child's figure reaches the parent through the file, not this variable.
        QFile mark(m_dir->filePath(QStringLiteral("first-record-end")));
        if (mark.open(QIODevice::WriteOnly))
            mark.write(QByteArray::number(firstRecordEnd));
    });
    QCOMPARE(status, 0);
    QFile mark(m_dir->filePath(QStringLiteral("first-record-end")));
    QVERIFY(mark.open(QIODevice::ReadOnly));
    firstRecordEnd = mark.readAll().toLongLong();
    QFile log(logPath());
    const qint64 size = log.size();
    QVERIFY(firstRecordEnd > 0 && size > firstRecordEnd);
    QVERIFY(log.open(QIODevice::ReadWrite));
    if (cut) {
        QVERIFY(log.resize(size - 3));
    } else {
        QVERIFY(log.seek(size - 1));
        char last = 0;
        QVERIFY(log.getChar(&last));
        QVERIFY(log.seek(size - 1));
        QVERIFY(log.putChar(char(last ^ 0x5a)));
    }
    log.close();

    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    auto e1 = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(e1);
    QVERIFY(e1->has_value());
    auto e2 = m_store->execution(QStringLiteral("e2"));
    QVERIFY_OK(e2);
    QVERIFY(!e2->has_value());
}

// The two logs are used in turn: once the writer has taken what the first holds and committed
// it, ends go to the second, and a crash then is repaired from it.
void TstHistoryWriter::endsLoggedAfterACommitGoToTheOtherLog()
{
    const int status = crashAfter([this](HistoryWriter &w, const Durable &durable) {
        w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        durable(w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 3, 0, false));
        w.flush();
        w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("c1")));
        w.appendEvent(QStringLiteral("e2"), 0, [] { return QByteArray("{\"second\":true}"); });
        durable(w.finishExecution(QStringLiteral("e2"), QStringLiteral("error"), 4, 0, false));
    });
    QCOMPARE(status, 0);
    const QString second = HistoryWriter::pendingLogPath(dbPath(), 1);
    QCOMPARE(QFileInfo(logPath()).size(), 0);  // committed, and emptied
    QVERIFY(QFileInfo(second).size() > 0);

    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    auto e2 = m_store->execution(QStringLiteral("e2"));
    QVERIFY_OK(e2);
    QVERIFY(e2->has_value());
    QCOMPARE((*e2)->status, QStringLiteral("error"));
    auto events = m_store->events(QStringLiteral("e2"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 1);
    QCOMPARE(events->at(0).json, QByteArray("{\"second\":true}"));
    QCOMPARE((*writer)->failedWrites(), 0);
    QCOMPARE(QFileInfo(second).size(), 0);
}

// What finishExecution() reported durable, its caller has released: the listener, which is for
// the ends it could not report, does not hear of it when it is committed.
void TstHistoryWriter::durableEndsAreNotAnnouncedAgain()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    std::mutex mutex;
    QStringList announced;
    w.setCommitListener([&](const QStringList &ids) {
        std::lock_guard lock(mutex);
        announced += ids;
    });
    for (int i = 0; i < 3; ++i) {
        const QString id = QStringLiteral("e%1").arg(i);
        w.insertExecution(newExecution(id, QStringLiteral("c1")));
        QVERIFY(w.finishExecution(id, QStringLiteral("ok"), 1, 0, false));
    }
    w.flush();
    w.setCommitListener({});
    QVERIFY2(announced.isEmpty(), qPrintable(announced.join(u' ')));
    auto runs = m_store->executions(QStringLiteral("c1"), 0, 10);
    QVERIFY_OK(runs);
    QCOMPARE(runs->size(), 3);
}

// A run whose output not yet logged is too large to encode on the caller's thread: its end is
// not reported durable, and the writer commits it without waiting for its interval (a minute
// here) and then tells the listener.
void TstHistoryWriter::endsTooLargeToLogAreAnnouncedOnceCommitted()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    std::mutex mutex;
    std::condition_variable heard;
    QStringList announced;
    w.setCommitListener([&](const QStringList &ids) {
        std::lock_guard lock(mutex);
        announced += ids;
        heard.notify_all();
    });
    w.insertExecution(newExecution(QStringLiteral("big"), QStringLiteral("c1")));
    const QByteArray text(1024 * 1024, 'x');
    w.appendEvent(QStringLiteral("big"), 0,
                  [text] { return QByteArray("{\"t\":\"") + text + "\"}"; }, text.size());
    const bool durable = w.finishExecution(QStringLiteral("big"), QStringLiteral("ok"), 1,
                                           text.size(), false);
    QVERIFY(!durable);
    {
        std::unique_lock lock(mutex);
        QVERIFY(heard.wait_for(lock, std::chrono::seconds(30),
                               [&] { return announced.contains(QStringLiteral("big")); }));
    }
    w.setCommitListener({});
    QCOMPARE(announced, QStringList{QStringLiteral("big")});
    auto big = m_store->execution(QStringLiteral("big"));
    QVERIFY_OK(big);
    QVERIFY(big->has_value());  // committed before it was announced
    QCOMPARE((*big)->status, QStringLiteral("ok"));
}

void TstHistoryWriter::queuedEventsStayWithinTheBound()
{
    // An interval far beyond the test's length: only the bound makes the writer commit early.
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    // 64 MiB of events, four times the bound: each append waits until the writer made room.
    constexpr int kEvents = 64;
    constexpr qint64 kEventBytes = 1024 * 1024;
    const QByteArray text(kEventBytes - 16, 'x');
    qint64 mostHeld = 0;
    for (int i = 0; i < kEvents; ++i) {
        w.appendEvent(QStringLiteral("e1"), i,
                      [text] { return QByteArray("{\"t\":\"") + text + "\"}"; }, kEventBytes);
        mostHeld = std::max(mostHeld, w.heldBytes());
    }
    QVERIFY2(mostHeld <= HistoryWriter::kMaxHeldBytes,
             qPrintable(QStringLiteral("held %1 bytes").arg(mostHeld)));
    w.flush();
    QCOMPARE(w.heldBytes(), 0);
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), kEvents);
    QCOMPARE(events->last().seq, kEvents - 1);
    QCOMPARE(events->last().json.size(), kEventBytes - 16 + 8);
    QCOMPARE(w.failedWrites(), 0);

    // One event larger than the bound is written too, on its own.
    w.appendEvent(QStringLiteral("e1"), kEvents, [] { return QByteArray("{}"); },
                  2 * HistoryWriter::kMaxHeldBytes);
    w.flush();
    auto range = m_store->events(QStringLiteral("e1"), kEvents, kEvents + 1);
    QVERIFY_OK(range);
    QCOMPARE(range->size(), 1);
}

void TstHistoryWriter::writerFlushPersistsInOrder()
{
    // An interval far beyond the test's length: only flush() can make the writes visible.
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    for (int i = 0; i < 50; ++i)
        w.appendEvent(makeEvent(QStringLiteral("e1"), i));
    w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 12, 345, false);
    w.flush();

    auto e = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(e);
    QVERIFY(e->has_value());
    QCOMPARE((*e)->status, QStringLiteral("ok"));
    QCOMPARE((*e)->durationMs, 12);
    QCOMPARE((*e)->outputBytes, 345);
    QCOMPARE((*e)->code, QStringLiteral("code of e1"));
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 50);
    for (int i = 0; i < 50; ++i) {
        QCOMPARE(events->at(i).seq, i);
        QCOMPARE(events->at(i).json, makeEvent(QStringLiteral("e1"), i).json);
    }
    QCOMPARE(w.failedWrites(), 0);
    QVERIFY(w.lastError().isEmpty());
}

void TstHistoryWriter::writerAssignsSeqPerContext()
{
    addContext(QStringLiteral("c2"));
    auto writer = HistoryWriter::open(dbPath());
    QVERIFY_OK(writer);
    for (const char *id : {"a", "b", "c"})
        (*writer)->insertExecution(newExecution(QString::fromLatin1(id), QStringLiteral("c1")));
    (*writer)->insertExecution(newExecution(QStringLiteral("d"), QStringLiteral("c2")));
    (*writer)->flush();
    // A Store inserting on its own connection continues the same numbering.
    auto direct = m_store->insertExecution(newExecution(QStringLiteral("e"), QStringLiteral("c1")));
    QVERIFY_OK(direct);
    QCOMPARE(direct->seq, 4);

    auto c1 = m_store->executions(QStringLiteral("c1"), 0, 10);
    QVERIFY_OK(c1);
    QStringList order;
    for (const ExecutionRecord &e : *c1)
        order << QStringLiteral("%1=%2").arg(e.id).arg(e.seq);
    QCOMPARE(order, (QStringList{"e=4", "c=3", "b=2", "a=1"}));
    auto c2 = m_store->executions(QStringLiteral("c2"), 0, 10);
    QVERIFY_OK(c2);
    QCOMPARE(c2->size(), 1);
    QCOMPARE(c2->at(0).seq, 1);
}

void TstHistoryWriter::writerCommitsWithinTheIntervalWithoutFlush()
{
    auto writer = HistoryWriter::open(dbPath(), 20);
    QVERIFY_OK(writer);
    (*writer)->insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    (*writer)->appendEvent(makeEvent(QStringLiteral("e1"), 0));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto events = m_store->events(QStringLiteral("e1"));
            return events.ok() && events->size() == 1;
        }(),
        5000);
}

void TstHistoryWriter::fullBatchCommitsWithoutWaitingForTheInterval()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    (*writer)->insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    for (int i = 0; i < 999; ++i)  // with the insert, 1000 writes: one full batch
        (*writer)->appendEvent(makeEvent(QStringLiteral("e1"), i));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            auto events = m_store->events(QStringLiteral("e1"));
            return events.ok() && events->size() == 999;
        }(),
        10000);
}

void TstHistoryWriter::destructorWritesWhatIsQueued()
{
    {
        auto writer = HistoryWriter::open(dbPath(), 60'000);
        QVERIFY_OK(writer);
        (*writer)->insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
        for (int i = 0; i < 10; ++i)
            (*writer)->appendEvent(makeEvent(QStringLiteral("e1"), i));
    }
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 10);
}

void TstHistoryWriter::flushWithNothingQueuedReturns()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    QElapsedTimer timer;
    timer.start();
    (*writer)->flush();
    (*writer)->insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    (*writer)->flush();
    (*writer)->flush();
    QVERIFY(timer.elapsed() < 10'000);
}

void TstHistoryWriter::writerSurvivesConcurrentProducers()
{
    constexpr int kProducers = 8;
    constexpr int kEventsEach = 2000;
    auto writer = HistoryWriter::open(dbPath(), 5);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;

    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
        producers.emplace_back([&w, p] {
            const QString id = QStringLiteral("e%1").arg(p);
            w.insertExecution(newExecution(id, QStringLiteral("c1")));
            for (int i = 0; i < kEventsEach; ++i) {
                w.appendEvent(makeEvent(id, i));
                if (i % 500 == 0)
                    w.flush();  // flushes race with other producers' writes
            }
            w.finishExecution(id, QStringLiteral("ok"), p, kEventsEach, false);
        });
    }
    for (std::thread &t : producers)
        t.join();
    w.flush();

    QCOMPARE(w.failedWrites(), 0);
    auto all = m_store->executions(QStringLiteral("c1"), 0, -1);
    QVERIFY_OK(all);
    QCOMPARE(all->size(), kProducers);
    QList<qint64> seqs;
    for (const ExecutionRecord &e : *all) {
        seqs.prepend(e.seq);
        QCOMPARE(e.status, QStringLiteral("ok"));
        auto events = m_store->events(e.id);
        QVERIFY_OK(events);
        QCOMPARE(events->size(), kEventsEach);
        for (int i = 0; i < kEventsEach; ++i)
            QCOMPARE(events->at(i).json, makeEvent(e.id, i).json);
    }
    QCOMPARE(seqs, (QList<qint64>{1, 2, 3, 4, 5, 6, 7, 8}));
}

void TstHistoryWriter::failedWriteIsCountedAndTheRestCommits()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    w.appendEvent(makeEvent(QStringLiteral("e1"), 0));
    w.appendEvent(makeEvent(QStringLiteral("nope"), 0));  // no such execution
    w.appendEvent(makeEvent(QStringLiteral("e1"), 1));
    w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("no-context")));
    w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 1, 2, false);
    w.flush();

    QCOMPARE(w.failedWrites(), 2);
    QVERIFY2(w.lastError().contains(QStringLiteral("no-context")), qPrintable(w.lastError()));
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 2);
    auto e1 = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(e1);
    QCOMPARE((*e1)->status, QStringLiteral("ok"));
    auto e2 = m_store->execution(QStringLiteral("e2"));
    QVERIFY_OK(e2);
    QVERIFY(!e2->has_value());
}

void TstHistoryWriter::contextUsageIsUpdated()
{
    auto writer = HistoryWriter::open(dbPath());
    QVERIFY_OK(writer);
    (*writer)->updateContextUsage(QStringLiteral("c1"), 5, QStringLiteral("/w/sub"), 777);
    (*writer)->flush();
    auto c = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(c);
    QCOMPARE((*c)->executionCount, 5);
    QCOMPARE((*c)->cwd, QStringLiteral("/w/sub"));
    QCOMPARE((*c)->lastUsedAt, 777);
    QCOMPARE((*c)->language, QStringLiteral("python"));

    (*writer)->updateContextUsage(QStringLiteral("gone"), 1, QStringLiteral("/"), 1);
    (*writer)->flush();
    QCOMPARE((*writer)->failedWrites(), 1);
}

void TstHistoryWriter::contextUsageUpdatesInABatchEndAtTheLast()
{
    addContext(QStringLiteral("c2"));
    QVERIFY_OK(m_store->renameContext(QStringLiteral("c1"), QStringLiteral("renamed")));

    // One batch: only flush() commits it.
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    w.updateContextUsage(QStringLiteral("c1"), 1, QStringLiteral("/w/a"), 100);
    w.updateContextUsage(QStringLiteral("c2"), 9, QStringLiteral("/w/c2"), 150);
    w.finishExecution(QStringLiteral("e1"), QStringLiteral("ok"), 1, 0, false);
    w.updateContextUsage(QStringLiteral("c1"), 2, QStringLiteral("/w/b"), 200);
    w.updateContextUsage(QStringLiteral("c1"), 3, QStringLiteral("/w/c"), 300);
    for (int i = 0; i < 3; ++i)
        w.updateContextUsage(QStringLiteral("gone"), i, QStringLiteral("/"), i);
    w.flush();

    auto c1 = m_store->context(QStringLiteral("c1"));
    QVERIFY_OK(c1);
    QCOMPARE((*c1)->executionCount, 3);
    QCOMPARE((*c1)->cwd, QStringLiteral("/w/c"));
    QCOMPARE((*c1)->lastUsedAt, 300);
    QCOMPARE((*c1)->name, QStringLiteral("renamed"));  // not the writer's to change
    auto c2 = m_store->context(QStringLiteral("c2"));
    QVERIFY_OK(c2);
    QCOMPARE((*c2)->executionCount, 9);
    QCOMPARE((*c2)->cwd, QStringLiteral("/w/c2"));
    // Every update of the missing context counts as failed, written or not.
    QCOMPARE(w.failedWrites(), 3);
    QVERIFY2(w.lastError().contains(QStringLiteral("gone")), qPrintable(w.lastError()));
}

void TstHistoryWriter::writerSeqFollowsInsertsOfOtherConnections()
{
    auto writer = HistoryWriter::open(dbPath());
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("a"), QStringLiteral("c1")));
    w.flush();
    auto direct = m_store->insertExecution(newExecution(QStringLiteral("b"), QStringLiteral("c1")));
    QVERIFY_OK(direct);
    QCOMPARE(direct->seq, 2);
    w.insertExecution(newExecution(QStringLiteral("c"), QStringLiteral("c1")));
    w.flush();
    auto c = m_store->execution(QStringLiteral("c"));
    QVERIFY_OK(c);
    QVERIFY(c->has_value());
    QCOMPARE((*c)->seq, 3);
    QVERIFY_OK(m_store->deleteContext(QStringLiteral("c1")));
    addContext(QStringLiteral("c1"));
    w.insertExecution(newExecution(QStringLiteral("d"), QStringLiteral("c1")));
    w.insertExecution(newExecution(QStringLiteral("e"), QStringLiteral("c1")));
    w.flush();
    QCOMPARE(w.failedWrites(), 0);

    auto history = m_store->executions(QStringLiteral("c1"), 0, -1);
    QVERIFY_OK(history);
    QStringList order;
    for (const ExecutionRecord &e : *history)
        order << QStringLiteral("%1=%2").arg(e.id).arg(e.seq);
    // The context made again (another connection deleted the old one) starts from 1.
    QCOMPARE(order, (QStringList{"e=2", "d=1"}));
}

void TstHistoryWriter::failedInsertInABatchUsesUpNoSeq()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));  // duplicate id
    w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("no-context")));
    w.insertExecution(newExecution(QStringLiteral("e3"), QStringLiteral("c1")));
    w.flush();
    QCOMPARE(w.failedWrites(), 2);
    auto history = m_store->executions(QStringLiteral("c1"), 0, -1);
    QVERIFY_OK(history);
    QStringList order;
    for (const ExecutionRecord &e : *history)
        order << QStringLiteral("%1=%2").arg(e.id).arg(e.seq);
    QCOMPARE(order, (QStringList{"e3=2", "e1=1"}));
}

void TstHistoryWriter::finishStillLandsWhenItsInsertFails()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    w.flush();
    // A second insert of e1 fails in the next batch; the finish queued with it must still reach
    // the row that exists, as it would without the insert.
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    w.appendEvent(makeEvent(QStringLiteral("e1"), 0));
    w.finishExecution(QStringLiteral("e1"), QStringLiteral("error"), 42, 7, true);
    // And one whose insert and finish share a batch: stored with its outcome.
    w.insertExecution(newExecution(QStringLiteral("e2"), QStringLiteral("c1")));
    w.finishExecution(QStringLiteral("e2"), QStringLiteral("interrupted"), 5, 6, false);
    w.flush();
    QCOMPARE(w.failedWrites(), 1);
    auto e1 = m_store->execution(QStringLiteral("e1"));
    QVERIFY_OK(e1);
    QCOMPARE((*e1)->status, QStringLiteral("error"));
    QCOMPARE((*e1)->durationMs, 42);
    QCOMPARE((*e1)->outputBytes, 7);
    QVERIFY((*e1)->truncated);
    QCOMPARE((*e1)->seq, 1);
    auto e2 = m_store->execution(QStringLiteral("e2"));
    QVERIFY_OK(e2);
    QCOMPARE((*e2)->status, QStringLiteral("interrupted"));
    QCOMPARE((*e2)->durationMs, 5);
    QCOMPARE((*e2)->outputBytes, 6);
    QVERIFY(!(*e2)->truncated);
    QCOMPARE((*e2)->seq, 2);
    QCOMPARE((*e2)->code, QStringLiteral("code of e2"));
    // Nothing is left looking unfinished.
    auto abandoned = m_store->abandonRunningExecutions(QStringLiteral("aborted"));
    QVERIFY_OK(abandoned);
    QCOMPARE(*abandoned, 0);
}

void TstHistoryWriter::eventJsonCanBeMadeOnTheWriterThread()
{
    auto writer = HistoryWriter::open(dbPath(), 60'000);
    QVERIFY_OK(writer);
    HistoryWriter &w = **writer;
    w.insertExecution(newExecution(QStringLiteral("e1"), QStringLiteral("c1")));
    std::atomic<bool> onCallerThread{false};
    const auto caller = std::this_thread::get_id();
    QByteArray payload("{\"type\":\"done\"}");
    w.appendEvent(QStringLiteral("e1"), 0, [payload, caller, &onCallerThread] {
        if (std::this_thread::get_id() == caller)
            onCallerThread = true;
        return payload;
    });
    payload = "changed";  // the caller's copy: the writer made its own
    w.appendEvent(makeEvent(QStringLiteral("e1"), 1));
    w.appendEvent(QStringLiteral("nope"), 0, [] { return QByteArray("{}"); });
    w.flush();
    QVERIFY(!onCallerThread);
    QCOMPARE(w.failedWrites(), 1);
    auto events = m_store->events(QStringLiteral("e1"));
    QVERIFY_OK(events);
    QCOMPARE(events->size(), 2);
    QCOMPARE(events->at(0).json, QByteArray("{\"type\":\"done\"}"));
    QCOMPARE(events->at(1).json, makeEvent(QStringLiteral("e1"), 1).json);
}

void TstHistoryWriter::openFailsForAnUnusablePath()
{
    const QString dir = m_dir->filePath(QStringLiteral("a-directory"));
    QVERIFY(QDir().mkpath(dir));
    auto writer = HistoryWriter::open(dir);
    QVERIFY_ERROR(writer, "storage");
}

QTEST_GUILESS_MAIN(TstHistoryWriter)
#include "tst_historywriter.moc"
