// SPDX-License-Identifier: Apache-2.0
// Slow and hostile clients against a real replhost-server process, over raw sockets: what the
// connection guard in front of Qt HttpServer promises. Every refusal is a JSON {code, message};
// the server answers the other clients meanwhile and outlives them all.

#include "apiclient.h"
#include "serverprocess.h"

#include <Poco/Net/StreamSocket.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>
#include <QThread>

#include <memory>
#include <vector>

namespace {

// The JSON body of the first response in `response`.
QJsonObject errorOf(const QByteArray &response)
{
    const qsizetype headEnd = response.indexOf("\r\n\r\n");
    if (headEnd < 0)
        return {};
    // The body is the Content-Length bytes after the head: what follows is another answer.
    static const QRegularExpression length(QStringLiteral("\r\ncontent-length: *(\\d+)"),
                                           QRegularExpression::CaseInsensitiveOption);
    const auto match = length.match(QString::fromLatin1(response.left(headEnd)));
    const qsizetype size = match.hasMatch() ? match.captured(1).toLongLong() : -1;
    return QJsonDocument::fromJson(response.mid(headEnd + 4, size)).object();
}

QByteArray headOf(const QByteArray &response)
{
    return response.left(response.indexOf("\r\n\r\n")).toLower();
}

} // namespace

class tst_HostileClients : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void unauthenticatedBodyIs401BeforeItIsSent();
    void expectContinueOnlyAfterAuthentication();
    void framingRefusalsAre400WithJson_data();
    void framingRefusalsAre400WithJson();
    void trickledHeadsDoNotStopOtherClients();
    void headDeadlineEndsATrickle();
    void slowBodyIs408();
    void connectionsPastTheCapAre503();
    void connectionsPastTheCapOfOneClientAre503();
    void pipelinedRequestsAreAnsweredInOrderAcrossRefusals();
    void connectionCloseEndsTheConnectionAfterItsAnswer();
    void headIsAnsweredForEveryGetRoute();
    void everyAnswerHasADate();
    void preflightListsTheMethodsAndHeadersInUse();
    void clientsLeavingMidStreamDoNotHurtTheServer();

private:
    QByteArray auth() const { return "Authorization: Bearer " + m_server.token() + "\r\n"; }

    ServerProcess m_server;  // default limits
    ServerProcess m_strict;  // --head-timeout 2 --max-connections 4
};

void tst_HostileClients::initTestCase()
{
    QVERIFY2(m_server.start({QStringLiteral("--allow-origin"), QStringLiteral("http://localhost:3000")}),
             qPrintable(m_server.error()));
    QVERIFY2(m_strict.start({QStringLiteral("--head-timeout"), QStringLiteral("2"),
                             QStringLiteral("--max-connections"), QStringLiteral("4")}),
             qPrintable(m_strict.error()));
}

void tst_HostileClients::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
    QCOMPARE(m_strict.stop(), 0);
}

void tst_HostileClients::unauthenticatedBodyIs401BeforeItIsSent()
{
    for (const QByteArray &credential : {QByteArray(), QByteArray("Authorization: Bearer wrong\r\n")}) {
        RawConnection connection(m_server.port());
        QVERIFY(connection.send("POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\n" + credential
                                + "Content-Type: application/json\r\nContent-Length: 20971520\r\n\r\n"));
        // Not one byte of the 20 MB body has been sent: the answer comes from the head.
        const QByteArray response = connection.readResponses(1, 10000);
        QVERIFY2(response.startsWith("HTTP/1.1 401 "), response.left(300).constData());
        QCOMPARE(errorOf(response).value(QStringLiteral("code")).toString(), QStringLiteral("unauthorized"));
        QVERIFY(!errorOf(response).value(QStringLiteral("message")).toString().isEmpty());
        QVERIFY(headOf(response).contains("\r\nwww-authenticate: bearer"));
        QVERIFY(headOf(response).contains("\r\nconnection: close"));
        // What the client sends now is discarded, then the connection ends.
        for (int i = 0; i < 8 && connection.send(QByteArray(1024 * 1024, 'x')); ++i) {
        }
        bool closed = false;
        connection.readUntilClosed(10000, &closed);
        QVERIFY(closed);
    }
}

void tst_HostileClients::expectContinueOnlyAfterAuthentication()
{
    const QByteArray body = R"({"language":"cobol"})";
    const QByteArray head = "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
                            "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    RawConnection stranger(m_server.port());
    QVERIFY(stranger.send(head + "\r\n"));
    const QByteArray refused = stranger.readResponses(1, 10000);
    QVERIFY2(refused.startsWith("HTTP/1.1 401 "), refused.constData());

    RawConnection client(m_server.port());
    QVERIFY(client.send(head + auth() + "\r\n"));
    const QByteArray interim = client.readResponses(1, 10000);
    QVERIFY2(interim.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), interim.constData());
    QVERIFY(client.send(body));
    const QByteArray response = client.readResponses(1, 10000);
    QVERIFY2(response.startsWith("HTTP/1.1 400 "), response.constData());
    QCOMPARE(errorOf(response).value(QStringLiteral("code")).toString(), QStringLiteral("unknown_language"));
}

void tst_HostileClients::framingRefusalsAre400WithJson_data()
{
    QTest::addColumn<QByteArray>("head");
    const auto row = [](const char *name, const QByteArray &fields) {
        QTest::newRow(name) << fields;
    };
    row("Content-Length and Transfer-Encoding",
        "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n");
    row("duplicate Content-Length",
        "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n");
    row("NUL in a value", QByteArray("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX: a\0b\r\n\r\n", 50));
    row("bare CR in a value", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX: a\rb\r\n\r\n");
    row("control character", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX: \x1b[31m\r\n\r\n");
    row("obs-fold", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX: a\r\n b\r\n\r\n");
    row("invalid field name", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX Y: a\r\n\r\n");
    row("space before the colon", "GET /healthz HTTP/1.1\r\nHost : localhost\r\n\r\n");
    row("invalid method", "G@T /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    row("VT after chunked",
        "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\v\r\n\r\n");
    row("FF before chunked",
        "POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: \fchunked\r\n\r\n");
    row("bare LF line ends", "GET /healthz HTTP/1.1\nHost: localhost\n\n");
    row("two Host fields", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: example.com\r\n\r\n");
}

void tst_HostileClients::framingRefusalsAre400WithJson()
{
    QFETCH(QByteArray, head);
    RawConnection connection(m_server.port());
    QVERIFY(connection.send(head));
    bool closed = false;
    const QByteArray response = connection.readUntilClosed(10000, &closed);
    QVERIFY2(response.startsWith("HTTP/1.1 400 "), response.left(300).constData());
    const QJsonObject error = errorOf(response);
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY(!error.value(QStringLiteral("message")).toString().isEmpty());
    QVERIFY(headOf(response).contains("\r\nconnection: close"));
    QVERIFY2(closed, "the connection stayed open after a framing refusal");
}

void tst_HostileClients::trickledHeadsDoNotStopOtherClients()
{
    // 300 connections each send a request head one byte a second, never finishing it in the
    // time of the test; a real client's requests are answered all along.
    const QByteArray head = "GET /v1/info HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n";
    std::vector<std::unique_ptr<RawConnection>> trickles;
    for (int i = 0; i < 300; ++i)
        trickles.push_back(std::make_unique<RawConnection>(m_server.port()));
    const ApiClient client(m_server.port(), m_server.token());
    for (int second = 0; second < 5; ++second) {
        for (auto &trickle : trickles)
            QVERIFY(trickle->send(head.mid(second, 1)));
        for (int i = 0; i < 3; ++i) {
            const auto response = client.get(QStringLiteral("/v1/info"));
            QCOMPARE(response.status, 200);
        }
        QThread::sleep(1);
    }
    // None of the trickled requests was served: their heads never ended. (On a slow machine
    // the head deadline may have cut some off already: then their answer is that 408.)
    for (auto &trickle : trickles) {
        const QByteArray answer = trickle->readResponses(1, 1);
        QVERIFY2(answer.isEmpty() || answer.startsWith("HTTP/1.1 408 "), answer.constData());
    }
}

void tst_HostileClients::headDeadlineEndsATrickle()
{
    // --head-timeout 2: a head trickled a byte every 200 ms (40 bytes would take 8 s) is cut
    // off with 408, and the idle timer, which the trickle does not restart, plays no part.
    const QByteArray head = "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: abcdefghijklmnop\r\n\r\n";
    RawConnection connection(m_strict.port());
    QByteArray response;
    int sent = 0;
    for (; sent < head.size() && response.isEmpty(); ++sent) {
        if (!connection.send(head.mid(sent, 1)))
            break;
        response = connection.readResponses(1, 200);  // the server gives up on the head
    }
    QVERIFY2(sent < head.size(), "the whole trickled head was read");
    bool closed = false;
    response += connection.readUntilClosed(10000, &closed);
    QVERIFY2(response.startsWith("HTTP/1.1 408 "), response.constData());
    QCOMPARE(errorOf(response).value(QStringLiteral("code")).toString(), QStringLiteral("request_timeout"));
    QVERIFY(closed);
}

void tst_HostileClients::slowBodyIs408()
{
    // Past the head timeout (2 s), a body must arrive at 1 KiB/s at least; ten bytes a second
    // is far below.
    RawConnection connection(m_strict.port());
    QVERIFY(connection.send("POST /v1/contexts HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                            + m_strict.token() + "\r\nContent-Length: 100000\r\n\r\n"));
    QByteArray response;
    for (int i = 0; i < 100 && response.isEmpty(); ++i) {
        if (!connection.send(QByteArray(10, 'x')))
            break;
        response = connection.readResponses(1, 1000);
    }
    QVERIFY2(response.startsWith("HTTP/1.1 408 "), response.constData());
    QCOMPARE(errorOf(response).value(QStringLiteral("code")).toString(), QStringLiteral("request_timeout"));
}

void tst_HostileClients::connectionsPastTheCapAre503()
{
    // --max-connections 4: four connections, each proven accepted by an answer, hold the server.
    // (A connection of an earlier test may still be closing: a refused one is tried again.)
    const auto servedConnection = [this]() -> std::unique_ptr<RawConnection> {
        for (int attempt = 0; attempt < 50; ++attempt) {
            auto connection = std::make_unique<RawConnection>(m_strict.port());
            if (connection->send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                && connection->readResponses(1, 10000).startsWith("HTTP/1.1 200 "))
                return connection;
            QThread::msleep(100);
        }
        return nullptr;
    };
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < 4; ++i) {
        held.push_back(servedConnection());
        QVERIFY(held.back());
    }
    RawConnection fifth(m_strict.port());
    QVERIFY(fifth.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    bool closed = false;
    const QByteArray refused = fifth.readUntilClosed(10000, &closed);
    QVERIFY2(refused.startsWith("HTTP/1.1 503 "), refused.constData());
    QCOMPARE(errorOf(refused).value(QStringLiteral("code")).toString(), QStringLiteral("too_many_connections"));
    QVERIFY(headOf(refused).contains("\r\nretry-after: "));
    QVERIFY(closed);

    // One of them leaves: a new connection is served again (once the server saw it go).
    held.pop_back();
    QVERIFY(servedConnection());
}

void tst_HostileClients::connectionsPastTheCapOfOneClientAre503()
{
    // --max-connections-per-client 2: a third connection from 127.0.0.1 is refused, while one
    // from another address (127.0.0.2, on the loopback too) is served: the cap is per address,
    // not the total.
    ServerProcess server;
    QVERIFY2(server.start({QStringLiteral("--max-connections-per-client"), QStringLiteral("2")}),
             qPrintable(server.error()));
    const QByteArray healthz = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
    RawConnection first(server.port());
    RawConnection second(server.port());
    for (RawConnection *held : {&first, &second}) {
        QVERIFY(held->send(healthz));
        QVERIFY(held->readResponses(1, 10000).startsWith("HTTP/1.1 200 "));
    }
    RawConnection third(server.port());
    QVERIFY(third.send(healthz));
    bool closed = false;
    const QByteArray refused = third.readUntilClosed(10000, &closed);
    QVERIFY2(refused.startsWith("HTTP/1.1 503 "), refused.constData());
    QCOMPARE(errorOf(refused).value(QStringLiteral("code")).toString(), QStringLiteral("too_many_connections"));
    QVERIFY(headOf(refused).contains("\r\nretry-after: "));
    QVERIFY(closed);

    RawConnection otherClient(server.port(), QStringLiteral("127.0.0.2"));
    QVERIFY(otherClient.send(healthz));
    const QByteArray served = otherClient.readResponses(1, 10000);
    QVERIFY2(served.startsWith("HTTP/1.1 200 "), served.constData());
    QCOMPARE(server.stop(), 0);
}

void tst_HostileClients::pipelinedRequestsAreAnsweredInOrderAcrossRefusals()
{
    // Pipelined: an answered request, one refused from its head (no token, no body: the
    // connection goes on), a 404, and a public one.
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /v1/info HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n"
                            "GET /v1/info HTTP/1.1\r\nHost: localhost\r\n\r\n"
                            "GET /nope HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n"
                            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    const QByteArray responses = connection.readResponses(4, 10000);
    QCOMPARE(statusCodes(responses), (QList<int>{200, 401, 404, 200}));
    QVERIFY(responses.indexOf("app_version") < responses.indexOf("unauthorized"));
    QVERIFY(responses.indexOf("unauthorized") < responses.indexOf("not_found"));
    QVERIFY(responses.indexOf("not_found") < responses.indexOf("\"status\":\"ok\""));
}

void tst_HostileClients::connectionCloseEndsTheConnectionAfterItsAnswer()
{
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /v1/info HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + auth()
                            + "\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    bool closed = false;
    const QByteArray received = connection.readUntilClosed(10000, &closed);
    QVERIFY(closed);
    QCOMPARE(statusCodes(received), QList<int>{200});
    QVERIFY(headOf(received).contains("\r\nconnection: close"));
}

void tst_HostileClients::headIsAnsweredForEveryGetRoute()
{
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /v1/info HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n"));
    const QByteArray get = connection.readResponses(1, 10000);
    QVERIFY(get.startsWith("HTTP/1.1 200 "));
    // HEAD, then GET on the same connection: the HEAD answer has the GET answer's length and no
    // body (or the GET answer would be read as its body).
    QVERIFY(connection.send("HEAD /v1/info HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n"
                            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    const QByteArray both = connection.readResponses(1, 10000);
    const qsizetype headEnd = both.indexOf("\r\n\r\n");
    QVERIFY2(both.startsWith("HTTP/1.1 200 "), both.constData());
    const QByteArray lengthField = "\r\ncontent-length: " + QByteArray::number(get.size() - get.indexOf("\r\n\r\n") - 4);
    QVERIFY2(headOf(both).contains(lengthField), both.constData());
    const QByteArray next = both.mid(headEnd + 4) + connection.readResponses(1, 10000);
    QVERIFY2(next.startsWith("HTTP/1.1 200 "), next.constData());
    QVERIFY(next.contains("\"status\":\"ok\""));

    // A route without GET is still 405, and says HEAD with GET where GET is allowed.
    const ApiClient client(m_server.port(), m_server.token());
    const auto wrong = client.request("HEAD", QStringLiteral("/v1/commands"));
    QCOMPARE(wrong.status, 405);
}

void tst_HostileClients::everyAnswerHasADate()
{
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                            "GET /v1/info HTTP/1.1\r\nHost: localhost\r\n\r\n"
                            "GET /v1/nope HTTP/1.1\r\nHost: localhost\r\n" + auth() + "\r\n"));
    const QByteArray responses = connection.readResponses(3, 10000);
    QCOMPARE(statusCodes(responses), (QList<int>{200, 401, 404}));
    static const QRegularExpression date(QStringLiteral(
            "\r\nDate: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d\\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep"
            "|Oct|Nov|Dec) \\d{4} \\d\\d:\\d\\d:\\d\\d GMT\r\n"));
    QCOMPARE(int(QString::fromLatin1(responses).count(date)), 3);
}

void tst_HostileClients::preflightListsTheMethodsAndHeadersInUse()
{
    RawConnection connection(m_server.port());
    QVERIFY(connection.send("OPTIONS /opensandbox/v1/sandboxes HTTP/1.1\r\nHost: localhost\r\n"
                            "Origin: http://localhost:3000\r\nAccess-Control-Request-Method: PUT\r\n\r\n"));
    const QByteArray response = connection.readResponses(1, 10000);
    QVERIFY2(response.startsWith("HTTP/1.1 204 "), response.constData());
    const QByteArray head = headOf(response);
    for (const QByteArray method : {"get", "head", "post", "put", "patch", "delete"})
        QVERIFY2(head.contains(method), method.constData());
    for (const QByteArray field : {"authorization", "content-type", "last-event-id",
                                   "open-sandbox-api-key", "x-execd-access-token"})
        QVERIFY2(head.contains(field), field.constData());
}

void tst_HostileClients::clientsLeavingMidStreamDoNotHurtTheServer()
{
    // Twenty command streams, each left by its client (a reset) after its first bytes.
    const QByteArray payload = R"({"command":"for i in $(seq 1 200); do echo line $i; sleep 0.01; done"})";
    const QByteArray request = "POST /v1/commands HTTP/1.1\r\nHost: localhost\r\n" + auth()
            + "Content-Type: application/json\r\nContent-Length: "
            + QByteArray::number(payload.size()) + "\r\n\r\n" + payload;
    for (int i = 0; i < 20; ++i) {
        Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", m_server.port()));
        socket.sendBytes(request.constData(), int(request.size()));
        char buffer[512];
        socket.setReceiveTimeout(Poco::Timespan(10, 0));
        QVERIFY(socket.receiveBytes(buffer, sizeof buffer) > 0);
        socket.setLinger(true, 0);  // close with a reset, mid-stream
        socket.close();
    }
    // The server is whole, and still streams.
    const ApiClient client(m_server.port(), m_server.token());
    QCOMPARE(client.get(QStringLiteral("/healthz")).status, 200);
    const auto events = client.stream(QStringLiteral("/v1/commands"),
                                      QJsonObject{{QStringLiteral("command"), QStringLiteral("echo still")}});
    QVERIFY(!events.isEmpty());
    QVERIFY(m_server.isRunning());
}

QTEST_GUILESS_MAIN(tst_HostileClients)
#include "tst_hostileclients.moc"
