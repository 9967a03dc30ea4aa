// SPDX-License-Identifier: Apache-2.0
#include "workspacefiles.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace replhost::core {

namespace {

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

int permissionBits(QFileDevice::Permissions p)
{
    int mode = 0;
    if (p & QFileDevice::ReadOwner) mode |= 0400;
    if (p & QFileDevice::WriteOwner) mode |= 0200;
    if (p & QFileDevice::ExeOwner) mode |= 0100;
    if (p & QFileDevice::ReadGroup) mode |= 040;
    if (p & QFileDevice::WriteGroup) mode |= 020;
    if (p & QFileDevice::ExeGroup) mode |= 010;
    if (p & QFileDevice::ReadOther) mode |= 04;
    if (p & QFileDevice::WriteOther) mode |= 02;
    if (p & QFileDevice::ExeOther) mode |= 01;
    return mode;
}

// lstat: true for a symlink even when its target is missing.
bool existsNoFollow(const QString &path)
{
    const QFileInfo info(path);
    return info.exists() || info.isSymLink();
}

} // namespace

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
    const QString canonical = QFileInfo(rootDirectory).canonicalFilePath();
    m_root = canonical.isEmpty() ? QDir::cleanPath(rootDirectory) : canonical;
}

bool WorkspaceFiles::isInside(const QString &absolute) const
{
    if (m_root == QLatin1String("/"))
        return absolute.startsWith(QLatin1Char('/'));
    return absolute == m_root || absolute.startsWith(m_root + QLatin1Char('/'));
}

QString WorkspaceFiles::relativePath(const QString &absolute) const
{
    if (absolute == m_root)
        return QString();
    return absolute.mid(m_root == QLatin1String("/") ? 1 : m_root.size() + 1);
}

Result<QString> WorkspaceFiles::resolve(const QString &path) const
{
    if (path.contains(QChar(0)))
        return makeError(QStringLiteral("bad_request"), QStringLiteral("a path may not contain NUL"));
    QStringList segments = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (segments.contains(QStringLiteral("..")))
        return forbidden(path, QStringLiteral("\"..\" may not be used in workspace paths"));
    segments.removeAll(QStringLiteral("."));

    if (QDir::isAbsolutePath(path)) {
        const QString cleaned = QDir::cleanPath(path);
        if (!isInside(cleaned)) {
            // The directory may also be named through a symlink to it (a symlinked home, say).
            const QString canonical = QFileInfo(cleaned).canonicalFilePath();
            if (canonical.isEmpty() || !isInside(canonical))
                return forbidden(path, QStringLiteral("it is outside the workspace directory"));
            return resolve(relativePath(canonical));
        }
        segments = relativePath(cleaned).split(QLatin1Char('/'), Qt::SkipEmptyParts);
    }

    // Walk down one component at a time, so a symlink anywhere on the way is seen.
    QString resolved = m_root;
    bool walking = true;
    for (const QString &segment : std::as_const(segments)) {
        resolved = join(resolved, segment);
        if (!walking)
            continue;
        const QFileInfo info(resolved);
        if (info.isSymLink()) {
            // A dangling link is judged by where it points, so a write through it stays inside.
            QString target = info.canonicalFilePath();
            if (target.isEmpty())
                target = canonicalOfDeepestExisting(QDir::cleanPath(info.symLinkTarget()));
            if (!isInside(target))
                return forbidden(path, QStringLiteral("a symlink on the way leads outside the "
                                                      "workspace directory"));
        } else if (!info.exists()) {
            walking = false;  // nothing below a missing component exists, so no symlink either
        }
    }
    return resolved;
}

QString WorkspaceFiles::join(const QString &directory, const QString &name)
{
    return directory == QLatin1String("/") ? directory + name : directory + QLatin1Char('/') + name;
}

QString WorkspaceFiles::canonicalOfDeepestExisting(const QString &absolute)
{
    // The existing part resolved through its symlinks, the missing rest appended as written.
    QString existing = absolute;
    QStringList missing;
    while (!QFileInfo::exists(existing) && existing != QLatin1String("/")) {
        missing.prepend(QFileInfo(existing).fileName());
        existing = QFileInfo(existing).absolutePath();
    }
    QString result = QFileInfo(existing).canonicalFilePath();
    for (const QString &name : std::as_const(missing))
        result = join(result, name);
    return result;
}

WorkspaceFiles::Entry WorkspaceFiles::entryFor(const QString &absolute) const
{
    const QFileInfo info(absolute);
    Entry entry;
    entry.name = absolute == m_root ? QString() : info.fileName();
    entry.path = relativePath(absolute);
    if (info.isSymLink()) {
        entry.type = QStringLiteral("symlink");
        // Inside the workspace as a workspace path; outside as the absolute path it names.
        const QString target = QDir::cleanPath(info.symLinkTarget());
        entry.target = isInside(target) ? relativePath(target) : target;
    } else if (info.isDir()) {
        entry.type = QStringLiteral("directory");
    } else if (info.isFile()) {
        entry.type = QStringLiteral("file");
        entry.size = info.size();
    } else {
        entry.type = QStringLiteral("other");
    }
    entry.modifiedAt = info.lastModified().toMSecsSinceEpoch();
    entry.mode = permissionBits(info.permissions());
    return entry;
}

Result<WorkspaceFiles::Entry> WorkspaceFiles::stat(const QString &path) const
{
    auto absolute = resolve(path);
    if (!absolute)
        return absolute.error();
    if (!existsNoFollow(*absolute))
        return notFound(path);
    return entryFor(*absolute);
}

Result<QList<WorkspaceFiles::Entry>> WorkspaceFiles::list(const QString &directory) const
{
    auto absolute = resolve(directory);
    if (!absolute)
        return absolute.error();
    const QFileInfo info(*absolute);
    if (!info.exists())
        return notFound(directory);
    if (!info.isDir())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("\"%1\" is a file, not a directory").arg(directory));
    QList<Entry> entries;
    QDirIterator it(*absolute, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
    while (it.hasNext())
        entries.append(entryFor(it.next()));
    std::sort(entries.begin(), entries.end(),
              [](const Entry &a, const Entry &b) { return a.name < b.name; });
    return entries;
}

Result<std::unique_ptr<QFile>> WorkspaceFiles::open(const QString &path) const
{
    auto absolute = resolve(path);
    if (!absolute)
        return absolute.error();
    const QFileInfo info(*absolute);
    if (!info.exists())
        return notFound(path);
    if (info.isDir())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("\"%1\" is a directory; list it instead").arg(path));
    auto file = std::make_unique<QFile>(*absolute);
    if (!file->open(QIODevice::ReadOnly))
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot read \"%1\": %2").arg(path, file->errorString()));
    return file;
}

Result<QByteArray> WorkspaceFiles::read(const QString &path, qint64 offset, qint64 length) const
{
    auto file = open(path);
    if (!file)
        return file.error();
    if (offset > 0 && !(*file)->seek(offset))
        return QByteArray();
    return length < 0 ? (*file)->readAll() : (*file)->read(length);
}

Result<WorkspaceFiles::Written> WorkspaceFiles::write(const QString &path, const QByteArray &data,
                                                      bool parents)
{
    auto absolute = resolve(path);
    if (!absolute)
        return absolute.error();
    if (*absolute == m_root || QFileInfo(*absolute).isDir())
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" is a directory; a file cannot replace it").arg(path));
    const QString parent = QFileInfo(*absolute).absolutePath();
    if (!QFileInfo(parent).isDir()) {
        if (!parents)
            return makeError(QStringLiteral("not_found"),
                             QStringLiteral("the directory of \"%1\" does not exist").arg(path));
        if (existsNoFollow(parent) || !QDir().mkpath(parent))
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("cannot create the directories of \"%1\"").arg(path));
    }
    const bool existed = existsNoFollow(*absolute);
    QSaveFile file(*absolute);
    if (!file.open(QIODevice::WriteOnly))
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot write \"%1\": %2").arg(path, file.errorString()));
    if (file.write(data) != data.size() || !file.commit())
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot write \"%1\": %2").arg(path, file.errorString()));
    return Written{entryFor(*absolute), !existed};
}

Result<void> WorkspaceFiles::remove(const QString &path, bool recursive)
{
    auto absolute = resolve(path);
    if (!absolute)
        return absolute.error();
    if (*absolute == m_root)
        return forbidden(path, QStringLiteral("it is the workspace directory itself; delete the "
                                              "workspace instead"));
    const QFileInfo info(*absolute);
    if (!existsNoFollow(*absolute))
        return notFound(path);
    if (info.isSymLink() || !info.isDir()) {
        if (!QFile::remove(*absolute))
            return makeError(QStringLiteral("io"), QStringLiteral("cannot delete \"%1\"").arg(path));
        return {};
    }
    QDir dir(*absolute);
    if (!dir.isEmpty(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)) {
        if (!recursive)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("directory \"%1\" is not empty; delete it with "
                                            "recursive").arg(path));
        // removeRecursively() unlinks symlinks rather than following them.
        if (!dir.removeRecursively())
            return makeError(QStringLiteral("io"),
                             QStringLiteral("some files in \"%1\" could not be deleted").arg(path));
        return {};
    }
    if (!QDir().rmdir(*absolute))
        return makeError(QStringLiteral("io"), QStringLiteral("cannot delete \"%1\"").arg(path));
    return {};
}

Result<WorkspaceFiles::Entry> WorkspaceFiles::move(const QString &from, const QString &to,
                                                   bool overwrite)
{
    auto source = resolve(from);
    if (!source)
        return source.error();
    auto target = resolve(to);
    if (!target)
        return target.error();
    if (*source == m_root || *target == m_root)
        return forbidden(*source == m_root ? from : to,
                         QStringLiteral("the workspace directory itself cannot be moved or replaced"));
    if (!existsNoFollow(*source))
        return notFound(from);
    if (*source == *target)
        return entryFor(*target);
    const QFileInfo sourceInfo(*source);
    const bool sourceIsDir = sourceInfo.isDir() && !sourceInfo.isSymLink();
    if (sourceIsDir && target->startsWith(*source + QLatin1Char('/')))
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("cannot move \"%1\" into itself").arg(from));

    const QFileInfo targetInfo(*target);
    if (existsNoFollow(*target)) {
        if (!overwrite)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("\"%1\" exists; pass overwrite to replace it").arg(to));
        const bool targetIsDir = targetInfo.isDir() && !targetInfo.isSymLink();
        if (targetIsDir != sourceIsDir)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("\"%1\" is a %2 and cannot be replaced by a %3")
                                 .arg(to, targetIsDir ? QStringLiteral("directory") : QStringLiteral("file"),
                                      sourceIsDir ? QStringLiteral("directory") : QStringLiteral("file")));
    }
    const QString parent = QFileInfo(*target).absolutePath();
    if (!QFileInfo(parent).isDir() && (existsNoFollow(parent) || !QDir().mkpath(parent)))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("cannot create the directories of \"%1\"").arg(to));
    // rename(2) replaces a file or an empty directory atomically; a non-empty one it refuses.
    if (::rename(QFile::encodeName(*source).constData(), QFile::encodeName(*target).constData()) != 0) {
        const int error = errno;
        if (error == ENOTEMPTY || error == EEXIST)
            return makeError(QStringLiteral("conflict"),
                             QStringLiteral("directory \"%1\" is not empty").arg(to));
        return makeError(QStringLiteral("io"), QStringLiteral("cannot move \"%1\" to \"%2\": %3")
                                                   .arg(from, to, QString::fromLocal8Bit(strerror(error))));
    }
    return entryFor(*target);
}

Result<WorkspaceFiles::Written> WorkspaceFiles::makeDirectory(const QString &path, bool parents)
{
    auto absolute = resolve(path);
    if (!absolute)
        return absolute.error();
    const QFileInfo info(*absolute);
    if (info.isDir())
        return Written{entryFor(*absolute), false};
    if (existsNoFollow(*absolute))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("\"%1\" exists and is not a directory").arg(path));
    const QString parent = info.absolutePath();
    if (!parents && !QFileInfo(parent).isDir())
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("the parent directory of \"%1\" does not exist").arg(path));
    if (!(parents ? QDir().mkpath(*absolute) : QDir().mkdir(*absolute)))
        return makeError(QStringLiteral("conflict"),
                         QStringLiteral("cannot create directory \"%1\" (is a parent a file?)").arg(path));
    return Written{entryFor(*absolute), true};
}

} // namespace replhost::core
