// SPDX-License-Identifier: Apache-2.0
#include "nodeworker.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QStandardPaths>
#include <QVersionNumber>

namespace replhost::node {

namespace {

// A version manager's shim (nvm, asdf, volta) may have to start a shell and look up versions.
constexpr int kProbeTimeoutMs = 15000;

// The driver relies on the inspector's REPL mode, worker threads and the Node 18 library.
const QVersionNumber kMinimumVersion(18, 0);

// Runs under any Node, so an old one is reported as too old instead of as broken. Builds
// without the inspector (configure --without-inspector) cannot run the driver at all. The
// caller's script runs only when both checks pass.
const char kProbeScript[] =
    "var inspector = 'yes';"
    "try { require('inspector').Session; } catch (e) { inspector = 'no'; }"
    "process.stdout.write(process.execPath + '\\n' + process.versions.node + '\\n' + inspector + '\\n');"
    "if (inspector === 'yes' && Number(process.versions.node.split('.')[0]) >= %1) {\n%2\n}";

} // namespace

NodeProbe probeNode(const QJsonObject &settings, const QString &language,
                    const QString &extraScript, const QStringList &scriptArguments)
{
    NodeProbe probe;
    Result<QString> program = sdk::locateRuntime(
        {language, QStringLiteral("node"), QStringLiteral("REPLHOST_NODE"),
         QStringLiteral("install nodejs")},
        settings);
    // Debian's nodejs package named the program nodejs for a long time.
    const bool configured = !settings.value(QLatin1String("interpreter")).toString().isEmpty()
                            || !qEnvironmentVariableIsEmpty("REPLHOST_NODE");
    if (!program && !configured) {
        const QString legacy = QStandardPaths::findExecutable(QStringLiteral("nodejs"));
        if (!legacy.isEmpty())
            program = legacy;
    }
    if (!program) {
        probe.runtime = sdk::unavailableRuntime(program.error().message);
        return probe;
    }

    // The program may be a version manager's shim; asking node for process.execPath lets every
    // session start the real binary directly.
    const QString script = QString::fromLatin1(kProbeScript)
                               .arg(kMinimumVersion.majorVersion())
                               .arg(extraScript);
    const Result<QByteArray> answer = sdk::runProbeCommand(
        *program, QStringList{QStringLiteral("-e"), script} + scriptArguments, kProbeTimeoutMs);
    if (!answer) {
        probe.runtime = sdk::unavailableRuntime(answer.error().message);
        return probe;
    }

    QStringList lines = QString::fromUtf8(*answer).split(QLatin1Char('\n'));
    if (lines.size() < 3) {
        probe.runtime = sdk::unavailableRuntime(
            QStringLiteral("%1 gave an unexpected answer when asked for its version").arg(*program));
        return probe;
    }
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable())
        executable = *program;

    if (QVersionNumber::fromString(version) < kMinimumVersion) {
        probe.runtime = sdk::unavailableRuntime(
            QStringLiteral("Node.js %1 at %2 is too old: replhost needs Node.js %3 or newer; "
                           "install it or point REPLHOST_NODE at it")
                .arg(version, executable, kMinimumVersion.toString()));
        return probe;
    }
    if (lines.at(2).trimmed() != QLatin1String("yes")) {
        probe.runtime = sdk::unavailableRuntime(
            QStringLiteral("Node.js %1 at %2 was built without the inspector, which the "
                           "JavaScript driver needs; install a standard build of Node.js or "
                           "point REPLHOST_NODE at one")
                .arg(version, executable));
        return probe;
    }

    probe.runtime.available = true;
    probe.runtime.version = version;
    probe.runtime.executable = executable;
    probe.extraLines = lines.mid(3);
    return probe;
}

std::unique_ptr<sdk::Session> createDriverSession(const sdk::RuntimeInfo &runtime,
                                                  const sdk::SessionOptions &options,
                                                  const QString &driverResource,
                                                  const QStringList &driverArguments)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable Node.js was found")
                                     : runtime.reason);
    }
    // Stored as .cjs: a package.json with "type": "module" above the cache directory would
    // otherwise make Node load the driver as an ES module.
    Result<QString> driver = sdk::materializeDriver(driverResource);
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    for (const QJsonValue &argument : options.settings.value(QLatin1String("arguments")).toArray()) {
        if (argument.isString() && !argument.toString().isEmpty())
            spec.arguments << argument.toString();
    }
    spec.arguments << driver.value() << driverArguments;
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::node
