// SPDX-License-Identifier: Apache-2.0
// The workbench's one engine interface, tested alike: every slot runs against the engine in this
// process (InProcessEngine) and against a real replhost-server on 127.0.0.1 (HttpEngine over its
// API), with the same expectations.
#include "apiclient.h"
#include "serverclient.h"
#include "serverprocess.h"

#include "core/engine.h"
#include "gui/httpengine.h"
#include "gui/inprocessengine.h"

#include <QDir>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <memory>
#include <optional>

using namespace replhost;
using namespace replhost::gui;

namespace {

constexpr int kTimeout = 60000;

// One engine behind an EngineClient: in this process, or a server's.
class Backend {
public:
    explicit Backend(const QString &kind)
    {
        if (kind == QLatin1String("in-process")) {
            QVERIFY(m_dir.isValid());
            core::EngineConfig config;
            config.dataDir = m_dir.path();
            config.pluginPaths = {ServerProcess::pluginDir()};
            config.warmPoolSize = 0;
            auto opened = core::Engine::open(config);
            QVERIFY2(opened, opened ? "" : qPrintable(opened.error().message));
            m_engine = std::move(*opened);
            m_client = std::make_unique<InProcessEngine>(*m_engine);
            return;
        }
        QVERIFY2(m_server.start({QStringLiteral("--warm-pool"), QStringLiteral("0")}), qPrintable(m_server.error()));
        QString why;
        m_client = connectedTo(m_server, &why, kTimeout);
        QVERIFY2(m_client, qPrintable(why));
    }
    ~Backend()
    {
        m_client.reset();
        if (m_engine) {
            m_engine->contexts().shutdownAll();
            QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
            m_engine.reset();
        }
    }

    EngineClient &client() { return *m_client; }
    // Creates a context as another client of the engine would (not through client()).
    QString createElsewhere(const QString &name)
    {
        if (m_engine) {
            core::CreateContextRequest request;
            request.language = QStringLiteral("python");
            request.name = name;
            const auto created = m_engine->contexts().create(request);
            return created ? created->id : QString();
        }
        const ApiClient api(m_server.port(), m_server.token());
        const ApiClient::Response created = api.post(
                QStringLiteral("/v1/contexts"), {{QStringLiteral("language"), QStringLiteral("python")},
                                                 {QStringLiteral("name"), name}});
        return created.object().value(QStringLiteral("id")).toString();
    }
    // Deletes a context as another client would.
    bool removeElsewhere(const QString &id)
    {
        if (m_engine)
            return bool(m_engine->contexts().remove(QString(), id));
        return ApiClient(m_server.port(), m_server.token()).del(QStringLiteral("/v1/contexts/") + id).status == 204;
    }
    // Runs code in a context as another client of the engine would; the run's id.
    QString runElsewhere(const QString &contextId, const QString &code)
    {
        if (m_engine) {
            core::RunRequest request;
            request.contextId = contextId;
            request.code = code;
            const auto started = m_engine->contexts().run(request);
            return started ? (*started)->id() : QString();
        }
        return ApiClient(m_server.port(), m_server.token())
                .runAndWait(contextId, code)
                .value(QStringLiteral("id"))
                .toString();
    }
    bool ready() const { return m_client != nullptr; }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<core::Engine> m_engine;
    ServerProcess m_server;
    std::unique_ptr<EngineClient> m_client;
};

// Calls `call` with a reply and waits for the answer.
template<typename T>
std::optional<Result<T>> await(const std::function<void(EngineClient::Reply<T>)> &call)
{
    auto answer = std::make_shared<std::optional<Result<T>>>();
    call([answer](Result<T> result) { *answer = std::move(result); });
    if (!QTest::qWaitFor([answer] { return answer->has_value(); }, kTimeout))
        return std::nullopt;
    return *answer;
}

QString streamText(const core::ExecutionPtr &execution, const QString &name = QStringLiteral("stdout"))
{
    QString text;
    for (const sdk::Event &event : execution->events()) {
        if (event.kind == sdk::Event::Kind::Stream && event.fields.value(QLatin1String("name")).toString() == name)
            text += event.fields.value(QLatin1String("text")).toString();
    }
    return text;
}

QString resultText(const core::ExecutionPtr &execution)
{
    for (const sdk::Event &event : execution->events()) {
        if (event.kind == sdk::Event::Kind::Result)
            return event.fields.value(QLatin1String("data")).toObject().value(QLatin1String("text/plain")).toString();
    }
    return QString();
}

} // namespace

class tst_EngineClient : public QObject {
    Q_OBJECT
private slots:
    void init();
    void cleanup();

    void createdContextIsListed_data() { backends(); }
    void createdContextIsListed();
    void runStreamsItsOutputAndResult_data() { backends(); }
    void runStreamsItsOutputAndResult();
    void interruptEndsTheRunAndKeepsState_data() { backends(); }
    void interruptEndsTheRunAndKeepsState();
    void answerReachesTheRunThatAsked_data() { backends(); }
    void answerReachesTheRunThatAsked();
    void historyListsTheRun_data() { backends(); }
    void historyListsTheRun();
    void historyGoesPastTheServersPage_data() { backends(); }
    void historyGoesPastTheServersPage();
    void executionEventsComeBackAfterTheRun_data() { backends(); }
    void executionEventsComeBackAfterTheRun();
    void envLayersShapeTheNextRun_data() { backends(); }
    void envLayersShapeTheNextRun();
    void variablesListWhatARunDefined_data() { backends(); }
    void variablesListWhatARunDefined();
    void renameAndRemoveAreAnnounced_data() { backends(); }
    void renameAndRemoveAreAnnounced();
    void workspaceDirectoryHoldsTheFilesRunsWrite_data() { backends(); }
    void workspaceDirectoryHoldsTheFilesRunsWrite();
    void refreshSeesWhatOtherClientsChanged_data() { backends(); }
    void refreshSeesWhatOtherClientsChanged();
    void contextsOfOtherClientsAreAnnounced_data() { backends(); }
    void contextsOfOtherClientsAreAnnounced();
    void runsOfOtherClientsAreAnnouncedWithTheirOutput_data() { backends(); }
    void runsOfOtherClientsAreAnnouncedWithTheirOutput();
    void errorsAreTheEnginesWords_data() { backends(); }
    void errorsAreTheEnginesWords();
    void workspaceSettingsAreTheEffectiveOnes_data() { backends(); }
    void workspaceSettingsAreTheEffectiveOnes();
    void workspaceSettingsChangeByMergePatch_data() { backends(); }
    void workspaceSettingsChangeByMergePatch();
    void refusedWorkspaceSettingsNameTheField_data() { backends(); }
    void refusedWorkspaceSettingsNameTheField();

private:
    static void backends()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("in-process") << QStringLiteral("in-process");
        QTest::newRow("http") << QStringLiteral("http");
    }
    // A Python context of the backend, or skips when the build has no Python.
    QString python();
    // Runs `code` and waits until it has finished.
    core::ExecutionPtr runToEnd(const QString &contextId, const QString &code, bool input = false);
    core::ExecutionPtr start(const QString &contextId, const QString &code, bool input = false);
    // Another client creates a context and deletes this client's; the client sees both, after
    // a refresh() or (`refresh` false) by itself.
    void seeWhatOtherClientsChanged(bool refresh);

    std::unique_ptr<Backend> m_backend;
};

void tst_EngineClient::init()
{
    QFETCH(QString, kind);
    m_backend = std::make_unique<Backend>(kind);
    QVERIFY(m_backend->ready());
}

void tst_EngineClient::cleanup()
{
    m_backend.reset();
}

QString tst_EngineClient::python()
{
    EngineClient &client = m_backend->client();
    if (!client.availableLanguages().contains(QStringLiteral("python")))
        return QString();
    core::CreateContextRequest request;
    request.language = QStringLiteral("python");
    request.name = QStringLiteral("tested alike");
    const auto created = await<core::ContextInfo>(
            [&](EngineClient::Reply<core::ContextInfo> reply) { client.createContext(request, reply); });
    if (!created || !*created)
        return QString();
    return (*created)->id;
}

core::ExecutionPtr tst_EngineClient::start(const QString &contextId, const QString &code, bool input)
{
    core::RunRequest request;
    request.contextId = contextId;
    request.code = code;
    request.input = input;
    const auto started = await<core::ExecutionPtr>(
            [&](EngineClient::Reply<core::ExecutionPtr> reply) { m_backend->client().run(request, reply); });
    if (!started || !*started)
        return {};
    return **started;
}

core::ExecutionPtr tst_EngineClient::runToEnd(const QString &contextId, const QString &code, bool input)
{
    // The callers check how it ended: an execution that did not finish shows there.
    const core::ExecutionPtr execution = start(contextId, code, input);
    if (execution && !QTest::qWaitFor([execution] { return execution->isFinished(); }, kTimeout))
        qWarning("the run did not finish: %s", qPrintable(code));
    return execution;
}

#define REQUIRE_PYTHON(id)                                                    \
    const QString id = python();                                              \
    if (id.isEmpty())                                                         \
        QSKIP("python is not available in this build (plugins/python)");

void tst_EngineClient::createdContextIsListed()
{
    EngineClient &client = m_backend->client();
    QSignalSpy added(&client, &EngineClient::contextAdded);
    REQUIRE_PYTHON(id);
    QVERIFY(!added.isEmpty());
    QCOMPARE(added.last().at(0).value<core::ContextInfo>().id, id);
    const auto info = client.context(QString(), id);
    QVERIFY(info);
    QCOMPARE(info->language, QStringLiteral("python"));
    QCOMPARE(info->name, QStringLiteral("tested alike"));
    QCOMPARE(info->workspace, QStringLiteral("default"));
    bool listed = false;
    for (const core::ContextInfo &each : client.contexts(QStringLiteral("default"), QStringLiteral("python")))
        listed = listed || each.id == id;
    QVERIFY(listed);
    QVERIFY(client.workspace(QString()));
}

void tst_EngineClient::runStreamsItsOutputAndResult()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    QSignalSpy announced(&client, &EngineClient::executionStarted);
    // The run waits for a file the test writes once it has seen the first line: the line can
    // only have come while the run was going on.
    QTemporaryDir gate;
    const QString go = QDir(gate.path()).filePath(QStringLiteral("go"));
    const core::ExecutionPtr execution = start(
            id, QStringLiteral("import os, time\nprint('first', flush=True)\n"
                               "while not os.path.exists(%1):\n    time.sleep(0.01)\n"
                               "print('second')\n6 * 7")
                        .arg(QStringLiteral("'%1'").arg(go)));
    QVERIFY(execution);
    QVERIFY(QTest::qWaitFor([&] { return streamText(execution) == QLatin1String("first\n"); }, kTimeout));
    QVERIFY(!execution->isFinished());
    QCOMPARE(execution->status(), QStringLiteral("running"));
    QVERIFY(client.followedExecution(execution->id()) == execution);
    QFile file(go);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    QVERIFY(QTest::qWaitFor([&] { return execution->isFinished(); }, kTimeout));
    QCOMPARE(execution->status(), QStringLiteral("ok"));
    QCOMPARE(streamText(execution), QStringLiteral("first\nsecond\n"));
    QCOMPARE(resultText(execution), QStringLiteral("42"));
    QCOMPARE(execution->executionCount(), 1);
    QCOMPARE(execution->contextId(), id);
    bool seen = false;
    for (const QList<QVariant> &signal : announced)
        seen = seen || signal.at(0).value<core::ExecutionPtr>()->id() == execution->id();
    QVERIFY(seen);
}

void tst_EngineClient::interruptEndsTheRunAndKeepsState()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    QCOMPARE(runToEnd(id, QStringLiteral("kept = 'still here'"))->status(), QStringLiteral("ok"));
    const core::ExecutionPtr sleeping = start(
            id, QStringLiteral("import time\nprint('going', flush=True)\ntime.sleep(600)"));
    QVERIFY(sleeping);
    QVERIFY(QTest::qWaitFor([&] { return streamText(sleeping) == QLatin1String("going\n"); }, kTimeout));
    const auto sent = await<void>([&](EngineClient::Reply<void> reply) { client.interrupt(QString(), id, reply); });
    QVERIFY(sent);
    QVERIFY2(*sent, *sent ? "" : qPrintable(sent->error().message));
    QVERIFY(QTest::qWaitFor([&] { return sleeping->isFinished(); }, kTimeout));
    QCOMPARE(sleeping->status(), QStringLiteral("interrupted"));
    QCOMPARE(resultText(runToEnd(id, QStringLiteral("kept"))), QStringLiteral("'still here'"));
}

void tst_EngineClient::answerReachesTheRunThatAsked()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    const core::ExecutionPtr asking = start(id, QStringLiteral("name = input('Name? ')\nprint('hello', name)"), true);
    QVERIFY(asking);
    QVERIFY(QTest::qWaitFor([&] { return asking->isWaitingForInput(); }, kTimeout));
    const auto sent = await<void>([&](EngineClient::Reply<void> reply) {
        client.answerInput(asking->id(), QStringLiteral("Ada"), false, reply);
    });
    QVERIFY(sent);
    QVERIFY2(*sent, *sent ? "" : qPrintable(sent->error().message));
    QVERIFY(QTest::qWaitFor([&] { return asking->isFinished(); }, kTimeout));
    QCOMPARE(asking->status(), QStringLiteral("ok"));
    QVERIFY2(streamText(asking).endsWith(QLatin1String("hello Ada\n")), qPrintable(streamText(asking)));
}

void tst_EngineClient::historyListsTheRun()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    const core::ExecutionPtr ran = runToEnd(id, QStringLiteral("print('for the history')"));
    QCOMPARE(ran->status(), QStringLiteral("ok"));
    // The history is the database's: the run is there once its row is committed.
    std::optional<storage::ExecutionRecord> listed;
    QVERIFY(QTest::qWaitFor([&] {
        const auto history = await<QList<storage::ExecutionRecord>>(
                [&](EngineClient::Reply<QList<storage::ExecutionRecord>> reply) {
                    client.history(QString(), id, 10, reply);
                });
        if (!history || !*history)
            return false;
        for (const storage::ExecutionRecord &record : **history) {
            if (record.id == ran->id())
                listed = record;
        }
        return listed.has_value();
    }, kTimeout));
    QCOMPARE(listed->status, QStringLiteral("ok"));
    QCOMPARE(listed->code, QStringLiteral("print('for the history')"));
    QCOMPARE(listed->executionCount, 1);
    QCOMPARE(listed->contextId, id);
}

void tst_EngineClient::historyGoesPastTheServersPage()
{
    // More runs than one page of the server's history holds (HttpEngine::kHistoryPage).
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    constexpr int kRuns = HttpEngine::kHistoryPage + 2;
    core::ExecutionPtr last;
    for (int n = 1; n <= kRuns; ++n) {
        last = start(id, QStringLiteral("%1").arg(n));
        QVERIFY(last);
    }
    QVERIFY(QTest::qWaitFor([&] { return last->isFinished(); }, kTimeout));
    QList<storage::ExecutionRecord> listed;
    QVERIFY(QTest::qWaitFor([&] {
        const auto history = await<QList<storage::ExecutionRecord>>(
                [&](EngineClient::Reply<QList<storage::ExecutionRecord>> reply) {
                    client.history(QString(), id, kRuns + 10, reply);
                });
        if (!history || !*history)
            return false;
        listed = **history;
        return listed.size() == kRuns && listed.first().id == last->id();
    }, kTimeout));
    // Newest first, each once.
    for (int i = 0; i < kRuns; ++i)
        QCOMPARE(listed.at(i).code, QString::number(kRuns - i));
}

void tst_EngineClient::executionEventsComeBackAfterTheRun()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    const core::ExecutionPtr ran = runToEnd(id, QStringLiteral("print('kept')"));
    const auto events = await<QList<sdk::Event>>(
            [&](EngineClient::Reply<QList<sdk::Event>> reply) { client.executionEvents(ran->id(), reply); });
    QVERIFY(events);
    QVERIFY2(*events, *events ? "" : qPrintable(events->error().message));
    QString text;
    for (const sdk::Event &event : **events) {
        if (event.kind == sdk::Event::Kind::Stream)
            text += event.fields.value(QLatin1String("text")).toString();
    }
    QCOMPARE(text, QStringLiteral("kept\n"));
    QCOMPARE((*events)->last().kind, sdk::Event::Kind::Done);
}

void tst_EngineClient::envLayersShapeTheNextRun()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    const auto workspaceSet = await<void>([&](EngineClient::Reply<void> reply) {
        client.changeEnvLayer(QString(), QString(), {{QStringLiteral("RH_LAYER"), QStringLiteral("workspace")}},
                              {}, {}, reply);
    });
    QVERIFY(workspaceSet && *workspaceSet);
    const auto contextSet = await<void>([&](EngineClient::Reply<void> reply) {
        client.changeEnvLayer(QString(), id, {{QStringLiteral("RH_LAYER"), QStringLiteral("context")}}, {}, {}, reply);
    });
    QVERIFY(contextSet && *contextSet);

    const auto layer = await<QList<storage::EnvVarRecord>>(
            [&](EngineClient::Reply<QList<storage::EnvVarRecord>> reply) { client.envLayer(QString(), id, reply); });
    QVERIFY(layer && *layer);
    QCOMPARE((*layer)->size(), 1);
    QCOMPARE((*layer)->first().key, QStringLiteral("RH_LAYER"));
    QCOMPARE((*layer)->first().value, QStringLiteral("context"));
    const auto effective = await<QMap<QString, QString>>(
            [&](EngineClient::Reply<QMap<QString, QString>> reply) { client.effectiveEnv(QString(), id, reply); });
    QVERIFY(effective && *effective);
    QCOMPARE((*effective)->value(QStringLiteral("RH_LAYER")), QStringLiteral("context"));

    const auto cleared = await<void>([&](EngineClient::Reply<void> reply) {
        client.changeEnvLayer(QString(), id, {}, {}, {QStringLiteral("RH_LAYER")}, reply);
    });
    QVERIFY(cleared && *cleared);
    const core::ExecutionPtr ran = runToEnd(id, QStringLiteral("import os\nos.environ['RH_LAYER']"));
    QCOMPARE(resultText(ran), QStringLiteral("'workspace'"));
}

void tst_EngineClient::variablesListWhatARunDefined()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    QCOMPARE(runToEnd(id, QStringLiteral("answer = 42"))->status(), QStringLiteral("ok"));
    const auto listed = await<QJsonObject>(
            [&](EngineClient::Reply<QJsonObject> reply) { client.variables(QString(), id, reply); });
    QVERIFY(listed);
    QVERIFY2(*listed, *listed ? "" : qPrintable(listed->error().message));
    bool found = false;
    for (const QJsonValue &variable : (*listed)->value(QLatin1String("variables")).toArray()) {
        const QJsonObject v = variable.toObject();
        if (v.value(QLatin1String("name")).toString() == QLatin1String("answer")) {
            found = true;
            QCOMPARE(v.value(QLatin1String("repr")).toString(), QStringLiteral("42"));
        }
    }
    QVERIFY(found);
}

void tst_EngineClient::renameAndRemoveAreAnnounced()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    QSignalSpy changed(&client, &EngineClient::contextChanged);
    QSignalSpy removed(&client, &EngineClient::contextRemoved);
    const auto renamed = await<core::ContextInfo>([&](EngineClient::Reply<core::ContextInfo> reply) {
        client.renameContext(QString(), id, QStringLiteral("renamed"), reply);
    });
    QVERIFY(renamed && *renamed);
    QCOMPARE((*renamed)->name, QStringLiteral("renamed"));
    QVERIFY(QTest::qWaitFor([&] { return client.context(QString(), id)->name == QLatin1String("renamed"); }, kTimeout));
    QVERIFY(!changed.isEmpty());

    const auto gone = await<void>([&](EngineClient::Reply<void> reply) { client.removeContext(QString(), id, reply); });
    QVERIFY(gone && *gone);
    QVERIFY(QTest::qWaitFor([&] { return !removed.isEmpty(); }, kTimeout));
    QCOMPARE(removed.last().at(1).toString(), id);
    QVERIFY(!client.context(QString(), id));
}

void tst_EngineClient::workspaceDirectoryHoldsTheFilesRunsWrite()
{
    // The Files panel shows the workspace directory itself, on this machine in both cases.
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    const auto ws = client.workspace(QString());
    QVERIFY(ws);
    QVERIFY(QFileInfo(ws->directory).isDir());
    QCOMPARE(runToEnd(id, QStringLiteral("open('written.txt', 'w').write('x')"))->status(), QStringLiteral("ok"));
    QVERIFY(QDir(ws->directory).entryList(QDir::Files).contains(QStringLiteral("written.txt")));
}

void tst_EngineClient::refreshSeesWhatOtherClientsChanged()
{
    seeWhatOtherClientsChanged(true);
}

// Without a refresh: the engine says what other clients did as they do it.
void tst_EngineClient::contextsOfOtherClientsAreAnnounced()
{
    seeWhatOtherClientsChanged(false);
}

void tst_EngineClient::seeWhatOtherClientsChanged(bool refresh)
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(mine);
    QSignalSpy added(&client, &EngineClient::contextAdded);
    QSignalSpy removed(&client, &EngineClient::contextRemoved);
    const QString theirs = m_backend->createElsewhere(QStringLiteral("theirs"));
    QVERIFY(!theirs.isEmpty());
    QVERIFY(m_backend->removeElsewhere(mine));
    if (refresh)
        client.refresh();
    QVERIFY(QTest::qWaitFor([&] { return client.context(QString(), theirs) && !client.context(QString(), mine); },
                            kTimeout));
    QCOMPARE(client.context(QString(), theirs)->name, QStringLiteral("theirs"));
    QVERIFY(std::any_of(added.cbegin(), added.cend(), [&](const QList<QVariant> &signal) {
        return signal.at(0).value<core::ContextInfo>().id == theirs;
    }));
    QVERIFY(std::any_of(removed.cbegin(), removed.cend(), [&](const QList<QVariant> &signal) {
        return signal.at(1).toString() == mine;
    }));
}

// A run another client starts is announced by executionStarted, and its output and end reach
// the announced execution, as for a run of this client.
void tst_EngineClient::runsOfOtherClientsAreAnnouncedWithTheirOutput()
{
    EngineClient &client = m_backend->client();
    REQUIRE_PYTHON(id);
    QSignalSpy announced(&client, &EngineClient::executionStarted);
    const QString executionId = m_backend->runElsewhere(id, QStringLiteral("print('from elsewhere')"));
    QVERIFY(!executionId.isEmpty());
    core::ExecutionPtr execution;
    QVERIFY(QTest::qWaitFor([&] {
        for (const QList<QVariant> &signal : std::as_const(announced)) {
            const auto each = signal.at(0).value<core::ExecutionPtr>();
            if (each->id() == executionId)
                execution = each;
        }
        return execution != nullptr;
    }, kTimeout));
    QCOMPARE(execution->contextId(), id);
    QCOMPARE(execution->code(), QStringLiteral("print('from elsewhere')"));
    QVERIFY(QTest::qWaitFor([&] { return execution->isFinished(); }, kTimeout));
    QCOMPARE(execution->status(), QStringLiteral("ok"));
    QCOMPARE(streamText(execution), QStringLiteral("from elsewhere\n"));
    QCOMPARE(client.followedExecution(executionId), execution);
}

void tst_EngineClient::errorsAreTheEnginesWords()
{
    EngineClient &client = m_backend->client();
    core::RunRequest request;
    request.contextId = QStringLiteral("no-such-context");
    request.code = QStringLiteral("1");
    const auto refused = await<core::ExecutionPtr>(
            [&](EngineClient::Reply<core::ExecutionPtr> reply) { client.run(request, reply); });
    QVERIFY(refused);
    QVERIFY(!*refused);
    QCOMPARE(refused->error().code, QStringLiteral("not_found"));
    core::CreateContextRequest create;
    create.language = QStringLiteral("cobol");
    const auto unknown = await<core::ContextInfo>(
            [&](EngineClient::Reply<core::ContextInfo> reply) { client.createContext(create, reply); });
    QVERIFY(unknown);
    QVERIFY(!*unknown);
    QCOMPARE(unknown->error().code, QStringLiteral("unknown_language"));
}

// The default workspace sets nothing itself: every value is the engine's default.
void tst_EngineClient::workspaceSettingsAreTheEffectiveOnes()
{
    EngineClient &client = m_backend->client();
    const auto settings = await<core::WorkspaceSettings>(
            [&](EngineClient::Reply<core::WorkspaceSettings> reply) { client.workspaceSettings(QString(), reply); });
    QVERIFY(settings);
    QVERIFY2(*settings, *settings ? "" : qPrintable(settings->error().message));
    QCOMPARE((*settings)->limits.maxContexts, 64);
    QCOMPARE((*settings)->limits.outputBytes, qint64(16) * 1024 * 1024);
    QCOMPARE((*settings)->isolation, core::WorkspaceSettings::Isolation::None);
    QVERIFY((*settings)->network);
    QVERIFY(!(*settings)->networkChosen);

    const auto unknown = await<core::WorkspaceSettings>(
            [&](EngineClient::Reply<core::WorkspaceSettings> reply) {
                client.workspaceSettings(QStringLiteral("nowhere"), reply);
            });
    QVERIFY(unknown);
    QVERIFY(!*unknown);
    QCOMPARE(unknown->error().code, QStringLiteral("not_found"));
}

// A patch sets what it names, merges limits field by field, and null gives a field back to the
// default; the answer and a later read are the effective settings after it.
void tst_EngineClient::workspaceSettingsChangeByMergePatch()
{
    EngineClient &client = m_backend->client();
    const auto change = [&](const QByteArray &patch) {
        return await<core::WorkspaceSettings>([&](EngineClient::Reply<core::WorkspaceSettings> reply) {
            client.changeWorkspaceSettings(QString(), QJsonDocument::fromJson(patch).object(), reply);
        });
    };
    const auto changed = change(R"({"limits":{"max_contexts":3,"timeout_ms":5000},"network":false})");
    QVERIFY(changed);
    QVERIFY2(*changed, *changed ? "" : qPrintable(changed->error().message));
    QCOMPARE((*changed)->limits.maxContexts, 3);
    QCOMPARE((*changed)->limits.timeoutMs, 5000);
    QVERIFY(!(*changed)->network);
    QVERIFY((*changed)->networkChosen);

    const auto merged = change(R"({"limits":{"max_contexts":null}})");
    QVERIFY(merged);
    QVERIFY2(*merged, *merged ? "" : qPrintable(merged->error().message));
    QCOMPARE((*merged)->limits.maxContexts, 64);
    QCOMPARE((*merged)->limits.timeoutMs, 5000);

    const auto read = await<core::WorkspaceSettings>(
            [&](EngineClient::Reply<core::WorkspaceSettings> reply) { client.workspaceSettings(QString(), reply); });
    QVERIFY(read);
    QVERIFY(*read);
    QVERIFY(**read == **merged);
}

// A refused value changes nothing, and the engine's message names the field.
void tst_EngineClient::refusedWorkspaceSettingsNameTheField()
{
    EngineClient &client = m_backend->client();
    const auto refused = await<core::WorkspaceSettings>([&](EngineClient::Reply<core::WorkspaceSettings> reply) {
        client.changeWorkspaceSettings(QString(), QJsonDocument::fromJson(R"({"limits":{"memory_bytes":4096}})").object(),
                                       reply);
    });
    QVERIFY(refused);
    QVERIFY(!*refused);
    QCOMPARE(refused->error().code, QStringLiteral("bad_request"));
    QVERIFY2(refused->error().message.contains(QStringLiteral("limits.memory_bytes")),
             qPrintable(refused->error().message));
    const auto read = await<core::WorkspaceSettings>(
            [&](EngineClient::Reply<core::WorkspaceSettings> reply) { client.workspaceSettings(QString(), reply); });
    QVERIFY(read);
    QVERIFY(*read);
    QCOMPARE((*read)->limits.memoryBytes, 0);
}

QTEST_MAIN(tst_EngineClient)
#include "tst_engineclient.moc"
