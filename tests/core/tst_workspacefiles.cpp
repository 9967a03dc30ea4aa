// SPDX-License-Identifier: Apache-2.0
// WorkspaceFiles: every path resolved inside the workspace directory, everything that would leave
// it refused, on a real directory tree with real symlinks, FIFOs and sockets.

#include "core/workspacedirectory.h"
#include "core/workspacefiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstring>
#include <thread>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

using replhost::core::WorkspaceFiles;

class tst_WorkspaceFiles : public QObject {
    Q_OBJECT

private slots:
    void init();

    void resolvesPathsInside_data();
    void resolvesPathsInside();
    void refusesPathsThatLeave_data();
    void refusesPathsThatLeave();
    void nulIsBadRequest();
    void aNameTooLongIsBadRequest_data();
    void aNameTooLongIsBadRequest();
    void rootNamedThroughASymlinkIsInside();
    void aSandboxViewNamesTheWorkspaceAndItsTmp_data();
    void aSandboxViewNamesTheWorkspaceAndItsTmp();
    void aSandboxViewRefusesWhatLeaves_data();
    void aSandboxViewRefusesWhatLeaves();
    void aSandboxViewShowsHostPathsAsTheSandboxSeesThem();
    void withoutAViewSandboxPathsAreTheHosts();

    void listIsSortedWithTypes();
    void listOfAFileOrNothingFails();
    void readWholeAndRanges();
    void readOfADirectoryIsBadRequest();
    void writeCreatesParentsAndReplaces();
    void writeWithoutParentsNeedsTheDirectory();
    void writeOverADirectoryIsConflict();
    void writeThroughAnEscapingSymlinkChangesNothingOutside();
    void removeFilesAndDirectories();
    void removeOfASymlinkKeepsItsTarget();
    void removeOfTheRootIsForbidden();
    void moveRenamesAndCreatesParents();
    void moveRefusesToReplaceUnlessAsked();
    void moveIntoItselfIsBadRequest();
    void moveOutsideIsForbidden();
    void makeDirectoryIsIdempotent();
    void directoryIsTheCwdCheck();
    void setModeChangesTheFileItself();
    void markerIsNeitherListedNorReached();

    void specialFilesAreRefusedWithoutOpeningThem_data();
    void specialFilesAreRefusedWithoutOpeningThem();
    void aSymlinkSwappedInDuringRequestsNeverLeadsOut();
    void replaceTextStreamsAndCommitsOnlyWhenAsked();
    void anUncommittedWriteLeavesNothing();

private:
    QString inRoot(const QString &relative) const { return QDir(m_root).filePath(relative); }
    QString outside(const QString &relative) const { return QDir(m_outside).filePath(relative); }
    static void writeFile(const QString &path, const QByteArray &data);
    static QByteArray readFile(const QString &path);

    std::unique_ptr<QTemporaryDir> m_temp;
    QString m_root;     // the workspace
    QString m_outside;  // a sibling directory the workspace must not reach
};

void tst_WorkspaceFiles::writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(data);
}

QByteArray tst_WorkspaceFiles::readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void tst_WorkspaceFiles::init()
{
    m_temp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_temp->isValid());
    const QString base = QFileInfo(m_temp->path()).canonicalFilePath();
    m_root = base + QStringLiteral("/ws");
    m_outside = base + QStringLiteral("/outside");
    QVERIFY(QDir().mkpath(m_root));
    QVERIFY(QDir().mkpath(m_outside));
    writeFile(outside(QStringLiteral("secret.txt")), "secret");
    writeFile(inRoot(QStringLiteral("a.txt")), "0123456789");
    writeFile(inRoot(QStringLiteral("dir/b.txt")), "b");
    QVERIFY(QDir().mkpath(inRoot(QStringLiteral("empty"))));
    // Symlinks: inside → inside (relative: an absolute one is refused even when it names a place
    // inside), inside → outside (directory and file), and dangling ones.
    QVERIFY(QFile::link(QStringLiteral("dir"), inRoot(QStringLiteral("link-in"))));
    QVERIFY(QFile::link(m_outside, inRoot(QStringLiteral("link-out"))));
    QVERIFY(QFile::link(outside(QStringLiteral("secret.txt")), inRoot(QStringLiteral("secret-link"))));
    QVERIFY(QFile::link(QStringLiteral("/etc"), inRoot(QStringLiteral("etc"))));
    QVERIFY(QFile::link(outside(QStringLiteral("new.txt")), inRoot(QStringLiteral("dangling-out"))));
    QVERIFY(QFile::link(QStringLiteral("later.txt"), inRoot(QStringLiteral("dangling-in"))));
    QVERIFY(QFile::link(inRoot(QStringLiteral("dir")), inRoot(QStringLiteral("absolute-in"))));
    QVERIFY(QFile::link(QStringLiteral("../outside"), inRoot(QStringLiteral("climbing-out"))));
    QVERIFY(QFile::link(QStringLiteral("/proc/self/root"), inRoot(QStringLiteral("magic"))));
    // A dangling link whose target goes through a link that leaves.
    QVERIFY(QFile::link(inRoot(QStringLiteral("link-out/created.txt")), inRoot(QStringLiteral("chain-out"))));
}

void tst_WorkspaceFiles::resolvesPathsInside_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");  // relative to the root
    QTest::newRow("empty is the root") << "" << "";
    QTest::newRow("dot is the root") << "." << "";
    QTest::newRow("slash-less file") << "a.txt" << "a.txt";
    QTest::newRow("nested") << "dir/b.txt" << "dir/b.txt";
    QTest::newRow("dot segments and double slashes") << "./dir//./b.txt" << "dir/b.txt";
    QTest::newRow("trailing slash") << "dir/" << "dir";
    QTest::newRow("missing file") << "new/deeper/file.txt" << "new/deeper/file.txt";
    QTest::newRow("symlink inside") << "link-in/b.txt" << "link-in/b.txt";
    QTest::newRow("dangling symlink inside") << "dangling-in" << "dangling-in";
}

void tst_WorkspaceFiles::resolvesPathsInside()
{
    QFETCH(QString, path);
    QFETCH(QString, expected);
    const WorkspaceFiles files(m_root);
    const auto resolved = files.resolve(path);
    QVERIFY2(resolved.ok(), qPrintable(resolved.ok() ? QString() : resolved.error().message));
    QCOMPARE(*resolved, expected.isEmpty() ? m_root : inRoot(expected));
    QCOMPARE(files.relativePath(*resolved), expected);

    // The same path given absolute.
    const auto absolute = files.resolve(expected.isEmpty() ? m_root : inRoot(expected));
    QVERIFY(absolute.ok());
    QCOMPARE(*absolute, *resolved);
}

void tst_WorkspaceFiles::refusesPathsThatLeave_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("parent") << "..";
    QTest::newRow("parent file") << "../outside/secret.txt";
    QTest::newRow("parent in the middle") << "dir/../../outside/secret.txt";
    QTest::newRow("parent that stays inside") << "dir/../a.txt";
    QTest::newRow("absolute outside") << "/etc/passwd";
    QTest::newRow("absolute sibling") << "OUTSIDE/secret.txt";
    QTest::newRow("absolute prefix trick") << "ROOT-evil/x";
    QTest::newRow("symlink to a directory outside") << "link-out/secret.txt";
    QTest::newRow("symlink to /etc") << "etc/passwd";
    QTest::newRow("symlink itself to /etc") << "etc";
    QTest::newRow("symlink to a file outside") << "secret-link";
    QTest::newRow("dangling symlink outside") << "dangling-out";
    QTest::newRow("dangling through a leaving link") << "chain-out";
    QTest::newRow("new file under a leaving link") << "link-out/new/file.txt";
    QTest::newRow("absolute symlink naming a place inside") << "absolute-in/b.txt";
    QTest::newRow("relative symlink climbing out") << "climbing-out/secret.txt";
    QTest::newRow("proc magic link") << "magic/etc/passwd";
    QTest::newRow("the workspace marker") << ".replhost-workspace";
}

void tst_WorkspaceFiles::refusesPathsThatLeave()
{
    QFETCH(QString, path);
    path.replace(QStringLiteral("OUTSIDE"), m_outside).replace(QStringLiteral("ROOT"), m_root);
    WorkspaceFiles files(m_root);
    const auto resolved = files.resolve(path);
    QVERIFY2(!resolved.ok(), qPrintable(resolved.ok() ? *resolved : QString()));
    QCOMPARE(resolved.error().code, QStringLiteral("forbidden"));
    QVERIFY(resolved.error().message.contains(path));

    // Every operation refuses it the same way, and nothing outside changes.
    QCOMPARE(files.stat(path).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.read(path).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.list(path).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.write(path, "pwned").error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.remove(path, true).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.makeDirectory(path).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.move(path, QStringLiteral("moved")).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.move(QStringLiteral("a.txt"), path, true).error().code, QStringLiteral("forbidden"));
    QCOMPARE(readFile(outside(QStringLiteral("secret.txt"))), QByteArray("secret"));
    QVERIFY(!QFileInfo::exists(outside(QStringLiteral("new.txt"))));
    QVERIFY(!QFileInfo::exists(outside(QStringLiteral("created.txt"))));
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
}

void tst_WorkspaceFiles::aSandboxViewNamesTheWorkspaceAndItsTmp_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");  // relative to the root
    QTest::newRow("the view path") << "/home/user" << "";
    QTest::newRow("a file under it") << "/home/user/a.txt" << "a.txt";
    QTest::newRow("nested, with dot segments") << "/home/user/./dir//b.txt" << "dir/b.txt";
    QTest::newRow("home") << "~" << "";
    QTest::newRow("under home") << "~/dir/b.txt" << "dir/b.txt";
    QTest::newRow("/tmp") << "/tmp" << ".tmp";
    QTest::newRow("under /tmp") << "/tmp/x/y.txt" << ".tmp/x/y.txt";
    QTest::newRow("relative, as always") << "dir/b.txt" << "dir/b.txt";
    QTest::newRow("the host path, still") << "ROOT/a.txt" << "a.txt";
}

void tst_WorkspaceFiles::aSandboxViewNamesTheWorkspaceAndItsTmp()
{
    QFETCH(QString, path);
    QFETCH(QString, expected);
    path.replace(QStringLiteral("ROOT"), m_root);
    WorkspaceFiles files(m_root);
    files.setSandboxView(QStringLiteral("/home/user"), QStringLiteral(".tmp"));
    const auto resolved = files.resolve(path);
    QVERIFY2(resolved.ok(), qPrintable(resolved.ok() ? QString() : resolved.error().message));
    QCOMPARE(*resolved, expected.isEmpty() ? m_root : inRoot(expected));

    // Written through the sandbox's path, the file is in the workspace on the host.
    if (expected.endsWith(QLatin1String(".txt"))) {
        QVERIFY(files.write(path, "through the view").ok());
        QCOMPARE(readFile(inRoot(expected)), QByteArray("through the view"));
        QCOMPARE(*files.read(path), QByteArray("through the view"));
    }
}

void tst_WorkspaceFiles::aSandboxViewRefusesWhatLeaves_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("tmpLink");  // what .tmp is made, "" for a directory
    QTest::newRow("a system file") << "/etc/passwd" << "";
    QTest::newRow("the host's root") << "/" << "";
    QTest::newRow("beside the view") << "/home/other/x" << "";
    QTest::newRow("a prefix of the view") << "/home/username/x" << "";
    QTest::newRow("climbing out of the view") << "/home/user/../../etc/passwd" << "";
    QTest::newRow("climbing out of /tmp") << "/tmp/../etc/passwd" << "";
    QTest::newRow("climbing out of home") << "~/../x" << "";
    QTest::newRow("a prefix of /tmp") << "/tmpfoo/x" << "";
    QTest::newRow("another home") << "/root/secret.txt" << "";
    QTest::newRow("a link under the view that leaves") << "/home/user/link-out/secret.txt" << "";
    QTest::newRow("an absolute link under the view") << "/home/user/absolute-in/b.txt" << "";
    QTest::newRow("/tmp made an absolute link outside") << "/tmp/secret.txt" << "OUTSIDE";
    QTest::newRow("/tmp made a climbing link") << "/tmp/secret.txt" << "../outside";
    QTest::newRow("/tmp made a link to /etc") << "/tmp/passwd" << "/etc";
    QTest::newRow("the marker through the view") << "/home/user/.replhost-workspace" << "";
}

void tst_WorkspaceFiles::aSandboxViewRefusesWhatLeaves()
{
    QFETCH(QString, path);
    QFETCH(QString, tmpLink);
    path.replace(QStringLiteral("OUTSIDE"), m_outside);
    tmpLink.replace(QStringLiteral("OUTSIDE"), m_outside);
    if (tmpLink.isEmpty())
        QVERIFY(QDir().mkpath(inRoot(QStringLiteral(".tmp"))));
    else
        QVERIFY(QFile::link(tmpLink, inRoot(QStringLiteral(".tmp"))));
    WorkspaceFiles files(m_root);
    files.setSandboxView(QStringLiteral("/home/user"), QStringLiteral(".tmp"));
    const auto resolved = files.resolve(path);
    QVERIFY2(!resolved.ok(), qPrintable(resolved.ok() ? *resolved : QString()));
    QCOMPARE(resolved.error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.read(path).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.write(path, "pwned").error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.remove(path, true).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.move(QStringLiteral("a.txt"), path, true).error().code, QStringLiteral("forbidden"));
    QCOMPARE(readFile(outside(QStringLiteral("secret.txt"))), QByteArray("secret"));
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
}

void tst_WorkspaceFiles::aSandboxViewShowsHostPathsAsTheSandboxSeesThem()
{
    WorkspaceFiles files(m_root);
    files.setSandboxView(QStringLiteral("/home/user"), QStringLiteral(".tmp"));
    QCOMPARE(files.sandboxPath(m_root), QStringLiteral("/home/user"));
    QCOMPARE(files.sandboxPath(inRoot(QStringLiteral("dir/b.txt"))), QStringLiteral("/home/user/dir/b.txt"));
    QCOMPARE(files.sandboxPath(inRoot(QStringLiteral(".tmp"))), QStringLiteral("/tmp"));
    QCOMPARE(files.sandboxPath(inRoot(QStringLiteral(".tmp/x"))), QStringLiteral("/tmp/x"));
    QCOMPARE(files.sandboxPath(inRoot(QStringLiteral(".tmpx"))), QStringLiteral("/home/user/.tmpx"));
    QCOMPARE(files.sandboxPath(QStringLiteral("/usr/bin")), QStringLiteral("/usr/bin"));
}

void tst_WorkspaceFiles::withoutAViewSandboxPathsAreTheHosts()
{
    WorkspaceFiles files(m_root);
    files.setHomeIsRoot(true);
    QCOMPARE(files.sandboxPath(inRoot(QStringLiteral("dir"))), inRoot(QStringLiteral("dir")));
    QCOMPARE(files.resolve(QStringLiteral("/tmp/x")).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.resolve(QStringLiteral("/home/user/a.txt")).error().code, QStringLiteral("forbidden"));
}

void tst_WorkspaceFiles::nulIsBadRequest()
{
    const WorkspaceFiles files(m_root);
    QCOMPARE(files.resolve(QStringLiteral("a.txt") + QChar(0) + QStringLiteral("x")).error().code,
             QStringLiteral("bad_request"));
}

void tst_WorkspaceFiles::aNameTooLongIsBadRequest_data()
{
    // The file system's limit is 255 bytes a name: the client's error, not the server's (a 500
    // "io" once, found by the routes fuzz target).
    QTest::addColumn<QString>("operation");
    QTest::addColumn<QString>("path");
    const QString name(300, QLatin1Char('n'));
    QTest::newRow("write") << "write" << name;
    QTest::newRow("write-below") << "write" << QStringLiteral("dir/") + name + QStringLiteral("/x");
    QTest::newRow("write-multibyte") << "write" << QString(200, QChar(0x00e9));
    QTest::newRow("mkdir") << "mkdir" << name;
    QTest::newRow("stat") << "stat" << name;
}

void tst_WorkspaceFiles::aNameTooLongIsBadRequest()
{
    QFETCH(QString, operation);
    QFETCH(QString, path);
    const WorkspaceFiles files(m_root);
    const replhost::Error error = operation == QLatin1String("write") ? files.write(path, "x").error()
            : operation == QLatin1String("mkdir")           ? files.makeDirectory(path).error()
                                                            : files.stat(path).error();
    QCOMPARE(error.code, QStringLiteral("bad_request"));
    QVERIFY2(error.message.contains(QLatin1String("255 bytes")), qPrintable(error.message));
}

void tst_WorkspaceFiles::rootNamedThroughASymlinkIsInside()
{
    const QString alias = QFileInfo(m_root).absolutePath() + QStringLiteral("/alias");
    QVERIFY(QFile::link(m_root, alias));
    const WorkspaceFiles files(alias);
    QCOMPARE(files.root(), m_root);
    QCOMPARE(*files.resolve(alias + QStringLiteral("/a.txt")), inRoot(QStringLiteral("a.txt")));
    QCOMPARE(files.resolve(alias + QStringLiteral("/../outside/secret.txt")).error().code,
             QStringLiteral("forbidden"));
}

void tst_WorkspaceFiles::listIsSortedWithTypes()
{
    const WorkspaceFiles files(m_root);
    const auto entries = files.list(QString());
    QVERIFY(entries.ok());
    QStringList names;
    QHash<QString, WorkspaceFiles::Entry> byName;
    for (const WorkspaceFiles::Entry &entry : *entries) {
        names.append(entry.name);
        byName.insert(entry.name, entry);
    }
    QStringList sorted = names;
    std::sort(sorted.begin(), sorted.end());
    QCOMPARE(names, sorted);
    QCOMPARE(byName.value(QStringLiteral("a.txt")).type, QStringLiteral("file"));
    QCOMPARE(byName.value(QStringLiteral("a.txt")).size, 10);
    QCOMPARE(byName.value(QStringLiteral("a.txt")).path, QStringLiteral("a.txt"));
    QVERIFY(byName.value(QStringLiteral("a.txt")).modifiedAt > 0);
    QCOMPARE(byName.value(QStringLiteral("dir")).type, QStringLiteral("directory"));
    // Symlinks are listed as links, even those that leave (listing reveals no content).
    QCOMPARE(byName.value(QStringLiteral("link-in")).type, QStringLiteral("symlink"));
    QCOMPARE(byName.value(QStringLiteral("link-in")).target, QStringLiteral("dir"));
    QCOMPARE(byName.value(QStringLiteral("link-out")).type, QStringLiteral("symlink"));
    QCOMPARE(byName.value(QStringLiteral("link-out")).target, m_outside);

    const auto nested = files.list(QStringLiteral("dir"));
    QVERIFY(nested.ok());
    QCOMPARE(nested->size(), 1);
    QCOMPARE(nested->front().path, QStringLiteral("dir/b.txt"));
    QCOMPARE(nested->front().toJson().value(QStringLiteral("type")).toString(), QStringLiteral("file"));
}

void tst_WorkspaceFiles::listOfAFileOrNothingFails()
{
    const WorkspaceFiles files(m_root);
    QCOMPARE(files.list(QStringLiteral("a.txt")).error().code, QStringLiteral("bad_request"));
    QCOMPARE(files.list(QStringLiteral("nope")).error().code, QStringLiteral("not_found"));
}

void tst_WorkspaceFiles::readWholeAndRanges()
{
    const WorkspaceFiles files(m_root);
    QCOMPARE(*files.read(QStringLiteral("a.txt")), QByteArray("0123456789"));
    QCOMPARE(*files.read(QStringLiteral("a.txt"), 3, 4), QByteArray("3456"));
    QCOMPARE(*files.read(QStringLiteral("a.txt"), 8), QByteArray("89"));
    QCOMPARE(*files.read(QStringLiteral("a.txt"), 20, 5), QByteArray());
    QCOMPARE(*files.read(QStringLiteral("link-in/b.txt")), QByteArray("b"));
    QCOMPARE(files.read(QStringLiteral("missing.txt")).error().code, QStringLiteral("not_found"));
}

void tst_WorkspaceFiles::readOfADirectoryIsBadRequest()
{
    const WorkspaceFiles files(m_root);
    QCOMPARE(files.read(QStringLiteral("dir")).error().code, QStringLiteral("bad_request"));
    QCOMPARE(files.open(QString()).error().code, QStringLiteral("bad_request"));
}

void tst_WorkspaceFiles::writeCreatesParentsAndReplaces()
{
    WorkspaceFiles files(m_root);
    const auto created = files.write(QStringLiteral("new/deeper/file.txt"), "first");
    QVERIFY(created.ok());
    QVERIFY(created->created);
    QCOMPARE(created->entry.path, QStringLiteral("new/deeper/file.txt"));
    QCOMPARE(created->entry.size, 5);
    QCOMPARE(readFile(inRoot(QStringLiteral("new/deeper/file.txt"))), QByteArray("first"));

    const auto replaced = files.write(QStringLiteral("new/deeper/file.txt"), "second!");
    QVERIFY(replaced.ok());
    QVERIFY(!replaced->created);
    QCOMPARE(readFile(inRoot(QStringLiteral("new/deeper/file.txt"))), QByteArray("second!"));

    // Through a symlink on the way that stays inside; but never through one at the end, not
    // even a link that stays inside: only regular files are written.
    QVERIFY(files.write(QStringLiteral("link-in/c.txt"), "c").ok());
    QCOMPARE(readFile(inRoot(QStringLiteral("dir/c.txt"))), QByteArray("c"));
    QCOMPARE(files.write(QStringLiteral("dangling-in"), "later").error().code, QStringLiteral("conflict"));
    QVERIFY(QFileInfo(inRoot(QStringLiteral("dangling-in"))).isSymLink());
    QVERIFY(!QFileInfo::exists(inRoot(QStringLiteral("later.txt"))));
    QVERIFY(files.write(QStringLiteral("later.txt"), "later").ok());
    QCOMPARE(files.read(QStringLiteral("dangling-in")).error().code, QStringLiteral("bad_request"));

    // A replaced file keeps its mode.
    QVERIFY(QFile::setPermissions(inRoot(QStringLiteral("a.txt")), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    QVERIFY(files.write(QStringLiteral("a.txt"), "new").ok());
    QCOMPARE(files.stat(QStringLiteral("a.txt"))->mode, 0700);

    // Empty files are files.
    QVERIFY(files.write(QStringLiteral("empty.txt"), QByteArray()).ok());
    QCOMPARE(files.stat(QStringLiteral("empty.txt"))->size, 0);
}

void tst_WorkspaceFiles::writeWithoutParentsNeedsTheDirectory()
{
    WorkspaceFiles files(m_root);
    QCOMPARE(files.write(QStringLiteral("no/such/dir.txt"), "x", false).error().code, QStringLiteral("not_found"));
    QVERIFY(!QFileInfo::exists(inRoot(QStringLiteral("no"))));
    // A parent that is a file cannot become a directory.
    QCOMPARE(files.write(QStringLiteral("a.txt/inner"), "x").error().code, QStringLiteral("conflict"));
}

void tst_WorkspaceFiles::writeOverADirectoryIsConflict()
{
    WorkspaceFiles files(m_root);
    QCOMPARE(files.write(QStringLiteral("dir"), "x").error().code, QStringLiteral("conflict"));
    QCOMPARE(files.write(QString(), "x").error().code, QStringLiteral("conflict"));
    QVERIFY(QFileInfo(inRoot(QStringLiteral("dir"))).isDir());
}

void tst_WorkspaceFiles::writeThroughAnEscapingSymlinkChangesNothingOutside()
{
    WorkspaceFiles files(m_root);
    QCOMPARE(files.write(QStringLiteral("secret-link"), "overwritten").error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.write(QStringLiteral("dangling-out"), "created").error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.write(QStringLiteral("link-out/secret.txt"), "overwritten").error().code, QStringLiteral("forbidden"));
    QCOMPARE(readFile(outside(QStringLiteral("secret.txt"))), QByteArray("secret"));
    QVERIFY(!QFileInfo::exists(outside(QStringLiteral("new.txt"))));
}

void tst_WorkspaceFiles::removeFilesAndDirectories()
{
    WorkspaceFiles files(m_root);
    QVERIFY(files.remove(QStringLiteral("a.txt")).ok());
    QVERIFY(!QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
    QCOMPARE(files.remove(QStringLiteral("a.txt")).error().code, QStringLiteral("not_found"));
    QVERIFY(files.remove(QStringLiteral("empty")).ok());
    QCOMPARE(files.remove(QStringLiteral("dir")).error().code, QStringLiteral("conflict"));
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("dir/b.txt"))));
    QVERIFY(files.remove(QStringLiteral("dir"), true).ok());
    QVERIFY(!QFileInfo::exists(inRoot(QStringLiteral("dir"))));
}

void tst_WorkspaceFiles::removeOfASymlinkKeepsItsTarget()
{
    WorkspaceFiles files(m_root);
    QVERIFY(files.remove(QStringLiteral("link-in")).ok());
    QVERIFY(!QFileInfo(inRoot(QStringLiteral("link-in"))).isSymLink());
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("dir/b.txt"))));
    QVERIFY(files.remove(QStringLiteral("dangling-in")).ok());
    // A directory holding a link that leaves: the link goes, the target stays.
    QVERIFY(QFile::link(m_outside, inRoot(QStringLiteral("empty/out"))));
    QVERIFY(files.remove(QStringLiteral("empty"), true).ok());
    QCOMPARE(readFile(outside(QStringLiteral("secret.txt"))), QByteArray("secret"));
}

void tst_WorkspaceFiles::removeOfTheRootIsForbidden()
{
    WorkspaceFiles files(m_root);
    for (const QString &path : {QString(), QStringLiteral("."), QStringLiteral("/"), m_root}) {
        if (path == QLatin1String("/"))
            continue;  // "/" is outside, refused as such
        QCOMPARE(files.remove(path, true).error().code, QStringLiteral("forbidden"));
    }
    QCOMPARE(files.remove(QStringLiteral("/"), true).error().code, QStringLiteral("forbidden"));
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
}

void tst_WorkspaceFiles::moveRenamesAndCreatesParents()
{
    WorkspaceFiles files(m_root);
    const auto moved = files.move(QStringLiteral("a.txt"), QStringLiteral("archive/2024/a.txt"));
    QVERIFY(moved.ok());
    QCOMPARE(moved->path, QStringLiteral("archive/2024/a.txt"));
    QVERIFY(!QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
    QCOMPARE(readFile(inRoot(QStringLiteral("archive/2024/a.txt"))), QByteArray("0123456789"));

    QVERIFY(files.move(QStringLiteral("dir"), QStringLiteral("renamed")).ok());
    QCOMPARE(readFile(inRoot(QStringLiteral("renamed/b.txt"))), QByteArray("b"));
    QCOMPARE(files.move(QStringLiteral("nope"), QStringLiteral("x")).error().code, QStringLiteral("not_found"));
}

void tst_WorkspaceFiles::moveRefusesToReplaceUnlessAsked()
{
    WorkspaceFiles files(m_root);
    QVERIFY(files.write(QStringLiteral("other.txt"), "other").ok());
    QCOMPARE(files.move(QStringLiteral("a.txt"), QStringLiteral("other.txt")).error().code, QStringLiteral("conflict"));
    QCOMPARE(readFile(inRoot(QStringLiteral("other.txt"))), QByteArray("other"));
    QVERIFY(files.move(QStringLiteral("a.txt"), QStringLiteral("other.txt"), true).ok());
    QCOMPARE(readFile(inRoot(QStringLiteral("other.txt"))), QByteArray("0123456789"));
    // A file never replaces a directory, even when asked.
    QCOMPARE(files.move(QStringLiteral("other.txt"), QStringLiteral("dir"), true).error().code, QStringLiteral("conflict"));
    // A directory replaces an empty directory only.
    QVERIFY(files.makeDirectory(QStringLiteral("full/x")).ok());
    QCOMPARE(files.move(QStringLiteral("dir"), QStringLiteral("full"), true).error().code, QStringLiteral("conflict"));
    QVERIFY(files.move(QStringLiteral("dir"), QStringLiteral("empty"), true).ok());
    QCOMPARE(readFile(inRoot(QStringLiteral("empty/b.txt"))), QByteArray("b"));
}

void tst_WorkspaceFiles::moveIntoItselfIsBadRequest()
{
    WorkspaceFiles files(m_root);
    QCOMPARE(files.move(QStringLiteral("dir"), QStringLiteral("dir/inside")).error().code, QStringLiteral("bad_request"));
    QCOMPARE(files.move(QString(), QStringLiteral("elsewhere")).error().code, QStringLiteral("forbidden"));
}

void tst_WorkspaceFiles::moveOutsideIsForbidden()
{
    WorkspaceFiles files(m_root);
    QCOMPARE(files.move(QStringLiteral("a.txt"), outside(QStringLiteral("stolen.txt"))).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.move(QStringLiteral("a.txt"), QStringLiteral("link-out/stolen.txt")).error().code, QStringLiteral("forbidden"));
    QVERIFY(!QFileInfo::exists(outside(QStringLiteral("stolen.txt"))));
    QVERIFY(QFileInfo::exists(inRoot(QStringLiteral("a.txt"))));
}

void tst_WorkspaceFiles::makeDirectoryIsIdempotent()
{
    WorkspaceFiles files(m_root);
    const auto made = files.makeDirectory(QStringLiteral("x/y/z"));
    QVERIFY(made.ok());
    QVERIFY(made->created);
    QCOMPARE(made->entry.type, QStringLiteral("directory"));
    QVERIFY(QFileInfo(inRoot(QStringLiteral("x/y/z"))).isDir());
    const auto again = files.makeDirectory(QStringLiteral("x/y/z"));
    QVERIFY(again.ok());
    QVERIFY(!again->created);
    QCOMPARE(files.makeDirectory(QStringLiteral("a.txt")).error().code, QStringLiteral("conflict"));
    QCOMPARE(files.makeDirectory(QStringLiteral("p/q"), false).error().code, QStringLiteral("not_found"));
    QVERIFY(files.makeDirectory(QStringLiteral("x/single"), false).ok());
}

void tst_WorkspaceFiles::directoryIsTheCwdCheck()
{
    const WorkspaceFiles files(m_root);
    QCOMPARE(*files.directory(QString()), m_root);
    QCOMPARE(*files.directory(QStringLiteral("dir")), inRoot(QStringLiteral("dir")));
    QCOMPARE(*files.directory(QStringLiteral("link-in")), inRoot(QStringLiteral("link-in")));
    QCOMPARE(*files.directory(inRoot(QStringLiteral("dir"))), inRoot(QStringLiteral("dir")));
    QCOMPARE(files.directory(QStringLiteral("a.txt")).error().code, QStringLiteral("bad_request"));
    QCOMPARE(files.directory(QStringLiteral("nope")).error().code, QStringLiteral("bad_request"));
    for (const QString &leaving : {QStringLiteral("link-out"), QStringLiteral("climbing-out"),
                                   QStringLiteral("absolute-in"), QStringLiteral(".."), QStringLiteral("/")})
        QCOMPARE(files.directory(leaving).error().code, QStringLiteral("forbidden"));
}

void tst_WorkspaceFiles::setModeChangesTheFileItself()
{
    const WorkspaceFiles files(m_root);
    QVERIFY(files.setMode(QStringLiteral("a.txt"), 0640).ok());
    QCOMPARE(files.stat(QStringLiteral("a.txt"))->mode, 0640);
    QVERIFY(files.setMode(QStringLiteral("dir"), 0750).ok());
    QCOMPARE(files.stat(QStringLiteral("dir"))->mode, 0750);
    // A link has no mode of its own, and the file outside keeps its own.
    const QFile::Permissions before = QFile::permissions(outside(QStringLiteral("secret.txt")));
    QCOMPARE(files.setMode(QStringLiteral("link-in"), 0777).error().code, QStringLiteral("bad_request"));
    QCOMPARE(files.setMode(QStringLiteral("secret-link"), 0777).error().code, QStringLiteral("forbidden"));
    QCOMPARE(QFile::permissions(outside(QStringLiteral("secret.txt"))), before);
    QCOMPARE(files.setMode(QStringLiteral("a.txt"), 010000).error().code, QStringLiteral("bad_request"));
}

void tst_WorkspaceFiles::markerIsNeitherListedNorReached()
{
    writeFile(inRoot(QLatin1String(replhost::core::WorkspaceDirectory::kMarkerName)), "id\n");
    writeFile(inRoot(QStringLiteral("dir/.replhost-workspace")), "only the root's is replhost's");
    const WorkspaceFiles files(m_root);
    const auto entries = files.list(QString());
    QVERIFY(entries.ok());
    for (const WorkspaceFiles::Entry &entry : *entries)
        QVERIFY(entry.name != QLatin1String(replhost::core::WorkspaceDirectory::kMarkerName));
    QCOMPARE(files.read(QStringLiteral(".replhost-workspace")).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.remove(QStringLiteral("./.replhost-workspace")).error().code, QStringLiteral("forbidden"));
    QCOMPARE(files.move(QStringLiteral("a.txt"), inRoot(QStringLiteral(".replhost-workspace")), true).error().code,
             QStringLiteral("forbidden"));
    QCOMPARE(readFile(inRoot(QStringLiteral(".replhost-workspace"))), QByteArray("id\n"));
    QCOMPARE(*files.read(QStringLiteral("dir/.replhost-workspace")), QByteArray("only the root's is replhost's"));
}

void tst_WorkspaceFiles::specialFilesAreRefusedWithoutOpeningThem_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("code");
    QTest::newRow("FIFO") << "pipe.csv" << "bad_request";
    QTest::newRow("socket") << "socket" << "bad_request";
    QTest::newRow("symlink to /dev/zero") << "zero" << "forbidden";
    QTest::newRow("FIFO through a link inside") << "pipe-link" << "bad_request";
}

void tst_WorkspaceFiles::specialFilesAreRefusedWithoutOpeningThem()
{
    QFETCH(QString, path);
    QFETCH(QString, code);
    // A FIFO nobody writes to: opening it to read without O_NONBLOCK would wait forever.
    QCOMPARE(::mkfifo(QFile::encodeName(inRoot(QStringLiteral("pipe.csv"))).constData(), 0600), 0);
    QVERIFY(QFile::link(QStringLiteral("pipe.csv"), inRoot(QStringLiteral("pipe-link"))));
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(listener >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const QByteArray socketPath = QFile::encodeName(inRoot(QStringLiteral("socket")));
    QVERIFY(size_t(socketPath.size()) < sizeof address.sun_path);
    std::memcpy(address.sun_path, socketPath.constData(), size_t(socketPath.size()));
    QCOMPARE(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
    QVERIFY(QFile::link(QStringLiteral("/dev/zero"), inRoot(QStringLiteral("zero"))));

    const WorkspaceFiles files(m_root);
    const auto read = files.read(path);
    QVERIFY(!read.ok());
    QCOMPARE(read.error().code, code);
    QVERIFY2(read.error().message.contains(path), qPrintable(read.error().message));
    QCOMPARE(files.open(path).error().code, code);
    qint64 count = 0;
    QCOMPARE(files.replaceText(path, "a", "b", &count).error().code, code);
    const auto written = files.write(path, "x");
    QVERIFY(!written.ok());
    QCOMPARE(written.error().code, code == QLatin1String("forbidden") ? code
                                   : path == QLatin1String("pipe-link") ? QStringLiteral("conflict") : code);
    // Still what it was: listed as such, never replaced.
    QVERIFY(QFileInfo(inRoot(path)).isSymLink() || !QFileInfo(inRoot(path)).isFile());
    ::close(listener);
}

void tst_WorkspaceFiles::aSymlinkSwappedInDuringRequestsNeverLeadsOut()
{
    // "d" is swapped between a directory inside and a symlink to the outside directory while the
    // requests run; whatever each one finds, it never reads or writes outside.
    writeFile(outside(QStringLiteral("x")), "outside");
    const QByteArray d = QFile::encodeName(inRoot(QStringLiteral("d")));
    const QByteArray parked = QFile::encodeName(inRoot(QStringLiteral("d-parked")));
    const QByteArray link = QFile::encodeName(inRoot(QStringLiteral("d-link")));
    QVERIFY(QDir().mkpath(inRoot(QStringLiteral("d"))));
    writeFile(inRoot(QStringLiteral("d/x")), "inside");
    QCOMPARE(::symlink(QFile::encodeName(m_outside).constData(), link.constData()), 0);
    std::atomic<bool> stop{false};
    std::thread swapper([&] {
        while (!stop) {
            // d: directory → symlink → directory, each by an atomic rename.
            ::rename(d.constData(), parked.constData());
            ::rename(link.constData(), d.constData());
            ::rename(d.constData(), link.constData());
            ::rename(parked.constData(), d.constData());
        }
    });
    const WorkspaceFiles files(m_root);
    int reads = 0;
    int writes = 0;
    for (int i = 0; i < 3000; ++i) {
        const auto read = files.read(QStringLiteral("d/x"));
        if (read.ok()) {
            ++reads;
            QVERIFY2(*read != "outside", "a read crossed the symlink");
        }
        if (files.write(QStringLiteral("d/x"), "written from a request", false).ok())
            ++writes;
    }
    stop = true;
    swapper.join();
    QCOMPARE(readFile(outside(QStringLiteral("x"))), QByteArray("outside"));
    QCOMPARE(QDir(m_outside).entryList(QDir::Files | QDir::Hidden).size(), 2);  // x, secret.txt
    // Both outcomes happened: the loop raced for real.
    QVERIFY(reads > 0);
    QVERIFY(writes > 0);
}

void tst_WorkspaceFiles::replaceTextStreamsAndCommitsOnlyWhenAsked()
{
    // Matches in the middle of blocks and one across the boundary of the first 256 KiB block.
    QByteArray content(256 * 1024 - 2, 'a');
    content += "NEEDLE";
    content += QByteArray(300 * 1024, 'b') + "NEEDLE" + "tail";
    writeFile(inRoot(QStringLiteral("big.txt")), content);
    const WorkspaceFiles files(m_root);
    qint64 count = 0;
    auto pending = files.replaceText(QStringLiteral("big.txt"), "NEEDLE", "pin", &count);
    QVERIFY(pending.ok());
    QCOMPARE(count, 2);
    QCOMPARE(readFile(inRoot(QStringLiteral("big.txt"))), content);
    QVERIFY((*pending)->commit().ok());
    QByteArray expected = content;
    expected.replace("NEEDLE", "pin");
    QCOMPARE(readFile(inRoot(QStringLiteral("big.txt"))), expected);
    QCOMPARE(files.replaceText(QStringLiteral("missing"), "a", "b", &count).error().code, QStringLiteral("not_found"));
}

void tst_WorkspaceFiles::anUncommittedWriteLeavesNothing()
{
    const WorkspaceFiles files(m_root);
    const QStringList before = QDir(m_root).entryList(QDir::AllEntries | QDir::Hidden | QDir::System);
    {
        auto pending = files.beginWrite(QStringLiteral("a.txt"));
        QVERIFY(pending.ok());
        QVERIFY((*pending)->append("half of it").ok());
    }
    QCOMPARE(QDir(m_root).entryList(QDir::AllEntries | QDir::Hidden | QDir::System), before);
    QCOMPARE(readFile(inRoot(QStringLiteral("a.txt"))), QByteArray("0123456789"));
}

QTEST_GUILESS_MAIN(tst_WorkspaceFiles)
#include "tst_workspacefiles.moc"
