// SPDX-License-Identifier: Apache-2.0
// The HTTP transport and its security, against a real replhost-server process and a client
// (Poco) that shares no code with the server. No language runtime is needed here.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>
#include <QThread>

#include <sys/stat.h>

class tst_ApiServer : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void healthzNeedsNoToken();
    void missingTokenIs401();
    void wrongTokenIs401();
    void unknownRouteNeedsTokenToo();
    void badHostIs403();
    void localHostNamesAreAccepted_data();
    void localHostNamesAreAccepted();
    void badOriginIs403();
    void allowedOriginsAreAccepted_data();
    void allowedOriginsAreAccepted();
    void preflightIsAnsweredWithoutToken();
    void requestIdIsEchoedOnEveryAnswer_data();
    void requestIdIsEchoedOnEveryAnswer();
    void unusableRequestIdIsNotEchoed();
    void infoReportsTheFourVersions();
    void infoReportsTheDatabaseSize();
    void malformedJsonIs400();
    void wrongFieldTypeIs400NamingTheField_data();
    void wrongFieldTypeIs400NamingTheField();
    void unknownContextIs404();
    void unknownRouteIs404AndWrongMethodIs405();
    void unknownLanguageIs400ListingLanguages();

    void hugeBodyIs413WithoutBuffering();
    void chunkedBodyOverLimitIs413();
    void bodyUnderLimitIsServed();
    void tooManyHeadersIs431();
    void hugeHeaderBlockIs431();
    void expectContinueIsAnswered();
    void connectionCloseIsHonoured();
    void keepAliveServesSeveralRequests();
    void pipelinedRequestsAreAnsweredInOrder();
    void idleConnectionIsClosed();

    void tokenFileIsMode0600();
    void tokenIsReusedAfterRestart();
    void tokenFromEnvironmentWins();
    void secondServerOnSameDataDirRefuses();
    void versionPrintsTheFourVersions();
    void badOptionsExitWithUsage();
    void sigtermStopsCleanly();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    QByteArray hostHeader() const { return "127.0.0.1:" + QByteArray::number(m_server.port()); }

    ServerProcess m_server;  // default limits, one extra origin and host
    ServerProcess m_strict;  // --max-body 4K --idle-timeout 1
};

void tst_ApiServer::initTestCase()
{
    QVERIFY2(QFileInfo::exists(ServerProcess::executable()), qPrintable(ServerProcess::executable()));
    QVERIFY2(m_server.start({QStringLiteral("--allow-origin"), QStringLiteral("http://localhost:3000"),
                             QStringLiteral("--allow-host"), QStringLiteral("example.test")}),
             qPrintable(m_server.error()));
    QVERIFY2(m_strict.start({QStringLiteral("--max-body"), QStringLiteral("4K"),
                             QStringLiteral("--idle-timeout"), QStringLiteral("1")}),
             qPrintable(m_strict.error()));
}

void tst_ApiServer::cleanupTestCase()
{
    QCOMPARE(m_strict.stop(), 0);
}

void tst_ApiServer::healthzNeedsNoToken()
{
    const auto response = client().request("GET", QStringLiteral("/healthz"), {}, {}, false);
    QCOMPARE(response.status, 200);
    QCOMPARE(response.object().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QVERIFY(response.header("Content-Type").startsWith("application/json"));
}

void tst_ApiServer::missingTokenIs401()
{
    const auto response = client().request("GET", QStringLiteral("/v1/contexts"), {}, {}, false);
    QCOMPARE(response.status, 401);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
    QVERIFY(!response.object().value(QStringLiteral("message")).toString().isEmpty());
    QCOMPARE(response.header("WWW-Authenticate"), QByteArray("Bearer"));
}

void tst_ApiServer::wrongTokenIs401()
{
    for (const QByteArray &authorization : {QByteArray("Bearer nope"), QByteArray("Basic Zm9vOmJhcg=="),
                                            "Bearer " + m_server.token() + "x",
                                            "Bearer " + m_server.token().left(10)}) {
        const auto response = client().request("GET", QStringLiteral("/v1/contexts"), {},
                                                {{"Authorization", authorization}});
        QCOMPARE(response.status, 401);
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
    }
    // The scheme is case-insensitive.
    const auto ok = client().request("GET", QStringLiteral("/v1/info"), {},
                                     {{"Authorization", "bearer " + m_server.token()}});
    QCOMPARE(ok.status, 200);
}

void tst_ApiServer::unknownRouteNeedsTokenToo()
{
    // Without a token nobody learns which routes exist.
    const auto response = client().request("GET", QStringLiteral("/v1/no-such-thing"), {}, {}, false);
    QCOMPARE(response.status, 401);
}

void tst_ApiServer::badHostIs403()
{
    for (const QByteArray &host : {QByteArray("evil.example"), "evil.example:" + QByteArray::number(m_server.port()),
                                   QByteArray("localhost.evil.example"), QByteArray("127.0.0.2")}) {
        const auto response = client().request("GET", QStringLiteral("/healthz"), {}, {{"Host", host}});
        QCOMPARE(response.status, 403);
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
        QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QString::fromLatin1(host)));
    }
}

void tst_ApiServer::localHostNamesAreAccepted_data()
{
    QTest::addColumn<QByteArray>("host");
    const QByteArray port = QByteArray::number(m_server.port());
    QTest::newRow("localhost") << "localhost:" + port;
    QTest::newRow("LOCALHOST") << "LOCALHOST:" + port;
    QTest::newRow("127.0.0.1") << "127.0.0.1:" + port;
    QTest::newRow("no port") << QByteArray("127.0.0.1");
    QTest::newRow("[::1]") << "[::1]:" + port;
    QTest::newRow("--allow-host") << QByteArray("example.test:8080");
}

void tst_ApiServer::localHostNamesAreAccepted()
{
    QFETCH(QByteArray, host);
    const auto response = client().request("GET", QStringLiteral("/v1/info"), {}, {{"Host", host}});
    QCOMPARE(response.status, 200);
}

void tst_ApiServer::badOriginIs403()
{
    for (const QByteArray &origin : {QByteArray("http://evil.example"), QByteArray("null"),
                                     QByteArray("http://localhost:1"), QByteArray("https://localhost:3000")}) {
        // Refused before the token is even looked at.
        const auto response = client().request("GET", QStringLiteral("/v1/info"), {}, {{"Origin", origin}});
        QCOMPARE(response.status, 403);
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
        QVERIFY(response.header("Access-Control-Allow-Origin").isEmpty());
    }
}

void tst_ApiServer::allowedOriginsAreAccepted_data()
{
    QTest::addColumn<QByteArray>("origin");
    const QByteArray port = QByteArray::number(m_server.port());
    QTest::newRow("own localhost") << "http://localhost:" + port;
    QTest::newRow("own 127.0.0.1") << "http://127.0.0.1:" + port;
    QTest::newRow("--allow-origin") << QByteArray("http://localhost:3000");
    QTest::newRow("--allow-origin, trailing slash") << QByteArray("http://localhost:3000/");
}

void tst_ApiServer::allowedOriginsAreAccepted()
{
    QFETCH(QByteArray, origin);
    const auto response = client().request("GET", QStringLiteral("/v1/info"), {}, {{"Origin", origin}});
    QCOMPARE(response.status, 200);
    QCOMPARE(response.header("Access-Control-Allow-Origin"), origin);
}

void tst_ApiServer::preflightIsAnsweredWithoutToken()
{
    const auto response = client().request("OPTIONS", QStringLiteral("/v1/contexts"), {},
                                           {{"Origin", "http://localhost:3000"},
                                            {"Access-Control-Request-Method", "POST"}},
                                           false);
    QCOMPARE(response.status, 204);
    QCOMPARE(response.header("Access-Control-Allow-Origin"), QByteArray("http://localhost:3000"));
    QVERIFY(response.header("Access-Control-Allow-Headers").contains("Authorization"));

    const auto refused = client().request("OPTIONS", QStringLiteral("/v1/contexts"), {},
                                          {{"Origin", "http://evil.example"}}, false);
    QCOMPARE(refused.status, 403);
}

void tst_ApiServer::requestIdIsEchoedOnEveryAnswer_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("withToken");
    QTest::addColumn<int>("status");

    QTest::newRow("native success") << QByteArray("GET") << "/v1/info" << QByteArray() << true << 200;
    QTest::newRow("native 404") << QByteArray("GET") << "/v1/contexts/nope" << QByteArray() << true << 404;
    QTest::newRow("405") << QByteArray("DELETE") << "/v1/info" << QByteArray() << true << 405;
    QTest::newRow("400 malformed body")
        << QByteArray("POST") << "/v1/contexts" << QByteArray("{") << true << 400;
    // Refused from the head, before a body is read, by the connection's guard.
    QTest::newRow("401 from the head") << QByteArray("GET") << "/v1/info" << QByteArray() << false << 401;
    QTest::newRow("401 with a body") << QByteArray("POST") << "/v1/contexts" << QByteArray("{}") << false << 401;
    QTest::newRow("command stream")
        << QByteArray("POST") << "/v1/commands" << QByteArray("{\"command\":\"true\"}") << true << 200;
    QTest::newRow("opensandbox error")
        << QByteArray("GET") << "/opensandbox/v1/sandboxes/nope" << QByteArray() << true << 404;
    QTest::newRow("e2b error")
        << QByteArray("DELETE") << "/e2b/{token}/contexts/nope" << QByteArray() << false << 404;
}

void tst_ApiServer::requestIdIsEchoedOnEveryAnswer()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    QFETCH(bool, withToken);
    QFETCH(int, status);
    path.replace(QStringLiteral("{token}"), QString::fromLatin1(m_server.token()));
    Headers headers{{"X-Request-ID", "req-7f3a 2"}};
    if (!body.isEmpty())
        headers.emplaceBack("Content-Type", "application/json");
    const auto response = client().request(method, path, body, headers, withToken);
    QCOMPARE(response.status, status);
    QCOMPARE(response.header("X-Request-ID"), QByteArray("req-7f3a 2"));
}

void tst_ApiServer::unusableRequestIdIsNotEchoed()
{
    for (const QByteArray &id : {QByteArray(257, 'a'), QByteArray("caf\xc3\xa9")}) {
        const auto response = client().request("GET", QStringLiteral("/v1/info"), {}, {{"X-Request-ID", id}});
        QCOMPARE(response.status, 200);
        QCOMPARE(response.header("X-Request-ID"), QByteArray());
    }
    const auto none = client().get(QStringLiteral("/v1/info"));
    QCOMPARE(none.header("X-Request-ID"), QByteArray());
}

void tst_ApiServer::infoReportsTheFourVersions()
{
    const auto response = client().get(QStringLiteral("/v1/info"));
    QCOMPARE(response.status, 200);
    const QJsonObject info = response.object();
    QVERIFY(!info.value(QStringLiteral("app_version")).toString().isEmpty());
    QVERIFY(!info.value(QStringLiteral("sdk_version")).toString().isEmpty());
    QVERIFY(info.value(QStringLiteral("worker_protocol_version")).toInt() >= 1);
    QVERIFY(info.value(QStringLiteral("schema_version")).toInt() >= 1);
}

void tst_ApiServer::infoReportsTheDatabaseSize()
{
    const auto response = client().get(QStringLiteral("/v1/info"));
    QCOMPARE(response.status, 200);
    const QJsonObject database = response.object().value(QStringLiteral("database")).toObject();
    // A database holds at least its schema: a few pages.
    QVERIFY2(database.value(QStringLiteral("bytes")).toInteger() >= 4096, response.body.constData());
    QVERIFY(database.value(QStringLiteral("free_bytes")).toInteger() >= 0);
    QVERIFY(database.value(QStringLiteral("wal_bytes")).toInteger() >= 0);
    QCOMPARE(database.value(QStringLiteral("incremental_vacuum")).toBool(), true);
    const QJsonObject retention = database.value(QStringLiteral("retention")).toObject();
    QCOMPARE(retention.value(QStringLiteral("failed_passes")).toInteger(), 0);
    QVERIFY(retention.contains(QStringLiteral("executions_deleted")));
}

void tst_ApiServer::malformedJsonIs400()
{
    for (const QByteArray &body : {QByteArray("{not json"), QByteArray("[1,2]"), QByteArray("\"text\""),
                                   QByteArray("")}) {
        const auto response = client().request("POST", QStringLiteral("/v1/contexts"), body,
                                               {{"Content-Type", "application/json"}});
        QCOMPARE(response.status, 400);
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
        QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("JSON")),
                 response.body.constData());
    }
}

void tst_ApiServer::wrongFieldTypeIs400NamingTheField_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("field");
    QTest::newRow("language missing") << "/v1/contexts" << QByteArray("{}") << "language";
    QTest::newRow("language number") << "/v1/contexts" << QByteArray(R"({"language":5})") << "language";
    QTest::newRow("env not strings") << "/v1/contexts" << QByteArray(R"({"language":"python","env":{"A":1}})") << "env";
    QTest::newRow("cwd array") << "/v1/contexts" << QByteArray(R"({"language":"python","cwd":[]})") << "cwd";
    QTest::newRow("code missing") << "/v1/executions" << QByteArray(R"({"language":"python"})") << "code";
    QTest::newRow("timeout negative") << "/v1/executions" << QByteArray(R"({"language":"python","code":"1","timeout_ms":-1})") << "timeout_ms";
    QTest::newRow("timeout fraction") << "/v1/executions" << QByteArray(R"({"language":"python","code":"1","timeout_ms":1.5})") << "timeout_ms";
    QTest::newRow("replay not boolean") << "/v1/executions" << QByteArray(R"({"language":"python","code":"1","replay":"no"})") << "replay";
    QTest::newRow("env_unset not list") << "/v1/executions" << QByteArray(R"({"language":"python","code":"1","env_unset":"A"})") << "env_unset";
    QTest::newRow("neither language nor context") << "/v1/executions" << QByteArray(R"({"code":"1"})") << "language";
    QTest::newRow("env patch set") << "/v1/env" << QByteArray(R"({"set":["A"]})") << "set";
    QTest::newRow("workspace name") << "/v1/workspaces" << QByteArray(R"({"name":true})") << "name";
}

void tst_ApiServer::wrongFieldTypeIs400NamingTheField()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    QFETCH(QString, field);
    const QByteArray method = path == QLatin1String("/v1/env") ? "PATCH" : "POST";
    const auto response = client().request(method, path, body, {{"Content-Type", "application/json"}});
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(QLatin1Char('\'') + field + QLatin1Char('\'')),
             response.body.constData());
}

void tst_ApiServer::unknownContextIs404()
{
    for (const QString &path : {QStringLiteral("/v1/contexts/00000000-0000-0000-0000-000000000000"),
                                QStringLiteral("/v1/contexts/nope/env"),
                                QStringLiteral("/v1/executions/nope"),
                                QStringLiteral("/v1/workspaces/nope/contexts/nope")}) {
        const auto response = client().get(path);
        QCOMPARE(response.status, 404);
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("not_found"));
    }
    QCOMPARE(client().del(QStringLiteral("/v1/contexts/nope")).status, 404);
    QCOMPARE(client().post(QStringLiteral("/v1/contexts/nope/executions"),
                           {{QStringLiteral("code"), QStringLiteral("1")}}).status, 404);
    QCOMPARE(client().post(QStringLiteral("/v1/executions/nope/interrupt"), {}).status, 404);
}

void tst_ApiServer::unknownRouteIs404AndWrongMethodIs405()
{
    const auto missing = client().get(QStringLiteral("/v2/contexts"));
    QCOMPARE(missing.status, 404);
    QCOMPARE(missing.object().value(QStringLiteral("code")).toString(), QStringLiteral("not_found"));

    const auto wrongMethod = client().request("PUT", QStringLiteral("/v1/contexts"));
    QCOMPARE(wrongMethod.status, 405);
    QCOMPARE(wrongMethod.object().value(QStringLiteral("code")).toString(), QStringLiteral("method_not_allowed"));
    QVERIFY(wrongMethod.header("Allow").contains("GET"));
    QVERIFY(wrongMethod.header("Allow").contains("POST"));
}

void tst_ApiServer::unknownLanguageIs400ListingLanguages()
{
    const auto response = client().post(QStringLiteral("/v1/contexts"), {{QStringLiteral("language"), QStringLiteral("cobol")}});
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unknown_language"));
    const QString message = response.object().value(QStringLiteral("message")).toString();
    QVERIFY(message.contains(QStringLiteral("cobol")));
    for (const QJsonValue &language : client().get(QStringLiteral("/v1/languages")).array()) {
        if (language.toObject().value(QStringLiteral("available")).toBool())
            QVERIFY2(message.contains(language.toObject().value(QStringLiteral("id")).toString()), qPrintable(message));
    }
}

void tst_ApiServer::hugeBodyIs413WithoutBuffering()
{
    const qint64 before = m_server.residentKiB();
    QVERIFY(before > 0);
    RawConnection connection(m_server.port());
    QElapsedTimer timer;
    timer.start();
    QVERIFY(connection.send("POST /v1/contexts HTTP/1.1\r\nHost: " + hostHeader()
                            + "\r\nAuthorization: Bearer " + m_server.token()
                            + "\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"));
    QVERIFY(connection.send(QByteArray(256 * 1024, 'x')));
    const QByteArray response = connection.readResponses(1, 5000);
    QVERIFY2(response.startsWith("HTTP/1.1 413 "), response.left(200).constData());
    QVERIFY(timer.elapsed() < 3000);
    QVERIFY(response.contains("\"code\":\"payload_too_large\""));
    QVERIFY(response.toLower().contains("connection: close"));
    // Whatever the client still sends is discarded, and then the connection ends.
    for (int i = 0; i < 32; ++i) {
        if (!connection.send(QByteArray(1024 * 1024, 'y')))
            break;
    }
    bool closed = false;
    connection.readUntilClosed(5000, &closed);
    QVERIFY(closed);
    const qint64 after = m_server.residentKiB();
    QVERIFY2(after - before < 16 * 1024, qPrintable(QStringLiteral("RSS grew from %1 KiB to %2 KiB").arg(before).arg(after)));

    // The server is still fine.
    QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
}

void tst_ApiServer::chunkedBodyOverLimitIs413()
{
    RawConnection connection(m_strict.port());
    QByteArray request = "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
            + m_strict.token() + "\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 5; ++i)
        request += "400\r\n" + QByteArray(1024, 'x') + "\r\n";  // 5 KiB in 1 KiB chunks
    QVERIFY(connection.send(request));
    const QByteArray response = connection.readResponses(1, 5000);
    QVERIFY2(response.startsWith("HTTP/1.1 413 "), response.left(200).constData());
    QVERIFY(response.contains("payload_too_large"));
}

void tst_ApiServer::bodyUnderLimitIsServed()
{
    // 3 KiB of JSON under a 4 KiB limit reaches the handler (which then refuses the language).
    const QByteArray body = R"({"language":"cobol","name":")" + QByteArray(3000, 'n') + "\"}";
    ApiClient strict(m_strict.port(), m_strict.token());
    const auto response = strict.request("POST", QStringLiteral("/v1/contexts"), body,
                                         {{"Content-Type", "application/json"}});
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unknown_language"));

    // The same in chunks.
    RawConnection connection(m_strict.port());
    QVERIFY(connection.send("POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                            + m_strict.token() + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + QByteArray::number(body.size(), 16) + "\r\n" + body + "\r\n0\r\n\r\n"));
    const QByteArray chunked = connection.readResponses(1, 5000);
    QVERIFY2(chunked.startsWith("HTTP/1.1 400 "), chunked.left(300).constData());
    QVERIFY(chunked.contains("unknown_language"));
}

void tst_ApiServer::tooManyHeadersIs431()
{
    Headers headers;
    for (int i = 0; i < 150; ++i)
        headers.append({"X-Filler-" + QByteArray::number(i), "1"});
    const auto response = client().request("GET", QStringLiteral("/v1/info"), {}, headers);
    QCOMPARE(response.status, 431);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("header_fields_too_large"));

    // 90 are fine.
    headers.resize(90);
    QCOMPARE(client().request("GET", QStringLiteral("/v1/info"), {}, headers).status, 200);
}

void tst_ApiServer::hugeHeaderBlockIs431()
{
    const auto response = client().request("GET", QStringLiteral("/v1/info"), {},
                                           {{"X-Big", QByteArray(70 * 1024, 'h')}});
    QCOMPARE(response.status, 431);
}

void tst_ApiServer::expectContinueIsAnswered()
{
    RawConnection connection(m_server.port());
    const QByteArray body = R"({"language":"cobol"})";
    QVERIFY(connection.send("POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                            + m_server.token() + "\r\nExpect: 100-continue\r\nContent-Length: "
                            + QByteArray::number(body.size()) + "\r\n\r\n"));
    const QByteArray interim = connection.readResponses(1, 3000);
    QVERIFY2(interim.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), interim.constData());
    QVERIFY(connection.send(body));
    const QByteArray response = connection.readResponses(1, 5000);
    QVERIFY2(response.startsWith("HTTP/1.1 400 "), response.constData());
}

void tst_ApiServer::connectionCloseIsHonoured()
{
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                            // pipelined after "close": must not be answered
                            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    bool closed = false;
    const QByteArray received = connection.readUntilClosed(3000, &closed);
    QVERIFY2(closed, "the server kept the connection open after Connection: close");
    QCOMPARE(statusCodes(received), QList<int>{200});
    QVERIFY(received.toLower().contains("connection: close"));

    // HTTP/1.0 without keep-alive closes too.
    RawConnection old(m_server.port());
    QVERIFY(old.send("GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n"));
    const QByteArray oldReceived = old.readUntilClosed(3000, &closed);
    QVERIFY(closed);
    QCOMPARE(statusCodes(oldReceived), QList<int>{200});
}

void tst_ApiServer::keepAliveServesSeveralRequests()
{
    RawConnection connection(m_server.port());
    for (int i = 0; i < 3; ++i) {
        QVERIFY(connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
        const QByteArray response = connection.readResponses(1, 3000);
        QVERIFY2(response.startsWith("HTTP/1.1 200 "), response.constData());
    }
}

void tst_ApiServer::pipelinedRequestsAreAnsweredInOrder()
{
    RawConnection connection(m_server.port());
    const QByteArray auth = "Authorization: Bearer " + m_server.token() + "\r\n";
    QVERIFY(connection.send("GET /v1/info HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n"
                            "GET /nope HTTP/1.1\r\nHost: localhost\r\n" + auth + "\r\n"
                            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    const QByteArray responses = connection.readResponses(3, 5000);
    QCOMPARE(statusCodes(responses), (QList<int>{200, 404, 200}));
    QVERIFY(responses.indexOf("app_version") < responses.indexOf("not_found"));
    QVERIFY(responses.indexOf("not_found") < responses.indexOf("\"status\":\"ok\""));
}

void tst_ApiServer::idleConnectionIsClosed()
{
    RawConnection connection(m_strict.port());
    QVERIFY(connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    QVERIFY(connection.readResponses(1, 3000).startsWith("HTTP/1.1 200 "));
    QElapsedTimer timer;
    timer.start();
    bool closed = false;
    connection.readUntilClosed(6000, &closed);
    QVERIFY2(closed, "an idle keep-alive connection was not closed");
    QVERIFY(timer.elapsed() >= 500);

    // A request that stalls half-way is cut off too.
    RawConnection slow(m_strict.port());
    QVERIFY(slow.send("GET /healthz HTTP/1.1\r\nHost: loc"));
    slow.readUntilClosed(6000, &closed);
    QVERIFY(closed);
}

void tst_ApiServer::tokenFileIsMode0600()
{
    const QString path = QDir(m_server.dataDir()).filePath(QStringLiteral("token"));
    struct stat info {};
    QCOMPARE(::stat(QFile::encodeName(path).constData(), &info), 0);
    QCOMPARE(info.st_mode & 0777, mode_t(0600));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray token = file.readAll().trimmed();
    QCOMPARE(token, m_server.token());
    QCOMPARE(token.size(), 64);  // 32 random bytes, hex
    QVERIFY(QRegularExpression(QStringLiteral("^[0-9a-f]{64}$")).match(QString::fromLatin1(token)).hasMatch());
    QVERIFY(m_strict.token() != m_server.token());
}

void tst_ApiServer::tokenIsReusedAfterRestart()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QByteArray first = server.token();
    const QString dataDir = server.dataDir();
    QCOMPARE(server.stop(), 0);

    ServerProcess again;
    QVERIFY2(again.start({}, {}, dataDir), qPrintable(again.error()));
    QCOMPARE(again.token(), first);
    QCOMPARE(ApiClient(again.port(), first).get(QStringLiteral("/v1/info")).status, 200);
}

void tst_ApiServer::tokenFromEnvironmentWins()
{
    const QByteArray token = "a-token-from-the-environment";
    ServerProcess server;
    QVERIFY2(server.start({}, {{QStringLiteral("REPLHOST_TOKEN"), QString::fromLatin1(token)}}),
             qPrintable(server.error()));
    QCOMPARE(server.token(), token);
    QVERIFY(!QFileInfo::exists(QDir(server.dataDir()).filePath(QStringLiteral("token"))));
    QCOMPARE(ApiClient(server.port(), token).get(QStringLiteral("/v1/info")).status, 200);
}

void tst_ApiServer::secondServerOnSameDataDirRefuses()
{
    const ServerProcess::Run second = ServerProcess::runOnce(
            {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), m_server.dataDir()});
    QCOMPARE(second.exitCode, 1);
    QVERIFY2(second.err.contains(QString::number(m_server.pid()).toLatin1()), second.err.constData());
    QVERIFY(!second.out.contains("listening on"));
    // The first one is unharmed.
    QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
}

void tst_ApiServer::versionPrintsTheFourVersions()
{
    const ServerProcess::Run run = ServerProcess::runOnce({QStringLiteral("--version")});
    QCOMPARE(run.exitCode, 0);
    for (const char *word : {"replhost-server", "SDK", "worker protocol", "schema"})
        QVERIFY2(run.out.contains(word), run.out.constData());
}

void tst_ApiServer::badOptionsExitWithUsage()
{
    for (const QStringList &arguments : {QStringList{QStringLiteral("--port"), QStringLiteral("70000")},
                                         QStringList{QStringLiteral("--max-body"), QStringLiteral("lots")},
                                         QStringList{QStringLiteral("--host"), QStringLiteral("not-an-address")},
                                         QStringList{QStringLiteral("--frobnicate")}}) {
        const ServerProcess::Run run = ServerProcess::runOnce(arguments);
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains("--help"));
    }
}

void tst_ApiServer::sigtermStopsCleanly()
{
    QVERIFY(m_server.isRunning());
    QCOMPARE(m_server.stop(), 0);
    QVERIFY(m_server.errors().contains("stopping"));
}

QTEST_GUILESS_MAIN(tst_ApiServer)
#include "tst_apiserver.moc"
