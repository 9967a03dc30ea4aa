// SPDX-License-Identifier: Apache-2.0
#include "workspacemanager.h"

#include "envlayers.h"
#include "storage/store.h"
#include "workerconfinement.h"
#include "workspacedirectory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

#include <sys/stat.h>

namespace replhost::core {

using storage::EnvScope;

namespace {

// A volume never shows the data directory (the database, the token, the other workspaces),
// whatever directories the server allows volumes from.
Result<void> checkVolumesHideDataDir(const WorkspaceSettings &settings, const QString &dataDir)
{
    const QString data = QFileInfo(dataDir).canonicalFilePath();
    if (data.isEmpty())
        return {};
    const auto within = [](const QString &path, const QString &dir) {
        return path == dir || dir == QLatin1String("/") || path.startsWith(dir + QLatin1Char('/'));
    };
    for (const WorkspaceSettings::Volume &volume : settings.volumes) {
        if (within(volume.hostPath, data) || within(data, volume.hostPath))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("settings field volumes[].host_path %1 would show the "
                                            "server's data directory").arg(volume.hostPath));
    }
    return {};
}

const QString kLimits = QStringLiteral("limits");

QString compactJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// Where the records of the directories replhost created live (WorkspaceDirectory).
QString recordsOf(const QString &dataDir)
{
    return QDir(dataDir).filePath(QStringLiteral("workspace-directories"));
}

} // namespace

WorkspaceManager::WorkspaceManager(storage::Store *store, QString dataDir,
                                   WorkspaceSettings defaults, QObject *parent)
    : QObject(parent), m_store(store), m_dataDir(std::move(dataDir)), m_defaults(defaults)
{
}

Result<void> WorkspaceManager::claimLegacyDirectories()
{
    auto workspaces = m_store->workspaces();
    if (!workspaces)
        return workspaces.error();
    const QString records = recordsOf(m_dataDir);
    for (const storage::WorkspaceRecord &ws : std::as_const(*workspaces)) {
        if (QFileInfo::exists(QDir(records).filePath(ws.id)))
            continue;
        // Only replhost's own place for it: a directory a client named was perhaps not made here.
        const QString own = QDir::cleanPath(QDir(m_dataDir).filePath(QStringLiteral("workspaces/") + ws.name));
        const QFileInfo info(ws.directory);
        if (QDir::cleanPath(ws.directory) != own || info.isSymLink() || !info.isDir())
            continue;
        if (auto claimed = WorkspaceDirectory::claim(ws.directory, ws.id, records); !claimed)
            qWarning("workspace %s: %s; it will not be purged", qPrintable(ws.name),
                     qPrintable(claimed.error().message));
    }
    return {};
}

Result<void> WorkspaceManager::ensureDefault()
{
    auto existing = m_store->workspaceByName(defaultName());
    if (!existing)
        return existing.error();
    if (existing->has_value()) {
        if (!QDir().mkpath(existing->value().directory))
            return makeError(QStringLiteral("io"), QStringLiteral("cannot create %1")
                                                           .arg(existing->value().directory));
        return claimLegacyDirectories();
    }
    auto created = create(defaultName());
    if (!created)
        return created.error();
    return claimLegacyDirectories();
}

Result<storage::WorkspaceRecord> WorkspaceManager::create(const QString &name,
                                                          const QString &directory,
                                                          const QJsonObject &settings)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$"));
    if (!pattern.match(name).hasMatch())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("invalid workspace name \"%1\": use 1-64 letters, digits, "
                                        "'_', '-' or '.', not starting with '.'").arg(name));
    QString dir = directory.isEmpty()
                      ? QDir(m_dataDir).filePath(QStringLiteral("workspaces/") + name)
                      : directory;
    if (QDir::isRelativePath(dir))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("workspace directory must be an absolute path"));
    // Only non-null fields are kept: null means "the default", which is what absent means.
    const QJsonObject own = WorkspaceSettings::mergePatch({}, settings);
    auto valid = WorkspaceSettings::fromJson(own, m_defaults);
    if (!valid)
        return valid.error();
    if (auto shown = checkVolumesHideDataDir(*valid, m_dataDir); !shown)
        return shown.error();
    if (auto enforceable = WorkerConfinement::checkEnforceable(own.value(kLimits).toObject());
        !enforceable)
        return enforceable.error();
    dir = QDir::cleanPath(dir);
    auto existing = m_store->workspaceByName(name);
    if (!existing)
        return existing.error();
    if (existing->has_value())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("workspace \"%1\" already exists").arg(name));
    const Result<bool> made = WorkspaceDirectory::create(dir);
    if (!made)
        return made.error();
    auto created = m_store->createWorkspace(name, QDir(dir).canonicalPath(), compactJson(own));
    if (!created)
        return created;
    // Only a directory made here may be purged later; one the workspace was created on never.
    if (*made) {
        if (auto claimed = WorkspaceDirectory::claim(created->directory, created->id, recordsOf(m_dataDir));
            !claimed)
            qWarning("workspace %s: %s; it will not be purged", qPrintable(name),
                     qPrintable(claimed.error().message));
    }
    emit workspaceAdded(*created);
    return created;
}

Result<storage::WorkspaceRecord> WorkspaceManager::get(const QString &name) const
{
    const QString wanted = name.isEmpty() ? defaultName() : name;
    // Every run looks its workspace up; rows change only through this class, so a cache kept
    // in step with create() and remove() saves a query per run.
    if (const auto cached = m_cache.constFind(wanted); cached != m_cache.cend())
        return cached.value();
    auto found = m_store->workspaceByName(wanted);
    if (!found)
        return found.error();
    if (!found->has_value())
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("no workspace named \"%1\"").arg(wanted));
    m_cache.insert(wanted, found->value());
    return found->value();
}

Result<QList<storage::WorkspaceRecord>> WorkspaceManager::list() const
{
    return m_store->workspaces();
}

Result<WorkspaceFiles> WorkspaceManager::files(const QString &name) const
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    if (!QFileInfo(ws->directory).isDir() && !QDir().mkpath(ws->directory))
        return makeError(QStringLiteral("io"),
                         QStringLiteral("the directory of workspace \"%1\" (%2) is missing and "
                                        "cannot be created").arg(ws->name, ws->directory));
    WorkspaceFiles files(ws->directory);
    // A sandbox's HOME is its workspace (WorkerConfinement::baseEnvironment); outside one the
    // code's HOME is the server user's, which "~" must not pretend to be.
    const auto settings = effectiveSettings(*ws);
    files.setHomeIsRoot(settings && settings->isolation == WorkspaceSettings::Isolation::Sandbox);
    if (settings && !settings->viewPath.isEmpty()) {
        files.setSandboxView(settings->viewPath,
                             QLatin1String(WorkspaceSettings::kKeptTmpDirectory));
        // The sandbox's /tmp is there before its first process makes it, so that a client can
        // write to it or start a context in it first. By name: mkdir never follows a link at
        // its last step, and whatever the code put there instead stays.
        ::mkdir(QFile::encodeName(ws->directory + QLatin1Char('/')
                                  + QLatin1String(WorkspaceSettings::kKeptTmpDirectory))
                        .constData(),
                0777);
    }
    return files;
}

Result<void> WorkspaceManager::remove(const QString &name, bool purge)
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    if (ws->name == defaultName())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("the default workspace cannot be deleted; delete its "
                                        "contexts instead"));
    const QString directory = QDir::cleanPath(ws->directory);
    // Refused before anything is deleted, so a refused purge leaves the workspace as it was.
    if (purge) {
        if (auto purgeable = WorkspaceDirectory::checkPurge(directory, ws->id, recordsOf(m_dataDir));
            !purgeable)
            return purgeable;
    }

    emit aboutToRemove(ws->id, ws->name);
    m_cache.remove(ws->name);
    m_settingsCache.remove(ws->name);
    if (auto r = m_store->deleteWorkspace(ws->id); !r)
        return r;
    emit workspaceRemoved(ws->name);

    if (purge) {
        if (auto purged = WorkspaceDirectory::purge(directory, ws->id, recordsOf(m_dataDir)); !purged)
            return makeError(purged.error().code,
                             QStringLiteral("workspace \"%1\" was deleted, but its directory was "
                                            "kept: %2").arg(ws->name, purged.error().message));
    }
    return {};
}

Result<WorkspaceSettings> WorkspaceManager::effectiveSettings(
        const storage::WorkspaceRecord &record) const
{
    QJsonParseError error;
    const QJsonDocument own = QJsonDocument::fromJson(record.settings.toUtf8(), &error);
    Result<WorkspaceSettings> settings =
            own.isObject() ? WorkspaceSettings::fromJson(own.object(), m_defaults)
                           : Result<WorkspaceSettings>(makeError(QStringLiteral("bad_request"),
                                                                 error.errorString()));
    if (!settings)
        return makeError(QStringLiteral("storage"),
                         QStringLiteral("the stored settings of workspace \"%1\" are invalid (%2); "
                                        "change the workspace's settings to replace them")
                             .arg(record.name, settings.error().message));
    return settings;
}

Result<WorkspaceSettings> WorkspaceManager::settings(const QString &name) const
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    if (const auto cached = m_settingsCache.constFind(ws->name); cached != m_settingsCache.cend())
        return cached.value();
    auto settings = effectiveSettings(*ws);
    if (settings)
        m_settingsCache.insert(ws->name, *settings);
    return settings;
}

Result<WorkspaceSettings> WorkspaceManager::changeSettings(const QString &name,
                                                           const QJsonObject &patch)
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    // A workspace whose stored text is damaged can still be repaired: the patch applies to
    // whatever object was stored, or to nothing.
    const QJsonObject stored = QJsonDocument::fromJson(ws->settings.toUtf8()).object();
    const QJsonObject own = WorkspaceSettings::mergePatch(stored, patch);
    auto settings = WorkspaceSettings::fromJson(own, m_defaults);
    if (!settings)
        return settings.error();
    if (auto shown = checkVolumesHideDataDir(*settings, m_dataDir); !shown)
        return shown.error();
    if (auto enforceable = WorkerConfinement::checkEnforceable(patch.value(kLimits).toObject());
        !enforceable)
        return enforceable.error();
    storage::WorkspaceRecord record = *ws;
    record.settings = compactJson(own);
    if (auto r = m_store->setWorkspaceSettings(record.id, record.settings); !r)
        return r.error();
    m_cache.insert(record.name, record);
    m_settingsCache.insert(record.name, *settings);
    emit settingsChanged(record.name, *settings);
    return settings;
}

Result<QList<storage::EnvVarRecord>> WorkspaceManager::env(const QString &name) const
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    return m_store->env(EnvScope::Workspace, ws->id);
}

Result<void> WorkspaceManager::changeEnv(const QString &name, const QMap<QString, QString> &set,
                                         const QStringList &unset, const QStringList &clear)
{
    auto ws = get(name);
    if (!ws)
        return ws.error();
    const QString id = ws->id;
    for (const QStringList &keys : {set.keys(), unset, clear}) {
        for (const QString &key : keys) {
            if (!EnvLayers::isValidKey(key))
                return makeError(QStringLiteral("bad_request"),
                                 QStringLiteral("invalid environment variable name \"%1\"").arg(key));
        }
    }
    auto done = m_store->transaction([&]() -> Result<void> {
        for (auto it = set.cbegin(); it != set.cend(); ++it) {
            if (auto r = m_store->setEnv(EnvScope::Workspace, id, it.key(), it.value()); !r)
                return r;
        }
        for (const QString &key : unset) {
            if (auto r = m_store->unsetEnv(EnvScope::Workspace, id, key); !r)
                return r;
        }
        for (const QString &key : clear) {
            if (auto r = m_store->clearEnv(EnvScope::Workspace, id, key); !r)
                return r;
        }
        return {};
    });
    if (done)
        emit envChanged(id);
    return done;
}

} // namespace replhost::core
