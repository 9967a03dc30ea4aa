// SPDX-License-Identifier: Apache-2.0
// MCP's Streamable HTTP transport at /mcp, spoken as raw JSON-RPC by a client that shares nothing
// with the server (Poco::Net), against a real replhost-server: the initialize handshake for each
// revision, sessions and the MCP-Protocol-Version header, every JSON-RPC error code, batches and
// notifications as each revision has them, tools/list and tools/call, progress as an event
// stream, cancellation, and the token, Host and Origin rules every route of the server has.

#include "apiclient.h"
#include "serverprocess.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {

const QString kPath = QStringLiteral("/mcp");
const Headers kAccept{{"Accept", "application/json, text/event-stream"}};

QByteArray json(const QJsonValue &value)
{
    return value.isArray() ? QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact)
                           : QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact);
}

QJsonObject request(const QJsonValue &id, const QString &method, const QJsonObject &params = {})
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")}, {QStringLiteral("id"), id},
            {QStringLiteral("method"), method}, {QStringLiteral("params"), params}};
}

QJsonObject notification(const QString &method, const QJsonObject &params = {})
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")}, {QStringLiteral("method"), method},
            {QStringLiteral("params"), params}};
}

QJsonObject initializeParams(const QString &version)
{
    return {{QStringLiteral("protocolVersion"), version},
            {QStringLiteral("capabilities"), QJsonObject{}},
            {QStringLiteral("clientInfo"), QJsonObject{{QStringLiteral("name"), QStringLiteral("tst_mcpprotocol")},
                                                       {QStringLiteral("version"), QStringLiteral("1")}}}};
}

int errorCode(const QJsonObject &response)
{
    return response.value(QLatin1String("error")).toObject().value(QLatin1String("code")).toInt();
}

} // namespace

class tst_McpProtocol : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void initializeNegotiatesTheRevision_data();
    void initializeNegotiatesTheRevision();
    void initializeWithoutProtocolVersionIsInvalidParams();
    void initializeInASessionIsRefused();
    void pingAnswersAnEmptyResult();
    void unknownMethodIsMethodNotFound();
    void bodyThatIsNotJsonIsParseError();
    void malformedMessageIsInvalidRequest_data();
    void malformedMessageIsInvalidRequest();
    void notificationsAndResponsesAreAccepted_data();
    void notificationsAndResponsesAreAccepted();
    void unsupportedProtocolVersionHeaderIs400();
    void headerOtherThanTheSessionsRevisionIs400();
    void unknownSessionIs404();
    void requestWithoutSessionSpeaksTheAssumedRevision();
    void batchUnder20250326IsAnsweredInOne();
    void batchUnderLaterRevisionsIsRefused_data();
    void batchUnderLaterRevisionsIsRefused();
    void deleteEndsTheSession();
    void getIs405();
    void wrongContentTypeIs415();
    void answerTypesNotAcceptedIs406();
    void toolsListDescribesEveryTool();
    void toolsCallOfUnknownToolIsInvalidParams();
    void toolsCallWithoutNameIsInvalidParams();
    void toolErrorsAreResultsWithIsError();
    void runCodeKeepsStateAcrossCalls();
    void displayWithoutAnImageIsTextContent();
    void runCodeAsksForProgressAndGetsAnEventStream();
    void longOutputIsCutWithANoteNamingTheExecution();
    void cancelledRunIsInterruptedAndKeepsState();
    void filesWrittenByToolsAndByCodeAreTheSame();
    void readFileOfBinaryDataIsBase64();
    void fileToolsStayInsideTheWorkspace_data();
    void fileToolsStayInsideTheWorkspace();
    void runCommandAnswersWithItsExitCode();
    void resourcesListAndRead();
    void resourceErrorsAreTheSpecsCodes_data();
    void resourceErrorsAreTheSpecsCodes();
    void tokenIsRequired_data();
    void tokenIsRequired();
    void foreignHostOrOriginIs403_data();
    void foreignHostOrOriginIs403();
    void allowedOriginCanReadTheSessionId();

private:
    ApiClient::Response post(const QJsonValue &message, const Headers &extra = {}) const;
    // A new session of `version`; its id (empty on failure, with a warning).
    QString initialize(const QString &version = QStringLiteral("2025-11-25")) const;
    Headers inSession(const QString &session, const QString &version = QStringLiteral("2025-11-25")) const;
    QString pythonMissing() const;
    // tools/call in a fresh session; the call's result.
    QJsonObject callTool(const QString &name, const QJsonObject &arguments) const;

    ServerProcess m_server;
    std::unique_ptr<ApiClient> m_client;
};

void tst_McpProtocol::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    m_client = std::make_unique<ApiClient>(m_server.port(), m_server.token());
}

void tst_McpProtocol::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
}

ApiClient::Response tst_McpProtocol::post(const QJsonValue &message, const Headers &extra) const
{
    Headers headers = kAccept;
    headers.append(extra);
    return m_client->request("POST", kPath, json(message), headers);
}

QString tst_McpProtocol::initialize(const QString &version) const
{
    const ApiClient::Response response = post(request(0, QStringLiteral("initialize"), initializeParams(version)));
    const QString session = QString::fromLatin1(response.header("Mcp-Session-Id"));
    if (response.status != 200 || session.isEmpty())
        qWarning() << "initialize answered" << response.status << response.body;
    return session;
}

Headers tst_McpProtocol::inSession(const QString &session, const QString &version) const
{
    return {{"Mcp-Session-Id", session.toLatin1()}, {"MCP-Protocol-Version", version.toLatin1()}};
}

QString tst_McpProtocol::pythonMissing() const
{
    return m_client->missingLanguage(QStringLiteral("python"));
}

void tst_McpProtocol::initializeNegotiatesTheRevision_data()
{
    QTest::addColumn<QString>("asked");
    QTest::addColumn<QString>("answered");
    QTest::newRow("2025-11-25") << "2025-11-25" << "2025-11-25";
    QTest::newRow("2025-06-18") << "2025-06-18" << "2025-06-18";
    QTest::newRow("2025-03-26") << "2025-03-26" << "2025-03-26";
    QTest::newRow("unknown: the newest") << "2099-01-01" << "2025-11-25";
    QTest::newRow("older than any: the newest") << "2024-11-05" << "2025-11-25";
}

void tst_McpProtocol::initializeNegotiatesTheRevision()
{
    QFETCH(QString, asked);
    QFETCH(QString, answered);
    const ApiClient::Response response = post(request(QStringLiteral("init-1"), QStringLiteral("initialize"),
                                                      initializeParams(asked)));
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("Content-Type").startsWith("application/json"));
    const QJsonObject message = response.object();
    QCOMPARE(message.value("jsonrpc").toString(), QStringLiteral("2.0"));
    QCOMPARE(message.value("id").toString(), QStringLiteral("init-1"));
    const QJsonObject result = message.value("result").toObject();
    QCOMPARE(result.value("protocolVersion").toString(), answered);
    QVERIFY(result.value("capabilities").toObject().contains("tools"));
    QCOMPARE(result.value("serverInfo").toObject().value("name").toString(), QStringLiteral("replhost"));
    QVERIFY(!result.value("serverInfo").toObject().value("version").toString().isEmpty());
    const QByteArray session = response.header("Mcp-Session-Id");
    QVERIFY(!session.isEmpty());
    // The session speaks what was negotiated: a request in it is answered.
    const ApiClient::Response ping = post(request(1, QStringLiteral("ping")), inSession(QString::fromLatin1(session), answered));
    QCOMPARE(ping.status, 200);
    QVERIFY(ping.object().contains("result"));
}

void tst_McpProtocol::initializeWithoutProtocolVersionIsInvalidParams()
{
    const ApiClient::Response response = post(request(7, QStringLiteral("initialize"), {}));
    QCOMPARE(response.status, 200);
    QCOMPARE(errorCode(response.object()), -32602);
    QCOMPARE(response.object().value("id").toInt(), 7);
    QVERIFY(response.header("Mcp-Session-Id").isEmpty());
}

void tst_McpProtocol::initializeInASessionIsRefused()
{
    const QString session = initialize();
    QVERIFY(!session.isEmpty());
    const ApiClient::Response again = post(request(1, QStringLiteral("initialize"), initializeParams("2025-11-25")),
                                           {{"Mcp-Session-Id", session.toLatin1()}});
    QCOMPARE(again.status, 400);
    QCOMPARE(errorCode(again.object()), -32600);
}

void tst_McpProtocol::pingAnswersAnEmptyResult()
{
    const QString session = initialize();
    const ApiClient::Response response = post(request(5, QStringLiteral("ping")), inSession(session));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.object().value("result").toObject(), QJsonObject());
    QCOMPARE(response.object().value("id").toInt(), 5);
}

void tst_McpProtocol::unknownMethodIsMethodNotFound()
{
    const QString session = initialize();
    const ApiClient::Response response = post(request(2, QStringLiteral("sampling/nothing")), inSession(session));
    QCOMPARE(response.status, 200);
    QCOMPARE(errorCode(response.object()), -32601);
    QCOMPARE(response.object().value("id").toInt(), 2);
}

void tst_McpProtocol::bodyThatIsNotJsonIsParseError()
{
    Headers headers = kAccept;
    const ApiClient::Response response = m_client->request("POST", kPath, "{\"jsonrpc\": \"2.0\", ", headers);
    QCOMPARE(response.status, 400);
    const QJsonObject message = response.object();
    QCOMPARE(errorCode(message), -32700);
    QVERIFY(message.value("id").isNull());
}

void tst_McpProtocol::malformedMessageIsInvalidRequest_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not an object") << QByteArray("42");
    QTest::newRow("no jsonrpc") << QByteArray(R"({"id":1,"method":"ping"})");
    QTest::newRow("jsonrpc 1.0") << QByteArray(R"({"jsonrpc":"1.0","id":1,"method":"ping"})");
    QTest::newRow("id null") << QByteArray(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
    QTest::newRow("id an object") << QByteArray(R"({"jsonrpc":"2.0","id":{},"method":"ping"})");
    QTest::newRow("method a number") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":3})");
    QTest::newRow("params an array") << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[]})");
    QTest::newRow("neither method nor result") << QByteArray(R"({"jsonrpc":"2.0","id":1})");
}

void tst_McpProtocol::malformedMessageIsInvalidRequest()
{
    QFETCH(QByteArray, body);
    const ApiClient::Response response = m_client->request("POST", kPath, body, kAccept);
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32600);
}

void tst_McpProtocol::notificationsAndResponsesAreAccepted_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("initialized") << json(notification(QStringLiteral("notifications/initialized")));
    QTest::newRow("cancelled, of nothing") << json(notification(QStringLiteral("notifications/cancelled"),
                                                                 {{"requestId", 999}}));
    QTest::newRow("an unknown notification") << json(notification(QStringLiteral("notifications/whatever")));
    QTest::newRow("a response") << QByteArray(R"({"jsonrpc":"2.0","id":3,"result":{}})");
}

void tst_McpProtocol::notificationsAndResponsesAreAccepted()
{
    QFETCH(QByteArray, body);
    const QString session = initialize();
    Headers headers = kAccept;
    headers.append(inSession(session));
    const ApiClient::Response response = m_client->request("POST", kPath, body, headers);
    QCOMPARE(response.status, 202);
    QVERIFY(response.body.isEmpty());
}

void tst_McpProtocol::unsupportedProtocolVersionHeaderIs400()
{
    const ApiClient::Response response = post(request(1, QStringLiteral("ping")), {{"MCP-Protocol-Version", "1999-01-01"}});
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32600);
    const QJsonArray supported = response.object().value("error").toObject().value("data").toObject()
                                         .value("supported").toArray();
    QVERIFY(supported.contains(QStringLiteral("2025-11-25")));
    QVERIFY(supported.contains(QStringLiteral("2025-03-26")));
}

void tst_McpProtocol::headerOtherThanTheSessionsRevisionIs400()
{
    const QString session = initialize(QStringLiteral("2025-06-18"));
    const ApiClient::Response response = post(request(1, QStringLiteral("ping")), inSession(session, "2025-11-25"));
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32600);
}

void tst_McpProtocol::unknownSessionIs404()
{
    const ApiClient::Response response = post(request(1, QStringLiteral("ping")),
                                              inSession(QStringLiteral("no-such-session")));
    QCOMPARE(response.status, 404);
    QCOMPARE(errorCode(response.object()), -32600);
}

void tst_McpProtocol::requestWithoutSessionSpeaksTheAssumedRevision()
{
    // No header and no session: the transport's rule is 2025-03-26, which has batches.
    const ApiClient::Response response = post(request(1, QStringLiteral("tools/list")));
    QCOMPARE(response.status, 200);
    QVERIFY(!response.object().value("result").toObject().value("tools").toArray().isEmpty());
}

void tst_McpProtocol::batchUnder20250326IsAnsweredInOne()
{
    const QString session = initialize(QStringLiteral("2025-03-26"));
    const QJsonArray batch{request(1, QStringLiteral("ping")), notification(QStringLiteral("notifications/initialized")),
                           request(QStringLiteral("two"), QStringLiteral("nothing/here")),
                           request(3, QStringLiteral("initialize"), initializeParams("2025-03-26")),
                           QJsonValue(17)};
    const ApiClient::Response response = post(batch, inSession(session, "2025-03-26"));
    QCOMPARE(response.status, 200);
    const QJsonArray answers = response.array();
    // Every request and every invalid message is answered; the notification is not.
    QCOMPARE(answers.size(), 4);
    QHash<QString, QJsonObject> byId;
    for (const QJsonValue &answer : answers)
        byId.insert(answer.toObject().value("id").toVariant().toString(), answer.toObject());
    QVERIFY(byId.value("1").contains("result"));
    QCOMPARE(errorCode(byId.value("two")), -32601);
    QCOMPARE(errorCode(byId.value("3")), -32600);  // initialize is never part of a batch
    QCOMPARE(errorCode(byId.value("")), -32600);   // 17 is no message; its id is null

    const ApiClient::Response onlyNotifications =
            post(QJsonArray{notification(QStringLiteral("notifications/initialized"))}, inSession(session, "2025-03-26"));
    QCOMPARE(onlyNotifications.status, 202);
    const ApiClient::Response empty = post(QJsonArray{}, inSession(session, "2025-03-26"));
    QCOMPARE(empty.status, 400);
    QCOMPARE(errorCode(empty.object()), -32600);
}

void tst_McpProtocol::batchUnderLaterRevisionsIsRefused_data()
{
    QTest::addColumn<QString>("version");
    QTest::newRow("2025-06-18") << "2025-06-18";
    QTest::newRow("2025-11-25") << "2025-11-25";
}

void tst_McpProtocol::batchUnderLaterRevisionsIsRefused()
{
    QFETCH(QString, version);
    const QString session = initialize(version);
    const ApiClient::Response response = post(QJsonArray{request(1, QStringLiteral("ping"))}, inSession(session, version));
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32600);
}

void tst_McpProtocol::deleteEndsTheSession()
{
    const QString session = initialize();
    const ApiClient::Response ended = m_client->request("DELETE", kPath, {}, {{"Mcp-Session-Id", session.toLatin1()}});
    QCOMPARE(ended.status, 204);
    QCOMPARE(post(request(1, QStringLiteral("ping")), inSession(session)).status, 404);
    QCOMPARE(m_client->request("DELETE", kPath, {}, {{"Mcp-Session-Id", session.toLatin1()}}).status, 404);
}

void tst_McpProtocol::getIs405()
{
    // The server has nothing to say outside the answers to requests: no GET stream.
    const ApiClient::Response response = m_client->request("GET", kPath, {}, {{"Accept", "text/event-stream"}});
    QCOMPARE(response.status, 405);
    QVERIFY(response.header("Allow").contains("POST"));
}

void tst_McpProtocol::wrongContentTypeIs415()
{
    Headers headers = kAccept;
    headers.append(Headers{{"Content-Type", "text/plain"}});
    const ApiClient::Response response = m_client->request("POST", kPath, json(request(1, "ping")), headers);
    QCOMPARE(response.status, 415);
}

void tst_McpProtocol::answerTypesNotAcceptedIs406()
{
    const ApiClient::Response response = m_client->request("POST", kPath, json(request(1, "ping")),
                                                           {{"Accept", "text/html"}});
    QCOMPARE(response.status, 406);
}

void tst_McpProtocol::toolsListDescribesEveryTool()
{
    const QString session = initialize();
    const ApiClient::Response response = post(request(1, QStringLiteral("tools/list")), inSession(session));
    QCOMPARE(response.status, 200);
    const QJsonArray tools = response.object().value("result").toObject().value("tools").toArray();
    QStringList names;
    for (const QJsonValue &value : tools) {
        const QJsonObject tool = value.toObject();
        const QString name = tool.value("name").toString();
        names.append(name);
        QVERIFY2(tool.value("description").toString().size() > 40, qPrintable(name));
        QCOMPARE(tool.value("inputSchema").toObject().value("type").toString(), QStringLiteral("object"));
        QCOMPARE(tool.value("outputSchema").toObject().value("type").toString(), QStringLiteral("object"));
        const QJsonObject annotations = tool.value("annotations").toObject();
        QVERIFY2(annotations.value("readOnlyHint").isBool(), qPrintable(name));
        if (!annotations.value("readOnlyHint").toBool()) {
            QVERIFY2(annotations.value("destructiveHint").isBool(), qPrintable(name));
            QVERIFY2(annotations.value("idempotentHint").isBool(), qPrintable(name));
        }
    }
    for (const char *expected : {"list_languages", "create_context", "list_contexts", "delete_context",
                                 "restart_context", "run_code", "interrupt", "get_history"})
        QVERIFY2(names.contains(QLatin1String(expected)), expected);
}

void tst_McpProtocol::toolsCallOfUnknownToolIsInvalidParams()
{
    const QString session = initialize();
    const ApiClient::Response response = post(request(1, QStringLiteral("tools/call"), {{"name", "no_such_tool"}}),
                                              inSession(session));
    QCOMPARE(errorCode(response.object()), -32602);
}

void tst_McpProtocol::toolsCallWithoutNameIsInvalidParams()
{
    const QString session = initialize();
    QCOMPARE(errorCode(post(request(1, QStringLiteral("tools/call"), {}), inSession(session)).object()), -32602);
    QCOMPARE(errorCode(post(request(2, QStringLiteral("tools/call"), {{"name", "run_code"}, {"arguments", 3}}),
                            inSession(session)).object()),
             -32602);
}

void tst_McpProtocol::toolErrorsAreResultsWithIsError()
{
    const QString session = initialize();
    // A bad argument and an unknown context are the agent's to correct: results, not protocol errors.
    for (const QJsonObject &arguments : {QJsonObject{{"code", 5}}, QJsonObject{{"code", "1"}, {"context_id", "nope"}},
                                          QJsonObject{{"code", "1"}}}) {
        const ApiClient::Response response = post(request(1, QStringLiteral("tools/call"),
                                                          {{"name", "run_code"}, {"arguments", arguments}}),
                                                  inSession(session));
        QCOMPARE(response.status, 200);
        const QJsonObject result = response.object().value("result").toObject();
        QVERIFY2(result.value("isError").toBool(), response.body.constData());
        QVERIFY(!result.value("content").toArray().first().toObject().value("text").toString().isEmpty());
    }
}

void tst_McpProtocol::runCodeKeepsStateAcrossCalls()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString session = initialize();
    const QJsonObject created = post(request(1, QStringLiteral("tools/call"),
                                             {{"name", "create_context"}, {"arguments", QJsonObject{{"language", "python"}}}}),
                                     inSession(session)).object();
    const QString context = created.value("result").toObject().value("structuredContent").toObject().value("id").toString();
    QVERIFY2(!context.isEmpty(), json(created).constData());
    auto run = [&](const QString &code) {
        return post(request(2, QStringLiteral("tools/call"),
                            {{"name", "run_code"}, {"arguments", QJsonObject{{"code", code}, {"context_id", context}}}}),
                    inSession(session)).object().value("result").toObject();
    };
    QVERIFY(!run(QStringLiteral("x = 41")).value("isError").toBool());
    const QJsonObject result = run(QStringLiteral("x + 1"));
    QVERIFY(!result.value("isError").toBool());
    QCOMPARE(result.value("structuredContent").toObject().value("result").toString(), QStringLiteral("42"));
    QCOMPARE(result.value("structuredContent").toObject().value("status").toString(), QStringLiteral("ok"));
}

void tst_McpProtocol::displayWithoutAnImageIsTextContent()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString session = initialize();
    const QJsonObject result =
            post(request(3, QStringLiteral("tools/call"),
                         {{"name", "run_code"},
                          {"arguments", QJsonObject{{"language", "python"}, {"code", "display(6 * 7)\nprint('after')"}}}}),
                 inSession(session)).object().value("result").toObject();
    QVERIFY2(!result.value("isError").toBool(), json(result).constData());
    QStringList texts;
    for (const QJsonValue &block : result.value("content").toArray())
        texts.append(block.toObject().value("text").toString());
    // stdout first, then what was shown; no result.
    QCOMPARE(texts, (QStringList{QStringLiteral("after\n"), QStringLiteral("42")}));
    QCOMPARE(result.value("structuredContent").toObject().value("result"), QJsonValue());
}

void tst_McpProtocol::runCodeAsksForProgressAndGetsAnEventStream()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString session = initialize();
    Headers headers = kAccept;
    headers.append(inSession(session));
    const QJsonObject call = request(9, QStringLiteral("tools/call"),
                                     {{"name", "run_code"},
                                      {"arguments", QJsonObject{{"language", "python"},
                                                                {"code", "for i in range(3): print('line', i, flush=True)"}}},
                                      {"_meta", QJsonObject{{"progressToken", "tok-1"}}}});
    const auto stream = m_client->openStream("POST", kPath, call, headers);
    QCOMPARE(stream->status(), 200);
    QVERIFY(stream->contentType().startsWith("text/event-stream"));
    QList<QJsonObject> progress;
    QJsonObject response;
    while (const std::optional<ApiClient::Event> event = stream->next()) {
        QCOMPARE(event->type, QByteArray("message"));
        const QJsonObject message = event->json();
        if (message.value("method") == QLatin1String("notifications/progress")) {
            QVERIFY(response.isEmpty());  // notifications come before the response
            progress.append(message.value("params").toObject());
        } else {
            response = message;
        }
    }
    QCOMPARE(response.value("id").toInt(), 9);
    QCOMPARE(response.value("result").toObject().value("structuredContent").toObject().value("stdout").toString(),
             QStringLiteral("line 0\nline 1\nline 2\n"));
    QVERIFY(!progress.isEmpty());
    QString streamed;
    double last = 0;
    for (const QJsonObject &params : std::as_const(progress)) {
        QCOMPARE(params.value("progressToken").toString(), QStringLiteral("tok-1"));
        QVERIFY(params.value("progress").toDouble() > last);  // progress only grows
        last = params.value("progress").toDouble();
        streamed += params.value("message").toString();
    }
    QVERIFY2(streamed.contains(QStringLiteral("line 2")), qPrintable(streamed));
}

void tst_McpProtocol::longOutputIsCutWithANoteNamingTheExecution()
{
    const QJsonObject result = callTool(QStringLiteral("run_command"), {{"command", "head -c 100000 /dev/zero | tr '\\0' x"}});
    QVERIFY2(!result.value("isError").toBool(), json(result).constData());
    const QJsonObject structured = result.value("structuredContent").toObject();
    QCOMPARE(structured.value("stdout").toString(), QString(32 * 1024, QLatin1Char('x')));
    QCOMPARE(structured.value("truncated").toBool(), true);
    const QString text = result.value("content").toArray().first().toObject().value("text").toString();
    QVERIFY(text.startsWith(QString(32 * 1024, QLatin1Char('x'))));
    // The whole output stays with the execution, which the note names.
    const QString id = structured.value("execution_id").toString();
    QVERIFY2(text.contains(QStringLiteral("100000 bytes")) && text.contains(id), qPrintable(text.right(200)));
}

void tst_McpProtocol::cancelledRunIsInterruptedAndKeepsState()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString session = initialize();
    Headers headers = kAccept;
    headers.append(inSession(session));
    const QJsonObject created = post(request(1, QStringLiteral("tools/call"),
                                             {{"name", "create_context"}, {"arguments", QJsonObject{{"language", "python"}}}}),
                                     inSession(session)).object();
    const QString context = created.value("result").toObject().value("structuredContent").toObject().value("id").toString();
    QVERIFY(!context.isEmpty());
    const QJsonObject call = request(QStringLiteral("long"), QStringLiteral("tools/call"),
                                     {{"name", "run_code"},
                                      {"arguments", QJsonObject{{"context_id", context},
                                                                {"code", "kept = 'still here'\nimport time\n"
                                                                         "print('started', flush=True)\ntime.sleep(600)"}}},
                                      {"_meta", QJsonObject{{"progressToken", 1}}}});
    const auto stream = m_client->openStream("POST", kPath, call, headers);
    QCOMPARE(stream->status(), 200);
    // The cell is in its sleep once its output has arrived as progress.
    for (;;) {
        const std::optional<ApiClient::Event> event = stream->next();
        QVERIFY2(event, "the stream ended before the cell printed");
        QCOMPARE(event->json().value("method").toString(), QStringLiteral("notifications/progress"));
        if (event->json().value("params").toObject().value("message").toString().contains("started"))
            break;
    }

    const ApiClient::Response cancelled = post(notification(QStringLiteral("notifications/cancelled"),
                                                            {{"requestId", "long"}, {"reason", "the user stopped it"}}),
                                               inSession(session));
    QCOMPARE(cancelled.status, 202);
    // The stream ends without a response to the cancelled request.
    while (const std::optional<ApiClient::Event> event = stream->next())
        QVERIFY2(event->json().value("method") == QLatin1String("notifications/progress"), event->data.constData());

    const QJsonObject after = post(request(2, QStringLiteral("tools/call"),
                                           {{"name", "run_code"}, {"arguments", QJsonObject{{"context_id", context}, {"code", "kept"}}}}),
                                   inSession(session)).object().value("result").toObject();
    QVERIFY2(!after.value("isError").toBool(), json(after).constData());
    QCOMPARE(after.value("structuredContent").toObject().value("result").toString(), QStringLiteral("'still here'"));
    const QJsonObject history = post(request(3, QStringLiteral("tools/call"),
                                             {{"name", "get_history"}, {"arguments", QJsonObject{{"context_id", context}}}}),
                                     inSession(session)).object().value("result").toObject();
    const QJsonArray executions = history.value("structuredContent").toObject().value("executions").toArray();
    QCOMPARE(executions.size(), 2);
    QCOMPARE(executions.at(1).toObject().value("status").toString(), QStringLiteral("interrupted"));
}

QJsonObject tst_McpProtocol::callTool(const QString &name, const QJsonObject &arguments) const
{
    const ApiClient::Response response = post(request(1, QStringLiteral("tools/call"),
                                                      {{"name", name}, {"arguments", arguments}}));
    if (response.status != 200)
        qWarning() << name << "answered" << response.status << response.body;
    return response.object().value("result").toObject();
}

void tst_McpProtocol::filesWrittenByToolsAndByCodeAreTheSame()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QJsonObject written = callTool(QStringLiteral("write_file"),
                                         {{"path", "notes/from-tool.txt"}, {"content", "written by write_file\n"}});
    QVERIFY2(!written.value("isError").toBool(), json(written).constData());
    QCOMPARE(written.value("structuredContent").toObject().value("created").toBool(), true);
    // Code runs in the workspace directory: it reads what the tool wrote...
    const QJsonObject read = callTool(QStringLiteral("run_code"),
                                      {{"language", "python"}, {"code", "open('notes/from-tool.txt').read()"}});
    QCOMPARE(read.value("structuredContent").toObject().value("result").toString(),
             QStringLiteral("'written by write_file\\n'"));
    // ...and the tool reads what code wrote.
    callTool(QStringLiteral("run_code"),
             {{"language", "python"}, {"code", "open('notes/from-code.txt', 'w').write('written by code')"}});
    const QJsonObject back = callTool(QStringLiteral("read_file"), {{"path", "notes/from-code.txt"}});
    QVERIFY2(!back.value("isError").toBool(), json(back).constData());
    QCOMPARE(back.value("structuredContent").toObject().value("encoding").toString(), QStringLiteral("utf-8"));
    QCOMPARE(back.value("structuredContent").toObject().value("content").toString(), QStringLiteral("written by code"));
    QCOMPARE(back.value("content").toArray().first().toObject().value("text").toString(), QStringLiteral("written by code"));
    const QJsonObject listed = callTool(QStringLiteral("list_files"), {{"path", "notes"}});
    QStringList names;
    for (const QJsonValue &entry : listed.value("structuredContent").toObject().value("entries").toArray())
        names.append(entry.toObject().value("name").toString());
    QCOMPARE(names, (QStringList{"from-code.txt", "from-tool.txt"}));
}

void tst_McpProtocol::readFileOfBinaryDataIsBase64()
{
    const QByteArray bytes("\x00\x01\xfe\xff" "binary", 10);
    const QJsonObject written = callTool(QStringLiteral("write_file"),
                                         {{"path", "blob.bin"}, {"content", QString::fromLatin1(bytes.toBase64())},
                                          {"encoding", "base64"}});
    QVERIFY2(!written.value("isError").toBool(), json(written).constData());
    QCOMPARE(written.value("structuredContent").toObject().value("size").toInt(), 10);
    const QJsonObject read = callTool(QStringLiteral("read_file"), {{"path", "blob.bin"}});
    const QJsonObject structured = read.value("structuredContent").toObject();
    QCOMPARE(structured.value("encoding").toString(), QStringLiteral("base64"));
    QCOMPARE(QByteArray::fromBase64(structured.value("content").toString().toLatin1()), bytes);
    const QJsonObject block = read.value("content").toArray().first().toObject();
    QCOMPARE(block.value("type").toString(), QStringLiteral("resource"));
    QCOMPARE(block.value("resource").toObject().value("blob").toString(), structured.value("content").toString());
    // A part of it: offset and length.
    const QJsonObject part = callTool(QStringLiteral("read_file"), {{"path", "blob.bin"}, {"offset", 4}, {"length", 3}});
    QCOMPARE(part.value("structuredContent").toObject().value("content").toString(), QStringLiteral("bin"));
    QCOMPARE(part.value("structuredContent").toObject().value("truncated").toBool(), true);
}

void tst_McpProtocol::fileToolsStayInsideTheWorkspace_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QJsonObject>("arguments");
    QTest::newRow("read ..") << "read_file" << QJsonObject{{"path", "../token"}};
    QTest::newRow("read absolute") << "read_file" << QJsonObject{{"path", "/etc/passwd"}};
    QTest::newRow("write ..") << "write_file" << QJsonObject{{"path", "../escaped.txt"}, {"content", "x"}};
    QTest::newRow("list ..") << "list_files" << QJsonObject{{"path", ".."}};
    QTest::newRow("bad base64") << "write_file" << QJsonObject{{"path", "x"}, {"content", "@@"}, {"encoding", "base64"}};
    QTest::newRow("unknown encoding") << "write_file" << QJsonObject{{"path", "x"}, {"content", "a"}, {"encoding", "rot13"}};
    QTest::newRow("unknown workspace") << "list_files" << QJsonObject{{"workspace", "no-such-workspace"}};
}

void tst_McpProtocol::fileToolsStayInsideTheWorkspace()
{
    QFETCH(QString, tool);
    QFETCH(QJsonObject, arguments);
    const QJsonObject result = callTool(tool, arguments);
    QVERIFY2(result.value("isError").toBool(), json(result).constData());
    QVERIFY(!QFileInfo::exists(m_server.dataDir() + QStringLiteral("/workspaces/escaped.txt")));
}

void tst_McpProtocol::runCommandAnswersWithItsExitCode()
{
    const QJsonObject result = callTool(QStringLiteral("run_command"),
                                        {{"command", "echo \"$GREETING\"; echo oops >&2; exit 3"},
                                         {"env", QJsonObject{{"GREETING", "hello"}}}});
    QVERIFY(result.value("isError").toBool());
    const QJsonObject structured = result.value("structuredContent").toObject();
    QCOMPARE(structured.value("exit_code").toInt(), 3);
    QCOMPARE(structured.value("stdout").toString(), QStringLiteral("hello\n"));
    QCOMPARE(structured.value("stderr").toString(), QStringLiteral("oops\n"));
    const QJsonObject ok = callTool(QStringLiteral("run_command"), {{"command", "true"}});
    QVERIFY2(!ok.value("isError").toBool(), json(ok).constData());
}

void tst_McpProtocol::resourcesListAndRead()
{
    QVERIFY(!callTool(QStringLiteral("write_file"), {{"path", "docs/read me.md"}, {"content", "# Title\n"}})
                     .value("isError").toBool());
    const QString session = initialize();
    const ApiClient::Response listed = post(request(1, QStringLiteral("resources/list")), inSession(session));
    QCOMPARE(listed.status, 200);
    QString uri;
    for (const QJsonValue &value : listed.object().value("result").toObject().value("resources").toArray()) {
        if (value.toObject().value("name") == QLatin1String("docs/read me.md"))
            uri = value.toObject().value("uri").toString();
    }
    QCOMPARE(uri, QStringLiteral("replhost://workspaces/default/files/docs/read%20me.md"));
    const ApiClient::Response read = post(request(2, QStringLiteral("resources/read"), {{"uri", uri}}), inSession(session));
    const QJsonArray contents = read.object().value("result").toObject().value("contents").toArray();
    QCOMPARE(contents.size(), 1);
    QCOMPARE(contents.first().toObject().value("text").toString(), QStringLiteral("# Title\n"));
    QCOMPARE(contents.first().toObject().value("uri").toString(), uri);
    const ApiClient::Response templates = post(request(3, QStringLiteral("resources/templates/list")), inSession(session));
    const QJsonArray list = templates.object().value("result").toObject().value("resourceTemplates").toArray();
    QCOMPARE(list.size(), 1);
    QVERIFY(list.first().toObject().value("uriTemplate").toString().startsWith("replhost://workspaces/{workspace}/files/"));
}

void tst_McpProtocol::resourceErrorsAreTheSpecsCodes_data()
{
    QTest::addColumn<QJsonObject>("params");
    QTest::addColumn<int>("code");
    QTest::newRow("no uri") << QJsonObject{} << -32602;
    QTest::newRow("not this server's") << QJsonObject{{"uri", "file:///etc/passwd"}} << -32602;
    QTest::newRow("missing file") << QJsonObject{{"uri", "replhost://workspaces/default/files/nothing.txt"}} << -32002;
    QTest::newRow("outside") << QJsonObject{{"uri", "replhost://workspaces/default/files/..%2Ftoken"}} << -32002;
    QTest::newRow("unknown workspace") << QJsonObject{{"uri", "replhost://workspaces/nope/files/a.txt"}} << -32002;
}

void tst_McpProtocol::resourceErrorsAreTheSpecsCodes()
{
    QFETCH(QJsonObject, params);
    QFETCH(int, code);
    const QString session = initialize();
    const ApiClient::Response response = post(request(4, QStringLiteral("resources/read"), params), inSession(session));
    QCOMPARE(response.status, 200);
    QCOMPARE(errorCode(response.object()), code);
}

void tst_McpProtocol::tokenIsRequired_data()
{
    QTest::addColumn<QByteArray>("authorization");
    QTest::newRow("none") << QByteArray();
    QTest::newRow("wrong") << QByteArray("Bearer not-the-token");
    QTest::newRow("not bearer") << QByteArray("Basic Zm9vOmJhcg==");
}

void tst_McpProtocol::tokenIsRequired()
{
    QFETCH(QByteArray, authorization);
    Headers headers = kAccept;
    if (!authorization.isEmpty())
        headers.append(Headers{{"Authorization", authorization}});
    const ApiClient::Response response = m_client->request(
            "POST", kPath, json(request(1, QStringLiteral("initialize"), initializeParams("2025-11-25"))), headers, false);
    QCOMPARE(response.status, 401);
    QVERIFY(response.header("Mcp-Session-Id").isEmpty());
}

void tst_McpProtocol::foreignHostOrOriginIs403_data()
{
    QTest::addColumn<QByteArray>("field");
    QTest::addColumn<QByteArray>("value");
    QTest::newRow("a page of another site") << QByteArray("Origin") << QByteArray("https://evil.example");
    // DNS rebinding: a page of another domain that resolves to 127.0.0.1 sends its own Host.
    QTest::newRow("a rebound domain") << QByteArray("Host") << QByteArray("rebind.example:80");
}

void tst_McpProtocol::foreignHostOrOriginIs403()
{
    QFETCH(QByteArray, field);
    QFETCH(QByteArray, value);
    Headers headers = kAccept;
    headers.append(Headers{{field, value}});
    const ApiClient::Response response = m_client->request(
            "POST", kPath, json(request(1, QStringLiteral("initialize"), initializeParams("2025-11-25"))), headers);
    QCOMPARE(response.status, 403);
    QVERIFY(response.header("Mcp-Session-Id").isEmpty());
}

void tst_McpProtocol::allowedOriginCanReadTheSessionId()
{
    Headers headers = kAccept;
    const QByteArray origin = "http://127.0.0.1:" + QByteArray::number(m_server.port());
    headers.append(Headers{{"Origin", origin}});
    const ApiClient::Response response = m_client->request(
            "POST", kPath, json(request(1, QStringLiteral("initialize"), initializeParams("2025-11-25"))), headers);
    QCOMPARE(response.status, 200);
    QCOMPARE(response.header("Access-Control-Allow-Origin"), origin);
    QVERIFY(response.header("Access-Control-Expose-Headers").contains("Mcp-Session-Id"));
}

QTEST_GUILESS_MAIN(tst_McpProtocol)
#include "tst_mcpprotocol.moc"
