// SPDX-License-Identifier: Apache-2.0
#include "pythonhandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
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

} // namespace

sdk::RuntimeInfo PythonHandler::probe(const QJsonObject &settings)
{
    const Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("python"), QStringLiteral("python3"), QStringLiteral("REPLHOST_PYTHON"),
         QStringLiteral("install python3")},
        settings);
    if (!program)
        return sdk::unavailableRuntime(program.error().message);

    // The program may be a wrapper (a pyenv shim costs tens of milliseconds per start); asking
    // the interpreter for sys.executable lets every session start the real binary directly.
    const Result<QByteArray> answer = sdk::runProbeCommand(
        *program, {QStringLiteral("-c"), QString::fromLatin1(kProbeScript)}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(answer.error().message);

    const QStringList lines =
        QString::fromUtf8(*answer).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.size() < 2)
        return sdk::unavailableRuntime(
            QStringLiteral("%1 gave an unexpected answer when asked for its version").arg(*program));
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    // sys.executable may be empty (embedded or unusual builds); the program we ran still works.
    if (executable.isEmpty() || !QFileInfo(executable).isExecutable())
        executable = *program;

    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(
            QStringLiteral("Python %1 at %2 is too old: replhost needs Python %3 or newer; "
                           "install it or point REPLHOST_PYTHON at it")
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
    // IPython.display for interpreters without IPython; the driver reads it from this path.
    Result<QString> shim =
            sdk::materializeDriver(QStringLiteral(":/replhost/python/ipython_display.py"));
    if (!shim)
        return std::make_unique<sdk::FailedSession>(shim.error().message);
    // The chart data of matplotlib figures; read by the driver when it first shows one.
    Result<QString> chart =
            sdk::materializeDriver(QStringLiteral(":/replhost/python/figure_chart.py"));
    if (!chart)
        return std::make_unique<sdk::FailedSession>(chart.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    // -u: print() output must reach fd 1 before a child's output that follows it.
    // -X utf8: source, output and file names are UTF-8 whatever the locale says.
    spec.arguments = {QStringLiteral("-u"), QStringLiteral("-X"), QStringLiteral("utf8")};
    if (options.settings.value(QLatin1String("isolated")).toBool())
        spec.arguments << QStringLiteral("-I");
    // The helper files on the command line, not in the init options: a sandboxed worker sees the
    // files its command names.
    spec.arguments << driver.value() << QStringLiteral("--display-shim") << shim.value()
                   << QStringLiteral("--chart-module") << chart.value();
    const QJsonValue jedi = options.settings.value(QLatin1String("jedi"));
    if (jedi.isBool())
        spec.initOptions.insert(QStringLiteral("jedi"), jedi);
    // The bound on a snapshot of the namespace, from the host's settings for python.
    if (const QJsonValue max = options.settings.value(QLatin1String("snapshot_max_bytes"));
        max.isDouble())
        spec.initOptions.insert(QStringLiteral("snapshot_max_bytes"), max.toInteger());
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::python
