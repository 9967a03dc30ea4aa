// SPDX-License-Identifier: Apache-2.0
#include "opensandboxsandboxspec.h"

#include "core/sandboxsupport.h"

#include <QDir>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSysInfo>

#include <cmath>

#include <sched.h>

namespace replhost::http {

namespace {

const QString kIsolationExtension = QStringLiteral("replhost.isolation");
constexpr const char *kViewPath = "/workspace";

Error unsupported(const QString &message)
{
    return Error{QStringLiteral("unsupported"), message};
}

Error badRequest(const QString &message)
{
    return Error{QStringLiteral("bad_request"), message};
}

// A quantity's number and suffix: "256Mi" → (256, "Mi"); nullopt when it is not one.
std::optional<std::pair<double, QString>> splitQuantity(const QString &text)
{
    static const QRegularExpression pattern(
            QStringLiteral("^\\s*([0-9]+(?:\\.[0-9]+)?(?:[eE][0-9]+)?)\\s*([A-Za-z]*)\\s*$"));
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch())
        return std::nullopt;
    bool ok = false;
    const double number = match.captured(1).toDouble(&ok);
    if (!ok || !std::isfinite(number))
        return std::nullopt;
    return std::pair{number, match.captured(2)};
}

Result<bool> network(const QJsonValue &policy)
{
    if (policy.isUndefined() || policy.isNull())
        return true;
    if (!policy.isObject())
        return badRequest(QStringLiteral("field 'networkPolicy' must be an object"));
    const QJsonObject object = policy.toObject();
    if (object.isEmpty())
        return true;
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != QLatin1String("defaultAction") && it.key() != QLatin1String("egress"))
            return unsupported(QStringLiteral("networkPolicy.%1 is not supported").arg(it.key()));
    }
    if (!object.value(QStringLiteral("egress")).toArray().isEmpty())
        return unsupported(QStringLiteral(
                "per-domain egress rules are not enforced by replhost: a sandbox has the network "
                "or none of it (networkPolicy.defaultAction \"allow\" or \"deny\", without rules)"));
    const QString action = object.value(QStringLiteral("defaultAction")).toString(QStringLiteral("deny"));
    if (action == QLatin1String("deny"))
        return false;
    if (action == QLatin1String("allow"))
        return true;
    return badRequest(QStringLiteral("networkPolicy.defaultAction must be \"allow\" or \"deny\""));
}

// resourceLimits as the workspace's limits: memory_bytes and cpu_millicores, each 0 when not
// asked for (a cpu of at least the CPUs the workers may use holds by itself).
Result<QJsonObject> resourceLimits(const QJsonValue &limits, int workerCpus)
{
    if (limits.isUndefined() || limits.isNull())
        return QJsonObject();
    if (!limits.isObject())
        return badRequest(QStringLiteral("field 'resourceLimits' must be an object of quantities"));
    const QJsonObject object = limits.toObject();
    QJsonObject mapped;
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString value = it.value().isDouble() ? QString::number(it.value().toDouble(), 'g', 17)
                                                    : it.value().toString();
        if (it.key() == QLatin1String("memory")) {
            const std::optional<qint64> parsed = OpenSandboxSandboxSpec::bytes(value);
            if (!parsed)
                return badRequest(QStringLiteral("resourceLimits.memory must be a quantity such as "
                                                 "\"512Mi\" or \"2Gi\", not '%1'").arg(value));
            mapped.insert(QStringLiteral("memory_bytes"), double(*parsed));
        } else if (it.key() == QLatin1String("cpu")) {
            const std::optional<qint64> parsed = OpenSandboxSandboxSpec::millicores(value);
            if (!parsed)
                return badRequest(QStringLiteral("resourceLimits.cpu must be a quantity such as "
                                                 "\"1\" or \"500m\", not '%1'").arg(value));
            // Held by a cgroup's CPU quota; where none can be made the workspace is refused
            // when it is created (WorkerConfinement::checkEnforceable), never made without it.
            if (*parsed < qint64(workerCpus) * 1000)
                mapped.insert(QStringLiteral("cpu_millicores"), double(std::max<qint64>(*parsed, 10)));
        } else {
            return unsupported(QStringLiteral("resourceLimits.%1 is not supported: replhost "
                                              "limits memory and cpu")
                                       .arg(it.key()));
        }
    }
    return mapped;
}

// The platform a request asks for must be this machine's: the code runs on it.
Result<void> checkPlatform(const QJsonValue &platform)
{
    if (platform.isUndefined() || platform.isNull())
        return {};
    if (!platform.isObject())
        return badRequest(QStringLiteral("field 'platform' must be {\"os\", \"arch\"}"));
    const QString cpu = QSysInfo::currentCpuArchitecture();
    const QString arch = cpu == QLatin1String("x86_64") ? QStringLiteral("amd64") : cpu;
    const QJsonObject object = platform.toObject();
    const QString os = object.value(QStringLiteral("os")).toString(QStringLiteral("linux"));
    const QString asked = object.value(QStringLiteral("arch")).toString(arch);
    if (os != QLatin1String("linux") || asked != arch)
        return unsupported(QStringLiteral("platform %1/%2 is not this machine's (linux/%3): the "
                                          "sandbox's code runs here").arg(os, asked, arch));
    return {};
}

// OpenSandbox's host volumes as the workspace's volumes (read-write unless readOnly, as in
// OpenSandbox); the server's --allow-volume list is checked with the rest of the settings.
Result<QJsonArray> volumes(const QJsonValue &json)
{
    QJsonArray out;
    if (json.isUndefined() || json.isNull())
        return out;
    if (!json.isArray())
        return badRequest(QStringLiteral("field 'volumes' must be an array"));
    for (const QJsonValue &item : json.toArray()) {
        const QJsonObject volume = item.toObject();
        const QString name = volume.value(QStringLiteral("name")).toString();
        if (volume.contains(QStringLiteral("pvc")) || volume.contains(QStringLiteral("ossfs")))
            return unsupported(QStringLiteral("volume '%1': only host volumes are supported (no "
                                              "Kubernetes or OSS storage here)").arg(name));
        const QString host = volume.value(QStringLiteral("host")).toObject().value(QStringLiteral("path")).toString();
        const QString mount = volume.value(QStringLiteral("mountPath")).toString();
        const QString subPath = volume.value(QStringLiteral("subPath")).toString();
        if (!QDir::isAbsolutePath(host) || !QDir::isAbsolutePath(mount))
            return badRequest(QStringLiteral("volume '%1' needs host.path and mountPath, both "
                                             "absolute paths").arg(name));
        if (subPath.startsWith(QLatin1Char('/')) || QDir::cleanPath(subPath).startsWith(QLatin1String("..")))
            return badRequest(QStringLiteral("volume '%1': subPath must be relative and stay inside "
                                             "host.path").arg(name));
        out.append(QJsonObject{
                {QStringLiteral("host_path"), subPath.isEmpty() ? host : QDir::cleanPath(host + QLatin1Char('/') + subPath)},
                {QStringLiteral("mount_path"), mount},
                {QStringLiteral("read_only"), volume.value(QStringLiteral("readOnly")).toBool(false)}});
    }
    return out;
}

} // namespace

std::optional<qint64> OpenSandboxSandboxSpec::bytes(const QString &quantity)
{
    const auto split = splitQuantity(quantity);
    if (!split)
        return std::nullopt;
    static const QHash<QString, double> factors{
            {QString(), 1},
            {QStringLiteral("k"), 1e3}, {QStringLiteral("K"), 1e3}, {QStringLiteral("M"), 1e6},
            {QStringLiteral("G"), 1e9}, {QStringLiteral("T"), 1e12},
            {QStringLiteral("Ki"), 1024.0}, {QStringLiteral("Mi"), 1024.0 * 1024},
            {QStringLiteral("Gi"), 1024.0 * 1024 * 1024},
            {QStringLiteral("Ti"), 1024.0 * 1024 * 1024 * 1024},
    };
    const auto factor = factors.constFind(split->second);
    if (factor == factors.cend())
        return std::nullopt;
    const double value = split->first * *factor;
    if (value < 1 || value > 9.0e15 || value != std::floor(value))
        return std::nullopt;
    return qint64(value);
}

std::optional<qint64> OpenSandboxSandboxSpec::millicores(const QString &quantity)
{
    const auto split = splitQuantity(quantity);
    if (!split || (!split->second.isEmpty() && split->second != QLatin1String("m")))
        return std::nullopt;
    const double value = split->second.isEmpty() ? split->first * 1000 : split->first;
    if (value <= 0 || value > 1.0e9)
        return std::nullopt;
    return qint64(std::ceil(value));
}

int OpenSandboxSandboxSpec::cpusOfThisProcess()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) != 0)
        return 1;
    return std::max(1, CPU_COUNT(&set));
}

Result<QJsonObject> OpenSandboxSandboxSpec::workspaceSettings(const QJsonObject &request,
                                                             const core::SandboxSupport &sandbox,
                                                             int workerCpus)
{
    bool isolated = true;
    const QJsonValue extensions = request.value(QStringLiteral("extensions"));
    if (!extensions.isUndefined() && !extensions.isNull()) {
        if (!extensions.isObject())
            return badRequest(QStringLiteral("field 'extensions' must be an object"));
        const QJsonObject object = extensions.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it.key() != kIsolationExtension)
                return unsupported(QStringLiteral("extension '%1' is not supported (replhost "
                                                  "knows '%2')").arg(it.key(), kIsolationExtension));
            const QString value = it.value().toString();
            if (value != QLatin1String("none") && value != QLatin1String("sandbox"))
                return badRequest(QStringLiteral("extension '%1' must be \"sandbox\" or \"none\"")
                                          .arg(kIsolationExtension));
            isolated = value == QLatin1String("sandbox");
        }
    }
    if (const Result<void> platform = checkPlatform(request.value(QStringLiteral("platform"))); !platform)
        return platform.error();
    if (request.value(QStringLiteral("secureAccess")).toBool())
        return unsupported(QStringLiteral("secureAccess is not supported: execd is reached with the "
                                          "server's token, which the endpoint's headers carry"));
    if (request.value(QStringLiteral("credentialProxy")).toObject().value(QStringLiteral("enabled")).toBool())
        return unsupported(QStringLiteral("credentialProxy is not supported: replhost has no egress proxy"));
    const QJsonValue requests = request.value(QStringLiteral("resourceRequests"));
    if (requests.isObject() ? !requests.toObject().isEmpty() : !(requests.isUndefined() || requests.isNull()))
        return unsupported(QStringLiteral("resourceRequests are not supported: replhost reserves "
                                          "nothing for a sandbox (resourceLimits.memory is enforced)"));
    const Result<QJsonObject> limits = resourceLimits(request.value(QStringLiteral("resourceLimits")), workerCpus);
    if (!limits)
        return limits.error();
    const Result<bool> allowed = network(request.value(QStringLiteral("networkPolicy")));
    if (!allowed)
        return allowed.error();
    const Result<QJsonArray> mounts = volumes(request.value(QStringLiteral("volumes")));
    if (!mounts)
        return mounts.error();
    if (isolated && !sandbox.available())
        return Error{QStringLiteral("unavailable"),
                     QStringLiteral("an OpenSandbox sandbox is a replhost sandbox, which this machine "
                                    "cannot make: %1 (or ask for a plain directory with extensions "
                                    "{\"%2\": \"none\"})").arg(sandbox.reason(), kIsolationExtension)};
    if (!isolated && !*allowed)
        return unsupported(QStringLiteral("networkPolicy deny needs a sandbox: a workspace without "
                                          "isolation has the server's network"));
    if (!isolated && !mounts->isEmpty())
        return unsupported(QStringLiteral("volumes need a sandbox: a workspace without isolation "
                                          "has no mounts of its own"));

    QJsonObject settings{{QStringLiteral("isolation"), isolated ? QStringLiteral("sandbox") : QStringLiteral("none")}};
    if (isolated) {
        settings.insert(QStringLiteral("network"), *allowed);
        // A container's code sees its files at its own paths, not the host's.
        settings.insert(QStringLiteral("view_path"), QLatin1String(kViewPath));
    }
    if (!mounts->isEmpty())
        settings.insert(QStringLiteral("volumes"), *mounts);
    if (!limits->isEmpty())
        settings.insert(QStringLiteral("limits"), *limits);
    return settings;
}

} // namespace replhost::http
