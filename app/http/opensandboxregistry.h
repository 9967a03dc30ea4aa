// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QHash>
#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <optional>

namespace replhost::core { class WorkspaceManager; }

namespace replhost::http {

// What OpenSandbox's lifecycle API says about a sandbox that a replhost workspace does not hold
// (the image it named, its entrypoint and metadata, when it expires), kept in a JSON file in the
// data directory so that expiries survive a restart. Storage is left alone on purpose: this is
// compatibility metadata of one surface, not part of the engine's schema.
//
// A sandbox expires by its workspace being deleted: a timer fires at the earliest expiry (at
// once for those that passed while the server was down). Workspaces made for a sandbox are
// deleted with their directory; a record of a workspace deleted by other means is dropped.
//
// Errors: "io" (the file cannot be written; the change is kept in memory). Threading: the
// engine's thread. The workspace manager must outlive this object.
class OpenSandboxRegistry : public QObject {
    Q_OBJECT
public:
    struct Record {
        QString id;                   // the workspace name
        QString image;                // the image URI the client named (recorded, never pulled)
        QStringList entrypoint;
        QMap<QString, QString> metadata;
        qint64 createdAt = 0;         // ms since the epoch
        qint64 expiresAt = 0;         // ms since the epoch; 0: never
        bool ownsDirectory = false;   // the workspace was made for the sandbox: purge it with it
    };

    OpenSandboxRegistry(core::WorkspaceManager &workspaces, QString filePath, QObject *parent = nullptr);

    // Reads the file (a missing one is an empty registry), drops records of workspaces that are
    // gone and arms the expiry timer. Error "io" for a file that cannot be read or parsed.
    Result<void> load();

    std::optional<Record> find(const QString &id) const;
    QList<Record> all() const;
    // Adds or replaces a record and saves.
    Result<void> put(const Record &record);
    void forget(const QString &id);

private:
    Result<void> save() const;
    void arm();
    void expireDue();

    core::WorkspaceManager &m_workspaces;
    QString m_filePath;
    QHash<QString, Record> m_records;
    QTimer m_timer;
};

} // namespace replhost::http
