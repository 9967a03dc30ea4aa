// SPDX-License-Identifier: Apache-2.0
// GET /v1/events, the stream of what happens in the engine, against a real replhost-server and
// clients spoken to with Poco: what other clients do arrives in the order it happened, the
// workspace filter, the token, and a client that stops reading, which must cost the server a
// bounded queue and get a resync instead of every event.

#include "apiclient.h"
#include "serverprocess.h"

#include <Poco/Exception.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <algorithm>

namespace {

// Reads events until one of `type` whose data's `field` is `value` arrived (returned last), the
// stream ended or no event came for the timeout.
QList<ApiClient::Event> readUntil(ApiClient::Stream &stream, const QByteArray &type, const QString &field,
                                  const QString &value)
{
    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream.next(30000)) {
        events.append(*event);
        if (event->type == type && event->json().value(field).toString() == value)
            break;
    }
    return events;
}

// The type of the next event, empty when none came.
QByteArray nextType(ApiClient::Stream &stream)
{
    const std::optional<ApiClient::Event> event = stream.next(10000);
    return event ? event->type : QByteArray();
}

qsizetype indexOf(const QList<ApiClient::Event> &events, const QByteArray &type, const QString &field,
                  const QString &value)
{
    for (qsizetype i = 0; i < events.size(); ++i) {
        if (events.at(i).type == type && events.at(i).json().value(field).toString() == value)
            return i;
    }
    return -1;
}

} // namespace

class tst_EventsRoute : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void firstEventIsReady();
    void othersContextAndRunArriveInOrder();
    void removedAndRenamedContextsAreAnnounced();
    void workspaceFilterSendsThatWorkspaceOnly();
    void unknownWorkspaceIs404();
    void withoutTheTokenIs401();
    void aReaderThatStopsGetsAResyncNotAnUnboundedQueue();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }

    ServerProcess m_server;
};

void tst_EventsRoute::initTestCase()
{
    QVERIFY2(m_server.start({QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR),
                             QStringLiteral("--warm-pool"), QStringLiteral("0")}),
             qPrintable(m_server.error()));
}

void tst_EventsRoute::firstEventIsReady()
{
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream("GET", QStringLiteral("/v1/events"));
    QCOMPARE(stream->status(), 200);
    QVERIFY(stream->contentType().startsWith("text/event-stream"));
    const std::optional<ApiClient::Event> ready = stream->next(10000);
    QVERIFY(ready);
    QCOMPARE(ready->type, QByteArray("ready"));
    QVERIFY(ready->json().value(QStringLiteral("workspace")).isNull());
    QVERIFY(ready->id.isEmpty());  // a reconnect starts again with ready: nothing to resume after
}

void tst_EventsRoute::othersContextAndRunArriveInOrder()
{
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream("GET", QStringLiteral("/v1/events"));
    QCOMPARE(stream->status(), 200);
    QCOMPARE(nextType(*stream), QByteArray("ready"));

    const QString contextId = client().createContext(QStringLiteral("plain"));
    QVERIFY(!contextId.isEmpty());
    const QJsonObject run = client().runAndWait(contextId, QStringLiteral("printed by another client"));
    const QString executionId = run.value(QStringLiteral("id")).toString();
    QVERIFY(!executionId.isEmpty());

    const QList<ApiClient::Event> events =
            readUntil(*stream, "execution_finished", QStringLiteral("id"), executionId);
    const qsizetype added = indexOf(events, "context_added", QStringLiteral("id"), contextId);
    const qsizetype started = indexOf(events, "execution_started", QStringLiteral("id"), executionId);
    const qsizetype finished = indexOf(events, "execution_finished", QStringLiteral("id"), executionId);
    QVERIFY(added >= 0);
    QVERIFY(started > added);
    QVERIFY(finished > started);

    // The context as GET /v1/contexts/{id} gives it; the run as the history lists it.
    QCOMPARE(events.at(added).json().value(QStringLiteral("language")).toString(), QStringLiteral("plain"));
    QCOMPARE(events.at(added).json().value(QStringLiteral("workspace")).toString(), QStringLiteral("default"));
    const QJsonObject start = events.at(started).json();
    QCOMPARE(start.value(QStringLiteral("context_id")).toString(), contextId);
    QCOMPARE(start.value(QStringLiteral("workspace")).toString(), QStringLiteral("default"));
    QCOMPARE(start.value(QStringLiteral("code")).toString(), QStringLiteral("printed by another client"));
    QCOMPARE(start.value(QStringLiteral("status")).toString(), QStringLiteral("running"));
    const QJsonObject end = events.at(finished).json();
    QCOMPARE(end.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(end.value(QStringLiteral("execution_count")).toInt(), run.value(QStringLiteral("execution_count")).toInt());
    QCOMPARE(end.value(QStringLiteral("done")).toObject().value(QStringLiteral("type")).toString(), QStringLiteral("done"));
    QVERIFY(end.value(QStringLiteral("duration_ms")).toInteger(-1) >= 0);
    // The context said it was busy before the run ended.
    const bool busy = std::any_of(events.cbegin(), events.cbegin() + finished, [&](const ApiClient::Event &event) {
        return event.type == "context_changed" && event.json().value(QStringLiteral("id")).toString() == contextId
               && event.json().value(QStringLiteral("state")).toString() == QLatin1String("busy");
    });
    QVERIFY(busy);
}

void tst_EventsRoute::removedAndRenamedContextsAreAnnounced()
{
    const QString contextId = client().createContext(QStringLiteral("plain"));
    QVERIFY(!contextId.isEmpty());
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream("GET", QStringLiteral("/v1/events"));
    QCOMPARE(nextType(*stream), QByteArray("ready"));

    QCOMPARE(client().patch(QStringLiteral("/v1/contexts/") + contextId, {{QStringLiteral("name"), QStringLiteral("renamed")}})
                     .status,
             200);
    QCOMPARE(client().del(QStringLiteral("/v1/contexts/") + contextId).status, 204);

    const QList<ApiClient::Event> events = readUntil(*stream, "context_removed", QStringLiteral("id"), contextId);
    QVERIFY(!events.isEmpty());
    QCOMPARE(events.back().type, QByteArray("context_removed"));
    QCOMPARE(events.back().json().value(QStringLiteral("workspace")).toString(), QStringLiteral("default"));
    const bool renamed = std::any_of(events.cbegin(), events.cend(), [&](const ApiClient::Event &event) {
        return event.type == "context_changed" && event.json().value(QStringLiteral("id")).toString() == contextId
               && event.json().value(QStringLiteral("name")).toString() == QLatin1String("renamed");
    });
    QVERIFY(renamed);
}

void tst_EventsRoute::workspaceFilterSendsThatWorkspaceOnly()
{
    QCOMPARE(client().post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("filtered")}}).status,
             201);
    const std::unique_ptr<ApiClient::Stream> stream =
            client().openStream("GET", QStringLiteral("/v1/events?workspace=filtered"));
    QCOMPARE(stream->status(), 200);
    const std::optional<ApiClient::Event> ready = stream->next(10000);
    QVERIFY(ready);
    QCOMPARE(ready->type, QByteArray("ready"));
    QCOMPARE(ready->json().value(QStringLiteral("workspace")).toString(), QStringLiteral("filtered"));

    // The other workspace's context comes first: had it been sent, it would be read first.
    const QString elsewhere = client().createContext(QStringLiteral("plain"));
    QVERIFY(!elsewhere.isEmpty());
    client().runAndWait(elsewhere, QStringLiteral("not for this stream"));
    const QString prefix = QStringLiteral("/v1/workspaces/filtered");
    const QString here = client().createContext(QStringLiteral("plain"), prefix);
    QVERIFY(!here.isEmpty());

    const QList<ApiClient::Event> events = readUntil(*stream, "context_added", QStringLiteral("id"), here);
    QVERIFY(!events.isEmpty());
    QCOMPARE(events.back().type, QByteArray("context_added"));
    for (const ApiClient::Event &event : events) {
        const QJsonObject json = event.json();
        const QString workspace = json.value(json.contains(QStringLiteral("workspace")) ? QStringLiteral("workspace")
                                                                                           : QStringLiteral("name"))
                                          .toString();
        QCOMPARE(workspace, QStringLiteral("filtered"));
    }
}

void tst_EventsRoute::unknownWorkspaceIs404()
{
    const ApiClient::Response response = client().get(QStringLiteral("/v1/events?workspace=no-such-workspace"));
    QCOMPARE(response.status, 404);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("not_found"));
}

void tst_EventsRoute::withoutTheTokenIs401()
{
    const ApiClient::Response response = client().request("GET", QStringLiteral("/v1/events"), {}, {}, false);
    QCOMPARE(response.status, 401);
    QVERIFY(!response.object().value(QStringLiteral("code")).toString().isEmpty());
}

// A client that opens the stream and stops reading while other clients make far more events than
// the stream may hold: when it reads again it finds a resync where the events it could not be
// given were, then the newest events, and it was sent much less than the events would have been.
void tst_EventsRoute::aReaderThatStopsGetsAResyncNotAnUnboundedQueue()
{
    Poco::Net::StreamSocket reader(Poco::Net::SocketAddress("127.0.0.1", m_server.port()));
    const std::string request = "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                                + m_server.token().toStdString() + "\r\nAccept: text/event-stream\r\n\r\n";
    reader.sendBytes(request.data(), int(request.size()));

    // Each run is announced with its code: 48 runs of 256 KiB are 12 MiB of events.
    const QString contextId = client().createContext(QStringLiteral("plain"));
    QVERIFY(!contextId.isEmpty());
    const QString code(256 * 1024, QLatin1Char('x'));
    constexpr int kRuns = 48;
    for (int i = 0; i < kRuns; ++i)
        QCOMPARE(client().runAndWait(contextId, code).value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    const qint64 announced = qint64(kRuns) * code.size();
    const QString sentinel = client().createContext(QStringLiteral("plain"));
    QVERIFY(!sentinel.isEmpty());

    QByteArray received;
    const QByteArray sentinelMark = "\"id\":\"" + sentinel.toUtf8() + '"';
    QDeadlineTimer deadline(60000);
    char buffer[65536];
    reader.setReceiveTimeout(Poco::Timespan(1, 0));
    while (!received.contains(sentinelMark) && !deadline.hasExpired()) {
        try {
            const int n = reader.receiveBytes(buffer, int(sizeof buffer));
            if (n <= 0)
                break;
            received.append(buffer, n);
        } catch (const Poco::TimeoutException &) {
        }
    }
    QVERIFY2(received.contains(sentinelMark), "the newest event never came");
    const qsizetype resync = received.indexOf("event: resync\n");
    QVERIFY2(resync >= 0, "no resync for the events that were dropped");
    QVERIFY(received.indexOf("\"reason\":\"lagged\"", resync) > resync);
    QVERIFY(received.indexOf(sentinelMark) > resync);
    // What waited for the client was bounded: most of the announcements were never sent.
    QVERIFY2(received.size() < announced / 2,
             qPrintable(QStringLiteral("%1 bytes sent of %2").arg(received.size()).arg(announced)));
}

QTEST_GUILESS_MAIN(tst_EventsRoute)
#include "tst_eventsroute.moc"
