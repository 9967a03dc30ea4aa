// SPDX-License-Identifier: Apache-2.0
#include "pythonhandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QVersionNumber>

namespace replhost::python {

namespace {

// A pyenv or asdf shim on PATH may have to start a shell and look up versions first.
constexpr int kProbeTimeoutMs = 15000;

const QVersionNumber kMinimumVersion(3, 8);

// Runs under any Python, including 2.x, so an old interpreter is reported as too old instead
// of as broken.
const char kProbeScript[] =
    "import sys, platform; print(sys.executable); print(platform.python_version())";

sdk::RuntimeInfo unavailable(const QString &reason)
{
    sdk::RuntimeInfo info;
    info.reason = reason;
    return info;
}

// Wrappers and shells say what went wrong first, Python tracebacks say it last: keep both.
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

sdk::RuntimeInfo PythonHandler::probe(const QJsonObject &settings)
{
    QString requested;
    QString origin;
    const QString setting = settings.value(QLatin1String("interpreter")).toString();
    if (!setting.isEmpty()) {
        requested = setting;
        origin = QStringLiteral("the python \"interpreter\" setting");
    } else if (const QString env = qEnvironmentVariable("REPLHOST_PYTHON"); !env.isEmpty()) {
        requested = env;
        origin = QStringLiteral("REPLHOST_PYTHON");
    }

    QString program;
    if (requested.isEmpty()) {
        program = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (program.isEmpty())
            return unavailable(QStringLiteral(
                "python3 not found on PATH; install python3 or set REPLHOST_PYTHON"));
    } else if (requested.contains(QLatin1Char('/'))) {
        const QFileInfo file(requested);
        if (!file.isFile() || !file.isExecutable())
            return unavailable(QStringLiteral("%1 (from %2) is not an executable file; install "
                                              "python3 there or change %2")
                                   .arg(requested, origin));
        program = file.absoluteFilePath();
    } else {
        program = QStandardPaths::findExecutable(requested);
        if (program.isEmpty())
            return unavailable(QStringLiteral("%1 (from %2) not found on PATH; install it or "
                                              "change %2")
                                   .arg(requested, origin));
    }

    // The program may be a wrapper (a pyenv shim costs tens of milliseconds per start); asking
    // the interpreter for sys.executable lets every session start the real binary directly.
    QProcess process;
    process.setProgram(program);
    process.setArguments({QStringLiteral("-c"), QString::fromLatin1(kProbeScript)});
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

    const QStringList lines =
        QString::fromUtf8(process.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() < 2)
        return unavailable(QStringLiteral("%1 gave an unexpected answer when asked for its version")
                               .arg(program));
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    // sys.executable may be empty (embedded or unusual builds); the program we ran still works.
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable())
        executable = program;

    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return unavailable(QStringLiteral("Python %1 at %2 is too old: replhost needs Python %3 or "
                                          "newer; install it or point REPLHOST_PYTHON at it")
                               .arg(version, executable, kMinimumVersion.toString()));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = executable;
    return info;
}

std::unique_ptr<sdk::Session> PythonHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                           const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable Python interpreter was found")
                                     : runtime.reason);
    }
    Result<QString> driver = sdk::materializeDriver(QStringLiteral(":/replhost/python/driver.py"));
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    // -u: print() output must reach fd 1 before a child's output that follows it.
    // -X utf8: source, output and file names are UTF-8 whatever the locale says.
    spec.arguments = {QStringLiteral("-u"), QStringLiteral("-X"), QStringLiteral("utf8")};
    if (options.settings.value(QLatin1String("isolated")).toBool())
        spec.arguments << QStringLiteral("-I");
    spec.arguments << driver.value();
    const QJsonValue jedi = options.settings.value(QLatin1String("jedi"));
    if (jedi.isBool())
        spec.initOptions.insert(QStringLiteral("jedi"), jedi);
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::python
