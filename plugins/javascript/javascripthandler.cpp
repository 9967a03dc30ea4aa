// SPDX-License-Identifier: Apache-2.0
#include "javascripthandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QStandardPaths>
#include <QVersionNumber>

namespace replhost::javascript {

namespace {

// A version manager's shim (nvm, asdf, volta) may have to start a shell and look up versions.
constexpr int kProbeTimeoutMs = 15000;

// The driver relies on the inspector's REPL mode, worker threads and the Node 18 library.
const QVersionNumber kMinimumVersion(18, 0);

// Runs under any Node, so an old one is reported as too old instead of as broken. Builds
// without the inspector (configure --without-inspector) cannot run the driver at all.
const char kProbeScript[] =
    "var inspector = 'yes';"
    "try { require('inspector').Session; } catch (e) { inspector = 'no'; }"
    "process.stdout.write(process.execPath + '\\n' + process.versions.node + '\\n' + inspector + '\\n');";

} // namespace

sdk::RuntimeInfo JavaScriptHandler::probe(const QJsonObject &settings)
{
    Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("javascript"), QStringLiteral("node"), QStringLiteral("REPLHOST_NODE"),
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
    if (!program)
        return sdk::unavailableRuntime(program.error().message);

    // The program may be a version manager's shim; asking node for process.execPath lets every
    // session start the real binary directly.
    const Result<QByteArray> answer = sdk::runProbeCommand(
        *program, {QStringLiteral("-e"), QString::fromLatin1(kProbeScript)}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(answer.error().message);

    const QStringList lines = QString::fromUtf8(*answer).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() < 3)
        return sdk::unavailableRuntime(QStringLiteral("%1 gave an unexpected answer when asked for its version")
                               .arg(*program));
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable())
        executable = *program;

    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(QStringLiteral("Node.js %1 at %2 is too old: replhost needs Node.js %3 "
                                          "or newer; install it or point REPLHOST_NODE at it")
                               .arg(version, executable, kMinimumVersion.toString()));
    if (lines.at(2).trimmed() != QLatin1String("yes"))
        return sdk::unavailableRuntime(QStringLiteral("Node.js %1 at %2 was built without the inspector, which "
                                          "the JavaScript driver needs; install a standard build "
                                          "of Node.js or point REPLHOST_NODE at one")
                               .arg(version, executable));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = executable;
    return info;
}

std::unique_ptr<sdk::Session> JavaScriptHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                               const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable Node.js was found")
                                     : runtime.reason);
    }
    // Stored as .cjs: a package.json with "type": "module" above the cache directory would
    // otherwise make Node load the driver as an ES module.
    Result<QString> driver =
        sdk::materializeDriver(QStringLiteral(":/replhost/javascript/driver.cjs"));
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    for (const QJsonValue &argument : options.settings.value(QLatin1String("arguments")).toArray()) {
        if (argument.isString() && !argument.toString().isEmpty())
            spec.arguments << argument.toString();
    }
    spec.arguments << driver.value();
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::javascript
