// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/records.h"

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace replhost::storage { class Store; }

namespace replhost::core {

// A workspace as one tar archive, which is how a workspace moves from one server to another
// (`replhost-cli workspaces export` and `import`, and packaging/kubernetes/rebalance):
//
//   replhost-workspace.json   the manifest: format and version, the workspace's own settings,
//                             its env layer, and per context its row (cwd and replay base
//                             relative to the workspace directory), env layer, snapshot and
//                             execution history with the stored events
//   files/…                   the workspace directory: its directories and regular files with
//                             their modes (symlinks, FIFOs, sockets and devices are left out,
//                             and so is the directory's WorkspaceDirectory marker)
//
// The archive is POSIX tar (pax), read and written with libarchive. Context and execution ids
// are kept, so a client's ids name the same contexts after the move; the contexts come back
// dormant and restore on first use (snapshot, or replay of the history) like after a restart.
//
// Threading: describe() and restore() use the engine thread's Store; pack(), unpack() and
// writeFiles() touch only their arguments and the file system and run on any thread (the HTTP
// layer runs them on FileWork threads, since a workspace directory is written by user code).
class WorkspaceArchive {
public:
    static constexpr const char *kManifestName = "replhost-workspace.json";
    static constexpr const char *kFormat = "replhost-workspace";
    static constexpr int kVersion = 1;

    struct Entry {
        QString path;        // relative to the workspace directory, '/'-separated
        bool directory = false;
        int mode = 0600;     // permission bits
        QByteArray data;     // a file's bytes
    };
    struct Contents {
        QJsonObject manifest;
        QList<Entry> entries;
    };

    // The manifest of `workspace` from the rows in `store`. The history writer must have been
    // flushed, or runs that finished a moment ago are missing. Error "storage".
    static Result<QJsonObject> describe(storage::Store &store, const storage::WorkspaceRecord &workspace);

    // The archive of `manifest` and `directory`'s tree, at most `maxBytes` of file data (error
    // "payload_too_large" beyond). Files are opened without following symlinks and without
    // blocking, and only regular ones are read. Error "io".
    static Result<QByteArray> pack(const QJsonObject &manifest, const QString &directory, qint64 maxBytes);

    // What an archive made by pack() holds. Error "bad_request": not such an archive, a
    // manifest of another format or a newer version, an entry whose path leaves the directory
    // (absolute, "..", empty components) or that is neither a directory nor a regular file.
    static Result<Contents> unpack(const QByteArray &archive);

    // Writes `entries` into `directory` (a new, empty workspace directory): directories first,
    // files created exclusively (O_EXCL, O_NOFOLLOW). Error "io".
    static Result<void> writeFiles(const QList<Entry> &entries, const QString &directory);

    // The manifest's env layer, contexts, snapshots and history into `workspace` (new, with no
    // contexts), in one transaction: nothing is left half-imported. Runs that were still going
    // when the archive was made are recorded as "aborted". Errors "bad_request" (a malformed
    // manifest), "conflict" (a context id this server has already), "storage".
    static Result<void> restore(storage::Store &store, const storage::WorkspaceRecord &workspace,
                                const QJsonObject &manifest);
};

} // namespace replhost::core
