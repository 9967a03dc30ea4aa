// SPDX-License-Identifier: Apache-2.0
// A third party's view of the SDK: install replhost to a temporary prefix, copy the plugin
// template from it, build the template against that prefix alone, and run Lua through the
// installed server with the built plugin on REPLHOST_PLUGIN_PATH. Then `cmake --install` of the
// built plugin, into the SDK's prefix and into a ~/.local, each found by a server started with no
// plugin option or variable, which says where it found it. Also: a plugin built for another SDK
// major is listed by that server with its reason and provides no language.
#include "apiclient.h"
#include "commandrun.h"
#include "installedapp.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

class SdkTemplateTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_scratch;
    QString m_prefix;
    QString m_pluginBuild;
    ServerProcess m_server;
    std::unique_ptr<ApiClient> m_api;
    QString m_context;

    QJsonObject run(const QString &code) { return m_api->runAndWait(m_context, code); }

    // A server of the installed tree with no plugin option or variable: the lua plugin's entry
    // in its GET /v1/plugins, after checking that the plugin runs Lua there.
    QJsonObject luaFoundByAFreshServer(ServerProcess &server, QJsonObject &searchDirOfLua)
    {
        server.setExecutable(m_prefix + QStringLiteral("/bin/replhost-server"));
        if (!server.start({}, InstalledApp(m_prefix).isolatedEnvironment(m_scratch.path()))) {
            qWarning().noquote() << server.error();
            return {};
        }
        const ApiClient api(server.port(), server.token());
        const QJsonObject document = api.get(QStringLiteral("/v1/plugins")).object();
        QJsonObject lua;
        for (const QJsonValue &value : document.value(QLatin1String("plugins")).toArray()) {
            if (value.toObject().value(QLatin1String("id")).toString() == QLatin1String("lua"))
                lua = value.toObject();
        }
        for (const QJsonValue &value : document.value(QLatin1String("search_path")).toArray()) {
            if (value.toObject().value(QLatin1String("directory")) == lua.value(QLatin1String("directory")))
                searchDirOfLua = value.toObject();
        }
        const QString context = api.createContext(QStringLiteral("lua"));
        if (context.isEmpty() || ApiClient::resultText(api.runAndWait(context, QStringLiteral("6 * 7"))) != QLatin1String("42"))
            return {};
        return lua;
    }

    static QString canonical(const QString &path) { return QFileInfo(path).canonicalFilePath(); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_scratch.isValid());
        m_prefix = m_scratch.filePath(QStringLiteral("prefix"));
        const CommandRun install = InstalledApp::installBuildTree(m_prefix);
        QVERIFY2(install.succeeded(), qPrintable(install.describe()));

        // Copied out of the installed tree, as its README tells a plugin author to.
        const QString source = m_scratch.filePath(QStringLiteral("replhost-lua"));
        const CommandRun copy = CommandRun::run(
                QStringLiteral("cp"), {QStringLiteral("-r"), m_prefix + QStringLiteral("/share/replhost/sdk/template"), source});
        QVERIFY2(copy.succeeded(), qPrintable(copy.describe()));

        m_pluginBuild = m_scratch.filePath(QStringLiteral("replhost-lua-build"));
        // CMAKE_PREFIX_PATH is the only way to the SDK; the package registry is ignored.
        const CommandRun configure = CommandRun::run(
                QStringLiteral("cmake"), {QStringLiteral("-S"), source, QStringLiteral("-B"), m_pluginBuild,
                                          QStringLiteral("-G"), QStringLiteral("Ninja"),
                                          QStringLiteral("-DCMAKE_PREFIX_PATH=") + m_prefix,
                                          QStringLiteral("-DCMAKE_INSTALL_PREFIX=") + m_prefix,
                                          QStringLiteral("-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"),
                                          QStringLiteral("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"),
                                          QStringLiteral("-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")});
        QVERIFY2(configure.succeeded(), qPrintable(configure.describe()));
        const CommandRun build = CommandRun::run(QStringLiteral("cmake"), {QStringLiteral("--build"), m_pluginBuild});
        QVERIFY2(build.succeeded(), qPrintable(build.describe()));

        m_server.setExecutable(m_prefix + QStringLiteral("/bin/replhost-server"));
        QMap<QString, QString> env = InstalledApp(m_prefix).isolatedEnvironment(m_scratch.path());
        env.insert(QStringLiteral("REPLHOST_PLUGIN_PATH"), m_pluginBuild);
        QVERIFY2(m_server.start({}, env), qPrintable(m_server.error()));
        m_api = std::make_unique<ApiClient>(m_server.port(), m_server.token());
        const QString missing = m_api->missingLanguage(QStringLiteral("lua"));
        QVERIFY2(missing.isEmpty(), qPrintable(missing));
        m_context = m_api->createContext(QStringLiteral("lua"));
        QVERIFY(!m_context.isEmpty());
    }

    void templateIsBuiltFromTheInstalledSdkOnly()
    {
        QFile commands(m_pluginBuild + QStringLiteral("/compile_commands.json"));
        QVERIFY(commands.open(QIODevice::ReadOnly));
        const QJsonArray entries = QJsonDocument::fromJson(commands.readAll()).array();
        QVERIFY(!entries.isEmpty());
        bool sawSdkHeaders = false;
        for (const QJsonValue &entry : entries) {
            const QString command = entry.toObject().value(QLatin1String("command")).toString();
            QVERIFY2(!command.contains(QLatin1String(REPLHOST_SOURCE_DIR "/sdk")), qPrintable(command));
            sawSdkHeaders = sawSdkHeaders || command.contains(m_prefix + QStringLiteral("/include"));
        }
        QVERIFY(sawSdkHeaders);
        QVERIFY(QFileInfo::exists(m_pluginBuild + QStringLiteral("/replhost-lua.so")));
    }

    void pluginIsListedAsLoadedFromItsBuildDirectory()
    {
        const QJsonArray languages = m_api->get(QStringLiteral("/v1/languages")).array();
        QJsonObject lua;
        for (const QJsonValue &value : languages) {
            if (value.toObject().value(QLatin1String("id")).toString() == QLatin1String("lua"))
                lua = value.toObject();
        }
        QCOMPARE(lua.value(QLatin1String("state")).toString(), QStringLiteral("loaded"));
        // What the template's metadata declares (the SDK it is built with).
        QFile metadata(QStringLiteral(REPLHOST_SOURCE_DIR "/sdk/template/lua.json"));
        QVERIFY(metadata.open(QIODevice::ReadOnly));
        QCOMPARE(lua.value(QLatin1String("sdk_version")).toString(),
                 QJsonDocument::fromJson(metadata.readAll()).object().value(QLatin1String("sdkVersion")).toString());
        QCOMPARE(lua.value(QLatin1String("version")).toString(), QStringLiteral("5.3"));
    }

    void stateIsKeptAcrossRuns_data()
    {
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("probe");
        QTest::addColumn<QString>("result");
        QTest::newRow("global variable") << "x = 41" << "x + 1" << "42";
        QTest::newRow("function") << "function double(n) return n * 2 end" << "double(21)" << "42";
        QTest::newRow("table") << "t = {1, 2, name = 'lua'}" << "t" << "{1, 2, name = \"lua\"}";
        QTest::newRow("loaded module") << "json = require 'dkjson'" << "json.encode({1, 2})" << "\"[1,2]\"";
    }

    void stateIsKeptAcrossRuns()
    {
        QFETCH(QString, setup);
        QFETCH(QString, probe);
        QFETCH(QString, result);
        QCOMPARE(run(setup).value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        const QJsonObject answer = run(probe);
        QCOMPARE(answer.value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(ApiClient::resultText(answer), result);
    }

    void outputOfLuaAndOfChildProcessesIsCaptured()
    {
        const QJsonObject answer = run(QStringLiteral("print('from lua') io.stderr:write('warned\\n') "
                                                      "os.execute('echo from a child')"));
        QCOMPARE(answer.value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(answer.value(QLatin1String("stdout")).toString(), QStringLiteral("from lua\nfrom a child\n"));
        QCOMPARE(answer.value(QLatin1String("stderr")).toString(), QStringLiteral("warned\n"));
    }

    void errorsCarryTheCellsTraceback()
    {
        const QJsonObject answer = run(QStringLiteral("local function inner() error('boom') end\ninner()"));
        QCOMPARE(answer.value(QLatin1String("status")).toString(), QStringLiteral("error"));
        const QJsonObject error = answer.value(QLatin1String("error")).toObject();
        QCOMPARE(error.value(QLatin1String("ename")).toString(), QStringLiteral("LuaError"));
        QVERIFY2(error.value(QLatin1String("evalue")).toString().endsWith(QLatin1String(":1: boom")),
                 qPrintable(error.value(QLatin1String("evalue")).toString()));
        const QString traceback = error.value(QLatin1String("traceback")).toVariant().toStringList().join(QLatin1Char('\n'));
        QVERIFY2(traceback.contains(QLatin1String(":2: in main chunk")), qPrintable(traceback));
        QVERIFY2(!traceback.contains(QLatin1String("driver")), qPrintable(traceback));
        // The worker survived the error.
        QCOMPARE(ApiClient::resultText(run(QStringLiteral("1 + 1"))), QStringLiteral("2"));
    }

    void environmentAndDirectoryReachChildProcesses()
    {
        const QJsonObject answer = m_api->runAndWait(
                m_context, QStringLiteral("return os.getenv('TEMPLATE_ONLY'), io.popen('echo $TEMPLATE_ONLY $PWD'):read('l')"),
                {{QStringLiteral("env"), QJsonObject{{QStringLiteral("TEMPLATE_ONLY"), QStringLiteral("yes")}}}});
        // Set in the process itself, so its children see it too; the context's directory too.
        const QString cwd = answer.value(QLatin1String("cwd")).toString();
        QVERIFY(!cwd.isEmpty());
        QCOMPARE(ApiClient::resultText(answer), QStringLiteral("\"yes\"\t\"yes %1\"").arg(cwd));
        // The execution layer is restored after the run.
        QCOMPARE(ApiClient::resultText(run(QStringLiteral("os.getenv('TEMPLATE_ONLY') == nil"))), QStringLiteral("true"));
    }

    void interruptStopsTheRunAndKeepsTheState()
    {
        QCOMPARE(run(QStringLiteral("kept = 'still here'")).value(QLatin1String("status")).toString(), QStringLiteral("ok"));
        // Twice: the interrupt handler must survive its first use.
        for (int round = 0; round < 2; ++round) {
            auto stream = m_api->openStream("POST", QStringLiteral("/v1/contexts/%1/executions").arg(m_context),
                                            {{QStringLiteral("code"), QStringLiteral("while true do end")}});
            QCOMPARE(stream->status(), 200);
            std::optional<ApiClient::Event> event;
            do {
                event = stream->next();
            } while (event && event->type != "started");
            QVERIFY(event);
            QCOMPARE(m_api->post(QStringLiteral("/v1/contexts/%1/interrupt").arg(m_context), {}).status, 202);
            do {
                event = stream->next();
            } while (event && event->type != "done");
            QVERIFY(event);
            QCOMPARE(event->json().value(QLatin1String("status")).toString(), QStringLiteral("interrupted"));
            QCOMPARE(event->json().value(QLatin1String("state_lost")).toBool(true), false);
        }
        QCOMPARE(ApiClient::resultText(run(QStringLiteral("kept"))), QStringLiteral("\"still here\""));
    }

    void installedPluginIsFoundWithoutAnyOption_data()
    {
        QTest::addColumn<QString>("prefix");   // for `cmake --install --prefix`; empty: the configured one
        QTest::addColumn<QString>("directory");
        QTest::addColumn<QString>("origin");
        const QString home = InstalledApp(m_prefix).isolatedEnvironment(m_scratch.path()).value(QStringLiteral("HOME"));
        // Configured with the SDK's prefix as its install prefix: the host's own directory.
        QTest::newRow("into the SDK's prefix") << QString() << m_prefix + QStringLiteral("/" REPLHOST_INSTALL_LIBDIR "/replhost/plugins")
                                               << QStringLiteral("install");
        QTest::newRow("per user") << home + QStringLiteral("/.local")
                                  << home + QStringLiteral("/.local/" REPLHOST_INSTALL_LIBDIR "/replhost/plugins") << QStringLiteral("user");
    }

    void installedPluginIsFoundWithoutAnyOption()
    {
        QFETCH(QString, prefix);
        QFETCH(QString, directory);
        QFETCH(QString, origin);
        QStringList arguments{QStringLiteral("--install"), m_pluginBuild};
        if (!prefix.isEmpty())
            arguments << QStringLiteral("--prefix") << prefix;
        const CommandRun install = CommandRun::run(QStringLiteral("cmake"), arguments);
        QVERIFY2(install.succeeded(), qPrintable(install.describe()));
        const QString installed = directory + QStringLiteral("/replhost-lua.so");
        QVERIFY2(QFileInfo::exists(installed), qPrintable(QString::fromUtf8(install.out)));
        const auto uninstall = qScopeGuard([&installed] { QFile::remove(installed); });

        ServerProcess server;
        QJsonObject searchDir;
        const QJsonObject lua = luaFoundByAFreshServer(server, searchDir);
        QCOMPARE(lua.value(QLatin1String("state")).toString(), QStringLiteral("loaded"));
        QCOMPARE(canonical(lua.value(QLatin1String("file")).toString()), canonical(installed));
        QCOMPARE(lua.value(QLatin1String("origin")).toString(), origin);
        QCOMPARE(canonical(lua.value(QLatin1String("directory")).toString()), canonical(directory));
        QCOMPARE(searchDir.value(QLatin1String("origin")).toString(), origin);
        QCOMPARE(searchDir.value(QLatin1String("exists")).toBool(), true);

        // The installed client says the same, in words.
        const CommandRun plugins = CommandRun::run(
                m_prefix + QStringLiteral("/bin/replhost-cli"),
                {QStringLiteral("--url"), QStringLiteral("http://127.0.0.1:%1").arg(server.port()),
                 QStringLiteral("--token"), QString::fromUtf8(server.token()), QStringLiteral("plugins")});
        QVERIFY2(plugins.succeeded(), qPrintable(plugins.describe()));
        const QString text = QString::fromUtf8(plugins.out);
        const QString shownDirectory = QRegularExpression::escape(lua.value(QLatin1String("directory")).toString());
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("(^|\\n)%1 +%2 +[1-9]").arg(origin, shownDirectory))),
                 qPrintable(text));
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("\\nlua +loaded +%1 +%2").arg(
                         origin, QRegularExpression::escape(lua.value(QLatin1String("file")).toString())))),
                 qPrintable(text));
    }

    void pluginForAnotherSdkMajorIsRefusedVisibly()
    {
        ServerProcess server;
        server.setExecutable(m_prefix + QStringLiteral("/bin/replhost-server"));
        QMap<QString, QString> env = InstalledApp(m_prefix).isolatedEnvironment(m_scratch.path());
        env.insert(QStringLiteral("REPLHOST_PLUGIN_PATH"), QStringLiteral(REPLHOST_FUTURE_SDK_FIXTURE_DIR));
        QVERIFY2(server.start({}, env), qPrintable(server.error()));
        const ApiClient api(server.port(), server.token());

        QJsonObject future;
        for (const QJsonValue &value : api.get(QStringLiteral("/v1/info")).object().value(QLatin1String("plugins")).toArray()) {
            if (value.toObject().value(QLatin1String("id")).toString() == QLatin1String("future"))
                future = value.toObject();
        }
        QCOMPARE(future.value(QLatin1String("state")).toString(), QStringLiteral("incompatible"));
        const QString reason = future.value(QLatin1String("error")).toString();
        QVERIFY2(reason.contains(QLatin1String("SDK 2.0")) && reason.contains(QLatin1String("rebuild")),
                 qPrintable(reason));

        const ApiClient::Response refused = api.post(QStringLiteral("/v1/executions?wait=true"),
                                                     {{QStringLiteral("language"), QStringLiteral("future")},
                                                      {QStringLiteral("code"), QStringLiteral("1")}});
        QCOMPARE(refused.status, 400);
        QVERIFY2(refused.body.contains("unknown language"), refused.body.constData());
    }
};

QTEST_GUILESS_MAIN(SdkTemplateTest)
#include "tst_sdktemplate.moc"
