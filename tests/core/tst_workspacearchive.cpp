// SPDX-License-Identifier: Apache-2.0
// core::WorkspaceArchive: a workspace's rows and files as one tar archive and back, exactly; and
// an archive is untrusted input, so what would leave the directory or is not a plain file or
// directory is refused, and what code in a workspace made (a FIFO, a symlink) is never followed.

#include "core/workspacearchive.h"
#include "core/workspacedirectory.h"
#include "storage/store.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QScopeGuard>
#include <QTest>

#include <clocale>

#include <archive.h>
#include <archive_entry.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace replhost;
using core::WorkspaceArchive;

namespace {

// A tar archive of `entries` (path, type, bytes) made with libarchive, for archives pack()
// would never make.
QByteArray tarOf(const QList<std::tuple<QByteArray, mode_t, QByteArray>> &entries)
{
    QByteArray out(1 << 20, '\0');
    size_t used = 0;
    archive *writer = archive_write_new();
    archive_write_set_format_pax_restricted(writer);
    archive_write_open_memory(writer, out.data(), size_t(out.size()), &used);
    for (const auto &[path, type, data] : entries) {
        archive_entry *entry = archive_entry_new();
        archive_entry_set_pathname(entry, path.constData());
        archive_entry_set_filetype(entry, type);
        archive_entry_set_perm(entry, 0644);
        if (type == AE_IFLNK)
            archive_entry_set_symlink(entry, data.constData());
        archive_entry_set_size(entry, type == AE_IFREG ? la_int64_t(data.size()) : 0);
        archive_write_header(writer, entry);
        if (type == AE_IFREG)
            archive_write_data(writer, data.constData(), size_t(data.size()));
        archive_entry_free(entry);
    }
    archive_write_close(writer);
    archive_write_free(writer);
    out.truncate(qsizetype(used));
    return out;
}

QByteArray manifestBytes()
{
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), QLatin1String(WorkspaceArchive::kFormat)},
                                     {QStringLiteral("version"), WorkspaceArchive::kVersion}})
            .toJson(QJsonDocument::Compact);
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}

} // namespace

class tst_WorkspaceArchive : public QObject {
    Q_OBJECT

private slots:
    void rowsComeBackAsTheyWere();
    void filesComeBackWithTheirModes();
    void namesOutsideAsciiComeBackInAnyLocale_data();
    void namesOutsideAsciiComeBackInAnyLocale();
    void whatCodeMadeIsNotFollowed();
    void filesBeyondTheLimitAreRefused();
    void hostileEntriesAreRefused_data();
    void hostileEntriesAreRefused();
    void anArchiveOfANewerVersionIsRefused();
};

void tst_WorkspaceArchive::rowsComeBackAsTheyWere()
{
    QTemporaryDir dir;
    auto from = storage::Store::open(dir.filePath(QStringLiteral("from.db")));
    auto to = storage::Store::open(dir.filePath(QStringLiteral("to.db")));
    QVERIFY(from && to);
    const QString oldDirectory = dir.filePath(QStringLiteral("old"));
    const QString newDirectory = dir.filePath(QStringLiteral("new"));
    auto workspace = (*from)->createWorkspace(QStringLiteral("ws"), oldDirectory,
                                              QStringLiteral(R"({"isolation":"none"})"));
    QVERIFY(workspace);
    QVERIFY((*from)->setEnv(storage::EnvScope::Workspace, workspace->id, QStringLiteral("A"), QStringLiteral("1")));
    QVERIFY((*from)->unsetEnv(storage::EnvScope::Workspace, workspace->id, QStringLiteral("HOME")));

    storage::ContextRecord context;
    context.id = QStringLiteral("0b5e1f8e-0000-4000-8000-000000000001");
    context.workspaceId = workspace->id;
    context.language = QStringLiteral("bash");
    context.name = QStringLiteral("shell");
    context.cwd = oldDirectory + QStringLiteral("/sub");
    context.executionCount = 2;
    context.replayBaseCount = 1;
    context.replayBaseCwd = oldDirectory;
    QVERIFY((*from)->insertContext(context));
    QVERIFY((*from)->setEnv(storage::EnvScope::Context, context.id, QStringLiteral("B"), QStringLiteral("2")));
    for (int count = 1; count <= 2; ++count) {
        storage::ExecutionRecord run;
        run.id = QStringLiteral("run-%1").arg(count);
        run.contextId = context.id;
        run.code = QStringLiteral("echo %1").arg(count);
        run.status = count == 1 ? QStringLiteral("ok") : QStringLiteral("running");
        run.executionCount = count;
        run.durationMs = 5;
        run.replay = count == 1;
        QVERIFY((*from)->insertExecution(run));
        QVERIFY((*from)->appendEvents({{run.id, 0, R"({"type":"started"})"},
                                       {run.id, 1, R"({"name":"stdout","text":"x\n","type":"stream"})"}}));
    }
    storage::SnapshotRecord snapshot;
    snapshot.contextId = context.id;
    snapshot.executionCount = 2;
    snapshot.format = QStringLiteral("bash-source");
    snapshot.data = "cd -- '" + oldDirectory.toUtf8() + "/sub'\nx=1\n";
    snapshot.lost = QStringLiteral(R"(["jobs"])");
    QVERIFY((*from)->saveSnapshot(snapshot));

    const Result<QJsonObject> manifest = WorkspaceArchive::describe(**from, *workspace);
    QVERIFY2(manifest, manifest ? "" : qPrintable(manifest.error().message));
    auto moved = (*to)->createWorkspace(QStringLiteral("renamed"), newDirectory,
                                        QJsonDocument(manifest->value(QStringLiteral("settings")).toObject())
                                                .toJson(QJsonDocument::Compact));
    QVERIFY(moved);
    const Result<void> restored = WorkspaceArchive::restore(**to, *moved, *manifest);
    QVERIFY2(restored, restored ? "" : qPrintable(restored.error().message));

    QCOMPARE(moved->settings, QStringLiteral(R"({"isolation":"none"})"));
    const auto env = (*to)->env(storage::EnvScope::Workspace, moved->id);
    QVERIFY(env);
    QCOMPARE(env->size(), 2);
    QCOMPARE(env->at(0).key, QStringLiteral("A"));
    QCOMPARE(env->at(0).value, QStringLiteral("1"));
    QVERIFY(env->at(1).isUnset);
    const auto contexts = (*to)->contexts(moved->id);
    QVERIFY(contexts);
    QCOMPARE(contexts->size(), 1);
    const storage::ContextRecord &back = contexts->first();
    QCOMPARE(back.id, context.id);
    QCOMPARE(back.name, context.name);
    QCOMPARE(back.cwd, newDirectory + QStringLiteral("/sub"));  // the same place in the new directory
    QCOMPARE(back.replayBaseCwd, newDirectory);
    QCOMPARE(back.executionCount, 2);
    QCOMPARE(back.replayBaseCount, 1);
    QCOMPARE((*to)->env(storage::EnvScope::Context, context.id)->first().value, QStringLiteral("2"));
    const auto runs = (*to)->executions(context.id, 0, -1);
    QVERIFY(runs);
    QCOMPARE(runs->size(), 2);
    QCOMPARE(runs->at(1).code, QStringLiteral("echo 1"));
    QCOMPARE(runs->at(1).status, QStringLiteral("ok"));
    QCOMPARE(runs->at(0).status, QStringLiteral("aborted"));  // it was still going
    QCOMPARE(runs->at(0).replay, false);
    const auto events = (*to)->events(QStringLiteral("run-1"));
    QVERIFY(events);
    QCOMPARE(events->size(), 2);
    QCOMPARE(events->at(1).seq, 1);
    QCOMPARE(QJsonDocument::fromJson(events->at(1).json).object().value(QStringLiteral("text")).toString(),
             QStringLiteral("x\n"));
    const auto snapshotBack = (*to)->snapshot(context.id);
    QVERIFY(snapshotBack && snapshotBack->has_value());
    QCOMPARE((*snapshotBack)->executionCount, 2);
    QCOMPARE((*snapshotBack)->data, "cd -- '" + newDirectory.toUtf8() + "/sub'\nx=1\n");
    QCOMPARE((*snapshotBack)->lost, QStringLiteral(R"(["jobs"])"));

    // The same ids a second time on one server: refused whole, nothing half-imported.
    auto twice = (*to)->createWorkspace(QStringLiteral("again"), dir.filePath(QStringLiteral("again")));
    QVERIFY(twice);
    QVERIFY(!WorkspaceArchive::restore(**to, *twice, *manifest));
    QVERIFY((*to)->contexts(twice->id)->isEmpty());
    QVERIFY((*to)->env(storage::EnvScope::Workspace, twice->id)->isEmpty());
}

void tst_WorkspaceArchive::filesComeBackWithTheirModes()
{
    QTemporaryDir dir;
    const QString from = dir.filePath(QStringLiteral("from"));
    QVERIFY(QDir().mkpath(from + QStringLiteral("/sub/deeper")));
    QVERIFY(QDir().mkpath(from + QStringLiteral("/empty")));
    QFile script(from + QStringLiteral("/sub/run.sh"));
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write("#!/bin/sh\necho hi\n");
    script.close();
    ::chmod(QFile::encodeName(script.fileName()).constData(), 0750);
    QFile data(from + QStringLiteral("/sub/deeper/data.bin"));
    QVERIFY(data.open(QIODevice::WriteOnly));
    data.write(QByteArray(100000, '\x07'));
    data.close();
    QFile marker(from + QLatin1Char('/') + QLatin1String(core::WorkspaceDirectory::kMarkerName));
    QVERIFY(marker.open(QIODevice::WriteOnly));
    marker.write("id of the old workspace");
    marker.close();

    const QJsonObject manifest{{QStringLiteral("format"), QLatin1String(WorkspaceArchive::kFormat)},
                               {QStringLiteral("version"), WorkspaceArchive::kVersion},
                               {QStringLiteral("name"), QStringLiteral("ws")}};
    const Result<QByteArray> archive = WorkspaceArchive::pack(manifest, from, 1 << 20);
    QVERIFY(archive);
    const Result<WorkspaceArchive::Contents> contents = WorkspaceArchive::unpack(*archive);
    QVERIFY2(contents, contents ? "" : qPrintable(contents.error().message));
    QCOMPARE(contents->manifest.value(QStringLiteral("name")).toString(), QStringLiteral("ws"));
    const QString to = dir.filePath(QStringLiteral("to"));
    QVERIFY(QDir().mkpath(to));
    QVERIFY(WorkspaceArchive::writeFiles(contents->entries, to));

    QCOMPARE(readAll(to + QStringLiteral("/sub/run.sh")), QByteArray("#!/bin/sh\necho hi\n"));
    QCOMPARE(readAll(to + QStringLiteral("/sub/deeper/data.bin")), QByteArray(100000, '\x07'));
    QVERIFY(QFileInfo(to + QStringLiteral("/empty")).isDir());
    struct stat info {};
    QCOMPARE(::stat(QFile::encodeName(to + QStringLiteral("/sub/run.sh")).constData(), &info), 0);
    QCOMPARE(int(info.st_mode & 0777), 0750);
    // The marker says which workspace replhost made the directory for: never carried over.
    QVERIFY(!QFile::exists(to + QLatin1Char('/') + QLatin1String(core::WorkspaceDirectory::kMarkerName)));
}

void tst_WorkspaceArchive::namesOutsideAsciiComeBackInAnyLocale_data()
{
    // The server may run in either: a service's environment often has no LANG at all.
    QTest::addColumn<QByteArray>("locale");
    QTest::newRow("C") << QByteArray("C");
    QTest::newRow("C.UTF-8") << QByteArray("C.UTF-8");
}

void tst_WorkspaceArchive::namesOutsideAsciiComeBackInAnyLocale()
{
    QFETCH(QByteArray, locale);
    const QByteArray previous = ::setlocale(LC_ALL, nullptr);
    const auto restore = qScopeGuard([&] { ::setlocale(LC_ALL, previous.constData()); });
    QVERIFY(::setlocale(LC_ALL, locale.constData()));

    QTemporaryDir dir;
    const QString from = dir.filePath(QStringLiteral("from"));
    const QString name = QStringLiteral("déjà vu/naïve ☃.txt");
    QVERIFY(QDir().mkpath(from + QStringLiteral("/déjà vu")));
    QFile file(from + QLatin1Char('/') + name);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("snow\n");
    file.close();

    const Result<QByteArray> archive = WorkspaceArchive::pack(
            {{QStringLiteral("format"), QLatin1String(WorkspaceArchive::kFormat)}, {QStringLiteral("version"), WorkspaceArchive::kVersion}},
            from, 1 << 20);
    QVERIFY2(archive, archive ? "" : qPrintable(archive.error().message));
    const Result<WorkspaceArchive::Contents> contents = WorkspaceArchive::unpack(*archive);
    QVERIFY2(contents, contents ? "" : qPrintable(contents.error().message));
    const QString to = dir.filePath(QStringLiteral("to"));
    QVERIFY(QDir().mkpath(to));
    QVERIFY(WorkspaceArchive::writeFiles(contents->entries, to));
    QCOMPARE(readAll(to + QLatin1Char('/') + name), QByteArray("snow\n"));
}

void tst_WorkspaceArchive::whatCodeMadeIsNotFollowed()
{
    QTemporaryDir dir;
    QTemporaryDir outside;
    const QString from = dir.filePath(QStringLiteral("from"));
    QVERIFY(QDir().mkpath(from));
    QFile secret(outside.filePath(QStringLiteral("secret")));
    QVERIFY(secret.open(QIODevice::WriteOnly));
    secret.write("not the workspace's");
    secret.close();
    QVERIFY(QFile::link(secret.fileName(), from + QStringLiteral("/link")));
    QVERIFY(QFile::link(outside.path(), from + QStringLiteral("/dirlink")));
    // Opening a FIFO for reading would wait for a writer that never comes.
    QCOMPARE(::mkfifo(QFile::encodeName(from + QStringLiteral("/fifo")).constData(), 0600), 0);
    QFile plain(from + QStringLiteral("/plain.txt"));
    QVERIFY(plain.open(QIODevice::WriteOnly));
    plain.write("kept");
    plain.close();

    const Result<QByteArray> archive = WorkspaceArchive::pack(QJsonObject{{QStringLiteral("format"), QLatin1String(WorkspaceArchive::kFormat)},
                                                                          {QStringLiteral("version"), 1}},
                                                              from, 1 << 20);
    QVERIFY(archive);
    const Result<WorkspaceArchive::Contents> contents = WorkspaceArchive::unpack(*archive);
    QVERIFY(contents);
    QCOMPARE(contents->entries.size(), 1);
    QCOMPARE(contents->entries.first().path, QStringLiteral("plain.txt"));
    QVERIFY(!archive->contains("not the workspace's"));
}

void tst_WorkspaceArchive::filesBeyondTheLimitAreRefused()
{
    QTemporaryDir dir;
    QFile big(dir.filePath(QStringLiteral("big")));
    QVERIFY(big.open(QIODevice::WriteOnly));
    big.write(QByteArray(5000, 'x'));
    big.close();
    const Result<QByteArray> archive = WorkspaceArchive::pack({}, dir.path(), 4096);
    QVERIFY(!archive);
    QCOMPARE(archive.error().code, QStringLiteral("payload_too_large"));
}

void tst_WorkspaceArchive::hostileEntriesAreRefused_data()
{
    QTest::addColumn<QByteArray>("archive");
    const QByteArray manifest = manifestBytes();
    QTest::newRow("parent directory") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest},
                                                {"files/../../escaped", AE_IFREG, "x"}});
    QTest::newRow("absolute path") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest},
                                             {"files//etc/cron.d/x", AE_IFREG, "x"}});
    QTest::newRow("symlink") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest},
                                       {"files/link", AE_IFLNK, "/etc/shadow"}});
    QTest::newRow("FIFO") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest}, {"files/fifo", AE_IFIFO, {}}});
    QTest::newRow("the directory's marker") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest},
                                                      {"files/.replhost-workspace", AE_IFREG, "forged"}});
    QTest::newRow("outside files/") << tarOf({{"replhost-workspace.json", AE_IFREG, manifest}, {"etc/passwd", AE_IFREG, "x"}});
    QTest::newRow("no manifest") << tarOf({{"files/a", AE_IFREG, "x"}});
    QTest::newRow("another format") << tarOf({{"replhost-workspace.json", AE_IFREG, R"({"format":"other","version":1})"}});
    QTest::newRow("not a tar") << QByteArray("{\"format\":\"replhost-workspace\"}");
}

void tst_WorkspaceArchive::hostileEntriesAreRefused()
{
    QFETCH(QByteArray, archive);
    const Result<WorkspaceArchive::Contents> contents = WorkspaceArchive::unpack(archive);
    QVERIFY(!contents);
    QCOMPARE(contents.error().code, QStringLiteral("bad_request"));
}

void tst_WorkspaceArchive::anArchiveOfANewerVersionIsRefused()
{
    const QByteArray newer = QJsonDocument(QJsonObject{{QStringLiteral("format"), QLatin1String(WorkspaceArchive::kFormat)},
                                                       {QStringLiteral("version"), WorkspaceArchive::kVersion + 1}})
                                     .toJson(QJsonDocument::Compact);
    const Result<WorkspaceArchive::Contents> contents = WorkspaceArchive::unpack(tarOf({{"replhost-workspace.json", AE_IFREG, newer}}));
    QVERIFY(!contents);
    QVERIFY(contents.error().message.contains(QStringLiteral("version")));
}

QTEST_GUILESS_MAIN(tst_WorkspaceArchive)
#include "tst_workspacearchive.moc"
