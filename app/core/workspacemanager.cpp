// SPDX-License-Identifier: Apache-2.0
#include "workspacemanager.h"

#include "envlayers.h"
#include "storage/store.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

namespace replhost::core {

using storage::EnvScope;

namespace {

QString compactJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

} // namespace

WorkspaceManager::WorkspaceManager(storage::Store *store, QString dataDir,
                                   WorkspaceSettings defaults, QObject *parent)
    : QObject(parent), m_store(store), m_dataDir(std::move(dataDir)), m_defaults(defaults)
{
}

Result<void> WorkspaceManager::ensureDefault()
{
    auto existing = m_store->workspaceByName(defaultName());
    if (!existing)
        return existing.error();
    if (existing->has_value())
        return QDir().mkpath(existing->value().directory)
                   ? Result<void>()
                   : makeError(QStringLiteral("io"), QStringLiteral("cannot create %1")
                                                          .arg(existing->value().directory));
    auto created = create(defaultName());
    if (!created)
        return created.error();
    return {};
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
    if (auto valid = WorkspaceSettings::fromJson(own, m_defaults); !valid)
        return valid.error();
    dir = QDir::cleanPath(dir);
    if (!QDir().mkpath(dir))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot create directory %1").arg(dir));
    auto existing = m_store->workspaceByName(name);
    if (!existing)
        return existing.error();
    if (existing->has_value())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("workspace \"%1\" already exists").arg(name));
    auto created = m_store->createWorkspace(name, QDir(dir).canonicalPath(), compactJson(own));
    if (created)
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
    return WorkspaceFiles(ws->directory);
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
    if (purge) {
        // A workspace may have been created over an existing directory; purging must never take
        // the engine's own data or a whole home directory with it.
        const QString data = QDir::cleanPath(QFileInfo(m_dataDir).canonicalFilePath());
        const QString home = QDir::cleanPath(QDir::homePath());
        const auto contains = [](const QString &outer, const QString &inner) {
            return !inner.isEmpty()
                   && (inner == outer || inner.startsWith(outer + QLatin1Char('/')));
        };
        if (directory == QLatin1String("/") || directory == home || contains(directory, data))
            return makeError(QStringLiteral("forbidden"),
                             QStringLiteral("refusing to purge %1: it holds the data directory or "
                                            "a home directory; delete without purge and remove "
                                            "the files by hand").arg(directory));
    }

    emit aboutToRemove(ws->id, ws->name);
    m_cache.remove(ws->name);
    m_settingsCache.remove(ws->name);
    if (auto r = m_store->deleteWorkspace(ws->id); !r)
        return r;
    emit workspaceRemoved(ws->name);

    if (purge && QFileInfo(directory).isDir() && !QDir(directory).removeRecursively())
        return makeError(QStringLiteral("io"),
                         QStringLiteral("workspace \"%1\" was deleted, but some files in %2 could "
                                        "not be removed").arg(ws->name, directory));
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
