// SPDX-License-Identifier: Apache-2.0
#include "bashhandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QJsonValue>
#include <QRegularExpression>
#include <QVersionNumber>

namespace replhost::bash {

namespace {

constexpr int kProbeTimeoutMs = 10000;

// The driver relies on $EPOCHREALTIME and ${var@a}, both from bash 5.0.
const QVersionNumber kMinimumVersion(5, 0);

} // namespace

sdk::RuntimeInfo BashHandler::probe(const QJsonObject &settings)
{
    const Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("bash"), QStringLiteral("bash"), QStringLiteral("REPLHOST_BASH"),
         QStringLiteral("install bash (5.0 or newer)")},
        settings);
    if (!program)
        return sdk::unavailableRuntime(program.error().message);

    // `bash --version` reads no startup files and prints "GNU bash, version 5.2.15(1)-release
    // (...)" first; a program that answers anything else is not a bash the driver can use.
    const Result<QByteArray> answer =
        sdk::runProbeCommand(*program, {QStringLiteral("--version")}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(
            answer.error().message + QStringLiteral("; point REPLHOST_BASH at GNU bash 5.0 or newer"));
    const QString banner = QString::fromUtf8(*answer).trimmed().section(QLatin1Char('\n'), 0, 0);

    static const QRegularExpression versionPattern(
        QStringLiteral(R"(GNU bash,? version (\d+\.\d+(?:\.\d+)?))"));
    const QRegularExpressionMatch match = versionPattern.match(banner);
    if (!match.hasMatch())
        return sdk::unavailableRuntime(
            QStringLiteral("%1 does not look like GNU bash (it says \"%2\"); point REPLHOST_BASH "
                           "at a GNU bash 5.0 or newer")
                .arg(*program, banner));
    const QString version = match.captured(1);
    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(
            QStringLiteral("bash %1 at %2 is too old: replhost needs bash %3 or newer; install it "
                           "or point REPLHOST_BASH at it")
                .arg(version, *program, kMinimumVersion.toString()));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = *program;
    return info;
}

std::unique_ptr<sdk::Session> BashHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                         const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable bash was found") : runtime.reason);
    }
    Result<QString> driver = sdk::materializeDriver(QStringLiteral(":/replhost/bash/driver.bash"));
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    // The driver starts as a script and then replaces itself with an interactive bash; no startup
    // file runs in either, so a user's ~/.bashrc cannot interfere with the protocol.
    spec.arguments = {QStringLiteral("--norc"), QStringLiteral("--noprofile"), driver.value()};
    // The bound on a snapshot of the shell's state, from the host's settings for bash.
    if (const QJsonValue max = options.settings.value(QLatin1String("snapshot_max_bytes"));
        max.isDouble())
        spec.initOptions.insert(QStringLiteral("snapshot_max_bytes"), max.toInteger());
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::bash
