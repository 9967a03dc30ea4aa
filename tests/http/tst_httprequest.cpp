// SPDX-License-Identifier: Apache-2.0
#include "http/httprequest.h"

#include <QTest>
#include <QUrl>

using replhost::http::HttpRequest;
using replhost::http::RequestHead;

class tst_HttpRequest : public QObject {
    Q_OBJECT

private slots:
    void targetIsSplitAsAUrlWould_data();
    void targetIsSplitAsAUrlWould();
    void queryFlagReadsTheFirstItemOfItsName_data();
    void queryFlagReadsTheFirstItemOfItsName();
    void headFieldsAndBodyAreKept();
};

namespace {

RequestHead headFor(const QByteArray &target)
{
    RequestHead head;
    head.method = "GET";
    head.target = target;
    return head;
}

} // namespace

void tst_HttpRequest::targetIsSplitAsAUrlWould_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("waitValue");
    // Plain targets are split where they lie; the others go through QUrl. Both must give what
    // QUrl gives for the path, and the same decoded query values.
    QTest::newRow("plain") << QByteArray("/v1/contexts/abc/executions?wait=true")
                           << QStringLiteral("/v1/contexts/abc/executions") << QStringLiteral("true");
    QTest::newRow("no query") << QByteArray("/v1/info") << QStringLiteral("/v1/info") << QString();
    QTest::newRow("empty query") << QByteArray("/v1/info?") << QStringLiteral("/v1/info") << QString();
    QTest::newRow("sub-delimiters") << QByteArray("/a/b;c=d/e@f:g?wait=1&x=(y)")
                                    << QStringLiteral("/a/b;c=d/e@f:g") << QStringLiteral("1");
    QTest::newRow("escaped path") << QByteArray("/files/a%20b/%41?wait=%74rue")
                                  << QUrl::fromEncoded("/files/a%20b/%41").path(QUrl::FullyEncoded)
                                  << QStringLiteral("true");
    QTest::newRow("escaped query") << QByteArray("/x?wait=a%26b") << QStringLiteral("/x")
                                   << QStringLiteral("a&b");
    QTest::newRow("absolute form") << QByteArray("http://localhost:8080/v1/info?wait=yes")
                                   << QStringLiteral("/v1/info") << QStringLiteral("yes");
    QTest::newRow("non-ASCII") << QByteArray("/files/\xc3\xa9t\xc3\xa9")
                               << QUrl::fromEncoded("/files/\xc3\xa9t\xc3\xa9").path(QUrl::FullyEncoded)
                               << QString();
}

void tst_HttpRequest::targetIsSplitAsAUrlWould()
{
    QFETCH(QByteArray, target);
    QFETCH(QString, path);
    QFETCH(QString, waitValue);
    const HttpRequest request = HttpRequest::fromHead(headFor(target), {}, QHostAddress::LocalHost);
    QCOMPARE(request.path, path);
    QCOMPARE(request.queryValue(QStringLiteral("wait")), waitValue);
    if (target.startsWith('/')) {
        const QUrl url = QUrl::fromEncoded(target);
        QCOMPARE(request.path, url.path(QUrl::FullyEncoded));
    }
}

void tst_HttpRequest::queryFlagReadsTheFirstItemOfItsName_data()
{
    QTest::addColumn<QByteArray>("target");
    QTest::addColumn<bool>("flag");
    // Without escapes the query is read where it lies; with them, through QUrlQuery. Both read
    // as QUrlQuery's first item of the name would.
    QTest::newRow("true") << QByteArray("/x?wait=true") << true;
    QTest::newRow("upper case") << QByteArray("/x?wait=TRUE") << true;
    QTest::newRow("one") << QByteArray("/x?wait=1") << true;
    QTest::newRow("yes") << QByteArray("/x?wait=Yes") << true;
    QTest::newRow("bare name") << QByteArray("/x?wait") << true;
    QTest::newRow("empty value") << QByteArray("/x?a=1&wait=") << true;
    QTest::newRow("false") << QByteArray("/x?wait=false") << false;
    QTest::newRow("zero") << QByteArray("/x?wait=0") << false;
    QTest::newRow("absent") << QByteArray("/x?waiting=true") << false;
    QTest::newRow("no query") << QByteArray("/x") << false;
    QTest::newRow("prefix of a name") << QByteArray("/x?wai=true") << false;
    QTest::newRow("first of two") << QByteArray("/x?wait=no&wait=true") << false;
    QTest::newRow("value with an equals sign") << QByteArray("/x?wait=true=1") << false;
    QTest::newRow("among others") << QByteArray("/x?a=b&wait=true&c") << true;
    QTest::newRow("escaped value") << QByteArray("/x?wait=%74rue") << true;
    QTest::newRow("escaped name") << QByteArray("/x?w%61it=1") << true;
}

void tst_HttpRequest::queryFlagReadsTheFirstItemOfItsName()
{
    QFETCH(QByteArray, target);
    QFETCH(bool, flag);
    const HttpRequest request = HttpRequest::fromHead(headFor(target), {}, QHostAddress::LocalHost);
    QCOMPARE(request.queryFlag(QStringLiteral("wait")), flag);
    // The parsed query agrees.
    const QString value = request.query().queryItemValue(QStringLiteral("wait")).toLower();
    const bool expected = request.query().hasQueryItem(QStringLiteral("wait"))
            && (value.isEmpty() || value == QLatin1String("true") || value == QLatin1String("1")
                || value == QLatin1String("yes"));
    QCOMPARE(request.queryFlag(QStringLiteral("wait")), expected);
}

void tst_HttpRequest::headFieldsAndBodyAreKept()
{
    RequestHead head = headFor("/v1/x");
    head.method = "POST";
    head.fields = {{"Host", "localhost"}, {"X-Twice", "1"}, {"x-twice", "2"}};
    const HttpRequest request = HttpRequest::fromHead(head, "{}", QHostAddress::LocalHostIPv6);
    QCOMPARE(request.method, QByteArray("POST"));
    QCOMPARE(request.body, QByteArray("{}"));
    QCOMPARE(request.remoteAddress, QHostAddress(QHostAddress::LocalHostIPv6));
    QCOMPARE(request.header("HOST"), QByteArray("localhost"));
    QCOMPARE(request.header("x-twice"), QByteArray("1"));  // the first of several
    QVERIFY(!request.hasHeader("authorization"));
}

QTEST_GUILESS_MAIN(tst_HttpRequest)
#include "tst_httprequest.moc"
