// SPDX-License-Identifier: Apache-2.0
// The native API v1 end to end: a real replhost-server with the build tree's plugins, real
// python3 and bash workers, and a Poco client. Tests that need a language whose runtime is not
// installed are skipped with the server's reason.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QThread>

// QSKIP only leaves the function it is written in, so this is a macro.
#define REQUIRE_LANGUAGE(id)                                  \
    do {                                                      \
        const QString why = missingLanguage(QStringLiteral(id)); \
        if (!why.isEmpty())                                   \
            QSKIP(qPrintable(why));                           \
    } while (false)

class tst_NativeApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void languagesListEveryPlugin();
    void contextLifecycle();
    void renameContext();
    void renameRefusesBadInput_data();
    void renameRefusesBadInput();
    void runPythonStateAcrossRequests();
    void sseEventOrder();
    void runByLanguageUsesDefaultContext();
    void lateSubscriberGetsTheWholeStream();
    void interruptByExecutionIdKeepsState();
    void interruptContextKeepsState();
    void pipelinedRequestWaitsForTheSlowAnswer();
    void http10ClientGetsAnUnframedStream();
    void clientDisconnectMidStreamDoesNotCrash();
    void bashCdAndExportPersist();
    void rRunsInItsJupyterKernelByItsShortName();
    void envLayersReachTheWorker();
    void workspacesScopeContexts();
    void cwdOutsideTheWorkspaceIs400();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    // Why `id` cannot be tested here (plugin not built, runtime missing), or empty.
    QString missingLanguage(const QString &id) const;
    QString createContext(const QString &language, const QString &workspacePrefix = QStringLiteral("/v1"));
    QJsonObject runAndWait(const QString &contextId, const QString &code, const QJsonObject &extra = {});
    static QString resultText(const QJsonObject &execution);

    ServerProcess m_server;
    QHash<QString, QJsonObject> m_languages;
};

void tst_NativeApi::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    const auto languages = client().get(QStringLiteral("/v1/languages"));
    QCOMPARE(languages.status, 200);
    for (const QJsonValue &entry : languages.array())
        m_languages.insert(entry.toObject().value(QStringLiteral("id")).toString(), entry.toObject());
}

QString tst_NativeApi::missingLanguage(const QString &id) const
{
    if (!m_languages.contains(id))
        return QStringLiteral("the %1 plugin is not built").arg(id);
    const QJsonObject entry = m_languages.value(id);
    if (!entry.value(QStringLiteral("available")).toBool())
        return QStringLiteral("%1 is not available: %2").arg(id, entry.value(QStringLiteral("reason")).toString());
    return {};
}

QString tst_NativeApi::createContext(const QString &language, const QString &workspacePrefix)
{
    const auto created = client().post(workspacePrefix + QStringLiteral("/contexts"),
                                       {{QStringLiteral("language"), language}});
    if (created.status != 201)
        qWarning() << "create context:" << created.status << created.body;
    return created.object().value(QStringLiteral("id")).toString();
}

QJsonObject tst_NativeApi::runAndWait(const QString &contextId, const QString &code, const QJsonObject &extra)
{
    QJsonObject body = extra;
    body.insert(QStringLiteral("code"), code);
    const auto response = client().post(QStringLiteral("/v1/contexts/%1/executions?wait=true").arg(contextId), body);
    if (response.status != 200)
        qWarning() << "run:" << response.status << response.body;
    return response.object();
}

QString tst_NativeApi::resultText(const QJsonObject &execution)
{
    return execution.value(QStringLiteral("result")).toObject().value(QStringLiteral("text/plain")).toString();
}

void tst_NativeApi::languagesListEveryPlugin()
{
    QVERIFY(!m_languages.isEmpty());
    for (const QJsonObject &entry : std::as_const(m_languages)) {
        for (const char *field : {"id", "name", "aliases", "available", "version", "reason", "state"})
            QVERIFY2(entry.contains(QLatin1String(field)), qPrintable(QStringLiteral("missing %1").arg(QLatin1String(field))));
        if (!entry.value(QStringLiteral("available")).toBool())
            QVERIFY(!entry.value(QStringLiteral("reason")).toString().isEmpty());
    }
}

void tst_NativeApi::contextLifecycle()
{
    REQUIRE_LANGUAGE("python");
    const auto created = client().post(QStringLiteral("/v1/contexts"),
                                       {{QStringLiteral("language"), QStringLiteral("py")},
                                        {QStringLiteral("name"), QStringLiteral("lifecycle")}});
    QCOMPARE(created.status, 201);
    const QString id = created.object().value(QStringLiteral("id")).toString();
    QVERIFY(!id.isEmpty());
    QCOMPARE(created.object().value(QStringLiteral("language")).toString(), QStringLiteral("python"));

    const auto got = client().get(QStringLiteral("/v1/contexts/") + id);
    QCOMPARE(got.status, 200);
    QCOMPARE(got.object().value(QStringLiteral("name")).toString(), QStringLiteral("lifecycle"));

    bool listed = false;
    for (const QJsonValue &context : client().get(QStringLiteral("/v1/contexts?language=python")).array())
        listed = listed || context.toObject().value(QStringLiteral("id")).toString() == id;
    QVERIFY(listed);
    for (const QJsonValue &context : client().get(QStringLiteral("/v1/contexts?language=bash")).array())
        QVERIFY(context.toObject().value(QStringLiteral("id")).toString() != id);

    QCOMPARE(client().post(QStringLiteral("/v1/contexts/%1/restart").arg(id), {}).status, 200);
    const auto deleted = client().del(QStringLiteral("/v1/contexts/") + id);
    QCOMPARE(deleted.status, 204);
    QVERIFY(deleted.body.isEmpty());
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/") + id).status, 404);
}

void tst_NativeApi::renameContext()
{
    REQUIRE_LANGUAGE("bash");
    const QString id = createContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    const auto renamed = client().patch(QStringLiteral("/v1/contexts/") + id,
                                        {{QStringLiteral("name"), QStringLiteral("analysis ü")}});
    QCOMPARE(renamed.status, 200);
    QCOMPARE(renamed.object().value(QStringLiteral("name")).toString(), QStringLiteral("analysis ü"));
    QCOMPARE(renamed.object().value(QStringLiteral("id")).toString(), id);
    const auto got = client().get(QStringLiteral("/v1/workspaces/default/contexts/") + id);
    QCOMPARE(got.object().value(QStringLiteral("name")).toString(), QStringLiteral("analysis ü"));

    // The interpreter is untouched by a rename.
    QCOMPARE(runAndWait(id, QStringLiteral("R=1")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    QCOMPARE(client().patch(QStringLiteral("/v1/contexts/") + id,
                            {{QStringLiteral("name"), QString()}}).status, 200);
    QCOMPARE(runAndWait(id, QStringLiteral("echo $R")).value(QStringLiteral("stdout")).toString(),
             QStringLiteral("1\n"));
    QCOMPARE(client().del(QStringLiteral("/v1/contexts/") + id).status, 204);
}

void tst_NativeApi::renameRefusesBadInput_data()
{
    QTest::addColumn<QString>("context");  // empty = a real context
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");

    QTest::newRow("malformed JSON") << QString() << QByteArray("{\"name\": ") << 400;
    QTest::newRow("no name") << QString() << QByteArray("{}") << 400;
    QTest::newRow("name not a string") << QString() << QByteArray("{\"name\": 3}") << 400;
    QTest::newRow("other field") << QString() << QByteArray("{\"name\": \"a\", \"cwd\": \"/\"}") << 400;
    QTest::newRow("control character") << QString() << QByteArray("{\"name\": \"a\\nb\"}") << 400;
    QTest::newRow("too long") << QString() << ("{\"name\": \"" + QByteArray(201, 'x') + "\"}") << 400;
    QTest::newRow("unknown context") << QStringLiteral("no-such-context") << QByteArray("{\"name\": \"a\"}")
                                     << 404;
}

void tst_NativeApi::renameRefusesBadInput()
{
    QFETCH(QString, context);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    REQUIRE_LANGUAGE("bash");
    QString id = context;
    if (id.isEmpty()) {
        id = createContext(QStringLiteral("bash"));
        QVERIFY(!id.isEmpty());
    }
    const auto reply = client().request("PATCH", QStringLiteral("/v1/contexts/") + id, body);
    QCOMPARE(reply.status, status);
    QVERIFY2(!reply.object().value(QStringLiteral("message")).toString().isEmpty(),
             reply.body.constData());
    if (context.isEmpty()) {
        // Nothing changed.
        const auto got = client().get(QStringLiteral("/v1/contexts/") + id);
        QCOMPARE(got.object().value(QStringLiteral("name")).toString(), QString());
        QCOMPARE(client().del(QStringLiteral("/v1/contexts/") + id).status, 204);
    }
}

void tst_NativeApi::runPythonStateAcrossRequests()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());

    const QJsonObject first = runAndWait(id, QStringLiteral("x = 41"));
    QCOMPARE(first.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    const QJsonObject second = runAndWait(id, QStringLiteral("x + 1"));
    QCOMPARE(second.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(resultText(second), QStringLiteral("42"));
    QCOMPARE(second.value(QStringLiteral("context_id")).toString(), id);

    // A Python error is a successful request about a failed execution, and state survives it.
    const QJsonObject error = runAndWait(id, QStringLiteral("1/0"));
    QCOMPARE(error.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
    QCOMPARE(error.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(),
             QStringLiteral("ZeroDivisionError"));
    QCOMPARE(resultText(runAndWait(id, QStringLiteral("x"))), QStringLiteral("41"));
}

void tst_NativeApi::sseEventOrder()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("print('hello')\n6 * 7")}});
    QCOMPARE(stream->status(), 200);
    QVERIFY(stream->contentType().startsWith("text/event-stream"));

    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream->next(30000))
        events.append(*event);

    // Output is a byte stream: one print() may arrive as several stream events.
    QStringList types;
    QString stdoutText;
    for (const ApiClient::Event &event : events) {
        if (event.type == "stream")
            stdoutText += event.json().value(QStringLiteral("text")).toString();
        if (event.type != "stream" || types.isEmpty() || types.back() != QLatin1String("stream"))
            types.append(QString::fromLatin1(event.type));
    }
    QCOMPARE(types, (QStringList{QStringLiteral("execution"), QStringLiteral("started"), QStringLiteral("stream"),
                                 QStringLiteral("result"), QStringLiteral("done")}));
    QCOMPARE(stdoutText, QStringLiteral("hello\n"));

    const QJsonObject head = events.front().json();
    QVERIFY(!head.value(QStringLiteral("id")).toString().isEmpty());
    QCOMPARE(head.value(QStringLiteral("context_id")).toString(), id);
    QVERIFY(events.front().id.isEmpty());
    for (int i = 1; i < events.size(); ++i) {
        QCOMPARE(events[i].id, QByteArray::number(i - 1));  // the event's index in the execution
        QCOMPARE(events[i].json().value(QStringLiteral("type")).toString(), QString::fromLatin1(events[i].type));
    }
    QCOMPARE(events[events.size() - 2].json().value(QStringLiteral("data")).toObject()
                     .value(QStringLiteral("text/plain")).toString(),
             QStringLiteral("42"));
    QCOMPARE(events.back().json().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
}

void tst_NativeApi::runByLanguageUsesDefaultContext()
{
    REQUIRE_LANGUAGE("python");
    const auto first = client().post(QStringLiteral("/v1/executions?wait=true"),
                                     {{QStringLiteral("language"), QStringLiteral("python")},
                                      {QStringLiteral("code"), QStringLiteral("default_marker = 7")}});
    QCOMPARE(first.status, 200);
    const auto second = client().post(QStringLiteral("/v1/executions?wait=true"),
                                      {{QStringLiteral("language"), QStringLiteral("python3")},
                                       {QStringLiteral("code"), QStringLiteral("default_marker * 6")}});
    QCOMPARE(second.status, 200);
    QCOMPARE(resultText(second.object()), QStringLiteral("42"));
    QCOMPARE(second.object().value(QStringLiteral("context_id")), first.object().value(QStringLiteral("context_id")));

    // By context id through the same route.
    const auto byId = client().post(QStringLiteral("/v1/executions?wait=true"),
                                    {{QStringLiteral("context_id"), first.object().value(QStringLiteral("context_id"))},
                                     {QStringLiteral("code"), QStringLiteral("default_marker")}});
    QCOMPARE(resultText(byId.object()), QStringLiteral("7"));
}

void tst_NativeApi::lateSubscriberGetsTheWholeStream()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    const QJsonObject done = runAndWait(id, QStringLiteral("print('a'); print('b', flush=True)\n'r'"));
    const QString executionId = done.value(QStringLiteral("id")).toString();
    QVERIFY(!executionId.isEmpty());

    const auto json = client().get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(json.status, 200);
    QCOMPARE(json.object().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));

    const std::unique_ptr<ApiClient::Stream> stream =
            client().openStream("GET", QStringLiteral("/v1/executions/%1/events").arg(executionId));
    QCOMPARE(stream->status(), 200);
    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream->next(10000))
        events.append(*event);
    QVERIFY(events.size() >= 4);
    QCOMPARE(events.front().type, QByteArray("execution"));
    QCOMPARE(events.back().type, QByteArray("done"));
    QCOMPARE(events.size() - 1, done.value(QStringLiteral("events")).toArray().size());
}

void tst_NativeApi::interruptByExecutionIdKeepsState()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    QCOMPARE(runAndWait(id, QStringLiteral("x = 5")).value(QStringLiteral("status")).toString(), QStringLiteral("ok"));

    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("while True: pass")}});
    QCOMPARE(stream->status(), 200);
    const std::optional<ApiClient::Event> head = stream->next(10000);
    QVERIFY(head && head->type == "execution");
    const QString executionId = head->json().value(QStringLiteral("id")).toString();
    const std::optional<ApiClient::Event> started = stream->next(10000);
    QVERIFY(started && started->type == "started");
    QThread::msleep(200);

    const auto interrupted = client().post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {});
    QCOMPARE(interrupted.status, 202);

    QByteArray lastType;
    QJsonObject done;
    while (std::optional<ApiClient::Event> event = stream->next(20000)) {
        lastType = event->type;
        if (event->type == "done")
            done = event->json();
    }
    QCOMPARE(lastType, QByteArray("done"));
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(resultText(runAndWait(id, QStringLiteral("x"))), QStringLiteral("5"));

    // Interrupting a finished execution is a conflict.
    QCOMPARE(client().post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {}).status, 409);
}

void tst_NativeApi::interruptContextKeepsState()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    runAndWait(id, QStringLiteral("y = 'kept'"));
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("import time\ntime.sleep(60)")}});
    QVERIFY(stream->next(10000));  // execution
    QVERIFY(stream->next(10000));  // started
    QCOMPARE(client().post(QStringLiteral("/v1/contexts/%1/interrupt").arg(id), {}).status, 202);
    QByteArray lastType;
    while (std::optional<ApiClient::Event> event = stream->next(20000))
        lastType = event->type;
    QCOMPARE(lastType, QByteArray("done"));
    QCOMPARE(resultText(runAndWait(id, QStringLiteral("y"))), QStringLiteral("'kept'"));
}

void tst_NativeApi::pipelinedRequestWaitsForTheSlowAnswer()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    const QByteArray body = R"({"code":"import time\ntime.sleep(0.5)\n'slow'"})";
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("POST /v1/contexts/" + id.toLatin1() + "/executions?wait=true HTTP/1.1\r\n"
                            "Host: localhost\r\nAuthorization: Bearer " + m_server.token()
                            + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body
                            + "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    const QByteArray responses = connection.readResponses(2, 30000);
    QCOMPARE(statusCodes(responses), (QList<int>{200, 200}));
    QVERIFY2(responses.indexOf("'slow'") >= 0 && responses.indexOf("'slow'") < responses.indexOf("\"status\":\"ok\"}"),
             responses.constData());
}

void tst_NativeApi::http10ClientGetsAnUnframedStream()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    const QByteArray body = R"({"code":"'ten'"})";
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("POST /v1/contexts/" + id.toLatin1() + "/executions HTTP/1.0\r\n"
                            "Host: localhost\r\nAuthorization: Bearer " + m_server.token()
                            + "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body));
    bool closed = false;
    const QByteArray received = connection.readUntilClosed(20000, &closed);
    QVERIFY(closed);
    QVERIFY2(received.startsWith("HTTP/1.1 200 "), received.constData());
    QVERIFY(!received.toLower().contains("transfer-encoding"));
    QVERIFY(received.contains("\r\n\r\nevent: execution\n"));
    QVERIFY(received.endsWith("\n\n"));
    QVERIFY(received.contains("event: done\n"));
}

void tst_NativeApi::clientDisconnectMidStreamDoesNotCrash()
{
    REQUIRE_LANGUAGE("python");
    const QString id = createContext(QStringLiteral("python"));
    {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
                {{QStringLiteral("code"),
                  QStringLiteral("import time\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.02)\n"
                                 "survivor = 'yes'")}});
        QVERIFY(stream->next(10000));  // execution
        QVERIFY(stream->next(10000));  // started
        QVERIFY(stream->next(10000));  // first output
        stream->abort();
    }
    // The server keeps serving, and the execution ran to its end without its client.
    QThread::msleep(200);
    QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
    QElapsedTimer timer;
    timer.start();
    QJsonObject survivor;
    do {
        survivor = runAndWait(id, QStringLiteral("survivor"));
    } while (survivor.value(QStringLiteral("status")).toString() != QLatin1String("ok") && timer.elapsed() < 10000);
    QCOMPARE(resultText(survivor), QStringLiteral("'yes'"));

    // Many clients leaving at once.
    for (int i = 0; i < 20; ++i) {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
                {{QStringLiteral("code"), QStringLiteral("for i in range(200): print(i)")}});
        stream->next(10000);
        stream->abort();
    }
    QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
}

void tst_NativeApi::bashCdAndExportPersist()
{
    REQUIRE_LANGUAGE("bash");
    const QString id = createContext(QStringLiteral("bash"));
    QVERIFY(!id.isEmpty());
    const QJsonObject first = runAndWait(id, QStringLiteral("cd /tmp; export A=1"));
    QCOMPARE(first.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    const QJsonObject second = runAndWait(id, QStringLiteral("echo \"$PWD $A\""));
    QCOMPARE(second.value(QStringLiteral("stdout")).toString(), QStringLiteral("/tmp 1\n"));
}

void tst_NativeApi::rRunsInItsJupyterKernelByItsShortName()
{
    REQUIRE_LANGUAGE("jupyter-ir");
    const QJsonObject r = m_languages.value(QStringLiteral("jupyter-ir"));
    QVERIFY(r.value(QStringLiteral("aliases")).toArray().contains(QStringLiteral("r")));
    QCOMPARE(r.value(QStringLiteral("capabilities")).toObject()
                 .value(QStringLiteral("env_per_execution")).toBool(true), false);

    const auto first = client().post(QStringLiteral("/v1/executions?wait=true"),
                                     {{QStringLiteral("language"), QStringLiteral("r")},
                                      {QStringLiteral("code"), QStringLiteral("x <- 41; x + 1")}});
    QCOMPARE(first.status, 200);
    QCOMPARE(first.object().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    // IRkernel shows R's visible values as displays.
    const auto shown = [](const QJsonObject &execution) {
        const QJsonArray displays = execution.value(QStringLiteral("displays")).toArray();
        return displays.isEmpty() ? QString()
                                  : displays.last().toObject().value(QStringLiteral("text/plain")).toString();
    };
    QCOMPARE(shown(first.object()), QStringLiteral("[1] 42"));
    const QString id = first.object().value(QStringLiteral("context_id")).toString();
    QCOMPARE(shown(runAndWait(id, QStringLiteral("x"))), QStringLiteral("[1] 41"));

    // An environment for one run is refused, not ignored.
    const auto refused = client().post(QStringLiteral("/v1/contexts/%1/executions?wait=true").arg(id),
                                       {{QStringLiteral("code"), QStringLiteral("Sys.getenv('ONE_RUN')")},
                                        {QStringLiteral("env"), QJsonObject{{QStringLiteral("ONE_RUN"), QStringLiteral("1")}}}});
    QCOMPARE(refused.status, 400);
    QVERIFY2(refused.body.contains("env_per_execution"), refused.body.constData());
}

void tst_NativeApi::envLayersReachTheWorker()
{
    REQUIRE_LANGUAGE("python");
    // A workspace of its own, so the layers do not leak into other tests.
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("envtest")}}).status, 201);
    const QString ws = QStringLiteral("/v1/workspaces/envtest");
    const auto patched = client().patch(ws + QStringLiteral("/env"),
                                        {{QStringLiteral("set"), QJsonObject{{QStringLiteral("WS_ONLY"), QStringLiteral("w")},
                                                                             {QStringLiteral("SHARED"), QStringLiteral("from-workspace")}}}});
    QCOMPARE(patched.status, 200);
    QCOMPARE(patched.object().value(QStringLiteral("set")).toObject().value(QStringLiteral("WS_ONLY")).toString(), QStringLiteral("w"));

    const auto created = client().post(ws + QStringLiteral("/contexts"),
                                       {{QStringLiteral("language"), QStringLiteral("python")},
                                        {QStringLiteral("env"), QJsonObject{{QStringLiteral("SHARED"), QStringLiteral("from-context")}}}});
    QCOMPARE(created.status, 201);
    const QString id = created.object().value(QStringLiteral("id")).toString();
    QCOMPARE(client().patch(ws + QStringLiteral("/contexts/%1/env").arg(id),
                            {{QStringLiteral("set"), QJsonObject{{QStringLiteral("CTX_ONLY"), QStringLiteral("c")}}},
                             {QStringLiteral("unset"), QJsonArray{QStringLiteral("HOME")}}}).status, 200);

    const auto env = client().get(ws + QStringLiteral("/contexts/%1/env").arg(id));
    QCOMPARE(env.status, 200);
    const QJsonObject effective = env.object().value(QStringLiteral("effective")).toObject();
    QCOMPARE(effective.value(QStringLiteral("WS_ONLY")).toString(), QStringLiteral("w"));
    QCOMPARE(effective.value(QStringLiteral("SHARED")).toString(), QStringLiteral("from-context"));
    QVERIFY(!effective.contains(QStringLiteral("HOME")));
    QVERIFY(env.object().value(QStringLiteral("unset")).toArray().contains(QStringLiteral("HOME")));

    const QString probe = QStringLiteral(
            "import os\n'|'.join(os.environ.get(k, '-') for k in ['WS_ONLY','SHARED','CTX_ONLY','EXEC_ONLY','HOME'])");
    auto run = [&](const QJsonObject &extra) {
        QJsonObject body = extra;
        body.insert(QStringLiteral("code"), probe);
        return resultText(client().post(ws + QStringLiteral("/contexts/%1/executions?wait=true").arg(id), body).object());
    };
    QCOMPARE(run({}), QStringLiteral("'w|from-context|c|-|-'"));
    QCOMPARE(run({{QStringLiteral("env"), QJsonObject{{QStringLiteral("EXEC_ONLY"), QStringLiteral("e")},
                                                      {QStringLiteral("SHARED"), QStringLiteral("from-exec")}}},
                  {QStringLiteral("env_unset"), QJsonArray{QStringLiteral("WS_ONLY")}}}),
             QStringLiteral("'-|from-exec|c|e|-'"));
    // The execution layer is gone again.
    QCOMPARE(run({}), QStringLiteral("'w|from-context|c|-|-'"));

    // Clearing a key from the context layer lets the workspace value through again.
    QCOMPARE(client().patch(ws + QStringLiteral("/contexts/%1/env").arg(id),
                            {{QStringLiteral("clear"), QJsonArray{QStringLiteral("SHARED")}}}).status, 200);
    QCOMPARE(run({}), QStringLiteral("'w|from-workspace|c|-|-'"));
}

void tst_NativeApi::workspacesScopeContexts()
{
    REQUIRE_LANGUAGE("python");
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("scoped")}}).status, 201);
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("scoped")}}).status, 409);
    const auto ws = client().get(QStringLiteral("/v1/workspaces/scoped"));
    QCOMPARE(ws.status, 200);
    QVERIFY(!ws.object().value(QStringLiteral("directory")).toString().isEmpty());

    const QString id = createContext(QStringLiteral("python"), QStringLiteral("/v1/workspaces/scoped"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/scoped/contexts/") + id).status, 200);
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/") + id).status, 404);  // not in "default"

    const auto run = client().post(QStringLiteral("/v1/workspaces/scoped/contexts/%1/executions?wait=true").arg(id),
                                   {{QStringLiteral("code"), QStringLiteral("import os\nos.getcwd()")}});
    QCOMPARE(run.status, 200);
    QVERIFY2(resultText(run.object()).contains(ws.object().value(QStringLiteral("directory")).toString()),
             run.body.constData());
    const QString executionId = run.object().value(QStringLiteral("id")).toString();
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/scoped/executions/") + executionId).status, 200);
    QCOMPARE(client().get(QStringLiteral("/v1/executions/") + executionId).status, 404);

    bool listed = false;
    for (const QJsonValue &w : client().get(QStringLiteral("/v1/workspaces")).array())
        listed = listed || w.toObject().value(QStringLiteral("name")).toString() == QLatin1String("scoped");
    QVERIFY(listed);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/nope")).status, 404);
}

void tst_NativeApi::cwdOutsideTheWorkspaceIs400()
{
    REQUIRE_LANGUAGE("python");
    const auto response = client().post(QStringLiteral("/v1/contexts"),
                                        {{QStringLiteral("language"), QStringLiteral("python")},
                                         {QStringLiteral("cwd"), QStringLiteral("/etc")}});
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
}

QTEST_GUILESS_MAIN(tst_NativeApi)
#include "tst_nativeapi.moc"
