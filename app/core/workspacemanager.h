// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"
#include "workspacefiles.h"
#include "workspacesettings.h"

#include <replhost/sdk/result.h>

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

namespace replhost::storage { class Store; }

namespace replhost::core {

// Workspaces: a directory plus a workspace-wide env layer and settings, holding contexts. The
// workspace named "default" always exists (created on first open, in
// <data dir>/workspaces/default).
//
// Threading: engine thread only. The store is owned by the Engine and outlives this object.
class WorkspaceManager : public QObject {
    Q_OBJECT
public:
    // `defaults`: the settings of a workspace that sets nothing itself (EngineConfig).
    WorkspaceManager(storage::Store *store, QString dataDir, WorkspaceSettings defaults,
                     QObject *parent = nullptr);

    static QString defaultName() { return QStringLiteral("default"); }

    // Creates the default workspace if missing, and claims the directories of workspaces from
    // before replhost recorded the directories it creates (WorkspaceDirectory): those in
    // replhost's own place for them, <data dir>/workspaces/<name>, which only replhost makes.
    // A directory a client named is never claimed: whether replhost created it is unknown.
    Result<void> ensureDefault();

    // Names: 1-64 characters of [A-Za-z0-9_.-], not starting with '.'. `directory` empty →
    // <data dir>/workspaces/<name>; it is created if missing (mode 0700, and claimed so that a
    // purge may delete it; an existing directory is used as it is and never purged). `settings`: the workspace's own
    // settings (WorkspaceSettings JSON, every field optional), checked before anything is
    // created. Errors: "bad_request" (naming the bad field), "conflict".
    Result<storage::WorkspaceRecord> create(const QString &name, const QString &directory = {},
                                            const QJsonObject &settings = {});
    // Error "not_found" with the name in the message.
    Result<storage::WorkspaceRecord> get(const QString &name) const;
    Result<QList<storage::WorkspaceRecord>> list() const;
    // The workspace's files, with every path confined to its directory. Error "not_found".
    Result<WorkspaceFiles> files(const QString &name) const;

    // Deletes the workspace with its contexts, env layer and execution history. Its contexts are
    // stopped first (aboutToRemove: running and queued executions end "aborted" and are recorded)
    // so no worker outlives its workspace. The directory is kept unless `purge` is true; purging
    // deletes only a directory replhost created for this workspace (WorkspaceDirectory), without
    // following a symlink out of it, and is refused before anything is deleted otherwise.
    // Errors: "not_found", "conflict" (the default workspace), "forbidden" (a directory replhost
    // did not create, nothing deleted), "io" (the rows are gone but some files could not be
    // deleted), "storage".
    Result<void> remove(const QString &name, bool purge = false);

    // The workspace's effective settings: the server defaults with its own choices over them.
    // Errors: "not_found", "storage" (stored settings that no longer validate).
    Result<WorkspaceSettings> settings(const QString &name) const;
    // Changes the workspace's own settings by JSON Merge Patch (WorkspaceSettings::mergePatch:
    // null gives a field back to the server default) and returns the effective settings. Nothing
    // changes unless the result is valid. What is running keeps the settings it started with.
    // Errors: "bad_request" (naming the field), "not_found", "storage".
    Result<WorkspaceSettings> changeSettings(const QString &name, const QJsonObject &patch);
    const WorkspaceSettings &defaultSettings() const { return m_defaults; }

    // The workspace env layer. `set` keys get values, `unset` keys are explicitly removed (they
    // hide the base environment), `clear` keys are dropped from the layer. Error "bad_request"
    // for invalid keys.
    Result<QList<storage::EnvVarRecord>> env(const QString &name) const;
    Result<void> changeEnv(const QString &name, const QMap<QString, QString> &set,
                           const QStringList &unset, const QStringList &clear);

signals:
    // The workspace's env layer changed: contexts pick it up on their next run.
    void envChanged(const QString &workspaceId);
    void workspaceAdded(const replhost::storage::WorkspaceRecord &workspace);
    void settingsChanged(const QString &name, const replhost::core::WorkspaceSettings &settings);
    // Emitted by remove() before any row is deleted; receivers must be connected directly, since
    // the workspace is gone when remove() returns. ContextManager stops the workspace's contexts,
    // CommandRunner its commands.
    void aboutToRemove(const QString &workspaceId, const QString &name);
    void workspaceRemoved(const QString &name);

private:
    Result<void> claimLegacyDirectories();
    // The record's own settings over the defaults.
    Result<WorkspaceSettings> effectiveSettings(const storage::WorkspaceRecord &record) const;

    storage::Store *m_store;
    QString m_dataDir;
    const WorkspaceSettings m_defaults;
    mutable QHash<QString, storage::WorkspaceRecord> m_cache;  // by name
    // Parsed from the records' settings, by name: every run asks for them.
    mutable QHash<QString, WorkspaceSettings> m_settingsCache;
};

} // namespace replhost::core
