// SPDX-License-Identifier: Apache-2.0
// A workspace archive as a client uploads it (`PUT /v1/workspaces/{ws}/archive`): arbitrary
// bytes through WorkspaceArchive::unpack, and what it accepts through writeFiles into a fresh
// directory. Nothing may be written outside that directory, every accepted path must be a plain
// relative one, and what was written must come back unchanged through pack() and unpack() (the manifest is restore()'s to
// check, on the engine's store).
#include "core/workspacearchive.h"

#include <QByteArray>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>

using replhost::core::WorkspaceArchive;

namespace {

[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "broken: %s\n", what);
    std::abort();
}

bool isPlainRelative(const QString &path)
{
    if (path.isEmpty() || path.startsWith(QLatin1Char('/')) || path.contains(QChar(0)))
        return false;
    for (const QString &part : path.split(QLatin1Char('/'))) {
        if (part.isEmpty() || part == QLatin1String(".") || part == QLatin1String(".."))
            return false;
    }
    return true;
}

// Files as unpack() reports them, by path: the last entry of a path is what writeFiles keeps
// only if there is one; duplicates make writeFiles fail, which the caller checks first.
QHash<QString, WorkspaceArchive::Entry> filesOf(const QList<WorkspaceArchive::Entry> &entries)
{
    QHash<QString, WorkspaceArchive::Entry> files;
    for (const WorkspaceArchive::Entry &entry : entries) {
        if (!entry.directory)
            files.insert(entry.path, entry);
    }
    return files;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const bool once = [] {
        ::umask(0);  // so that a file's mode is the archive's, exactly
        return true;
    }();
    (void)once;
    const QByteArray bytes = QByteArray::fromRawData(reinterpret_cast<const char *>(data), qsizetype(size));
    auto contents = WorkspaceArchive::unpack(bytes);
    if (!contents) {
        if (contents.error().code != QLatin1String("bad_request"))
            broken("unpack failed with another error than bad_request");
        return 0;
    }
    for (const WorkspaceArchive::Entry &entry : contents->entries) {
        if (!isPlainRelative(entry.path))
            broken("an accepted entry's path is not a plain relative path");
        if (entry.directory && !entry.data.isEmpty())
            broken("a directory entry carries data");
    }

    QTemporaryDir parent;
    if (!parent.isValid())
        broken("no temporary directory");
    const QString directory = parent.filePath(QStringLiteral("workspace"));
    if (!QDir().mkdir(directory))
        broken("cannot create the workspace directory");
    const auto written = WorkspaceArchive::writeFiles(contents->entries, directory);

    // Whatever happened, the parent holds the workspace directory and nothing else.
    const QStringList beside = QDir(parent.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::System
                                                             | QDir::NoDotAndDotDot);
    if (beside != QStringList{QStringLiteral("workspace")})
        broken("writeFiles wrote beside the workspace directory");
    QDirIterator walk(directory, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                      QDirIterator::Subdirectories);
    while (walk.hasNext()) {
        const QFileInfo info(walk.next());
        if (info.isSymLink() || !(info.isFile() || info.isDir()))
            broken("writeFiles made something that is neither a file nor a directory");
    }
    if (!written)
        return 0;

    const QHash<QString, WorkspaceArchive::Entry> files = filesOf(contents->entries);
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        QFile file(QDir(directory).filePath(it.key()));
        if (!file.open(QIODevice::ReadOnly) || file.readAll() != it->data)
            broken("a written file does not hold its entry's bytes");
        struct stat info {};
        if (::lstat(QFile::encodeName(file.fileName()).constData(), &info) != 0
            || (info.st_mode & 0777) != mode_t(it->mode & 0777))
            broken("a written file does not have its entry's mode");
    }

    // Readable again: packing what was written gives the same files back.
    const auto packed = WorkspaceArchive::pack(contents->manifest, directory, qint64(1) << 30);
    if (!packed)
        return 0;  // a file of mode 0 that an unprivileged fuzzer cannot read back
    const auto again = WorkspaceArchive::unpack(*packed);
    if (!again)
        broken("an archive made by pack() does not unpack");
    const QHash<QString, WorkspaceArchive::Entry> repacked = filesOf(again->entries);
    if (repacked.size() != files.size())
        broken("pack() and unpack() give another number of files");
    for (auto it = files.cbegin(); it != files.cend(); ++it) {
        const auto back = repacked.constFind(it.key());
        if (back == repacked.cend() || back->data != it->data || (back->mode & 0777) != (it->mode & 0777))
            broken("a file changed through pack() and unpack()");
    }
    return 0;
}
