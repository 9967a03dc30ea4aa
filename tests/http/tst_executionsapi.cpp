// SPDX-License-Identifier: Apache-2.0
// Executions over HTTP beyond a single run: the history of a context with paging, executions read
// back from storage after a restart, re-attaching to a stream with Last-Event-ID, timeouts, the
// output cap, and completion and variables. A real replhost-server, real python3 workers and a
// fixture language without completion, spoken to with Poco.

#include "apiclient.h"
#include "serverprocess.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QThread>

// QSKIP only leaves the function it is written in, so this is a macro.
#define REQUIRE_LANGUAGE(id)                                           \
    do {                                                               \
        const QString why = client().missingLanguage(QStringLiteral(id)); \
        if (!why.isEmpty())                                            \
            QSKIP(qPrintable(why));                                    \
    } while (false)

class tst_ExecutionsApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void historyIsNewestFirstWithACursor();
    void historyRejectsBadPaging_data();
    void historyRejectsBadPaging();
    void historyOfAnUnknownContextIs404();
    void runMarkedNeverToReplayIsSoInTheHistory();
    void executionsAreReadBackFromStorageAfterARestart();
    void backgroundOutputIsServedAfterASeq();
    void backgroundOutputRejectsBadPaging_data();
    void backgroundOutputRejectsBadPaging();
    void backgroundOutputOfAnUnknownContextIs404();
    void lastEventIdResumesARunningStream();
    void lastEventIdOnAFinishedExecution();
    void malformedLastEventIdIs400();
    void timeoutEndsTheRunWithStatusTimeout();
    void outputBeyondTheCapIsTruncated();
    void displayUpdatesAndClearsAreStreamed();
    void completionAnswersMatches();
    void variablesListNameTypeAndRepr();
    void variablesCarrySizeAndTable();
    void completionWaitsForAStartingInterpreter();
    void completionWhileBusyIs409();
    void languageWithoutCompletionIs501();
    void completionOfAnUnknownContextIs404();
    void completionRejectsABadCursor();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    static QStringList fixtureArguments()
    {
        return {QStringLiteral("--plugin-path"), QStringLiteral(REPLHOST_TEST_FIXTURE_PLUGIN_DIR)};
    }

    ServerProcess m_server;
};

void tst_ExecutionsApi::initTestCase()
{
    QVERIFY2(m_server.start(fixtureArguments()), qPrintable(m_server.error()));
}

void tst_ExecutionsApi::historyIsNewestFirstWithACursor()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QStringList ids;
    for (int i = 0; i < 5; ++i) {
        const QJsonObject run = client().runAndWait(id, QStringLiteral("x = %1").arg(i));
        QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        ids.prepend(run.value(QStringLiteral("id")).toString());  // newest first
    }

    QStringList seen;
    QString path = QStringLiteral("/v1/contexts/%1/executions?limit=2").arg(id);
    QList<int> pageSizes;
    for (int page = 0; page < 5; ++page) {
        const auto response = client().get(path);
        QCOMPARE(response.status, 200);
        const QJsonArray executions = response.object().value(QStringLiteral("executions")).toArray();
        pageSizes.append(int(executions.size()));
        for (const QJsonValue &value : executions) {
            const QJsonObject execution = value.toObject();
            seen.append(execution.value(QStringLiteral("id")).toString());
            QCOMPARE(execution.value(QStringLiteral("context_id")).toString(), id);
            QCOMPARE(execution.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
            QVERIFY(execution.value(QStringLiteral("code")).toString().startsWith(QStringLiteral("x = ")));
            QVERIFY(execution.value(QStringLiteral("seq")).toInteger() > 0);
            QVERIFY(execution.value(QStringLiteral("duration_ms")).toInteger() >= 0);
            QVERIFY(!execution.value(QStringLiteral("started_at")).toString().isEmpty());
            QCOMPARE(execution.value(QStringLiteral("truncated")).toBool(), false);
        }
        const QJsonValue next = response.object().value(QStringLiteral("next"));
        if (next.isNull())
            break;
        QVERIFY(next.isString());
        path = QStringLiteral("/v1/contexts/%1/executions?limit=2&before=%2").arg(id, next.toString());
    }
    QCOMPARE(pageSizes, (QList<int>{2, 2, 1}));
    QCOMPARE(seen, ids);
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/%1/executions").arg(id))
                     .object().value(QStringLiteral("executions")).toArray().size(),
             5);
}

void tst_ExecutionsApi::runMarkedNeverToReplayIsSoInTheHistory()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    QCOMPARE(client().runAndWait(id, QStringLiteral("x = 1")).value(QStringLiteral("status")),
             QStringLiteral("ok"));
    QCOMPARE(client().runAndWait(id, QStringLiteral("x = 2"), {{QStringLiteral("replay"), false}})
                     .value(QStringLiteral("status")),
             QStringLiteral("ok"));
    const QJsonArray history = client().get(QStringLiteral("/v1/contexts/%1/executions").arg(id))
                                       .object().value(QStringLiteral("executions")).toArray();
    QCOMPARE(history.size(), 2);
    QCOMPARE(history.at(0).toObject().value(QStringLiteral("replay")), QJsonValue(false));
    QCOMPARE(history.at(1).toObject().value(QStringLiteral("replay")), QJsonValue(true));
}

void tst_ExecutionsApi::historyRejectsBadPaging_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("parameter");
    QTest::newRow("limit 0") << "limit=0" << "limit";
    QTest::newRow("limit too big") << "limit=100000" << "limit";
    QTest::newRow("limit text") << "limit=many" << "limit";
    QTest::newRow("before 0") << "before=0" << "before";
    QTest::newRow("before text") << "before=yesterday" << "before";
}

void tst_ExecutionsApi::historyRejectsBadPaging()
{
    QFETCH(QString, query);
    QFETCH(QString, parameter);
    const QString id = client().createContext(QStringLiteral("plain"));
    const auto response = client().get(QStringLiteral("/v1/contexts/%1/executions?%2").arg(id, query));
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(QLatin1Char('\'') + parameter + QLatin1Char('\'')),
             response.body.constData());
}

void tst_ExecutionsApi::historyOfAnUnknownContextIs404()
{
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/nope/executions")).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/nope/contexts/nope/executions")).status, 404);
}

// What a run's thread prints after the run ended belongs to no execution: the context serves
// it as background output, numbered, after the run that left the thread behind.
void tst_ExecutionsApi::backgroundOutputIsServedAfterASeq()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(!id.isEmpty());
    const QString path = QStringLiteral("/v1/contexts/%1/background-output").arg(id);
    const QJsonObject empty = client().get(path).object();
    QCOMPARE(empty.value(QStringLiteral("entries")).toArray().size(), 0);
    QCOMPARE(empty.value(QStringLiteral("last_seq")).toInteger(), 0);

    const QJsonObject run = client().runAndWait(id, QStringLiteral(
            "import threading, time, sys\n"
            "def later():\n"
            "    for text in ('one', 'two'):\n"
            "        time.sleep(0.2)\n"
            "        sys.stdout.write(text + '\\n')\n"
            "    sys.stderr.write('three\\n')\n"
            "threading.Thread(target=later).start()"));
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(run.value(QStringLiteral("stdout")).toString(), QString());

    // An entry is what one read of the worker's output brought. Each line above is one write
    // (the driver's streams write through; print() would write its text and its end apart).
    QJsonArray entries;
    QTRY_VERIFY_WITH_TIMEOUT((entries = client().get(path).object().value(QStringLiteral("entries")).toArray()).size() == 3,
                             10000);
    QStringList seen;
    for (int i = 0; i < entries.size(); ++i) {
        const QJsonObject entry = entries.at(i).toObject();
        QCOMPARE(entry.value(QStringLiteral("seq")).toInteger(), i + 1);
        QCOMPARE(entry.value(QStringLiteral("after_execution_id")).toString(), run.value(QStringLiteral("id")).toString());
        QVERIFY(QDateTime::fromString(entry.value(QStringLiteral("at")).toString(), Qt::ISODateWithMs).isValid());
        const QJsonObject event = entry.value(QStringLiteral("event")).toObject();
        QCOMPARE(event.value(QStringLiteral("type")).toString(), QStringLiteral("stream"));
        QVERIFY(event.value(QStringLiteral("execution_id")).isNull());
        seen.append(event.value(QStringLiteral("name")).toString() + QLatin1Char(':')
                    + event.value(QStringLiteral("text")).toString());
    }
    QCOMPARE(seen, (QStringList{QStringLiteral("stdout:one\n"), QStringLiteral("stdout:two\n"),
                                QStringLiteral("stderr:three\n")}));

    const QJsonObject rest = client().get(path + QStringLiteral("?after=2")).object();
    QCOMPARE(rest.value(QStringLiteral("entries")).toArray().size(), 1);
    QCOMPARE(rest.value(QStringLiteral("last_seq")).toInteger(), 3);
    QCOMPARE(rest.value(QStringLiteral("dropped")).toInteger(), 0);
    QCOMPARE(client().get(path + QStringLiteral("?after=3")).object().value(QStringLiteral("entries")).toArray().size(), 0);
    QCOMPARE(client().get(path + QStringLiteral("?limit=1")).object().value(QStringLiteral("entries")).toArray().size(), 1);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/default/contexts/%1/background-output").arg(id))
                     .object().value(QStringLiteral("last_seq")).toInteger(),
             3);
    // None of it is the run's.
    const QJsonObject again = client().get(QStringLiteral("/v1/executions/%1").arg(run.value(QStringLiteral("id")).toString())).object();
    QCOMPARE(again.value(QStringLiteral("stdout")).toString(), QString());
}

void tst_ExecutionsApi::backgroundOutputRejectsBadPaging_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("parameter");
    QTest::newRow("limit 0") << "limit=0" << "limit";
    QTest::newRow("limit too big") << "limit=5000" << "limit";
    QTest::newRow("after negative") << "after=-1" << "after";
    QTest::newRow("after text") << "after=last" << "after";
}

void tst_ExecutionsApi::backgroundOutputRejectsBadPaging()
{
    QFETCH(QString, query);
    QFETCH(QString, parameter);
    const QString id = client().createContext(QStringLiteral("plain"));
    const auto response = client().get(QStringLiteral("/v1/contexts/%1/background-output?%2").arg(id, query));
    QCOMPARE(response.status, 400);
    QCOMPARE(response.object().value(QStringLiteral("code")).toString(), QStringLiteral("bad_request"));
    QVERIFY2(response.object().value(QStringLiteral("message")).toString().contains(QLatin1Char('\'') + parameter + QLatin1Char('\'')),
             response.body.constData());
}

void tst_ExecutionsApi::backgroundOutputOfAnUnknownContextIs404()
{
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/nope/background-output")).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/workspaces/nope/contexts/nope/background-output")).status, 404);
}

void tst_ExecutionsApi::executionsAreReadBackFromStorageAfterARestart()
{
    ServerProcess server;
    QVERIFY2(server.start(fixtureArguments()), qPrintable(server.error()));
    ApiClient api(server.port(), server.token());
    const QString id = api.createContext(QStringLiteral("plain"));
    const QJsonObject run = api.runAndWait(id, QStringLiteral("kept for later"));
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    const QString executionId = run.value(QStringLiteral("id")).toString();
    const QString dataDir = server.dataDir();
    QCOMPARE(server.stop(), 0);

    // A new process knows nothing in memory: everything below comes from the database.
    ServerProcess again;
    QVERIFY2(again.start(fixtureArguments(), {}, dataDir), qPrintable(again.error()));
    ApiClient after(again.port(), again.token());
    const auto fetched = after.get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(fetched.status, 200);
    const QJsonObject execution = fetched.object();
    QCOMPARE(execution.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(execution.value(QStringLiteral("stdout")).toString(), QStringLiteral("kept for later"));
    QCOMPARE(execution.value(QStringLiteral("code")).toString(), QStringLiteral("kept for later"));
    QCOMPARE(execution.value(QStringLiteral("context_id")).toString(), id);
    QCOMPARE(execution.value(QStringLiteral("language")).toString(), QStringLiteral("plain"));
    QCOMPARE(execution.value(QStringLiteral("events")).toArray(), run.value(QStringLiteral("events")).toArray());

    const std::unique_ptr<ApiClient::Stream> stream =
            after.openStream("GET", QStringLiteral("/v1/executions/%1/events").arg(executionId));
    QCOMPARE(stream->status(), 200);
    QList<ApiClient::Event> events;
    while (std::optional<ApiClient::Event> event = stream->next(10000))
        events.append(*event);
    QCOMPARE(events.size(), run.value(QStringLiteral("events")).toArray().size() + 1);
    QCOMPARE(events.back().type, QByteArray("done"));

    // The context sleeps after the restart; asking it something wakes its interpreter (this
    // language cannot complete, which says the question reached it).
    QCOMPARE(after.get(QStringLiteral("/v1/contexts/") + id).object().value(QStringLiteral("state")).toString(),
             QStringLiteral("dormant"));
    QCOMPARE(after.get(QStringLiteral("/v1/contexts/%1/variables").arg(id)).status, 501);

    // The workspace is checked for stored executions too.
    QCOMPARE(after.post(QStringLiteral("/v1/workspaces"), {{QStringLiteral("name"), QStringLiteral("other")}}).status, 201);
    QCOMPARE(after.get(QStringLiteral("/v1/workspaces/other/executions/") + executionId).status, 404);
    QCOMPARE(after.post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {}).status, 409);
}

void tst_ExecutionsApi::lastEventIdResumesARunningStream()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    const QString code = QStringLiteral("import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.15)\n");
    QString executionId;
    QString stdoutText;
    int lastId = -1;
    {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), code}});
        const std::optional<ApiClient::Event> head = stream->next(10000);
        QVERIFY(head && head->type == "execution");
        executionId = head->json().value(QStringLiteral("id")).toString();
        // Read until some output arrived, then leave in the middle of the run.
        while (std::optional<ApiClient::Event> event = stream->next(10000)) {
            lastId = event->id.toInt();
            if (event->type == "stream")
                stdoutText += event->json().value(QStringLiteral("text")).toString();
            if (stdoutText.contains(QStringLiteral("1\n")))
                break;
        }
        stream->abort();
    }
    QVERIFY(lastId >= 1);
    const auto during = client().get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(during.object().value(QStringLiteral("status")).toString(), QStringLiteral("running"));

    const std::unique_ptr<ApiClient::Stream> resumed = client().openStream(
            "GET", QStringLiteral("/v1/executions/%1/events").arg(executionId), {},
            {{"Last-Event-ID", QByteArray::number(lastId)}});
    QCOMPARE(resumed->status(), 200);
    const std::optional<ApiClient::Event> head = resumed->next(10000);
    QVERIFY(head && head->type == "execution");
    int expected = lastId + 1;
    QByteArray lastType;
    while (std::optional<ApiClient::Event> event = resumed->next(20000)) {
        QCOMPARE(event->id.toInt(), expected);  // nothing missed, nothing twice
        ++expected;
        lastType = event->type;
        if (event->type == "stream")
            stdoutText += event->json().value(QStringLiteral("text")).toString();
    }
    QCOMPARE(lastType, QByteArray("done"));
    QCOMPARE(stdoutText, QStringLiteral("0\n1\n2\n3\n4\n5\n6\n7\n"));
}

void tst_ExecutionsApi::lastEventIdOnAFinishedExecution()
{
    const QString id = client().createContext(QStringLiteral("plain"));
    const QJsonObject run = client().runAndWait(id, QStringLiteral("done already"));
    const QString executionId = run.value(QStringLiteral("id")).toString();
    const int count = int(run.value(QStringLiteral("events")).toArray().size());

    // Resuming after the last event: the head, then the end.
    {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "GET", QStringLiteral("/v1/executions/%1/events").arg(executionId), {},
                {{"Last-Event-ID", QByteArray::number(count - 1)}});
        QCOMPARE(stream->status(), 200);
        QList<ApiClient::Event> events;
        while (std::optional<ApiClient::Event> event = stream->next(10000))
            events.append(*event);
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.front().type, QByteArray("execution"));
    }
    // Resuming after the first: the rest, from id 1. The query parameter works like the header.
    {
        const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
                "GET", QStringLiteral("/v1/executions/%1/events?last_event_id=0").arg(executionId));
        QList<ApiClient::Event> events;
        while (std::optional<ApiClient::Event> event = stream->next(10000))
            events.append(*event);
        QCOMPARE(events.size(), count);  // the head and events 1..count-1
        QCOMPARE(events.at(1).id, QByteArray("1"));
        QCOMPARE(events.back().type, QByteArray("done"));
    }
}

void tst_ExecutionsApi::malformedLastEventIdIs400()
{
    const QString id = client().createContext(QStringLiteral("plain"));
    const QString executionId = client().runAndWait(id, QStringLiteral("x")).value(QStringLiteral("id")).toString();
    for (const QByteArray &bad : {QByteArray("abc"), QByteArray("-5"), QByteArray("1.5")}) {
        const auto response = client().request("GET", QStringLiteral("/v1/executions/%1/events").arg(executionId), {},
                                               {{"Last-Event-ID", bad}});
        QCOMPARE(response.status, 400);
        QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("Last-Event-ID")));
    }
}

void tst_ExecutionsApi::timeoutEndsTheRunWithStatusTimeout()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    QCOMPARE(client().runAndWait(id, QStringLiteral("before = 'kept'")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    QElapsedTimer timer;
    timer.start();
    const QJsonObject run = client().runAndWait(id, QStringLiteral("import time\ntime.sleep(30)"),
                                                {{QStringLiteral("timeout_ms"), 500}});
    QVERIFY2(timer.elapsed() < 15000, qPrintable(QString::number(timer.elapsed())));
    QVERIFY(timer.elapsed() >= 450);
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("timeout"));
    QCOMPARE(run.value(QStringLiteral("error")).toObject().value(QStringLiteral("ename")).toString(), QStringLiteral("Timeout"));
    QVERIFY(run.value(QStringLiteral("error")).toObject().value(QStringLiteral("evalue")).toString().contains(QStringLiteral("500 ms")));
    // The interrupt ladder stopped the run, not the interpreter.
    QCOMPARE(ApiClient::resultText(client().runAndWait(id, QStringLiteral("before"))), QStringLiteral("'kept'"));

    // Recorded as such.
    const QJsonArray history = client().get(QStringLiteral("/v1/contexts/%1/executions?limit=2").arg(id))
                                       .object().value(QStringLiteral("executions")).toArray();
    QCOMPARE(history.at(1).toObject().value(QStringLiteral("status")).toString(), QStringLiteral("timeout"));

    // A run that ends in time is not affected.
    const QJsonObject quick = client().runAndWait(id, QStringLiteral("1 + 1"), {{QStringLiteral("timeout_ms"), 10000}});
    QCOMPARE(quick.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
}

void tst_ExecutionsApi::outputBeyondTheCapIsTruncated()
{
    ServerProcess capped;
    QVERIFY2(capped.start(fixtureArguments() + QStringList{QStringLiteral("--max-output"), QStringLiteral("1K")}),
             qPrintable(capped.error()));
    ApiClient api(capped.port(), capped.token());
    const QString id = api.createContext(QStringLiteral("plain"));
    const QString code = QString(3000, QLatin1Char('x'));
    const QList<ApiClient::Event> events =
            api.stream(QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), code}});
    QVERIFY(!events.isEmpty());
    QString out;
    QJsonObject truncated;
    for (const ApiClient::Event &event : events) {
        if (event.type == "stream")
            out += event.json().value(QStringLiteral("text")).toString();
        if (event.type == "truncated")
            truncated = event.json();
    }
    QCOMPARE(out.size(), 1024);  // cut at the cap itself
    QCOMPARE(truncated.value(QStringLiteral("limit_bytes")).toInteger(), 1024);
    QVERIFY(!truncated.value(QStringLiteral("message")).toString().isEmpty());
    QCOMPARE(events.back().type, QByteArray("done"));
    QCOMPARE(events.back().json().value(QStringLiteral("truncated")).toBool(), true);

    const QJsonArray history = api.get(QStringLiteral("/v1/contexts/%1/executions").arg(id))
                                       .object().value(QStringLiteral("executions")).toArray();
    QCOMPARE(history.size(), 1);
    QCOMPARE(history.at(0).toObject().value(QStringLiteral("truncated")).toBool(), true);

    // Under the cap nothing is cut.
    const QJsonObject small = api.runAndWait(id, QStringLiteral("short"));
    QCOMPARE(small.value(QStringLiteral("stdout")).toString(), QStringLiteral("short"));

    // Bad values are refused at start-up.
    QCOMPARE(ServerProcess::runOnce({QStringLiteral("--max-output"), QStringLiteral("lots")}).exitCode, 2);
}

// A display with an id, its update and a clear reach a client of the event stream as events of
// their own, and the execution document shows what the run ended with.
void tst_ExecutionsApi::displayUpdatesAndClearsAreStreamed()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    const QString code = QStringLiteral(
            "h = display({'text/plain': '0%'}, raw=True, display_id='bar')\n"
            "h.update({'text/plain': '100%'}, raw=True)\n"
            "display({'text/plain': 'next'}, raw=True, clear=True)\n");
    QStringList seen;
    for (const ApiClient::Event &event :
         client().stream(QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), code}})) {
        const QJsonObject data = QJsonDocument::fromJson(event.data).object();
        if (event.type == "display")
            seen << QStringLiteral("display %1 %2%3").arg(
                    data.value(QStringLiteral("data")).toObject().value(QStringLiteral("text/plain")).toString(),
                    data.value(QStringLiteral("display_id")).toString(),
                    data.value(QStringLiteral("update")).toBool() ? QStringLiteral(" update") : QString());
        else if (event.type == "clear_output")
            seen << QStringLiteral("clear_output wait=%1").arg(data.value(QStringLiteral("wait")).toBool() ? "true" : "false");
    }
    QCOMPARE(seen, QStringList({QStringLiteral("display 0% bar"), QStringLiteral("display 100% bar update"),
                                QStringLiteral("clear_output wait=true"), QStringLiteral("display next ")}));
    const QJsonObject run = client().runAndWait(id, code);
    QCOMPARE(run.value(QStringLiteral("displays")).toArray(),
             QJsonArray({QJsonObject{{QStringLiteral("text/plain"), QStringLiteral("next")}}}));
}

void tst_ExecutionsApi::completionAnswersMatches()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    QVERIFY(client().waitForContextState(id, QStringLiteral("idle")));
    client().runAndWait(id, QStringLiteral("import os\nlong_variable_name = 1"));
    const QString code = QStringLiteral("long_var");
    const auto response = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                        {{QStringLiteral("code"), code}, {QStringLiteral("cursor"), int(code.size())}});
    QCOMPARE(response.status, 200);
    const QJsonObject reply = response.object();
    QVERIFY2(reply.value(QStringLiteral("matches")).toArray().contains(QStringLiteral("long_variable_name")),
             response.body.constData());
    QCOMPARE(reply.value(QStringLiteral("cursor_end")).toInt(), int(code.size()));

    // Without a cursor, the end of the code.
    const auto attribute = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                         {{QStringLiteral("code"), QStringLiteral("os.pat")}});
    QCOMPARE(attribute.status, 200);
    bool found = false;
    for (const QJsonValue &match : attribute.object().value(QStringLiteral("matches")).toArray())
        found = found || match.toString().endsWith(QStringLiteral("path"));
    QVERIFY2(found, attribute.body.constData());
}

void tst_ExecutionsApi::variablesListNameTypeAndRepr()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    client().runAndWait(id, QStringLiteral("answer = 42\ngreeting = 'hi'"));
    const auto response = client().get(QStringLiteral("/v1/contexts/%1/variables").arg(id));
    QCOMPARE(response.status, 200);
    QHash<QString, QJsonObject> byName;
    for (const QJsonValue &value : response.object().value(QStringLiteral("variables")).toArray())
        byName.insert(value.toObject().value(QStringLiteral("name")).toString(), value.toObject());
    QVERIFY2(byName.contains(QStringLiteral("answer")), response.body.constData());
    QCOMPARE(byName.value(QStringLiteral("answer")).value(QStringLiteral("type")).toString(), QStringLiteral("int"));
    QCOMPARE(byName.value(QStringLiteral("answer")).value(QStringLiteral("repr")).toString(), QStringLiteral("42"));
    QCOMPARE(byName.value(QStringLiteral("greeting")).value(QStringLiteral("repr")).toString(), QStringLiteral("'hi'"));
}

// A container's length, and a list (of values, of dicts) as a data+json table: what the
// workbench's Variables panel shows and opens.
void tst_ExecutionsApi::variablesCarrySizeAndTable()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    client().runAndWait(id, QStringLiteral("items = [3, 1, 2]\nrows = [{'a': 1, 'b': 'x'}, {'a': 2}]\nanswer = 42"));
    const auto response = client().get(QStringLiteral("/v1/contexts/%1/variables").arg(id));
    QCOMPARE(response.status, 200);
    QHash<QString, QJsonObject> byName;
    for (const QJsonValue &value : response.object().value(QStringLiteral("variables")).toArray())
        byName.insert(value.toObject().value(QStringLiteral("name")).toString(), value.toObject());
    const QJsonObject items = byName.value(QStringLiteral("items"));
    QCOMPARE(items.value(QStringLiteral("size")).toString(), QStringLiteral("3"));
    const QJsonObject table = items.value(QStringLiteral("table")).toObject();
    QCOMPARE(table.value(QStringLiteral("columns")).toArray(),
             QJsonArray({QJsonObject{{QStringLiteral("name"), QStringLiteral("value")},
                                     {QStringLiteral("dtype"), QStringLiteral("object")},
                                     {QStringLiteral("values"), QJsonArray({3, 1, 2})}}}));
    QCOMPARE(table.value(QStringLiteral("total_rows")).toInt(), 3);
    QCOMPARE(table.value(QStringLiteral("truncated")).toBool(), false);
    const QJsonArray columns = byName.value(QStringLiteral("rows")).value(QStringLiteral("table")).toObject()
                                       .value(QStringLiteral("columns")).toArray();
    QCOMPARE(columns.size(), 2);
    QCOMPARE(columns.at(1).toObject().value(QStringLiteral("values")).toArray(),
             QJsonArray({QStringLiteral("x"), QJsonValue::Null}));
    // A scalar has neither.
    QVERIFY(!byName.value(QStringLiteral("answer")).contains(QStringLiteral("size")));
    QVERIFY(!byName.value(QStringLiteral("answer")).contains(QStringLiteral("table")));
}

void tst_ExecutionsApi::completionWaitsForAStartingInterpreter()
{
    REQUIRE_LANGUAGE("python");
    // Asked at once, while the worker is still starting: answered when it is ready.
    const QString id = client().createContext(QStringLiteral("python"));
    const auto response = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                        {{QStringLiteral("code"), QStringLiteral("pri")}});
    QCOMPARE(response.status, 200);
    QVERIFY2(response.object().value(QStringLiteral("matches")).toArray().contains(QStringLiteral("print")),
             response.body.constData());
    const QString other = client().createContext(QStringLiteral("python"));
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/%1/variables").arg(other)).status, 200);
}

void tst_ExecutionsApi::completionWhileBusyIs409()
{
    REQUIRE_LANGUAGE("python");
    const QString id = client().createContext(QStringLiteral("python"));
    const std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), QStringLiteral("import time\ntime.sleep(30)")}});
    QVERIFY(stream->next(10000));  // execution
    QVERIFY(stream->next(10000));  // started
    const auto completion = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                          {{QStringLiteral("code"), QStringLiteral("ti")}});
    QCOMPARE(completion.status, 409);
    QCOMPARE(completion.object().value(QStringLiteral("code")).toString(), QStringLiteral("busy"));
    const auto variables = client().get(QStringLiteral("/v1/contexts/%1/variables").arg(id));
    QCOMPARE(variables.status, 409);
    QCOMPARE(client().post(QStringLiteral("/v1/contexts/%1/interrupt").arg(id), {}).status, 202);
}

void tst_ExecutionsApi::languageWithoutCompletionIs501()
{
    const QString id = client().createContext(QStringLiteral("plain"));
    QVERIFY(client().waitForContextState(id, QStringLiteral("idle")));
    const auto completion = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                          {{QStringLiteral("code"), QStringLiteral("pr")}});
    QCOMPARE(completion.status, 501);
    QCOMPARE(completion.object().value(QStringLiteral("code")).toString(), QStringLiteral("unsupported"));
    QVERIFY2(completion.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("completion")),
             completion.body.constData());
    const auto variables = client().get(QStringLiteral("/v1/contexts/%1/variables").arg(id));
    QCOMPARE(variables.status, 501);
    QVERIFY2(variables.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("variables")),
             variables.body.constData());
}

void tst_ExecutionsApi::completionOfAnUnknownContextIs404()
{
    QCOMPARE(client().post(QStringLiteral("/v1/contexts/nope/complete"), {{QStringLiteral("code"), QStringLiteral("x")}}).status, 404);
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/nope/variables")).status, 404);
}

void tst_ExecutionsApi::completionRejectsABadCursor()
{
    const QString id = client().createContext(QStringLiteral("plain"));
    for (const QJsonValue &cursor : {QJsonValue(-1), QJsonValue(99), QJsonValue(QStringLiteral("end"))}) {
        const auto response = client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id),
                                            {{QStringLiteral("code"), QStringLiteral("abc")}, {QStringLiteral("cursor"), cursor}});
        QCOMPARE(response.status, 400);
        QVERIFY(response.object().value(QStringLiteral("message")).toString().contains(QStringLiteral("'cursor'")));
    }
    QCOMPARE(client().post(QStringLiteral("/v1/contexts/%1/complete").arg(id), {}).status, 400);
}

QTEST_GUILESS_MAIN(tst_ExecutionsApi)
#include "tst_executionsapi.moc"
