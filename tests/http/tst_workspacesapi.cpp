// SPDX-License-Identifier: Apache-2.0
// Workspaces over HTTP: create (with and without a directory), list, get, and delete with their
// contexts, keeping or purging the files. A real replhost-server and a Poco client.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

class tst_WorkspacesApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void createListGetDelete();
    void createWithADirectory();
    void createRejectsBadNames_data();
    void createRejectsBadNames();
    void relativeDirectoryIs400();
    void duplicateNameIs409();
    void deleteStopsItsContextsAndKeepsFiles();
    void deleteAbortsARunningExecution();
    void purgeDeletesTheFiles();
    void purgeRefusesTheDataDirectory();
    void defaultWorkspaceCannotBeDeleted();
    void unknownWorkspaceIs404();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    bool listed(const QString &name) const;

    ServerProcess m_server;
    QTemporaryDir m_scratch;
};

void tst_WorkspacesApi::initTestCase()
{
    QVERIFY(m_scratch.isValid());
    QVERIFY2(m_server.start({QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR)}),
             qPrintable(m_server.error()));
}

bool tst_WorkspacesApi::listed(const QString &name) const
{
    for (const QJsonValue &workspace : client().get(QStringLiteral("/v1/workspaces")).array()) {
        if (workspace.toObject().value(QStringLiteral("name")).toString() == name)
            return true;
    }
    return false;
}

void tst_WorkspacesApi::createListGetDelete()
{
    const auto created = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("alpha")}});
    QCOMPARE(created.status, 201);
    const QJsonObject workspace = created.object();
    QCOMPARE(workspace.value(QStringLiteral("name")).toString(), QStringLiteral("alpha"));
    QVERIFY(!workspace.value(QStringLiteral("id")).toString().isEmpty());
    QVERIFY(!workspace.value(QStringLiteral("created_at")).toString().isEmpty());
    const QString directory = workspace.value(QStringLiteral("directory")).toString();
    QVERIFY(QFileInfo(directory).isDir());
    QVERIFY(directory.endsWith(QStringLiteral("/workspaces/alpha")));

    QVERIFY(listed(QStringLiteral("alpha")));
    QVERIFY(listed(QStringLiteral("default")));
    const auto got = client().get(QStringLiteral("/v1/workspaces/alpha"));
    QCOMPARE(got.status, 200);
    QCOMPARE(got.object(), workspace);

    const auto deleted = client().del(QStringLiteral("/v1/workspaces/alpha"));
    QCOMPARE(deleted.status, 204);
    QVERIFY(deleted.body.isEmpty());
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/alpha")).status, 404);
    QVERIFY(!listed(QStringLiteral("alpha")));
    QVERIFY(QFileInfo(directory).isDir());  // files are kept by default

    // The name is free again, and the old directory is reused.
    const auto again = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("alpha")}});
    QCOMPARE(again.status, 201);
    QCOMPARE(again.object().value(QStringLiteral("directory")).toString(), directory);
    QVERIFY(again.object().value(QStringLiteral("id")) != workspace.value(QStringLiteral("id")));
}

void tst_WorkspacesApi::createWithADirectory()
{
    const QString directory = m_scratch.filePath(QStringLiteral("project/nested"));
    const auto created = client().post(QStringLiteral("/v1/workspaces"),
                                       {{QStringLiteral("name"), QStringLiteral("project")},
                                        {QStringLiteral("directory"), directory}});
    QCOMPARE(created.status, 201);
    QCOMPARE(created.object().value(QStringLiteral("directory")).toString(), QFileInfo(directory).canonicalFilePath());
    QVERIFY(QFileInfo(directory).isDir());

    // Contexts created there start in that directory.
    const auto context = client().post(QStringLiteral("/v1/workspaces/project/contexts"),
                                       {{QStringLiteral("language"), QStringLiteral("plain")}});
    QCOMPARE(context.status, 201);
    QCOMPARE(context.object().value(QStringLiteral("cwd")).toString(), QFileInfo(directory).canonicalFilePath());
}

void tst_WorkspacesApi::createRejectsBadNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << "";
    QTest::newRow("dot first") << ".hidden";
    QTest::newRow("slash") << "a/b";
    QTest::newRow("dot dot") << "..";
    QTest::newRow("space") << "a b";
    QTest::newRow("too long") << QString(65, QLatin1Char('a'));
}

void tst_WorkspacesApi::createRejectsBadNames()
{
    QFETCH(QString, name);
    const auto response = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), name}});
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
}

void tst_WorkspacesApi::relativeDirectoryIs400()
{
    const auto response = client().post(QStringLiteral("/v1/workspaces"),
                                        {{QStringLiteral("name"), QStringLiteral("relative")},
                                         {QStringLiteral("directory"), QStringLiteral("some/where")}});
    QCOMPARE(response.status, 400);
    QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("absolute")));
}

void tst_WorkspacesApi::duplicateNameIs409()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("twice")}}).status, 201);
    const auto second = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("twice")}});
    QCOMPARE(second.status, 409);
    QCOMPARE(second.object().value(QStringLiteral("code")).toString(), QStringLiteral("conflict"));
}

void tst_WorkspacesApi::deleteStopsItsContextsAndKeepsFiles()
{
    const auto created = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("busy")}});
    QCOMPARE(created.status, 201);
    const QString directory = created.object().value(QStringLiteral("directory")).toString();
    QFile file(QDir(directory).filePath(QStringLiteral("notes.txt")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("keep me");
    file.close();

    const QString first = client().createContext(QStringLiteral("plain"), QStringLiteral("/v1/workspaces/busy"));
    const QString second = client().createContext(QStringLiteral("plain"), QStringLiteral("/v1/workspaces/busy"));
    QVERIFY(!first.isEmpty() && !second.isEmpty());
    const QJsonObject run = client().runAndWait(first, QStringLiteral("hello"), {}, QStringLiteral("/v1/workspaces/busy"));
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));

    // A context in another workspace is not touched.
    const QString bystander = client().createContext(QStringLiteral("plain"));

    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/busy")).status, 204);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/busy/contexts/") + first).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/busy/contexts")).status, 404);
    // Its history went with it.
    QCOMPARE(client().get(QStringLiteral("/v1/executions/") + run.value(QStringLiteral("id")).toString()).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/") + bystander).status, 200);
    QVERIFY(QFile::exists(file.fileName()));
}

void tst_WorkspacesApi::deleteAbortsARunningExecution()
{
    const QString why = client().missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("running")}}).status, 201);
    const QString id = client().createContext(QStringLiteral("python"), QStringLiteral("/v1/workspaces/running"));
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/workspaces/running/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("import time\ntime.sleep(60)")}});
    QVERIFY(stream->next(10000));  // execution
    QVERIFY(stream->next(10000));  // started
    const QString pid = QString::number(client().get(QStringLiteral("/v1/workspaces/running/contexts/") + id)
                                                .object().value(QStringLiteral("pid")).toInteger());

    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/running")).status, 204);
    QJsonObject done;
    while (std::optional<ApiClient::Event> event = stream->next(10000)) {
        if (event->type == "done")
            done = event->json();
    }
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("aborted"));
    // The worker is gone with its workspace.
    QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/") + pid) || pid == QLatin1String("0"), 10000);
}

void tst_WorkspacesApi::purgeDeletesTheFiles()
{
    const QString directory = m_scratch.filePath(QStringLiteral("purged"));
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("purged")}, {QStringLiteral("directory"), directory}})
                     .status,
             201);
    QVERIFY(QDir(directory).mkpath(QStringLiteral("sub/deeper")));
    QFile file(QDir(directory).filePath(QStringLiteral("sub/deeper/data.bin")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    // A symlink out of the workspace is removed, not followed.
    const QString outside = m_scratch.filePath(QStringLiteral("outside-target"));
    QVERIFY(QDir().mkpath(outside));
    QFile precious(QDir(outside).filePath(QStringLiteral("precious.txt")));
    QVERIFY(precious.open(QIODevice::WriteOnly));
    precious.close();
    QVERIFY(QFile::link(outside, QDir(directory).filePath(QStringLiteral("link-out"))));

    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/purged?purge=true")).status, 204);
    QVERIFY(!QFileInfo::exists(directory));
    QVERIFY(QFile::exists(precious.fileName()));
}

void tst_WorkspacesApi::purgeRefusesTheDataDirectory()
{
    // A workspace over the directory that holds the server's data directory.
    const QString parent = QFileInfo(m_server.dataDir()).absolutePath();
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("dangerous")}, {QStringLiteral("directory"), parent}})
                     .status,
             201);
    const auto refused = client().del(QStringLiteral("/v1/workspaces/dangerous?purge=true"));
    QCOMPARE(refused.status, 403);
    QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
    QVERIFY(QFileInfo(m_server.dataDir()).isDir());
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/dangerous")).status, 200);  // nothing was deleted
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/dangerous")).status, 204);
    QVERIFY(QFileInfo(m_server.dataDir()).isDir());
    QCOMPARE(client().get(QStringLiteral("/healthz")).status, 200);
}

void tst_WorkspacesApi::defaultWorkspaceCannotBeDeleted()
{
    const auto response = client().del(QStringLiteral("/v1/workspaces/default"));
    QCOMPARE(response.status, 409);
    QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("default")));
    QVERIFY(listed(QStringLiteral("default")));
}

void tst_WorkspacesApi::unknownWorkspaceIs404()
{
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/never-made")).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/never-made")).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/never-made/env")).status, 404);
}

QTEST_GUILESS_MAIN(tst_WorkspacesApi)
#include "tst_workspacesapi.moc"
