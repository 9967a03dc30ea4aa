// SPDX-License-Identifier: Apache-2.0
// The file routes as an attacker meets them, against a real replhost-server and a Poco client:
// code in a workspace swaps a directory for a symlink while requests run, plants FIFOs, sockets
// and links to devices, serves a huge file to a client that does not read, and asks to purge a
// directory replhost did not make. Every file route family is tried: native /v1, OpenSandbox's
// execd and E2B's. And what the server writes is its user's alone.

#include "http/apiclient.h"
#include "http/serverprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTest>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QUrl>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

struct Request {
    QByteArray method;
    QString path;
    QByteArray body;
    Headers headers;
};

QString q(const QString &path)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(path));
}

// A multipart/form-data body: parts of {name, filename (may be empty), content}.
Request multipart(const QByteArray &method, const QString &path,
                  const QList<std::tuple<QByteArray, QByteArray, QByteArray>> &parts)
{
    const QByteArray boundary = "replhost-test-boundary-7f3a";
    QByteArray body;
    for (const auto &[name, fileName, content] : parts) {
        body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + '"';
        if (!fileName.isEmpty())
            body += "; filename=\"" + fileName + '"';
        body += "\r\n\r\n" + content + "\r\n";
    }
    body += "--" + boundary + "--\r\n";
    return {method, path, body, {{"Content-Type", "multipart/form-data; boundary=" + boundary}}};
}

int modeOf(const QString &path)
{
    struct stat st {};
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? int(st.st_mode & 07777) : -1;
}

} // namespace

class tst_FileWalls : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();

    void aSymlinkSwappedDuringRequestsNeverLeadsOut_data();
    void aSymlinkSwappedDuringRequestsNeverLeadsOut();
    void viewPathsReachTheWorkspaceAndItsTmp_data();
    void viewPathsReachTheWorkspaceAndItsTmp();
    void aKeptTmpIsThereBeforeAnyProcess();
    void viewPathsThatLeaveAreRefused_data();
    void viewPathsThatLeaveAreRefused();
    void aKeptTmpSwappedForALinkNeverLeadsOut_data();
    void aKeptTmpSwappedForALinkNeverLeadsOut();
    void specialFilesAreRefusedWhileOthersAreAnswered_data();
    void specialFilesAreRefusedWhileOthersAreAnswered();
    void aHugeFileToAClientThatDoesNotReadStallsNoOne();
    void purgeOfAWorkspaceOnAnExistingDirectoryIsRefused();
    void purgeOfADirectoryReplhostMadeNeverFollowsSymlinks();
    void dataDirectoryDatabaseWalAndTokenArePrivate();
    void anExistingDataDirectoryIsTightenedOnOpen();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    QString onDisk(const QString &relative) const { return QDir(m_root).filePath(relative); }
    ApiClient::Response send(const Request &request) const
    {
        return client().request(request.method, request.path, request.body, request.headers);
    }
    // The read and the write of `path` through one route family, in workspace `ws`.
    Request readOf(const QString &family, const QString &path,
                   const QString &ws = QStringLiteral("default")) const;
    Request writeOf(const QString &family, const QString &path, const QByteArray &content,
                    const QString &ws = QStringLiteral("default")) const;
    QString inView(const QString &relative) const { return QDir(m_viewRoot).filePath(relative); }
    // Makes `directory` swap places with links that lead out while `path` (its "x") is
    // downloaded and uploaded through `family` in workspace `ws`, and checks that nothing
    // outside was reached.
    void raceAgainstSwaps(const QString &family, const QString &ws, const QString &directory,
                          const QString &path);
    QString e2b() const { return QStringLiteral("/e2b/") + QString::fromLatin1(m_server.token()); }

    ServerProcess m_server;
    QString m_root;     // the default workspace's directory
    QString m_viewRoot; // the directory of "viewed", a sandbox seen at /home/user
    QString m_outside;  // a directory outside every workspace, with a canary in it
};

Request tst_FileWalls::readOf(const QString &family, const QString &path, const QString &ws) const
{
    if (family == QLatin1String("native"))
        return {"GET", QStringLiteral("/v1/workspaces/%1/files/content?path=").arg(ws) + q(path), {}, {}};
    if (family == QLatin1String("opensandbox"))
        return {"GET", QStringLiteral("/opensandbox/execd/%1/files/download?path=").arg(ws) + q(path), {}, {}};
    return {"GET", e2b() + QStringLiteral("/workspaces/%1/files?path=").arg(ws) + q(path), {}, {}};
}

Request tst_FileWalls::writeOf(const QString &family, const QString &path, const QByteArray &content,
                               const QString &ws) const
{
    if (family == QLatin1String("native"))
        return {"PUT", QStringLiteral("/v1/workspaces/%1/files/content?parents=false&path=").arg(ws) + q(path),
                content, {{"Content-Type", "application/octet-stream"}}};
    if (family == QLatin1String("opensandbox"))
        return multipart("POST", QStringLiteral("/opensandbox/execd/%1/files/upload").arg(ws),
                         {{"metadata", {}, QJsonDocument(QJsonObject{{QStringLiteral("path"), path}}).toJson()},
                          {"file", "x", content}});
    return multipart("POST", e2b() + QStringLiteral("/workspaces/%1/files?path=").arg(ws) + q(path),
                     {{"file", "x", content}});
}

void tst_FileWalls::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    const auto workspace = client().get(QStringLiteral("/v1/workspaces/default"));
    QCOMPARE(workspace.status, 200);
    m_root = workspace.object().value(QStringLiteral("directory")).toString();
    QVERIFY(QFileInfo(m_root).isDir());
    m_outside = QFileInfo(m_server.dataDir()).absolutePath() + QStringLiteral("/outside");
    // Its files are served whether or not this machine can run its code.
    const auto viewed = client().post(
            QStringLiteral("/v1/workspaces"),
            {{QStringLiteral("name"), QStringLiteral("viewed")},
             {QStringLiteral("settings"), QJsonObject{{QStringLiteral("isolation"), QStringLiteral("sandbox")},
                                                      {QStringLiteral("view_path"), QStringLiteral("/home/user")}}}});
    QCOMPARE(viewed.status, 201);
    m_viewRoot = viewed.object().value(QStringLiteral("directory")).toString();
    QVERIFY(QFileInfo(m_viewRoot).isDir());
}

void tst_FileWalls::init()
{
    for (const QString &name : QDir(m_root).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot)) {
        if (name == QLatin1String(".replhost-workspace"))
            continue;
        const QString path = onDisk(name);
        if (QFileInfo(path).isDir() && !QFileInfo(path).isSymLink())
            QVERIFY(QDir(path).removeRecursively());
        else
            QVERIFY(QFile::remove(path));
    }
    QDir(m_outside).removeRecursively();
    QVERIFY(QDir().mkpath(m_outside));
    QFile canary(m_outside + QStringLiteral("/x"));
    QVERIFY(canary.open(QIODevice::WriteOnly));
    canary.write("outside canary");
}

void tst_FileWalls::aSymlinkSwappedDuringRequestsNeverLeadsOut_data()
{
    QTest::addColumn<QString>("family");
    QTest::newRow("native") << "native";
    QTest::newRow("opensandbox") << "opensandbox";
    QTest::newRow("e2b") << "e2b";
}

void tst_FileWalls::aSymlinkSwappedDuringRequestsNeverLeadsOut()
{
    QFETCH(QString, family);
    raceAgainstSwaps(family, QStringLiteral("default"), onDisk(QStringLiteral("d")), QStringLiteral("d/x"));
}

void tst_FileWalls::raceAgainstSwaps(const QString &family, const QString &ws, const QString &directory,
                                     const QString &path)
{
    // `directory` is, in turn, a directory of the workspace, a symlink to "/" and a symlink to
    // a directory outside holding its own "x": each swap one atomic rename (RENAME_EXCHANGE), so
    // it always exists and the server meets every state at every step of a request.
    QDir(directory).removeRecursively();
    QFile::remove(directory);
    QVERIFY(QDir().mkpath(directory));
    {
        QFile inside(directory + QStringLiteral("/x"));
        QVERIFY(inside.open(QIODevice::WriteOnly));
        inside.write("inside");
    }
    const QString linkToRoot = directory + QStringLiteral("-root");
    const QString linkOut = directory + QStringLiteral("-out");
    QFile::remove(linkToRoot);
    QFile::remove(linkOut);
    QVERIFY(QFile::link(QStringLiteral("/"), linkToRoot));
    QVERIFY(QFile::link(m_outside, linkOut));
    const bool rootHadX = QFileInfo::exists(QStringLiteral("/x"));
    const QByteArray d = QFile::encodeName(directory);
    const QByteArray toRoot = QFile::encodeName(linkToRoot);
    const QByteArray toOutside = QFile::encodeName(linkOut);
    std::atomic<bool> stop{false};
    std::atomic<int> swaps{0};
    std::thread swapper([&] {
        // Each state lasts until the swapper runs again (a yield between swaps, not between
        // pairs of them), so that the directory is a link about half the time even on a loaded
        // machine, where a state held only between two back-to-back swaps is almost never met.
        while (!stop) {
            for (const QByteArray &other : {toRoot, toOutside}) {
                for (int i = 0; i < 2; ++i) {
                    if (::renameat2(AT_FDCWD, d.constData(), AT_FDCWD, other.constData(), RENAME_EXCHANGE) == 0)
                        ++swaps;
                    sched_yield();
                }
            }
        }
    });

    constexpr int kRounds = 1000;  // a download and an upload each
    int downloaded = 0, uploaded = 0, refused = 0;
    QByteArray crossed;
    for (int round = 0; round < kRounds && crossed.isEmpty(); ++round) {
        const auto read = send(readOf(family, path, ws));
        if (read.status == 200) {
            ++downloaded;
            if (!read.body.startsWith("inside") && !read.body.startsWith("uploaded"))
                crossed = "download read " + read.body.left(64);
        } else if (read.status == 403 || read.status == 404) {
            ++refused;
        } else {
            crossed = "download answered " + QByteArray::number(read.status) + ' ' + read.body;
        }
        const auto write = send(writeOf(family, path, "uploaded " + QByteArray::number(round), ws));
        if (write.status == 200 || write.status == 201)
            ++uploaded;
        else if (write.status == 403 || write.status == 404)
            ++refused;
        else
            crossed = "upload answered " + QByteArray::number(write.status) + ' ' + write.body;
    }
    stop = true;
    swapper.join();

    QVERIFY2(crossed.isEmpty(), crossed.constData());
    QFile canary(m_outside + QStringLiteral("/x"));
    QVERIFY(canary.open(QIODevice::ReadOnly));
    QCOMPARE(canary.readAll(), QByteArray("outside canary"));
    QCOMPARE(QDir(m_outside).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot),
             QStringList{QStringLiteral("x")});
    QCOMPARE(QFileInfo::exists(QStringLiteral("/x")), rootHadX);
    // The loop really raced: requests met the directory and the links.
    QVERIFY(swaps > 0);
    QVERIFY2(downloaded > 0 && uploaded > 0 && refused > 0,
             qPrintable(QStringLiteral("%1 downloads, %2 uploads, %3 refused").arg(downloaded).arg(uploaded).arg(refused)));
}

void tst_FileWalls::viewPathsReachTheWorkspaceAndItsTmp_data()
{
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("onDisk");  // relative to the workspace directory
    for (const char *family : {"native", "opensandbox", "e2b"}) {
        QTest::addRow("%s /tmp", family) << family << "/tmp/t.txt" << ".tmp/t.txt";
        QTest::addRow("%s ~", family) << family << "~/h.txt" << "h.txt";
        QTest::addRow("%s view path", family) << family << "/home/user/v.txt" << "v.txt";
    }
}

// The sandbox's own absolute paths and "~" are its workspace and its kept /tmp, through every
// route family, both ways.
void tst_FileWalls::viewPathsReachTheWorkspaceAndItsTmp()
{
    QFETCH(QString, family);
    QFETCH(QString, path);
    QFETCH(QString, onDisk);
    QVERIFY(QDir().mkpath(inView(QStringLiteral(".tmp"))));
    const QByteArray content = "through " + family.toUtf8() + ' ' + path.toUtf8();
    const auto written = send(writeOf(family, path, content, QStringLiteral("viewed")));
    QVERIFY2(written.status == 200 || written.status == 201, written.body.constData());
    QFile file(inView(onDisk));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), content);
    const auto read = send(readOf(family, path, QStringLiteral("viewed")));
    QCOMPARE(read.status, 200);
    QCOMPARE(read.body, content);
    QVERIFY(QFile::remove(inView(onDisk)));
}

// A client's first act may be to write to /tmp (or start a context there) before any process
// of the sandbox made it.
void tst_FileWalls::aKeptTmpIsThereBeforeAnyProcess()
{
    const auto made = client().post(
            QStringLiteral("/v1/workspaces"),
            {{QStringLiteral("name"), QStringLiteral("fresh")},
             {QStringLiteral("settings"), QJsonObject{{QStringLiteral("isolation"), QStringLiteral("sandbox")},
                                                      {QStringLiteral("view_path"), QStringLiteral("/workspace")}}}});
    QCOMPARE(made.status, 201);
    const QString directory = made.object().value(QStringLiteral("directory")).toString();
    const auto written = send(writeOf(QStringLiteral("native"), QStringLiteral("/tmp/first.txt"), "first",
                                      QStringLiteral("fresh")));
    QVERIFY2(written.status == 200 || written.status == 201, written.body.constData());
    QFile file(directory + QStringLiteral("/.tmp/first.txt"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), QByteArray("first"));
}

void tst_FileWalls::viewPathsThatLeaveAreRefused_data()
{
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("path");
    const char *paths[] = {"/etc/passwd", "/home/user/../../etc/passwd", "/tmp/../etc/passwd",
                           "~/../outside/x", "/home/other/x", "/home/userx/x", "/root/x", "/var/x",
                           "/home/user/link-out/x", "/home/user/absolute-link/x",
                           "/tmp/climbing/x", "/home/user/.replhost-workspace"};
    for (const char *family : {"native", "opensandbox", "e2b"})
        for (const char *path : paths)
            QTest::addRow("%s %s", family, path) << family << path;
}

// Every absolute path that is not the sandbox's own is outside, whatever links the code made:
// reads and writes are refused, and nothing outside is read or changed.
void tst_FileWalls::viewPathsThatLeaveAreRefused()
{
    QFETCH(QString, family);
    QFETCH(QString, path);
    QVERIFY(QDir().mkpath(inView(QStringLiteral(".tmp"))));
    QFile::remove(inView(QStringLiteral("link-out")));
    QFile::remove(inView(QStringLiteral("absolute-link")));
    QFile::remove(inView(QStringLiteral(".tmp/climbing")));
    QVERIFY(QFile::link(m_outside, inView(QStringLiteral("link-out"))));
    QVERIFY(QFile::link(m_viewRoot, inView(QStringLiteral("absolute-link"))));
    QVERIFY(QFile::link(QStringLiteral("../../outside"), inView(QStringLiteral(".tmp/climbing"))));
    const auto read = send(readOf(family, path, QStringLiteral("viewed")));
    QVERIFY2(read.status == 403 || read.status == 404 || read.status == 400,
             qPrintable(QStringLiteral("%1: %2").arg(read.status).arg(QString::fromUtf8(read.body))));
    QVERIFY(!read.body.contains("outside canary"));
    QVERIFY(!read.body.contains("root:"));
    const auto write = send(writeOf(family, path, "pwned", QStringLiteral("viewed")));
    QVERIFY2(write.status == 403 || write.status == 404 || write.status == 400,
             qPrintable(QStringLiteral("%1: %2").arg(write.status).arg(QString::fromUtf8(write.body))));
    QFile canary(m_outside + QStringLiteral("/x"));
    QVERIFY(canary.open(QIODevice::ReadOnly));
    QCOMPARE(canary.readAll(), QByteArray("outside canary"));
}

void tst_FileWalls::aKeptTmpSwappedForALinkNeverLeadsOut_data()
{
    aSymlinkSwappedDuringRequestsNeverLeadsOut_data();
}

// The code of a sandbox can make its .tmp a link (to "/", to a directory outside) while
// requests for /tmp/x run.
void tst_FileWalls::aKeptTmpSwappedForALinkNeverLeadsOut()
{
    QFETCH(QString, family);
    raceAgainstSwaps(family, QStringLiteral("viewed"), inView(QStringLiteral(".tmp")), QStringLiteral("/tmp/x"));
}

void tst_FileWalls::specialFilesAreRefusedWhileOthersAreAnswered_data()
{
    QTest::addColumn<QString>("route");
    QTest::addColumn<QString>("kind");
    const QStringList routes{QStringLiteral("native read"), QStringLiteral("native write"),
                             QStringLiteral("native upload"), QStringLiteral("opensandbox download"),
                             QStringLiteral("opensandbox upload"), QStringLiteral("opensandbox replace"),
                             QStringLiteral("e2b read"), QStringLiteral("e2b write")};
    for (const QString &route : routes) {
        for (const QString &kind : {QStringLiteral("fifo"), QStringLiteral("socket"), QStringLiteral("dev-zero link")})
            QTest::newRow(qPrintable(route + QStringLiteral(", ") + kind)) << route << kind;
    }
}

void tst_FileWalls::specialFilesAreRefusedWhileOthersAreAnswered()
{
    QFETCH(QString, route);
    QFETCH(QString, kind);
    const QString special = onDisk(QStringLiteral("special"));
    const QByteArray specialPath = QFile::encodeName(special);
    int listener = -1;
    if (kind == QLatin1String("fifo")) {
        // Nobody ever writes to it: a blocking open(2) for reading would wait forever.
        QCOMPARE(::mkfifo(specialPath.constData(), 0600), 0);
    } else if (kind == QLatin1String("socket")) {
        listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
        QVERIFY(listener >= 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        QVERIFY(size_t(specialPath.size()) < sizeof address.sun_path);
        std::memcpy(address.sun_path, specialPath.constData(), size_t(specialPath.size()));
        QCOMPARE(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        QCOMPARE(::listen(listener, 1), 0);
    } else {
        QVERIFY(QFile::link(QStringLiteral("/dev/zero"), special));
    }
    const auto closeListener = qScopeGuard([&] {
        if (listener >= 0)
            ::close(listener);
    });
    const QString family = route.section(QLatin1Char(' '), 0, 0);
    Request request;
    if (route.endsWith(QLatin1String("read")) || route.endsWith(QLatin1String("download")))
        request = readOf(family, QStringLiteral("special"));
    else if (route == QLatin1String("native upload"))
        request = multipart("POST", QStringLiteral("/v1/files/content"), {{"file", "special", "data"}});
    else if (route == QLatin1String("opensandbox replace"))
        request = {"POST", QStringLiteral("/opensandbox/execd/default/files/replace"),
                   R"({"special": {"old": "a", "new": "b"}})", {{"Content-Type", "application/json"}}};
    else
        request = writeOf(family, QStringLiteral("special"), "data");

    // The request is sent and left unread while another client is answered.
    RawConnection raw(m_server.port());
    QByteArray wire = request.method + ' ' + request.path.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1:"
                      + QByteArray::number(m_server.port()) + "\r\nAuthorization: Bearer " + m_server.token()
                      + "\r\nContent-Length: " + QByteArray::number(request.body.size()) + "\r\n";
    for (const auto &[name, value] : std::as_const(request.headers))
        wire += name + ": " + value + "\r\n";
    QVERIFY(raw.send(wire + "\r\n" + request.body));
    QCOMPARE(client().request("GET", QStringLiteral("/healthz"), {}, {}, false).status, 200);
    QCOMPARE(client().get(QStringLiteral("/v1/files")).status, 200);

    const QByteArray answer = raw.readResponses(1);
    const QList<int> statuses = statusCodes(answer);
    QCOMPARE(statuses.size(), 1);
    const int expected = kind == QLatin1String("dev-zero link") ? 403 : 400;
    QVERIFY2(statuses.front() == expected, answer.constData());
    // A message that says what it is, and the thing itself left as it was.
    if (kind == QLatin1String("fifo"))
        QVERIFY2(answer.contains("FIFO"), answer.constData());
    struct stat st {};
    QCOMPARE(::lstat(specialPath.constData(), &st), 0);
    QVERIFY(kind == QLatin1String("fifo") ? S_ISFIFO(st.st_mode)
            : kind == QLatin1String("socket") ? S_ISSOCK(st.st_mode) : S_ISLNK(st.st_mode));
}

void tst_FileWalls::aHugeFileToAClientThatDoesNotReadStallsNoOne()
{
    // 10 GB, sparse: the disk holds nothing, the server would have to send it all.
    constexpr qint64 kSize = 10LL * 1024 * 1024 * 1024;
    {
        QFile huge(onDisk(QStringLiteral("huge.bin")));
        QVERIFY(huge.open(QIODevice::WriteOnly));
        QVERIFY(huge.resize(kSize));
    }
    const qint64 before = m_server.residentKiB();
    QList<std::shared_ptr<RawConnection>> readers;
    for (const QString &family : {QStringLiteral("native"), QStringLiteral("opensandbox"), QStringLiteral("e2b")}) {
        auto raw = std::make_shared<RawConnection>(m_server.port());
        const Request request = readOf(family, QStringLiteral("huge.bin"));
        QVERIFY(raw->send(request.method + ' ' + request.path.toUtf8() + " HTTP/1.1\r\nHost: 127.0.0.1:"
                          + QByteArray::number(m_server.port()) + "\r\nAuthorization: Bearer "
                          + m_server.token() + "\r\n\r\n"));
        readers.append(raw);
    }
    // The downloads have started and stopped at the socket's buffer; everyone else is answered.
    for (int i = 0; i < 20; ++i) {
        QCOMPARE(client().request("GET", QStringLiteral("/healthz"), {}, {}, false).status, 200);
        QCOMPARE(client().get(QStringLiteral("/v1/files")).status, 200);
    }
    // Back-pressure: the server holds a few blocks per download, not the file.
    const qint64 after = m_server.residentKiB();
    QVERIFY2(after - before < 64 * 1024, qPrintable(QStringLiteral("%1 KiB → %2 KiB").arg(before).arg(after)));
    readers.clear();
    QCOMPARE(client().request("GET", QStringLiteral("/healthz"), {}, {}, false).status, 200);
}

void tst_FileWalls::purgeOfAWorkspaceOnAnExistingDirectoryIsRefused()
{
    const QString existing = m_outside + QStringLiteral("/existing");
    QVERIFY(QDir().mkpath(existing));
    QFile precious(existing + QStringLiteral("/precious.txt"));
    QVERIFY(precious.open(QIODevice::WriteOnly));
    precious.close();
    const auto created = client().post(QStringLiteral("/v1/workspaces"),
                                       {{QStringLiteral("name"), QStringLiteral("on-existing")},
                                        {QStringLiteral("directory"), existing}});
    QCOMPARE(created.status, 201);
    // Code in it writes the marker replhost would have written, with the workspace's id.
    QFile forged(existing + QStringLiteral("/.replhost-workspace"));
    QVERIFY(forged.open(QIODevice::WriteOnly));
    forged.write(created.object().value(QStringLiteral("id")).toString().toUtf8() + '\n');
    forged.close();

    const auto refused = client().del(QStringLiteral("/v1/workspaces/on-existing?purge=true"));
    QCOMPARE(refused.status, 403);
    QCOMPARE(refused.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
    QVERIFY2(refused.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("existing directory")),
             refused.body.constData());
    QVERIFY(QFile::exists(precious.fileName()));
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/on-existing")).status, 200);  // nothing was deleted
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/on-existing")).status, 204);
    QVERIFY(QFile::exists(precious.fileName()));
}

void tst_FileWalls::purgeOfADirectoryReplhostMadeNeverFollowsSymlinks()
{
    const QString made = m_outside + QStringLiteral("/made-by-replhost");
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"),
                           {{QStringLiteral("name"), QStringLiteral("made")}, {QStringLiteral("directory"), made}})
                     .status,
             201);
    QCOMPARE(modeOf(made), 0700);
    // The marker is replhost's: not listed, not reachable.
    const auto listed = client().get(QStringLiteral("/v1/workspaces/made/files"));
    QCOMPARE(listed.status, 200);
    QVERIFY(!listed.body.contains(".replhost-workspace"));
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/made/files?path=.replhost-workspace")).status, 403);
    QVERIFY(QFile::link(m_outside, made + QStringLiteral("/link-out")));
    QVERIFY(QDir().mkpath(made + QStringLiteral("/sub")));
    QVERIFY(QFile::link(QStringLiteral("/"), made + QStringLiteral("/sub/root")));
    QCOMPARE(client().del(QStringLiteral("/v1/workspaces/made?purge=true")).status, 204);
    QVERIFY(!QFileInfo::exists(made));
    QCOMPARE(QFile(m_outside + QStringLiteral("/x")).size(), qint64(14));
    QVERIFY(QFileInfo(QStringLiteral("/usr")).isDir());
}

void tst_FileWalls::dataDirectoryDatabaseWalAndTokenArePrivate()
{
    const QDir data(m_server.dataDir());
    QCOMPARE(modeOf(data.path()), 0700);
    QCOMPARE(modeOf(data.filePath(QStringLiteral("replhost.db"))), 0600);
    QVERIFY(QFileInfo::exists(data.filePath(QStringLiteral("replhost.db-wal"))));
    QCOMPARE(modeOf(data.filePath(QStringLiteral("replhost.db-wal"))), 0600);
    QCOMPARE(modeOf(data.filePath(QStringLiteral("replhost.db-shm"))), 0600);
    QCOMPARE(modeOf(data.filePath(QStringLiteral("replhost.db-pending"))), 0600);
    QCOMPARE(modeOf(data.filePath(QStringLiteral("replhost.db-pending.1"))), 0600);
    QCOMPARE(modeOf(data.filePath(QStringLiteral("token"))), 0600);
    QCOMPARE(modeOf(m_root), 0700);
    // What the server writes for a client too.
    QCOMPARE(client().request("PUT", QStringLiteral("/v1/files/content?path=written.txt"), "x").status, 201);
    QCOMPARE(modeOf(onDisk(QStringLiteral("written.txt"))), 0600);
    for (const QString &name : data.entryList(QDir::Files | QDir::Hidden | QDir::System))
        QVERIFY2((modeOf(data.filePath(name)) & 077) == 0, qPrintable(name));
}

void tst_FileWalls::anExistingDataDirectoryIsTightenedOnOpen()
{
    QTemporaryDir scratch;
    QVERIFY(scratch.isValid());
    const QString dataDir = scratch.filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(dataDir + QStringLiteral("/workspaces")));
    QFile left(dataDir + QStringLiteral("/notes.txt"));
    QVERIFY(left.open(QIODevice::WriteOnly));
    left.close();
    QVERIFY(::chmod(QFile::encodeName(dataDir).constData(), 0755) == 0);
    QVERIFY(::chmod(QFile::encodeName(dataDir + QStringLiteral("/workspaces")).constData(), 0755) == 0);
    QVERIFY(::chmod(QFile::encodeName(left.fileName()).constData(), 0644) == 0);

    ServerProcess server;
    QVERIFY2(server.start({}, {}, dataDir), qPrintable(server.error()));
    QCOMPARE(modeOf(dataDir), 0700);
    QCOMPARE(modeOf(dataDir + QStringLiteral("/workspaces")), 0700);
    QCOMPARE(modeOf(left.fileName()), 0600);
    QCOMPARE(modeOf(dataDir + QStringLiteral("/replhost.db")), 0600);
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(tst_FileWalls)
#include "tst_filewalls.moc"
