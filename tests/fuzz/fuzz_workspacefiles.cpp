// SPDX-License-Identifier: Apache-2.0
// WorkspaceFiles over arbitrary paths, in a real tree made once: a workspace with files,
// directories, a FIFO and symlinks that stay inside, leave it, are absolute or dangle, beside an
// outside directory holding a canary. The first byte picks the call, the rest is the path (UTF-8,
// as a client sends it). Besides the sanitizers it checks the resolver's contract: nothing
// outside ever changes or is read, an answer inside names a path inside, every refusal has a
// known code and a message, and nothing ever blocks on the FIFO.
#include "core/workspacedirectory.h"
#include "core/workspacefiles.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QSet>
#include <QString>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

using replhost::core::WorkspaceFiles;

namespace {

const QByteArray kCanary = "outside canary";

struct Tree {
    QString base;
    QString root;
    QString outside;
};

void writeFile(const QString &path, const QByteArray &data)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size())
        std::abort();
}

const Tree &tree()
{
    static const Tree made = [] {
        char pattern[] = "/tmp/fuzz-workspacefiles-XXXXXX";
        if (!::mkdtemp(pattern))
            std::abort();
        Tree t{QString::fromLocal8Bit(pattern), QString::fromLocal8Bit(pattern) + "/ws",
               QString::fromLocal8Bit(pattern) + "/outside"};
        QDir().mkpath(t.root + "/dir/sub");
        QDir().mkpath(t.outside);
        writeFile(t.outside + "/x", kCanary);
        writeFile(t.root + "/a.txt", "inside a");
        writeFile(t.root + "/dir/b.txt", "inside b");
        writeFile(t.root + "/" + replhost::core::WorkspaceDirectory::kMarkerName, "id\n");
        ::mkfifo(QFile::encodeName(t.root + "/pipe").constData(), 0600);
        QFile::link("dir", t.root + "/in");
        QFile::link("../outside", t.root + "/up");
        QFile::link(t.outside, t.root + "/out");
        QFile::link("/", t.root + "/slash");
        QFile::link(t.root + "/dir", t.root + "/absolute-in");
        QFile::link("missing/../../outside/x", t.root + "/dangling");
        QFile::link("/dev/zero", t.root + "/zero");
        QFile::link("loop", t.root + "/loop");
        // Removed at exit (links as links, never followed); a plain array outlives every
        // static destructor.
        static char removeAtExit[sizeof pattern];
        std::memcpy(removeAtExit, pattern, sizeof pattern);
        std::atexit([] { QDir(QString::fromLocal8Bit(removeAtExit)).removeRecursively(); });
        return t;
    }();
    return made;
}

bool outsideUnchanged(const Tree &t)
{
    QFile canary(t.outside + "/x");
    if (!canary.open(QIODevice::ReadOnly) || canary.readAll() != kCanary)
        return false;
    return QDir(t.outside).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)
           == QStringList{QStringLiteral("x")};
}

void checkError(const replhost::Error &error)
{
    static const QSet<QString> codes{QStringLiteral("bad_request"), QStringLiteral("forbidden"),
                                     QStringLiteral("not_found"), QStringLiteral("conflict"),
                                     QStringLiteral("io")};
    if (!codes.contains(error.code) || error.message.isEmpty())
        std::abort();
}

template <typename T>
void checkResult(const replhost::Result<T> &result)
{
    if (!result.ok())
        checkError(result.error());
}

bool isInside(const QString &absolute, const QString &root)
{
    return absolute == root || absolute.startsWith(root + QLatin1Char('/'));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const Tree &t = tree();
    const WorkspaceFiles files(t.root);
    const QString path = QString::fromUtf8(reinterpret_cast<const char *>(data) + 1, qsizetype(size - 1));
    switch (data[0] % 8) {
    case 0: {
        const auto resolved = files.resolve(path);
        checkResult(resolved);
        if (resolved.ok() && (!isInside(*resolved, t.root)
                              || files.relativePath(*resolved).split(QLatin1Char('/')).contains(QStringLiteral(".."))))
            std::abort();
        break;
    }
    case 1: {
        const auto entry = files.stat(path);
        checkResult(entry);
        if (entry.ok() && entry->path.split(QLatin1Char('/')).contains(QStringLiteral("..")))
            std::abort();
        break;
    }
    case 2: {
        const auto read = files.read(path, 0, 64);
        checkResult(read);
        if (read.ok() && read->startsWith("outside"))
            std::abort();
        break;
    }
    case 3: {
        const auto entries = files.list(path);
        checkResult(entries);
        if (entries.ok()) {
            for (const WorkspaceFiles::Entry &entry : *entries) {
                if (entry.name == QLatin1String(replhost::core::WorkspaceDirectory::kMarkerName)
                    && !entry.path.contains(QLatin1Char('/')))
                    std::abort();
            }
        }
        break;
    }
    case 4: {
        const auto directory = files.directory(path);
        checkResult(directory);
        if (directory.ok() && !isInside(*directory, t.root))
            std::abort();
        break;
    }
    case 5: {
        // Written without creating parents, and taken away again if it was new.
        const auto written = files.write(path, "fuzz", false);
        checkResult(written);
        if (written.ok() && written->created && !files.remove(path).ok())
            std::abort();
        break;
    }
    case 6: {
        const auto made = files.makeDirectory(path, false);
        checkResult(made);
        if (made.ok() && made->created && !files.remove(path).ok())
            std::abort();
        break;
    }
    case 7: {
        qint64 count = 0;
        const auto replaced = files.replaceText(path, "inside", "INSIDE", &count);
        checkResult(replaced);  // never committed: the tree stays as it is
        break;
    }
    }
    if (!outsideUnchanged(t))
        std::abort();
    return 0;
}
