// SPDX-License-Identifier: Apache-2.0
#include "javahandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <QVersionNumber>

namespace replhost::java {

namespace {

// A JVM start; generous for a loaded machine.
constexpr int kProbeTimeoutMs = 15000;

// The JShell API with the local execution engine, and the driver's bytecode level.
const QVersionNumber kMinimumVersion(17);

const QString kDriverJar = QStringLiteral(":/replhost/java/driver.jar");
const QString kNativeLibrary = QStringLiteral(":/replhost/java/libreplhost-java-native.so");

const QString kInstallHint = QStringLiteral("install openjdk-17-jdk-headless");

// The longest a pooled worker's warm-up may take before its hello (WARM_UP_WALL_BUDGET_MS in
// Driver.java).
constexpr int kPooledWarmUpMaxMs = 15000;

// Defaults chosen for many small, long-lived JVMs that start often:
// - -XX:TieredStopAtLevel=1 (C1 only) halves start-up on a small machine, where C2 compiler
//   threads compete with JShell's warm-up; hot user loops run slower, so it is an option users
//   override with "-XX:TieredStopAtLevel=4".
// - Serial GC and a small initial heap: every snippet is a class and javac lives in the same
//   heap, but one context needs neither parallel collection nor a large young generation; this
//   keeps an idle worker near 100 MB instead of 130 MB. The heap limit bounds what JShell's
//   per-declaration state can cost; users who need more raise it.
// - -XX:-UsePerfData: no /tmp/hsperfdata file per worker (a killed worker would leave its file).
// - The JDK's default class data sharing archive is used as it is (-Xshare:auto is the default).
// - JVM warnings go to stderr, not to stdout where they would look like program output.
// - --add-opens: the driver mirrors env and cwd changes into the JDK's cached views
//   (System.getenv(), java.io's and java.nio's working directory).
const QStringList kJvmOptions = {
    QStringLiteral("-Xms16m"),
    QStringLiteral("-Xmx128m"),
    QStringLiteral("-XX:+UseSerialGC"),
    QStringLiteral("-XX:TieredStopAtLevel=1"),
    QStringLiteral("-XX:-UsePerfData"),
    QStringLiteral("-Xlog:disable"),
    QStringLiteral("-Xlog:all=warning:stderr"),
    QStringLiteral("-Djava.awt.headless=true"),
    QStringLiteral("-Dfile.encoding=UTF-8"),
    QStringLiteral("--add-opens=java.base/java.util=ALL-UNNAMED"),
    QStringLiteral("--add-opens=java.base/java.io=ALL-UNNAMED"),
    QStringLiteral("--add-opens=java.base/sun.nio.fs=ALL-UNNAMED"),
    QStringLiteral("--enable-native-access=ALL-UNNAMED"),
};

QStringList stringList(const QJsonValue &value, QChar separator)
{
    QStringList out;
    if (value.isArray()) {
        for (const QJsonValue &item : value.toArray()) {
            if (item.isString() && !item.toString().isEmpty())
                out.append(item.toString());
        }
    } else if (value.isString()) {
        out = value.toString().split(separator, Qt::SkipEmptyParts);
    }
    return out;
}

// Whether the driver warms javac up before its hello (WarmUp.java): for a worker started ahead
// of demand, whose start-up the pool waits for in the background. It costs 1.5-3 s of CPU
// and grows the heap by tens of MB, so a worker under a CPU-time or memory limit does none: the
// limit is the user's and would be spent on it.
bool warmsUp(const QJsonObject &settings)
{
    const QJsonObject limits = settings.value(QLatin1String("confinement"))
                                   .toObject()
                                   .value(QLatin1String("limits"))
                                   .toObject();
    return settings.value(QLatin1String("pooled")).toBool()
           && limits.value(QLatin1String("cpu_seconds")).toDouble() <= 0
           && limits.value(QLatin1String("memory_bytes")).toDouble() <= 0;
}

} // namespace

sdk::RuntimeInfo JavaHandler::probe(const QJsonObject &settings)
{
    if (!QFile::exists(kDriverJar))
        return sdk::unavailableRuntime(
            QStringLiteral("the Java driver (driver.jar) is missing from this build of the Java "
                           "plugin: no JDK 17 or newer was found when replhost was built; %1 and "
                           "rebuild replhost")
                .arg(kInstallHint));

    const Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("java"), QStringLiteral("java"), QStringLiteral("REPLHOST_JAVA"),
         kInstallHint},
        settings);
    if (!program)
        return sdk::unavailableRuntime(program.error().message);
    // /usr/bin/java is a chain of alternatives symlinks; the launcher finds its JDK from its real
    // path, so sessions start that path directly and keep the JDK that was probed even if the
    // alternatives change later.
    QString executable = QFileInfo(*program).canonicalFilePath();
    if (executable.isEmpty())
        executable = *program;

    // `java -version` answers on stderr, which runProbeCommand does not return; --list-modules
    // answers on stdout and also says whether this is a JDK with JShell or only a runtime.
    const Result<QByteArray> answer =
        sdk::runProbeCommand(executable, {QStringLiteral("--list-modules")}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(
            answer.error().message
            + QStringLiteral("; replhost needs a JDK %1 or newer (Java 8 does not know "
                             "--list-modules): %2 or point REPLHOST_JAVA at one")
                  .arg(kMinimumVersion.toString(), kInstallHint));

    static const QRegularExpression basePattern(
        QStringLiteral(R"(^java\.base@(\d+(?:\.\d+)*))"), QRegularExpression::MultilineOption);
    const QString modules = QString::fromUtf8(*answer);
    const QRegularExpressionMatch match = basePattern.match(modules);
    if (!match.hasMatch())
        return sdk::unavailableRuntime(
            QStringLiteral("%1 does not look like a Java launcher (--list-modules did not list "
                           "java.base); %2 or point REPLHOST_JAVA at a JDK's bin/java")
                .arg(executable, kInstallHint));
    const QString version = match.captured(1);
    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(
            QStringLiteral("Java %1 at %2 is too old: replhost needs a JDK %3 or newer; %4 or "
                           "point REPLHOST_JAVA at one")
                .arg(version, executable, kMinimumVersion.toString(), kInstallHint));
    if (!modules.contains(QLatin1String("jdk.jshell@"))
        || !modules.contains(QLatin1String("jdk.compiler@")))
        return sdk::unavailableRuntime(
            QStringLiteral("Java %1 at %2 is a runtime without JShell and javac (a JRE, not a "
                           "JDK); %3 or point REPLHOST_JAVA at a JDK's bin/java")
                .arg(version, executable, kInstallHint));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = executable;
    return info;
}

std::unique_ptr<sdk::Session> JavaHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                         const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable JDK was found") : runtime.reason);
    }
    Result<QString> jar = sdk::materializeDriver(kDriverJar);
    if (!jar)
        return std::make_unique<sdk::FailedSession>(jar.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    spec.arguments = kJvmOptions;
    // Without the JNI library (a build without JNI headers) the driver still runs, but env layers
    // then reach only System.getenv() and the working directory cannot change; it logs that.
    if (QFile::exists(kNativeLibrary)) {
        Result<QString> native = sdk::materializeDriver(kNativeLibrary);
        if (!native)
            return std::make_unique<sdk::FailedSession>(native.error().message);
        spec.arguments << QStringLiteral("-Dreplhost.native=") + native.value();
    }
    spec.arguments << stringList(options.settings.value(QLatin1String("jvm_options")), QChar(' '));
    spec.arguments << QStringLiteral("-cp") << jar.value() << QStringLiteral("replhost.driver.Driver");

    const QStringList classpath =
        stringList(options.settings.value(QLatin1String("classpath")), QLatin1Char(':'));
    if (!classpath.isEmpty())
        spec.initOptions.insert(QStringLiteral("classpath"), QJsonArray::fromStringList(classpath));
    // So that the first snippet of the context that takes a pooled worker runs on compiled
    // javac code, as later ones do.
    if (warmsUp(options.settings)) {
        spec.initOptions.insert(QStringLiteral("warm_up"), true);
        // The driver bounds its warm-up to 15 s of wall time on a loaded machine: room for it
        // on top of the usual start.
        spec.startTimeoutMs += kPooledWarmUpMaxMs;
    }
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::java
