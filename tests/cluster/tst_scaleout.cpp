// SPDX-License-Identifier: Apache-2.0
// Several replhost servers behind the nginx configuration replhost ships
// (packaging/nginx/replhost.conf), as docs/architecture.md ("Many servers") describes: three real
// replhost-server processes and a real nginx on loopback ports, started here. Each workspace is
// answered by one instance whatever surface the request comes through; workspaces spread over
// the instances; event streams and long runs pass the router; an instance that dies takes only
// its own workspaces down and brings them back with their state; a fourth instance and
// packaging/kubernetes/rebalance move workspaces with their variables and files.
//
// The slots run in order and build on each other (the workspaces made by one are used by the
// next), as the life of a cluster does.

#include "../http/apiclient.h"
#include "../http/serverprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <csignal>
#include <memory>
#include <vector>

#include <unistd.h>

namespace {

constexpr int kWorkspaces = 30;

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QString workspaceName(int i)
{
    return QStringLiteral("ws%1").arg(i, 2, 10, QLatin1Char('0'));
}

quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

QByteArray instanceOf(const ApiClient::Response &response)
{
    return response.header("X-Replhost-Instance");
}

QString stdoutOf(const QJsonObject &execution)
{
    return execution.value(QStringLiteral("stdout")).toString();
}

} // namespace

class tst_ScaleOut : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void everyAnswerNamesTheInstanceThatGaveIt();
    void workspacesSpreadOverEveryInstance();
    void aCreateTheRouterCannotPlaceIsMisdirected();
    void everySurfaceOfAWorkspaceIsAnsweredByItsInstance();
    void anOpenSandboxCreateLivesWhereItsIdIsPlaced();
    void eventStreamsAndLongRunsPassTheRouter();
    void aKilledInstanceFailsOnlyItsOwnWorkspaces();
    void aRestartedInstanceRestoresItsContexts();
    void aFourthInstanceAndRebalanceMoveWorkspacesWithTheirState();

private:
    struct Instance {
        QString id;
        QString dataDir;
        quint16 port = 0;
        std::unique_ptr<ServerProcess> process;
    };

    bool startInstance(Instance &instance);
    bool startRouter();
    void stopRouter();
    ApiClient router() const { return ApiClient(m_routerPort, m_token); }
    ApiClient direct(const Instance &instance) const { return ApiClient(instance.port, m_token); }
    Instance *instanceNamed(const QByteArray &id);
    Headers routedTo(const QString &workspace) const { return {{"X-Replhost-Workspace", workspace.toUtf8()}}; }

    QTemporaryDir m_root;
    QString m_nginx;
    QString m_tokenFile;
    QByteArray m_token;
    std::vector<Instance> m_instances;
    quint16 m_routerPort = 0;
    std::unique_ptr<QProcess> m_router;
    QHash<QString, QByteArray> m_owner;      // workspace → instance id
    QHash<QString, QString> m_context;       // workspace → its Python context
};

bool tst_ScaleOut::startInstance(Instance &instance)
{
    instance.process = std::make_unique<ServerProcess>();
    QStringList arguments{QStringLiteral("--token-file"), m_tokenFile,
                          QStringLiteral("--instance-id"), instance.id,
                          QStringLiteral("--allow-host"), QStringLiteral("replhost"),
                          QStringLiteral("--max-workers"), QStringLiteral("6")};
    if (instance.port != 0)  // back on the port the ring knows it by
        arguments << QStringLiteral("--port") << QString::number(instance.port);
    if (!instance.process->start(arguments, {}, instance.dataDir)) {
        qWarning().noquote() << instance.id << instance.process->error();
        return false;
    }
    instance.port = instance.process->port();
    return instance.process->token() == m_token;
}

bool tst_ScaleOut::startRouter()
{
    // The shipped file as it is, but for the port it listens on.
    const QString dir = m_root.filePath(QStringLiteral("nginx"));
    QDir().mkpath(dir + QStringLiteral("/conf.d"));
    QFile shipped(QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/nginx/replhost.conf"));
    if (!shipped.open(QIODevice::ReadOnly))
        return false;
    QString config = QString::fromUtf8(shipped.readAll());
    if (config.count(QStringLiteral("listen 8080;")) != 1)
        return false;
    config.replace(QStringLiteral("listen 8080;"), QStringLiteral("listen 127.0.0.1:%1;").arg(m_routerPort));
    QFile conf(dir + QStringLiteral("/conf.d/replhost.conf"));
    QFile instances(dir + QStringLiteral("/conf.d/replhost.instances"));
    QFile main(dir + QStringLiteral("/nginx.conf"));
    if (!conf.open(QIODevice::WriteOnly) || !instances.open(QIODevice::WriteOnly) || !main.open(QIODevice::WriteOnly))
        return false;
    conf.write(config.toUtf8());
    for (const Instance &instance : m_instances)
        instances.write(QStringLiteral("server 127.0.0.1:%1 max_fails=0;\n").arg(instance.port).toUtf8());
    // What a system's nginx.conf has around conf.d, with every path in the test's directory.
    QString mainConfig = QStringLiteral("worker_processes 1;\npid %1/nginx.pid;\n"
                                        "events { worker_connections 512; }\n"
                                        "http {\n  access_log off;\n"
                                        "  client_body_temp_path %1/body;\n  proxy_temp_path %1/proxy;\n"
                                        "  fastcgi_temp_path %1/fastcgi;\n  uwsgi_temp_path %1/uwsgi;\n"
                                        "  scgi_temp_path %1/scgi;\n  include conf.d/replhost.conf;\n}\n")
                                 .arg(dir);
    if (::geteuid() == 0)  // workers as root, who owns the test's 0700 directory
        mainConfig.prepend(QStringLiteral("user root;\n"));
    main.write(mainConfig.toUtf8());
    conf.close();
    instances.close();
    main.close();

    m_router = std::make_unique<QProcess>();
    m_router->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_router->start(m_nginx, {QStringLiteral("-e"), QStringLiteral("stderr"), QStringLiteral("-p"), dir + QLatin1Char('/'),
                              QStringLiteral("-c"), dir + QStringLiteral("/nginx.conf"),
                              QStringLiteral("-g"), QStringLiteral("daemon off;")});
    if (!m_router->waitForStarted(10000))
        return false;
    QDeadlineTimer deadline(20000);
    while (!deadline.hasExpired() && m_router->state() == QProcess::Running) {
        if (router().get(QStringLiteral("/healthz")).status == 200)
            return true;
        QThread::msleep(50);
    }
    return false;
}

void tst_ScaleOut::stopRouter()
{
    if (!m_router)
        return;
    m_router->terminate();
    if (!m_router->waitForFinished(10000))
        m_router->kill();
    m_router->waitForFinished(5000);
    m_router.reset();
}

tst_ScaleOut::Instance *tst_ScaleOut::instanceNamed(const QByteArray &id)
{
    for (Instance &instance : m_instances) {
        if (instance.id.toUtf8() == id)
            return &instance;
    }
    return nullptr;
}

void tst_ScaleOut::initTestCase()
{
    QVERIFY(m_root.isValid());
    m_nginx = QStandardPaths::findExecutable(QStringLiteral("nginx"), {QStringLiteral("/usr/sbin"), QStringLiteral("/usr/bin")});
    QVERIFY2(!m_nginx.isEmpty(), "nginx is not installed (scripts/packages.txt has it)");

    // One token for every instance, as a Kubernetes Secret mounted as a file gives them.
    m_token = QByteArrayLiteral("cluster-token-") + QByteArray::number(::getpid()) + "-shared-by-all";
    m_tokenFile = m_root.filePath(QStringLiteral("token"));
    QFile token(m_tokenFile);
    QVERIFY(token.open(QIODevice::WriteOnly));
    token.write(m_token + '\n');
    token.close();

    for (int i = 0; i < 3; ++i) {
        Instance instance;
        instance.id = QStringLiteral("replhost-%1").arg(i);
        instance.dataDir = m_root.filePath(instance.id);
        m_instances.push_back(std::move(instance));
        QVERIFY2(startInstance(m_instances.back()), qPrintable(m_instances.back().id));
    }
    m_routerPort = freePort();
    QVERIFY2(startRouter(), "nginx did not start with packaging/nginx/replhost.conf");
}

void tst_ScaleOut::cleanupTestCase()
{
    stopRouter();
    for (Instance &instance : m_instances) {
        if (instance.process)
            instance.process->stop();
    }
}

void tst_ScaleOut::everyAnswerNamesTheInstanceThatGaveIt()
{
    QSet<QByteArray> ids;
    for (const Instance &instance : m_instances) {
        const ApiClient::Response info = direct(instance).get(QStringLiteral("/v1/info"));
        QCOMPARE(info.status, 200);
        QCOMPARE(instanceOf(info), instance.id.toUtf8());
        ids.insert(instance.id.toUtf8());
    }
    const ApiClient::Response routed = router().get(QStringLiteral("/healthz"));
    QCOMPARE(routed.status, 200);
    QVERIFY(ids.contains(instanceOf(routed)));
    // A refusal too, answered before any route runs.
    const ApiClient::Response refused = router().request("GET", QStringLiteral("/v1/info"), {}, {}, false);
    QCOMPARE(refused.status, 401);
    QVERIFY(ids.contains(instanceOf(refused)));
}

void tst_ScaleOut::workspacesSpreadOverEveryInstance()
{
    for (int i = 0; i < kWorkspaces; ++i) {
        const QString name = workspaceName(i);
        const ApiClient::Response created = router().request(
                "POST", QStringLiteral("/v1/workspaces"), compact({{QStringLiteral("name"), name}}), routedTo(name));
        QVERIFY2(created.status == 201, created.body.constData());
        m_owner.insert(name, instanceOf(created));
    }
    const QList<QByteArray> owners = m_owner.values();
    QCOMPARE(QSet<QByteArray>(owners.cbegin(), owners.cend()).size(), int(m_instances.size()));
    // Each lives on its owner and nowhere else.
    for (auto it = m_owner.cbegin(); it != m_owner.cend(); ++it) {
        for (const Instance &instance : m_instances) {
            const int status = direct(instance).get(QStringLiteral("/v1/workspaces/") + it.key()).status;
            QCOMPARE(status, instance.id.toUtf8() == it.value() ? 200 : 404);
        }
    }
}

void tst_ScaleOut::aCreateTheRouterCannotPlaceIsMisdirected()
{
    // Without the field the router cannot read the name from the body; the server it reaches
    // says so instead of making the workspace where no later request would find it.
    const ApiClient::Response created = router().post(QStringLiteral("/v1/workspaces"),
                                                      {{QStringLiteral("name"), QStringLiteral("stray")}});
    QCOMPARE(created.status, 421);
    QCOMPARE(created.object().value(QStringLiteral("code")).toString(), QStringLiteral("misdirected"));
    // A field that names another workspace than the path: the router goes by the path, and
    // so does the server it reaches.
    const ApiClient::Response crossed = router().request("GET", QStringLiteral("/v1/workspaces/ws00/contexts"), {},
                                                         routedTo(QStringLiteral("ws01")));
    QCOMPARE(crossed.status, 200);
    QCOMPARE(instanceOf(crossed), m_owner.value(QStringLiteral("ws00")));
}

void tst_ScaleOut::everySurfaceOfAWorkspaceIsAnsweredByItsInstance()
{
    const ApiClient api = router();
    for (int i = 0; i < kWorkspaces; ++i) {
        const QString name = workspaceName(i);
        const QByteArray owner = m_owner.value(name);
        const QString prefix = QStringLiteral("/v1/workspaces/") + name;
        const auto check = [&](const ApiClient::Response &response, int status, const char *what) {
            if (response.status != status || instanceOf(response) != owner)
                qWarning().noquote() << name << what << response.status << response.body;
            return response.status == status && instanceOf(response) == owner;
        };

        const ApiClient::Response context = api.post(prefix + QStringLiteral("/contexts"),
                                                     {{QStringLiteral("language"), QStringLiteral("python")}});
        QVERIFY(check(context, 201, "context"));
        const QString id = context.object().value(QStringLiteral("id")).toString();
        m_context.insert(name, id);

        const ApiClient::Response run = api.post(prefix + QStringLiteral("/contexts/%1/executions?wait=true").arg(id),
                                                 {{QStringLiteral("code"), QStringLiteral("x = %1\nprint(x)").arg(i)}});
        QVERIFY(check(run, 200, "run"));
        QCOMPARE(stdoutOf(run.object()), QStringLiteral("%1\n").arg(i));

        // The short form names only the context; the field names its workspace.
        QVERIFY(check(api.request("GET", QStringLiteral("/v1/contexts/") + id, {}, routedTo(name)), 200, "short form"));

        QVERIFY(check(api.request("PUT", prefix + QStringLiteral("/files/content?path=note.txt"),
                                  QStringLiteral("note %1").arg(i).toUtf8()),
                      201, "file"));
        const ApiClient::Response command = api.post(prefix + QStringLiteral("/commands?wait=true"),
                                                     {{QStringLiteral("command"), QStringLiteral("cat note.txt")}});
        QVERIFY(check(command, 200, "command"));
        QCOMPARE(command.object().value(QStringLiteral("stdout")).toString(), QStringLiteral("note %1").arg(i));

        const ApiClient::Response e2b = api.get(QStringLiteral("/e2b/%1/workspaces/%2/files?path=note.txt")
                                                        .arg(QString::fromUtf8(m_token), name));
        QVERIFY(check(e2b, 200, "E2B"));
        QCOMPARE(e2b.body, QStringLiteral("note %1").arg(i).toUtf8());

        QVERIFY(check(api.get(QStringLiteral("/opensandbox/execd/%1/ping").arg(name)), 200, "OpenSandbox execd"));

        // MCP's one path names no workspace: the field does, and the tool acts in that workspace.
        const QJsonObject call{
                {"jsonrpc", "2.0"}, {"id", i}, {"method", "tools/call"},
                {"params", QJsonObject{{"name", "run_code"},
                                       {"arguments", QJsonObject{{"context_id", id}, {"code", "x + 1"}}},
                                       {"_meta", QJsonObject{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                                                             {"io.modelcontextprotocol/clientCapabilities", QJsonObject{}}}}}}};
        const ApiClient::Response mcp = api.request(
                "POST", QStringLiteral("/mcp"), QJsonDocument(call).toJson(QJsonDocument::Compact),
                routedTo(name) + Headers{{"Accept", "application/json, text/event-stream"},
                                         {"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"},
                                         {"Mcp-Name", "run_code"}});
        QVERIFY(check(mcp, 200, "MCP"));
        QCOMPARE(mcp.object().value("result").toObject().value("structuredContent").toObject().value("result").toString(),
                 QString::number(i + 1));
    }
}

void tst_ScaleOut::anOpenSandboxCreateLivesWhereItsIdIsPlaced()
{
    // The router makes the id (the body, which has none, is not read): the sandbox is made on the
    // instance the ring gives that id, so the sandbox's later requests find it there.
    const QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}},
                           {QStringLiteral("entrypoint"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("infinity")}},
                           {QStringLiteral("extensions"), QJsonObject{{QStringLiteral("replhost.isolation"), QStringLiteral("none")}}}};
    QSet<QByteArray> seen;
    for (int i = 0; i < 6; ++i) {
        const ApiClient::Response created = router().request("POST", QStringLiteral("/opensandbox/v1/sandboxes"),
                                                             compact(body));
        QVERIFY2(created.status == 202, created.body.constData());
        const QString id = created.object().value(QStringLiteral("id")).toString();
        QVERIFY(!id.isEmpty());
        const ApiClient::Response got = router().get(QStringLiteral("/opensandbox/v1/sandboxes/") + id);
        QCOMPARE(got.status, 200);
        QCOMPARE(instanceOf(got), instanceOf(created));
        QCOMPARE(router().get(QStringLiteral("/opensandbox/sandboxes/%1/proxy/44772/ping").arg(id)).status, 200);
        seen.insert(instanceOf(created));
        QCOMPARE(router().del(QStringLiteral("/opensandbox/v1/sandboxes/") + id).status, 204);
    }
    QVERIFY(!seen.isEmpty());
}

void tst_ScaleOut::eventStreamsAndLongRunsPassTheRouter()
{
    const QString name = workspaceName(0);
    const QString prefix = QStringLiteral("/v1/workspaces/") + name;
    // The run prints, then waits for a file that is written only once that print has come
    // through the router: a router that held the stream back would never let it finish. Then
    // it runs ten seconds more, silent.
    const QString code = QStringLiteral("import os, time\n"
                                        "print('waiting', flush=True)\n"
                                        "while not os.path.exists('go'):\n"
                                        "    time.sleep(0.05)\n"
                                        "time.sleep(10)\n"
                                        "print('slept', flush=True)\n");
    std::unique_ptr<ApiClient::Stream> stream = router().openStream(
            "POST", prefix + QStringLiteral("/contexts/%1/executions").arg(m_context.value(name)),
            {{QStringLiteral("code"), code}, {QStringLiteral("replay"), false}});  // a restore need not wait for it
    QCOMPARE(stream->status(), 200);
    QVERIFY(stream->contentType().startsWith("text/event-stream"));
    QString output;
    while (!output.contains(QLatin1String("waiting"))) {
        const std::optional<ApiClient::Event> event = stream->next(30000);
        QVERIFY2(event, "the first line did not come through before the run ended");
        if (event->type == "stream")
            output += event->json().value(QStringLiteral("text")).toString();
    }
    QCOMPARE(router().request("PUT", prefix + QStringLiteral("/files/content?path=go"), "go").status, 201);
    QString status;
    while (const std::optional<ApiClient::Event> event = stream->next(60000)) {
        if (event->type == "stream")
            output += event->json().value(QStringLiteral("text")).toString();
        if (event->type == "done")
            status = event->json().value(QStringLiteral("status")).toString();
    }
    QCOMPARE(status, QStringLiteral("ok"));
    QCOMPARE(output, QStringLiteral("waiting\nslept\n"));
}

void tst_ScaleOut::aKilledInstanceFailsOnlyItsOwnWorkspaces()
{
    Instance *victim = instanceNamed(m_owner.value(workspaceName(0)));
    QVERIFY(victim);
    const qint64 pid = victim->process->pid();
    QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
    victim->process->stop();
    for (auto it = m_owner.cbegin(); it != m_owner.cend(); ++it) {
        const ApiClient::Response response = router().get(QStringLiteral("/v1/workspaces/") + it.key());
        if (it.value() == victim->id.toUtf8()) {
            QCOMPARE(response.status, 503);
            QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("unavailable"));
        } else {
            QCOMPARE(response.status, 200);
            QCOMPARE(instanceOf(response), it.value());
        }
    }
}

void tst_ScaleOut::aRestartedInstanceRestoresItsContexts()
{
    Instance *victim = instanceNamed(m_owner.value(workspaceName(0)));
    QVERIFY(victim);
    QVERIFY(startInstance(*victim));
    int restored = 0;
    for (auto it = m_owner.cbegin(); it != m_owner.cend(); ++it) {
        if (it.value() != victim->id.toUtf8())
            continue;
        const QString name = it.key();
        const ApiClient::Response run = router().post(
                QStringLiteral("/v1/workspaces/%1/contexts/%2/executions?wait=true").arg(name, m_context.value(name)),
                {{QStringLiteral("code"), QStringLiteral("print(x)")}});
        QVERIFY2(run.status == 200, run.body.constData());
        QCOMPARE(instanceOf(run), it.value());
        QCOMPARE(stdoutOf(run.object()), QStringLiteral("%1\n").arg(name.mid(2).toInt()));
        QVERIFY2(ApiClient::hasEvent(run.object(), QStringLiteral("restored")), run.body.constData());
        ++restored;
    }
    QVERIFY(restored > 0);
}

void tst_ScaleOut::aFourthInstanceAndRebalanceMoveWorkspacesWithTheirState()
{
    Instance fourth;
    fourth.id = QStringLiteral("replhost-3");
    fourth.dataDir = m_root.filePath(fourth.id);
    m_instances.push_back(std::move(fourth));
    QVERIFY(startInstance(m_instances.back()));
    stopRouter();
    QVERIFY2(startRouter(), "nginx did not start with four instances");

    QStringList arguments{QStringLiteral("--router"), QStringLiteral("http://127.0.0.1:%1").arg(m_routerPort),
                          QStringLiteral("--token-file"), m_tokenFile,
                          QStringLiteral("--cli"), QStringLiteral(REPLHOST_CLI_EXECUTABLE)};
    for (const Instance &instance : m_instances)
        arguments << QStringLiteral("--instance") << QStringLiteral("http://127.0.0.1:%1").arg(instance.port);
    QProcess rebalance;
    rebalance.start(QStringLiteral(REPLHOST_SOURCE_DIR "/packaging/kubernetes/rebalance"), arguments);
    QVERIFY(rebalance.waitForFinished(120000));
    const QString out = QString::fromUtf8(rebalance.readAllStandardOutput());
    QVERIFY2(rebalance.exitCode() == 0, qPrintable(out + QString::fromUtf8(rebalance.readAllStandardError())));

    // "ws07: replhost-1 -> replhost-3"
    static const QRegularExpression movedLine(QStringLiteral("^(ws\\d+): (\\S+) -> (\\S+)$"),
                                              QRegularExpression::MultilineOption);
    QStringList moved;
    for (auto match = movedLine.globalMatch(out); match.hasNext();) {
        const QRegularExpressionMatch line = match.next();
        QCOMPARE(line.captured(2).toUtf8(), m_owner.value(line.captured(1)));
        // Consistent hashing: a new instance takes workspaces, the others keep theirs.
        QCOMPARE(line.captured(3), QStringLiteral("replhost-3"));
        moved.append(line.captured(1));
    }
    QVERIFY2(!moved.isEmpty(), qPrintable(out));

    for (int i = 0; i < kWorkspaces; ++i) {
        const QString name = workspaceName(i);
        const QByteArray owner = moved.contains(name) ? QByteArrayLiteral("replhost-3") : m_owner.value(name);
        const QString prefix = QStringLiteral("/v1/workspaces/") + name;
        const ApiClient::Response run = router().post(
                prefix + QStringLiteral("/contexts/%1/executions?wait=true").arg(m_context.value(name)),
                {{QStringLiteral("code"), QStringLiteral("print(x)")}});
        QVERIFY2(run.status == 200, run.body.constData());
        QCOMPARE(instanceOf(run), owner);
        QCOMPARE(stdoutOf(run.object()), QStringLiteral("%1\n").arg(i));
        const ApiClient::Response note = router().get(prefix + QStringLiteral("/files/content?path=note.txt"));
        QCOMPARE(note.status, 200);
        QCOMPARE(note.body, QStringLiteral("note %1").arg(i).toUtf8());
        if (moved.contains(name))
            QCOMPARE(direct(*instanceNamed(m_owner.value(name))).get(prefix).status, 404);
    }
}

QTEST_GUILESS_MAIN(tst_ScaleOut)
#include "tst_scaleout.moc"
