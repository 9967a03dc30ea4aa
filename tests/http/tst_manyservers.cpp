// SPDX-License-Identifier: Apache-2.0
// What one server does so that many can stand behind a router (docs/architecture.md, "Many
// servers"): it names itself on every answer, shares a token read from a file, acts on the
// workspace the X-Replhost-Workspace field names and refuses a request whose field and path
// disagree, takes the router's id for an OpenSandbox create, serves E2B per workspace, and moves
// a workspace to another server as an archive. Real replhost-server processes and a Poco client.

#include "apiclient.h"
#include "serverprocess.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

Headers routedTo(const QByteArray &workspace)
{
    return {{"X-Replhost-Workspace", workspace}};
}

} // namespace

class tst_ManyServers : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void everyAnswerNamesTheInstance();
    void theInstanceIsTheHostNameByDefault();
    void aTokenFileIsTheOnlyToken();
    void anUnusableTokenFileStopsTheStart();
    void aShortFormRouteActsOnTheWorkspaceTheFieldNames();
    void aFieldThatDisagreesWithThePathIsMisdirected();
    void aCreateWhoseNameDisagreesWithTheFieldIsMisdirected();
    void anOpenSandboxCreateTakesTheIdItWasPlacedBy();
    void e2bRoutesOfANamedWorkspaceActOnIt();
    void anArchiveMovesAWorkspaceWithItsState();
    void anImportNeverReplacesAWorkspace();
    void aBodyThatIsNotAnArchiveLeavesNothingBehind();

private:
    ApiClient first() const { return ApiClient(m_first.port(), m_token); }
    ApiClient second() const { return ApiClient(m_second.port(), m_token); }

    QTemporaryDir m_scratch;
    QString m_tokenFile;
    QByteArray m_token = QByteArrayLiteral("one-token-for-every-instance");
    ServerProcess m_first;
    ServerProcess m_second;
};

void tst_ManyServers::initTestCase()
{
    QVERIFY(m_scratch.isValid());
    m_tokenFile = m_scratch.filePath(QStringLiteral("token"));
    QFile token(m_tokenFile);
    QVERIFY(token.open(QIODevice::WriteOnly));
    token.write("  " + m_token + "\n");  // white space around it is not part of it
    token.close();
    QVERIFY2(m_first.start({QStringLiteral("--token-file"), m_tokenFile, QStringLiteral("--instance-id"),
                            QStringLiteral("first")}),
             qPrintable(m_first.error()));
    QVERIFY2(m_second.start({QStringLiteral("--token-file"), m_tokenFile, QStringLiteral("--instance-id"),
                             QStringLiteral("second")}),
             qPrintable(m_second.error()));
}

void tst_ManyServers::everyAnswerNamesTheInstance()
{
    QCOMPARE(first().get(QStringLiteral("/healthz")).header("X-Replhost-Instance"), QByteArray("first"));
    QCOMPARE(second().get(QStringLiteral("/v1/info")).header("X-Replhost-Instance"), QByteArray("second"));
    const ApiClient::Response missing = first().get(QStringLiteral("/v1/workspaces/none"));
    QCOMPARE(missing.status, 404);
    QCOMPARE(missing.header("X-Replhost-Instance"), QByteArray("first"));
    // Refused from its head, before any route runs.
    const ApiClient::Response refused = first().request("GET", QStringLiteral("/v1/info"), {}, {}, false);
    QCOMPARE(refused.status, 401);
    QCOMPARE(refused.header("X-Replhost-Instance"), QByteArray("first"));
}

void tst_ManyServers::theInstanceIsTheHostNameByDefault()
{
    ServerProcess server;
    QVERIFY2(server.start(), qPrintable(server.error()));
    QCOMPARE(ApiClient(server.port(), server.token()).get(QStringLiteral("/healthz")).header("X-Replhost-Instance"),
             QSysInfo::machineHostName().toUtf8());
}

void tst_ManyServers::aTokenFileIsTheOnlyToken()
{
    QCOMPARE(first().get(QStringLiteral("/v1/info")).status, 200);
    QCOMPARE(second().get(QStringLiteral("/v1/info")).status, 200);
    QCOMPARE(ApiClient(m_first.port(), "another-token-of-some-length").get(QStringLiteral("/v1/info")).status, 401);
    // The data directory's own token is neither used nor made.
    QVERIFY(!QFile::exists(m_first.dataDir() + QStringLiteral("/token")));
}

void tst_ManyServers::anUnusableTokenFileStopsTheStart()
{
    const ServerProcess::Run missing = ServerProcess::runOnce(
            {QStringLiteral("--data-dir"), m_scratch.filePath(QStringLiteral("missing")), QStringLiteral("--port"),
             QStringLiteral("0"), QStringLiteral("--token-file"), m_scratch.filePath(QStringLiteral("no-such-file"))});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("no-such-file"), missing.err.constData());
    QFile shortToken(m_scratch.filePath(QStringLiteral("short")));
    QVERIFY(shortToken.open(QIODevice::WriteOnly));
    shortToken.write("short\n");
    shortToken.close();
    const ServerProcess::Run tooShort = ServerProcess::runOnce(
            {QStringLiteral("--data-dir"), m_scratch.filePath(QStringLiteral("short-data")), QStringLiteral("--port"),
             QStringLiteral("0"), QStringLiteral("--token-file"), shortToken.fileName()});
    QCOMPARE(tooShort.exitCode, 1);
    QVERIFY2(tooShort.err.contains("16 to 4096"), tooShort.err.constData());
}

void tst_ManyServers::aShortFormRouteActsOnTheWorkspaceTheFieldNames()
{
    QCOMPARE(first().request("POST", QStringLiteral("/v1/workspaces"), compact({{QStringLiteral("name"), QStringLiteral("routed")}}),
                             routedTo("routed")).status,
             201);
    const QString id = first().createContext(QStringLiteral("bash"), QStringLiteral("/v1/workspaces/routed"));
    QVERIFY(!id.isEmpty());
    const ApiClient::Response withField = first().request("GET", QStringLiteral("/v1/contexts/") + id, {}, routedTo("routed"));
    QCOMPARE(withField.status, 200);
    QCOMPARE(withField.object().value(QStringLiteral("workspace")).toString(), QStringLiteral("routed"));
    // Without it the short form is the default workspace's, which has no such context.
    QCOMPARE(first().get(QStringLiteral("/v1/contexts/") + id).status, 404);
    const ApiClient::Response run = first().request(
            "POST", QStringLiteral("/v1/contexts/%1/executions?wait=true").arg(id),
            compact({{QStringLiteral("code"), QStringLiteral("echo here")}}), routedTo("routed"));
    QCOMPARE(run.status, 200);
    QCOMPARE(run.object().value(QStringLiteral("stdout")).toString(), QStringLiteral("here\n"));
}

void tst_ManyServers::aFieldThatDisagreesWithThePathIsMisdirected()
{
    const ApiClient::Response crossed = first().request("GET", QStringLiteral("/v1/workspaces/routed/contexts"), {},
                                                        routedTo("elsewhere"));
    QCOMPARE(crossed.status, 421);
    QCOMPARE(crossed.object().value(QStringLiteral("code")).toString(), QStringLiteral("misdirected"));
    QCOMPARE(first().request("GET", QStringLiteral("/v1/workspaces/routed/contexts"), {}, routedTo("routed")).status, 200);
    // An OpenSandbox sandbox is a workspace: its id in the path is its name.
    QCOMPARE(first().request("GET", QStringLiteral("/opensandbox/v1/sandboxes/routed"), {}, routedTo("elsewhere")).status, 421);
}

void tst_ManyServers::aCreateWhoseNameDisagreesWithTheFieldIsMisdirected()
{
    const ApiClient::Response created = first().request(
            "POST", QStringLiteral("/v1/workspaces"), compact({{QStringLiteral("name"), QStringLiteral("mine")}}), routedTo("default"));
    QCOMPARE(created.status, 421);
    QVERIFY(created.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("X-Replhost-Workspace: mine")));
    QCOMPARE(first().get(QStringLiteral("/v1/workspaces/mine")).status, 404);
}

void tst_ManyServers::anOpenSandboxCreateTakesTheIdItWasPlacedBy()
{
    const QJsonObject body{{QStringLiteral("image"), QJsonObject{{QStringLiteral("uri"), QStringLiteral("python:3.11")}}},
                           {QStringLiteral("entrypoint"), QJsonArray{QStringLiteral("sleep"), QStringLiteral("infinity")}},
                           {QStringLiteral("extensions"), QJsonObject{{QStringLiteral("replhost.isolation"), QStringLiteral("none")}}}};
    const QByteArray id = "0123456789abcdef0123456789abcdef";
    const ApiClient::Response created = first().request("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body), routedTo(id));
    QVERIFY2(created.status == 202, created.body.constData());
    QCOMPARE(created.object().value(QStringLiteral("id")).toString().toUtf8(), id);
    QCOMPARE(first().get(QStringLiteral("/v1/workspaces/") + QString::fromUtf8(id)).status, 200);
    // Without the field the server makes one up, as without a router.
    const ApiClient::Response unplaced = first().request("POST", QStringLiteral("/opensandbox/v1/sandboxes"), compact(body));
    QCOMPARE(unplaced.status, 202);
    QVERIFY(unplaced.object().value(QStringLiteral("id")).toString().toUtf8() != id);
}

void tst_ManyServers::e2bRoutesOfANamedWorkspaceActOnIt()
{
    QCOMPARE(first().request("PUT", QStringLiteral("/v1/workspaces/routed/files/content?path=e2b.txt"), "named").status, 201);
    const QString base = QStringLiteral("/e2b/%1/workspaces/routed").arg(QString::fromUtf8(m_token));
    const ApiClient::Response file = first().get(base + QStringLiteral("/files?path=e2b.txt"));
    QCOMPARE(file.status, 200);
    QCOMPARE(file.body, QByteArray("named"));
    const ApiClient::Response contexts = first().get(base + QStringLiteral("/contexts"));
    QCOMPARE(contexts.status, 200);
    // The workspace's own bash context, and the ones E2B's server starts with.
    QStringList languages;
    for (const QJsonValue &context : contexts.array())
        languages.append(context.toObject().value(QStringLiteral("language")).toString());
    QVERIFY2(languages.contains(QStringLiteral("bash")), qPrintable(languages.join(QLatin1Char(' '))));
    QCOMPARE(first().get(QStringLiteral("/e2b/%1/files?path=e2b.txt").arg(QString::fromUtf8(m_token))).status, 404);
}

void tst_ManyServers::anArchiveMovesAWorkspaceWithItsState()
{
    QCOMPARE(first().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("moving")}}).status, 201);
    const QString prefix = QStringLiteral("/v1/workspaces/moving");
    QCOMPARE(first().patch(prefix + QStringLiteral("/env"), {{QStringLiteral("set"), QJsonObject{{QStringLiteral("LAYER"), QStringLiteral("kept")}}}}).status, 200);
    const QString id = first().createContext(QStringLiteral("bash"), prefix);
    QVERIFY(!id.isEmpty());
    const QJsonObject made = first().runAndWait(id, QStringLiteral("mkdir -p sub && cd sub && V=7 && echo data > f.txt"), {}, prefix);
    QCOMPARE(made.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));

    const ApiClient::Response archive = first().get(prefix + QStringLiteral("/archive"));
    QCOMPARE(archive.status, 200);
    QCOMPARE(archive.header("Content-Type"), QByteArray("application/x-tar"));
    const ApiClient::Response imported = second().request("PUT", prefix + QStringLiteral("/archive"), archive.body);
    QVERIFY2(imported.status == 201, imported.body.constData());
    QCOMPARE(imported.object().value(QStringLiteral("contexts")).toInt(), 1);

    // The same context, dormant: its first run restores it, variable, cwd and env layer.
    const ApiClient::Response context = second().get(prefix + QStringLiteral("/contexts/") + id);
    QCOMPARE(context.status, 200);
    QCOMPARE(context.object().value(QStringLiteral("state")).toString(), QStringLiteral("dormant"));
    const QJsonObject run = second().runAndWait(id, QStringLiteral("echo $V $LAYER $(basename $PWD) $(cat f.txt)"), {}, prefix);
    QCOMPARE(run.value(QStringLiteral("stdout")).toString(), QStringLiteral("7 kept sub data\n"));
    QVERIFY(ApiClient::hasEvent(run, QStringLiteral("restored")));
    const ApiClient::Response history = second().get(prefix + QStringLiteral("/contexts/%1/executions").arg(id));
    QCOMPARE(history.status, 200);
    QVERIFY(history.body.contains("echo data > f.txt"));
}

void tst_ManyServers::anImportNeverReplacesAWorkspace()
{
    const ApiClient::Response archive = first().get(QStringLiteral("/v1/workspaces/routed/archive"));
    QCOMPARE(archive.status, 200);
    QCOMPARE(first().request("PUT", QStringLiteral("/v1/workspaces/routed/archive"), archive.body).status, 409);
    // Under another name on the same server its context ids are taken: refused, nothing left.
    const ApiClient::Response renamed = first().request("PUT", QStringLiteral("/v1/workspaces/copy/archive"), archive.body);
    QCOMPARE(renamed.status, 409);
    QCOMPARE(first().get(QStringLiteral("/v1/workspaces/copy")).status, 404);
}

void tst_ManyServers::aBodyThatIsNotAnArchiveLeavesNothingBehind()
{
    const ApiClient::Response refused = second().request("PUT", QStringLiteral("/v1/workspaces/junk/archive"), "not a tar archive");
    QCOMPARE(refused.status, 400);
    QCOMPARE(second().get(QStringLiteral("/v1/workspaces/junk")).status, 404);
}

QTEST_GUILESS_MAIN(tst_ManyServers)
#include "tst_manyservers.moc"
