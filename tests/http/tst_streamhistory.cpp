// SPDX-License-Identifier: Apache-2.0
// Runs whose output goes past what an execution keeps in memory: a client that re-attaches with
// Last-Event-ID after events that have left memory, the execution's document, and a client that
// stops reading while the run writes far more than the socket holds. Every event must arrive
// once, in order, whether it comes from memory or back from the history. A real
// replhost-server, real python3 workers, spoken to with Poco.

#include "apiclient.h"
#include "serverprocess.h"

#include <QJsonArray>
#include <QTest>
#include <QThread>

namespace {

// Lines of 1,010 bytes: an eight-digit number, a space, 1,000 'x' and a newline.
QString linesCode(int lines)
{
    return QStringLiteral("import sys\nfor i in range(%1):\n"
                          "    sys.stdout.write('%08d ' % i + 'x' * 1000 + '\\n')\n").arg(lines);
}

QString expectedLines(int lines)
{
    QString text;
    text.reserve(qsizetype(lines) * 1010);
    const QString xs(1000, QLatin1Char('x'));
    for (int i = 0; i < lines; ++i)
        text += QStringLiteral("%1 ").arg(i, 8, 10, QLatin1Char('0')) + xs + QLatin1Char('\n');
    return text;
}

// What the rest of a stream carried after its head: the events from id `firstId` on, each once
// and in order, until the end.
struct StreamTail {
    bool inOrder = true;   // every id was the one expected
    int nextId = 0;        // one past the last id read
    QByteArray lastType;
    QString stdoutText;
};

StreamTail readTail(ApiClient::Stream &stream, int firstId)
{
    StreamTail tail;
    tail.nextId = firstId;
    while (std::optional<ApiClient::Event> event = stream.next(20000)) {
        tail.inOrder = tail.inOrder && event->id.toInt() == tail.nextId;
        ++tail.nextId;
        tail.lastType = event->type;
        if (event->type == "stream")
            tail.stdoutText += event->json().value(QStringLiteral("text")).toString();
    }
    return tail;
}

} // namespace

class tst_StreamHistory : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void lastEventIdResumesFromEventsThatLeftMemory();
    void slowClientGetsEveryEventOnceInOrder();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    // Polls the context's history until its newest run has finished; its status, or empty.
    QString waitForLastRun(const QString &contextId) const;

    ServerProcess m_server;
};

void tst_StreamHistory::initTestCase()
{
    // Room for the largest run here: nothing may be truncated.
    QVERIFY2(m_server.start({QStringLiteral("--max-output"), QStringLiteral("64M")}),
             qPrintable(m_server.error()));
    const QString why = client().missingLanguage(QStringLiteral("python"));
    if (!why.isEmpty())
        QSKIP(qPrintable(why));
}

QString tst_StreamHistory::waitForLastRun(const QString &contextId) const
{
    QString status;
    // On a time-out the status is the last one seen, which the caller's check reports.
    (void)QTest::qWaitFor([&] {
        const QJsonArray runs = client().get(QStringLiteral("/v1/contexts/%1/executions?limit=1").arg(contextId))
                                        .object().value(QStringLiteral("executions")).toArray();
        status = runs.isEmpty() ? QString() : runs.first().toObject().value(QStringLiteral("status")).toString();
        return !status.isEmpty() && status != QLatin1String("running") && status != QLatin1String("queued");
    }, 120000);
    return status;
}

void tst_StreamHistory::lastEventIdResumesFromEventsThatLeftMemory()
{
    // 6 MiB of output: well past the 2 MiB window of events an execution keeps in memory.
    constexpr int kLines = 6000;
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QString executionId;
    QString text;
    int lastId = -1;
    {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), linesCode(kLines)}});
        const std::optional<ApiClient::Event> head = stream->next(10000);
        QVERIFY(head && head->type == "execution");
        executionId = head->json().value(QStringLiteral("id")).toString();
        // Leave after the first output, long before the run ends.
        while (std::optional<ApiClient::Event> event = stream->next(10000)) {
            lastId = event->id.toInt();
            if (event->type == "stream") {
                text += event->json().value(QStringLiteral("text")).toString();
                break;
            }
        }
        stream->abort();
    }
    QVERIFY(lastId >= 0);
    QCOMPARE(waitForLastRun(id), QStringLiteral("ok"));

    const std::unique_ptr<ApiClient::Stream> resumed = client().openStream(
            "GET", QStringLiteral("/v1/executions/%1/events").arg(executionId), {},
            {{"Last-Event-ID", QByteArray::number(lastId)}});
    QCOMPARE(resumed->status(), 200);
    const std::optional<ApiClient::Event> head = resumed->next(10000);
    QVERIFY(head && head->type == "execution");
    const StreamTail tail = readTail(*resumed, lastId + 1);
    QVERIFY2(tail.inOrder, "an event was missed or sent twice");
    QCOMPARE(tail.lastType, QByteArray("done"));
    text += tail.stdoutText;
    QCOMPARE(text.size(), expectedLines(kLines).size());
    QVERIFY(text == expectedLines(kLines));

    // The document holds every event and all of the output too.
    const ApiClient::Response document = client().get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(document.status, 200);
    const QJsonObject run = document.object();
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QVERIFY(run.value(QStringLiteral("stdout")).toString() == expectedLines(kLines));
    const QJsonArray events = run.value(QStringLiteral("events")).toArray();
    QCOMPARE(int(events.size()), tail.nextId);
    QCOMPARE(events.first().toObject().value(QStringLiteral("type")).toString(), QStringLiteral("started"));
    QCOMPARE(events.last().toObject().value(QStringLiteral("type")).toString(), QStringLiteral("done"));
}

void tst_StreamHistory::slowClientGetsEveryEventOnceInOrder()
{
    // 24 MiB: more than the server lets a stream's socket hold, the loopback buffers and the
    // window together, so the stream must wait for the client and then catch up from history.
    constexpr int kLines = 24 * 1024;
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), linesCode(kLines)}});
    QCOMPARE(stream->status(), 200);
    // Not a byte read until the run is over.
    QCOMPARE(waitForLastRun(id), QStringLiteral("ok"));

    const std::optional<ApiClient::Event> head = stream->next(10000);
    QVERIFY(head && head->type == "execution");
    const StreamTail tail = readTail(*stream, 0);
    QVERIFY2(tail.inOrder, "an event was missed or sent twice");
    QCOMPARE(tail.lastType, QByteArray("done"));
    QCOMPARE(tail.stdoutText.size(), expectedLines(kLines).size());
    QVERIFY(tail.stdoutText == expectedLines(kLines));
}

QTEST_GUILESS_MAIN(tst_StreamHistory)
#include "tst_streamhistory.moc"
