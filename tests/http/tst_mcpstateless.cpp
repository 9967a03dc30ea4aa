// SPDX-License-Identifier: Apache-2.0
// MCP's stateless revision 2026-07-28 at /mcp, beside the handshake revisions: requests that
// carry their revision and capabilities in params._meta, with no initialize and no session;
// server/discover; the mirrored MCP-Protocol-Version, Mcp-Method and Mcp-Name headers and the
// spec's errors when they disagree with the body; results with resultType, the server's identity
// and caching hints; cancellation by closing the connection; and the same over stdio through
// `replhost-cli mcp`. Spoken as raw JSON-RPC by a client that shares nothing with the server
// (Poco::Net), against a real replhost-server.

#include "apiclient.h"
#include "serverprocess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTest>

namespace {

const QString kPath = QStringLiteral("/mcp");
const QString kRevision = QStringLiteral("2026-07-28");
const QString kVersionKey = QStringLiteral("io.modelcontextprotocol/protocolVersion");
const QString kCapabilitiesKey = QStringLiteral("io.modelcontextprotocol/clientCapabilities");

QJsonObject meta(const QString &version = kRevision)
{
    return {{kVersionKey, version},
            {kCapabilitiesKey, QJsonObject{}},
            {QStringLiteral("io.modelcontextprotocol/clientInfo"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("tst_mcpstateless")}, {QStringLiteral("version"), QStringLiteral("1")}}}};
}

// A request of the stateless revision: `params` with the per-request _meta added.
QJsonObject request(const QJsonValue &id, const QString &method, QJsonObject params = {},
                    const QJsonObject &requestMeta = meta())
{
    QJsonObject withMeta = params.value(QLatin1String("_meta")).toObject();
    for (auto it = requestMeta.begin(); it != requestMeta.end(); ++it)
        withMeta.insert(it.key(), it.value());
    params.insert(QStringLiteral("_meta"), withMeta);
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")}, {QStringLiteral("id"), id},
            {QStringLiteral("method"), method}, {QStringLiteral("params"), params}};
}

QJsonObject toolCall(const QJsonValue &id, const QString &tool, const QJsonObject &arguments, QJsonObject params = {})
{
    params.insert(QStringLiteral("name"), tool);
    params.insert(QStringLiteral("arguments"), arguments);
    return request(id, QStringLiteral("tools/call"), params);
}

// The headers a Streamable HTTP client mirrors from the body.
Headers mirrored(const QJsonObject &message)
{
    const QJsonObject params = message.value("params").toObject();
    Headers headers{{"Accept", "application/json, text/event-stream"},
                    {"MCP-Protocol-Version", params.value("_meta").toObject().value(kVersionKey).toString().toLatin1()},
                    {"Mcp-Method", message.value("method").toString().toLatin1()}};
    if (params.contains("name"))
        headers.append({"Mcp-Name", params.value("name").toString().toUtf8()});
    else if (params.contains("uri"))
        headers.append({"Mcp-Name", params.value("uri").toString().toUtf8()});
    return headers;
}

Headers replaced(Headers headers, const QByteArray &name, const QByteArray &value)
{
    headers.removeIf([&](const auto &header) { return header.first.compare(name, Qt::CaseInsensitive) == 0; });
    if (!value.isNull())
        headers.append({name, value});
    return headers;
}

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

int errorCode(const QJsonObject &response)
{
    return response.value(QLatin1String("error")).toObject().value(QLatin1String("code")).toInt();
}

} // namespace

class tst_McpStateless : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void discoverNamesEveryRevisionAndTheServer();
    void requestsNeedNoInitializeAndNoSession();
    void everyResultIsCompleteAndNamesTheServer();
    void cacheableResultsCarryTheirHints_data();
    void cacheableResultsCarryTheirHints();
    void unsupportedRevisionIsRefusedWithTheSupportedOnes_data();
    void unsupportedRevisionIsRefusedWithTheSupportedOnes();
    void missingPerRequestFieldsAreInvalidParams_data();
    void missingPerRequestFieldsAreInvalidParams();
    void headersThatDisagreeWithTheBodyAreHeaderMismatch_data();
    void headersThatDisagreeWithTheBodyAreHeaderMismatch();
    void aNameOutsidePlainAsciiTravelsAsBase64();
    void sessionHeaderIsIgnored();
    void methodsOfTheHandshakeAreNotFound_data();
    void methodsOfTheHandshakeAreNotFound();
    void missingResourceIsInvalidParams();
    void handshakeClientsAreServedBeside();
    void closingTheConnectionCancelsTheRunAndKeepsState();
    void stdioRelayMirrorsTheHeadersAndCancels();

private:
    ApiClient::Response post(const QJsonObject &message, const Headers &headers) const
    {
        return m_client->request("POST", kPath, json(message), headers);
    }
    ApiClient::Response post(const QJsonObject &message) const { return post(message, mirrored(message)); }
    QString pythonMissing() const { return m_client->missingLanguage(QStringLiteral("python")); }
    QString createPythonContext() const;

    ServerProcess m_server;
    std::unique_ptr<ApiClient> m_client;
};

void tst_McpStateless::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    m_client = std::make_unique<ApiClient>(m_server.port(), m_server.token());
}

void tst_McpStateless::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
}

QString tst_McpStateless::createPythonContext() const
{
    const QJsonObject created = post(toolCall(1, QStringLiteral("create_context"), {{"language", "python"}})).object();
    return created.value("result").toObject().value("structuredContent").toObject().value("id").toString();
}

void tst_McpStateless::discoverNamesEveryRevisionAndTheServer()
{
    const ApiClient::Response response = post(request(QStringLiteral("discover-1"), QStringLiteral("server/discover")));
    QCOMPARE(response.status, 200);
    const QJsonObject result = response.object().value("result").toObject();
    QCOMPARE(response.object().value("id").toString(), QStringLiteral("discover-1"));
    const QJsonArray versions = result.value("supportedVersions").toArray();
    QCOMPARE(versions.first().toString(), kRevision);
    for (const char *handshake : {"2025-11-25", "2025-06-18", "2025-03-26"})
        QVERIFY2(versions.contains(QLatin1String(handshake)), handshake);
    QVERIFY(result.value("capabilities").toObject().contains("tools"));
    QVERIFY(result.value("capabilities").toObject().contains("resources"));
    QVERIFY(!result.value("instructions").toString().isEmpty());
    QCOMPARE(result.value("_meta").toObject().value("io.modelcontextprotocol/serverInfo").toObject()
                     .value("name").toString(),
             QStringLiteral("replhost"));
}

void tst_McpStateless::requestsNeedNoInitializeAndNoSession()
{
    const ApiClient::Response response = post(request(2, QStringLiteral("tools/list")));
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("Mcp-Session-Id").isEmpty());
    const QJsonArray tools = response.object().value("result").toObject().value("tools").toArray();
    QStringList names;
    for (const QJsonValue &tool : tools)
        names << tool.toObject().value("name").toString();
    QVERIFY2(names.contains("run_code") && names.contains("create_context"), qPrintable(names.join(' ')));
    // Deterministic order, so that a client's and a model's caches hit.
    QCOMPARE(post(request(3, QStringLiteral("tools/list"))).object().value("result").toObject().value("tools").toArray(),
             tools);
}

void tst_McpStateless::everyResultIsCompleteAndNamesTheServer()
{
    const QJsonObject result = post(toolCall(4, QStringLiteral("list_languages"), {})).object().value("result").toObject();
    QCOMPARE(result.value("resultType").toString(), QStringLiteral("complete"));
    QVERIFY(result.contains("content"));
    QCOMPARE(result.value("_meta").toObject().value("io.modelcontextprotocol/serverInfo").toObject()
                     .value("name").toString(),
             QStringLiteral("replhost"));
    QVERIFY2(!result.contains("ttlMs"), "a tool's result is not cacheable");
}

void tst_McpStateless::cacheableResultsCarryTheirHints_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QString>("scope");
    QTest::newRow("server/discover") << "server/discover" << "public";
    QTest::newRow("tools/list") << "tools/list" << "public";
    QTest::newRow("resources/templates/list") << "resources/templates/list" << "public";
    QTest::newRow("resources/list") << "resources/list" << "private";
}

void tst_McpStateless::cacheableResultsCarryTheirHints()
{
    QFETCH(QString, method);
    QFETCH(QString, scope);
    const QJsonObject result = post(request(5, method)).object().value("result").toObject();
    QCOMPARE(result.value("resultType").toString(), QStringLiteral("complete"));
    QCOMPARE(result.value("cacheScope").toString(), scope);
    QVERIFY(result.value("ttlMs").isDouble());
    QVERIFY(result.value("ttlMs").toDouble() >= 0);
}

void tst_McpStateless::unsupportedRevisionIsRefusedWithTheSupportedOnes_data()
{
    QTest::addColumn<QString>("version");
    QTest::newRow("unknown") << "1900-01-01";
    QTest::newRow("a handshake revision per request") << "2025-11-25";
}

void tst_McpStateless::unsupportedRevisionIsRefusedWithTheSupportedOnes()
{
    QFETCH(QString, version);
    const QJsonObject message = request(6, QStringLiteral("tools/list"), {}, meta(version));
    const ApiClient::Response response = post(message, replaced(mirrored(message), "MCP-Protocol-Version", version.toLatin1()));
    QCOMPARE(response.status, 400);
    const QJsonObject error = response.object().value("error").toObject();
    QCOMPARE(error.value("code").toInt(), -32022);
    QCOMPARE(response.object().value("id").toInt(), 6);
    QCOMPARE(error.value("data").toObject().value("requested").toString(), version);
    QVERIFY(error.value("data").toObject().value("supported").toArray().contains(kRevision));
}

void tst_McpStateless::missingPerRequestFieldsAreInvalidParams_data()
{
    QTest::addColumn<QString>("missing");
    QTest::newRow("protocol version") << kVersionKey;
    QTest::newRow("client capabilities") << kCapabilitiesKey;
}

void tst_McpStateless::missingPerRequestFieldsAreInvalidParams()
{
    QFETCH(QString, missing);
    QJsonObject incomplete = meta();
    incomplete.remove(missing);
    const QJsonObject message = request(7, QStringLiteral("tools/list"), {}, incomplete);
    const ApiClient::Response response =
            post(message, replaced(mirrored(message), "MCP-Protocol-Version", kRevision.toLatin1()));
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32602);
}

void tst_McpStateless::headersThatDisagreeWithTheBodyAreHeaderMismatch_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QByteArray>("value");  // null: the header is left out
    QTest::newRow("no MCP-Protocol-Version") << QByteArray("MCP-Protocol-Version") << QByteArray();
    QTest::newRow("no Mcp-Method") << QByteArray("Mcp-Method") << QByteArray();
    QTest::newRow("another Mcp-Method") << QByteArray("Mcp-Method") << QByteArray("tools/list");
    QTest::newRow("no Mcp-Name") << QByteArray("Mcp-Name") << QByteArray();
    QTest::newRow("another Mcp-Name") << QByteArray("Mcp-Name") << QByteArray("run_command");
    QTest::newRow("Mcp-Name in raw UTF-8") << QByteArray("Mcp-Name") << QByteArray("list_languages\xc3\xa9");
    QTest::newRow("Mcp-Name in bad base64") << QByteArray("Mcp-Name") << QByteArray("=?base64?!!!?=");
}

void tst_McpStateless::headersThatDisagreeWithTheBodyAreHeaderMismatch()
{
    QFETCH(QByteArray, header);
    QFETCH(QByteArray, value);
    const QJsonObject message = toolCall(8, QStringLiteral("list_languages"), {});
    const ApiClient::Response response = post(message, replaced(mirrored(message), header, value));
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response.object()), -32020);
    QCOMPARE(response.object().value("id").toInt(), 8);
}

void tst_McpStateless::aNameOutsidePlainAsciiTravelsAsBase64()
{
    // An unknown tool is the dispatcher's "invalid params": the headers passed.
    const QString tool = QStringLiteral("outil_é");
    const QJsonObject message = toolCall(9, tool, {});
    const QByteArray encoded = "=?base64?" + tool.toUtf8().toBase64() + "?=";
    const ApiClient::Response response = post(message, replaced(mirrored(message), "Mcp-Name", encoded));
    QCOMPARE(response.status, 200);
    QCOMPARE(errorCode(response.object()), -32602);
    QVERIFY2(response.object().value("error").toObject().value("message").toString().contains(tool),
             response.body.constData());
}

void tst_McpStateless::sessionHeaderIsIgnored()
{
    const QJsonObject message = request(10, QStringLiteral("tools/list"));
    const ApiClient::Response response = post(message, mirrored(message) + Headers{{"Mcp-Session-Id", "no-such-session"}});
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("Mcp-Session-Id").isEmpty());
}

void tst_McpStateless::methodsOfTheHandshakeAreNotFound_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("ping") << "ping";
    QTest::newRow("unknown") << "tools/frobnicate";
}

void tst_McpStateless::methodsOfTheHandshakeAreNotFound()
{
    QFETCH(QString, method);
    const ApiClient::Response response = post(request(11, method));
    QCOMPARE(response.status, 404);
    QCOMPARE(errorCode(response.object()), -32601);
}

void tst_McpStateless::missingResourceIsInvalidParams()
{
    const QJsonObject message = request(12, QStringLiteral("resources/read"),
                                        {{"uri", "replhost://workspaces/default/files/no-such-file.txt"}});
    const ApiClient::Response response = post(message);
    QCOMPARE(errorCode(response.object()), -32602);
}

void tst_McpStateless::handshakeClientsAreServedBeside()
{
    const QJsonObject initialize{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                                 {"params", QJsonObject{{"protocolVersion", "2025-11-25"}, {"capabilities", QJsonObject{}},
                                                        {"clientInfo", QJsonObject{{"name", "old"}, {"version", "1"}}}}}};
    const ApiClient::Response opened = m_client->request("POST", kPath, json(initialize),
                                                         {{"Accept", "application/json, text/event-stream"}});
    QCOMPARE(opened.status, 200);
    const QByteArray session = opened.header("Mcp-Session-Id");
    QVERIFY(!session.isEmpty());
    const QJsonObject ping{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}};
    const ApiClient::Response pinged = m_client->request(
            "POST", kPath, json(ping),
            {{"Accept", "application/json"}, {"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}});
    QCOMPARE(pinged.status, 200);
    QVERIFY(pinged.object().value("result").isObject());
    QVERIFY2(!pinged.object().value("result").toObject().contains("resultType"), pinged.body.constData());
    // And a stateless request at the same time.
    QCOMPARE(post(request(3, QStringLiteral("tools/list"))).status, 200);
}

void tst_McpStateless::closingTheConnectionCancelsTheRunAndKeepsState()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString context = createPythonContext();
    QVERIFY(!context.isEmpty());
    const QJsonObject call = toolCall(QStringLiteral("long"), QStringLiteral("run_code"),
                                      {{"context_id", context},
                                       {"code", "kept = 'still here'\nimport time\nprint('started', flush=True)\ntime.sleep(600)"}},
                                      {{"_meta", QJsonObject{{"progressToken", 1}}}});
    auto stream = m_client->openStream("POST", kPath, call, mirrored(call));
    QCOMPARE(stream->status(), 200);
    for (;;) {
        const std::optional<ApiClient::Event> event = stream->next();
        QVERIFY2(event, "the stream ended before the cell printed");
        if (event->json().value("params").toObject().value("message").toString().contains("started"))
            break;
    }
    stream->abort();

    // The run is interrupted: the context is idle again with its variables.
    QVERIFY(m_client->waitForContextState(context, QStringLiteral("idle")));
    const QJsonObject after = post(toolCall(2, QStringLiteral("run_code"), {{"context_id", context}, {"code", "kept"}}))
                                      .object().value("result").toObject();
    QVERIFY2(!after.value("isError").toBool(), json(after).constData());
    QCOMPARE(after.value("structuredContent").toObject().value("result").toString(), QStringLiteral("'still here'"));
    const QJsonArray executions = post(toolCall(3, QStringLiteral("get_history"), {{"context_id", context}}))
                                          .object().value("result").toObject().value("structuredContent").toObject()
                                          .value("executions").toArray();
    QCOMPARE(executions.size(), 2);
    QCOMPARE(executions.at(1).toObject().value("status").toString(), QStringLiteral("interrupted"));
}

void tst_McpStateless::stdioRelayMirrorsTheHeadersAndCancels()
{
    if (const QString missing = pythonMissing(); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString context = createPythonContext();
    QVERIFY(!context.isEmpty());
    QProcess relay;
    relay.setProgram(QStringLiteral(REPLHOST_CLI_EXECUTABLE));
    relay.setProcessChannelMode(QProcess::ForwardedErrorChannel);  // its diagnostics in the log
    relay.setArguments({QStringLiteral("mcp"), QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:%1").arg(m_server.port()),
                        QStringLiteral("--token"), QString::fromLatin1(m_server.token())});
    relay.start();
    QVERIFY(relay.waitForStarted());
    const auto send = [&](const QJsonObject &message) {
        relay.write(json(message) + '\n');
        relay.waitForBytesWritten();
    };
    const auto nextLine = [&]() -> QJsonObject {
        while (!relay.canReadLine()) {
            if (!relay.waitForReadyRead(60000))
                return {};
        }
        return QJsonDocument::fromJson(relay.readLine()).object();
    };

    // A stateless tools/call passes the server's header checks only if the relay mirrors them.
    send(toolCall(1, QStringLiteral("list_languages"), {}));
    const QJsonObject listed = nextLine();
    QVERIFY2(listed.value("result").toObject().value("resultType") == QLatin1String("complete"), json(listed).constData());

    send(toolCall(QStringLiteral("long"), QStringLiteral("run_code"),
                  {{"context_id", context}, {"code", "kept = 41\nimport time\nprint('started', flush=True)\ntime.sleep(600)"}},
                  {{"_meta", QJsonObject{{"progressToken", 7}}}}));
    for (;;) {
        const QJsonObject progress = nextLine();
        QVERIFY2(progress.value("method") == QLatin1String("notifications/progress"), json(progress).constData());
        if (progress.value("params").toObject().value("message").toString().contains("started"))
            break;
    }
    send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", QJsonObject{{"requestId", "long"}}}});
    QVERIFY(m_client->waitForContextState(context, QStringLiteral("idle")));
    // No response is written for the cancelled request (progress it sent before may still come).
    send(toolCall(2, QStringLiteral("run_code"), {{"context_id", context}, {"code", "kept + 1"}}));
    QJsonObject after;
    while ((after = nextLine()).value("method") == QLatin1String("notifications/progress"))
        QCOMPARE(after.value("params").toObject().value("progressToken").toInt(), 7);
    QVERIFY2(after.value("id").toInt() == 2, json(after).constData());
    QCOMPARE(after.value("result").toObject().value("structuredContent").toObject().value("result").toString(),
             QStringLiteral("42"));

    relay.closeWriteChannel();
    QVERIFY(relay.waitForFinished(30000));
    QCOMPARE(relay.exitCode(), 0);
    QVERIFY2(relay.readAllStandardOutput().trimmed().isEmpty(), "the relay wrote more than the answers");
}

QTEST_GUILESS_MAIN(tst_McpStateless)
#include "tst_mcpstateless.moc"
