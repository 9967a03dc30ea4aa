// SPDX-License-Identifier: Apache-2.0
#include "opensandboxregistry.h"

#include "core/workspacemanager.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>

#include <climits>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcSandboxes, "replhost.http.opensandbox", QtInfoMsg)

namespace {

constexpr int kFormatVersion = 1;

QJsonObject recordJson(const OpenSandboxRegistry::Record &record)
{
    QJsonObject metadata;
    for (auto it = record.metadata.cbegin(); it != record.metadata.cend(); ++it)
        metadata.insert(it.key(), it.value());
    return {{QStringLiteral("id"), record.id},
            {QStringLiteral("image"), record.image},
            {QStringLiteral("entrypoint"), QJsonArray::fromStringList(record.entrypoint)},
            {QStringLiteral("metadata"), metadata},
            {QStringLiteral("created_at"), record.createdAt},
            {QStringLiteral("expires_at"), record.expiresAt},
            {QStringLiteral("owns_directory"), record.ownsDirectory}};
}

OpenSandboxRegistry::Record recordFrom(const QJsonObject &json)
{
    OpenSandboxRegistry::Record record;
    record.id = json.value(QStringLiteral("id")).toString();
    record.image = json.value(QStringLiteral("image")).toString();
    for (const QJsonValue &part : json.value(QStringLiteral("entrypoint")).toArray())
        record.entrypoint.append(part.toString());
    const QJsonObject metadata = json.value(QStringLiteral("metadata")).toObject();
    for (auto it = metadata.begin(); it != metadata.end(); ++it)
        record.metadata.insert(it.key(), it.value().toString());
    record.createdAt = json.value(QStringLiteral("created_at")).toInteger();
    record.expiresAt = json.value(QStringLiteral("expires_at")).toInteger();
    record.ownsDirectory = json.value(QStringLiteral("owns_directory")).toBool();
    return record;
}

} // namespace

OpenSandboxRegistry::OpenSandboxRegistry(core::WorkspaceManager &workspaces, QString filePath,
                                         QObject *parent)
    : QObject(parent), m_workspaces(workspaces), m_filePath(std::move(filePath))
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &OpenSandboxRegistry::expireDue);
    connect(&m_workspaces, &core::WorkspaceManager::workspaceRemoved, this,
            [this](const QString &name) { forget(name); });
}

Result<void> OpenSandboxRegistry::load()
{
    QFile file(m_filePath);
    if (!file.exists())
        return {};
    if (!file.open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot read %1: %2")
                                                       .arg(m_filePath, file.errorString()));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return makeError(QStringLiteral("io"),
                         QStringLiteral("%1 is not a sandbox registry (%2); move it away to start "
                                        "with an empty one").arg(m_filePath, error.errorString()));
    bool dropped = false;
    for (const QJsonValue &value : document.object().value(QStringLiteral("sandboxes")).toArray()) {
        const Record record = recordFrom(value.toObject());
        if (record.id.isEmpty() || !m_workspaces.get(record.id)) {
            dropped = true;
            continue;
        }
        m_records.insert(record.id, record);
    }
    arm();
    if (dropped)
        return save();
    return {};
}

std::optional<OpenSandboxRegistry::Record> OpenSandboxRegistry::find(const QString &id) const
{
    const auto it = m_records.constFind(id);
    if (it == m_records.cend())
        return std::nullopt;
    return *it;
}

QList<OpenSandboxRegistry::Record> OpenSandboxRegistry::all() const
{
    return m_records.values();
}

Result<void> OpenSandboxRegistry::put(const Record &record)
{
    m_records.insert(record.id, record);
    arm();
    return save();
}

void OpenSandboxRegistry::forget(const QString &id)
{
    if (m_records.remove(id) == 0)
        return;
    arm();
    if (const Result<void> saved = save(); !saved)
        qCWarning(lcSandboxes).noquote() << saved.error().message;
}

Result<void> OpenSandboxRegistry::save() const
{
    QJsonArray sandboxes;
    for (const Record &record : m_records)
        sandboxes.append(recordJson(record));
    const QJsonObject document{{QStringLiteral("version"), kFormatVersion},
                               {QStringLiteral("sandboxes"), sandboxes}};
    QDir().mkpath(QFileInfo(m_filePath).absolutePath());
    QSaveFile file(m_filePath);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(QJsonDocument(document).toJson()) < 0 || !file.commit()) {
        return makeError(QStringLiteral("io"), QStringLiteral("cannot save %1: %2")
                                                       .arg(m_filePath, file.errorString()));
    }
    return {};
}

void OpenSandboxRegistry::arm()
{
    qint64 earliest = 0;
    for (const Record &record : std::as_const(m_records)) {
        if (record.expiresAt > 0 && (earliest == 0 || record.expiresAt < earliest))
            earliest = record.expiresAt;
    }
    if (earliest == 0) {
        m_timer.stop();
        return;
    }
    // QTimer takes an int of ms (about 24 days); a later expiry re-arms when the timer fires.
    const qint64 wait = earliest - QDateTime::currentMSecsSinceEpoch();
    m_timer.start(int(std::clamp<qint64>(wait, 0, INT_MAX)));
}

void OpenSandboxRegistry::expireDue()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<Record> due;
    for (const Record &record : std::as_const(m_records)) {
        if (record.expiresAt > 0 && record.expiresAt <= now)
            due.append(record);
    }
    for (const Record &record : std::as_const(due)) {
        if (const Result<void> removed = m_workspaces.remove(record.id, record.ownsDirectory); !removed)
            qCWarning(lcSandboxes).noquote() << "sandbox" << record.id << "expired but its workspace"
                                             << "could not be deleted:" << removed.error().message;
        else
            qCInfo(lcSandboxes).noquote() << "sandbox" << record.id << "expired; its workspace was deleted";
        // Never retried: a failure would repeat, and a past expiry would fire at once forever.
        forget(record.id);
    }
    arm();
}

} // namespace replhost::http
