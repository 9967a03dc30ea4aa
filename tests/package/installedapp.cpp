// SPDX-License-Identifier: Apache-2.0
#include "installedapp.h"

#include "apiclient.h"
#include "commandrun.h"
#include "serverprocess.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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
