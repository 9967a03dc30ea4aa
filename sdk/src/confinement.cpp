// SPDX-License-Identifier: Apache-2.0
#include "confinement.h"

#include "sandbox.h"

#include "replhost/sdk/confinedcommand.h"

#include <QDir>
#include <QJsonArray>
#include <QSet>

#include <cmath>

namespace replhost::sdk {

namespace {

const QString kConfinement = QStringLiteral("confinement");

// Where the launcher puts the sandbox's seccomp filter for bwrap: the first descriptor after a
// worker's four pipes (bwrap closes it once read, so the worker still has nothing from 5 up).
constexpr int kSeccompFd = 5;

Error badField(const QString &field, const QString &problem)
{
    return makeError(QStringLiteral("bad_request"),
                     QStringLiteral("confinement.%1 %2").arg(field, problem));
}

// Keys of `object` that are not in `known`, for the error that names them.
QStringList unknownKeys(const QJsonObject &object, const QSet<QString> &known)
{
    QStringList unknown;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it)
        if (!known.contains(it.key()))
            unknown.append(it.key());
    return unknown;
}

// A whole number >= 0 that fits the launcher's option (19 decimal digits).
Result<qint64> limitValue(const QJsonObject &limits, const QString &key)
{
    const QJsonValue value = limits.value(key);
    if (value.isUndefined() || value.isNull())
        return qint64(0);
    const double n = value.toDouble(-1);
    if (!value.isDouble() || n < 0 || n != std::floor(n) || n > 9.0e18)
        return badField(QStringLiteral("limits.") + key,
                        QStringLiteral("must be a whole number >= 0 (0 = no limit)"));
    return qint64(n);
}

} // namespace

Result<Confinement> Confinement::fromSettings(const QJsonObject &settings)
{
    const QJsonValue value = settings.value(kConfinement);
    Confinement c;
    if (value.isUndefined() || value.isNull())
        return c;
    if (!value.isObject())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("confinement must be an object"));
    const QJsonObject object = value.toObject();
    if (object.isEmpty())
        return c;
    if (const QStringList unknown = unknownKeys(
                object, {QStringLiteral("launcher"), QStringLiteral("limits"),
                         QStringLiteral("cgroups"), QStringLiteral("sandbox")});
        !unknown.isEmpty())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("confinement has unknown keys: %1")
                             .arg(unknown.join(QStringLiteral(", "))));

    const QJsonValue launcher = object.value(QStringLiteral("launcher"));
    if (!launcher.isString() || !QDir::isAbsolutePath(launcher.toString()))
        return badField(QStringLiteral("launcher"),
                        QStringLiteral("must be the absolute path of replhost-confine"));
    c.m_launcher = launcher.toString();

    const QJsonValue limitsValue = object.value(QStringLiteral("limits"));
    if (!limitsValue.isUndefined() && !limitsValue.isNull()) {
        if (!limitsValue.isObject())
            return badField(QStringLiteral("limits"), QStringLiteral("must be an object"));
        const QJsonObject limits = limitsValue.toObject();
        if (const QStringList unknown = unknownKeys(
                    limits, {QStringLiteral("memory_bytes"), QStringLiteral("cpu_seconds"),
                             QStringLiteral("processes"), QStringLiteral("file_size_bytes"),
                             QStringLiteral("cpu_millicores")});
            !unknown.isEmpty())
            return badField(QStringLiteral("limits"),
                            QStringLiteral("has unknown keys: %1")
                                .arg(unknown.join(QStringLiteral(", "))));
        qint64 *targets[] = {&c.m_limits.memoryBytes, &c.m_limits.cpuSeconds,
                             &c.m_limits.processes, &c.m_limits.fileSizeBytes,
                             &c.m_limits.cpuMillicores};
        const QString keys[] = {QStringLiteral("memory_bytes"), QStringLiteral("cpu_seconds"),
                                QStringLiteral("processes"), QStringLiteral("file_size_bytes"),
                                QStringLiteral("cpu_millicores")};
        for (int i = 0; i < 5; ++i) {
            const auto n = limitValue(limits, keys[i]);
            if (!n)
                return n.error();
            *targets[i] = *n;
        }
    }

    const QJsonValue cgroups = object.value(QStringLiteral("cgroups"));
    if (!cgroups.isUndefined() && !cgroups.isNull()) {
        if (!cgroups.isArray())
            return badField(QStringLiteral("cgroups"),
                            QStringLiteral("must be an array of cgroup.procs paths"));
        for (const QJsonValue entry : cgroups.toArray()) {
            if (!entry.isString() || !QDir::isAbsolutePath(entry.toString()))
                return badField(QStringLiteral("cgroups"),
                                QStringLiteral("entries must be absolute paths of cgroup.procs "
                                               "files"));
            c.m_cgroups.append(entry.toString());
        }
    }

    const QJsonValue sandbox = object.value(QStringLiteral("sandbox"));
    if (!sandbox.isUndefined() && !sandbox.isNull()) {
        if (!sandbox.isObject() || sandbox.toObject().isEmpty())
            return badField(QStringLiteral("sandbox"), QStringLiteral("must be an object"));
        if (auto policy = parseSandboxPolicy(sandbox.toObject()); !policy)
            return policy.error();
        c.m_sandbox = sandbox.toObject();
    }
    return c;
}

std::optional<SandboxPolicy> Confinement::sandboxPolicy() const
{
    if (!sandboxed())
        return std::nullopt;
    Result<SandboxPolicy> policy = parseSandboxPolicy(m_sandbox);
    return policy ? std::optional<SandboxPolicy>(*policy) : std::nullopt;
}

Result<QStringList> Confinement::command(const QString &program, const QStringList &arguments,
                                         const QString &workingDirectory,
                                         ArgumentPaths argumentPaths) const
{
    if (isEmpty())
        return QStringList{program} + arguments;
    if (m_limits.cpuMillicores > 0)
        return makeError(QStringLiteral("unavailable"),
                         QStringLiteral("limits.cpu_millicores %1 is held only by a cgroup's CPU "
                                        "quota, and none was made for this process")
                             .arg(m_limits.cpuMillicores));
    QStringList argv{m_launcher};
    const std::pair<const char *, qint64> limits[] = {
            {"--rlimit-as", m_limits.memoryBytes},
            {"--rlimit-cpu", m_limits.cpuSeconds},
            {"--rlimit-nproc", m_limits.processes},
            {"--rlimit-fsize", m_limits.fileSizeBytes}};
    for (const auto &[option, value] : limits)
        if (value > 0)
            argv << QLatin1String(option) << QString::number(value);
    for (const QString &procs : m_cgroups)
        argv << QStringLiteral("--cgroup") << procs;
    if (sandboxed()) {
        // The inner command's paths decide what the sandbox mounts besides the system.
        const auto policy = parseSandboxPolicy(m_sandbox);
        if (!policy)
            return policy.error();
        QStringList mounted{m_launcher, program};
        if (argumentPaths == ArgumentPaths::Mounted)
            mounted += arguments;
        auto bwrap = bwrapCommand(*policy, mounted, workingDirectory, kSeccompFd);
        if (!bwrap)
            return bwrap.error();
        argv << QStringLiteral("--seccomp-fd") << QString::number(kSeccompFd)
             << QStringLiteral("--ignore-signals") << QStringLiteral("INT,QUIT")
             << QStringLiteral("--") << *bwrap << QStringLiteral("--") << m_launcher
             << QStringLiteral("--default-signals");
    }
    argv << QStringLiteral("--") << program << arguments;
    return argv;
}

Result<ConfinedCommand> confinedCommand(const QJsonObject &settings, const QString &program,
                                        const QStringList &arguments,
                                        const QString &workingDirectory)
{
    auto confinement = Confinement::fromSettings(settings);
    if (!confinement)
        return confinement.error();
    // The arguments of such a process are a user's (a shell command's text): a path in them
    // must never become a mount.
    auto argv = confinement->command(program, arguments, workingDirectory,
                                     Confinement::ArgumentPaths::Ignored);
    if (!argv)
        return argv.error();
    return ConfinedCommand{std::move(*argv), confinement->sandboxed()};
}

} // namespace replhost::sdk
