// SPDX-License-Identifier: Apache-2.0
// WorkspaceDirectory: a purge deletes only a directory replhost created for that workspace, and
// never follows a symlink out of it, on real directories.

#include "core/workspacedirectory.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using replhost::core::WorkspaceDirectory;

class tst_WorkspaceDirectory : public QObject {
    Q_OBJECT

private slots:
    void init();

    void createdDirectoryIsPrivateAndPurged();
    void existingDirectoryIsUsedAndNeverPurged();
    void aForgedMarkerWithoutTheRecordIsRefused();
    void anotherDirectoryAtThePathIsRefused();
    void aMarkerNamingAnotherWorkspaceIsRefused();
    void purgeNeverFollowsSymlinksOut();
    void aDirectoryGoneAlreadyIsPurged();

private:
    QString base(const QString &relative) const { return QDir(m_base).filePath(relative); }
    static void writeFile(const QString &path, const QByteArray &data);

    std::unique_ptr<QTemporaryDir> m_temp;
    QString m_base;
    QString m_records;
};

void tst_WorkspaceDirectory::writeFile(const QString &path, const QByteArray &data)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(data);
}

void tst_WorkspaceDirectory::init()
{
    m_temp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_temp->isValid());
    m_base = QFileInfo(m_temp->path()).canonicalFilePath();
    m_records = base(QStringLiteral("data/workspace-directories"));
}

void tst_WorkspaceDirectory::createdDirectoryIsPrivateAndPurged()
{
    const QString directory = base(QStringLiteral("made/here/ws"));
    const auto created = WorkspaceDirectory::create(directory);
    QVERIFY(created.ok());
    QVERIFY(*created);
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(directory).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 07777), 0700);
    QVERIFY(WorkspaceDirectory::claim(directory, QStringLiteral("id-1"), m_records).ok());
    QCOMPARE(::stat(QFile::encodeName(m_records).constData(), &st), 0);
    QCOMPARE(int(st.st_mode & 07777), 0700);
    writeFile(directory + QStringLiteral("/deep/er/file.txt"), "x");

    QVERIFY(WorkspaceDirectory::checkPurge(directory, QStringLiteral("id-1"), m_records).ok());
    QVERIFY(QFileInfo::exists(directory));  // a check deletes nothing
    const auto purged = WorkspaceDirectory::purge(directory, QStringLiteral("id-1"), m_records);
    QVERIFY2(purged.ok(), qPrintable(purged.ok() ? QString() : purged.error().message));
    QVERIFY(!QFileInfo::exists(directory));
    QVERIFY(QFileInfo::exists(base(QStringLiteral("made/here"))));
    QVERIFY(!QFileInfo::exists(QDir(m_records).filePath(QStringLiteral("id-1"))));
}

void tst_WorkspaceDirectory::existingDirectoryIsUsedAndNeverPurged()
{
    const QString directory = base(QStringLiteral("existing"));
    writeFile(directory + QStringLiteral("/precious.txt"), "keep me");
    const auto created = WorkspaceDirectory::create(directory);
    QVERIFY(created.ok());
    QVERIFY(!*created);
    const auto purged = WorkspaceDirectory::purge(directory, QStringLiteral("id-2"), m_records);
    QVERIFY(!purged.ok());
    QCOMPARE(purged.error().code, QStringLiteral("forbidden"));
    QVERIFY2(purged.error().message.contains(directory), qPrintable(purged.error().message));
    QVERIFY(QFileInfo::exists(directory + QStringLiteral("/precious.txt")));
}

void tst_WorkspaceDirectory::aForgedMarkerWithoutTheRecordIsRefused()
{
    // Code in a workspace created on an existing directory writes the marker itself.
    const QString directory = base(QStringLiteral("existing"));
    writeFile(directory + QStringLiteral("/precious.txt"), "keep me");
    writeFile(directory + QLatin1Char('/') + QLatin1String(WorkspaceDirectory::kMarkerName), "id-3\n");
    QCOMPARE(WorkspaceDirectory::purge(directory, QStringLiteral("id-3"), m_records).error().code,
             QStringLiteral("forbidden"));
    QVERIFY(QFileInfo::exists(directory + QStringLiteral("/precious.txt")));
}

void tst_WorkspaceDirectory::anotherDirectoryAtThePathIsRefused()
{
    const QString directory = base(QStringLiteral("ws"));
    QVERIFY(*WorkspaceDirectory::create(directory));
    QVERIFY(WorkspaceDirectory::claim(directory, QStringLiteral("id-4"), m_records).ok());
    // The created directory moves away and another one, with a copied marker, takes its place.
    QVERIFY(QDir().rename(directory, base(QStringLiteral("moved"))));
    writeFile(directory + QStringLiteral("/precious.txt"), "keep me");
    QVERIFY(QFile::copy(base(QStringLiteral("moved/.replhost-workspace")), directory + QStringLiteral("/.replhost-workspace")));
    QCOMPARE(WorkspaceDirectory::purge(directory, QStringLiteral("id-4"), m_records).error().code,
             QStringLiteral("forbidden"));
    QVERIFY(QFileInfo::exists(directory + QStringLiteral("/precious.txt")));
    // A symlink to the created directory at the path is not followed either.
    QVERIFY(QDir(directory).removeRecursively());
    QVERIFY(QFile::link(base(QStringLiteral("moved")), directory));
    QCOMPARE(WorkspaceDirectory::purge(directory, QStringLiteral("id-4"), m_records).error().code,
             QStringLiteral("forbidden"));
    QVERIFY(QFileInfo::exists(base(QStringLiteral("moved/.replhost-workspace"))));
}

void tst_WorkspaceDirectory::aMarkerNamingAnotherWorkspaceIsRefused()
{
    const QString directory = base(QStringLiteral("ws"));
    QVERIFY(*WorkspaceDirectory::create(directory));
    QVERIFY(WorkspaceDirectory::claim(directory, QStringLiteral("id-5"), m_records).ok());
    writeFile(directory + QStringLiteral("/.replhost-workspace"), "someone-else\n");
    QCOMPARE(WorkspaceDirectory::purge(directory, QStringLiteral("id-5"), m_records).error().code,
             QStringLiteral("forbidden"));
    QVERIFY(QFileInfo::exists(directory));
}

void tst_WorkspaceDirectory::purgeNeverFollowsSymlinksOut()
{
    const QString directory = base(QStringLiteral("ws"));
    const QString outside = base(QStringLiteral("outside"));
    writeFile(outside + QStringLiteral("/precious.txt"), "keep me");
    QVERIFY(*WorkspaceDirectory::create(directory));
    QVERIFY(WorkspaceDirectory::claim(directory, QStringLiteral("id-6"), m_records).ok());
    QVERIFY(QFile::link(outside, directory + QStringLiteral("/link-out")));
    QVERIFY(QDir().mkpath(directory + QStringLiteral("/sub")));
    QVERIFY(QFile::link(outside + QStringLiteral("/precious.txt"), directory + QStringLiteral("/sub/file-out")));
    QVERIFY(QFile::link(outside, directory + QStringLiteral("/sub/deeper-out")));
    QVERIFY(WorkspaceDirectory::purge(directory, QStringLiteral("id-6"), m_records).ok());
    QVERIFY(!QFileInfo::exists(directory));
    QVERIFY(QFileInfo::exists(outside + QStringLiteral("/precious.txt")));
}

void tst_WorkspaceDirectory::aDirectoryGoneAlreadyIsPurged()
{
    const QString directory = base(QStringLiteral("ws"));
    QVERIFY(*WorkspaceDirectory::create(directory));
    QVERIFY(WorkspaceDirectory::claim(directory, QStringLiteral("id-7"), m_records).ok());
    QVERIFY(QDir(directory).removeRecursively());
    QVERIFY(WorkspaceDirectory::purge(directory, QStringLiteral("id-7"), m_records).ok());
}

QTEST_GUILESS_MAIN(tst_WorkspaceDirectory)
#include "tst_workspacedirectory.moc"
