// SPDX-License-Identifier: Apache-2.0
// The OpenSandbox-compatible surface on the wire, against a real replhost-server with a Poco
// client (an HTTP stack that shares nothing with the server's): the credential headers, execd's
// stream framing and ping cadence, Content-Length: 0 on empty successes, JSON errors before any
// stream, the lifecycle's shapes and expiry (kept across a restart). Plus ExecdEventFormat's
// translation rules, which need no server.

#include "apiclient.h"
#include "serverprocess.h"
#include "sandboxrequirement.h"

#include "http/execdeventformat.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

namespace {

// Execd's ping interval for this server: short, so a one-second silence holds several pings.
constexpr int kPingMs = 100;

QByteArray compact(const QJsonObject &json)
{
    return QJsonDocument(json).toJson(QJsonDocument::Compact);
}

} // namespace

class tst_OpenSandboxWire : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void credentialHeaders_data();
    void credentialHeaders();
    void emptySuccessesHaveContentLengthZero_data();
    void emptySuccessesHaveContentLengthZero();
    void errorsBeforeTheStreamAreJson_data();
    void errorsBeforeTheStreamAreJson();
    void malformedJsonIsInvalidRequestBody_data();
    void malformedJsonIsInvalidRequestBody();
    void unknownLanguageIsA400();
    void codeStreamIsCompactJsonAndBlankLines();
    void inputFindsTheEndOfInputAtOnce();
    void codeOutputArrivesInWholeLines();
    void commandOutputIsOneEventPerLine();
    void pingsFillSilences();
    void backgroundCommandsAnswerAtOnceAndKeepTheirLogs();
    void interruptNeedsAKnownId_data();
    void interruptNeedsAKnownId();

    void createAnswersEveryRequiredField();
    void endpointsEndInTheirPortAndExecdsLeadsToExecd();
    void createMakesASandboxedWorkspace();
    void aCpuBelowTheMachinesIsAQuotaOrRefused();
    void memoryLimitStopsAMemoryBomb();
    void networkPolicyDecidesWhetherTheLoopbackIsReached_data();
    void networkPolicyDecidesWhetherTheLoopbackIsReached();
    void createWithoutASandboxHereIsRefusedWithTheReason();
    void hostVolumesAreBoundAsAsked();
    void tildeIsTheSandboxsHomeOnTheFileRoutes();
    void volumesFromOutsideTheAllowedDirectoriesAreRefused_data();
    void volumesFromOutsideTheAllowedDirectoriesAreRefused();
    void unsupportedCreateRequestsLeaveNothingBehind_data();
    void unsupportedCreateRequestsLeaveNothingBehind();
    void unknownSandboxIs404_data();
    void unknownSandboxIs404();
    void theDefaultWorkspaceCannotBeKilled();
    void expiryIsKeptAcrossARestart();

    void formatRenamesTextPlain();
    void formatFlushesAPartialCommandLine();
    void formatMakesUpAnErrorForAFailedRun();
    void formatCompletesInWholeMilliseconds();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    Headers apiKey() const { return {{"OPEN-SANDBOX-API-KEY", m_server.token()}}; }
    // A request to the OpenSandbox surface with the SDK's credential header only.
    ApiClient::Response osb(const QByteArray &method, const QString &path, const QByteArray &body = {}) const
    {
        return client().request(method, path, body, apiKey(), false);
    }
    QString execd(const QString &route) const { return QStringLiteral("/opensandbox/execd/") + m_sandbox + route; }
    // A new sandbox's id, or empty.
    QString createSandbox(ServerProcess &server, const QJsonObject &extra = {}) const;
    QString createContext(const QString &language = QStringLiteral("python")) const;
    // The events of an execd stream, checking the framing on the way: one compact JSON object
    // and a blank line each, no "data:" prefix, "type" and "timestamp" on every one.
    static QList<QJsonObject> events(const ApiClient::Response &response);
    static QStringList types(const QList<QJsonObject> &events);

    QTemporaryDir m_volumes;  // the server's --allow-volume directory
    ServerProcess m_server;
    QString m_sandbox;
    // Why this machine cannot make sandboxes (empty: it can). Where it cannot, the sandboxes
    // of the tests that need none are plain directories, asked for as such.
    QString m_noSandbox;
};

QString tst_OpenSandboxWire::createSandbox(ServerProcess &server, const QJsonObject &extra) const
{
    QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}},
                     {QStringLiteral("entrypoint"), QJsonArray{QStringLiteral("tail"), QStringLiteral("-f"), QStringLiteral("/dev/null")}}};
    if (!m_noSandbox.isEmpty())
        body.insert(QStringLiteral("extensions"), QJsonObject{{QStringLiteral("replhost.isolation"), QStringLiteral("none")}});
    for (auto it = extra.begin(); it != extra.end(); ++it)
        body.insert(it.key(), it.value());
    const auto response = ApiClient(server.port(), server.token())
            .request("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body),
                     {{"OPEN-SANDBOX-API-KEY", server.token()}}, false);
    if (response.status != 202)
        qWarning() << "create sandbox:" << response.status << response.body;
    return response.object().value(QStringLiteral("id")).toString();
}

QString tst_OpenSandboxWire::createContext(const QString &language) const
{
    const auto response = osb("POST", execd(QStringLiteral("/code/context")),
                              compact({{QStringLiteral("language"), language}}));
    if (response.status != 200)
        qWarning() << "create context:" << response.status << response.body;
    return response.object().value(QStringLiteral("id")).toString();
}

QList<QJsonObject> tst_OpenSandboxWire::events(const ApiClient::Response &response)
{
    QList<QJsonObject> out;
    [&] {
        QCOMPARE(response.status, 200);
        QVERIFY2(response.header("Content-Type").startsWith("text/event-stream"), response.header("Content-Type"));
        QCOMPARE(response.header("Cache-Control"), QByteArray("no-cache"));
        QVERIFY2(response.body.endsWith("\n\n"), response.body.right(80));
        QList<QByteArray> blocks = response.body.split('\n');
        // "{…}", "", "{…}", "", …, "" : every other line is blank.
        QCOMPARE(blocks.size() % 2, 1);
        for (qsizetype i = 0; i + 1 < blocks.size(); i += 2) {
            QVERIFY2(blocks[i + 1].isEmpty(), blocks[i + 1]);
            QVERIFY2(!blocks[i].startsWith("data:"), blocks[i]);
            QJsonParseError error;
            const QJsonDocument document = QJsonDocument::fromJson(blocks[i], &error);
            QVERIFY2(document.isObject(), blocks[i]);
            QCOMPARE(document.toJson(QJsonDocument::Compact), blocks[i]);
            const QJsonObject event = document.object();
            QVERIFY2(event.value(QStringLiteral("type")).isString(), blocks[i]);
            QVERIFY2(event.value(QStringLiteral("timestamp")).toInteger() > 1600000000000LL, blocks[i]);
            out.append(event);
        }
    }();
    return out;
}

QStringList tst_OpenSandboxWire::types(const QList<QJsonObject> &events)
{
    QStringList out;
    for (const QJsonObject &event : events)
        out.append(event.value(QStringLiteral("type")).toString());
    return out;
}

void tst_OpenSandboxWire::initTestCase()
{
    QVERIFY(m_volumes.isValid());
    QVERIFY2(m_server.start({QStringLiteral("--sse-keep-alive"), QString::number(kPingMs),
                             QStringLiteral("--allow-volume"), m_volumes.path()}),
             qPrintable(m_server.error()));
    m_noSandbox = replhost::testing::sandboxUnavailableReason();
    m_sandbox = createSandbox(m_server, {{QStringLiteral("env"), QJsonObject{{QStringLiteral("WHO"), QStringLiteral("wire")}}}});
    QVERIFY(!m_sandbox.isEmpty());
}

void tst_OpenSandboxWire::credentialHeaders_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<bool>("rightToken");
    QTest::addColumn<int>("status");
    const QString lifecycle = QStringLiteral("/opensandbox/v1/sandboxes");
    const QString ping = QStringLiteral("{execd}/ping");
    QTest::newRow("api key on lifecycle") << lifecycle << QByteArray("OPEN-SANDBOX-API-KEY") << true << 200;
    QTest::newRow("execd token on lifecycle") << lifecycle << QByteArray("X-EXECD-ACCESS-TOKEN") << true << 200;
    QTest::newRow("api key on execd") << ping << QByteArray("OPEN-SANDBOX-API-KEY") << true << 200;
    QTest::newRow("execd token on execd") << ping << QByteArray("X-EXECD-ACCESS-TOKEN") << true << 200;
    QTest::newRow("bearer on execd") << ping << QByteArray("Authorization") << true << 200;
    QTest::newRow("wrong api key") << ping << QByteArray("OPEN-SANDBOX-API-KEY") << false << 401;
    QTest::newRow("wrong execd token") << lifecycle << QByteArray("X-EXECD-ACCESS-TOKEN") << false << 401;
    QTest::newRow("no credential") << ping << QByteArray() << false << 401;
    QTest::newRow("api key is not for the native API") << QStringLiteral("/v1/info")
                                                       << QByteArray("OPEN-SANDBOX-API-KEY") << true << 401;
}

void tst_OpenSandboxWire::credentialHeaders()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, header);
    QFETCH(bool, rightToken);
    QFETCH(int, status);
    path.replace(QStringLiteral("{execd}"), execd({}));
    QByteArray value = rightToken ? m_server.token() : QByteArray("not-the-token");
    if (header == "Authorization")
        value = "Bearer " + value;
    Headers headers;
    if (!header.isEmpty())
        headers.append({header, value});
    const auto response = client().request("GET", path, {}, headers, false);
    QCOMPARE(response.status, status);
    if (status == 401) {
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
        QVERIFY(!response.body.contains(m_server.token()));
    }
}

void tst_OpenSandboxWire::emptySuccessesHaveContentLengthZero_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("ping") << QByteArray("GET") << QStringLiteral("/ping") << QByteArray();
    QTest::newRow("delete context") << QByteArray("DELETE") << QStringLiteral("/code/contexts/{ctx}") << QByteArray();
    QTest::newRow("delete contexts by language") << QByteArray("DELETE") << QStringLiteral("/code/contexts?language=python") << QByteArray();
    QTest::newRow("interrupt an idle context") << QByteArray("DELETE") << QStringLiteral("/code?id={ctx}") << QByteArray();
    QTest::newRow("make directories") << QByteArray("POST") << QStringLiteral("/directories")
                                      << QByteArray(R"({"made/deep":{"mode":755}})");
    QTest::newRow("delete files") << QByteArray("DELETE") << QStringLiteral("/files?path=empty.txt") << QByteArray();
    QTest::newRow("set permissions") << QByteArray("POST") << QStringLiteral("/files/permissions")
                                     << QByteArray(R"({"empty.txt":{"mode":600}})");
    QTest::newRow("move files") << QByteArray("POST") << QStringLiteral("/files/mv")
                                << QByteArray(R"([{"src":"empty.txt","dest":"moved.txt"}])");
    QTest::newRow("replace contents") << QByteArray("POST") << QStringLiteral("/files/replace")
                                      << QByteArray(R"({"empty.txt":{"old":"a","new":"b"}})");
}

void tst_OpenSandboxWire::emptySuccessesHaveContentLengthZero()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    if (route.contains(QStringLiteral("{ctx}"))) {
        if (const QString missing = client().missingLanguage(QStringLiteral("python")); !missing.isEmpty())
            QSKIP(qPrintable(missing));
        route.replace(QStringLiteral("{ctx}"), createContext());
    }
    // Every file row starts from a file of its own.
    const auto written = client().request(
            "PUT", QStringLiteral("/v1/workspaces/%1/files/content?path=empty.txt").arg(m_sandbox), "abc");
    QVERIFY2(written.status == 200 || written.status == 201, written.body);

    const auto response = osb(method, execd(route), body);
    QCOMPARE(response.status, 200);
    QCOMPARE(response.header("Content-Length"), QByteArray("0"));
    QVERIFY(response.body.isEmpty());
    QVERIFY(response.header("Transfer-Encoding").isEmpty());
}

void tst_OpenSandboxWire::errorsBeforeTheStreamAreJson_data()
{
    QTest::addColumn<QString>("route");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("unknown context") << QStringLiteral("/code")
                                     << QByteArray(R"({"code":"1","context":{"id":"no-such-context"}})")
                                     << 404 << QStringLiteral("CONTEXT_NOT_FOUND");
    QTest::newRow("no code") << QStringLiteral("/code") << QByteArray(R"({"context":{"language":"python"}})")
                             << 400 << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("context not an object") << QStringLiteral("/code") << QByteArray(R"({"code":"1","context":"python"})")
                                           << 400 << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("no command") << QStringLiteral("/command") << QByteArray(R"({"cwd":"."})")
                                << 400 << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("cwd outside the workspace") << QStringLiteral("/command") << QByteArray(R"({"command":"pwd","cwd":"/etc"})")
                                               << 403 << QStringLiteral("RUNTIME_ERROR");
    QTest::newRow("another user") << QStringLiteral("/command") << QByteArray(R"({"command":"id","uid":54321})")
                                  << 400 << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("negative timeout") << QStringLiteral("/command") << QByteArray(R"({"command":"id","timeout":-1})")
                                      << 400 << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("unknown sandbox") << QStringLiteral("!/opensandbox/execd/no-such-sandbox/command")
                                     << QByteArray(R"({"command":"id"})") << 404 << QStringLiteral("SANDBOX_NOT_FOUND");
}

void tst_OpenSandboxWire::errorsBeforeTheStreamAreJson()
{
    QFETCH(QString, route);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, code);
    const QString path = route.startsWith(QLatin1Char('!')) ? route.mid(1) : execd(route);
    const auto response = osb("POST", path, body);
    QCOMPARE(response.status, status);
    QCOMPARE(response.header("Content-Type"), QByteArray("application/json"));
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), code);
    QVERIFY(!response.object().value(QStringLiteral("message")).toString().isEmpty());
}

void tst_OpenSandboxWire::malformedJsonIsInvalidRequestBody_data()
{
    QTest::addColumn<QString>("path");
    for (const QString &route : {QStringLiteral("/code/context"), QStringLiteral("/code"), QStringLiteral("/command"),
                                QStringLiteral("/files/permissions"), QStringLiteral("/files/mv"),
                                QStringLiteral("/files/replace"), QStringLiteral("/directories")}) {
        QTest::newRow(qPrintable(route)) << QStringLiteral("{execd}") + route;
    }
    QTest::newRow("create sandbox") << QStringLiteral("/opensandbox/v1/sandboxes");
    QTest::newRow("renew") << QStringLiteral("/opensandbox/v1/sandboxes/{id}/renew-expiration");
}

void tst_OpenSandboxWire::malformedJsonIsInvalidRequestBody()
{
    QFETCH(QString, path);
    path.replace(QStringLiteral("{execd}"), execd({})).replace(QStringLiteral("{id}"), m_sandbox);
    const auto response = osb("POST", path, "{\"language\": ");
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("INVALID_REQUEST_BODY"));
}

void tst_OpenSandboxWire::unknownLanguageIsA400()
{
    const auto created = osb("POST", execd(QStringLiteral("/code/context")), R"({"language":"cobol"})");
    QCOMPARE(created.status, 400);
    QCOMPARE(created.object().value(QStringLiteral("code")).toString(), QStringLiteral("NOT_SUPPORTED"));
    QVERIFY2(created.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("bash")), created.body);

    const auto run = osb("POST", execd(QStringLiteral("/code")), R"({"code":"1","context":{"language":"cobol"}})");
    QCOMPARE(run.status, 400);
    QCOMPARE(run.header("Content-Type"), QByteArray("application/json"));
    const auto listed = osb("GET", execd(QStringLiteral("/code/contexts?language=cobol")));
    QCOMPARE(listed.status, 400);
}

void tst_OpenSandboxWire::codeStreamIsCompactJsonAndBlankLines()
{
    if (const QString missing = client().missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString context = createContext();
    const auto response = osb("POST", execd(QStringLiteral("/code")),
                              compact({{QStringLiteral("code"), QStringLiteral("import os\nprint(os.environ['WHO'])\n{'a': 1}")},
                                       {QStringLiteral("context"), QJsonObject{{QStringLiteral("id"), context}}}}));
    QList<QJsonObject> stream = events(response);
    // Pings may come between any two events (this server pings after 100 ms of silence), and
    // output arrives in the chunks the pipe gave: join them.
    stream.removeIf([](const QJsonObject &event) { return event.value(QStringLiteral("type")) == QLatin1String("ping"); });
    while (stream.size() > 2 && stream[1].value(QStringLiteral("type")) == QLatin1String("stdout")
           && stream[2].value(QStringLiteral("type")) == QLatin1String("stdout")) {
        stream[1].insert(QStringLiteral("text"), stream[1].value(QStringLiteral("text")).toString()
                                                         + stream[2].value(QStringLiteral("text")).toString());
        stream.removeAt(2);
    }
    QCOMPARE(types(stream), (QStringList{QStringLiteral("init"), QStringLiteral("stdout"),
                                         QStringLiteral("execution_count"), QStringLiteral("result"),
                                         QStringLiteral("execution_complete")}));
    QCOMPARE(stream[0].value(QStringLiteral("text")).toString(), context);
    QCOMPARE(stream[1].value(QStringLiteral("text")).toString(), QStringLiteral("wire\n"));
    QCOMPARE(stream[2].value(QStringLiteral("execution_count")).toInt(), 1);
    const QJsonObject results = stream[3].value(QStringLiteral("results")).toObject();
    QCOMPARE(results.value(QStringLiteral("text")).toString(), QStringLiteral("{'a': 1}"));
    QVERIFY(!results.contains(QStringLiteral("text/plain")));
    QVERIFY(stream[4].value(QStringLiteral("execution_time")).toInteger() >= 0);
}

// OpenSandbox's clients have no way to answer a question: input() finds the end of input at once.
void tst_OpenSandboxWire::inputFindsTheEndOfInputAtOnce()
{
    if (const QString missing = client().missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString context = createContext();
    const auto response = osb("POST", execd(QStringLiteral("/code")),
                              compact({{QStringLiteral("code"), QStringLiteral("input('Name? ')")},
                                       {QStringLiteral("context"), QJsonObject{{QStringLiteral("id"), context}}}}));
    const QList<QJsonObject> stream = events(response);
    const QStringList kinds = types(stream);
    QVERIFY2(kinds.contains(QStringLiteral("error")), qPrintable(kinds.join(QLatin1Char(' '))));
    for (const QJsonObject &event : stream)
        if (event.value(QStringLiteral("type")) == QLatin1String("error"))
            QCOMPARE(event.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(),
                     QStringLiteral("EOFError"));
}

void tst_OpenSandboxWire::codeOutputArrivesInWholeLines()
{
    if (const QString missing = client().missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString context = createContext();
    // CPython writes a print's text and its line end separately: the pipe may give them apart.
    const auto response = osb("POST", execd(QStringLiteral("/code")),
                              compact({{QStringLiteral("code"), QStringLiteral("for i in range(1000):\n    print(i, flush=True)")},
                                       {QStringLiteral("context"), QJsonObject{{QStringLiteral("id"), context}}}}));
    QStringList lines;
    for (const QJsonObject &event : events(response)) {
        if (event.value(QStringLiteral("type")) != QLatin1String("stdout"))
            continue;
        const QString text = event.value(QStringLiteral("text")).toString();
        QVERIFY2(text.endsWith(QLatin1Char('\n')), qPrintable(text));
        lines += text.chopped(1).split(QLatin1Char('\n'));
    }
    QStringList expected;
    for (int i = 0; i < 1000; ++i)
        expected.append(QString::number(i));
    QCOMPARE(lines, expected);
}

void tst_OpenSandboxWire::commandOutputIsOneEventPerLine()
{
    const auto response = osb("POST", execd(QStringLiteral("/command")),
                              R"({"command":"printf 'one\\n\\nthree\\r\\nfour'; printf 'err\\n' >&2"})");
    const QList<QJsonObject> stream = events(response);
    QStringList out;
    QStringList err;
    for (const QJsonObject &event : stream) {
        const QString type = event.value(QStringLiteral("type")).toString();
        if (type == QLatin1String("stdout"))
            out.append(event.value(QStringLiteral("text")).toString());
        else if (type == QLatin1String("stderr"))
            err.append(event.value(QStringLiteral("text")).toString());
    }
    QCOMPARE(out, (QStringList{QStringLiteral("one"), QStringLiteral("\n"), QStringLiteral("three"), QStringLiteral("four")}));
    QCOMPARE(err, QStringList{QStringLiteral("err")});
    QCOMPARE(stream.front().value(QStringLiteral("type")).toString(), QStringLiteral("init"));
    QCOMPARE(stream.back().value(QStringLiteral("type")).toString(), QStringLiteral("execution_complete"));

    // The id in init is the command's: its status can be read with it.
    const QString id = stream.front().value(QStringLiteral("text")).toString();
    const auto status = osb("GET", execd(QStringLiteral("/command/status/") + id));
    QCOMPARE(status.status, 200);
    QCOMPARE(status.object().value(QStringLiteral("exit_code")).toInt(), 0);
    QCOMPARE(status.object().value(QStringLiteral("running")).toBool(true), false);
}

void tst_OpenSandboxWire::pingsFillSilences()
{
    // A second of silence with a 100 ms ping interval (--sse-keep-alive 100).
    const auto response = osb("POST", execd(QStringLiteral("/command")), R"({"command":"sleep 1; echo done"})");
    const QList<QJsonObject> stream = events(response);
    const QStringList kinds = types(stream);
    QCOMPARE(kinds.front(), QStringLiteral("init"));
    QCOMPARE(kinds.back(), QStringLiteral("execution_complete"));
    QVERIFY2(kinds.count(QStringLiteral("ping")) >= 3, qPrintable(kinds.join(QLatin1Char(' '))));
    for (const QJsonObject &event : stream) {
        if (event.value(QStringLiteral("type")).toString() == QLatin1String("ping"))
            QCOMPARE(event.value(QStringLiteral("text")).toString(), QStringLiteral("pong"));
    }
    QVERIFY(kinds.indexOf(QStringLiteral("ping")) < kinds.indexOf(QStringLiteral("stdout")));
}

void tst_OpenSandboxWire::backgroundCommandsAnswerAtOnceAndKeepTheirLogs()
{
    const auto response = osb("POST", execd(QStringLiteral("/command")),
                              R"({"command":"echo first; echo second","background":true})");
    const QList<QJsonObject> stream = events(response);
    QCOMPARE(types(stream), (QStringList{QStringLiteral("init"), QStringLiteral("execution_complete")}));
    const QString id = stream.front().value(QStringLiteral("text")).toString();
    QTRY_COMPARE_WITH_TIMEOUT(osb("GET", execd(QStringLiteral("/command/status/") + id)).object()
                                      .value(QStringLiteral("running")).toBool(true),
                              false, 20000);
    const auto logs = osb("GET", execd(QStringLiteral("/command/%1/logs").arg(id)));
    QCOMPARE(logs.status, 200);
    QCOMPARE(logs.body, QByteArray("first\nsecond\n"));
    QCOMPARE(logs.header("EXECD-COMMANDS-TAIL-CURSOR"), QByteArray("2"));
    const auto tail = osb("GET", execd(QStringLiteral("/command/%1/logs?cursor=1").arg(id)));
    QCOMPARE(tail.body, QByteArray("second\n"));
}

void tst_OpenSandboxWire::interruptNeedsAKnownId_data()
{
    QTest::addColumn<QString>("route");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("made-up id") << QStringLiteral("/code?id=fake-1") << 404 << QStringLiteral("CONTEXT_NOT_FOUND");
    QTest::newRow("no id") << QStringLiteral("/code") << 400 << QStringLiteral("MISSING_QUERY");
    QTest::newRow("made-up command") << QStringLiteral("/command?id=fake-1") << 404 << QStringLiteral("NOT_FOUND");
    QTest::newRow("no command id") << QStringLiteral("/command") << 400 << QStringLiteral("MISSING_QUERY");
    QTest::newRow("bulk delete without language") << QStringLiteral("/code/contexts") << 400 << QStringLiteral("MISSING_QUERY");
}

void tst_OpenSandboxWire::interruptNeedsAKnownId()
{
    QFETCH(QString, route);
    QFETCH(int, status);
    QFETCH(QString, code);
    const auto response = osb("DELETE", execd(route));
    QCOMPARE(response.status, status);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), code);
}

void tst_OpenSandboxWire::createAnswersEveryRequiredField()
{
    QByteArray body = R"({"image":{"uri":"ubuntu:24.04"},"entrypoint":["sleep","inf"],"timeout":120,)"
                      R"("metadata":{"team":"a"},"resourceLimits":{"memory":"1Gi"})";
    body += m_noSandbox.isEmpty() ? QByteArray(R"(,"networkPolicy":{"defaultAction":"deny"}})")
                                  : QByteArray(R"(,"extensions":{"replhost.isolation":"none"}})");
    const auto response = osb("POST", QStringLiteral("/opensandbox/v1/sandboxes"), body);
    QCOMPARE(response.status, 202);
    const QJsonObject sandbox = response.object();
    QVERIFY(!sandbox.value(QStringLiteral("id")).toString().isEmpty());
    QCOMPARE(sandbox.value(QStringLiteral("status")).toObject().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(sandbox.value(QStringLiteral("entrypoint")).toArray(), (QJsonArray{QStringLiteral("sleep"), QStringLiteral("inf")}));
    QCOMPARE(sandbox.value(QStringLiteral("image")).toObject().value(QStringLiteral("uri")).toString(), QStringLiteral("ubuntu:24.04"));
    QCOMPARE(sandbox.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("team")).toString(), QStringLiteral("a"));
    const QDateTime created = QDateTime::fromString(sandbox.value(QStringLiteral("createdAt")).toString(), Qt::ISODateWithMs);
    const QDateTime expires = QDateTime::fromString(sandbox.value(QStringLiteral("expiresAt")).toString(), Qt::ISODateWithMs);
    QVERIFY(created.isValid());
    QCOMPARE(created.msecsTo(expires), 120 * 1000);

    // The same object from GET, and the workspace behind it from the native API.
    const QString id = sandbox.value(QStringLiteral("id")).toString();
    QCOMPARE(osb("GET", QStringLiteral("/opensandbox/v1/sandboxes/") + id).object(), sandbox);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/") + id).status, 200);
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/") + id).status, 404);
}

void tst_OpenSandboxWire::endpointsEndInTheirPortAndExecdsLeadsToExecd()
{
    for (const int port : {44772, 18080, 1}) {
        const auto response = osb("GET", QStringLiteral("/opensandbox/v1/sandboxes/%1/endpoints/%2?use_server_proxy=false")
                                                 .arg(m_sandbox).arg(port));
        QCOMPARE(response.status, 200);
        const QString endpoint = response.object().value(QStringLiteral("endpoint")).toString();
        // OpenSandbox's server-proxy form: no scheme, a route that ends in the port (what the
        // project's own end-to-end checks accept).
        QCOMPARE(endpoint, QStringLiteral("127.0.0.1:%1/opensandbox/sandboxes/%2/proxy/%3")
                                   .arg(m_server.port()).arg(m_sandbox).arg(port));
        QVERIFY(endpoint.endsWith(QLatin1Char('/') + QString::number(port)));
        const QJsonObject headers = response.object().value(QStringLiteral("headers")).toObject();
        QCOMPARE(headers.value(QStringLiteral("X-EXECD-ACCESS-TOKEN")).toString().toLatin1(), m_server.token());
        // What the SDK then does: the endpoint's headers alone reach execd, on execd's port only.
        const auto ping = client().request("GET", QUrl(QStringLiteral("http://") + endpoint).path() + QStringLiteral("/ping"), {},
                                           {{"X-EXECD-ACCESS-TOKEN", m_server.token()}}, false);
        QCOMPARE(ping.status, port == 44772 ? 200 : 404);
    }
    // The proxy path is execd's path: the same contexts, the same errors.
    const QString context = createContext(QStringLiteral("bash"));
    const QString proxied = QStringLiteral("/opensandbox/sandboxes/%1/proxy/44772").arg(m_sandbox);
    if (!context.isEmpty())
        QCOMPARE(osb("GET", proxied + QStringLiteral("/code/contexts/") + context).object()
                         .value(QStringLiteral("id")).toString(), context);
    QCOMPARE(osb("GET", proxied + QStringLiteral("/code/contexts/nope")).status, 404);
    QCOMPARE(osb("GET", QStringLiteral("/opensandbox/sandboxes/%1/proxy/447720/ping").arg(m_sandbox)).status, 404);
    QCOMPARE(osb("GET", QStringLiteral("/opensandbox/sandboxes/nope/proxy/44772/ping")).status, 404);
    QCOMPARE(osb("GET", QStringLiteral("/opensandbox/v1/sandboxes/%1/endpoints/70000").arg(m_sandbox)).status, 400);
}

void tst_OpenSandboxWire::createMakesASandboxedWorkspace()
{
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    // What OpenSandbox's SDK sends by default, less the cpu replhost cannot hold.
    const QString id = createSandbox(m_server, {{QStringLiteral("resourceLimits"), QJsonObject{{QStringLiteral("memory"), QStringLiteral("2Gi")}}}});
    QVERIFY(!id.isEmpty());
    const QJsonObject settings = client().get(QStringLiteral("/v1/workspaces/") + id).object()
                                         .value(QStringLiteral("settings")).toObject();
    QCOMPARE(settings.value(QStringLiteral("isolation")).toString(), QStringLiteral("sandbox"));
    // No networkPolicy: OpenSandbox's default, egress allowed.
    QCOMPARE(settings.value(QStringLiteral("network")).toBool(), true);
    QCOMPARE(settings.value(QStringLiteral("limits")).toObject().value(QStringLiteral("memory_bytes")).toInteger(),
             qint64(2) << 30);
    // The code inside sees the sandbox: the server's token, in its data directory, is not there.
    QVERIFY(QFile::exists(m_server.dataDir() + QStringLiteral("/token")));
    const auto command = osb("POST", QStringLiteral("/opensandbox/execd/%1/command").arg(id),
                             compact({{QStringLiteral("command"), QStringLiteral("test -e %1/token && echo visible || echo hidden")
                                                                          .arg(m_server.dataDir())}}));
    QStringList printed;
    for (const QJsonObject &event : events(command))
        if (event.value(QStringLiteral("type")) == QLatin1String("stdout"))
            printed.append(event.value(QStringLiteral("text")).toString());
    QCOMPARE(printed, QStringList{QStringLiteral("hidden")});
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
}

void tst_OpenSandboxWire::memoryLimitStopsAMemoryBomb()
{
    if (const QString missing = client().missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
    const QString id = createSandbox(m_server, {{QStringLiteral("resourceLimits"), QJsonObject{{QStringLiteral("memory"), QStringLiteral("256Mi")}}}});
    QVERIFY(!id.isEmpty());
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/") + id).object().value(QStringLiteral("settings")).toObject()
                     .value(QStringLiteral("limits")).toObject().value(QStringLiteral("memory_bytes")).toInteger(),
             qint64(256) << 20);
    const auto created = osb("POST", QStringLiteral("/opensandbox/execd/%1/code/context").arg(id),
                             compact({{QStringLiteral("language"), QStringLiteral("python")}}));
    QCOMPARE(created.status, 200);
    const QJsonObject context{{QStringLiteral("id"), created.object().value(QStringLiteral("id")).toString()}};
    const auto run = [&](const QString &code) {
        return events(osb("POST", QStringLiteral("/opensandbox/execd/%1/code").arg(id),
                          compact({{QStringLiteral("code"), code}, {QStringLiteral("context"), context}})));
    };
    // Within the limit a run is what it always is; past it the bomb is stopped.
    QVERIFY(types(run(QStringLiteral("small = bytearray(32 << 20)"))).contains(QStringLiteral("execution_complete")));
    const QList<QJsonObject> bomb = run(QStringLiteral("blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))"));
    QVERIFY2(types(bomb).contains(QStringLiteral("error")), qPrintable(types(bomb).join(QLatin1Char(' '))));
    QVERIFY(!types(bomb).contains(QStringLiteral("execution_complete")));
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
}

void tst_OpenSandboxWire::networkPolicyDecidesWhetherTheLoopbackIsReached_data()
{
    QTest::addColumn<QJsonValue>("policy");
    QTest::addColumn<QString>("printed");
    QTest::newRow("deny") << QJsonValue(QJsonObject{{QStringLiteral("defaultAction"), QStringLiteral("deny")}}) << "unreachable";
    QTest::newRow("allow") << QJsonValue(QJsonObject{{QStringLiteral("defaultAction"), QStringLiteral("allow")}}) << "reached";
    // OpenSandbox's default: egress allowed.
    QTest::newRow("none given") << QJsonValue() << "reached";
}

void tst_OpenSandboxWire::networkPolicyDecidesWhetherTheLoopbackIsReached()
{
    QFETCH(QJsonValue, policy);
    QFETCH(QString, printed);
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    QTcpServer listener;
    QVERIFY(listener.listen(QHostAddress::LocalHost));
    const QString id = createSandbox(m_server, policy.isNull() ? QJsonObject{}
                                                               : QJsonObject{{QStringLiteral("networkPolicy"), policy}});
    QVERIFY(!id.isEmpty());
    const auto command = osb("POST", QStringLiteral("/opensandbox/execd/%1/command").arg(id),
                             compact({{QStringLiteral("command"),
                                       QStringLiteral("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%1' 2>/dev/null && echo reached || echo unreachable")
                                               .arg(listener.serverPort())}}));
    QStringList out;
    for (const QJsonObject &event : events(command))
        if (event.value(QStringLiteral("type")) == QLatin1String("stdout"))
            out.append(event.value(QStringLiteral("text")).toString());
    QCOMPARE(out, QStringList{printed});
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
}

// resourceLimits.cpu below the machine's CPUs is a CPU quota on every process of the sandbox
// where a cpu cgroup can be made (GET /v1/info says which), and a 400 elsewhere. The quota is
// an upper bound the kernel holds per 100 ms period, whatever the load: a busy loop's CPU time
// stays within its share of the wall time (plus one period), which a loop without the quota
// exceeds many times over on any machine not overloaded tenfold.
void tst_OpenSandboxWire::aCpuBelowTheMachinesIsAQuotaOrRefused()
{
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    const QJsonObject enforced = client().get(QStringLiteral("/v1/info")).object()
                                         .value(QStringLiteral("worker_limits")).toObject()
                                         .value(QStringLiteral("cpu_millicores")).toObject();
    QVERIFY2(!enforced.isEmpty(), "GET /v1/info says how cpu_millicores is held");
    const QJsonObject limited{{QStringLiteral("resourceLimits"), QJsonObject{{QStringLiteral("cpu"), QStringLiteral("100m")}}}};
    if (enforced.value(QStringLiteral("mechanism")).toString() == QLatin1String("not enforced")) {
        QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}}};
        body.insert(QStringLiteral("resourceLimits"), limited.value(QStringLiteral("resourceLimits")));
        const int before = client().get(QStringLiteral("/v1/workspaces")).array().size();
        const auto refused = osb("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body));
        QCOMPARE(refused.status, 400);
        QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("NOT_SUPPORTED"));
        QVERIFY2(refused.object().value(QStringLiteral("message")).toString().contains(QLatin1String("cpu_millicores")),
                 refused.body.constData());
        QCOMPARE(client().get(QStringLiteral("/v1/workspaces")).array().size(), before);
        return;
    }
    const QString id = createSandbox(m_server, limited);
    QVERIFY(!id.isEmpty());
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/") + id).object().value(QStringLiteral("settings")).toObject()
                     .value(QStringLiteral("limits")).toObject().value(QStringLiteral("cpu_millicores")).toInteger(),
             100);
    const QString loop = QStringLiteral("import time\n"
                                        "w, c = time.monotonic(), time.process_time()\n"
                                        "while time.monotonic() - w < 2: pass\n"
                                        "print(time.process_time() - c, time.monotonic() - w)");
    // A command, and a Python context's worker: every process of the sandbox has the quota.
    const QJsonObject runs[] = {
            {{QStringLiteral("command"), QStringLiteral("python3 -c '%1'").arg(loop)}},
            {{QStringLiteral("code"), loop},
             {QStringLiteral("context"), QJsonObject{{QStringLiteral("language"), QStringLiteral("python")}}}}};
    for (const QJsonObject &run : runs) {
        const QString route = run.contains(QStringLiteral("command")) ? QStringLiteral("command") : QStringLiteral("code");
        const auto ran = osb("POST", QStringLiteral("/opensandbox/execd/%1/%2").arg(id, route), compact(run));
        QStringList out;
        for (const QJsonObject &event : events(ran))
            if (event.value(QStringLiteral("type")) == QLatin1String("stdout"))
                out.append(event.value(QStringLiteral("text")).toString());
        const QStringList figures = out.join(QString()).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        QCOMPARE(figures.size(), 2);
        const double cpu = figures[0].toDouble();
        const double wall = figures[1].toDouble();
        qInfo().noquote() << route << "busy loop:" << cpu << "s of CPU in" << wall << "s";
        QVERIFY2(wall >= 2 && cpu > 0, qPrintable(out.join(QString())));
        QVERIFY2(cpu <= 0.1 * wall + 0.1, qPrintable(QStringLiteral("%1: %2 s of CPU in %3 s under a tenth of a CPU")
                                                          .arg(route).arg(cpu).arg(wall)));
    }
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
}

void tst_OpenSandboxWire::createWithoutASandboxHereIsRefusedWithTheReason()
{
    // A server whose bubblewrap cannot run: the machine cannot make the sandbox a create means.
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--bwrap"), QStringLiteral("/nonexistent/bwrap")}), qPrintable(server.error()));
    const ApiClient api(server.port(), server.token());
    const Headers key{{"OPEN-SANDBOX-API-KEY", server.token()}};
    const QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}}};
    const int before = api.get(QStringLiteral("/v1/workspaces")).array().size();
    const auto refused = api.request("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body), key, false);
    QCOMPARE(refused.status, 503);
    QVERIFY2(refused.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("/nonexistent/bwrap")),
             refused.body.constData());
    QCOMPARE(api.get(QStringLiteral("/v1/workspaces")).array().size(), before);
    // Asked for knowingly, a plain directory.
    QJsonObject plain = body;
    plain.insert(QStringLiteral("extensions"), QJsonObject{{QStringLiteral("replhost.isolation"), QStringLiteral("none")}});
    const auto made = api.request("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(plain), key, false);
    QCOMPARE(made.status, 202);
    QCOMPARE(api.get(QStringLiteral("/v1/workspaces/") + made.object().value(QStringLiteral("id")).toString())
                     .object().value(QStringLiteral("settings")).toObject().value(QStringLiteral("isolation")).toString(),
             QStringLiteral("none"));
    QCOMPARE(server.stop(), 0);
}

void tst_OpenSandboxWire::tildeIsTheSandboxsHomeOnTheFileRoutes()
{
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    // The code writes ~/home.txt with its shell; a client reads it back by the same name.
    const auto written = osb("POST", execd(QStringLiteral("/command")),
                             compact({{QStringLiteral("command"), QStringLiteral("echo \"$HOME\" > ~/home.txt")}}));
    QVERIFY(types(events(written)).contains(QStringLiteral("execution_complete")));
    const auto byTilde = osb("GET", execd(QStringLiteral("/files/download?path=~/home.txt")));
    QCOMPARE(byTilde.status, 200);
    // A container's code sees its workspace at /workspace, not at the host's path.
    QCOMPARE(byTilde.body, QByteArray("/workspace\n"));
    QCOMPARE(osb("GET", execd(QStringLiteral("/files/download?path=home.txt"))).body, byTilde.body);
    QCOMPARE(osb("GET", execd(QStringLiteral("/files/download?path=/workspace/home.txt"))).body, byTilde.body);
    QCOMPARE(osb("GET", execd(QStringLiteral("/files/info?path=~"))).status, 200);
    QCOMPARE(osb("GET", execd(QStringLiteral("/files/download?path=~/../x"))).status, 403);
    // Outside a sandbox the code's HOME is the server user's: "~" is only a name there.
    QCOMPARE(osb("GET", QStringLiteral("/opensandbox/execd/default/files/download?path=~/home.txt")).status, 404);
}

void tst_OpenSandboxWire::hostVolumesAreBoundAsAsked()
{
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    const QDir root(m_volumes.path());
    QVERIFY(root.mkpath(QStringLiteral("logs")) && root.mkpath(QStringLiteral("data/inner")));
    QFile seen(root.filePath(QStringLiteral("logs/seen.txt")));
    QVERIFY(seen.open(QIODevice::WriteOnly) && seen.write("from the host\n") > 0);
    seen.close();
    const QJsonArray volumes{
            QJsonObject{{QStringLiteral("name"), QStringLiteral("logs")},
                        {QStringLiteral("host"), QJsonObject{{QStringLiteral("path"), root.filePath(QStringLiteral("logs"))}}},
                        {QStringLiteral("mountPath"), QStringLiteral("/mnt/logs")}, {QStringLiteral("readOnly"), true}},
            // OpenSandbox's default is read-write, and subPath picks a directory inside.
            QJsonObject{{QStringLiteral("name"), QStringLiteral("data")},
                        {QStringLiteral("host"), QJsonObject{{QStringLiteral("path"), root.filePath(QStringLiteral("data"))}}},
                        {QStringLiteral("subPath"), QStringLiteral("inner")},
                        {QStringLiteral("mountPath"), QStringLiteral("/data")}}};
    const QString id = createSandbox(m_server, {{QStringLiteral("volumes"), volumes}});
    QVERIFY(!id.isEmpty());
    const auto command = osb("POST", QStringLiteral("/opensandbox/execd/%1/command").arg(id),
                             compact({{QStringLiteral("command"), QStringLiteral(
                                     "cat /mnt/logs/seen.txt; (echo no > /mnt/logs/new) 2>/dev/null && echo wrote || echo refused; "
                                     "echo yes > /data/new && echo wrote")}}));
    QStringList out;
    for (const QJsonObject &event : events(command))
        if (event.value(QStringLiteral("type")) == QLatin1String("stdout"))
            out.append(event.value(QStringLiteral("text")).toString());
    QCOMPARE(out, (QStringList{QStringLiteral("from the host"), QStringLiteral("refused"), QStringLiteral("wrote")}));
    QVERIFY(!QFile::exists(root.filePath(QStringLiteral("logs/new"))));
    QFile written(root.filePath(QStringLiteral("data/inner/new")));
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(written.readAll(), QByteArray("yes\n"));
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
    // The host's directories stay when the sandbox goes.
    QVERIFY(QFile::exists(root.filePath(QStringLiteral("logs/seen.txt"))));
}

void tst_OpenSandboxWire::volumesFromOutsideTheAllowedDirectoriesAreRefused_data()
{
    QTest::addColumn<QString>("hostPath");
    QTest::addColumn<QString>("subPath");
    QTest::newRow("another directory") << "/etc" << "";
    QTest::newRow("the data directory") << "{data}" << "";
    QTest::newRow("out through a symlink") << "{volumes}/link" << "";
    QTest::newRow("out through subPath") << "{volumes}" << "../..";
}

void tst_OpenSandboxWire::volumesFromOutsideTheAllowedDirectoriesAreRefused()
{
    QFETCH(QString, hostPath);
    QFETCH(QString, subPath);
    REPLHOST_REQUIRE_SANDBOX_OR_SKIP(m_noSandbox);
    QFile::link(QStringLiteral("/etc"), m_volumes.filePath(QStringLiteral("link")));
    hostPath.replace(QStringLiteral("{data}"), m_server.dataDir()).replace(QStringLiteral("{volumes}"), m_volumes.path());
    QJsonObject volume{{QStringLiteral("name"), QStringLiteral("v")},
                       {QStringLiteral("host"), QJsonObject{{QStringLiteral("path"), hostPath}}},
                       {QStringLiteral("mountPath"), QStringLiteral("/mnt/v")}};
    if (!subPath.isEmpty())
        volume.insert(QStringLiteral("subPath"), subPath);
    const QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}},
                           {QStringLiteral("volumes"), QJsonArray{volume}}};
    const int before = client().get(QStringLiteral("/v1/workspaces")).array().size();
    const auto response = osb("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body));
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("INVALID_REQUEST_BODY"));
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces")).array().size(), before);
}

void tst_OpenSandboxWire::unsupportedCreateRequestsLeaveNothingBehind_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("code");
    QTest::newRow("snapshot") << QByteArray(R"({"snapshotId":"snap-1","entrypoint":[]})") << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("kubernetes volume") << QByteArray(R"({"image":{"uri":"x"},"volumes":[{"name":"v","pvc":{"claimName":"c"},"mountPath":"/data"}]})")
                                       << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("volume without a mount path") << QByteArray(R"({"image":{"uri":"x"},"volumes":[{"name":"v","host":{"path":"/srv"}}]})")
                                                 << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("no image") << QByteArray(R"({"entrypoint":["tail"]})") << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("zero timeout") << QByteArray(R"({"image":{"uri":"x"},"timeout":0})") << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("env not strings") << QByteArray(R"({"image":{"uri":"x"},"env":{"A":1}})") << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("invalid env name") << QByteArray(R"({"image":{"uri":"x"},"env":{"1=A":"b"}})") << QStringLiteral("INVALID_REQUEST_BODY");
    // What replhost cannot honour is refused, never recorded and ignored.
    QTest::newRow("cpu not a quantity") << QByteArray(R"({"image":{"uri":"x"},"resourceLimits":{"cpu":"fast"}})")
                                        << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("other resource") << QByteArray(R"({"image":{"uri":"x"},"resourceLimits":{"ephemeral-storage":"1Gi"}})")
                                    << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("resource requests") << QByteArray(R"({"image":{"uri":"x"},"resourceRequests":{"memory":"1Gi"}})")
                                       << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("egress rules")
        << QByteArray(R"({"image":{"uri":"x"},"networkPolicy":{"defaultAction":"deny","egress":[{"action":"allow","target":"example.com"}]}})")
        << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("unknown extension") << QByteArray(R"({"image":{"uri":"x"},"extensions":{"gpu":"1"}})")
                                       << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("deny without a sandbox")
        << QByteArray(R"({"image":{"uri":"x"},"extensions":{"replhost.isolation":"none"},"networkPolicy":{"defaultAction":"deny"}})")
        << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("another platform") << QByteArray(R"({"image":{"uri":"x"},"platform":{"os":"windows","arch":"amd64"}})")
                                      << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("secure access") << QByteArray(R"({"image":{"uri":"x"},"secureAccess":true})") << QStringLiteral("NOT_SUPPORTED");
    QTest::newRow("memory not a quantity") << QByteArray(R"({"image":{"uri":"x"},"resourceLimits":{"memory":"lots"}})")
                                           << QStringLiteral("INVALID_REQUEST_BODY");
    QTest::newRow("bad default action") << QByteArray(R"({"image":{"uri":"x"},"networkPolicy":{"defaultAction":"maybe"}})")
                                        << QStringLiteral("INVALID_REQUEST_BODY");
}

void tst_OpenSandboxWire::unsupportedCreateRequestsLeaveNothingBehind()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, code);
    const int before = client().get(QStringLiteral("/v1/workspaces")).array().size();
    const auto response = osb("POST", QStringLiteral("/opensandbox/v1/sandboxes"), body);
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), code);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces")).array().size(), before);
}

void tst_OpenSandboxWire::unknownSandboxIs404_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::newRow("get") << QByteArray("GET") << QStringLiteral("/opensandbox/v1/sandboxes/nope");
    QTest::newRow("delete") << QByteArray("DELETE") << QStringLiteral("/opensandbox/v1/sandboxes/nope");
    QTest::newRow("endpoint") << QByteArray("GET") << QStringLiteral("/opensandbox/v1/sandboxes/nope/endpoints/44772");
    QTest::newRow("ping") << QByteArray("GET") << QStringLiteral("/opensandbox/execd/nope/ping");
    QTest::newRow("metrics") << QByteArray("GET") << QStringLiteral("/opensandbox/execd/nope/metrics");
    QTest::newRow("files") << QByteArray("GET") << QStringLiteral("/opensandbox/execd/nope/files/info?path=a");
}

void tst_OpenSandboxWire::unknownSandboxIs404()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    const auto response = osb(method, path);
    QCOMPARE(response.status, 404);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("SANDBOX_NOT_FOUND"));
}

void tst_OpenSandboxWire::theDefaultWorkspaceCannotBeKilled()
{
    const auto info = osb("GET", QStringLiteral("/opensandbox/v1/sandboxes/default"));
    QCOMPARE(info.status, 200);
    QVERIFY(info.object().value(QStringLiteral("expiresAt")).isNull());
    QCOMPARE(osb("DELETE", QStringLiteral("/opensandbox/v1/sandboxes/default")).status, 409);
    // It never expires, so there is nothing to renew.
    QCOMPARE(osb("POST", QStringLiteral("/opensandbox/v1/sandboxes/default/renew-expiration"),
                 compact({{QStringLiteral("expiresAt"),
                           QDateTime::currentDateTimeUtc().addSecs(3600).toString(Qt::ISODateWithMs)}})).status,
             409);
}

void tst_OpenSandboxWire::expiryIsKeptAcrossARestart()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QString dataDir = server.dataDir();
    const QString id = createSandbox(server, {{QStringLiteral("timeout"), 3}});
    QVERIFY(!id.isEmpty());
    const QString directory = QDir(dataDir).filePath(QStringLiteral("workspaces/") + id);
    QVERIFY(QFileInfo(directory).isDir());
    QCOMPARE(server.stop(), 0);
    QVERIFY(QFile::exists(QDir(dataDir).filePath(QStringLiteral("opensandbox/sandboxes.json"))));

    // The expiry passes (or has passed) while a new server runs on the same data directory.
    ServerProcess again;
    QVERIFY2(again.start({}, {}, dataDir), qPrintable(again.error()));
    const ApiClient other(again.port(), again.token());
    QTRY_COMPARE_WITH_TIMEOUT(other.request("GET", QStringLiteral("/opensandbox/v1/sandboxes/") + id, {},
                                            {{"OPEN-SANDBOX-API-KEY", again.token()}}, false).status,
                              404, 30000);
    QVERIFY(!QFileInfo::exists(directory));
    QCOMPARE(again.stop(), 0);
}

void tst_OpenSandboxWire::formatRenamesTextPlain()
{
    using replhost::http::ExecdEventFormat;
    ExecdEventFormat format(ExecdEventFormat::Mode::Code);
    const auto display = format.translate(
            replhost::sdk::Event::display(QStringLiteral("e"), {{QStringLiteral("text/plain"), QStringLiteral("<Figure>")},
                                                                {QStringLiteral("image/png"), QStringLiteral("iVBOR")}}),
            7);
    QCOMPARE(display.size(), 1);
    QCOMPARE(display[0], (QJsonObject{{QStringLiteral("type"), QStringLiteral("result")},
                                      {QStringLiteral("timestamp"), 7},
                                      {QStringLiteral("results"), QJsonObject{{QStringLiteral("text"), QStringLiteral("<Figure>")},
                                                                              {QStringLiteral("image/png"), QStringLiteral("iVBOR")}}}}));
    QCOMPARE(ExecdEventFormat::frame(ExecdEventFormat::ping(5)), QByteArray(R"({"text":"pong","timestamp":5,"type":"ping"})" "\n\n"));
}

void tst_OpenSandboxWire::formatFlushesAPartialCommandLine()
{
    using replhost::http::ExecdEventFormat;
    using replhost::sdk::Event;
    ExecdEventFormat format(ExecdEventFormat::Mode::Command);
    QVERIFY(format.translate(Event::stream(QStringLiteral("c"), QStringLiteral("stdout"), QStringLiteral("par")), 1).isEmpty());
    const auto first = format.translate(Event::stream(QStringLiteral("c"), QStringLiteral("stdout"), QStringLiteral("tial\nrest")), 2);
    QCOMPARE(first.size(), 1);
    QCOMPARE(first[0].value(QStringLiteral("text")).toString(), QStringLiteral("partial"));
    const auto last = format.translate(Event::done(QStringLiteral("c"), QStringLiteral("error"), {{QStringLiteral("exit_code"), 2}}), 3);
    QCOMPARE(last.size(), 2);
    QCOMPARE(last[0].value(QStringLiteral("text")).toString(), QStringLiteral("rest"));
    QCOMPARE(last[1].value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(), QStringLiteral("CommandExecError"));
    QCOMPARE(last[1].value(QStringLiteral("error")).toObject().value(QStringLiteral("evalue")).toString(), QStringLiteral("2"));
}

void tst_OpenSandboxWire::formatMakesUpAnErrorForAFailedRun()
{
    using replhost::http::ExecdEventFormat;
    using replhost::sdk::Event;
    // A run that ended without an error event of its own (a dead interpreter) still ends with one.
    ExecdEventFormat lost(ExecdEventFormat::Mode::Code);
    const auto died = lost.translate(Event::done(QStringLiteral("e"), QStringLiteral("error"), {{QStringLiteral("state_lost"), true}}), 1);
    QCOMPARE(died.size(), 1);
    QCOMPARE(died[0].value(QStringLiteral("type")).toString(), QStringLiteral("error"));
    // One that had its own error gets no second one, and no execution_complete.
    ExecdEventFormat failed(ExecdEventFormat::Mode::Code);
    QCOMPARE(failed.translate(Event::error(QStringLiteral("e"), QStringLiteral("NameError"), QStringLiteral("x")), 1).size(), 1);
    QVERIFY(failed.translate(Event::done(QStringLiteral("e"), QStringLiteral("error")), 2).isEmpty());
}

void tst_OpenSandboxWire::formatCompletesInWholeMilliseconds()
{
    using replhost::http::ExecdEventFormat;
    using replhost::sdk::Event;
    // Drivers measure runs in fractions of a millisecond.
    ExecdEventFormat format(ExecdEventFormat::Mode::Code);
    const auto done = format.translate(Event::done(QStringLiteral("e"), QStringLiteral("ok"),
                                                   {{QStringLiteral("duration_ms"), 20123.456}}), 9);
    QCOMPARE(done, (QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("execution_complete")},
                                        {QStringLiteral("timestamp"), 9},
                                        {QStringLiteral("execution_time"), 20123}}}));
}

QTEST_GUILESS_MAIN(tst_OpenSandboxWire)
#include "tst_opensandboxwire.moc"
