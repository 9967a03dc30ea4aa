// SPDX-License-Identifier: Apache-2.0
#include "installedapp.h"

#include "apiclient.h"
#include "commandrun.h"
#include "serverprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>

#include <optional>

#include <signal.h>
#include <sys/stat.h>

CommandRun InstalledApp::installBuildTree(const QString &prefix)
{
    return CommandRun::run(QStringLiteral("cmake"), {QStringLiteral("--install"), QStringLiteral(REPLHOST_BUILD_DIR),
                                                     QStringLiteral("--prefix"), prefix});
}

QString InstalledApp::binary(const QString &name) const
{
    return QDir(m_prefix).filePath(QStringLiteral("bin/") + name);
}

QMap<QString, QString> InstalledApp::isolatedEnvironment(const QString &scratchDir) const
{
    return {{QStringLiteral("REPLHOST_PLUGIN_PATH"), QString()},
            {QStringLiteral("HOME"), QDir(scratchDir).filePath(QStringLiteral("home"))},
            {QStringLiteral("XDG_DATA_HOME"), QDir(scratchDir).filePath(QStringLiteral("xdg-data"))},
            {QStringLiteral("REPLHOST_CACHE_DIR"), QDir(scratchDir).filePath(QStringLiteral("cache"))}};
}

QString InstalledApp::checkServerVersion() const
{
    const CommandRun version = CommandRun::run(binary(QStringLiteral("replhost-server")),
                                               {QStringLiteral("--version")});
    if (!version.succeeded())
        return version.describe();
    for (const char *expected : {REPLHOST_VERSION, "SDK"}) {
        if (!version.out.contains(expected))
            return QStringLiteral("--version printed \"%1\", without %2")
                    .arg(QString::fromUtf8(version.out), QLatin1String(expected));
    }
    return {};
}

QString InstalledApp::checkServerRunsPythonAndBash(const QString &scratchDir) const
{
    ServerProcess server;
    server.setExecutable(binary(QStringLiteral("replhost-server")));
    if (!server.start({}, isolatedEnvironment(scratchDir)))
        return server.error();
    const ApiClient api(server.port(), server.token());

    // Plugins are found relative to the executable: every loaded one lies inside the tree.
    const QString treePlugins = QFileInfo(QDir(m_prefix).filePath(QStringLiteral(REPLHOST_INSTALL_LIBDIR "/replhost/plugins")))
                                        .canonicalFilePath();
    const QJsonObject info = api.get(QStringLiteral("/v1/info")).object();
    const QJsonArray plugins = info.value(QLatin1String("plugins")).toArray();
    // The confinement launcher is found relative to the executable too: with it, CPU time is
    // always held by an rlimit; without it, no limit is enforced.
    const QJsonObject cpu = info.value(QLatin1String("worker_limits")).toObject()
                                    .value(QLatin1String("cpu_seconds")).toObject();
    if (cpu.value(QLatin1String("mechanism")).toString() != QLatin1String("rlimit"))
        return QStringLiteral("the tree's replhost-confine was not found: %1")
                .arg(QString::fromUtf8(QJsonDocument(cpu).toJson(QJsonDocument::Compact)));
    QStringList loaded;
    for (const QJsonValue &value : plugins) {
        const QJsonObject plugin = value.toObject();
        const QString file = plugin.value(QLatin1String("file")).toString();
        if (plugin.value(QLatin1String("state")).toString() != QLatin1String("loaded"))
            return QStringLiteral("plugin %1 did not load: %2")
                    .arg(file, plugin.value(QLatin1String("error")).toString());
        if (treePlugins.isEmpty() || !file.startsWith(treePlugins + QLatin1Char('/')))
            return QStringLiteral("plugin %1 does not come from %2").arg(file, treePlugins);
        loaded.append(plugin.value(QLatin1String("id")).toString());
    }

    struct Step {
        QString language;
        QString setup;
        QString probe;
        QString expected;  // text/plain result (Python) or stdout (Bash)
    };
    const Step steps[] = {
        {QStringLiteral("python"), QStringLiteral("x = 41"), QStringLiteral("x + 1"), QStringLiteral("42")},
        {QStringLiteral("bash"), QStringLiteral("cd /tmp; export A=1"), QStringLiteral("echo $PWD $A"),
         QStringLiteral("/tmp 1\n")},
    };
    for (const Step &step : steps) {
        if (!loaded.contains(step.language))
            return QStringLiteral("no %1 plugin among %2").arg(step.language, loaded.join(QLatin1Char(' ')));
        if (const QString missing = api.missingLanguage(step.language); !missing.isEmpty())
            return missing;
        const QString context = api.createContext(step.language);
        if (context.isEmpty())
            return QStringLiteral("cannot create a %1 context").arg(step.language);
        const QJsonObject setup = api.runAndWait(context, step.setup);
        if (setup.value(QLatin1String("status")).toString() != QLatin1String("ok"))
            return QStringLiteral("%1 setup run: %2").arg(step.language, QString::fromUtf8(QJsonDocument(setup).toJson()));
        const QJsonObject probe = api.runAndWait(context, step.probe);
        const QString got = step.language == QLatin1String("python")
                ? ApiClient::resultText(probe)
                : probe.value(QLatin1String("stdout")).toString();
        if (got != step.expected)
            return QStringLiteral("%1: expected \"%2\", got %3")
                    .arg(step.language, step.expected, QString::fromUtf8(QJsonDocument(probe).toJson()));
    }
    server.stop();
    return {};
}

QString InstalledApp::checkWorkbenchHelp() const
{
    const CommandRun help = CommandRun::run(binary(QStringLiteral("replhost")), {QStringLiteral("--help")},
                                            {{QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen")}});
    if (!help.succeeded())
        return help.describe();
    if (!help.out.contains("--serve"))
        return QStringLiteral("--help printed no --serve option: %1").arg(QString::fromUtf8(help.out));
    return {};
}

QString InstalledApp::readUserUnit(const QString &unitPrefix, UnitCommand &unitCommand) const
{
    QFile unit(QDir(m_prefix).filePath(QStringLiteral("lib/systemd/user/replhost-server.service")));
    if (!unit.open(QIODevice::ReadOnly))
        return QStringLiteral("no user unit: %1").arg(unit.fileName());
    QStringList command;
    std::optional<mode_t> umask;
    for (const QString &line : QString::fromUtf8(unit.readAll()).split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("ExecStart=")))
            command = line.mid(int(qstrlen("ExecStart="))).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (line.startsWith(QLatin1String("UMask="))) {
            bool octal = false;
            umask = mode_t(line.mid(int(qstrlen("UMask="))).toUInt(&octal, 8));
            if (!octal)
                return QStringLiteral("the unit's %1 is not an octal mask").arg(line);
        }
    }
    if (command.isEmpty() || !command.first().startsWith(unitPrefix + QLatin1Char('/')))
        return QStringLiteral("the unit's ExecStart does not name a program under %1: %2")
                .arg(unitPrefix, command.join(QLatin1Char(' ')));
    if (!umask)
        return QStringLiteral("the unit sets no UMask");
    // The program where the unit names it, in this tree.
    unitCommand.program = m_prefix + command.takeFirst().mid(unitPrefix.size());
    if (!QFileInfo(unitCommand.program).isExecutable())
        return QStringLiteral("the unit's program %1 is not an executable").arg(unitCommand.program);
    unitCommand.arguments = command;
    unitCommand.umask = *umask;
    return {};
}

QString InstalledApp::startUserUnit(const UnitCommand &unit, const QString &home, ServerProcess &server) const
{
    // ServerProcess puts `--port 0 --warm-pool 0` before the unit's arguments: the unit's
    // `--port auto` wins over the first, and no pooled worker slows the start.
    server.setExecutable(unit.program);
    server.setUmask(unit.umask);
    if (!server.startWithDefaultDataDir(unit.arguments, isolatedEnvironment(home)))
        return server.error();
    return {};
}

QString InstalledApp::checkWorkbenchAttachesToTheUnitsServer(const QString &unitPrefix,
                                                             const QString &scratchDir) const
{
    UnitCommand unit;
    if (const QString failure = readUserUnit(unitPrefix, unit); !failure.isEmpty())
        return failure;
    if (!QDir().mkpath(QDir(scratchDir).filePath(QStringLiteral("home"))))
        return QStringLiteral("cannot make a home in %1").arg(scratchDir);
    ServerProcess server;
    if (const QString failure = startUserUnit(unit, scratchDir, server); !failure.isEmpty())
        return QStringLiteral("the unit's server: %1").arg(failure);

    // The workbench as the desktop entry starts it: no options, the same user's home.
    QProcess workbench;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const QMap<QString, QString> isolated = isolatedEnvironment(scratchDir);
    for (auto it = isolated.cbegin(); it != isolated.cend(); ++it)
        environment.insert(it.key(), it.value());
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    environment.remove(QStringLiteral("REPLHOST_TOKEN"));
    workbench.setProcessEnvironment(environment);
    workbench.start(binary(QStringLiteral("replhost")), {});
    if (!workbench.waitForStarted(10000))
        return QStringLiteral("the workbench does not start: %1").arg(workbench.errorString());
    const QByteArray expected = QStringLiteral("replhost: attached to replhost-server on 127.0.0.1:%1 (pid %2)\n")
                                        .arg(server.port())
                                        .arg(server.pid())
                                        .toUtf8();
    QByteArray said;
    const QDeadlineTimer deadline(30000);
    while (!said.contains(expected) && !deadline.hasExpired() && workbench.state() == QProcess::Running) {
        workbench.waitForReadyRead(200);
        said += workbench.readAllStandardOutput();
    }
    const auto stop = [&workbench] {
        ::kill(pid_t(workbench.processId()), SIGTERM);
        return workbench.waitForFinished(15000);
    };
    if (!said.contains(expected)) {
        stop();
        return QStringLiteral("the workbench did not say it attached (\"%1\"): %2 %3")
                .arg(QString::fromUtf8(expected.trimmed()), QString::fromUtf8(said),
                     QString::fromUtf8(workbench.readAllStandardError()));
    }
    if (!stop() || workbench.exitStatus() != QProcess::NormalExit || workbench.exitCode() != 0)
        return QStringLiteral("the attached workbench did not end with 0 on SIGTERM");
    // The engine was the server's: it goes on.
    if (ApiClient(server.port(), server.token()).get(QStringLiteral("/healthz")).status != 200)
        return QStringLiteral("the unit's server stopped with the workbench");
    return {};
}

QString InstalledApp::checkUserUnitGivesEachUserAPort(const QString &unitPrefix, const QString &scratchDir) const
{
    UnitCommand unit;
    if (const QString failure = readUserUnit(unitPrefix, unit); !failure.isEmpty())
        return failure;

    // Two users: two homes, as systemd gives each user manager its own HOME. The port a server
    // takes depends on its data directory and on which ports are free, not on the user id.
    ServerProcess alice;
    ServerProcess bob;
    ServerProcess *users[] = {&alice, &bob};
    for (ServerProcess *server : users) {
        const QString user = server == &alice ? QStringLiteral("alice") : QStringLiteral("bob");
        if (const QString failure = startUserUnit(unit, QDir(scratchDir).filePath(user), *server); !failure.isEmpty())
            return QStringLiteral("%1's server: %2").arg(user, failure);
    }
    if (alice.port() == 0 || alice.port() == bob.port())
        return QStringLiteral("both users' servers listen on port %1").arg(alice.port());

    for (ServerProcess *server : users) {
        const auto readFile = [server](const char *name) {
            QFile file(QDir(server->dataDir()).filePath(QLatin1String(name)));
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QString url = QJsonDocument::fromJson(readFile("server.json")).object().value(QLatin1String("url")).toString();
        if (url != QStringLiteral("http://127.0.0.1:%1").arg(server->port()))
            return QStringLiteral("server.json in %1 names %2, the server listens on %3")
                    .arg(server->dataDir(), url).arg(server->port());
        // What --port auto remembers for next time: the unit's argument took effect.
        if (readFile("port").trimmed() != QByteArray::number(server->port()))
            return QStringLiteral("%1/port does not hold %2: the server did not choose its port itself")
                    .arg(server->dataDir()).arg(server->port());

        const ApiClient api(server->port(), server->token());
        if (const int status = api.get(QStringLiteral("/v1/info")).status; status != 200)
            return QStringLiteral("GET /v1/info with the token from %1 answered %2").arg(server->dataDir()).arg(status);
        // The banner's last line, written after the server listens.
        const QDeadlineTimer banner(10000);
        while (!server->output().contains("E2B SDKs") && !banner.hasExpired())
            QTest::qWait(20);
        const QByteArray out = server->output();
        if (server->token().isEmpty() || out.contains(server->token()) || !out.contains("token: in "))
            return QStringLiteral("the banner on a pipe shows the token or does not say where it is: %1")
                    .arg(QString::fromUtf8(out));
    }

    // The unit's UMask reaches what the server starts: a worker creates files for its user only.
    if (const QString missing = ApiClient(alice.port(), alice.token()).missingLanguage(QStringLiteral("bash")); !missing.isEmpty())
        return missing;
    const ApiClient api(alice.port(), alice.token());
    const QString context = api.createContext(QStringLiteral("bash"));
    if (context.isEmpty())
        return QStringLiteral("cannot create a bash context");
    const QJsonObject run = api.runAndWait(context, QStringLiteral("umask"));
    const QString expected = QStringLiteral("%1\n").arg(uint(unit.umask), 4, 8, QLatin1Char('0'));
    if (run.value(QLatin1String("stdout")).toString() != expected)
        return QStringLiteral("a worker's umask is not the unit's %1: %2")
                .arg(expected.trimmed(), QString::fromUtf8(QJsonDocument(run).toJson()));
    return {};
}
