// SPDX-License-Identifier: Apache-2.0
#include "workspacefiles.h"

#include "workspacedirectory.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace replhost::core {

namespace {

constexpr qint64 kBlockBytes = 256 * 1024;
// Deeper trees are not removed: each level holds a descriptor while its children go.
constexpr int kMaxRemoveDepth = 512;

Error forbidden(const QString &path, const QString &why)
{
    return makeError(QStringLiteral("forbidden"),
                     QStringLiteral("path \"%1\" is refused: %2").arg(path, why));
}

Error notFound(const QString &path)
{
    return makeError(QStringLiteral("not_found"),
                     QStringLiteral("no file or directory \"%1\" in the workspace").arg(path));
}

QString systemError(int error)
{
    return QString::fromLocal8Bit(strerror(error));
}

Error ioError(const QString &what, const QString &path, int error)
{
    // A name the client chose too long for the file system is the request's fault, not the
    // server's.
    if (error == ENAMETOOLONG)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("cannot %1 \"%2\": a name in the path is longer than the "
                                        "file system allows (255 bytes)").arg(what, path));
    return makeError(QStringLiteral("io"),
                     QStringLiteral("cannot %1 \"%2\": %3").arg(what, path, systemError(error)));
}

// The error of a failed resolution from the workspace's descriptor.
Error resolutionError(const QString &path, int error)
{
    switch (error) {
    case EXDEV:
        return forbidden(path, QStringLiteral("it leads outside the workspace directory (through "
                                              "\"..\" or a symlink that leaves or is absolute)"));
    case ELOOP:
        return forbidden(path, QStringLiteral("too many symlinks on the way, or a /proc magic link"));
    case ENOSYS:
        return makeError(QStringLiteral("unsupported"),
                         QStringLiteral("the kernel has no openat2(2) (Linux 5.6 or later is "
                                        "needed): workspace files are not served without it"));
    case ENOENT:
    case ENOTDIR:
        return notFound(path);
    case EACCES:
    case EPERM:
        return forbidden(path, systemError(error));
    default:
        return ioError(QStringLiteral("open"), path, error);
    }
}

// openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: every step of `path` must stay below
// `directoryFd`. The kernel answers EAGAIN when a concurrent rename could have let ".." escape;
// trying again is what its documentation asks for.
int openBeneath(int directoryFd, const QByteArray &path, int flags, mode_t mode = 0)
{
    open_how how{};
    how.flags = quint64(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    const QByteArray name = path.isEmpty() ? QByteArray(".") : path;
    for (int attempt = 0; attempt < 16; ++attempt) {
        const long fd = ::syscall(SYS_openat2, directoryFd, name.constData(), &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN)
            return int(fd);
    }
    return -1;
}

bool lstatAt(int directoryFd, const QByteArray &name, struct stat *st)
{
    return ::fstatat(directoryFd, name.constData(), st, AT_SYMLINK_NOFOLLOW) == 0;
}

QString kindOf(mode_t mode)
{
    if (S_ISFIFO(mode))
        return QStringLiteral("a FIFO (named pipe)");
    if (S_ISSOCK(mode))
        return QStringLiteral("a socket");
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return QStringLiteral("a device");
    if (S_ISLNK(mode))
        return QStringLiteral("a symbolic link");
    if (S_ISDIR(mode))
        return QStringLiteral("a directory");
    return QStringLiteral("not a regular file");
}

Error notRegular(const QString &path, mode_t mode)
{
    return makeError(QStringLiteral("bad_request"),
                     QStringLiteral("\"%1\" is %2, not a regular file: only regular files are read "
                                    "or written through the file routes").arg(path, kindOf(mode)));
}

qint64 milliseconds(const timespec &time)
{
    return qint64(time.tv_sec) * 1000 + time.tv_nsec / 1000000;
}

bool isInside(const QString &absolute, const QString &root)
{
    if (root == QLatin1String("/"))
        return absolute.startsWith(QLatin1Char('/'));
    return absolute == root || absolute.startsWith(root + QLatin1Char('/'));
}

QString relativeTo(const QString &absolute, const QString &root)
{
    if (absolute == root)
        return QString();
    return absolute.mid(root == QLatin1String("/") ? 1 : root.size() + 1);
}

QString joined(const QString &directory, const QString &name)
{
    if (directory.isEmpty())
        return name;
    return directory.endsWith(QLatin1Char('/')) ? directory + name : directory + QLatin1Char('/') + name;
}

WorkspaceFiles::Entry entryOf(const struct stat &st, const QString &root, int parentFd,
                              const QByteArray &rawName, const QString &relative)
{
    WorkspaceFiles::Entry entry;
    entry.path = relative;
    entry.name = relative.section(QLatin1Char('/'), -1);
    entry.modifiedAt = milliseconds(st.st_mtim);
    entry.changedAt = milliseconds(st.st_ctim);
    entry.mode = int(st.st_mode & 07777);
    entry.owner = st.st_uid;
    entry.group = st.st_gid;
    if (S_ISLNK(st.st_mode)) {
        entry.type = QStringLiteral("symlink");
        QByteArray text(4096, Qt::Uninitialized);
        const ssize_t length = ::readlinkat(parentFd, rawName.constData(), text.data(), size_t(text.size()));
        text.truncate(length < 0 ? 0 : qsizetype(length));
        // Inside the workspace as a workspace path; outside as the absolute path it names.
        const QString written = QFile::decodeName(text);
        const QString parent = joined(root, relative.section(QLatin1Char('/'), 0, -2));
        const QString target = QDir::cleanPath(QDir::isAbsolutePath(written) ? written
                                                                             : joined(parent, written));
        entry.target = isInside(target, root) ? relativeTo(target, root) : target;
    } else if (S_ISDIR(st.st_mode)) {
        entry.type = QStringLiteral("directory");
    } else if (S_ISREG(st.st_mode)) {
        entry.type = QStringLiteral("file");
        entry.size = st.st_size;
    } else {
        entry.type = QStringLiteral("other");
    }
    return entry;
}

Result<void> writeAll(int fd, QByteArrayView data, const QString &path)
{
    const char *next = data.data();
    qint64 left = data.size();
    while (left > 0) {
        const ssize_t written = ::write(fd, next, size_t(std::min<qint64>(left, 1 << 30)));
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return ioError(QStringLiteral("write"), path, errno);
        }
        next += written;
        left -= written;
    }
    return {};
}

} // namespace

// Where a path leads: the descriptor of the directory holding its last component, and that
// component's name ("" for the workspace directory itself, then `parent` is the root).
struct WorkspaceFiles::Location {
    FileDescriptor root;
    FileDescriptor parent;
    QByteArray name;
    QString relative;  // the whole path, relative, cleaned
    QString shown;     // the path as the client gave it, for messages
    bool parentMissing = false;  // only without createParents: `parent` is invalid
};

Result<QByteArray> WorkspaceFiles::OpenFile::read(qint64 offset, qint64 length) const
{
    QByteArray data(qsizetype(length), Qt::Uninitialized);
    qint64 done = 0;
    while (done < length) {
        const ssize_t got = ::pread(fd->get(), data.data() + done, size_t(length - done), off_t(offset + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return ioError(QStringLiteral("read"), path, errno);
        }
        if (got == 0)
            break;
        done += got;
    }
    data.truncate(qsizetype(done));
    return data;
}

QJsonObject WorkspaceFiles::Entry::toJson() const
{
    QJsonObject json{
        {QStringLiteral("name"), name},
        {QStringLiteral("path"), path},
        {QStringLiteral("type"), type},
        {QStringLiteral("size"), size},
        {QStringLiteral("modified_at"),
         QDateTime::fromMSecsSinceEpoch(modifiedAt, Qt::UTC).toString(Qt::ISODateWithMs)},
        {QStringLiteral("mode"), QStringLiteral("%1").arg(mode, 4, 8, QLatin1Char('0'))},
    };
    if (type == QLatin1String("symlink"))
        json.insert(QStringLiteral("target"), target);
    return json;
}

WorkspaceFiles::WorkspaceFiles(const QString &rootDirectory)
{
    m_given = QDir::cleanPath(rootDirectory);
    const QString canonical = QFileInfo(rootDirectory).canonicalFilePath();
    m_root = canonical.isEmpty() ? m_given : canonical;
}

void WorkspaceFiles::setSandboxView(const QString &viewPath, const QString &tmpDirectory)
{
    m_view = QDir::cleanPath(viewPath);
    m_tmp = tmpDirectory;
    m_homeIsRoot = true;
}

QString WorkspaceFiles::sandboxPath(const QString &absolute) const
{
    if (m_view.isEmpty())
        return absolute;
    const QString cleaned = QDir::cleanPath(absolute);
    for (const QString &root : {m_root, m_given}) {
        if (!isInside(cleaned, root))
            continue;
        const QString relative = relativeTo(cleaned, root);
        if (relative.isEmpty())
            return m_view;
        if (relative == m_tmp || relative.startsWith(m_tmp + QLatin1Char('/')))
            return QStringLiteral("/tmp") + relative.mid(m_tmp.size());
        return joined(m_view, relative);
    }
    return absolute;
}

QString WorkspaceFiles::relativePath(const QString &absolute) const
{
    return relativeTo(absolute, m_root);
}

Result<QString> WorkspaceFiles::relativeOf(const QString &path) const
{
    if (path.contains(QChar(0)))
        return makeError(QStringLiteral("bad_request"), QStringLiteral("a path may not contain NUL"));
    // "~/x" is "x" where the workspace is its code's HOME.
    const bool underHome = m_homeIsRoot && (path == QLatin1String("~") || path.startsWith(QLatin1String("~/")));
    QStringList segments = (underHome ? path.mid(1) : path).split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (segments.contains(QStringLiteral("..")))
        return forbidden(path, QStringLiteral("\"..\" may not be used in workspace paths"));
    segments.removeAll(QStringLiteral("."));
    QString relative = segments.join(QLatin1Char('/'));
    if (!underHome && QDir::isAbsolutePath(path)) {
        const QString cleaned = QDir::cleanPath(path);
        // The host's path of the directory before the sandbox's /tmp: a workspace may live
        // under the host's /tmp.
        if (!m_view.isEmpty() && isInside(cleaned, m_view)) {
            relative = relativeTo(cleaned, m_view);
        } else if (isInside(cleaned, m_root)) {
            relative = relativeTo(cleaned, m_root);
        } else if (isInside(cleaned, m_given)) {
            relative = relativeTo(cleaned, m_given);
        } else if (!m_view.isEmpty() && isInside(cleaned, QStringLiteral("/tmp"))) {
            const QString inTmp = relativeTo(cleaned, QStringLiteral("/tmp"));
            relative = inTmp.isEmpty() ? m_tmp : joined(m_tmp, inTmp);
        } else {
            // The directory may also be named through another symlink to it (a symlinked home,
            // say). Only the name is mapped here; what it leads to is checked from the root.
            const QString canonical = m_view.isEmpty() ? QFileInfo(cleaned).canonicalFilePath()
                                                       : QString();
            if (canonical.isEmpty() || !isInside(canonical, m_root))
                return forbidden(path, m_view.isEmpty()
                                               ? QStringLiteral("it is outside the workspace directory")
                                               : QStringLiteral("it is outside the sandbox's %1 "
                                                                "and /tmp").arg(m_view));
            relative = relativeTo(canonical, m_root);
        }
    }
    if (relative.section(QLatin1Char('/'), 0, 0) == QLatin1String(WorkspaceDirectory::kMarkerName))
        return forbidden(path, QStringLiteral("it is replhost's marker of the workspace directory"));
    return relative;
}

Result<FileDescriptor> WorkspaceFiles::openRoot() const
{
    FileDescriptor root(::open(QFile::encodeName(m_root).constData(),
                               O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root)
        return makeError(QStringLiteral("io"), QStringLiteral("cannot open the workspace directory "
                                                              "%1: %2").arg(m_root, systemError(errno)));
    return root;
}

Result<WorkspaceFiles::Location> WorkspaceFiles::locate(const QString &path, bool createParents) const
{
    auto relative = relativeOf(path);
    if (!relative)
        return relative.error();
    auto root = openRoot();
    if (!root)
        return root.error();
    Location location;
    location.root = std::move(*root);
    location.relative = *relative;
    location.shown = path;
    const QByteArray encoded = QFile::encodeName(*relative);

    // The whole path, final symlink included, must not lead out: a link that leaves is refused
    // for every call, even those that act on the link itself.
    {
        FileDescriptor whole(openBeneath(location.root.get(), encoded, O_PATH));
        if (!whole && errno != ENOENT && errno != ENOTDIR)
            return resolutionError(path, errno);
    }

    const int slash = encoded.lastIndexOf('/');
    location.name = slash < 0 ? encoded : encoded.mid(slash + 1);
    const QByteArray parentPath = slash < 0 ? QByteArray() : encoded.left(slash);
    location.parent.reset(openBeneath(location.root.get(), parentPath, O_RDONLY | O_DIRECTORY));
    if (location.parent)
        return location;
    if (errno == ENOTDIR)
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("a parent of \"%1\" is a file, not a directory").arg(path));
    if (errno != ENOENT)
        return resolutionError(path, errno);
    if (!createParents) {
        location.parentMissing = true;
        return location;
    }
    // One level at a time, each resolved again from the root, so a level swapped for a symlink
    // between its creation and its use is refused like any other.
    FileDescriptor current(::dup(location.root.get()));
    QByteArray prefix;
    for (const QByteArray &segment : parentPath.split('/')) {
        prefix = prefix.isEmpty() ? segment : prefix + '/' + segment;
        FileDescriptor next(openBeneath(location.root.get(), prefix, O_RDONLY | O_DIRECTORY));
        if (!next && errno == ENOENT) {
            if (::mkdirat(current.get(), segment.constData(), 0777) != 0 && errno != EEXIST)
                return ioError(QStringLiteral("create the directories of"), path, errno);
            next.reset(openBeneath(location.root.get(), prefix, O_RDONLY | O_DIRECTORY));
        }
        if (!next)
            return errno == ENOTDIR
                           ? makeError(QStringLiteral("conflict"),
                                       QStringLiteral("cannot create the directories of \"%1\": "
                                                      "\"%2\" is a file").arg(path, QFile::decodeName(prefix)))
                           : resolutionError(path, errno);
        current = std::move(next);
    }
    location.parent = std::move(current);
    return location;
}

Result<QString> WorkspaceFiles::resolve(const QString &path) const
{
    auto location = locate(path);
    if (!location)
        return location.error();
    return location->relative.isEmpty() ? m_root : joined(m_root, location->relative);
}

Result<QString> WorkspaceFiles::directory(const QString &path) const
{
    auto relative = relativeOf(path);
    if (!relative)
        return relative.error();
    auto root = openRoot();
    if (!root)
        return root.error();
    FileDescriptor directory(openBeneath(root->get(), QFile::encodeName(*relative), O_RDONLY | O_DIRECTORY));
    if (!directory) {
        if (errno == ENOENT || errno == ENOTDIR)
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("\"%1\" is not a directory in the workspace").arg(path));
        return resolutionError(path, errno);
    }
    return relative->isEmpty() ? m_root : joined(m_root, *relative);
}

Result<WorkspaceFiles::Entry> WorkspaceFiles::stat(const QString &path) const
{
    auto location = locate(path);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return notFound(path);
    struct stat st {};
    if (location->name.isEmpty()) {
        if (::fstat(location->parent.get(), &st) != 0)
            return ioError(QStringLiteral("stat"), path, errno);
        Entry entry = entryOf(st, m_root, location->parent.get(), QByteArray("."), QString());
        entry.name.clear();
        return entry;
    }
    if (!lstatAt(location->parent.get(), location->name, &st))
        return errno == ENOENT ? notFound(path) : ioError(QStringLiteral("stat"), path, errno);
    return entryOf(st, m_root, location->parent.get(), location->name, location->relative);
}

Result<QList<WorkspaceFiles::Entry>> WorkspaceFiles::list(const QString &directory) const
{
    auto location = locate(directory);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return notFound(directory);
    // Through symlinks that stay inside: listing a directory reveals names, and only inside.
    FileDescriptor fd(openBeneath(location->root.get(), QFile::encodeName(location->relative),
                                  O_RDONLY | O_DIRECTORY));
    if (!fd) {
        if (errno == ENOTDIR)
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("\"%1\" is a file, not a directory").arg(directory));
        return resolutionError(directory, errno);
    }
    DIR *dir = ::fdopendir(fd.get());
    if (!dir)
        return ioError(QStringLiteral("list"), directory, errno);
    const int dirFd = fd.release();
    QList<Entry> entries;
    const bool atRoot = location->relative.isEmpty();
    while (const dirent *item = ::readdir(dir)) {
        const QByteArray name(item->d_name);
        if (name == "." || name == ".." || (atRoot && name == WorkspaceDirectory::kMarkerName))
            continue;
        struct stat st {};
        if (!lstatAt(dirFd, name, &st))
            continue;  // gone since it was read
        entries.append(entryOf(st, m_root, dirFd, name, joined(location->relative, QFile::decodeName(name))));
    }
    ::closedir(dir);
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return a.name < b.name; });
    return entries;
}

Result<WorkspaceFiles::OpenFile> WorkspaceFiles::open(const QString &path) const
{
    auto location = locate(path);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return notFound(path);
    if (location->name.isEmpty())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("\"%1\" is a directory; list it instead").arg(path));
    // Told apart before opening: opening a device can have effects of its own.
    struct stat before {};
    if (!lstatAt(location->parent.get(), location->name, &before))
        return errno == ENOENT ? notFound(path) : ioError(QStringLiteral("stat"), path, errno);
    if (S_ISDIR(before.st_mode))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("\"%1\" is a directory; list it instead").arg(path));
    if (!S_ISREG(before.st_mode))
        return notRegular(path, before.st_mode);
    // O_NONBLOCK: a FIFO swapped in meanwhile opens at once instead of waiting for a writer.
    FileDescriptor fd(::openat(location->parent.get(), location->name.constData(),
                               O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        if (errno == ELOOP || errno == ENXIO)
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("\"%1\" stopped being a regular file while it was "
                                            "opened").arg(path));
        return errno == ENOENT ? notFound(path) : ioError(QStringLiteral("open"), path, errno);
    }
    struct stat after {};
    if (::fstat(fd.get(), &after) != 0)
        return ioError(QStringLiteral("stat"), path, errno);
    if (!S_ISREG(after.st_mode))
        return notRegular(path, after.st_mode);
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    return OpenFile{std::make_shared<FileDescriptor>(std::move(fd)), location->relative, qint64(after.st_size)};
}

Result<QByteArray> WorkspaceFiles::read(const QString &path, qint64 offset, qint64 length) const
{
    auto file = open(path);
    if (!file)
        return file.error();
    const qint64 start = std::max<qint64>(0, offset);
    const qint64 available = std::max<qint64>(0, file->size - start);
    return file->read(start, length < 0 ? available : std::min(length, available));
}

Result<std::unique_ptr<WorkspaceFiles::PendingWrite>> WorkspaceFiles::beginWrite(const QString &path,
                                                                                 bool parents) const
{
    auto location = locate(path, parents);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("the directory of \"%1\" does not exist").arg(path));
    if (location->name.isEmpty())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" is a directory; a file cannot replace it").arg(path));
    struct stat st {};
    const bool existed = lstatAt(location->parent.get(), location->name, &st);
    if (existed && S_ISDIR(st.st_mode))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" is a directory; a file cannot replace it").arg(path));
    if (existed && S_ISLNK(st.st_mode))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" is a symbolic link; write to the file it points to, "
                                        "or delete the link first").arg(path));
    if (existed && !S_ISREG(st.st_mode))
        return notRegular(path, st.st_mode);

    std::unique_ptr<PendingWrite> pending(new PendingWrite);
    for (int attempt = 0; attempt < 8 && !pending->m_file; ++attempt) {
        pending->m_temporaryName = ".replhost-" + QByteArray::number(QRandomGenerator::global()->generate64(), 36)
                                   + ".part";
        pending->m_file.reset(::openat(location->parent.get(), pending->m_temporaryName.constData(),
                                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
        if (!pending->m_file && errno != EEXIST)
            return ioError(QStringLiteral("write"), path, errno);
    }
    if (!pending->m_file)
        return ioError(QStringLiteral("write"), path, EEXIST);
    if (existed)
        ::fchmod(pending->m_file.get(), st.st_mode & 07777);
    pending->m_root = m_root;
    pending->m_path = location->relative;
    pending->m_directory = std::move(location->parent);
    pending->m_name = location->name;
    pending->m_existed = existed;
    return pending;
}

WorkspaceFiles::PendingWrite::~PendingWrite()
{
    if (!m_committed && m_directory && !m_temporaryName.isEmpty())
        ::unlinkat(m_directory.get(), m_temporaryName.constData(), 0);
}

Result<void> WorkspaceFiles::PendingWrite::append(QByteArrayView data)
{
    return writeAll(m_file.get(), data, m_path);
}

Result<WorkspaceFiles::Written> WorkspaceFiles::PendingWrite::commit()
{
    struct stat st {};
    if (lstatAt(m_directory.get(), m_name, &st) && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" became %2 while it was written; nothing was "
                                        "replaced").arg(m_path, kindOf(st.st_mode)));
    // rename(2) replaces the name itself: had it become a symlink after the check, the link
    // would be replaced, never followed.
    if (::renameat(m_directory.get(), m_temporaryName.constData(), m_directory.get(), m_name.constData()) != 0)
        return errno == EISDIR ? makeError(QStringLiteral("conflict"),
                                           QStringLiteral("\"%1\" became a directory while it was "
                                                          "written").arg(m_path))
                               : ioError(QStringLiteral("write"), m_path, errno);
    m_committed = true;
    if (::fstat(m_file.get(), &st) != 0)
        return ioError(QStringLiteral("stat"), m_path, errno);
    m_file.reset();
    return Written{entryOf(st, m_root, m_directory.get(), m_name, m_path), !m_existed};
}

Result<WorkspaceFiles::Written> WorkspaceFiles::write(const QString &path, QByteArrayView data,
                                                      bool parents) const
{
    auto pending = beginWrite(path, parents);
    if (!pending)
        return pending.error();
    if (auto appended = (*pending)->append(data); !appended)
        return appended.error();
    return (*pending)->commit();
}

Result<std::unique_ptr<WorkspaceFiles::PendingWrite>> WorkspaceFiles::replaceText(
        const QString &path, const QByteArray &from, const QByteArray &to, qint64 *count) const
{
    *count = 0;
    if (from.isEmpty())
        return makeError(QStringLiteral("bad_request"), QStringLiteral("the text to replace is empty"));
    auto file = open(path);
    if (!file)
        return file.error();
    auto pending = beginWrite(path, false);
    if (!pending)
        return pending.error();
    // A match may straddle two blocks: the last from.size() - 1 bytes wait for the next block.
    QByteArray carried;
    qint64 offset = 0;
    for (;;) {
        auto block = file->read(offset, kBlockBytes);
        if (!block)
            return block.error();
        offset += block->size();
        const bool atEnd = block->isEmpty();
        QByteArray text = carried + *block;
        QByteArray out;
        qsizetype position = 0;
        for (;;) {
            const qsizetype found = text.indexOf(from, position);
            if (found < 0)
                break;
            out.append(QByteArrayView(text).sliced(position, found - position)).append(to);
            position = found + from.size();
            ++*count;
        }
        const qsizetype keep = atEnd ? 0 : std::min<qsizetype>(text.size() - position, from.size() - 1);
        out.append(QByteArrayView(text).sliced(position, text.size() - position - keep));
        carried = text.right(keep);
        if (auto appended = (*pending)->append(out); !appended)
            return appended.error();
        if (atEnd)
            break;
    }
    return pending;
}

Result<void> WorkspaceFiles::removeContents(int directoryFd, const QString &shownPath)
{
    struct Remover {
        QString shown;
        int failures = 0;
        int firstError = 0;

        void fail(int error)
        {
            if (failures++ == 0)
                firstError = error;
        }

        void removeIn(int fd, int depth)
        {
            // The names first: removing while reading a directory may skip entries.
            QList<QByteArray> names;
            {
                FileDescriptor copy(::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
                DIR *dir = copy ? ::fdopendir(copy.get()) : nullptr;
                if (!dir) {
                    fail(errno);
                    return;
                }
                copy.release();
                while (const dirent *item = ::readdir(dir)) {
                    const QByteArray name(item->d_name);
                    if (name != "." && name != "..")
                        names.append(name);
                }
                ::closedir(dir);
            }
            for (const QByteArray &name : std::as_const(names)) {
                struct stat st {};
                if (!lstatAt(fd, name, &st))
                    continue;
                if (S_ISDIR(st.st_mode)) {
                    // O_NOFOLLOW: a directory swapped for a symlink since the stat is not entered.
                    FileDescriptor child(::openat(fd, name.constData(),
                                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                    if (child && depth < kMaxRemoveDepth)
                        removeIn(child.get(), depth + 1);
                    else if (child)
                        fail(ELOOP);
                    if (::unlinkat(fd, name.constData(), AT_REMOVEDIR) == 0)
                        continue;
                    if (errno != ENOTDIR) {
                        fail(errno);
                        continue;
                    }
                }
                if (::unlinkat(fd, name.constData(), 0) != 0 && errno != ENOENT)
                    fail(errno);
            }
        }
    } remover{shownPath};
    remover.removeIn(directoryFd, 0);
    if (remover.failures > 0)
        return makeError(QStringLiteral("io"),
                         QStringLiteral("%1 files in \"%2\" could not be deleted (%3)")
                                 .arg(remover.failures).arg(shownPath, systemError(remover.firstError)));
    return {};
}

Result<void> WorkspaceFiles::remove(const QString &path, bool recursive) const
{
    auto location = locate(path);
    if (!location)
        return location.error();
    if (location->name.isEmpty())
        return forbidden(path, QStringLiteral("it is the workspace directory itself; delete the "
                                              "workspace instead"));
    if (location->parentMissing)
        return notFound(path);
    const int parent = location->parent.get();
    struct stat st {};
    if (!lstatAt(parent, location->name, &st))
        return errno == ENOENT ? notFound(path) : ioError(QStringLiteral("delete"), path, errno);
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(parent, location->name.constData(), 0) != 0)
            return ioError(QStringLiteral("delete"), path, errno);
        return {};
    }
    if (::unlinkat(parent, location->name.constData(), AT_REMOVEDIR) == 0)
        return {};
    if (errno != ENOTEMPTY && errno != EEXIST)
        return ioError(QStringLiteral("delete"), path, errno);
    if (!recursive)
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("directory \"%1\" is not empty; delete it with recursive").arg(path));
    FileDescriptor directory(::openat(parent, location->name.constData(),
                                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!directory)
        return ioError(QStringLiteral("delete"), path, errno);
    if (auto removed = removeContents(directory.get(), path); !removed)
        return removed;
    if (::unlinkat(parent, location->name.constData(), AT_REMOVEDIR) != 0)
        return ioError(QStringLiteral("delete"), path, errno);
    return {};
}

Result<WorkspaceFiles::Entry> WorkspaceFiles::move(const QString &from, const QString &to,
                                                   bool overwrite) const
{
    auto source = locate(from);
    if (!source)
        return source.error();
    auto target = locate(to);
    if (!target)
        return target.error();
    if (source->name.isEmpty() || target->name.isEmpty())
        return forbidden(source->name.isEmpty() ? from : to,
                         QStringLiteral("the workspace directory itself cannot be moved or replaced"));
    struct stat sourceStat {};
    if (source->parentMissing || !lstatAt(source->parent.get(), source->name, &sourceStat))
        return notFound(from);
    if (source->relative == target->relative)
        return entryOf(sourceStat, m_root, source->parent.get(), source->name, source->relative);
    const bool sourceIsDir = S_ISDIR(sourceStat.st_mode);
    if (sourceIsDir && target->relative.startsWith(source->relative + QLatin1Char('/')))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("cannot move \"%1\" into itself").arg(from));
    struct stat targetStat {};
    if (!target->parentMissing && lstatAt(target->parent.get(), target->name, &targetStat)) {
        if (!overwrite)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("\"%1\" exists; pass overwrite to replace it").arg(to));
        const bool targetIsDir = S_ISDIR(targetStat.st_mode);
        if (targetIsDir != sourceIsDir)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("\"%1\" is a %2 and cannot be replaced by a %3")
                                 .arg(to, targetIsDir ? QStringLiteral("directory") : QStringLiteral("file"),
                                      sourceIsDir ? QStringLiteral("directory") : QStringLiteral("file")));
    }
    if (target->parentMissing) {
        target = locate(to, true);
        if (!target)
            return target.error();
    }
    // Without overwrite, RENAME_NOREPLACE keeps a file created meanwhile.
    const int renamed = ::renameat2(source->parent.get(), source->name.constData(), target->parent.get(),
                                    target->name.constData(), overwrite ? 0 : RENAME_NOREPLACE);
    if (renamed != 0) {
        const int error = errno;
        if (error == ENOTEMPTY || error == EEXIST)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("\"%1\" exists (a directory that is not empty, or a file "
                                            "created meanwhile)").arg(to));
        if (error == EINVAL)
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("cannot move \"%1\" into itself").arg(from));
        return makeError(QStringLiteral("io"), QStringLiteral("cannot move \"%1\" to \"%2\": %3")
                                                   .arg(from, to, systemError(error)));
    }
    struct stat movedStat {};
    if (!lstatAt(target->parent.get(), target->name, &movedStat))
        movedStat = sourceStat;
    return entryOf(movedStat, m_root, target->parent.get(), target->name, target->relative);
}

Result<WorkspaceFiles::Written> WorkspaceFiles::makeDirectory(const QString &path, bool parents) const
{
    auto location = locate(path, parents);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("the parent directory of \"%1\" does not exist").arg(path));
    struct stat st {};
    if (location->name.isEmpty()) {
        if (::fstat(location->parent.get(), &st) != 0)
            return ioError(QStringLiteral("stat"), path, errno);
        return Written{entryOf(st, m_root, location->parent.get(), ".", QString()), false};
    }
    if (lstatAt(location->parent.get(), location->name, &st)) {
        if (S_ISDIR(st.st_mode))
            return Written{entryOf(st, m_root, location->parent.get(), location->name, location->relative), false};
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" exists and is not a directory").arg(path));
    }
    if (::mkdirat(location->parent.get(), location->name.constData(), 0777) != 0)
        return errno == EEXIST ? makeError(QStringLiteral("conflict"),
                                           QStringLiteral("\"%1\" was created meanwhile").arg(path))
                               : ioError(QStringLiteral("create directory"), path, errno);
    if (!lstatAt(location->parent.get(), location->name, &st))
        return ioError(QStringLiteral("stat"), path, errno);
    return Written{entryOf(st, m_root, location->parent.get(), location->name, location->relative), true};
}

Result<void> WorkspaceFiles::setMode(const QString &path, int mode) const
{
    if (mode < 0 || mode > 07777)
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("mode %1 of \"%2\" is not a permission mode").arg(mode, 0, 8).arg(path));
    auto location = locate(path);
    if (!location)
        return location.error();
    if (location->parentMissing)
        return notFound(path);
    FileDescriptor fd;
    if (location->name.isEmpty()) {
        fd = std::move(location->parent);
    } else {
        struct stat st {};
        if (!lstatAt(location->parent.get(), location->name, &st))
            return errno == ENOENT ? notFound(path) : ioError(QStringLiteral("stat"), path, errno);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
            return notRegular(path, st.st_mode);
        // Opened without following, so the mode changes what was checked, never a link's target.
        fd.reset(::openat(location->parent.get(), location->name.constData(),
                          O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC
                                  | (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0)));
        if (!fd)
            return errno == ELOOP ? notRegular(path, S_IFLNK) : ioError(QStringLiteral("open"), path, errno);
        struct stat opened {};
        if (::fstat(fd.get(), &opened) != 0 || (opened.st_mode & S_IFMT) != (st.st_mode & S_IFMT))
            return notRegular(path, opened.st_mode);
    }
    if (::fchmod(fd.get(), mode_t(mode)) != 0)
        return ioError(QStringLiteral("change the mode of"), path, errno);
    return {};
}

} // namespace replhost::core
