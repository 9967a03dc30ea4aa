// SPDX-License-Identifier: Apache-2.0
#include "workspacesettings.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonValue>
#include <QStringList>

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>
#include <variant>

namespace replhost::core {

namespace {

using Limits = WorkspaceSettings::Limits;
using Restore = WorkspaceSettings::Restore;
using History = WorkspaceSettings::History;

// One integer setting of a group ("limits", "restore", "history"): its JSON name, where it
// lives, and the values it takes besides 0 (no limit). The bounds keep values meaningful: a
// timer takes an int, JSON numbers are exact up to 2^53, and a worker cannot start with a few
// bytes of memory.
template <typename Group>
struct IntField {
    const char *name;
    std::variant<int Group::*, qint64 Group::*> member;
    qint64 min;
    qint64 max;
};

constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kMaxBytes = qint64(1) << 50;

const IntField<Limits> kLimitFields[] = {
    {"max_contexts", &Limits::maxContexts, 1, 100000},
    {"timeout_ms", &Limits::timeoutMs, 1, INT_MAX},
    {"output_bytes", &Limits::outputBytes, 1, kMaxBytes},
    {"memory_bytes", &Limits::memoryBytes, kMiB, kMaxBytes},
    {"cpu_seconds", &Limits::cpuSeconds, 1, INT_MAX},
    {"processes", &Limits::processes, 1, 4194304},  // the kernel's largest pid_max
    {"file_size_bytes", &Limits::fileSizeBytes, 1, kMaxBytes},
    // The kernel's smallest quota is 1 ms in a 100 ms period.
    {"cpu_millicores", &Limits::cpuMillicores, 10, 1000000},
};

const IntField<Restore> kRestoreFields[] = {
    {"max_replay_cells", &Restore::maxReplayCells, 1, INT_MAX},
    {"max_replay_seconds", &Restore::maxReplaySeconds, 1, INT_MAX},
};

const IntField<History> kHistoryFields[] = {
    {"max_executions", &History::maxExecutions, 1, INT_MAX},
    {"max_bytes", &History::maxBytes, 1, kMaxBytes},
    {"max_age", &History::maxAge, 1, qint64(100) * 365 * 24 * 3600},
};

const QString kLimits = QStringLiteral("limits");
const QString kRestore = QStringLiteral("restore");
const QString kHistory = QStringLiteral("history");
const QString kIsolation = QStringLiteral("isolation");
const QString kNetwork = QStringLiteral("network");
const QString kVolumes = QStringLiteral("volumes");
const QString kViewPath = QStringLiteral("view_path");

Error badSetting(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

template <typename Group>
qint64 fieldValue(const Group &group, const IntField<Group> &field)
{
    return std::visit([&group](auto member) { return qint64(group.*member); }, field.member);
}

template <typename Group>
void setFieldValue(Group &group, const IntField<Group> &field, qint64 value)
{
    std::visit([&group, value](auto member) {
        using Value = std::remove_reference_t<decltype(group.*member)>;
        group.*member = Value(value);
    }, field.member);
}

template <typename Group>
Result<qint64> parseField(const QString &groupName, const IntField<Group> &field,
                          const QJsonValue &value)
{
    const double number = value.toDouble(-1);
    const bool integral = value.isDouble() && std::floor(number) == number;
    if (integral && (number == 0 || (number >= double(field.min) && number <= double(field.max))))
        return qint64(number);
    return badSetting(QStringLiteral("settings field %1.%2 must be 0 (no limit) or an integer "
                                     "from %3 to %4")
                          .arg(groupName, QLatin1String(field.name))
                          .arg(field.min)
                          .arg(field.max));
}

template <typename Group, std::size_t N>
Result<void> applyGroup(const QString &groupName, const IntField<Group> (&fields)[N],
                        const QJsonValue &json, Group &group)
{
    if (!json.isObject())
        return badSetting(QStringLiteral("settings field %1 must be an object").arg(groupName));
    const QJsonObject object = json.toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const IntField<Group> *field = nullptr;
        for (const IntField<Group> &candidate : fields) {
            if (it.key() == QLatin1String(candidate.name))
                field = &candidate;
        }
        if (!field) {
            QStringList names;
            for (const IntField<Group> &known : fields)
                names.append(QLatin1String(known.name));
            return badSetting(QStringLiteral("unknown settings field %1.%2; the fields of %1 are %3")
                                  .arg(groupName, it.key(), names.join(QLatin1String(", "))));
        }
        if (it.value().isNull())
            continue;  // the default stays
        Result<qint64> value = parseField(groupName, *field, it.value());
        if (!value)
            return value.error();
        setFieldValue(group, *field, *value);
    }
    return {};
}

template <typename Group, std::size_t N>
QJsonObject groupJson(const IntField<Group> (&fields)[N], const Group &group)
{
    QJsonObject json;
    for (const IntField<Group> &field : fields)
        json.insert(QLatin1String(field.name), fieldValue(group, field));
    return json;
}

bool isSameOrInside(const QString &path, const QString &dir)
{
    return path == dir || dir == QLatin1String("/")
           || (path.startsWith(dir) && path.at(dir.size()) == QLatin1Char('/'));
}

Result<QList<WorkspaceSettings::Volume>> parseVolumes(const QJsonValue &json,
                                                      const QStringList &allowedRoots)
{
    if (!json.isArray())
        return badSetting(QStringLiteral("settings field volumes must be an array of "
                                         "{host_path, mount_path, read_only}"));
    QList<WorkspaceSettings::Volume> volumes;
    for (const QJsonValue &item : json.toArray()) {
        const QJsonObject object = item.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it.key() != QLatin1String("host_path") && it.key() != QLatin1String("mount_path")
                && it.key() != QLatin1String("read_only"))
                return badSetting(QStringLiteral("unknown settings field volumes[].%1; a volume has "
                                                 "host_path, mount_path and read_only").arg(it.key()));
        }
        const QString host = object.value(QStringLiteral("host_path")).toString();
        const QString mount = object.value(QStringLiteral("mount_path")).toString();
        const QJsonValue readOnly = object.value(QStringLiteral("read_only"));
        if (!item.isObject() || !QDir::isAbsolutePath(host) || !QDir::isAbsolutePath(mount)
            || !(readOnly.isUndefined() || readOnly.isBool()))
            return badSetting(QStringLiteral("settings field volumes[] must be {\"host_path\": absolute "
                                             "path, \"mount_path\": absolute path, \"read_only\": "
                                             "true or false}"));
        const QString target = QDir::cleanPath(mount);
        for (const char *system : {"/", "/proc", "/dev", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64"}) {
            const QString place = QLatin1String(system);
            if (target == place || (place != QLatin1String("/") && isSameOrInside(target, place)))
                return badSetting(QStringLiteral("settings field volumes[].mount_path %1 is in the "
                                                 "sandbox's system directories").arg(target));
        }
        const QFileInfo info(host);
        const QString canonical = info.canonicalFilePath();
        if (canonical.isEmpty() || !info.isDir())
            return badSetting(QStringLiteral("settings field volumes[].host_path %1 is not a "
                                             "directory on this machine").arg(host));
        const bool allowed = std::any_of(allowedRoots.cbegin(), allowedRoots.cend(), [&](const QString &root) {
            const QString realRoot = QFileInfo(root).canonicalFilePath();
            return !realRoot.isEmpty() && isSameOrInside(canonical, realRoot);
        });
        if (!allowed)
            return badSetting(QStringLiteral("settings field volumes[].host_path %1 is not under a "
                                             "directory the server allows volumes from (%2)")
                                      .arg(host, allowedRoots.isEmpty()
                                                         ? QStringLiteral("none: start it with --allow-volume DIR")
                                                         : allowedRoots.join(QStringLiteral(", "))));
        volumes.append({canonical, target, readOnly.toBool(true)});
    }
    return volumes;
}

Result<QString> parseViewPath(const QJsonValue &value)
{
    const QString path = value.toString();
    if (!value.isString() || !QDir::isAbsolutePath(path) || path.split(QLatin1Char('/')).contains(QStringLiteral("..")))
        return badSetting(QStringLiteral("settings field view_path must be an absolute path "
                                         "without \"..\", such as \"/home/user\""));
    const QString view = QDir::cleanPath(path);
    for (const char *system : {"/", "/tmp", "/proc", "/dev", "/usr", "/etc", "/opt", "/bin",
                               "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        const QString place = QLatin1String(system);
        if (view == place || (place != QLatin1String("/") && isSameOrInside(view, place)))
            return badSetting(QStringLiteral("settings field view_path %1 is in the sandbox's "
                                             "system directories or its /tmp").arg(view));
    }
    return view;
}

} // namespace

Result<WorkspaceSettings> WorkspaceSettings::fromJson(const QJsonObject &json,
                                                      const WorkspaceSettings &defaults)
{
    WorkspaceSettings settings = defaults;
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QJsonValue value = it.value();
        if (value.isNull())
            continue;
        if (it.key() == kLimits) {
            if (auto r = applyGroup(kLimits, kLimitFields, value, settings.limits); !r)
                return r.error();
        } else if (it.key() == kRestore) {
            if (auto r = applyGroup(kRestore, kRestoreFields, value, settings.restore); !r)
                return r.error();
        } else if (it.key() == kHistory) {
            if (auto r = applyGroup(kHistory, kHistoryFields, value, settings.history); !r)
                return r.error();
        } else if (it.key() == kIsolation) {
            if (value == QLatin1String("none"))
                settings.isolation = Isolation::None;
            else if (value == QLatin1String("sandbox"))
                settings.isolation = Isolation::Sandbox;
            else
                return badSetting(QStringLiteral("settings field isolation must be \"none\" or "
                                                 "\"sandbox\""));
        } else if (it.key() == kVolumes) {
            Result<QList<Volume>> volumes = parseVolumes(value, defaults.allowedVolumeRoots);
            if (!volumes)
                return volumes.error();
            settings.volumes = std::move(*volumes);
        } else if (it.key() == kViewPath) {
            Result<QString> view = parseViewPath(value);
            if (!view)
                return view.error();
            settings.viewPath = std::move(*view);
        } else if (it.key() == kNetwork) {
            if (!value.isBool())
                return badSetting(QStringLiteral("settings field network must be true or false"));
            settings.network = value.toBool();
            settings.networkChosen = true;
        } else {
            return badSetting(QStringLiteral("unknown settings field %1; the settings are limits, "
                                             "restore, history, isolation, network, volumes and "
                                             "view_path")
                                  .arg(it.key()));
        }
    }
    if (!settings.volumes.isEmpty() && settings.isolation != Isolation::Sandbox)
        return badSetting(QStringLiteral("settings field volumes needs isolation \"sandbox\": a "
                                         "workspace without one has no mounts of its own"));
    if (!settings.viewPath.isEmpty() && settings.isolation != Isolation::Sandbox)
        return badSetting(QStringLiteral("settings field view_path needs isolation \"sandbox\": "
                                         "a workspace without one sees the host's file system"));
    for (const Volume &volume : settings.volumes) {
        if (settings.viewPath.isEmpty())
            break;
        // A kept /tmp is a link into the workspace: a volume there would have its mount point
        // made inside the workspace, as would one over the view itself.
        if (isSameOrInside(volume.mountPath, QStringLiteral("/tmp"))
            || isSameOrInside(settings.viewPath, volume.mountPath))
            return badSetting(QStringLiteral("settings field volumes[].mount_path %1 is /tmp or "
                                             "holds the view_path %2: a sandbox with a view keeps "
                                             "/tmp in its workspace").arg(volume.mountPath, settings.viewPath));
    }
    if (!settings.networkChosen)
        settings.network = settings.isolation != Isolation::Sandbox;
    return settings;
}

QJsonObject WorkspaceSettings::toJson() const
{
    QJsonObject json{{kLimits, groupJson(kLimitFields, limits)},
                     {kRestore, groupJson(kRestoreFields, restore)},
                     {kHistory, groupJson(kHistoryFields, history)},
                     {kIsolation, isolationName(isolation)},
                     {kNetwork, network},
                     {kVolumes, volumesJson()}};
    if (!viewPath.isEmpty())
        json.insert(kViewPath, viewPath);
    return json;
}

QJsonArray WorkspaceSettings::volumesJson() const
{
    QJsonArray list;
    for (const Volume &volume : volumes)
        list.append(QJsonObject{{QStringLiteral("host_path"), volume.hostPath},
                                {QStringLiteral("mount_path"), volume.mountPath},
                                {QStringLiteral("read_only"), volume.readOnly}});
    return list;
}

QJsonObject WorkspaceSettings::mergePatch(const QJsonObject &overrides, const QJsonObject &patch)
{
    QJsonObject merged = overrides;
    for (auto it = patch.begin(); it != patch.end(); ++it) {
        if (it.value().isNull())
            merged.remove(it.key());
        else if (it.value().isObject())
            merged.insert(it.key(), mergePatch(merged.value(it.key()).toObject(),
                                               it.value().toObject()));
        else
            merged.insert(it.key(), it.value());
    }
    return merged;
}

int WorkspaceSettings::effectiveTimeoutMs(int requestedMs) const
{
    if (limits.timeoutMs == 0)
        return requestedMs;
    if (requestedMs <= 0 || requestedMs > limits.timeoutMs)
        return limits.timeoutMs;
    return requestedMs;
}

QString WorkspaceSettings::isolationName(Isolation isolation)
{
    return isolation == Isolation::Sandbox ? QStringLiteral("sandbox") : QStringLiteral("none");
}

} // namespace replhost::core
