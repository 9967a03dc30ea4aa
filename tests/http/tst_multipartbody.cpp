// SPDX-License-Identifier: Apache-2.0
// multipart/form-data bodies as browsers and SDKs send them: parts, their names and file names
// (quoted, with separators inside, RFC 8187 encoded), and malformed bodies refused.
#include "http/multipartbody.h"

#include <QTest>

using replhost::http::MultipartBody;

class tst_MultipartBody : public QObject {
    Q_OBJECT

private slots:
    void partsAreSplit();
    void fileNames_data();
    void fileNames();
    void quotedBoundaryIsRead();
    void binaryDataIsKeptAsItIs();
    void malformedBodiesAreRefused_data();
    void malformedBodiesAreRefused();
};

namespace {

const QByteArray kType = "multipart/form-data; boundary=XyZ";

QByteArray part(const QByteArray &disposition, const QByteArray &data,
                const QByteArray &type = {})
{
    QByteArray out = "--XyZ\r\nContent-Disposition: " + disposition + "\r\n";
    if (!type.isEmpty())
        out += "Content-Type: " + type + "\r\n";
    return out + "\r\n" + data + "\r\n";
}

} // namespace

void tst_MultipartBody::partsAreSplit()
{
    const QByteArray body = "preamble\r\n" + part("form-data; name=\"path\"", "/tmp/a")
            + part("form-data; name=\"file\"; filename=\"a.txt\"", "hello\r\nworld", "text/plain")
            + "--XyZ--\r\nepilogue";
    const auto parts = MultipartBody::parse(kType, body);
    QVERIFY2(parts.ok(), qPrintable(parts.ok() ? QString() : parts.error().message));
    QCOMPARE(parts->size(), 2);
    QCOMPARE(parts->at(0).name, QStringLiteral("path"));
    QVERIFY(parts->at(0).fileName.isEmpty());
    QCOMPARE(parts->at(0).data, QByteArray("/tmp/a"));
    QCOMPARE(parts->at(1).name, QStringLiteral("file"));
    QCOMPARE(parts->at(1).fileName, QStringLiteral("a.txt"));
    QCOMPARE(parts->at(1).contentType, QByteArray("text/plain"));
    QCOMPARE(parts->at(1).data, QByteArray("hello\r\nworld"));
}

void tst_MultipartBody::fileNames_data()
{
    QTest::addColumn<QByteArray>("disposition");
    QTest::addColumn<QString>("fileName");
    QTest::newRow("plain") << QByteArray("form-data; name=f; filename=a.txt") << QStringLiteral("a.txt");
    QTest::newRow("separator in quotes")
            << QByteArray("form-data; name=\"f\"; filename=\"a;b.txt\"") << QStringLiteral("a;b.txt");
    QTest::newRow("equals in quotes")
            << QByteArray("form-data; name=\"f\"; filename=\"a=b.txt\"") << QStringLiteral("a=b.txt");
    QTest::newRow("escaped quote")
            << QByteArray("form-data; name=\"f\"; filename=\"say \\\"hi\\\".txt\"")
            << QStringLiteral("say \"hi\".txt");
    QTest::newRow("RFC 8187")
            << QByteArray("form-data; name=\"f\"; filename*=UTF-8''na%C3%AFve%20file.txt")
            << QStringLiteral("na\u00efve file.txt");
    QTest::newRow("RFC 8187 wins")
            << QByteArray("form-data; name=\"f\"; filename=\"naive.txt\"; filename*=utf-8'en'na%C3%AFve.txt")
            << QStringLiteral("na\u00efve.txt");
    QTest::newRow("UTF-8 as sent")
            << QByteArray("form-data; name=\"f\"; filename=\"\xc3\xa9t\xc3\xa9.txt\"")
            << QStringLiteral("\u00e9t\u00e9.txt");
}

void tst_MultipartBody::fileNames()
{
    QFETCH(QByteArray, disposition);
    QFETCH(QString, fileName);
    const auto parts = MultipartBody::parse(kType, part(disposition, "x") + "--XyZ--\r\n");
    QVERIFY2(parts.ok(), qPrintable(parts.ok() ? QString() : parts.error().message));
    QCOMPARE(parts->size(), 1);
    QCOMPARE(parts->at(0).name, QStringLiteral("f"));
    QCOMPARE(parts->at(0).fileName, fileName);
}

void tst_MultipartBody::quotedBoundaryIsRead()
{
    const QByteArray body = "--a;b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--a;b--\r\n";
    const auto parts = MultipartBody::parse("multipart/form-data; boundary=\"a;b\"", body);
    QVERIFY2(parts.ok(), qPrintable(parts.ok() ? QString() : parts.error().message));
    QCOMPARE(parts->size(), 1);
    QCOMPARE(parts->at(0).data, QByteArray("1"));
}

void tst_MultipartBody::binaryDataIsKeptAsItIs()
{
    QByteArray data;
    for (int i = 0; i < 200 * 1024; ++i)
        data.append(char(i * 7));
    data.append("\r\n--XY");  // almost a boundary
    const auto parts = MultipartBody::parse(
            kType, part("form-data; name=\"file\"; filename=\"b.bin\"", data) + "--XyZ--\r\n");
    QVERIFY2(parts.ok(), qPrintable(parts.ok() ? QString() : parts.error().message));
    QCOMPARE(parts->size(), 1);
    QCOMPARE(parts->at(0).data, data);
}

void tst_MultipartBody::malformedBodiesAreRefused_data()
{
    QTest::addColumn<QByteArray>("contentType");
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not multipart") << QByteArray("application/json") << QByteArray("{}");
    QTest::newRow("no boundary") << QByteArray("multipart/form-data") << part("form-data; name=a", "1");
    QTest::newRow("boundary not in the body") << kType << QByteArray("hello");
    QTest::newRow("part without header end")
            << kType << QByteArray("--XyZ\r\nContent-Disposition: form-data; name=a");
    // A fuzzer's finding: Poco's reader found empty parts in this without end.
    QByteArray endless("--q----q");
    endless += '\0';
    endless += "mt n)ame=a\r\n\r\nn%ver closed" + QByteArray(160, '\xff');
    QTest::newRow("parts without end")
            << QByteArray("multipart/form-data; boundary=q") << endless;
    QByteArray many;
    for (int i = 0; i < 1025; ++i)
        many += part("form-data; name=f" + QByteArray::number(i), "x");
    QTest::newRow("more than 1024 parts") << kType << QByteArray(many + "--XyZ--\r\n");
}

void tst_MultipartBody::malformedBodiesAreRefused()
{
    QFETCH(QByteArray, contentType);
    QFETCH(QByteArray, body);
    const auto parts = MultipartBody::parse(contentType, body);
    QVERIFY(!parts.ok());
    QCOMPARE(parts.error().code, QStringLiteral("bad_request"));
}

QTEST_GUILESS_MAIN(tst_MultipartBody)
#include "tst_multipartbody.moc"
