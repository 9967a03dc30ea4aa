// SPDX-License-Identifier: Apache-2.0
// Stateless shell commands over HTTP, and the cap on event streams per client: a real
// replhost-server, /bin/sh, and a Poco client. No language runtime is needed.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTest>
#include <QThread>

class tst_CommandsApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void waitReturnsOutputAndExitCode();
    void zeroExitIsOk();
    void streamedLikeAnExecution();
    void runsInTheWorkspaceWithItsEnvLayer();
    void cwdIsConfinedToTheWorkspace();
    void timeoutEndsItWithStatusTimeout();
    void interruptByIdStopsTheWholeGroup();
    void interruptEscalatesWhenSigintIsIgnored();
    void fetchAndReattachWithLastEventId();
    void badRequests_data();
    void badRequests();
    void unknownOrForeignCommandIs404();
    void outputBeyondTheCapIsTruncated();
    void deletingTheWorkspaceAbortsItsCommands();

    void streamsPerClientAreCappedWith429();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    QJsonObject runAndWait(const QJsonObject &body, const QString &prefix = QStringLiteral("/v1")) const;

    ServerProcess m_server;
};

void tst_CommandsApi::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
}

QJsonObject tst_CommandsApi::runAndWait(const QJsonObject &body, const QString &prefix) const
{
    const auto response = client().post(prefix + QStringLiteral("/commands?wait=true"), body);
    if (response.status != 200)
        qWarning() << "command:" << response.status << response.body;
    return response.object();
}

void tst_CommandsApi::waitReturnsOutputAndExitCode()
{
    const QJsonObject command = runAndWait({{QStringLiteral("command"), QStringLiteral("echo out; echo err >&2; exit 3")}});
    QCOMPARE(command.value(QStringLiteral("status")).toString(), QStringLiteral("error"));
    QCOMPARE(command.value(QStringLiteral("exit_code")).toInt(), 3);
    QCOMPARE(command.value(QStringLiteral("stdout")).toString(), QStringLiteral("out\n"));
    QCOMPARE(command.value(QStringLiteral("stderr")).toString(), QStringLiteral("err\n"));
    QCOMPARE(command.value(QStringLiteral("language")).toString(), QStringLiteral("sh"));
    QVERIFY(command.value(QStringLiteral("context_id")).isNull());
    QCOMPARE(command.value(QStringLiteral("code")).toString(), QStringLiteral("echo out; echo err >&2; exit 3"));
    QVERIFY(!command.value(QStringLiteral("id")).toString().isEmpty());
    QVERIFY(command.value(QStringLiteral("duration_ms")).toInteger() >= 0);
}

void tst_CommandsApi::zeroExitIsOk()
{
    const QJsonObject command = runAndWait({{QStringLiteral("command"), QStringLiteral("printf 'é%s' done")}});
    QCOMPARE(command.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(command.value(QStringLiteral("exit_code")).toInt(), 0);
    QCOMPARE(command.value(QStringLiteral("stdout")).toString(), QStringLiteral("édone"));
}

void tst_CommandsApi::streamedLikeAnExecution()
{
    const QList<ApiClient::Event> events = client().stream(
            QStringLiteral("/v1/commands"),
            {{QStringLiteral("command"), QStringLiteral("echo one; sleep 0.2; echo two >&2; exit 1")}});
    QVERIFY(events.size() >= 4);
    QCOMPARE(events.front().type, QByteArray("execution"));
    QVERIFY(events.front().json().value(QStringLiteral("context_id")).isNull());
    QCOMPARE(events.at(1).type, QByteArray("started"));
    QString out, err;
    for (int i = 1; i < events.size(); ++i) {
        QCOMPARE(events[i].id, QByteArray::number(i - 1));
        if (events[i].type == "stream") {
            const QJsonObject json = events[i].json();
            (json.value(QStringLiteral("name")).toString() == QLatin1String("stdout") ? out : err)
                    += json.value(QStringLiteral("text")).toString();
        }
    }
    QCOMPARE(out, QStringLiteral("one\n"));
    QCOMPARE(err, QStringLiteral("two\n"));
    QCOMPARE(events.back().type, QByteArray("done"));
    QCOMPARE(events.back().json().value(QStringLiteral("status")).toString(), QStringLiteral("error"));
    QCOMPARE(events.back().json().value(QStringLiteral("exit_code")).toInt(), 1);
}

void tst_CommandsApi::runsInTheWorkspaceWithItsEnvLayer()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("cmdws")}}).status, 201);
    const QString directory = client().get(QStringLiteral("/v1/workspaces/cmdws")).object().value(QStringLiteral("directory")).toString();
    QCOMPARE(client().patch(QStringLiteral("/v1/workspaces/cmdws/env"),
                            {{QStringLiteral("set"), QJsonObject{{QStringLiteral("FROM_WS"), QStringLiteral("ws")},
                                                                 {QStringLiteral("SHARED"), QStringLiteral("ws")}}},
                             {QStringLiteral("unset"), QJsonArray{QStringLiteral("HOME")}}}).status,
             200);
    const QJsonObject command = runAndWait(
            {{QStringLiteral("command"),
              QStringLiteral("pwd; echo \"$FROM_WS $SHARED $EXTRA ${HOME:-nohome} ${REPLHOST_PLUGIN_PATH:-hidden}\"")},
             {QStringLiteral("env"), QJsonObject{{QStringLiteral("SHARED"), QStringLiteral("request")},
                                                 {QStringLiteral("EXTRA"), QStringLiteral("x")}}}},
            QStringLiteral("/v1/workspaces/cmdws"));
    QCOMPARE(command.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(command.value(QStringLiteral("workspace")).toString(), QStringLiteral("cmdws"));
    QCOMPARE(command.value(QStringLiteral("stdout")).toString(),
             directory + QStringLiteral("\nws request x nohome hidden\n"));
}

void tst_CommandsApi::cwdIsConfinedToTheWorkspace()
{
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"), {{QStringLiteral("path"), QStringLiteral("sub/dir")}}).status, 201);
    const QString root = client().get(QStringLiteral("/v1/workspaces/default")).object().value(QStringLiteral("directory")).toString();
    const QJsonObject inside = runAndWait({{QStringLiteral("command"), QStringLiteral("pwd")},
                                           {QStringLiteral("cwd"), QStringLiteral("sub/dir")}});
    QCOMPARE(inside.value(QStringLiteral("stdout")).toString(), root + QStringLiteral("/sub/dir\n"));

    QVERIFY(QFile::link(QStringLiteral("/etc"), root + QStringLiteral("/etc-link")));
    for (const QString &cwd : {QStringLiteral(".."), QStringLiteral("sub/../.."), QStringLiteral("/etc"),
                               QStringLiteral("/"), QStringLiteral("etc-link")}) {
        const auto refused = client().post(QStringLiteral("/v1/commands?wait=true"),
                                           {{QStringLiteral("command"), QStringLiteral("pwd")}, {QStringLiteral("cwd"), cwd}});
        QVERIFY2(refused.status == 403, qPrintable(cwd + QLatin1Char(' ') + QString::fromUtf8(refused.body)));
        QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
    }
    const auto missing = client().post(QStringLiteral("/v1/commands?wait=true"),
                                       {{QStringLiteral("command"), QStringLiteral("pwd")}, {QStringLiteral("cwd"), QStringLiteral("nope")}});
    QCOMPARE(missing.status, 400);
}

void tst_CommandsApi::timeoutEndsItWithStatusTimeout()
{
    QElapsedTimer timer;
    timer.start();
    const QJsonObject command = runAndWait({{QStringLiteral("command"), QStringLiteral("echo begun; sleep 30")},
                                            {QStringLiteral("timeout_ms"), 300}});
    QVERIFY(timer.elapsed() < 10000);
    QVERIFY(timer.elapsed() >= 250);
    QCOMPARE(command.value(QStringLiteral("status")).toString(), QStringLiteral("timeout"));
    QCOMPARE(command.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(), QStringLiteral("Timeout"));
    QCOMPARE(command.value(QStringLiteral("stdout")).toString(), QStringLiteral("begun\n"));
}

void tst_CommandsApi::interruptByIdStopsTheWholeGroup()
{
    const QString pidFile = QDir(client().get(QStringLiteral("/v1/workspaces/default")).object()
                                         .value(QStringLiteral("directory")).toString()).filePath(QStringLiteral("bg.pid"));
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/commands"),
            {{QStringLiteral("command"), QStringLiteral("sleep 60 & echo $! > bg.pid; echo started; wait")}});
    const std::optional<ApiClient::Event> head = stream->next(10000);
    QVERIFY(head && head->type == "execution");
    const QString id = head->json().value(QStringLiteral("id")).toString();
    QString out;
    while (std::optional<ApiClient::Event> event = stream->next(10000)) {
        if (event->type == "stream")
            out += event->json().value(QStringLiteral("text")).toString();
        if (out.contains(QStringLiteral("started")))
            break;
    }
    QFile file(pidFile);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QString backgroundPid = QString::fromLatin1(file.readAll().trimmed());
    QVERIFY(ServerProcess::isAlive(backgroundPid.toLongLong()));

    const auto interrupted = client().post(QStringLiteral("/v1/commands/%1/interrupt").arg(id), {});
    QCOMPARE(interrupted.status, 202);
    QJsonObject done;
    while (std::optional<ApiClient::Event> event = stream->next(20000)) {
        if (event->type == "done")
            done = event->json();
    }
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    // The background child was in the command's group: it went too.
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(backgroundPid.toLongLong()), 5000);
    QCOMPARE(client().post(QStringLiteral("/v1/commands/%1/interrupt").arg(id), {}).status, 409);
}

void tst_CommandsApi::interruptEscalatesWhenSigintIsIgnored()
{
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/commands"),
            {{QStringLiteral("command"), QStringLiteral("trap '' INT; echo ready; sleep 60")}});
    const QString id = stream->next(10000)->json().value(QStringLiteral("id")).toString();
    while (std::optional<ApiClient::Event> event = stream->next(10000)) {
        if (event->type == "stream")
            break;
    }
    QElapsedTimer timer;
    timer.start();
    QCOMPARE(client().post(QStringLiteral("/v1/commands/%1/interrupt").arg(id), {}).status, 202);
    QJsonObject done;
    while (std::optional<ApiClient::Event> event = stream->next(20000)) {
        if (event->type == "done")
            done = event->json();
    }
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QVERIFY2(timer.elapsed() >= 1500, "SIGINT alone cannot have stopped it");
    QVERIFY(timer.elapsed() < 10000);
    QCOMPARE(done.value(QStringLiteral("exit_code")).toInt(), 128 + 15);  // SIGTERM
}

void tst_CommandsApi::fetchAndReattachWithLastEventId()
{
    const QJsonObject finished = runAndWait({{QStringLiteral("command"), QStringLiteral("echo a; echo b")}});
    const QString id = finished.value(QStringLiteral("id")).toString();
    const auto fetched = client().get(QStringLiteral("/v1/commands/") + id);
    QCOMPARE(fetched.status, 200);
    QCOMPARE(fetched.object().value(QStringLiteral("stdout")).toString(), QStringLiteral("a\nb\n"));

    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "GET", QStringLiteral("/v1/commands/%1/events").arg(id), {}, {{"Last-Event-ID", "0"}});
    QCOMPARE(stream->status(), 200);
    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream->next(10000))
        events.append(*event);
    QCOMPARE(events.front().type, QByteArray("execution"));
    QCOMPARE(events.at(1).id, QByteArray("1"));
    QCOMPARE(events.back().type, QByteArray("done"));
    QCOMPARE(events.size(), finished.value(QStringLiteral("events")).toArray().size());
}

void tst_CommandsApi::badRequests_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("field");
    QTest::newRow("no command") << QByteArray("{}") << "command";
    QTest::newRow("command not a string") << QByteArray(R"({"command":["ls"]})") << "command";
    QTest::newRow("env not strings") << QByteArray(R"({"command":"ls","env":{"A":1}})") << "env";
    QTest::newRow("negative timeout") << QByteArray(R"({"command":"ls","timeout_ms":-1})") << "timeout_ms";
    QTest::newRow("cwd not a string") << QByteArray(R"({"command":"ls","cwd":3})") << "cwd";
    QTest::newRow("empty command") << QByteArray(R"({"command":"  "})") << "command";
    QTest::newRow("bad env key") << QByteArray(R"({"command":"ls","env":{"A=B":"1"}})") << "A=B";
    QTest::newRow("not json") << QByteArray("ls -l") << "JSON";
}

void tst_CommandsApi::badRequests()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, field);
    const auto response = client().request("POST", QStringLiteral("/v1/commands"), body);
    QCOMPARE(response.status, 400);
    QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(field), response.body.constData());
}

void tst_CommandsApi::unknownOrForeignCommandIs404()
{
    QCOMPARE(client().get(QStringLiteral("/v1/commands/nope")).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/commands/nope/events")).status, 404);
    QCOMPARE(client().post(QStringLiteral("/v1/commands/nope/interrupt"), {}).status, 404);
    const QString id = runAndWait({{QStringLiteral("command"), QStringLiteral("true")}}).value(QStringLiteral("id")).toString();
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("elsewhere")}}).status, 201);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/elsewhere/commands/") + id).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/nope/commands/") + id).status, 404);
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces/nope/commands"), {{QStringLiteral("command"), QStringLiteral("true")}}).status, 404);
}

void tst_CommandsApi::outputBeyondTheCapIsTruncated()
{
    ServerProcess capped;
    QVERIFY2(capped.start({QStringLiteral("--max-output"), QStringLiteral("1K")}), qPrintable(capped.error()));
    ApiClient api(capped.port(), capped.token());
    const auto response = api.post(QStringLiteral("/v1/commands?wait=true"),
                                   {{QStringLiteral("command"), QStringLiteral("head -c 100000 /dev/zero | tr '\\0' x; echo tail >&2")}});
    QCOMPARE(response.status, 200);
    const QJsonObject command = response.object();
    QCOMPARE(command.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(command.value(QStringLiteral("stdout")).toString().size() + command.value(QStringLiteral("stderr")).toString().size(),
             1024);
    bool truncated = false;
    for (const QJsonValue &event : command.value(QStringLiteral("events")).toArray())
        truncated = truncated || event.toObject().value(QStringLiteral("type")).toString() == QLatin1String("truncated");
    QVERIFY(truncated);
}

void tst_CommandsApi::deletingTheWorkspaceAbortsItsCommands()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("doomed")}}).status, 201);
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/workspaces/doomed/commands"), {{QStringLiteral("command"), QStringLiteral("sleep 30")}});
    QVERIFY(stream->next(10000));  // execution
    QVERIFY(stream->next(10000));  // started
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/doomed")).status, 204);
    QJsonObject done;
    while (std::optional<ApiClient::Event> event = stream->next(10000)) {
        if (event->type == "done")
            done = event->json();
    }
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("aborted"));
}

void tst_CommandsApi::streamsPerClientAreCappedWith429()
{
    ServerProcess limited;
    QVERIFY2(limited.start({QStringLiteral("--max-streams-per-client"), QStringLiteral("2")}), qPrintable(limited.error()));
    ApiClient api(limited.port(), limited.token());
    const QJsonObject slow{{QStringLiteral("command"), QStringLiteral("sleep 30")}};

    std::unique_ptr<ApiClient::Stream> first = api.openStream("POST", QStringLiteral("/v1/commands"), slow);
    std::unique_ptr<ApiClient::Stream> second = api.openStream("POST", QStringLiteral("/v1/commands"), slow);
    QCOMPARE(first->status(), 200);
    QCOMPARE(second->status(), 200);
    const QString firstId = first->next(10000)->json().value(QStringLiteral("id")).toString();
    const QString secondId = second->next(10000)->json().value(QStringLiteral("id")).toString();

    // A third stream, of any kind, is refused before anything starts.
    const auto refused = api.post(QStringLiteral("/v1/commands"), slow);
    QCOMPARE(refused.status, 429);
    QCOMPARE(refused.header("Retry-After"), QByteArray("1"));
    QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("too_many_streams"));
    QCOMPARE(api.get(QStringLiteral("/v1/commands/%1/events").arg(firstId)).status, 429);
    QVERIFY(api.get(QStringLiteral("/metrics")).body.contains("\nreplhost_http_streams_open 2\n"));
    // Waiting for a result is not a stream.
    QCOMPARE(api.post(QStringLiteral("/v1/commands?wait=true"), {{QStringLiteral("command"), QStringLiteral("true")}}).status, 200);

    // A client that leaves gives its slot back.
    first->abort();
    QElapsedTimer timer;
    timer.start();
    int status = 0;
    do {
        QThread::msleep(50);
        const std::unique_ptr<ApiClient::Stream> again =
                api.openStream("GET", QStringLiteral("/v1/commands/%1/events").arg(secondId));
        status = again->status();
    } while (status == 429 && timer.elapsed() < 5000);
    QCOMPARE(status, 200);

    QCOMPARE(api.post(QStringLiteral("/v1/commands/%1/interrupt").arg(firstId), {}).status, 202);
    QCOMPARE(api.post(QStringLiteral("/v1/commands/%1/interrupt").arg(secondId), {}).status, 202);
}

QTEST_GUILESS_MAIN(tst_CommandsApi)
#include "tst_commandsapi.moc"
