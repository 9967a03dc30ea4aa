// SPDX-License-Identifier: Apache-2.0
// Durable contexts, engine side: a context whose worker is gone (evicted, engine reopened, killed)
// is dormant, and its next use restores it: from a snapshot of the interpreter's state where the
// language takes one (Bash after every run, Python on eviction and on a clean stop), otherwise by
// replaying its successful history in a fresh interpreter; the limit on resident workers and the
// idle timeout evict the least recently used idle contexts. Real Engine on a temporary data
// directory, real workers through the real plugins.
#include "core/engine.h"
#include "executionevents.h"
#include "testengine.h"
#include "workerchildren.h"
#include "storage/store.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <algorithm>
#include <csignal>

#include <sys/types.h>
#include <unistd.h>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;

namespace {

// Long enough for a fresh worker (a JVM among them) to start and replay on a busy machine.
constexpr int kRunTimeout = 90000;

// A process that has ended (a zombie waits only for its parent to collect it) does not count.
bool processIsRunning(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype paren = line.lastIndexOf(')');
    return paren > 0 && paren + 2 < line.size() && line.at(paren + 2) != 'Z';
}

} // namespace

class DurableContextsTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;

    EngineConfig config() const
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        // Every test opens an engine: a warm pool (tst_warmpool) would start a JVM for each.
        config.warmPoolSize = 0;
        // The replay tests use Python: a snapshot bound of 0 turns Python snapshots off, so its
        // contexts replay (the snapshot tests use snapshotConfig()). Bash snapshots stay on:
        // the default context of Bash is never replayed.
        config.languageSettings.insert(QStringLiteral("python"),
                                       QJsonObject{{QStringLiteral("snapshot_max_bytes"), 0}});
        return config;
    }

    // Snapshots as a user gets them, with Debian's interpreter, which has python3-dill.
    EngineConfig snapshotConfig() const
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        config.languageSettings.insert(
            QStringLiteral("python"),
            QJsonObject{{QStringLiteral("interpreter"), QStringLiteral("/usr/bin/python3")}});
        return config;
    }

    bool openEngine(const EngineConfig &config) { return m_engine.open(config); }

    ContextManager &contexts() { return m_engine->contexts(); }

    QString workspaceDir() { return m_engine->workspaces().get({})->directory; }

    QString createContext(const QString &language, const QString &restore = {})
    {
        CreateContextRequest request;
        request.language = language;
        request.restore = restore;
        return m_engine.createContext(request);
    }

    ContextInfo info(const QString &id) { return m_engine.info(id); }

    ExecutionPtr start(const QString &contextId, const QString &code) { return m_engine.start(contextId, code); }

    // Runs and waits for the end; null (and a warning) when it never ends.
    ExecutionPtr run(const QString &contextId, const QString &code)
    {
        return m_engine.run(contextId, code, kRunTimeout);
    }

    // Runs and requires status "ok".
    bool runOk(const QString &contextId, const QString &code)
    {
        const ExecutionPtr execution = run(contextId, code);
        if (execution && execution->status() != QLatin1String("ok"))
            qWarning("expected ok: %s", qPrintable(describe(execution)));
        return execution && execution->status() == QLatin1String("ok");
    }

    bool evict(const QString &contextId)
    {
        auto evicted = contexts().evict({}, contextId);
        if (!evicted)
            qWarning("cannot evict: %s", qPrintable(evicted.error().message));
        return evicted && evicted->state == QLatin1String("dormant") && !evicted->resident;
    }

    int historySize(const QString &contextId)
    {
        auto rows = contexts().history({}, contextId, 0, 1000);
        return rows ? int(rows->size()) : -1;
    }

    void languageRows()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("show");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("mode");
        QTest::newRow("python") << "python" << "x = 41\ndef inc(v):\n    return v + 1"
                                << "print(inc(x))" << "42\n" << "replay";
        QTest::newRow("bash") << "bash" << "x=41\ninc() { echo $(( $1 + 1 )); }"
                              << "inc \"$x\"" << "42\n" << "snapshot";
        QTest::newRow("perl") << "perl" << "my $x = 41;\nsub inc { $_[0] + 1 }"
                              << "print inc($x), \"\\n\";" << "42\n" << "replay";
        QTest::newRow("javascript") << "javascript" << "let x = 41\nconst inc = v => v + 1"
                                    << "console.log(inc(x))" << "42\n" << "replay";
        QTest::newRow("typescript") << "typescript" << "let x: number = 41\nconst inc = (v: number): number => v + 1"
                                    << "console.log(inc(x))" << "42\n" << "replay";
        QTest::newRow("java") << "java" << "int x = 41;\nint inc(int v) { return v + 1; }"
                              << "System.out.println(inc(x));" << "42\n" << "replay";
        // Jupyter kernels, through plugins/jupyter, are restored by replay.
        QTest::newRow("r") << "jupyter-ir" << "x <- 41\ninc <- function(v) v + 1"
                           << "cat(inc(x), '\\n', sep = '')" << "42\n" << "replay";
        QTest::newRow("jupyter-python3") << "jupyter-python3" << "x = 41\ndef inc(v):\n    return v + 1"
                                         << "print(inc(x))" << "42\n" << "replay";
    }

    // The checks every restore makes: the new run's output is its own, and its events say
    // how the context came back and how many executions were replayed. A snapshot of a shell
    // replays nothing.
    void verifyRestored(const ExecutionPtr &after, const QString &expected, int replayed,
                        const QString &mode = QStringLiteral("replay"))
    {
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        VERIFY_EXEC(!restored.isEmpty(), after);
        QCOMPARE(restored.value(QLatin1String("mode")).toString(), mode);
        if (mode == QLatin1String("snapshot"))
            replayed = 0;
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), replayed);
        QCOMPARE(restored.value(QLatin1String("total")).toInt(), replayed);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), true);
        QVERIFY(restored.value(QLatin1String("duration_ms")).toDouble() >= 0);
        VERIFY_EXEC(!hasEvent(after, QStringLiteral("state_reset")), after);
        // The restored event comes before anything of the run's own.
        QCOMPARE(after->events().first().type, QStringLiteral("restored"));
    }

    // Runs `code` with input and gives `answers` to its questions one after another (a null
    // one: the end of input); the run, ended, or null (and a warning).
    ExecutionPtr runAnswered(const QString &contextId, const QString &code,
                             const QStringList &answers)
    {
        RunRequest request;
        request.contextId = contextId;
        request.code = code;
        request.input = true;
        const ExecutionPtr execution = startRun(contexts(), request);
        if (!execution)
            return {};
        for (const QString &answer : answers) {
            if (!QTest::qWaitFor([&] { return execution->isWaitingForInput() || execution->isFinished(); },
                                 kRunTimeout)
                || execution->isFinished()) {
                qWarning("the run did not ask: %s", qPrintable(describe(execution)));
                return {};
            }
            if (auto answered = contexts().answerInput(execution->id(), answer, answer.isNull()); !answered)
                qWarning("cannot answer: %s", qPrintable(answered.error().message));
        }
        return waitForEnd(execution, kRunTimeout);
    }

    bool runAnsweredOk(const QString &contextId, const QString &code, const QStringList &answers)
    {
        const ExecutionPtr execution = runAnswered(contextId, code, answers);
        if (execution && execution->status() != QLatin1String("ok"))
            qWarning("expected ok: %s", qPrintable(describe(execution)));
        return execution && execution->status() == QLatin1String("ok");
    }

    // The context's worker goes as `how` says: the engine reopened (a server restarted), or the
    // worker killed between runs.
    bool loseWorker(const QString &contextId, const QString &how)
    {
        if (how == QLatin1String("engine reopened"))
            return openEngine(config());
        const qint64 pid = info(contextId).pid;
        if (pid <= 0 || ::kill(pid_t(pid), SIGKILL) != 0)
            return false;
        return QTest::qWaitFor([&] { return !info(contextId).resident; }, kRunTimeout);
    }

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(openEngine(config()));
    }

    void cleanup() { m_engine.reset(); }

    void evictedContextComesBackWithItsState_data() { languageRows(); }
    void evictedContextComesBackWithItsState()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, show);
        QFETCH(QString, expected);
        QFETCH(QString, mode);

        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, define));
        const qint64 pid = info(id).pid;
        QVERIFY(pid > 0);

        QVERIFY(evict(id));
        QCOMPARE(info(id).pid, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(pid), kRunTimeout);

        verifyRestored(run(id, show), expected, 1, mode);
        QCOMPARE(info(id).lastRestore.value(QLatin1String("mode")).toString(), mode);
        QCOMPARE(info(id).executionCount, 2);
        QCOMPARE(info(id).state, QStringLiteral("idle"));
        QVERIFY(info(id).resident);
        // The replay is not history: two runs, two rows.
        QCOMPARE(historySize(id), 2);
    }

    void stateSurvivesReopeningTheEngine_data() { languageRows(); }
    void stateSurvivesReopeningTheEngine()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, show);
        QFETCH(QString, expected);
        QFETCH(QString, mode);

        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, define));
        QVERIFY(contexts().changeEnv({}, id, {{QStringLiteral("RH_KEPT"), QStringLiteral("1")}},
                                     {}, {}).ok());
        const ContextInfo before = info(id);

        QVERIFY(openEngine(config()));
        const ContextInfo after = info(id);
        QCOMPARE(after.id, id);
        QCOMPARE(after.state, QStringLiteral("dormant"));
        QVERIFY(!after.resident);
        QCOMPARE(after.language, language);
        QCOMPARE(after.cwd, before.cwd);
        QCOMPARE(after.executionCount, 1);
        QCOMPARE(after.restore, QStringLiteral("replay"));
        QCOMPARE(contexts().effectiveEnv({}, id)->value(QStringLiteral("RH_KEPT")),
                 QStringLiteral("1"));

        verifyRestored(run(id, show), expected, 1, mode);
        QCOMPARE(historySize(id), 2);
    }

    // The replay starts where the state it rebuilds started, so relative paths mean what they
    // meant, and the cwd ends where the runs left it.
    void replayStartsInTheCwdTheStateStartedIn()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("import os\nos.makedirs('sub/deeper', exist_ok=True)\nos.chdir('sub')")));
        QVERIFY(runOk(id, QStringLiteral("os.chdir('deeper')\nmarker = 'here'")));
        const QString cwd = info(id).cwd;
        QVERIFY2(cwd.endsWith(QLatin1String("/sub/deeper")), qPrintable(cwd));

        QVERIFY(evict(id));
        const ExecutionPtr after = run(id, QStringLiteral("print(os.getcwd(), marker)"));
        verifyRestored(after, cwd + QStringLiteral(" here\n"), 2);
        QCOMPARE(info(id).cwd, cwd);
    }

    void replayIsSilent()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("print('first run')\nx = 1")));
        QVERIFY(runOk(id, QStringLiteral("import sys\nsys.stderr.write('noise\\n')\nx += 1\nx")));

        QVERIFY(evict(id));
        const ExecutionPtr after = run(id, QStringLiteral("print(x)"));
        verifyRestored(after, QStringLiteral("2\n"), 2);
        for (const Event &event : after->events())
            VERIFY_EXEC(event.kind != Event::Kind::Result && event.kind != Event::Kind::Error
                            && !(event.kind == Event::Kind::Stream
                                 && event.fields.value(QLatin1String("name")) == "stderr"),
                        after);
        QCOMPARE(after->executionCount(), 3);
    }

    // A cell whose side effect must happen once (here: appending to a file) is run with
    // replay = false; a restore runs everything else and skips it, and says how many it ran.
    void runMarkedNeverToReplayIsSkippedByARestore_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");  // x = 1
        QTest::addColumn<QString>("effect");  // appends "sent" to effects.txt, x = 100
        QTest::addColumn<QString>("bump");    // x += 1
        QTest::addColumn<QString>("show");    // prints x
        QTest::newRow("python") << "python" << "x = 1"
                                << "open('effects.txt', 'a').write('sent\\n')\nx = 100"
                                << "x += 1" << "print(x)";
        QTest::newRow("perl") << "perl" << "our $x = 1;"
                              << "open(my $f, '>>', 'effects.txt') or die; print $f \"sent\\n\"; "
                                 "close $f; $x = 100;"
                              << "$x += 1;" << "print \"$x\\n\";";
        QTest::newRow("javascript") << "javascript" << "let x = 1"
                                    << "require('fs').appendFileSync('effects.txt', 'sent\\n')\n"
                                       "x = 100"
                                    << "x += 1" << "console.log(x)";
        QTest::newRow("typescript") << "typescript" << "let x: number = 1"
                                    << "require('fs').appendFileSync('effects.txt', 'sent\\n')\n"
                                       "x = 100"
                                    << "x += 1" << "console.log(x)";
        QTest::newRow("java") << "java" << "int x = 1;"
                              << "java.nio.file.Files.writeString(java.nio.file.Path.of(\"effects.txt\"), "
                                 "\"sent\\n\", java.nio.file.StandardOpenOption.CREATE, "
                                 "java.nio.file.StandardOpenOption.APPEND);\nx = 100;"
                              << "x += 1;" << "System.out.println(x);";
    }

    void runMarkedNeverToReplayIsSkippedByARestore()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, effect);
        QFETCH(QString, bump);
        QFETCH(QString, show);
        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, define));
        RunRequest once;
        once.contextId = id;
        once.code = effect;
        once.replay = false;
        const ExecutionPtr sent = waitForEnd(startRun(contexts(), once), kRunTimeout);
        QVERIFY(sent);
        VERIFY_EXEC(sent->status() == "ok", sent);
        QVERIFY(runOk(id, bump));
        auto rows = contexts().history({}, id, 0, 10);
        QVERIFY(rows.ok());
        QCOMPARE(rows->size(), 3);
        QCOMPARE(rows->at(1).replay, false);
        QCOMPARE(rows->at(0).replay, true);

        QVERIFY(evict(id));
        // x = 1, then x += 1: the skipped cell's x = 100 is not there, and it wrote once.
        verifyRestored(run(id, show), QStringLiteral("2\n"), 2);
        QFile effects(QDir(info(id).cwd).filePath(QStringLiteral("effects.txt")));
        QVERIFY(effects.open(QIODevice::ReadOnly));
        QCOMPARE(effects.readAll(), QByteArray("sent\n"));
    }

    // Past the workspace's restore bounds nothing is replayed: the context starts afresh, its
    // next run says state_lost with the bound and why, and later restores start from there.
    void replayPastTheWorkspaceBoundStartsAfresh_data()
    {
        QTest::addColumn<QString>("bound");
        QTest::addColumn<QString>("slowCell");  // what the third cell does besides x += 1
        QTest::newRow("cells") << "max_replay_cells" << "";
        QTest::newRow("seconds") << "max_replay_seconds" << "import time; time.sleep(1.2)";
    }

    void replayPastTheWorkspaceBoundStartsAfresh()
    {
        QFETCH(QString, bound);
        QFETCH(QString, slowCell);
        QVERIFY(m_engine->workspaces()
                        .changeSettings({}, QJsonObject{{QStringLiteral("restore"),
                                                         QJsonObject{{bound, bound == QLatin1String("max_replay_cells") ? 2 : 1}}}})
                        .ok());
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        QVERIFY(runOk(id, QStringLiteral("x += 1")));
        QVERIFY(runOk(id, slowCell.isEmpty() ? QStringLiteral("x += 1")
                                             : slowCell + QStringLiteral("\nx += 1")));

        QVERIFY(evict(id));
        const ExecutionPtr after = run(id, QStringLiteral("print('x' in globals())"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("False\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        VERIFY_EXEC(!restored.isEmpty(), after);
        QCOMPARE(restored.value(QLatin1String("state_lost")).toBool(), true);
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 0);
        QCOMPARE(restored.value(QLatin1String("total")).toInt(), 3);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), false);
        QCOMPARE(restored.value(QLatin1String("limit")).toString(), QStringLiteral("restore.") + bound);
        VERIFY_EXEC(restored.value(QLatin1String("reason")).toString().contains(bound), after);

        // The base moved: the next restore replays only what ran after the fresh start.
        QVERIFY(runOk(id, QStringLiteral("y = 5")));
        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print(y)")), QStringLiteral("5\n"), 2);
    }

    // A snapshot holds the state whatever the length of the history behind it: the bounds are
    // for replays, and a restore from a snapshot never starts afresh for them.
    void snapshotRestoreIsNotBoundedByTheReplayBounds_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("bump");
        QTest::addColumn<QString>("show");
        QTest::newRow("bash") << "bash" << "x=$(( ${x:-0} + 1 ))" << "echo $x";
        QTest::newRow("python") << "python" << "x = globals().get('x', 0) + 1" << "print(x)";
    }
    void snapshotRestoreIsNotBoundedByTheReplayBounds()
    {
        QFETCH(QString, language);
        QFETCH(QString, bump);
        QFETCH(QString, show);
        QVERIFY(openEngine(snapshotConfig()));
        QVERIFY(m_engine->workspaces()
                        .changeSettings({}, QJsonObject{{QStringLiteral("restore"),
                                                         QJsonObject{{QStringLiteral("max_replay_cells"), 1}}}})
                        .ok());
        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        for (int i = 0; i < 3; ++i)
            QVERIFY(runOk(id, bump));
        QVERIFY(evict(id));
        verifyRestored(run(id, show), QStringLiteral("3\n"), 0, QStringLiteral("snapshot"));
    }

    // Retention keeps what a restore needs: with a workspace that keeps a single execution, the
    // older ones lose their output, and their rows too where a snapshot stands for them, and
    // the context still comes back with its state, after an eviction and after a reopen.
    void retentionKeepsARestorableContext_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<bool>("snapshots");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("bump");
        QTest::addColumn<QString>("show");
        QTest::addColumn<int>("rowsKept");  // of the three runs before the first pass
        QTest::newRow("python replay") << "python" << false << "x = 40" << "x += 1" << "print(x)"
                                       << 3;
        QTest::newRow("javascript") << "javascript" << false << "let x = 40" << "x += 1"
                                    << "console.log(x)" << 3;
        QTest::newRow("perl") << "perl" << false << "my $x = 40;" << "$x += 1;"
                              << "print \"$x\\n\";" << 3;
        // A snapshot stands for the runs before it: only the newest row stays.
        QTest::newRow("python snapshot") << "python" << true << "x = 40" << "x += 1"
                                         << "print(x)" << 1;
        QTest::newRow("bash") << "bash" << true << "x=40" << "x=$(( x + 1 ))" << "echo $x" << 1;
    }

    void retentionKeepsARestorableContext()
    {
        QFETCH(QString, language);
        QFETCH(bool, snapshots);
        QFETCH(QString, define);
        QFETCH(QString, bump);
        QFETCH(QString, show);
        QFETCH(int, rowsKept);
        const EngineConfig engineConfig = snapshots ? snapshotConfig() : config();
        QVERIFY(openEngine(engineConfig));
        QVERIFY(m_engine->workspaces()
                        .changeSettings({}, QJsonObject{{QStringLiteral("history"),
                                                         QJsonObject{{QStringLiteral("max_executions"), 1}}}})
                        .ok());
        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, define));
        QVERIFY(runOk(id, bump));
        QVERIFY(evict(id));
        verifyRestored(run(id, show), QStringLiteral("41\n"), 2,
                       snapshots ? QStringLiteral("snapshot") : QStringLiteral("replay"));

        // The pass reads what is committed: the snapshot that stands for the runs before it is
        // durable with the run's end, but committed by the writer only at its next batch.
        m_engine->flushHistory();
        m_engine->retention().pruneNow(true);
        const auto totals = m_engine->retention().totals();
        QVERIFY2(totals.failedPasses == 0, qPrintable(totals.lastError));
        QVERIFY(runOk(id, bump));
        auto rows = contexts().history({}, id, 0, 10);
        QVERIFY(rows.ok());
        QCOMPARE(rows->size(), rowsKept + 1);  // and the run after the pass
        // The newest run of the pass kept its output; the oldest that is left did not, unless
        // it is that one.
        QCOMPARE(rows->at(1).outputPruned, false);
        QCOMPARE(rows->last().outputPruned, rowsKept > 1);

        // A replay runs every successful run so far, shows included.
        QVERIFY(evict(id));
        verifyRestored(run(id, show), QStringLiteral("42\n"), 4,
                       snapshots ? QStringLiteral("snapshot") : QStringLiteral("replay"));
        m_engine->retention().pruneNow(true);
        contexts().shutdownAll(ContextManager::kExitGrace);  // a clean stop: Python snapshots
        QVERIFY(openEngine(engineConfig));
        verifyRestored(run(id, show), QStringLiteral("42\n"), 5,
                       snapshots ? QStringLiteral("snapshot") : QStringLiteral("replay"));
    }

    // The history a snapshot stood for is gone: when the snapshot cannot be used after all (here
    // Python snapshots are turned off), the context does not replay what is left as if it were
    // all, it starts afresh and says why.
    void restoreWithoutTheHistoryItNeedsStartsAfresh()
    {
        QVERIFY(openEngine(snapshotConfig()));
        QVERIFY(m_engine->workspaces()
                        .changeSettings({}, QJsonObject{{QStringLiteral("history"),
                                                         QJsonObject{{QStringLiteral("max_executions"), 1}}}})
                        .ok());
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        QVERIFY(runOk(id, QStringLiteral("y = 2")));
        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print(x + y)")), QStringLiteral("3\n"), 0,
                       QStringLiteral("snapshot"));
        // The pass reads what is committed, and the last run may still wait for the writer's
        // next batch: without the flush it could land after the pass, a second row.
        m_engine->flushHistory();
        m_engine->retention().pruneNow(true);
        QCOMPARE(historySize(id), 1);

        QVERIFY(openEngine(config()));  // no Python snapshots: a replay would be needed
        const ExecutionPtr after = run(id, QStringLiteral("print('x' in globals())"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("False\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("state_lost")).toBool(), true);
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 0);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), false);
        VERIFY_EXEC(restored.value(QLatin1String("reason")).toString().contains(QLatin1String("history")),
                    after);
        QCOMPARE(info(id).lastRestore.value(QLatin1String("state_lost")).toBool(), true);
    }

    void failedAndInterruptedRunsAreNotReplayed()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        const ExecutionPtr failed = run(id, QStringLiteral("x = 2\nraise ValueError('no')"));
        QVERIFY(failed);
        QCOMPARE(failed->status(), QStringLiteral("error"));
        const ExecutionPtr interrupted =
            start(id, QStringLiteral("import time\nx = 3\nprint('looping', flush=True)\n"
                                     "while True:\n    time.sleep(0.05)"));
        QVERIFY(interrupted);
        QTRY_VERIFY_WITH_TIMEOUT(out(interrupted).contains(QLatin1String("looping")),
                                 kRunTimeout);
        QVERIFY(contexts().interruptExecution(interrupted->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(interrupted->isFinished(), kRunTimeout);
        QCOMPARE(interrupted->status(), QStringLiteral("interrupted"));

        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print(x)")), QStringLiteral("1\n"), 1);
    }

    void replayStopsAtTheFirstExecutionThatFails()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        const QString input = QDir(workspaceDir()).filePath(QStringLiteral("input.txt"));
        {
            QFile file(input);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("data");
        }
        QVERIFY(runOk(id, QStringLiteral("a = 1")));
        const ExecutionPtr reads = run(id, QStringLiteral("b = open('input.txt').read()"));
        QVERIFY(reads);
        QCOMPARE(reads->status(), QStringLiteral("ok"));
        QVERIFY(runOk(id, QStringLiteral("c = 3")));
        QVERIFY(QFile::remove(input));
        const qint64 pidBefore = info(id).pid;

        QVERIFY(evict(id));
        const ExecutionPtr after =
            run(id, QStringLiteral("print(a, 'b' in globals(), 'c' in globals())"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("1 False False\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 1);
        QCOMPARE(restored.value(QLatin1String("total")).toInt(), 3);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), false);
        const QJsonObject failed = restored.value(QLatin1String("failed_execution")).toObject();
        QCOMPARE(failed.value(QLatin1String("id")).toString(), reads->id());
        QCOMPARE(failed.value(QLatin1String("execution_count")).toInt(), reads->executionCount());
        QCOMPARE(failed.value(QLatin1String("ename")).toString(),
                 QStringLiteral("FileNotFoundError"));
        QVERIFY(!failed.value(QLatin1String("evalue")).toString().isEmpty());

        // The context goes on from what was restored, in the same interpreter.
        const qint64 pid = info(id).pid;
        QVERIFY(pid > 0 && pid != pidBefore);
        const ExecutionPtr next = run(id, QStringLiteral("print(a + 1)"));
        QVERIFY(next);
        QCOMPARE(out(next), QStringLiteral("2\n"));
        VERIFY_EXEC(!hasEvent(next, QStringLiteral("restored")), next);
        QCOMPARE(info(id).pid, pid);
    }

    // A replay that kills the interpreter would kill every next one too: the context starts
    // afresh instead, and later restores do not reach back past that point.
    void replayThatKillsTheInterpreterStartsAfresh()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        const ExecutionPtr trap = run(id, QStringLiteral(
            "import os\nif os.path.exists('crash.flag'):\n    os._exit(3)"));
        QVERIFY(trap);
        QCOMPARE(trap->status(), QStringLiteral("ok"));
        {
            QFile flag(QDir(workspaceDir()).filePath(QStringLiteral("crash.flag")));
            QVERIFY(flag.open(QIODevice::WriteOnly));
        }

        QVERIFY(evict(id));
        const ExecutionPtr after = run(id, QStringLiteral("y = 5\nprint('x' in globals())"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("False\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), false);
        QCOMPARE(restored.value(QLatin1String("interpreter_lost")).toBool(), true);
        QCOMPARE(restored.value(QLatin1String("failed_execution")).toObject()
                     .value(QLatin1String("id")).toString(),
                 trap->id());
        VERIFY_EXEC(hasEvent(after, QStringLiteral("state_reset")), after);

        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print(y, 'x' in globals())")),
                       QStringLiteral("5 False\n"), 1);
    }

    void freshPolicyStartsAnEmptyInterpreter()
    {
        const QString id = createContext(QStringLiteral("python"), QStringLiteral("fresh"));
        QVERIFY(!id.isEmpty());
        QCOMPARE(info(id).restore, QStringLiteral("fresh"));
        QVERIFY(runOk(id, QStringLiteral("x = 1")));

        QVERIFY(evict(id));
        const ExecutionPtr after = run(id, QStringLiteral("y = 2\nprint('x' in globals())"));
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("False\n"));
        VERIFY_EXEC(hasEvent(after, QStringLiteral("state_reset")), after);
        VERIFY_EXEC(!hasEvent(after, QStringLiteral("restored")), after);

        // The policy is kept with the context.
        QVERIFY(openEngine(config()));
        QCOMPARE(info(id).restore, QStringLiteral("fresh"));
        const ExecutionPtr reopened = run(id, QStringLiteral("print('y' in globals())"));
        QVERIFY(reopened);
        QCOMPARE(out(reopened), QStringLiteral("False\n"));
        VERIFY_EXEC(hasEvent(reopened, QStringLiteral("state_reset")), reopened);
    }

    void unknownRestorePolicyIsRefused()
    {
        CreateContextRequest request;
        request.language = QStringLiteral("bash");
        request.restore = QStringLiteral("sometimes");
        auto created = contexts().create(request);
        QVERIFY(!created);
        QCOMPARE(created.error().code, QStringLiteral("bad_request"));
        QCOMPARE(created.error().message,
                 QStringLiteral("restore must be \"replay\" or \"fresh\", not \"sometimes\""));
        QVERIFY(contexts().all().isEmpty());
    }

    // A restart is a deliberate reset: it replays nothing, and later restores start after it.
    void restartIsNotUndoneByALaterRestore()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("a = 1")));
        QVERIFY(contexts().restart({}, id).ok());
        const ExecutionPtr afterRestart = run(id, QStringLiteral("b = 2\nprint('a' in globals())"));
        QVERIFY(afterRestart);
        QCOMPARE(out(afterRestart), QStringLiteral("False\n"));
        VERIFY_EXEC(!hasEvent(afterRestart, QStringLiteral("restored")), afterRestart);
        VERIFY_EXEC(!hasEvent(afterRestart, QStringLiteral("state_reset")), afterRestart);

        QVERIFY(openEngine(config()));
        verifyRestored(run(id, QStringLiteral("print('a' in globals(), b)")),
                       QStringLiteral("False 2\n"), 1);
    }

    // Killed from outside while idle: no run brought it down, so its state is replayed.
    void workerKilledBetweenRunsIsRestored()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 7")));
        const qint64 pid = info(id).pid;
        QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
        QTRY_COMPARE_WITH_TIMEOUT(info(id).state, QStringLiteral("dead"), kRunTimeout);

        verifyRestored(run(id, QStringLiteral("print(x)")), QStringLiteral("7\n"), 1);
    }

    void replayGivesTheRecordedAnswersAgain_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("how");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QStringList>("answers");
        QTest::addColumn<QString>("show");
        QTest::addColumn<QString>("expected");
        const QString ask = QStringLiteral("name = input()");
        for (const char *how : {"engine reopened", "worker killed"}) {
            QTest::addRow("python, %s", how) << "python" << how << ask << QStringList{"ada"}
                                             << "print(name)" << "ada\n";
        }
        QTest::newRow("python, answers in order, the end of input among them")
                << "python" << "engine reopened"
                << "import sys\nfirst = input()\nsecond = sys.stdin.readline()\n"
                   "try:\n    third = input()\nexcept EOFError:\n    third = 'eof'"
                << QStringList{"ada", "bob", QString()} << "print(first, second.strip(), third)"
                << "ada bob eof\n";
        QTest::newRow("perl") << "perl" << "engine reopened" << "our $name = <STDIN>;\nchomp $name;"
                              << QStringList{"ada"} << "print \"$name\\n\";" << "ada\n";
        QTest::newRow("javascript")
                << "javascript" << "engine reopened"
                << "const rl = require('readline').createInterface({input: process.stdin});\n"
                   "var name = await new Promise(done => rl.question('? ', done));\n"
                   "rl.close();"
                << QStringList{"ada"} << "console.log(name)" << "ada\n";
    }

    // A context restored by replay gets the answers its runs were given, in their order, so
    // `name = input()` answered "ada" comes back with name == "ada".
    void replayGivesTheRecordedAnswersAgain()
    {
        QFETCH(QString, language);
        QFETCH(QString, how);
        QFETCH(QString, code);
        QFETCH(QStringList, answers);
        QFETCH(QString, show);
        QFETCH(QString, expected);
        const QString id = createContext(language);
        QVERIFY(!id.isEmpty());
        QVERIFY(runAnsweredOk(id, code, answers));
        QVERIFY(loseWorker(id, how));
        verifyRestored(run(id, show), expected, 1);
    }

    // A password's answer is never kept, so its replay gets the end of input: here getpass()
    // fails, the replay stops there and says so, and what came before it is back.
    void passwordsAreNotReplayed()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runAnsweredOk(id, QStringLiteral("name = input()"), {QStringLiteral("ada")}));
        QVERIFY(runAnsweredOk(id, QStringLiteral("import getpass\nsecret = getpass.getpass()"),
                              {QStringLiteral("hunter2")}));
        auto rows = contexts().history({}, id, 0, 10);
        QVERIFY(rows);
        for (const storage::ExecutionRecord &row : *rows)
            QVERIFY2(!row.inputs.contains(QLatin1String("hunter2")), qPrintable(row.inputs));
        QCOMPARE(rows->at(0).inputs, QStringLiteral(R"([{"password":true}])"));
        QVERIFY(openEngine(config()));

        const ExecutionPtr after = run(id, QStringLiteral("print(name, 'secret' in globals())"));
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("ada False\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), false);
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 1);
        QCOMPARE(restored.value(QLatin1String("failed_execution")).toObject()
                         .value(QLatin1String("ename")).toString(),
                 QStringLiteral("EOFError"));
    }

    // Python restores from a snapshot, which holds what the answers made, so nothing is asked
    // again; what ran after the snapshot is replayed on top of it with its answers.
    void answeredStateComesBackFromAPythonSnapshot()
    {
        QVERIFY(openEngine(snapshotConfig()));
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runAnsweredOk(id, QStringLiteral("name = input()"), {QStringLiteral("ada")}));
        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print(name)")), QStringLiteral("ada\n"), 0,
                       QStringLiteral("snapshot"));
        QVERIFY(runAnsweredOk(id, QStringLiteral("other = input()"), {QStringLiteral("bob")}));
        QVERIFY(loseWorker(id, QStringLiteral("worker killed")));

        const ExecutionPtr after = run(id, QStringLiteral("print(name, other)"));
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("ada bob\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("mode")).toString(), QStringLiteral("snapshot"));
        // print(name) and the answered run.
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 2);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), true);
    }

    // A run that took the interpreter down declared the state lost; restores after it do not
    // bring back what came before.
    void stateLostInARunIsNotReplayedLater()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        const ExecutionPtr died = run(id, QStringLiteral("import os\nos._exit(3)"));
        QVERIFY(died);
        QVERIFY(eventFields(died, QStringLiteral("done")).value(QLatin1String("state_lost")).toBool());
        const ExecutionPtr fresh = run(id, QStringLiteral("y = 2"));
        QVERIFY(fresh);
        VERIFY_EXEC(hasEvent(fresh, QStringLiteral("state_reset")), fresh);

        QVERIFY(evict(id));
        verifyRestored(run(id, QStringLiteral("print('x' in globals(), y)")),
                       QStringLiteral("False 2\n"), 1);
    }

    // Interrupting the only run that waits for a restore stops the restore: its interpreter is
    // discarded and the context stays dormant, to be restored in full on its next use.
    void interruptingTheWaitingRunStopsTheRestore()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        const QString gate = QDir(workspaceDir()).filePath(QStringLiteral("gate"));
        {
            QFile file(gate);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        QVERIFY(runOk(id, QStringLiteral(
            "import os, time\nwhile not os.path.exists('gate'):\n    time.sleep(0.02)")));
        QVERIFY(QFile::remove(gate));

        QVERIFY(evict(id));
        const ExecutionPtr waiting = start(id, QStringLiteral("print(x)"));
        QVERIFY(waiting);
        QTRY_COMPARE_WITH_TIMEOUT(info(id).state, QStringLiteral("restoring"), kRunTimeout);
        const qint64 restoringPid = info(id).pid;
        QVERIFY(restoringPid > 0);
        QCOMPARE(waiting->status(), QStringLiteral("queued"));

        QVERIFY(contexts().interruptExecution(waiting->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(waiting->isFinished(), kRunTimeout);
        QCOMPARE(waiting->status(), QStringLiteral("aborted"));
        QCOMPARE(info(id).state, QStringLiteral("dormant"));
        QVERIFY(!info(id).resident);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(restoringPid), kRunTimeout);

        {
            QFile file(gate);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        verifyRestored(run(id, QStringLiteral("print(x)")), QStringLiteral("1\n"), 2);
    }

    // Asking a dormant context something restores it first; the next run tells of the restore.
    void variablesOfADormantContextAreTheRestoredOnes()
    {
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("restored_variable = 1")));
        QVERIFY(evict(id));

        std::optional<Result<QJsonObject>> reply;
        contexts().variables({}, id, [&reply](Result<QJsonObject> r) { reply = std::move(r); });
        QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), kRunTimeout);
        QVERIFY(reply->ok());
        QStringList names;
        for (const QJsonValue &v : reply->value().value(QLatin1String("variables")).toArray())
            names.append(v.toObject().value(QLatin1String("name")).toString());
        QVERIFY2(names.contains(QStringLiteral("restored_variable")), qPrintable(names.join(',')));

        verifyRestored(run(id, QStringLiteral("print(restored_variable)")), QStringLiteral("1\n"), 1);
    }

    // Contexts kept from an earlier engine start no worker until they are used.
    void hundredDormantContextsStartNoWorker()
    {
        constexpr int kContexts = 100;
        const QString workspaceId = m_engine->workspaces().get({})->id;
        const QString cwd = workspaceDir();
        m_engine.close();
        {
            auto store = storage::Store::open(QDir(m_engine.dataDir()).filePath(QStringLiteral("replhost.db")));
            QVERIFY(store.ok());
            for (int i = 0; i < kContexts; ++i) {
                storage::ContextRecord row;
                row.id = QStringLiteral("ctx-%1").arg(i, 3, 10, QLatin1Char('0'));
                row.workspaceId = workspaceId;
                row.language = QStringLiteral("bash");
                row.cwd = cwd;
                row.replayBaseCwd = cwd;
                row.executionCount = 1;
                row.createdAt = 1000 + i;
                QVERIFY((*store)->insertContext(row).ok());
                storage::ExecutionRecord execution;
                execution.contextId = row.id;
                execution.code = QStringLiteral("n=%1").arg(i);
                execution.status = QStringLiteral("ok");
                execution.executionCount = 1;
                QVERIFY((*store)->insertExecution(execution).ok());
            }
        }
        QVERIFY(openEngine(config()));

        const QList<ContextInfo> all = contexts().all();
        QCOMPARE(all.size(), kContexts);
        for (const ContextInfo &context : all) {
            QCOMPARE(context.state, QStringLiteral("dormant"));
            QVERIFY(!context.resident);
            QCOMPARE(context.pid, 0);
        }
        QCOMPARE(workerChildren(), QList<qint64>());

        verifyRestored(run(QStringLiteral("ctx-042"), QStringLiteral("echo $n")),
                       QStringLiteral("42\n"), 1);
        int resident = 0;
        for (const ContextInfo &context : contexts().all())
            resident += context.resident ? 1 : 0;
        QCOMPARE(resident, 1);
        QCOMPARE(workerChildren().size(), 1);
    }

    void defaultWorkerLimitIsSizedToMemory()
    {
        QFile meminfo(QStringLiteral("/proc/meminfo"));
        QVERIFY(meminfo.open(QIODevice::ReadOnly));
        const QList<QByteArray> total = meminfo.readLine().simplified().split(' ');
        QCOMPARE(total.value(0), QByteArray("MemTotal:"));
        const qint64 kib = total.value(1).toLongLong();
        const int expected = int(std::clamp<qint64>(kib / (256 * 1024), 4, 64));
        QCOMPARE(EngineConfig::defaultMaxResidentWorkers(), expected);
        EngineConfig config;
        QCOMPARE(config.resolvedMaxResidentWorkers(), expected);
        config.maxResidentWorkers = 3;
        QCOMPARE(config.resolvedMaxResidentWorkers(), 3);
    }

    void leastRecentlyUsedIdleContextIsEvictedFirst()
    {
        EngineConfig limited = config();
        limited.maxResidentWorkers = 2;
        QVERIFY(openEngine(limited));

        const QString a = createContext(QStringLiteral("bash"));
        const QString b = createContext(QStringLiteral("bash"));
        QVERIFY(!a.isEmpty() && !b.isEmpty());
        QVERIFY(runOk(b, QStringLiteral("v=b")));
        QVERIFY(runOk(a, QStringLiteral("v=a")));  // a is now the most recently used

        const QString c = createContext(QStringLiteral("bash"));
        QVERIFY(!c.isEmpty());
        QVERIFY(info(a).resident);
        QCOMPARE(info(b).state, QStringLiteral("dormant"));
        QVERIFY(info(c).resident);

        // Using b brings it back and sends away the least recently used of a and c: a.
        verifyRestored(run(b, QStringLiteral("echo $v")), QStringLiteral("b\n"), 0,
                       QStringLiteral("snapshot"));
        QCOMPARE(info(a).state, QStringLiteral("dormant"));
        QVERIFY(info(b).resident);
        QVERIFY(info(c).resident);
    }

    void evictionNeverTakesABusyContext()
    {
        EngineConfig limited = config();
        limited.maxResidentWorkers = 1;
        QVERIFY(openEngine(limited));
        const QString gate = QDir(workspaceDir()).filePath(QStringLiteral("go"));

        const QString busy = createContext(QStringLiteral("python"));
        QVERIFY(!busy.isEmpty());
        QVERIFY(runOk(busy, QStringLiteral("kept = 1")));
        const ExecutionPtr waiting = start(busy, QStringLiteral(
            "import os, time\nprint('waiting', flush=True)\n"
            "while not os.path.exists('go'):\n    time.sleep(0.02)\nkept += 1"));
        QVERIFY(waiting);
        const ExecutionPtr queued = start(busy, QStringLiteral("print(kept)"));
        QVERIFY(queued);
        QTRY_VERIFY_WITH_TIMEOUT(out(waiting).contains(QLatin1String("waiting")), kRunTimeout);
        const qint64 pid = info(busy).pid;

        // Over the limit: the busy context stays; the new one, the only one that can go, goes as
        // soon as its worker is ready.
        const QString other = createContext(QStringLiteral("bash"));
        QVERIFY(!other.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(info(other).state, QStringLiteral("dormant"), kRunTimeout);
        QVERIFY(info(busy).resident);
        QCOMPARE(info(busy).pid, pid);
        QVERIFY(!waiting->isFinished());
        QVERIFY(!queued->isFinished());

        {
            QFile file(gate);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        QTRY_VERIFY_WITH_TIMEOUT(queued->isFinished(), kRunTimeout);
        QCOMPARE(waiting->status(), QStringLiteral("ok"));
        QCOMPARE(out(queued), QStringLiteral("2\n"));
        VERIFY_EXEC(!hasEvent(queued, QStringLiteral("restored")), queued);
        QCOMPARE(info(busy).pid, pid);
        QCOMPARE(info(other).state, QStringLiteral("dormant"));
    }

    void idleWorkerIsEvictedAfterTheTimeout()
    {
        EngineConfig idle = config();
        idle.workerIdleTimeoutMs = 200;
        QVERIFY(openEngine(idle));

        const QString id = createContext(QStringLiteral("bash"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("v=kept")));
        const qint64 pid = info(id).pid;
        QTRY_COMPARE_WITH_TIMEOUT(info(id).state, QStringLiteral("dormant"), kRunTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(pid), kRunTimeout);

        verifyRestored(run(id, QStringLiteral("echo $v")), QStringLiteral("kept\n"), 0,
                       QStringLiteral("snapshot"));
    }

    // Snapshots

    // Everything a shell keeps comes back from its snapshot, and no cell runs again: the one
    // that appended to a file did so once. The background job is said to be lost.
    void bashRestoresFromItsSnapshotWithoutRunningACell_data()
    {
        QTest::addColumn<bool>("reopen");
        QTest::newRow("evicted") << false;
        QTest::newRow("engine reopened") << true;
    }
    void bashRestoresFromItsSnapshotWithoutRunningACell()
    {
        QFETCH(bool, reopen);
        const QString id = createContext(QStringLiteral("bash"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral(
            "x=41; declare -a arr=(a 'b c'); declare -A m=([k]=v [two]='x y'); declare -i n=4\n"
            "n+=1; export EXPORTED=e; declare -r FIXED=r\n"
            "f() { echo \"f:$1\"; }\n"
            "alias greet='echo aliased'\n"
            "shopt -s nullglob; set -o pipefail; umask 027\n"
            "mkdir -p sub && cd sub")));
        QVERIFY(runOk(id, QStringLiteral("echo line >> ../appended.txt")));
        QVERIFY(runOk(id, QStringLiteral("sleep 600 &")));
        if (reopen)
            QVERIFY(openEngine(config()));
        else
            QVERIFY(evict(id));

        const ExecutionPtr after = run(id, QStringLiteral(
            "echo \"$x ${arr[1]} ${m[two]} $n $EXPORTED $FIXED $(umask) ${PWD##*/}\"\n"
            "f 1\n"
            "greet\n"
            "shopt -q nullglob && [[ -o pipefail ]] && echo options\n"
            "declare -p FIXED\n"
            "wc -l < ../appended.txt"));
        verifyRestored(after,
                       QStringLiteral("41 b c x y 5 e r 0027 sub\nf:1\naliased\noptions\n"
                                      "declare -r FIXED=\"r\"\n1\n"),
                       0, QStringLiteral("snapshot"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("snapshot_execution_count")).toInt(), 3);
        const QJsonArray lost = restored.value(QLatin1String("lost")).toArray();
        QCOMPARE(lost.size(), 1);
        QVERIFY2(lost.at(0).toString().contains(QLatin1String("background job")),
                 qPrintable(lost.at(0).toString()));
        QVERIFY(info(id).cwd.endsWith(QLatin1String("/sub")));
        QCOMPARE(info(id).lastRestore.value(QLatin1String("mode")).toString(),
                 QStringLiteral("snapshot"));
    }

    // Past the bound a shell's state is not kept: a context other than the default one falls
    // back to replay and says why; the default context is never replayed, it starts afresh.
    void bashStateOverTheBoundReplaysExceptInTheDefaultContext()
    {
        EngineConfig tiny = config();
        tiny.languageSettings.insert(QStringLiteral("bash"),
                                     QJsonObject{{QStringLiteral("snapshot_max_bytes"), 16}});
        QVERIFY(openEngine(tiny));
        const QString first = createContext(QStringLiteral("bash"));
        const QString second = createContext(QStringLiteral("bash"));
        QVERIFY(!first.isEmpty() && !second.isEmpty());
        for (const QString &id : {first, second}) {
            QVERIFY(runOk(id, QStringLiteral("v=kept")));
            QVERIFY(runOk(id, QStringLiteral("echo line >> appended-%1.txt").arg(id)));
            QVERIFY(evict(id));
        }

        const ExecutionPtr replayed = run(second, QStringLiteral("echo $v"));
        verifyRestored(replayed, QStringLiteral("kept\n"), 2);
        const QString why = eventFields(replayed, QStringLiteral("restored"))
                                .value(QLatin1String("snapshot_error")).toString();
        QVERIFY2(why.contains(QLatin1String("bound of 16 bytes")), qPrintable(why));

        const ExecutionPtr fresh = run(first, QStringLiteral("echo \"[${v-}]\"; wc -l < appended-%1.txt").arg(first));
        QVERIFY(fresh);
        VERIFY_EXEC(fresh->status() == "ok", fresh);
        QCOMPARE(out(fresh), QStringLiteral("[]\n1\n"));
        VERIFY_EXEC(!hasEvent(fresh, QStringLiteral("restored")), fresh);
        const QString reason = eventFields(fresh, QStringLiteral("state_reset"))
                                   .value(QLatin1String("reason")).toString();
        QVERIFY2(reason.contains(QLatin1String("never restored by re-running")), qPrintable(reason));
        QVERIFY2(reason.contains(QLatin1String("bound of 16 bytes")), qPrintable(reason));
    }

    // Values, imported modules, functions, lambdas and classes defined in cells, and instances
    // of those classes come back from the snapshot taken when the context was evicted or the
    // engine stopped cleanly; nothing is run again.
    void pythonRestoresFromItsSnapshot_data()
    {
        QTest::addColumn<bool>("stop");
        QTest::newRow("evicted") << false;
        QTest::newRow("clean stop") << true;
    }
    void pythonRestoresFromItsSnapshot()
    {
        QFETCH(bool, stop);
        QVERIFY(openEngine(snapshotConfig()));
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral(
            "import math as m\nx = 41\nsq = lambda v: v * v\n"
            "def inc(v):\n    return v + 1\n"
            "class P:\n    def __init__(self, n):\n        self.n = n\n"
            "    def twice(self):\n        return 2 * self.n\n"
            "p = P(21)")));
        QVERIFY(runOk(id, QStringLiteral("open('appended.txt', 'a').write('line\\n')")));
        if (stop) {
            contexts().shutdownAll(ContextManager::kExitGrace);
            QVERIFY(openEngine(snapshotConfig()));
        } else {
            QVERIFY(evict(id));
        }

        verifyRestored(run(id, QStringLiteral(
                           "print(inc(x), sq(3), p.twice(), P(2).twice(), m.sqrt(16),\n"
                           "      open('appended.txt').read().count('line'))")),
                       QStringLiteral("42 9 42 4 4.0 1\n"), 0, QStringLiteral("snapshot"));
    }

    // An open socket does not serialise: the snapshot names it and the context replays.
    void pythonSnapshotNamesWhatDoesNotSerialiseAndReplays()
    {
        QVERIFY(openEngine(snapshotConfig()));
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("import socket\nconn = socket.socket()\nx = 5")));
        QVERIFY(evict(id));

        const ExecutionPtr after = run(id, QStringLiteral("print(x, type(conn).__name__)"));
        verifyRestored(after, QStringLiteral("5 socket\n"), 1);
        const QString why = eventFields(after, QStringLiteral("restored"))
                                .value(QLatin1String("snapshot_error")).toString();
        QVERIFY2(why.contains(QLatin1String("conn (")) && why.contains(QLatin1String("socket")),
                 qPrintable(why));
        QVERIFY2(!why.contains(QLatin1String("x (")), qPrintable(why));
    }

    // A snapshot stands for the history it covers: runs after it are replayed on top of it
    // when the interpreter is lost without a newer one (here: killed between runs).
    void runsAfterAPythonSnapshotAreReplayedOnTopOfIt()
    {
        QVERIFY(openEngine(snapshotConfig()));
        const QString id = createContext(QStringLiteral("python"));
        QVERIFY(!id.isEmpty());
        QVERIFY(runOk(id, QStringLiteral("x = 1")));
        QVERIFY(evict(id));
        QVERIFY(runOk(id, QStringLiteral("x += 1")));
        const qint64 pid = info(id).pid;
        QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
        QTRY_VERIFY_WITH_TIMEOUT(!info(id).resident, kRunTimeout);

        const ExecutionPtr after = run(id, QStringLiteral("print(x)"));
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("2\n"));
        const QJsonObject restored = eventFields(after, QStringLiteral("restored"));
        QCOMPARE(restored.value(QLatin1String("mode")).toString(), QStringLiteral("snapshot"));
        QCOMPARE(restored.value(QLatin1String("snapshot_execution_count")).toInt(), 1);
        QCOMPARE(restored.value(QLatin1String("replayed")).toInt(), 1);
        QCOMPARE(restored.value(QLatin1String("total")).toInt(), 1);
        QCOMPARE(restored.value(QLatin1String("complete")).toBool(), true);
    }
};

QTEST_GUILESS_MAIN(DurableContextsTest)
#include "tst_durablecontexts.moc"
