// SPDX-License-Identifier: Apache-2.0
// Workspace files over HTTP: list, read with Range, write (raw and multipart), delete, move,
// mkdir, and every way a path could leave the workspace refused with 403. A real replhost-server
// and a Poco client; the workspace directory is also inspected directly.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QTest>
#include <QUrl>

class tst_FilesApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();

    void listShowsEntriesWithTypes();
    void listOfAFileIs400AndOfNothing404();
    void writeThenReadRoundTripsBytes();
    void writeWithoutParentsNeedsTheDirectory();
    void rangeRequests_data();
    void rangeRequests();
    void largeFileIsStreamedWhole();
    void largeFileRangeIsStreamed();
    void deleteFilesAndDirectories();
    void moveAndOverwrite();
    void mkdirCreatesThenReports();
    void multipartUploadWritesEachFile();
    void multipartNameThatEscapesWritesNothing();
    void malformedMultipartIs400();
    void missingPathIs400();
    void pathEscapesAre403_data();
    void pathEscapesAre403();
    void workspaceRoutesAreConfinedToTheirWorkspace();
    void unknownWorkspaceIs404();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    QString onDisk(const QString &relative) const { return QDir(m_root).filePath(relative); }
    static QString q(const QString &path) { return QString::fromLatin1(QUrl::toPercentEncoding(path)); }
    ApiClient::Response put(const QString &path, const QByteArray &data, const QString &prefix = QStringLiteral("/v1")) const
    {
        return client().request("PUT", prefix + QStringLiteral("/files/content?path=") + q(path), data,
                                {{"Content-Type", "application/octet-stream"}});
    }
    ApiClient::Response get(const QString &path, const Headers &headers = {}) const
    {
        return client().request("GET", QStringLiteral("/v1/files/content?path=") + q(path), {}, headers);
    }

    ServerProcess m_server;
    QString m_root;     // the default workspace's directory
    QString m_outside;  // next to the data directory, outside every workspace
};

void tst_FilesApi::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    const auto workspace = client().get(QStringLiteral("/v1/workspaces/default"));
    QCOMPARE(workspace.status, 200);
    m_root = workspace.object().value(QStringLiteral("directory")).toString();
    QVERIFY(QFileInfo(m_root).isDir());
    m_outside = QFileInfo(m_server.dataDir()).absolutePath() + QStringLiteral("/outside");
    QVERIFY(QDir().mkpath(m_outside));
    QFile secret(m_outside + QStringLiteral("/secret.txt"));
    QVERIFY(secret.open(QIODevice::WriteOnly));
    secret.write("secret");
}

void tst_FilesApi::init()
{
    // Every test starts from an empty workspace, with the links the escape tests need.
    QDir(m_root).removeRecursively();
    QVERIFY(QDir().mkpath(m_root));
    QVERIFY(QFile::link(QStringLiteral("/etc"), onDisk(QStringLiteral("etc-link"))));
    QVERIFY(QFile::link(m_outside, onDisk(QStringLiteral("out-link"))));
    QVERIFY(QFile::link(m_outside + QStringLiteral("/secret.txt"), onDisk(QStringLiteral("secret-link"))));
    QVERIFY(QFile::link(m_outside + QStringLiteral("/planted.txt"), onDisk(QStringLiteral("dangling-out"))));
}

void tst_FilesApi::listShowsEntriesWithTypes()
{
    QCOMPARE(put(QStringLiteral("notes.txt"), "hello").status, 201);
    QCOMPARE(put(QStringLiteral("src/main.py"), "print(1)\n").status, 201);

    const auto root = client().get(QStringLiteral("/v1/files"));
    QCOMPARE(root.status, 200);
    QCOMPARE(root.object().value(QStringLiteral("path")).toString(), QString());
    QHash<QString, QJsonObject> byName;
    for (const QJsonValue &entry : root.object().value(QStringLiteral("entries")).toArray())
        byName.insert(entry.toObject().value(QStringLiteral("name")).toString(), entry.toObject());
    QCOMPARE(byName.value(QStringLiteral("notes.txt")).value(QStringLiteral("type")).toString(), QStringLiteral("file"));
    QCOMPARE(byName.value(QStringLiteral("notes.txt")).value(QStringLiteral("size")).toInt(), 5);
    QVERIFY(!byName.value(QStringLiteral("notes.txt")).value(QStringLiteral("modified_at")).toString().isEmpty());
    QCOMPARE(byName.value(QStringLiteral("src")).value(QStringLiteral("type")).toString(), QStringLiteral("directory"));
    QCOMPARE(byName.value(QStringLiteral("etc-link")).value(QStringLiteral("type")).toString(), QStringLiteral("symlink"));

    const auto nested = client().get(QStringLiteral("/v1/files?path=src"));
    QCOMPARE(nested.status, 200);
    const QJsonArray entries = nested.object().value(QStringLiteral("entries")).toArray();
    QCOMPARE(entries.size(), 1);
    QCOMPARE(entries.at(0).toObject().value(QStringLiteral("path")).toString(), QStringLiteral("src/main.py"));
}

void tst_FilesApi::listOfAFileIs400AndOfNothing404()
{
    QCOMPARE(put(QStringLiteral("f.txt"), "x").status, 201);
    QCOMPARE(client().get(QStringLiteral("/v1/files?path=f.txt")).status, 400);
    QCOMPARE(client().get(QStringLiteral("/v1/files?path=nothing")).status, 404);
}

void tst_FilesApi::writeThenReadRoundTripsBytes()
{
    QByteArray data;
    for (int i = 0; i < 256; ++i)
        data.append(char(i));
    const auto created = put(QStringLiteral("bin/all-bytes.bin"), data);
    QCOMPARE(created.status, 201);
    QCOMPARE(created.object().value(QStringLiteral("path")).toString(), QStringLiteral("bin/all-bytes.bin"));
    QCOMPARE(created.object().value(QStringLiteral("size")).toInt(), 256);

    const auto read = get(QStringLiteral("bin/all-bytes.bin"));
    QCOMPARE(read.status, 200);
    QCOMPARE(read.body, data);
    QCOMPARE(read.header("Accept-Ranges"), QByteArray("bytes"));
    QFile file(onDisk(QStringLiteral("bin/all-bytes.bin")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), data);

    // Replacing answers 200; the type follows the name.
    QCOMPARE(put(QStringLiteral("bin/all-bytes.bin"), "short").status, 200);
    QCOMPARE(get(QStringLiteral("bin/all-bytes.bin")).body, QByteArray("short"));
    QCOMPARE(put(QStringLiteral("page.html"), "<p>").status, 201);
    QCOMPARE(get(QStringLiteral("page.html")).header("Content-Type"), QByteArray("text/html"));
    // An empty body makes an empty file.
    QCOMPARE(put(QStringLiteral("empty"), QByteArray()).status, 201);
    QCOMPARE(QFileInfo(onDisk(QStringLiteral("empty"))).size(), 0);
    // Absolute paths inside the workspace are fine.
    QCOMPARE(get(onDisk(QStringLiteral("page.html"))).body, QByteArray("<p>"));
}

void tst_FilesApi::writeWithoutParentsNeedsTheDirectory()
{
    const auto refused = client().request("PUT", QStringLiteral("/v1/files/content?path=a/b/c.txt&parents=false"), "x",
                                          {{"Content-Type", "text/plain"}});
    QCOMPARE(refused.status, 404);
    QVERIFY(!QFileInfo::exists(onDisk(QStringLiteral("a"))));
    QCOMPARE(client().request("POST", QStringLiteral("/v1/files/mkdir"), R"({"path":"d"})").status, 201);
    QCOMPARE(put(QStringLiteral("d"), "x").status, 409);  // a directory is not replaced by a file
}

void tst_FilesApi::rangeRequests_data()
{
    QTest::addColumn<QByteArray>("range");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("contentRange");
    QTest::newRow("first bytes") << QByteArray("bytes=0-3") << 206 << QByteArray("0123") << QByteArray("bytes 0-3/10");
    QTest::newRow("middle") << QByteArray("bytes=2-5") << 206 << QByteArray("2345") << QByteArray("bytes 2-5/10");
    QTest::newRow("open end") << QByteArray("bytes=7-") << 206 << QByteArray("789") << QByteArray("bytes 7-9/10");
    QTest::newRow("suffix") << QByteArray("bytes=-3") << 206 << QByteArray("789") << QByteArray("bytes 7-9/10");
    QTest::newRow("end past size") << QByteArray("bytes=8-100") << 206 << QByteArray("89") << QByteArray("bytes 8-9/10");
    QTest::newRow("suffix past size") << QByteArray("bytes=-50") << 206 << QByteArray("0123456789") << QByteArray("bytes 0-9/10");
    QTest::newRow("start past end") << QByteArray("bytes=10-") << 416 << QByteArray() << QByteArray("bytes */10");
    QTest::newRow("malformed is ignored") << QByteArray("bytes=a-b") << 200 << QByteArray("0123456789") << QByteArray();
    QTest::newRow("reversed is ignored") << QByteArray("bytes=5-2") << 200 << QByteArray("0123456789") << QByteArray();
    QTest::newRow("several are ignored") << QByteArray("bytes=0-1,4-5") << 200 << QByteArray("0123456789") << QByteArray();
    QTest::newRow("other unit is ignored") << QByteArray("lines=1-2") << 200 << QByteArray("0123456789") << QByteArray();
}

void tst_FilesApi::rangeRequests()
{
    QFETCH(QByteArray, range);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, contentRange);
    QCOMPARE(put(QStringLiteral("digits.txt"), "0123456789").status, 201);
    const auto response = get(QStringLiteral("digits.txt"), {{"Range", range}});
    QCOMPARE(response.status, status);
    QCOMPARE(response.header("Content-Range"), contentRange);
    if (status != 416)
        QCOMPARE(response.body, body);
    else
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("range_not_satisfiable"));
}

void tst_FilesApi::largeFileIsStreamedWhole()
{
    QByteArray data(5 * 1024 * 1024 + 123, Qt::Uninitialized);
    QRandomGenerator generator(42);
    generator.fillRange(reinterpret_cast<quint32 *>(data.data()), data.size() / 4);
    QCOMPARE(put(QStringLiteral("big.bin"), data).status, 201);
    const auto read = get(QStringLiteral("big.bin"));
    QCOMPARE(read.status, 200);
    QCOMPARE(read.header("Content-Length"), QByteArray::number(data.size()));
    QCOMPARE(read.body.size(), data.size());
    QVERIFY(read.body == data);
    // The connection is still usable after a streamed body: a keep-alive request behind it.
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /v1/files/content?path=big.bin HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                            + m_server.token() + "\r\nRange: bytes=-4\r\n\r\n"
                            + "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    const QByteArray responses = connection.readResponses(2, 10000);
    QCOMPARE(statusCodes(responses), (QList<int>{206, 200}));
}

void tst_FilesApi::largeFileRangeIsStreamed()
{
    QByteArray data(4 * 1024 * 1024, 'a');
    for (qsizetype i = 0; i < data.size(); ++i)
        data[i] = char('a' + i % 26);
    QCOMPARE(put(QStringLiteral("letters.txt"), data).status, 201);
    const qint64 first = 1000;
    const qint64 last = 3 * 1024 * 1024;
    const auto read = get(QStringLiteral("letters.txt"),
                          {{"Range", "bytes=" + QByteArray::number(first) + '-' + QByteArray::number(last)}});
    QCOMPARE(read.status, 206);
    QVERIFY(read.body == data.mid(first, last - first + 1));
    QCOMPARE(read.header("Content-Range"), "bytes 1000-" + QByteArray::number(last) + "/" + QByteArray::number(data.size()));
}

void tst_FilesApi::deleteFilesAndDirectories()
{
    QCOMPARE(put(QStringLiteral("tree/a/b.txt"), "b").status, 201);
    QCOMPARE(put(QStringLiteral("single.txt"), "s").status, 201);
    QCOMPARE(client().del(QStringLiteral("/v1/files?path=single.txt")).status, 204);
    QVERIFY(!QFileInfo::exists(onDisk(QStringLiteral("single.txt"))));
    QCOMPARE(client().del(QStringLiteral("/v1/files?path=single.txt")).status, 404);

    const auto notEmpty = client().del(QStringLiteral("/v1/files?path=tree"));
    QCOMPARE(notEmpty.status, 409);
    QVERIFY(notEmpty.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("recursive")));
    QCOMPARE(client().del(QStringLiteral("/v1/files?path=tree&recursive=true")).status, 204);
    QVERIFY(!QFileInfo::exists(onDisk(QStringLiteral("tree"))));

    // The workspace directory itself is not deleted through the files routes.
    const auto root = client().del(QStringLiteral("/v1/files?path=&recursive=true"));
    QCOMPARE(root.status, 403);
    QVERIFY(QFileInfo(m_root).isDir());

    // A link that leaves the workspace is refused like any path through it.
    QCOMPARE(client().del(QStringLiteral("/v1/files?path=") + q(QStringLiteral("out-link"))).status, 403);
    QVERIFY(QFileInfo::exists(m_outside + QStringLiteral("/secret.txt")));
}

void tst_FilesApi::moveAndOverwrite()
{
    QCOMPARE(put(QStringLiteral("one.txt"), "one").status, 201);
    QCOMPARE(put(QStringLiteral("two.txt"), "two").status, 201);
    const auto moved = client().post(QStringLiteral("/v1/files/move"),
                                     {{QStringLiteral("from"), QStringLiteral("one.txt")},
                                      {QStringLiteral("to"), QStringLiteral("archive/one.txt")}});
    QCOMPARE(moved.status, 200);
    QCOMPARE(moved.object().value(QStringLiteral("path")).toString(), QStringLiteral("archive/one.txt"));
    QCOMPARE(get(QStringLiteral("archive/one.txt")).body, QByteArray("one"));

    const auto conflict = client().post(QStringLiteral("/v1/files/move"),
                                        {{QStringLiteral("from"), QStringLiteral("two.txt")},
                                         {QStringLiteral("to"), QStringLiteral("archive/one.txt")}});
    QCOMPARE(conflict.status, 409);
    QCOMPARE(client().post(QStringLiteral("/v1/files/move"),
                           {{QStringLiteral("from"), QStringLiteral("two.txt")},
                            {QStringLiteral("to"), QStringLiteral("archive/one.txt")},
                            {QStringLiteral("overwrite"), true}}).status,
             200);
    QCOMPARE(get(QStringLiteral("archive/one.txt")).body, QByteArray("two"));
    QCOMPARE(client().post(QStringLiteral("/v1/files/move"),
                           {{QStringLiteral("from"), QStringLiteral("nope")}, {QStringLiteral("to"), QStringLiteral("x")}}).status,
             404);
    const auto badField = client().post(QStringLiteral("/v1/files/move"),
                                        {{QStringLiteral("from"), QStringLiteral("a")}, {QStringLiteral("to"), 5}});
    QCOMPARE(badField.status, 400);
    QVERIFY(badField.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("'to'")));
}

void tst_FilesApi::mkdirCreatesThenReports()
{
    const auto created = client().post(QStringLiteral("/v1/files/mkdir"), {{QStringLiteral("path"), QStringLiteral("x/y/z")}});
    QCOMPARE(created.status, 201);
    QCOMPARE(created.object().value(QStringLiteral("type")).toString(), QStringLiteral("directory"));
    QVERIFY(QFileInfo(onDisk(QStringLiteral("x/y/z"))).isDir());
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"), {{QStringLiteral("path"), QStringLiteral("x/y/z")}}).status, 200);
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"),
                           {{QStringLiteral("path"), QStringLiteral("p/q")}, {QStringLiteral("parents"), false}}).status,
             404);
    QCOMPARE(put(QStringLiteral("file"), "f").status, 201);
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"), {{QStringLiteral("path"), QStringLiteral("file")}}).status, 409);
}

void tst_FilesApi::multipartUploadWritesEachFile()
{
    const QByteArray boundary = "----replhost-test-boundary";
    QByteArray body;
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nnot a file\r\n";
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\nalpha\r\n";
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"nested/b.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n" + QByteArray("b\r\n--almost\0b", 13) + "\r\n";
    body += "--" + boundary + "--\r\n";
    const auto response = client().request("POST", QStringLiteral("/v1/files/content?path=uploads"), body,
                                           {{"Content-Type", "multipart/form-data; boundary=" + boundary}});
    QCOMPARE(response.status, 201);
    const QJsonArray files = response.object().value(QStringLiteral("files")).toArray();
    QCOMPARE(files.size(), 2);
    QCOMPARE(files.at(0).toObject().value(QStringLiteral("path")).toString(), QStringLiteral("uploads/a.txt"));
    QCOMPARE(get(QStringLiteral("uploads/a.txt")).body, QByteArray("alpha"));
    QCOMPARE(get(QStringLiteral("uploads/nested/b.bin")).body, QByteArray("b\r\n--almost\0b", 13));
}

void tst_FilesApi::multipartNameThatEscapesWritesNothing()
{
    const QByteArray boundary = "xyz";
    const QByteArray body = "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"fine.txt\"\r\n\r\nok\r\n"
                            "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"../../escaped.txt\"\r\n\r\nbad\r\n"
                            "--xyz--\r\n";
    const auto response = client().request("POST", QStringLiteral("/v1/files/content"), body,
                                           {{"Content-Type", "multipart/form-data; boundary=\"xyz\""}});
    QCOMPARE(response.status, 403);
    QVERIFY(!QFileInfo::exists(onDisk(QStringLiteral("fine.txt"))));
}

void tst_FilesApi::malformedMultipartIs400()
{
    for (const auto &[contentType, body] :
         QList<QPair<QByteArray, QByteArray>>{{"multipart/form-data", "--x\r\n\r\n"},
                                              {"multipart/form-data; boundary=x", "no boundary here"},
                                              {"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nunterminated"},
                                              {"text/plain", "hello"}}) {
        const auto response = client().request("POST", QStringLiteral("/v1/files/content"), body, {{"Content-Type", contentType}});
        QCOMPARE(response.status, 400);
    }
}

void tst_FilesApi::missingPathIs400()
{
    for (const QByteArray &method : {QByteArray("GET"), QByteArray("PUT")}) {
        const auto response = client().request(method, QStringLiteral("/v1/files/content"), "x", {{"Content-Type", "text/plain"}});
        QCOMPARE(response.status, 400);
        QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("'path'")));
    }
    QCOMPARE(client().del(QStringLiteral("/v1/files")).status, 400);
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"), {}).status, 400);
}

void tst_FilesApi::pathEscapesAre403_data()
{
    QTest::addColumn<QString>("path");
    QTest::newRow("dot dot") << "../outside/secret.txt";
    QTest::newRow("dot dot deep") << "a/b/../../../x";
    QTest::newRow("dot dot staying inside") << "a/../notes.txt";
    QTest::newRow("absolute /etc/passwd") << "/etc/passwd";
    QTest::newRow("absolute next to the workspace") << "OUTSIDE/secret.txt";
    QTest::newRow("symlink to /etc") << "etc-link/passwd";
    QTest::newRow("symlink to /etc itself") << "etc-link";
    QTest::newRow("symlink to a directory outside") << "out-link/secret.txt";
    QTest::newRow("symlink to a file outside") << "secret-link";
    QTest::newRow("dangling symlink outside") << "dangling-out";
}

void tst_FilesApi::pathEscapesAre403()
{
    QFETCH(QString, path);
    path.replace(QStringLiteral("OUTSIDE"), m_outside);
    const QString encoded = q(path);
    const QList<QPair<QByteArray, QString>> requests{
            {"GET", QStringLiteral("/v1/files?path=") + encoded},
            {"GET", QStringLiteral("/v1/files/content?path=") + encoded},
            {"PUT", QStringLiteral("/v1/files/content?path=") + encoded},
            {"DELETE", QStringLiteral("/v1/files?path=%1&recursive=true").arg(encoded)},
    };
    for (const auto &[method, route] : requests) {
        const auto response = client().request(method, route, method == "PUT" ? QByteArray("pwned") : QByteArray(),
                                                {{"Content-Type", "text/plain"}});
        QVERIFY2(response.status == 403, qPrintable(QStringLiteral("%1 %2 → %3 %4").arg(QString::fromLatin1(method), route)
                                                           .arg(response.status).arg(QString::fromUtf8(response.body))));
        QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("forbidden"));
    }
    QCOMPARE(client().post(QStringLiteral("/v1/files/mkdir"), {{QStringLiteral("path"), path}}).status, 403);
    QCOMPARE(client().post(QStringLiteral("/v1/files/move"),
                           {{QStringLiteral("from"), path}, {QStringLiteral("to"), QStringLiteral("here")}}).status, 403);
    QCOMPARE(put(QStringLiteral("mine.txt"), "mine").status, 201);
    QCOMPARE(client().post(QStringLiteral("/v1/files/move"),
                           {{QStringLiteral("from"), QStringLiteral("mine.txt")}, {QStringLiteral("to"), path},
                            {QStringLiteral("overwrite"), true}}).status, 403);

    // Nothing outside changed.
    QFile secret(m_outside + QStringLiteral("/secret.txt"));
    QVERIFY(secret.open(QIODevice::ReadOnly));
    QCOMPARE(secret.readAll(), QByteArray("secret"));
    QVERIFY(!QFileInfo::exists(m_outside + QStringLiteral("/planted.txt")));
    QVERIFY(QFileInfo::exists(onDisk(QStringLiteral("mine.txt"))));
    QVERIFY(QFileInfo::exists(QStringLiteral("/etc/passwd")));
}

void tst_FilesApi::workspaceRoutesAreConfinedToTheirWorkspace()
{
    const auto created = client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("files-ws")}});
    QVERIFY(created.status == 201 || created.status == 409);
    const QString directory = client().get(QStringLiteral("/v1/workspaces/files-ws")).object().value(QStringLiteral("directory")).toString();
    QCOMPARE(put(QStringLiteral("only-here.txt"), "ws", QStringLiteral("/v1/workspaces/files-ws")).status, 201);
    QVERIFY(QFileInfo::exists(QDir(directory).filePath(QStringLiteral("only-here.txt"))));
    QCOMPARE(get(QStringLiteral("only-here.txt")).status, 404);  // not in "default"
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/files-ws/files/content?path=only-here.txt")).body, QByteArray("ws"));
    // The default workspace's directory is outside this one.
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/files-ws/files?path=") + q(m_root)).status, 403);
}

void tst_FilesApi::unknownWorkspaceIs404()
{
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/nope/files")).status, 404);
}

QTEST_GUILESS_MAIN(tst_FilesApi)
#include "tst_filesapi.moc"
