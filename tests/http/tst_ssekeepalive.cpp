// SPDX-License-Identifier: Apache-2.0
// The keep-alive comments of event streams, against a real replhost-server started with a short
// interval (--sse-keep-alive) and a client that reads the raw chunked bytes, because an SSE
// parser is meant to hide comments. A run that stays quiet for a while must get ": keep-alive"
// comments while it is still running, and then its stream must still deliver the output, end
// with "done" and leave the connection usable.

#include "apiclient.h"
#include "serverprocess.h"

#include <Poco/Exception.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>

#include <QDeadlineTimer>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>

namespace {

constexpr int kKeepAliveMs = 100;
// Twenty keep-alive intervals: the run is still sleeping when the first comment arrives, however
// slowly the machine runs, and the test does not depend on how many arrive.
const char *const kQuietSeconds = "2";

// One item of an event stream, in the order it was sent.
struct StreamItem {
    bool isComment = false;
    QByteArray text;   // a comment's text
    QByteArray type;   // an event's type ("execution" for the stream's first message)
    QJsonObject data;
};

// The payload of a chunked body ("<hex size>\r\n<bytes>\r\n" … "0\r\n\r\n"); false if it is not
// complete and well-framed.
bool dechunk(const QByteArray &body, QByteArray *payload)
{
    qsizetype at = 0;
    while (true) {
        const qsizetype lineEnd = body.indexOf("\r\n", at);
        if (lineEnd < 0)
            return false;
        bool ok = false;
        const qsizetype size = body.mid(at, lineEnd - at).toLongLong(&ok, 16);
        if (!ok || lineEnd + 2 + size + 2 > body.size())
            return false;
        if (size == 0)
            return body.mid(lineEnd + 2) == "\r\n";
        payload->append(body.mid(lineEnd + 2, size));
        if (body.mid(lineEnd + 2 + size, 2) != "\r\n")
            return false;
        at = lineEnd + 2 + size + 2;
    }
}

// SSE blocks separated by blank lines: comments (": …") and events (event:, data:, id:).
QList<StreamItem> parseStream(const QByteArray &payload)
{
    QList<StreamItem> items;
    StreamItem current;
    bool pending = false;
    for (const QByteArray &line : payload.split('\n')) {
        if (line.isEmpty()) {
            if (pending)
                items.append(current);
            current = {};
            pending = false;
        } else if (line.startsWith(':')) {
            items.append({true, line.mid(1).trimmed(), {}, {}});
        } else if (line.startsWith("event: ")) {
            current.type = line.mid(7);
            pending = true;
        } else if (line.startsWith("data: ")) {
            current.data = QJsonDocument::fromJson(line.mid(6)).object();
            pending = true;
        }
    }
    return items;
}

} // namespace

class tst_SseKeepAlive : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void quietRunGetsKeepAlivesThenEnds_data();
    void quietRunGetsKeepAlivesThenEnds();
    void badKeepAliveIntervalIsRefused_data();
    void badKeepAliveIntervalIsRefused();

private:
    ServerProcess m_server;
};

void tst_SseKeepAlive::initTestCase()
{
    QVERIFY2(m_server.start({QStringLiteral("--sse-keep-alive"), QString::number(kKeepAliveMs)}),
             qPrintable(m_server.error()));
}

void tst_SseKeepAlive::cleanupTestCase()
{
    QCOMPARE(m_server.stop(), 0);
}

void tst_SseKeepAlive::quietRunGetsKeepAlivesThenEnds_data()
{
    QTest::addColumn<QString>("language");  // empty: a shell command, no context
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("documentRoute");  // where the run's status is read, by its id
    QTest::newRow("python time.sleep")
            << QStringLiteral("python")
            << QStringLiteral("import time\ntime.sleep(%1)\nprint('awake')").arg(QLatin1String(kQuietSeconds))
            << QStringLiteral("/v1/executions/");
    QTest::newRow("command sleep")
            << QString() << QStringLiteral("sleep %1; echo awake").arg(QLatin1String(kQuietSeconds))
            << QStringLiteral("/v1/commands/");
}

void tst_SseKeepAlive::quietRunGetsKeepAlivesThenEnds()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, documentRoute);
    const ApiClient client(m_server.port(), m_server.token());

    QString path = QStringLiteral("/v1/commands");
    QJsonObject body{{QStringLiteral("command"), code}};
    if (!language.isEmpty()) {
        if (const QString missing = client.missingLanguage(language); !missing.isEmpty())
            QSKIP(qPrintable(missing));
        const QString context = client.createContext(language);
        QVERIFY(!context.isEmpty());
        // Started and idle first, so the quiet part of the stream is the sleep itself.
        QVERIFY(client.waitForContextState(context, QStringLiteral("idle")));
        path = QStringLiteral("/v1/contexts/%1/executions").arg(context);
        body = {{QStringLiteral("code"), code}};
    }

    const QByteArray payload = QJsonDocument(body).toJson(QJsonDocument::Compact);
    const QByteArray request = "POST " + path.toUtf8() + " HTTP/1.1\r\n"
            "Host: 127.0.0.1:" + QByteArray::number(m_server.port()) + "\r\n"
            "Authorization: Bearer " + m_server.token() + "\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: " + QByteArray::number(payload.size()) + "\r\n\r\n" + payload;
    Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", m_server.port()));
    socket.sendBytes(request.constData(), int(request.size()));

    QByteArray received;
    auto readUntil = [&](const QByteArray &needle) {
        QDeadlineTimer deadline(60000);
        char buffer[4096];
        while (!received.contains(needle) && !deadline.hasExpired()) {
            try {
                socket.setReceiveTimeout(Poco::Timespan(std::max<qint64>(1, deadline.remainingTime()) * 1000));
                const int n = socket.receiveBytes(buffer, sizeof buffer);
                if (n <= 0)
                    return false;
                received.append(buffer, n);
            } catch (const Poco::Exception &) {
                return false;
            }
        }
        return received.contains(needle);
    };

    // The first comment: the run is still sleeping when it arrives.
    QVERIFY2(readUntil(": keep-alive\n\n"), received.constData());
    const qsizetype headEnd = received.indexOf("\r\n\r\n");
    QVERIFY(received.startsWith("HTTP/1.1 200 "));
    QVERIFY(received.left(headEnd).toLower().contains("transfer-encoding: chunked"));
    const qsizetype idStart = received.indexOf("data: {");
    QVERIFY(idStart > 0);
    const QJsonObject head = QJsonDocument::fromJson(
            received.mid(idStart + 6, received.indexOf('\n', idStart) - idStart - 6)).object();
    const QString id = head.value(QStringLiteral("id")).toString();
    QVERIFY2(!id.isEmpty(), received.constData());
    const auto document = client.get(documentRoute + id);
    QCOMPARE(document.status, 200);
    QCOMPARE(document.object().value(QStringLiteral("status")).toString(), QStringLiteral("running"));

    // Then the rest, up to the last chunk.
    QVERIFY2(readUntil("\r\n0\r\n\r\n"), received.constData());
    QByteArray events;
    QVERIFY2(dechunk(received.mid(headEnd + 4), &events), received.constData());
    const QList<StreamItem> items = parseStream(events);

    // execution, started, one or more comments while quiet, the output, done, and nothing after.
    QStringList shape;
    QString output;
    for (const StreamItem &item : items) {
        shape.append(item.isComment ? QStringLiteral(":") : QString::fromUtf8(item.type));
        if (item.isComment)
            QCOMPARE(item.text, QByteArray("keep-alive"));
        if (item.type == "stream")
            output += item.data.value(QStringLiteral("text")).toString();
    }
    const QString sequence = shape.join(QLatin1Char(' '));
    // One line of output may come as several stream events.
    static const QRegularExpression expected(QStringLiteral("^execution started( :)+( stream)+ done$"));
    QVERIFY2(expected.match(sequence).hasMatch(), qPrintable(sequence));
    QCOMPARE(output, QStringLiteral("awake\n"));
    QCOMPARE(items.back().data.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));

    // The stream ended as an answer, not by closing: the connection takes the next request.
    const QByteArray next = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    received.clear();
    socket.sendBytes(next.constData(), int(next.size()));
    QVERIFY2(readUntil("\"ok\""), received.constData());
    QVERIFY(received.startsWith("HTTP/1.1 200 "));
}

void tst_SseKeepAlive::badKeepAliveIntervalIsRefused_data()
{
    QTest::addColumn<QString>("value");
    QTest::newRow("zero") << QStringLiteral("0");
    QTest::newRow("under the floor") << QStringLiteral("9");
    QTest::newRow("over an hour") << QStringLiteral("3600001");
    QTest::newRow("not a number") << QStringLiteral("15s");
}

void tst_SseKeepAlive::badKeepAliveIntervalIsRefused()
{
    QFETCH(QString, value);
    const ServerProcess::Run run = ServerProcess::runOnce({QStringLiteral("--sse-keep-alive"), value});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--sse-keep-alive must be a number of milliseconds"), run.err.constData());
}

QTEST_GUILESS_MAIN(tst_SseKeepAlive)
#include "tst_ssekeepalive.moc"
