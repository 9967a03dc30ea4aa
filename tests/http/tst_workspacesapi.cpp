// SPDX-License-Identifier: Apache-2.0
// Workspaces over HTTP: create (with and without a directory), list, get, and delete with their
// contexts, keeping or purging the files; their settings, and the limits the engine enforces
// from them. A real replhost-server and a Poco client.

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

    void workspaceShowsItsEffectiveSettings();
    void createWithBadSettingsIs400NamingTheField_data();
    void createWithBadSettingsIs400NamingTheField();
    void patchMergesSettings();
    void patchWithBadInputIs400_data();
    void patchWithBadInputIs400();
    void patchOfUnknownWorkspaceIs404();
    void contextBeyondMaxContextsIs409();
    void workspaceOutputCapTruncatesExecutions();
    void serverDefaultsApplyToEveryWorkspace();

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

void tst_WorkspacesApi::workspaceShowsItsEffectiveSettings()
{
    const QJsonObject given{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("max_contexts"), 5}}},
                            {QStringLiteral("network"), false}};
    const auto created = client().post(QStringLiteral("/v1/workspaces"),
                                       {{QStringLiteral("name"), QStringLiteral("configured")},
                                        {QStringLiteral("settings"), given}});
    QCOMPARE(created.status, 201);
    const QJsonObject settings = created.object().value(QStringLiteral("settings")).toObject();
    const QJsonObject limits = settings.value(QStringLiteral("limits")).toObject();
    QCOMPARE(limits.value(QStringLiteral("max_contexts")).toInt(), 5);
    // What was not given has the server's default.
    QCOMPARE(limits.value(QStringLiteral("output_bytes")).toInteger(), 16 * 1024 * 1024);
    QCOMPARE(limits.value(QStringLiteral("timeout_ms")).toInt(), 0);
    QCOMPARE(settings.value(QStringLiteral("isolation")).toString(), QStringLiteral("none"));
    QCOMPARE(settings.value(QStringLiteral("network")).toBool(true), false);

    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/configured")).object(), created.object());
    for (const QJsonValue &workspace : client().get(QStringLiteral("/v1/workspaces")).array()) {
        if (workspace.toObject().value(QStringLiteral("name")) == QLatin1String("default"))
            QCOMPARE(workspace.toObject().value(QStringLiteral("settings")).toObject()
                             .value(QStringLiteral("limits")).toObject()
                             .value(QStringLiteral("max_contexts")).toInt(), 64);
    }
}

void tst_WorkspacesApi::createWithBadSettingsIs400NamingTheField_data()
{
    QTest::addColumn<QJsonValue>("settings");
    QTest::addColumn<QString>("named");

    QTest::newRow("not an object") << QJsonValue(3) << "'settings'";
    QTest::newRow("negative limit")
            << QJsonValue(QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("timeout_ms"), -5}}}})
            << "limits.timeout_ms";
    QTest::newRow("unknown limit")
            << QJsonValue(QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("memory"), 5}}}})
            << "limits.memory";
    QTest::newRow("bad isolation")
            << QJsonValue(QJsonObject{{QStringLiteral("isolation"), QStringLiteral("vm")}})
            << "isolation";
}

void tst_WorkspacesApi::createWithBadSettingsIs400NamingTheField()
{
    QFETCH(QJsonValue, settings);
    QFETCH(QString, named);
    const auto refused = client().post(QStringLiteral("/v1/workspaces"),
                                       {{QStringLiteral("name"), QStringLiteral("refused")},
                                        {QStringLiteral("settings"), settings}});
    QCOMPARE(refused.status, 400);
    const QString message = refused.object().value(QStringLiteral("message")).toString();
    QVERIFY2(message.contains(named), qPrintable(message));
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/refused")).status, 404);
}

void tst_WorkspacesApi::patchMergesSettings()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("patched")},
                            {QStringLiteral("settings"),
                             QJsonObject{{QStringLiteral("limits"),
                                          QJsonObject{{QStringLiteral("max_contexts"), 3}}}}}})
                     .status,
             201);
    auto limitsOf = [](const ApiClient::Response &response) {
        return response.object().value(QStringLiteral("settings")).toObject()
                .value(QStringLiteral("limits")).toObject();
    };

    const auto patched = client().patch(
            QStringLiteral("/v1/workspaces/patched"),
            {{QStringLiteral("settings"),
              QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("timeout_ms"), 2000}}},
                          {QStringLiteral("isolation"), QStringLiteral("sandbox")}}}});
    QCOMPARE(patched.status, 200);
    QCOMPARE(limitsOf(patched).value(QStringLiteral("max_contexts")).toInt(), 3);  // kept
    QCOMPARE(limitsOf(patched).value(QStringLiteral("timeout_ms")).toInt(), 2000);
    QCOMPARE(patched.object().value(QStringLiteral("settings")).toObject()
                     .value(QStringLiteral("isolation")).toString(),
             QStringLiteral("sandbox"));
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/patched")).object(), patched.object());

    // null gives a field back to the server's default.
    const auto reset = client().patch(
            QStringLiteral("/v1/workspaces/patched"),
            {{QStringLiteral("settings"),
              QJsonObject{{QStringLiteral("limits"), QJsonObject{{QStringLiteral("max_contexts"), QJsonValue()}}},
                          {QStringLiteral("isolation"), QJsonValue()}}}});
    QCOMPARE(reset.status, 200);
    QCOMPARE(limitsOf(reset).value(QStringLiteral("max_contexts")).toInt(), 64);
    QCOMPARE(limitsOf(reset).value(QStringLiteral("timeout_ms")).toInt(), 2000);
    QCOMPARE(reset.object().value(QStringLiteral("settings")).toObject()
                     .value(QStringLiteral("isolation")).toString(),
             QStringLiteral("none"));
}

void tst_WorkspacesApi::patchWithBadInputIs400_data()
{
    QTest::addColumn<QJsonObject>("body");
    QTest::addColumn<QString>("named");

    QTest::newRow("no settings") << QJsonObject() << "'settings'";
    QTest::newRow("settings not an object")
            << QJsonObject{{QStringLiteral("settings"), QStringLiteral("tight")}} << "'settings'";
    QTest::newRow("another field")
            << QJsonObject{{QStringLiteral("name"), QStringLiteral("renamed")}} << "\"name\"";
    QTest::newRow("limit out of range")
            << QJsonObject{{QStringLiteral("settings"),
                            QJsonObject{{QStringLiteral("limits"),
                                         QJsonObject{{QStringLiteral("max_contexts"), 1000000}}}}}}
            << "limits.max_contexts";
    QTest::newRow("network not a boolean")
            << QJsonObject{{QStringLiteral("settings"), QJsonObject{{QStringLiteral("network"), 1}}}}
            << "network";
}

void tst_WorkspacesApi::patchWithBadInputIs400()
{
    QFETCH(QJsonObject, body);
    QFETCH(QString, named);
    const QJsonObject before = client().get(QStringLiteral("/v1/workspaces/default")).object();
    const auto refused = client().patch(QStringLiteral("/v1/workspaces/default"), body);
    QCOMPARE(refused.status, 400);
    const QString message = refused.object().value(QStringLiteral("message")).toString();
    QVERIFY2(message.contains(named), qPrintable(message));
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/default")).object(), before);
}

void tst_WorkspacesApi::patchOfUnknownWorkspaceIs404()
{
    const auto missing = client().patch(QStringLiteral("/v1/workspaces/never-made"),
                                        {{QStringLiteral("settings"), QJsonObject()}});
    QCOMPARE(missing.status, 404);
    QVERIFY(missing.object().value(QStringLiteral("message")).toString().contains(
            QStringLiteral("never-made")));
}

void tst_WorkspacesApi::contextBeyondMaxContextsIs409()
{
    const QString bystander = client().createContext(QStringLiteral("plain"));
    QVERIFY(!bystander.isEmpty());
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("single")},
                            {QStringLiteral("settings"),
                             QJsonObject{{QStringLiteral("limits"),
                                          QJsonObject{{QStringLiteral("max_contexts"), 1}}}}}})
                     .status,
             201);
    const QString prefix = QStringLiteral("/v1/workspaces/single");
    QVERIFY(!client().createContext(QStringLiteral("plain"), prefix).isEmpty());

    const auto refused = client().post(prefix + QStringLiteral("/contexts"),
                                       {{QStringLiteral("language"), QStringLiteral("plain")}});
    QCOMPARE(refused.status, 409);
    QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("limit_reached"));
    QVERIFY2(refused.object().value(QStringLiteral("message")).toString().contains(
                     QStringLiteral("limits.max_contexts = 1")),
             refused.body.constData());
    QCOMPARE(client().get(prefix + QStringLiteral("/contexts")).array().size(), 1);

    // The server goes on serving the other workspace.
    QCOMPARE(client().runAndWait(bystander, QStringLiteral("still here"))
                     .value(QStringLiteral("stdout")).toString(),
             QStringLiteral("still here"));

    // Raising the limit makes room.
    QCOMPARE(client().patch(prefix, {{QStringLiteral("settings"),
                                      QJsonObject{{QStringLiteral("limits"),
                                                   QJsonObject{{QStringLiteral("max_contexts"), 2}}}}}})
                     .status,
             200);
    QVERIFY(!client().createContext(QStringLiteral("plain"), prefix).isEmpty());
}

void tst_WorkspacesApi::workspaceOutputCapTruncatesExecutions()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("terse")},
                            {QStringLiteral("settings"),
                             QJsonObject{{QStringLiteral("limits"),
                                          QJsonObject{{QStringLiteral("output_bytes"), 100}}}}}})
                     .status,
             201);
    const QString prefix = QStringLiteral("/v1/workspaces/terse");
    const QString id = client().createContext(QStringLiteral("plain"), prefix);
    QVERIFY(!id.isEmpty());
    const QJsonObject run = client().runAndWait(id, QString(300, QLatin1Char('x')), {}, prefix);
    QCOMPARE(run.value(QStringLiteral("stdout")).toString(), QString(100, QLatin1Char('x')));
    QJsonObject truncated;
    for (const QJsonValue &event : run.value(QStringLiteral("events")).toArray()) {
        if (event.toObject().value(QStringLiteral("type")) == QLatin1String("truncated"))
            truncated = event.toObject();
    }
    QCOMPARE(truncated.value(QStringLiteral("limit")).toString(), QStringLiteral("output_bytes"));
    QCOMPARE(truncated.value(QStringLiteral("limit_value")).toInteger(), 100);
}

void tst_WorkspacesApi::serverDefaultsApplyToEveryWorkspace()
{
    ServerProcess tight;
    QVERIFY2(tight.start({QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR),
                          QStringLiteral("--workspace-defaults"),
                          QStringLiteral(R"({"limits":{"max_contexts":1,"output_bytes":4096}})"),
                          QStringLiteral("--max-output"), QStringLiteral("2K")}),
             qPrintable(tight.error()));
    ApiClient api(tight.port(), tight.token());
    const QJsonObject limits = api.get(QStringLiteral("/v1/workspaces/default")).object()
                                       .value(QStringLiteral("settings")).toObject()
                                       .value(QStringLiteral("limits")).toObject();
    QCOMPARE(limits.value(QStringLiteral("max_contexts")).toInt(), 1);
    QCOMPARE(limits.value(QStringLiteral("output_bytes")).toInteger(), 2048);  // --max-output wins
    QVERIFY(!api.createContext(QStringLiteral("plain")).isEmpty());
    QCOMPARE(api.post(QStringLiteral("/v1/contexts"), {{QStringLiteral("language"), QStringLiteral("plain")}})
                     .status,
             409);

    // Bad defaults stop the server at start-up, naming the field.
    const auto bad = ServerProcess::runOnce({QStringLiteral("--workspace-defaults"),
                                             QStringLiteral(R"({"limits":{"timeout_ms":"soon"}})")});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.contains("limits.timeout_ms"), bad.err.constData());
    QCOMPARE(ServerProcess::runOnce({QStringLiteral("--workspace-defaults"), QStringLiteral("[]")}).exitCode, 2);
}

QTEST_GUILESS_MAIN(tst_WorkspacesApi)
#include "tst_workspacesapi.moc"
