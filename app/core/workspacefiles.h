// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filedescriptor.h"

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <memory>

namespace replhost::core {

// The files of one workspace, as the faces may touch them: the one place where a path a client
// gives is resolved inside a workspace directory (the native, OpenSandbox and E2B file routes,
// and the cwd of a new context, all come here).
//
// Paths are '/'-separated, relative to the workspace directory, or absolute and inside it; ""
// and "." name the directory itself. Where the workspace is HOME for its code (a sandbox:
// setHomeIsRoot()), "~" and "~/x" name the directory and x in it, as the code's shell reads
// them; elsewhere "~" is a file name like any other. Where a sandbox sees its workspace at a
// view path of its own (setSandboxView(): "/home/user"), absolute paths are the sandbox's: the
// view path and what is under it name the directory and what is in it, and "/tmp" and what is
// under it the directory the sandbox keeps as its /tmp, inside the workspace; the directory's
// host path is still accepted; every other absolute path is outside. Refused with "forbidden":
//   - any ".." segment (even one that would stay inside: it is refused before it reaches the
//     kernel, so no request depends on how ".." meets symlinks);
//   - an absolute path outside the directory;
//   - a path with a symlink on the way, or ending in one, that leads outside, an absolute
//     symlink (even one naming a place inside: it would mean something else in a sandbox, where
//     the workspace is mounted elsewhere), and /proc "magic links".
//
// How: every call opens the workspace directory and resolves the path from that descriptor
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), then acts on descriptors (openat,
// renameat, unlinkat, mkdirat, fchmod, fdopendir) and never by name again. The kernel refuses
// any step out of the directory at the moment it is taken, so code in the workspace's contexts
// that swaps a directory for a symlink during a request cannot lead it outside. A kernel
// without openat2 (Linux < 5.6) gets the error "unsupported" from every call, never a weaker
// check.
//
// Only regular files are read or written: a FIFO, a socket or a device is "bad_request" and
// is never opened (it is told apart with fstatat first; the open itself is O_NONBLOCK and
// O_NOFOLLOW, and checked again with fstat). A path that ends in a symlink inside is listed,
// moved and removed as the link, and is not read or written through ("bad_request" and
// "conflict": name the target instead).
//
// The directory's marker (workspacedirectory.h) is replhost's, not the workspace's: it is not
// listed and no call reaches it ("forbidden").
//
// Errors (Error::code): "bad_request" (malformed path, wrong kind of file), "forbidden",
// "not_found", "conflict" (exists, not empty, a symlink in the way), "io", "unsupported".
// Threading: a value; any thread, any number of calls at once (each call opens what it uses).
// The calls block on the file system: the faces make them off the engine thread.
class WorkspaceFiles {
public:
    // One directory entry, as lstat sees it (a symlink is a "symlink", whatever it points to).
    struct Entry {
        QString name;
        QString path;          // relative to the workspace directory; "" for the directory itself
        QString type;          // "file", "directory", "symlink" or "other"
        qint64 size = 0;       // bytes, for files
        qint64 modifiedAt = 0; // ms since the epoch, UTC
        qint64 changedAt = 0;  // status change (ctime), ms since the epoch, UTC
        int mode = 0;          // permission bits (0755, …)
        uint owner = 0;        // uid
        uint group = 0;        // gid
        QString target;        // for symlinks: where the link points (a workspace path when inside)

        QJsonObject toJson() const;
    };

    // An open regular file: the descriptor is shared so that a reader on another thread keeps
    // it open for as long as it reads.
    struct OpenFile {
        std::shared_ptr<FileDescriptor> fd;
        QString path;  // relative, as named
        qint64 size = 0;

        // pread(2) of up to `length` bytes at `offset`; fewer only at the end of the file.
        // Any thread. Error "io".
        Result<QByteArray> read(qint64 offset, qint64 length) const;
    };

    struct Written {
        Entry entry;
        bool created = false;  // false: an existing file was replaced
    };

    // New content for a file, written to a temporary file beside it and put in its place by
    // commit() in one rename(2): readers see the old or the new content, never half of it.
    // Destroying it uncommitted removes the temporary file and changes nothing.
    // Threading: one thread at a time.
    class PendingWrite {
    public:
        ~PendingWrite();
        PendingWrite(const PendingWrite &) = delete;
        PendingWrite &operator=(const PendingWrite &) = delete;

        Result<void> append(QByteArrayView data);
        // Fails with "conflict" when a directory or a symlink took the file's place meanwhile.
        Result<Written> commit();

    private:
        friend class WorkspaceFiles;
        PendingWrite() = default;

        QString m_root;
        QString m_path;      // relative, as named
        FileDescriptor m_directory;
        FileDescriptor m_file;
        QByteArray m_name;
        QByteArray m_temporaryName;
        bool m_existed = false;
        bool m_committed = false;
    };

    // `rootDirectory` must exist; it is canonicalized once here.
    explicit WorkspaceFiles(const QString &rootDirectory);

    QString root() const { return m_root; }
    // "~" is the workspace directory (its code's HOME), see above.
    void setHomeIsRoot(bool homeIsRoot) { m_homeIsRoot = homeIsRoot; }
    // The sandbox sees the directory at `viewPath` (absolute, clean) and its /tmp is
    // `tmpDirectory` in it (relative), see above. Implies setHomeIsRoot(true).
    void setSandboxView(const QString &viewPath, const QString &tmpDirectory);
    // Where the code of the workspace sees the host path `absolute`: with a view, a path inside
    // the directory is under the view path, or under /tmp when it is in the kept /tmp; else
    // `absolute` unchanged.
    QString sandboxPath(const QString &absolute) const;

    // The absolute path `path` names, after the checks above (made now, from the directory's
    // descriptor). It is the path as named (a final symlink is not replaced by its target).
    // Only for showing and for an early refusal: every other call checks again as it acts.
    Result<QString> resolve(const QString &path) const;
    // `absolute` (inside the root) relative to the root, '/'-separated.
    QString relativePath(const QString &absolute) const;
    // An existing directory (through symlinks that stay inside), as an absolute path: the check
    // of a context's cwd. Error "bad_request" when it is not a directory.
    Result<QString> directory(const QString &path) const;

    Result<Entry> stat(const QString &path) const;
    // The entries of a directory, sorted by name.
    Result<QList<Entry>> list(const QString &directory) const;
    // `length` < 0: to the end. Reading past the end gives what there is.
    Result<QByteArray> read(const QString &path, qint64 offset = 0, qint64 length = -1) const;
    // An open, readable regular file, for callers that stream it.
    Result<OpenFile> open(const QString &path) const;

    // Starts replacing (or creating) a regular file. `parents`: create missing directories on
    // the way. A directory or a symlink at `path` is "conflict".
    Result<std::unique_ptr<PendingWrite>> beginWrite(const QString &path, bool parents = true) const;
    // beginWrite(), all of `data`, commit().
    Result<Written> write(const QString &path, QByteArrayView data, bool parents = true) const;
    // The file's content with every occurrence of `from` (not empty) replaced by `to`, streamed
    // a block at a time into a PendingWrite that is not committed yet; `count` is set to the
    // number of replacements.
    Result<std::unique_ptr<PendingWrite>> replaceText(const QString &path, const QByteArray &from,
                                                      const QByteArray &to, qint64 *count) const;
    // A directory needs `recursive` unless it is empty. A symlink is removed, not its target.
    // The workspace directory itself cannot be removed ("forbidden").
    Result<void> remove(const QString &path, bool recursive = false) const;
    // Renames `from` to `to`, creating `to`'s missing parents. An existing `to` is replaced only
    // with `overwrite` (and only by the same kind: a file by a file, a directory by a directory
    // that is empty).
    Result<Entry> move(const QString &from, const QString &to, bool overwrite = false) const;
    // Creates the directory (and with `parents` the missing ones above it). `created` is false
    // when it already existed.
    Result<Written> makeDirectory(const QString &path, bool parents = true) const;
    // chmod of the file or directory itself (a symlink: "bad_request"); `mode` ≤ 07777.
    Result<void> setMode(const QString &path, int mode) const;

    // Removes everything inside the open directory `directoryFd`, never following a symlink
    // (each level is opened with O_NOFOLLOW from its parent's descriptor). Error "io" naming
    // `shownPath` when something could not be removed; what could be is removed.
    static Result<void> removeContents(int directoryFd, const QString &shownPath);

private:
    struct Location;
    Result<FileDescriptor> openRoot() const;
    Result<Location> locate(const QString &path, bool createParents = false) const;
    Result<QString> relativeOf(const QString &path) const;

    QString m_root;   // canonical, without a trailing '/'
    QString m_given;  // as given, cleaned (the same directory through a symlink, perhaps)
    bool m_homeIsRoot = false;
    QString m_view;  // empty: no view of the sandbox's own
    QString m_tmp;   // relative to the root; with m_view
};

} // namespace replhost::core
