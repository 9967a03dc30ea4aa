// SPDX-License-Identifier: Apache-2.0
// The head check in front of Qt HttpServer: what it refuses, what it reads from a head, and that
// it waits for a head's end without refusing what may still become valid.
#include "http/headcheck.h"

#include <QTest>

using replhost::http::ConnectionLimits;
using replhost::http::HeadCheck;
using Outcome = HeadCheck::Outcome;

class tst_HeadCheck : public QObject {
    Q_OBJECT

private slots:
    void completeHeadIsRead();
    void headIsIncompleteUntilItsBlankLine();
    void everyPrefixOfAValidHeadIsIncomplete();
    void emptyLinesBeforeTheRequestLineAreSkipped();
    void bodyOverLimitIsRefusedFromItsLength();
    void tooManyHeaderFieldsIs431();
    void headOverLimitIs431WithoutWaitingForItsEnd();
    void framingRefusals_data();
    void framingRefusals();
    void valuesKeepInnerWhitespaceAndLoseOnlySpAndHtab();
    void connectionSemantics_data();
    void connectionSemantics();
    void expectContinueOnlyWithABody();

private:
    static ConnectionLimits limits()
    {
        ConnectionLimits l;
        l.maxBodyBytes = 1000;
        l.maxHeaderCount = 10;
        l.maxHeaderBytes = 512;
        return l;
    }
};

void tst_HeadCheck::completeHeadIsRead()
{
    const QByteArray head = "POST /v1/x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\n";
    const auto verdict = HeadCheck::inspect(head + "abcde", limits());
    QCOMPARE(verdict.outcome, Outcome::Complete);
    QCOMPARE(verdict.head.method, QByteArray("POST"));
    QCOMPARE(verdict.head.target, QByteArray("/v1/x?y=1"));
    QCOMPARE(verdict.head.httpMinor, 1);
    QCOMPARE(verdict.head.contentLength, 5);
    QVERIFY(!verdict.head.chunked);
    QCOMPARE(verdict.head.size, head.size());
    QCOMPARE(verdict.head.fields,
             (QList<QPair<QByteArray, QByteArray>>{{"Host", "a"}, {"Content-Length", "5"}}));
}

void tst_HeadCheck::headIsIncompleteUntilItsBlankLine()
{
    QCOMPARE(HeadCheck::inspect("", limits()).outcome, Outcome::Incomplete);
    QCOMPARE(HeadCheck::inspect("GET / HTTP/1.1\r\nHost: a\r\n", limits()).outcome, Outcome::Incomplete);
    QCOMPARE(HeadCheck::inspect("GET / HTTP/1.1\r\nHost: a\r\n\r", limits()).outcome, Outcome::Incomplete);
    QCOMPARE(HeadCheck::inspect("GET / HTTP/1.1\r\nHost: a\r\n\r\n", limits()).outcome, Outcome::Complete);
}

void tst_HeadCheck::everyPrefixOfAValidHeadIsIncomplete()
{
    const QByteArray head = "PUT /v1/files?path=a%20b HTTP/1.1\r\nHost: localhost:8080\r\n"
                            "Authorization: Bearer t0k3n\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (qsizetype n = 0; n < head.size(); ++n)
        QCOMPARE(HeadCheck::inspect(head.first(n), limits()).outcome, Outcome::Incomplete);
    const auto verdict = HeadCheck::inspect(head, limits());
    QCOMPARE(verdict.outcome, Outcome::Complete);
    QVERIFY(verdict.head.chunked);
    QCOMPARE(verdict.head.contentLength, 0);
}

void tst_HeadCheck::emptyLinesBeforeTheRequestLineAreSkipped()
{
    const auto verdict = HeadCheck::inspect("\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n", limits());
    QCOMPARE(verdict.outcome, Outcome::Complete);
    QCOMPARE(verdict.head.target, QByteArray("/healthz"));
    QCOMPARE(verdict.head.size, 4 + QByteArray("GET /healthz HTTP/1.1\r\n\r\n").size());
}

void tst_HeadCheck::bodyOverLimitIsRefusedFromItsLength()
{
    const auto over = HeadCheck::inspect("POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n", limits());
    QCOMPARE(over.outcome, Outcome::Refused);
    QCOMPARE(over.refusal.status, 413);
    QCOMPARE(over.refusal.code, QStringLiteral("payload_too_large"));
    const auto huge = HeadCheck::inspect(
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999999\r\n\r\n", limits());
    QCOMPARE(huge.refusal.status, 413);
    QCOMPARE(HeadCheck::inspect("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", limits()).outcome,
             Outcome::Complete);
}

void tst_HeadCheck::tooManyHeaderFieldsIs431()
{
    QByteArray head = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 11; ++i)
        head += "X-" + QByteArray::number(i) + ": 1\r\n";
    const auto verdict = HeadCheck::inspect(head + "\r\n", limits());
    QCOMPARE(verdict.outcome, Outcome::Refused);
    QCOMPARE(verdict.refusal.status, 431);
    QCOMPARE(verdict.refusal.code, QStringLiteral("header_fields_too_large"));
}

void tst_HeadCheck::headOverLimitIs431WithoutWaitingForItsEnd()
{
    const auto verdict = HeadCheck::inspect("GET / HTTP/1.1\r\nX: " + QByteArray(600, 'a'), limits());
    QCOMPARE(verdict.outcome, Outcome::Refused);
    QCOMPARE(verdict.refusal.status, 431);
}

void tst_HeadCheck::framingRefusals_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("status");
    const auto row = [](const char *name, const QByteArray &head, int status = 400) {
        QTest::newRow(name) << head << status;
    };
    row("two lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
    row("two equal lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n");
    row("length list", "POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n");
    row("signed length", "POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n");
    row("length and chunked", "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n");
    row("chunked and length", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n");
    row("gzip coding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501);
    row("chunked twice", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501);
    row("chunked with VT", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\v\r\n\r\n");
    row("chunked with FF", "POST / HTTP/1.1\r\nTransfer-Encoding: \fchunked\r\n\r\n");
    row("chunked in a word", "POST / HTTP/1.1\r\nTransfer-Encoding: xchunkedx\r\n\r\n", 501);
    row("chunked in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
    row("folded header", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n");
    row("folded with a tab", "GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n");
    row("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n");
    row("no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n");
    row("empty field name", "GET / HTTP/1.1\r\n: a\r\n\r\n");
    row("separator in field name", "GET / HTTP/1.1\r\nX(y): a\r\n\r\n");
    row("non-ASCII field name", "GET / HTTP/1.1\r\nX\xc3\xa9: a\r\n\r\n");
    row("NUL in a value", QByteArray("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 26));
    row("bare CR in a value", "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n");
    row("control character in a value", "GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n");
    row("DEL in a value", "GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n");
    row("bare LF line end", "GET / HTTP/1.1\nHost: a\n\n");
    row("bare LF after a field", "GET / HTTP/1.1\r\nHost: a\n\r\n");
    row("two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    row("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\n", 505);
    row("no version", "GET /\r\n\r\n");
    row("lower-case version", "GET / http/1.1\r\n\r\n");
    row("two spaces", "GET  / HTTP/1.1\r\n\r\n");
    row("trailing space", "GET / HTTP/1.1 \r\n\r\n");
    row("leading space", " GET / HTTP/1.1\r\n\r\n");
    row("method not a token", "G(T / HTTP/1.1\r\n\r\n");
    row("control character in the target", "GET /a\x01 HTTP/1.1\r\n\r\n");
    row("non-ASCII target", "GET /\xc3\xa9 HTTP/1.1\r\n\r\n");
    row("websocket", "GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
}

void tst_HeadCheck::framingRefusals()
{
    QFETCH(QByteArray, head);
    QFETCH(int, status);
    const auto verdict = HeadCheck::inspect(head, limits());
    QCOMPARE(verdict.outcome, Outcome::Refused);
    QCOMPARE(verdict.refusal.status, status);
    QVERIFY(!verdict.refusal.code.isEmpty());
    QVERIFY(!verdict.refusal.message.isEmpty());
}

void tst_HeadCheck::valuesKeepInnerWhitespaceAndLoseOnlySpAndHtab()
{
    const auto verdict = HeadCheck::inspect("GET / HTTP/1.1\r\nX: \t a  b \t\r\nY:\r\n\r\n", limits());
    QCOMPARE(verdict.outcome, Outcome::Complete);
    QCOMPARE(verdict.head.fields,
             (QList<QPair<QByteArray, QByteArray>>{{"X", "a  b"}, {"Y", ""}}));
}

void tst_HeadCheck::connectionSemantics_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<bool>("wantsClose");
    QTest::newRow("1.1 default") << QByteArray("GET / HTTP/1.1\r\n\r\n") << false;
    QTest::newRow("1.1 close") << QByteArray("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n") << true;
    QTest::newRow("1.1 list") << QByteArray("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n") << true;
    QTest::newRow("1.0 default") << QByteArray("GET / HTTP/1.0\r\n\r\n") << true;
    QTest::newRow("1.0 keep-alive") << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") << false;
}

void tst_HeadCheck::connectionSemantics()
{
    QFETCH(QByteArray, head);
    QFETCH(bool, wantsClose);
    const auto verdict = HeadCheck::inspect(head, limits());
    QCOMPARE(verdict.outcome, Outcome::Complete);
    QCOMPARE(verdict.head.wantsClose, wantsClose);
}

void tst_HeadCheck::expectContinueOnlyWithABody()
{
    QVERIFY(HeadCheck::inspect("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n",
                               limits()).head.expectsContinue);
    QVERIFY(!HeadCheck::inspect("POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
                                limits()).head.expectsContinue);
}

QTEST_GUILESS_MAIN(tst_HeadCheck)
#include "tst_headcheck.moc"
