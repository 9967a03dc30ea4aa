// SPDX-License-Identifier: Apache-2.0
#include "workspacesettings.h"

#include <QJsonValue>
#include <QStringList>

#include <climits>
#include <cmath>
#include <type_traits>
#include <variant>

namespace replhost::core {

namespace {

using Limits = WorkspaceSettings::Limits;

// One integer limit: its JSON name, where it lives, and the values it takes besides 0 (no
// limit). The bounds keep values meaningful: a timer takes an int, JSON numbers are exact up to
// 2^53, and a worker cannot start with a few bytes of memory.
struct LimitField {
    const char *name;
    std::variant<int Limits::*, qint64 Limits::*> member;
    qint64 min;
    qint64 max;
};

constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kMaxBytes = qint64(1) << 50;

const LimitField kLimitFields[] = {
    {"max_contexts", &Limits::maxContexts, 1, 100000},
    {"timeout_ms", &Limits::timeoutMs, 1, INT_MAX},
    {"output_bytes", &Limits::outputBytes, 1, kMaxBytes},
    {"memory_bytes", &Limits::memoryBytes, kMiB, kMaxBytes},
    {"cpu_seconds", &Limits::cpuSeconds, 1, INT_MAX},
    {"processes", &Limits::processes, 1, 4194304},  // the kernel's largest pid_max
    {"file_size_bytes", &Limits::fileSizeBytes, 1, kMaxBytes},
};

const QString kLimits = QStringLiteral("limits");
const QString kIsolation = QStringLiteral("isolation");
const QString kNetwork = QStringLiteral("network");

Error badSetting(const QString &message)
{
    return makeError(QStringLiteral("bad_request"), message);
}

qint64 limitValue(const Limits &limits, const LimitField &field)
{
    return std::visit([&limits](auto member) { return qint64(limits.*member); }, field.member);
}

void setLimitValue(Limits &limits, const LimitField &field, qint64 value)
{
    std::visit([&limits, value](auto member) {
        using Value = std::remove_reference_t<decltype(limits.*member)>;
        limits.*member = Value(value);
    }, field.member);
}

Result<qint64> parseLimit(const LimitField &field, const QJsonValue &value)
{
    const double number = value.toDouble(-1);
    const bool integral = value.isDouble() && std::floor(number) == number;
    if (integral && (number == 0 || (number >= double(field.min) && number <= double(field.max))))
        return qint64(number);
    return badSetting(QStringLiteral("settings field limits.%1 must be 0 (no limit) or an integer "
                                     "from %2 to %3")
                          .arg(QLatin1String(field.name))
                          .arg(field.min)
                          .arg(field.max));
}

QString knownLimitNames()
{
    QStringList names;
    for (const LimitField &field : kLimitFields)
        names.append(QLatin1String(field.name));
    return names.join(QLatin1String(", "));
}

Result<void> applyLimits(const QJsonValue &json, Limits &limits)
{
    if (!json.isObject())
        return badSetting(QStringLiteral("settings field limits must be an object"));
    const QJsonObject object = json.toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const LimitField *field = nullptr;
        for (const LimitField &candidate : kLimitFields) {
            if (it.key() == QLatin1String(candidate.name))
                field = &candidate;
        }
        if (!field)
            return badSetting(QStringLiteral("unknown settings field limits.%1; the limits are %2")
                                  .arg(it.key(), knownLimitNames()));
        if (it.value().isNull())
            continue;  // the default stays
        Result<qint64> value = parseLimit(*field, it.value());
        if (!value)
            return value.error();
        setLimitValue(limits, *field, *value);
    }
    return {};
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
            if (auto r = applyLimits(value, settings.limits); !r)
                return r.error();
        } else if (it.key() == kIsolation) {
            if (value == QLatin1String("none"))
                settings.isolation = Isolation::None;
            else if (value == QLatin1String("sandbox"))
                settings.isolation = Isolation::Sandbox;
            else
                return badSetting(QStringLiteral("settings field isolation must be \"none\" or "
                                                 "\"sandbox\""));
        } else if (it.key() == kNetwork) {
            if (!value.isBool())
                return badSetting(QStringLiteral("settings field network must be true or false"));
            settings.network = value.toBool();
            settings.networkChosen = true;
        } else {
            return badSetting(QStringLiteral("unknown settings field %1; the settings are limits, "
                                             "isolation and network")
                                  .arg(it.key()));
        }
    }
    if (!settings.networkChosen)
        settings.network = settings.isolation != Isolation::Sandbox;
    return settings;
}

QJsonObject WorkspaceSettings::toJson() const
{
    QJsonObject limitsJson;
    for (const LimitField &field : kLimitFields)
        limitsJson.insert(QLatin1String(field.name), limitValue(limits, field));
    return {{kLimits, limitsJson},
            {kIsolation, isolationName(isolation)},
            {kNetwork, network}};
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
