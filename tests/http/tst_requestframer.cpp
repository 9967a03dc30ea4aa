// SPDX-License-Identifier: Apache-2.0
#include "http/requestframer.h"

#include <QTest>

using replhost::http::ConnectionLimits;
using replhost::http::RequestFramer;
using Kind = RequestFramer::Step::Kind;

class tst_RequestFramer : public QObject {
    Q_OBJECT

private slots:
    void headAndBodyAreFramed();
    void pipelinedRequestsAreSeparated();
    void byteByByteGivesTheSameResult();
    void chunkedBodyIsFramed();
    void bodyOverLimitIsRefusedBeforeItArrives();
    void chunkedBodyOverLimitIsRefused();
    void tooManyHeaderFieldsIs431();
    void headerBlockOverLimitIs431WithoutWaitingForItsEnd();
    void ambiguousFramingIsRefused_data();
    void ambiguousFramingIsRefused();
    void connectionSemantics_data();
    void connectionSemantics();
    void nothingIsReportedAfterARefusal();

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

void tst_RequestFramer::headAndBodyAreFramed()
{
    RequestFramer framer(limits());
    auto steps = framer.feed("POST /v1/x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].kind, Kind::HeadComplete);
    QCOMPARE(steps[0].head.method, QByteArray("POST"));
    QCOMPARE(steps[0].head.target, QByteArray("/v1/x?y=1"));
    QCOMPARE(steps[0].head.contentLength, 5);
    QCOMPARE(steps[0].head.fields,
             (QList<QPair<QByteArray, QByteArray>>{{"Host", "a"}, {"Content-Length", "5"}}));
    QVERIFY(!framer.atMessageBoundary());
    steps = framer.feed("cde");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].kind, Kind::RequestComplete);
    QCOMPARE(steps[0].head.target, QByteArray("/v1/x?y=1"));
    QCOMPARE(steps[0].body, QByteArray("abcde"));
    QVERIFY(framer.atMessageBoundary());
}

void tst_RequestFramer::pipelinedRequestsAreSeparated()
{
    RequestFramer framer(limits());
    const auto steps = framer.feed("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nGETGET /a HTTP/1.1\r\n\r\n"
                                   "\r\nDELETE /b HTTP/1.1\n\n");
    // Each request: its head, then the request with its body.
    QCOMPARE(steps.size(), 6);
    QCOMPARE(steps[1].kind, Kind::RequestComplete);
    QCOMPARE(steps[1].body, QByteArray("GET"));
    QCOMPARE(steps[2].kind, Kind::HeadComplete);
    QCOMPARE(steps[3].kind, Kind::RequestComplete);
    QCOMPARE(steps[3].head.method, QByteArray("GET"));
    QCOMPARE(steps[3].head.target, QByteArray("/a"));
    QVERIFY(steps[3].body.isEmpty());
    QCOMPARE(steps[5].head.method, QByteArray("DELETE"));
    QVERIFY(framer.atMessageBoundary());
}

void tst_RequestFramer::byteByByteGivesTheSameResult()
{
    const QByteArray stream = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                              "GET /next HTTP/1.1\r\nX: y\r\n\r\n";
    RequestFramer framer(limits());
    QList<QByteArray> targets;
    QList<QByteArray> bodies;
    for (char c : stream) {
        for (const auto &step : framer.feed(QByteArrayView(&c, 1))) {
            QVERIFY(step.kind != Kind::Rejected);
            if (step.kind == Kind::HeadComplete)
                targets.append(step.head.target);
            else
                bodies.append(step.body);
        }
    }
    QCOMPARE(targets, (QList<QByteArray>{"/", "/next"}));
    QCOMPARE(bodies, (QList<QByteArray>{"abc", ""}));
    QVERIFY(framer.atMessageBoundary());
}

void tst_RequestFramer::chunkedBodyIsFramed()
{
    RequestFramer framer(limits());
    auto steps = framer.feed("PATCH / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    QCOMPARE(steps.size(), 1);
    QVERIFY(steps[0].head.chunked);
    QVERIFY(framer.feed("a;ext=1\r\n0123456789\r\n3\r\nabc\r\n").isEmpty());
    QVERIFY(!framer.atMessageBoundary());
    steps = framer.feed("0\r\n\r\n");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].kind, Kind::RequestComplete);
    QCOMPARE(steps[0].body, QByteArray("0123456789abc"));  // the chunks, without their framing
    QVERIFY(framer.atMessageBoundary());

    // Trailer fields are refused: Qt 6.4 would read them as the next request.
    RequestFramer trailers(limits());
    trailers.feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n");
    const auto steps2 = trailers.feed("0\r\nX-Checksum: 1\r\n\r\n");
    QCOMPARE(steps2.size(), 1);
    QCOMPARE(steps2[0].rejection.status, 400);
}

void tst_RequestFramer::bodyOverLimitIsRefusedBeforeItArrives()
{
    RequestFramer framer(limits());
    const auto steps = framer.feed("POST / HTTP/1.1\r\nContent-Length: 1001\r\n\r\n");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].kind, Kind::Rejected);
    QCOMPARE(steps[0].rejection.status, 413);
    QCOMPARE(steps[0].rejection.code, QStringLiteral("payload_too_large"));

    RequestFramer huge(limits());
    QCOMPARE(huge.feed("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n")[0].rejection.status, 413);

    RequestFramer exact(limits());
    QCOMPARE(exact.feed("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n")[0].kind, Kind::HeadComplete);
}

void tst_RequestFramer::chunkedBodyOverLimitIsRefused()
{
    RequestFramer framer(limits());
    QCOMPARE(framer.feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").size(), 1);
    QVERIFY(framer.feed("200\r\n" + QByteArray(0x200, 'x') + "\r\n").isEmpty());
    const auto steps = framer.feed("200\r\n");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].rejection.status, 413);
}

void tst_RequestFramer::tooManyHeaderFieldsIs431()
{
    QByteArray request = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 11; ++i)
        request += "X-" + QByteArray::number(i) + ": v\r\n";
    RequestFramer framer(limits());
    const auto steps = framer.feed(request + "\r\n");
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].rejection.status, 431);
}

void tst_RequestFramer::headerBlockOverLimitIs431WithoutWaitingForItsEnd()
{
    RequestFramer framer(limits());
    const auto steps = framer.feed("GET / HTTP/1.1\r\nX: " + QByteArray(600, 'a'));
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps[0].rejection.status, 431);
}

void tst_RequestFramer::ambiguousFramingIsRefused_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::newRow("two lengths") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") << 400;
    QTest::newRow("signed length") << QByteArray("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n") << 400;
    QTest::newRow("length and chunked") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n") << 400;
    QTest::newRow("gzip coding") << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") << 501;
    QTest::newRow("folded header") << QByteArray("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n") << 400;
    QTest::newRow("space before colon") << QByteArray("GET / HTTP/1.1\r\nHost : a\r\n\r\n") << 400;
    QTest::newRow("two hosts") << QByteArray("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") << 400;
    QTest::newRow("HTTP/2 preface") << QByteArray("PRI * HTTP/2.0\r\n\r\n") << 400;
    QTest::newRow("websocket") << QByteArray("GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n") << 400;
    QTest::newRow("bad chunk size") << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") << 400;
}

void tst_RequestFramer::ambiguousFramingIsRefused()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    RequestFramer framer(limits());
    const auto steps = framer.feed(request);
    QVERIFY(!steps.isEmpty());
    QCOMPARE(steps.back().kind, Kind::Rejected);
    QCOMPARE(steps.back().rejection.status, status);
}

void tst_RequestFramer::connectionSemantics_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<bool>("wantsClose");
    QTest::newRow("1.1 default") << QByteArray("GET / HTTP/1.1\r\n\r\n") << false;
    QTest::newRow("1.1 close") << QByteArray("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n") << true;
    QTest::newRow("1.1 list") << QByteArray("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n") << true;
    QTest::newRow("1.0 default") << QByteArray("GET / HTTP/1.0\r\n\r\n") << true;
    QTest::newRow("1.0 keep-alive") << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") << false;
}

void tst_RequestFramer::connectionSemantics()
{
    QFETCH(QByteArray, request);
    QFETCH(bool, wantsClose);
    RequestFramer framer(limits());
    const auto steps = framer.feed(request);
    QCOMPARE(steps.size(), 2);  // no body: the head and the complete request at once
    QCOMPARE(steps[0].head.wantsClose, wantsClose);
    QCOMPARE(steps[1].kind, Kind::RequestComplete);
    QCOMPARE(steps[1].head.wantsClose, wantsClose);
}

void tst_RequestFramer::nothingIsReportedAfterARefusal()
{
    RequestFramer framer(limits());
    QCOMPARE(framer.feed("POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\nGET / HTTP/1.1\r\n\r\n").size(), 1);
    QVERIFY(framer.isRejected());
    QVERIFY(framer.feed("GET / HTTP/1.1\r\n\r\n").isEmpty());
}

QTEST_GUILESS_MAIN(tst_RequestFramer)
#include "tst_requestframer.moc"
