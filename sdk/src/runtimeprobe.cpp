// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/runtimeprobe.h"

#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>

namespace replhost::sdk {

namespace {

// Wrappers and shells say what went wrong first, tracebacks say it last: keep both.
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

Error unavailable(const QString &message)
{
    return makeError(QStringLiteral("unavailable"), message);
}

} // namespace

Result<QString> locateRuntime(const RuntimeLookup &lookup, const QJsonObject &settings)
{
    QString requested;
    QString origin;
    const QString setting = settings.value(QLatin1String("interpreter")).toString();
    if (!setting.isEmpty()) {
        requested = setting;
        origin = QStringLiteral("the %1 \"interpreter\" setting").arg(lookup.language);
    } else if (const QString env = qEnvironmentVariable(lookup.envVar.toLocal8Bit().constData());
               !env.isEmpty()) {
        requested = env;
        origin = lookup.envVar;
    }

    if (requested.isEmpty()) {
        const QString program = QStandardPaths::findExecutable(lookup.defaultProgram);
        if (program.isEmpty())
            return unavailable(QStringLiteral("%1 not found on PATH; %2 or set %3")
                                   .arg(lookup.defaultProgram, lookup.installHint, lookup.envVar));
        return program;
    }
    if (requested.contains(QLatin1Char('/'))) {
        const QFileInfo file(requested);
        if (!file.isFile() || !file.isExecutable())
            return unavailable(QStringLiteral("%1 (from %2) is not an executable file; install "
                                              "%3 there or change %2")
                                   .arg(requested, origin, lookup.language));
        return file.absoluteFilePath();
    }
    const QString program = QStandardPaths::findExecutable(requested);
    if (program.isEmpty())
        return unavailable(QStringLiteral("%1 (from %2) not found on PATH; install it or change %2")
                               .arg(requested, origin));
    return program;
}

Result<QByteArray> runProbeCommand(const QString &program, const QStringList &arguments,
                                   int timeoutMs)
{
    QProcess process;
    process.setProgram(program);
    process.setArguments(arguments);
    process.setStandardInputFile(QProcess::nullDevice());
    process.start();
    if (!process.waitForStarted(timeoutMs))
        return unavailable(QStringLiteral("cannot start %1: %2").arg(program, process.errorString()));
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return unavailable(QStringLiteral("%1 did not answer within %2 s")
                               .arg(program)
                               .arg(timeoutMs / 1000));
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        const QString detail = summarize(process.readAllStandardError());
        return unavailable(QStringLiteral("%1 failed when asked for its version (exit code %2)%3")
                               .arg(program)
                               .arg(process.exitCode())
                               .arg(detail.isEmpty() ? QString() : QStringLiteral(": ") + detail));
    }
    return process.readAllStandardOutput();
}

RuntimeInfo unavailableRuntime(const QString &reason)
{
    RuntimeInfo info;
    info.reason = reason;
    return info;
}

} // namespace replhost::sdk
