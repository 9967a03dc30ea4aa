// SPDX-License-Identifier: Apache-2.0
#include "workspacedirectory.h"

#include "filedescriptor.h"
#include "workspacefiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::core {

namespace {

QString systemError(int error)
{
    return QString::fromLocal8Bit(strerror(error));
}

QByteArray identity(const struct stat &st)
{
    return QByteArray::number(quint64(st.st_dev)) + ' ' + QByteArray::number(quint64(st.st_ino)) + '\n';
}

Error refused(const QString &directory, const QString &why)
{
    return makeError(QStringLiteral("forbidden"),
                     QStringLiteral("refusing to purge %1: %2. replhost deletes only a directory it "
                                    "created for the workspace; delete the workspace without purge "
                                    "and remove the files by hand").arg(directory, why));
}

// At most `limit` bytes of a small regular file, without following a symlink or waiting on a
// FIFO. Empty when it is missing or not a regular file.
QByteArray readSmall(int directoryFd, const char *name, qint64 limit)
{
    FileDescriptor fd(::openat(directoryFd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return {};
    QByteArray data(qsizetype(limit), Qt::Uninitialized);
    const ssize_t got = ::read(fd.get(), data.data(), size_t(limit));
    data.truncate(got < 0 ? 0 : qsizetype(got));
    return data;
}

} // namespace

Result<bool> WorkspaceDirectory::create(const QString &directory)
{
    const QFileInfo info(directory);
    if (info.exists() || info.isSymLink())
        return false;
    if (!QDir().mkpath(directory))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot create directory %1").arg(directory));
    // Whatever the process's umask: a workspace holds code and data of its user only.
    if (::chmod(QFile::encodeName(directory).constData(), 0700) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot make directory %1 private: %2")
                                                       .arg(directory, systemError(errno)));
    return true;
}

Result<void> WorkspaceDirectory::claim(const QString &directory, const QString &workspaceId,
                                       const QString &records)
{
    FileDescriptor dir(::open(QFile::encodeName(directory).constData(),
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!dir || ::fstat(dir.get(), &st) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot open directory %1: %2")
                                                       .arg(directory, systemError(errno)));
    FileDescriptor marker(::openat(dir.get(), kMarkerName,
                                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    const QByteArray id = workspaceId.toUtf8() + '\n';
    if (!marker || ::write(marker.get(), id.constData(), size_t(id.size())) != id.size())
        return makeError(QStringLiteral("io"), QStringLiteral("cannot write the marker of %1: %2")
                                                       .arg(directory, systemError(errno)));
    if (!QDir().mkpath(records)
        || ::chmod(QFile::encodeName(records).constData(), 0700) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot create %1").arg(records));
    QSaveFile record(QDir(records).filePath(workspaceId));
    if (!record.open(QIODevice::WriteOnly) || record.write(identity(st)) < 0 || !record.commit())
        return makeError(QStringLiteral("io"), QStringLiteral("cannot record the directory of "
                                                              "workspace %1: %2")
                                                       .arg(workspaceId, record.errorString()));
    return {};
}

namespace {

// The directory as it is now, checked against its record and marker.
struct Claimed {
    bool gone = false;  // nothing at the path any more
    FileDescriptor parent;
    FileDescriptor directory;
    QByteArray name;
    QByteArray identity;
};

Result<Claimed> verify(const QString &directory, const QString &workspaceId, const QString &records)
{
    Claimed claimed;
    QFile record(QDir(records).filePath(workspaceId));
    if (!record.open(QIODevice::ReadOnly))
        return refused(directory, QStringLiteral("it was not created by replhost for this workspace "
                                                 "(the workspace was created on an existing "
                                                 "directory, or before replhost recorded the "
                                                 "directories it creates)"));
    claimed.identity = record.read(256);

    const QByteArray path = QFile::encodeName(QDir::cleanPath(directory));
    const int slash = path.lastIndexOf('/');
    const QByteArray parentPath = slash <= 0 ? QByteArray("/") : path.left(slash);
    claimed.name = path.mid(slash + 1);
    claimed.parent.reset(::open(parentPath.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!claimed.parent && errno == ENOENT) {
        claimed.gone = true;
        return claimed;
    }
    if (!claimed.parent || claimed.name.isEmpty())
        return makeError(QStringLiteral("io"), QStringLiteral("cannot open the directory holding %1: %2")
                                                       .arg(directory, systemError(errno)));
    struct stat st {};
    if (::fstatat(claimed.parent.get(), claimed.name.constData(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            return makeError(QStringLiteral("io"), QStringLiteral("cannot stat %1: %2")
                                                           .arg(directory, systemError(errno)));
        claimed.gone = true;
        return claimed;
    }
    if (!S_ISDIR(st.st_mode))
        return refused(directory, QStringLiteral("it is not a directory (a symlink is never followed)"));
    claimed.directory.reset(::openat(claimed.parent.get(), claimed.name.constData(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat opened {};
    if (!claimed.directory || ::fstat(claimed.directory.get(), &opened) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot open %1: %2").arg(directory, systemError(errno)));
    if (identity(opened) != claimed.identity)
        return refused(directory, QStringLiteral("it is not the directory replhost created for this "
                                                 "workspace (another one is at its path now)"));
    if (readSmall(claimed.directory.get(), WorkspaceDirectory::kMarkerName, 256) != workspaceId.toUtf8() + '\n')
        return refused(directory, QStringLiteral("its marker %1 is missing or names another "
                                                 "workspace").arg(QLatin1String(WorkspaceDirectory::kMarkerName)));
    return claimed;
}

} // namespace

Result<void> WorkspaceDirectory::checkPurge(const QString &directory, const QString &workspaceId,
                                            const QString &records)
{
    auto claimed = verify(directory, workspaceId, records);
    if (!claimed)
        return claimed.error();
    return {};
}

Result<void> WorkspaceDirectory::purge(const QString &directory, const QString &workspaceId,
                                       const QString &records)
{
    auto claimed = verify(directory, workspaceId, records);
    if (!claimed)
        return claimed.error();
    const QString recordPath = QDir(records).filePath(workspaceId);
    if (claimed->gone) {
        QFile::remove(recordPath);
        return {};
    }
    if (auto removed = WorkspaceFiles::removeContents(claimed->directory.get(), directory); !removed)
        return removed;
    // Still the same directory at that name: only then is the name removed.
    struct stat again {};
    if (::fstatat(claimed->parent.get(), claimed->name.constData(), &again, AT_SYMLINK_NOFOLLOW) != 0
        || identity(again) != claimed->identity
        || ::unlinkat(claimed->parent.get(), claimed->name.constData(), AT_REMOVEDIR) != 0)
        return makeError(QStringLiteral("io"), QStringLiteral("the files of %1 were deleted, but not "
                                                              "the directory itself").arg(directory));
    QFile::remove(recordPath);
    return {};
}

} // namespace replhost::core
