// SPDX-License-Identifier: Apache-2.0
// The engine-level limits of a workspace's settings, with a real Engine on a temporary data
// directory and real bash workers: how many contexts a workspace may have, the time and the
// output of each execution (and of each command), and how settings are kept and changed. Each
// limit is hit in one workspace while a context of another keeps answering.
#include "executionevents.h"
#include "testengine.h"

#include <QDir>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

using namespace replhost;
using namespace replhost::core;
using namespace replhost::core::testing;

namespace {

// Long enough for a fresh worker to start and a short run to finish on a busy machine.
constexpr int kRunTimeout = 60000;

QJsonObject parse(const char *json)
{
    return QJsonDocument::fromJson(QByteArray(json)).object();
}

// The error event the engine adds when the time is up (the interpreter's own error for the
// interrupt, such as bash's, comes before it).
QJsonObject timeoutError(const ExecutionPtr &execution)
{
    for (const sdk::Event &event : eventsOfType(execution, QStringLiteral("error"))) {
        if (event.fields.value(QLatin1String("ename")).toString() == QLatin1String("Timeout"))
            return event.fields;
    }
    return {};
}

} // namespace

class WorkspaceLimitsTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;

    EngineConfig config() const { return m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)); }
    bool openEngine(const EngineConfig &config) { return m_engine.open(config); }

    WorkspaceManager &workspaces() { return m_engine->workspaces(); }
    ContextManager &contexts() { return m_engine->contexts(); }

    bool createWorkspace(const QString &name, const char *settings)
    {
        auto created = workspaces().create(name, {}, parse(settings));
        if (!created)
            qWarning("cannot create workspace %s: %s", qPrintable(name),
                     qPrintable(created.error().message));
        return created.ok();
    }

    Result<ContextInfo> createContext(const QString &workspace)
    {
        CreateContextRequest request;
        request.workspace = workspace;
        request.language = QStringLiteral("bash");
        return contexts().create(request);
    }

    ExecutionPtr wait(const ExecutionPtr &execution) { return waitForEnd(execution, kRunTimeout); }

    ExecutionPtr start(const RunRequest &request) { return startRun(contexts(), request); }

    ExecutionPtr run(const QString &workspace, const QString &contextId, const QString &code,
                     int timeoutMs = 0)
    {
        RunRequest request;
        request.workspace = workspace;
        request.contextId = contextId;
        request.code = code;
        request.timeoutMs = timeoutMs;
        return wait(start(request));
    }

    // A bash context in a new workspace with `settings`; empty (and a warning) when either
    // cannot be made.
    QString contextIn(const QString &workspace, const char *settings)
    {
        if (!createWorkspace(workspace, settings))
            return {};
        auto created = createContext(workspace);
        if (!created)
            qWarning("cannot create a context: %s", qPrintable(created.error().message));
        return created ? created->id : QString();
    }

    // A bash context in the default workspace that answers `echo`: the one that keeps serving
    // while another workspace hits its limits.
    QString bystander()
    {
        auto created = createContext({});
        return created ? created->id : QString();
    }

    void verifyAnswers(const QString &contextId)
    {
        const ExecutionPtr answer = run({}, contextId, QStringLiteral("echo still here"));
        QVERIFY(answer);
        VERIFY_EXEC(answer->status() == "ok", answer);
        QCOMPARE(out(answer), QStringLiteral("still here\n"));
    }

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(openEngine(config()));
    }

    void cleanup()
    {
        m_engine.reset();
    }

    void settingsAreTheDefaultsWithTheWorkspacesChoicesOver()
    {
        EngineConfig tightened = config();
        tightened.workspaceDefaults.limits.maxContexts = 8;
        tightened.workspaceDefaults.limits.timeoutMs = 60000;
        QVERIFY(openEngine(tightened));
        QVERIFY(createWorkspace(QStringLiteral("own"), R"({"limits": {"max_contexts": 2}})"));

        auto own = workspaces().settings(QStringLiteral("own"));
        QVERIFY(own);
        QCOMPARE(own->limits.maxContexts, 2);
        QCOMPARE(own->limits.timeoutMs, 60000);
        auto plain = workspaces().settings({});
        QVERIFY(plain);
        QVERIFY(*plain == tightened.workspaceDefaults);
    }

    void settingsSurviveARestartAndFollowNewDefaults()
    {
        QVERIFY(createWorkspace(QStringLiteral("kept"), R"({"limits": {"max_contexts": 2}})"));
        QVERIFY(workspaces().changeSettings(QStringLiteral("kept"), parse(R"({"network": false})")));

        // A later server with another default: the workspace keeps what it chose and follows the
        // default in everything else.
        EngineConfig later = config();
        later.workspaceDefaults.limits.timeoutMs = 30000;
        QVERIFY(openEngine(later));
        auto kept = workspaces().settings(QStringLiteral("kept"));
        QVERIFY(kept);
        QCOMPARE(kept->limits.maxContexts, 2);
        QVERIFY(!kept->network);
        QCOMPARE(kept->limits.timeoutMs, 30000);
    }

    void changeMergesAndNullGivesBackTheDefault()
    {
        QVERIFY(createWorkspace(QStringLiteral("w"), R"({"limits": {"max_contexts": 2,
                                                                    "timeout_ms": 500}})"));
        QSignalSpy changed(&workspaces(), &WorkspaceManager::settingsChanged);
        auto settings = workspaces().changeSettings(
            QStringLiteral("w"), parse(R"({"limits": {"timeout_ms": null, "cpu_seconds": 9}})"));
        QVERIFY(settings);
        QCOMPARE(settings->limits.maxContexts, 2);
        QCOMPARE(settings->limits.timeoutMs, 0);
        QCOMPARE(settings->limits.cpuSeconds, 9);
        QCOMPARE(changed.size(), 1);
        auto read = workspaces().settings(QStringLiteral("w"));
        QVERIFY(read);
        QVERIFY(*read == *settings);
    }

    void badChangeIsRefusedAndChangesNothing()
    {
        QVERIFY(createWorkspace(QStringLiteral("w"), R"({"limits": {"max_contexts": 2}})"));
        auto refused = workspaces().changeSettings(
            QStringLiteral("w"), parse(R"({"limits": {"max_contexts": 5, "timeout_ms": -1}})"));
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, QStringLiteral("bad_request"));
        QVERIFY2(refused.error().message.contains(QStringLiteral("limits.timeout_ms")),
                 qPrintable(refused.error().message));
        auto kept = workspaces().settings(QStringLiteral("w"));
        QVERIFY(kept);
        QCOMPARE(kept->limits.maxContexts, 2);

        auto missing = workspaces().changeSettings(QStringLiteral("nope"), {});
        QVERIFY(!missing);
        QCOMPARE(missing.error().code, QStringLiteral("not_found"));
    }

    void workspaceWithBadSettingsIsNotCreated()
    {
        auto created = workspaces().create(QStringLiteral("bad"), {},
                                           parse(R"({"isolation": "chroot"})"));
        QVERIFY(!created);
        QCOMPARE(created.error().code, QStringLiteral("bad_request"));
        QVERIFY(!workspaces().get(QStringLiteral("bad")));
        QVERIFY(!QDir(m_engine.dataDir() + QStringLiteral("/workspaces/bad")).exists());
    }

    void oneContextMoreThanMaxContextsIsRefused()
    {
        const QString other = bystander();
        QVERIFY(!other.isEmpty());
        QVERIFY(createWorkspace(QStringLiteral("small"), R"({"limits": {"max_contexts": 2}})"));
        auto first = createContext(QStringLiteral("small"));
        QVERIFY(first);
        QVERIFY(createContext(QStringLiteral("small")));

        auto third = createContext(QStringLiteral("small"));
        QVERIFY(!third);
        QCOMPARE(third.error().code, QStringLiteral("limit_reached"));
        QVERIFY2(third.error().message.contains(QStringLiteral("limits.max_contexts = 2")),
                 qPrintable(third.error().message));
        QCOMPARE(contexts().list(QStringLiteral("small"))->size(), 2);
        verifyAnswers(other);

        // Deleting one makes room again.
        QVERIFY(contexts().remove(QStringLiteral("small"), first->id));
        QVERIFY(createContext(QStringLiteral("small")));
    }

    void theDefaultContextOfARunCountsTowardsMaxContexts()
    {
        QVERIFY(createWorkspace(QStringLiteral("one"), R"({"limits": {"max_contexts": 1}})"));
        RunRequest byLanguage;
        byLanguage.workspace = QStringLiteral("one");
        byLanguage.language = QStringLiteral("bash");
        byLanguage.code = QStringLiteral("echo first");
        const ExecutionPtr first = wait(start(byLanguage));
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);

        auto refused = createContext(QStringLiteral("one"));
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, QStringLiteral("limit_reached"));

        // A run by language in a full workspace whose language has no context yet is refused
        // the same way: its default context cannot be created.
        byLanguage.language = QStringLiteral("python");
        auto python = contexts().run(byLanguage);
        QVERIFY(!python);
        QCOMPARE(python.error().code, QStringLiteral("limit_reached"));
        QCOMPARE(contexts().list(QStringLiteral("one"))->size(), 1);
    }

    void workspaceTimeoutIsTheDefaultOfEachExecution()
    {
        const QString other = bystander();
        QVERIFY(!other.isEmpty());
        const QString context =
            contextIn(QStringLiteral("quick"), R"({"limits": {"timeout_ms": 1500}})");
        QVERIFY(!context.isEmpty());

        RunRequest request;
        request.workspace = QStringLiteral("quick");
        request.contextId = context;
        request.code = QStringLiteral("sleep 30");
        const ExecutionPtr slow = start(request);
        QVERIFY(slow);
        // The other workspace answers while this one runs into its limit.
        verifyAnswers(other);
        QVERIFY(wait(slow));
        VERIFY_EXEC(slow->status() == "timeout", slow);
        const QJsonObject error = timeoutError(slow);
        QVERIFY2(!error.isEmpty(), qPrintable(describe(slow)));
        QCOMPARE(error.value(QLatin1String("limit")).toString(), QStringLiteral("timeout_ms"));
        QCOMPARE(error.value(QLatin1String("limit_value")).toInteger(), 1500);
        QCOMPARE(error.value(QLatin1String("limit_source")).toString(), QStringLiteral("workspace"));
        QVERIFY2(error.value(QLatin1String("evalue")).toString().contains(
                     QStringLiteral("1500 ms (the workspace's limits.timeout_ms)")),
                 qPrintable(describe(slow)));

        // The context goes on.
        const ExecutionPtr after = run(QStringLiteral("quick"), context, QStringLiteral("echo ok"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
    }

    void requestMayAskForLessTimeNotMore_data()
    {
        QTest::addColumn<int>("requested");
        QTest::addColumn<int>("expected");
        QTest::addColumn<QString>("source");

        QTest::newRow("more is cut to the limit") << 600000 << 1500 << "workspace";
        QTest::newRow("less is granted") << 700 << 700 << "request";
    }

    void requestMayAskForLessTimeNotMore()
    {
        QFETCH(int, requested);
        QFETCH(int, expected);
        QFETCH(QString, source);
        const QString context =
            contextIn(QStringLiteral("quick"), R"({"limits": {"timeout_ms": 1500}})");
        QVERIFY(!context.isEmpty());
        const ExecutionPtr slow = run(QStringLiteral("quick"), context,
                                      QStringLiteral("sleep 30"), requested);
        QVERIFY(slow);
        VERIFY_EXEC(slow->status() == "timeout", slow);
        const QJsonObject error = timeoutError(slow);
        QVERIFY2(!error.isEmpty(), qPrintable(describe(slow)));
        QCOMPARE(error.value(QLatin1String("limit_value")).toInteger(), expected);
        QCOMPARE(error.value(QLatin1String("limit_source")).toString(), source);
    }

    void workspaceOutputCapCutsEachExecution()
    {
        const QString other = bystander();
        QVERIFY(!other.isEmpty());
        const QString context =
            contextIn(QStringLiteral("terse"), R"({"limits": {"output_bytes": 1000}})");
        QVERIFY(!context.isEmpty());
        const QString flood = QStringLiteral("head -c 50000 /dev/zero | tr '\\0' x");

        const ExecutionPtr cut = run(QStringLiteral("terse"), context, flood);
        QVERIFY(cut);
        VERIFY_EXEC(cut->status() == "ok", cut);
        QCOMPARE(out(cut), QString(1000, QLatin1Char('x')));
        const QJsonObject truncated = eventFields(cut, QStringLiteral("truncated"));
        QCOMPARE(truncated.value(QLatin1String("limit")).toString(), QStringLiteral("output_bytes"));
        QCOMPARE(truncated.value(QLatin1String("limit_value")).toInteger(), 1000);
        QCOMPARE(truncated.value(QLatin1String("limit_bytes")).toInteger(), 1000);
        QVERIFY(doneOf(cut).value(QLatin1String("truncated")).toBool());

        // Another workspace keeps the default cap.
        const ExecutionPtr whole = run({}, other, flood);
        QVERIFY(whole);
        QCOMPARE(out(whole).size(), 50000);
        QVERIFY(!hasEvent(whole, QStringLiteral("truncated")));
    }

    void changedOutputCapReachesLaterExecutions()
    {
        const QString context =
            contextIn(QStringLiteral("w"), R"({"limits": {"output_bytes": 1000}})");
        QVERIFY(!context.isEmpty());
        const QString flood = QStringLiteral("head -c 5000 /dev/zero | tr '\\0' x");
        const ExecutionPtr before = run(QStringLiteral("w"), context, flood);
        QVERIFY(before);
        QCOMPARE(out(before).size(), 1000);

        // 0: no cap, for the same running worker's next run.
        QVERIFY(workspaces().changeSettings(QStringLiteral("w"),
                                            parse(R"({"limits": {"output_bytes": 0}})")));
        const ExecutionPtr after = run(QStringLiteral("w"), context, flood);
        QVERIFY(after);
        QCOMPARE(out(after).size(), 5000);
        QVERIFY(!hasEvent(after, QStringLiteral("truncated")));
    }

    void commandsFollowTheWorkspaceLimits()
    {
        QVERIFY(createWorkspace(QStringLiteral("w"), R"({"limits": {"output_bytes": 1000,
                                                                    "timeout_ms": 1500}})"));
        CommandRequest flood;
        flood.workspace = QStringLiteral("w");
        flood.command = QStringLiteral("head -c 5000 /dev/zero | tr '\\0' x");
        auto cut = m_engine->commands().run(flood);
        QVERIFY(cut);
        QVERIFY(wait(*cut));
        QCOMPARE(out(*cut).size(), 1000);
        const QJsonObject truncated = eventFields(*cut, QStringLiteral("truncated"));
        QCOMPARE(truncated.value(QLatin1String("limit")).toString(), QStringLiteral("output_bytes"));
        QCOMPARE(truncated.value(QLatin1String("limit_value")).toInteger(), 1000);

        CommandRequest slow;
        slow.workspace = QStringLiteral("w");
        slow.command = QStringLiteral("sleep 30");
        auto timedOut = m_engine->commands().run(slow);
        QVERIFY(timedOut);
        QVERIFY(wait(*timedOut));
        VERIFY_EXEC((*timedOut)->status() == "timeout", *timedOut);
        const QJsonObject error = timeoutError(*timedOut);
        QCOMPARE(error.value(QLatin1String("limit")).toString(), QStringLiteral("timeout_ms"));
        QCOMPARE(error.value(QLatin1String("limit_value")).toInteger(), 1500);
    }
};

QTEST_GUILESS_MAIN(WorkspaceLimitsTest)
#include "tst_workspacelimits.moc"
