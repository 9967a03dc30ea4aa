// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <memory>

class QFile;

namespace replhost::core {

// The files of one workspace, as the faces may touch them: every path a client gives is resolved
// inside the workspace directory, and a path that would leave it is refused before anything is
// read or written.
//
// Paths are '/'-separated, relative to the workspace directory, or absolute and inside it; ""
// and "." name the directory itself. Refused with "forbidden":
//   - any ".." segment (even one that would stay inside: the kernel resolves ".." after
//     symlinks, a lexical check before them, and the two can disagree);
//   - an absolute path outside the directory;
//   - a path with a symlink on the way, or ending in one, whose target is outside (a dangling
//     symlink too, so a write cannot create a file outside through it).
// The checks run when a call starts. Code running in the workspace's contexts can change the tree
// at any time and may already write anywhere its user can, so this confines requests made
// through the faces; it is not a sandbox against the interpreters (see bubblewrap for that).
//
// Errors (Error::code): "bad_request" (malformed path, wrong kind of file), "forbidden",
// "not_found", "conflict" (exists, not empty), "io".
// Threading: a value; any thread, one call at a time per object.
class WorkspaceFiles {
public:
    // One directory entry, as lstat sees it (a symlink is a "symlink", whatever it points to).
    struct Entry {
        QString name;
        QString path;          // relative to the workspace directory; "" for the directory itself
        QString type;          // "file", "directory", "symlink" or "other"
        qint64 size = 0;       // bytes, for files
        qint64 modifiedAt = 0; // ms since the epoch, UTC
        int mode = 0;          // permission bits (0755, …)
        QString target;        // for symlinks: where the link points, as written in the link

        QJsonObject toJson() const;
    };

    // `rootDirectory` must exist; it is canonicalized once here.
    explicit WorkspaceFiles(const QString &rootDirectory);

    QString root() const { return m_root; }

    // The absolute path `path` names, after the checks above. It is the path as named (a final
    // symlink is not replaced by its target), so remove() and move() act on links themselves.
    Result<QString> resolve(const QString &path) const;
    // `absolute` (inside the root) relative to the root, '/'-separated.
    QString relativePath(const QString &absolute) const;

    Result<Entry> stat(const QString &path) const;
    // The entries of a directory, sorted by name.
    Result<QList<Entry>> list(const QString &directory) const;
    // `length` < 0: to the end. Reading past the end gives what there is.
    Result<QByteArray> read(const QString &path, qint64 offset = 0, qint64 length = -1) const;
    // An open, readable file, for callers that stream it.
    Result<std::unique_ptr<QFile>> open(const QString &path) const;

    struct Written {
        Entry entry;
        bool created = false;  // false: an existing file was replaced
    };
    // Replaces the file atomically (readers see the old or the new content, never half of it).
    // `parents`: create missing directories on the way.
    Result<Written> write(const QString &path, const QByteArray &data, bool parents = true);
    // A directory needs `recursive` unless it is empty. A symlink is removed, not its target.
    // The workspace directory itself cannot be removed ("forbidden").
    Result<void> remove(const QString &path, bool recursive = false);
    // Renames `from` to `to`, creating `to`'s missing parents. An existing `to` is replaced only
    // with `overwrite` (and only by the same kind: a file by a file, a directory by a directory
    // that is empty).
    Result<Entry> move(const QString &from, const QString &to, bool overwrite = false);
    // Creates the directory (and with `parents` the missing ones above it). `created` is false
    // when it already existed.
    Result<Written> makeDirectory(const QString &path, bool parents = true);

private:
    bool isInside(const QString &absolute) const;
    static QString join(const QString &directory, const QString &name);
    static QString canonicalOfDeepestExisting(const QString &absolute);
    Entry entryFor(const QString &absolute) const;

    QString m_root;  // canonical, without a trailing '/'
};

} // namespace replhost::core
