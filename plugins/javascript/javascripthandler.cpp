// SPDX-License-Identifier: Apache-2.0
#include "javascripthandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QProcess>
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

sdk::RuntimeInfo unavailable(const QString &reason)
{
    sdk::RuntimeInfo info;
    info.reason = reason;
    return info;
}

// Wrappers and shells say what went wrong first, Node's stack traces say it last: keep both.
QString summarize(const QByteArray &output)
{
    QStringList lines;
    for (const QString &line : QString::fromUtf8(output).split(QLatin1Char('\n'))) {
        if (!line.trimmed().isEmpty())
            lines << line.trimmed();
    }
    if (lines.isEmpty())
        return {};
    if (lines.size() == 1)
        return lines.constFirst();
    return lines.constFirst() + QStringLiteral(" ... ") + lines.constLast();
}

} // namespace

sdk::RuntimeInfo JavaScriptHandler::probe(const QJsonObject &settings)
{
    QString requested;
    QString origin;
    const QString setting = settings.value(QLatin1String("interpreter")).toString();
    if (!setting.isEmpty()) {
        requested = setting;
        origin = QStringLiteral("the javascript \"interpreter\" setting");
    } else if (const QString env = qEnvironmentVariable("REPLHOST_NODE"); !env.isEmpty()) {
        requested = env;
        origin = QStringLiteral("REPLHOST_NODE");
    }

    QString program;
    if (requested.isEmpty()) {
        program = QStandardPaths::findExecutable(QStringLiteral("node"));
        // Debian's nodejs package named the program nodejs for a long time.
        if (program.isEmpty())
            program = QStandardPaths::findExecutable(QStringLiteral("nodejs"));
        if (program.isEmpty())
            return unavailable(QStringLiteral(
                "node not found on PATH; install nodejs or set REPLHOST_NODE"));
    } else if (requested.contains(QLatin1Char('/'))) {
        const QFileInfo file(requested);
        if (!file.isFile() || !file.isExecutable())
            return unavailable(QStringLiteral("%1 (from %2) is not an executable file; install "
                                              "nodejs there or change %2")
                                   .arg(requested, origin));
        program = file.absoluteFilePath();
    } else {
        program = QStandardPaths::findExecutable(requested);
        if (program.isEmpty())
            return unavailable(QStringLiteral("%1 (from %2) not found on PATH; install it or "
                                              "change %2")
                                   .arg(requested, origin));
    }

    // The program may be a version manager's shim; asking node for process.execPath lets every
    // session start the real binary directly.
    QProcess process;
    process.setProgram(program);
    process.setArguments({QStringLiteral("-e"), QString::fromLatin1(kProbeScript)});
    process.setStandardInputFile(QProcess::nullDevice());
    process.start();
    if (!process.waitForStarted(kProbeTimeoutMs))
        return unavailable(QStringLiteral("cannot start %1: %2").arg(program, process.errorString()));
    if (!process.waitForFinished(kProbeTimeoutMs)) {
        process.kill();
        process.waitForFinished();
        return unavailable(QStringLiteral("%1 did not answer within %2 s")
                               .arg(program)
                               .arg(kProbeTimeoutMs / 1000));
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        const QString detail = summarize(process.readAllStandardError());
        return unavailable(QStringLiteral("%1 failed when asked for its version (exit code %2)%3")
                               .arg(program)
                               .arg(process.exitCode())
                               .arg(detail.isEmpty() ? QString() : QStringLiteral(": ") + detail));
    }

    const QStringList lines = QString::fromUtf8(process.readAllStandardOutput())
                                  .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() < 3)
        return unavailable(QStringLiteral("%1 gave an unexpected answer when asked for its version")
                               .arg(program));
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable())
        executable = program;

    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return unavailable(QStringLiteral("Node.js %1 at %2 is too old: replhost needs Node.js %3 "
                                          "or newer; install it or point REPLHOST_NODE at it")
                               .arg(version, executable, kMinimumVersion.toString()));
    if (lines.at(2).trimmed() != QLatin1String("yes"))
        return unavailable(QStringLiteral("Node.js %1 at %2 was built without the inspector, which "
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
