// SPDX-License-Identifier: Apache-2.0
#include "bashhandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QVersionNumber>

namespace replhost::bash {

namespace {

constexpr int kProbeTimeoutMs = 10000;

// The driver relies on $EPOCHREALTIME and ${var@a}, both from bash 5.0.
const QVersionNumber kMinimumVersion(5, 0);

sdk::RuntimeInfo unavailable(const QString &reason)
{
    sdk::RuntimeInfo info;
    info.reason = reason;
    return info;
}

QString firstLine(const QByteArray &output)
{
    const QString text = QString::fromUtf8(output).trimmed();
    return text.section(QLatin1Char('\n'), 0, 0).trimmed();
}

} // namespace

sdk::RuntimeInfo BashHandler::probe(const QJsonObject &settings)
{
    QString requested;
    QString origin;
    const QString setting = settings.value(QLatin1String("interpreter")).toString();
    if (!setting.isEmpty()) {
        requested = setting;
        origin = QStringLiteral("the bash \"interpreter\" setting");
    } else if (const QString env = qEnvironmentVariable("REPLHOST_BASH"); !env.isEmpty()) {
        requested = env;
        origin = QStringLiteral("REPLHOST_BASH");
    }

    QString program;
    if (requested.isEmpty()) {
        program = QStandardPaths::findExecutable(QStringLiteral("bash"));
        if (program.isEmpty())
            return unavailable(QStringLiteral(
                "bash not found on PATH; install bash (5.0 or newer) or set REPLHOST_BASH"));
    } else if (requested.contains(QLatin1Char('/'))) {
        const QFileInfo file(requested);
        if (!file.isFile() || !file.isExecutable())
            return unavailable(QStringLiteral("%1 (from %2) is not an executable file; install "
                                              "bash there or change %2")
                                   .arg(requested, origin));
        program = file.absoluteFilePath();
    } else {
        program = QStandardPaths::findExecutable(requested);
        if (program.isEmpty())
            return unavailable(QStringLiteral("%1 (from %2) not found on PATH; install it or "
                                              "change %2")
                                   .arg(requested, origin));
    }

    // `bash --version` reads no startup files and prints "GNU bash, version 5.2.15(1)-release
    // (...)" first; a program that answers anything else is not a bash the driver can use.
    QProcess process;
    process.setProgram(program);
    process.setArguments({QStringLiteral("--version")});
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
    const QString banner = firstLine(process.readAllStandardOutput());
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        const QString detail = firstLine(process.readAllStandardError());
        return unavailable(QStringLiteral("%1 failed when asked for its version (exit code %2)%3; "
                                          "point REPLHOST_BASH at GNU bash 5.0 or newer")
                               .arg(program)
                               .arg(process.exitCode())
                               .arg(detail.isEmpty() ? QString() : QStringLiteral(": ") + detail));
    }

    static const QRegularExpression versionPattern(
        QStringLiteral(R"(GNU bash,? version (\d+\.\d+(?:\.\d+)?))"));
    const QRegularExpressionMatch match = versionPattern.match(banner);
    if (!match.hasMatch())
        return unavailable(QStringLiteral("%1 does not look like GNU bash (it says \"%2\"); point "
                                          "REPLHOST_BASH at a GNU bash 5.0 or newer")
                               .arg(program, banner));
    const QString version = match.captured(1);
    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return unavailable(QStringLiteral("bash %1 at %2 is too old: replhost needs bash %3 or "
                                          "newer; install it or point REPLHOST_BASH at it")
                               .arg(version, program, kMinimumVersion.toString()));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = program;
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
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::bash
