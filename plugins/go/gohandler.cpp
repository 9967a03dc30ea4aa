// SPDX-License-Identifier: Apache-2.0
#include "gohandler.h"

#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <dlfcn.h>

namespace replhost::go {

namespace {

// The worker only prints its version, but a loaded machine may be slow to start 20 MB.
constexpr int kProbeTimeoutMs = 15000;

const QString kWorkerName = QStringLiteral("replhost-go-worker");
const QString kEnvVar = QStringLiteral("REPLHOST_GO");
const QString kInstallHint =
    QStringLiteral("install golang-go and golang-github-traefik-yaegi-dev and rebuild replhost");

// The directory of this plugin's own file, where the build and the install put the worker.
QString pluginDirectory()
{
    static const char anchor = 0;
    Dl_info info{};
    if (dladdr(&anchor, &info) == 0 || info.dli_fname == nullptr)
        return {};
    return QFileInfo(QString::fromLocal8Bit(info.dli_fname)).absolutePath();
}

// The worker to run: the one a setting or $REPLHOST_GO names, else the one beside the plugin.
Result<QString> locateWorker(const QJsonObject &settings)
{
    if (!settings.value(QLatin1String("interpreter")).toString().isEmpty()
        || !qEnvironmentVariable(kEnvVar.toLatin1().constData()).isEmpty())
        return sdk::locateRuntime({QStringLiteral("go"), kWorkerName, kEnvVar, kInstallHint},
                                  settings);
    const QString directory = pluginDirectory();
    const QFileInfo worker(QDir(directory).filePath(kWorkerName));
    if (directory.isEmpty() || !worker.isFile() || !worker.isExecutable())
        return makeError(
            QStringLiteral("unavailable"),
            QStringLiteral("the Go worker (%1) is missing beside the Go plugin in %2: no Go "
                           "toolchain or no yaegi sources were found when replhost was built; %3, "
                           "or set %4 to a built worker")
                .arg(kWorkerName, directory.isEmpty() ? QStringLiteral("?") : directory,
                     kInstallHint, kEnvVar));
    return worker.absoluteFilePath();
}

} // namespace

sdk::RuntimeInfo GoHandler::probe(const QJsonObject &settings)
{
    const Result<QString> worker = locateWorker(settings);
    if (!worker)
        return sdk::unavailableRuntime(worker.error().message);

    const Result<QByteArray> answer =
        sdk::runProbeCommand(*worker, {QStringLiteral("--version")}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(answer.error().message
                                       + QStringLiteral("; %1, or set %2 to a working worker")
                                             .arg(kInstallHint, kEnvVar));

    // "replhost-go-worker go1.19.8 yaegi 0.14.3"
    static const QRegularExpression versionPattern(
        QStringLiteral(R"(^replhost-go-worker go(\S+) yaegi (\S+)\s*$)"));
    const QString text = QString::fromUtf8(*answer).trimmed();
    const QRegularExpressionMatch match = versionPattern.match(text);
    if (!match.hasMatch())
        return sdk::unavailableRuntime(
            QStringLiteral("%1 is not a replhost Go worker (--version answered \"%2\"); %3, or "
                           "set %4 to a built worker")
                .arg(*worker, text.left(80), kInstallHint, kEnvVar));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = QStringLiteral("%1 (yaegi %2)").arg(match.captured(1), match.captured(2));
    info.executable = *worker;
    return info;
}

std::unique_ptr<sdk::Session> GoHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                       const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no Go worker was found") : runtime.reason);
    }
    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    const QString gopath = options.settings.value(QLatin1String("gopath")).toString();
    if (!gopath.isEmpty())
        spec.initOptions.insert(QStringLiteral("gopath"), gopath);
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::go
