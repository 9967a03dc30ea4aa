// SPDX-License-Identifier: Apache-2.0
// E2bEventFormat on its own: which E2B lines each replhost event becomes, including what a
// running server only shows by chance (output read in pieces, a run ended without an error).

#include "http/e2beventformat.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using replhost::sdk::Event;
using replhost::http::E2bEventFormat;

Q_DECLARE_METATYPE(QList<Event>)
Q_DECLARE_METATYPE(QList<QJsonObject>)

namespace {

QJsonObject out(const char *stream, const char *text)
{
    return {{QStringLiteral("type"), QString::fromLatin1(stream)}, {QStringLiteral("text"), QString::fromUtf8(text)}};
}

QJsonObject end()
{
    return {{QStringLiteral("type"), QStringLiteral("end_of_execution")}};
}

QJsonObject error(const char *name, const char *value, const char *traceback)
{
    return {{QStringLiteral("type"), QStringLiteral("error")}, {QStringLiteral("name"), QString::fromLatin1(name)},
            {QStringLiteral("value"), QString::fromLatin1(value)},
            {QStringLiteral("traceback"), QString::fromLatin1(traceback)}};
}

QJsonObject mainResult(const char *text)
{
    return {{QStringLiteral("type"), QStringLiteral("result")}, {QStringLiteral("text"), QString::fromUtf8(text)},
            {QStringLiteral("extra"), QJsonObject()}, {QStringLiteral("is_main_result"), true}};
}

Event stream(const char *name, const char *text)
{
    return Event::stream(QStringLiteral("e"), QString::fromLatin1(name), QString::fromUtf8(text));
}

Event result(const char *text)
{
    return Event::result(QStringLiteral("e"), 1, {{QStringLiteral("text/plain"), QString::fromUtf8(text)}});
}

Event done(const char *status)
{
    return Event::done(QStringLiteral("e"), QString::fromLatin1(status));
}

} // namespace

class tst_E2bEventFormat : public QObject {
    Q_OBJECT

private slots:
    void linesForEvents_data();
    void linesForEvents();
    void outputIsStampedInUtc();
    void heldBackOutputIsFlushedOnRequest();
};

void tst_E2bEventFormat::linesForEvents_data()
{
    QTest::addColumn<QList<Event>>("events");
    QTest::addColumn<QList<QJsonObject>>("lines");  // without the timestamps

    QTest::newRow("started") << QList<Event>{Event::started(QStringLiteral("e"), 3)}
                             << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("number_of_executions")},
                                                    {QStringLiteral("execution_count"), 3}}};
    QTest::newRow("a line read in pieces is sent whole")
            << QList<Event>{stream("stdout", "21"), stream("stdout", "\n")}
            << QList<QJsonObject>{out("stdout", "21\n")};
    QTest::newRow("complete lines go at once, the rest with the next event")
            << QList<Event>{stream("stdout", "a\nb\nc"), done("ok")}
            << QList<QJsonObject>{out("stdout", "a\nb\n"), out("stdout", "c"), end()};
    QTest::newRow("the other stream's output sends held text first")
            << QList<Event>{stream("stdout", "ab"), stream("stderr", "x\n")}
            << QList<QJsonObject>{out("stdout", "ab"), out("stderr", "x\n")};
    QTest::newRow("a result sends held text first")
            << QList<Event>{stream("stdout", "prompt: "), result("1")}
            << QList<QJsonObject>{out("stdout", "prompt: "), mainResult("1")};
    QTest::newRow("display is not the main result")
            << QList<Event>{Event::display(QStringLiteral("e"), {{QStringLiteral("text/html"), QStringLiteral("<i>x</i>")}})}
            << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("result")},
                                   {QStringLiteral("html"), QStringLiteral("<i>x</i>")},
                                   {QStringLiteral("extra"), QJsonObject()},
                                   {QStringLiteral("is_main_result"), false}}};
    QTest::newRow("single quotes are stripped once") << QList<Event>{result("'it''s'")}
                                                     << QList<QJsonObject>{mainResult("it''s")};
    QTest::newRow("a lone quote stays") << QList<Event>{result("'")} << QList<QJsonObject>{mainResult("'")};
    QTest::newRow("double quotes stay") << QList<Event>{result("\"x\"")} << QList<QJsonObject>{mainResult("\"x\"")};
    QTest::newRow("unknown MIME types go into extra")
            << QList<Event>{Event::display(QStringLiteral("e"), {{QStringLiteral("text/plain"), QStringLiteral("p")},
                                                                  {QStringLiteral("application/x-thing"), 5}})}
            << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("result")},
                                   {QStringLiteral("text"), QStringLiteral("p")},
                                   {QStringLiteral("extra"), QJsonObject{{QStringLiteral("application/x-thing"), 5}}},
                                   {QStringLiteral("is_main_result"), false}}};
    const QJsonObject chart{{QStringLiteral("type"), QStringLiteral("bar")},
                            {QStringLiteral("elements"), QJsonArray()}};
    QTest::newRow("a figure's chart is E2B's chart, beside its png")
            << QList<Event>{Event::display(QStringLiteral("e"), {{QStringLiteral("image/png"), QStringLiteral("iVBO")},
                                                                  {QStringLiteral("application/vnd.replhost.chart+json"), chart}})}
            << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("result")},
                                   {QStringLiteral("png"), QStringLiteral("iVBO")},
                                   {QStringLiteral("chart"), chart},
                                   {QStringLiteral("extra"), QJsonObject()},
                                   {QStringLiteral("is_main_result"), false}}};
    const QJsonObject table = QJsonDocument::fromJson(R"({"columns": [
            {"name": "b", "dtype": "float64", "values": [1.5, null]},
            {"name": "a", "dtype": "object", "values": ["x", "y"]}],
            "index": {"name": null, "values": [0, 1]}, "rows": 2, "total_rows": 2, "truncated": false})").object();
    QTest::newRow("a table is E2B's data: each column's values by its name")
            << QList<Event>{Event::result(QStringLiteral("e"), 1, {{QStringLiteral("text/plain"), QStringLiteral("df")},
                                                                    {QStringLiteral("application/vnd.replhost.data+json"), table}})}
            << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("result")},
                                   {QStringLiteral("text"), QStringLiteral("df")},
                                   {QStringLiteral("data"), QJsonDocument::fromJson(
                                            R"({"b": [1.5, null], "a": ["x", "y"]})").object()},
                                   {QStringLiteral("extra"), QJsonObject()},
                                   {QStringLiteral("is_main_result"), true}}};
    QTest::newRow("updates of a display and clears are not sent")
            << QList<Event>{Event::display(QStringLiteral("e"), {{QStringLiteral("text/plain"), QStringLiteral("0%")}}, {},
                                           QStringLiteral("bar")),
                            Event::display(QStringLiteral("e"), {{QStringLiteral("text/plain"), QStringLiteral("9%")}}, {},
                                           QStringLiteral("bar"), true),
                            Event::clearOutput(QStringLiteral("e"), true)}
            << QList<QJsonObject>{{{QStringLiteral("type"), QStringLiteral("result")},
                                   {QStringLiteral("text"), QStringLiteral("0%")},
                                   {QStringLiteral("extra"), QJsonObject()},
                                   {QStringLiteral("is_main_result"), false}}};
    QTest::newRow("the traceback is one string")
            << QList<Event>{Event::error(QStringLiteral("e"), QStringLiteral("NameError"), QStringLiteral("x"),
                                         {QStringLiteral("Traceback:"), QStringLiteral("  line 1")})}
            << QList<QJsonObject>{error("NameError", "x", "Traceback:\n  line 1")};
    QTest::newRow("only the first error is sent")
            << QList<Event>{Event::error(QStringLiteral("e"), QStringLiteral("A"), QStringLiteral("1")),
                            Event::error(QStringLiteral("e"), QStringLiteral("B"), QStringLiteral("2")),
                            done("aborted")}
            << QList<QJsonObject>{error("A", "1", ""), end()};
    QTest::newRow("an interrupted run without an error gets one")
            << QList<Event>{done("interrupted")}
            << QList<QJsonObject>{error("ExecutionInterrupted", "the execution was interrupted", ""), end()};
    QTest::newRow("a failed run's own error is enough")
            << QList<Event>{Event::error(QStringLiteral("e"), QStringLiteral("E"), QStringLiteral("v")), done("error")}
            << QList<QJsonObject>{error("E", "v", ""), end()};
    QTest::newRow("a state reset is told on stderr")
            << QList<Event>{Event::other(QStringLiteral("e"), QStringLiteral("state_reset"),
                                         {{QStringLiteral("reason"), QStringLiteral("started afresh")}})}
            << QList<QJsonObject>{out("stderr", "[replhost] started afresh\n")};
    QTest::newRow("truncation is told on stderr")
            << QList<Event>{Event::other(QStringLiteral("e"), QStringLiteral("truncated"),
                                         {{QStringLiteral("message"), QStringLiteral("output dropped")}})}
            << QList<QJsonObject>{out("stderr", "[replhost] output dropped\n")};
    QTest::newRow("an incomplete restore is told on stderr")
            << QList<Event>{Event::other(QStringLiteral("e"), QStringLiteral("restored"),
                                         {{QStringLiteral("replayed"), 1}, {QStringLiteral("total"), 3},
                                          {QStringLiteral("complete"), false},
                                          {QStringLiteral("failed_execution"),
                                           QJsonObject{{QStringLiteral("ename"), QStringLiteral("FileNotFoundError")},
                                                       {QStringLiteral("evalue"), QStringLiteral("data.csv")}}}})}
            << QList<QJsonObject>{out("stderr", "[replhost] this context was restored by running 1 of its 3 "
                                                "earlier runs again; the next one failed (FileNotFoundError: "
                                                "data.csv), so later state is missing\n")};
    QTest::newRow("a complete restore is not told")
            << QList<Event>{Event::other(QStringLiteral("e"), QStringLiteral("restored"),
                                         {{QStringLiteral("replayed"), 3}, {QStringLiteral("total"), 3},
                                          {QStringLiteral("complete"), true}})}
            << QList<QJsonObject>{};
    QTest::newRow("other events are not sent")
            << QList<Event>{Event::other(QStringLiteral("e"), QStringLiteral("something_new"))} << QList<QJsonObject>{};
}

void tst_E2bEventFormat::linesForEvents()
{
    QFETCH(QList<Event>, events);
    QFETCH(QList<QJsonObject>, lines);
    E2bEventFormat format;
    QList<QJsonObject> actual;
    for (const Event &event : events)
        actual += format.translate(event, QDateTime::currentDateTimeUtc());
    for (QJsonObject &line : actual)
        line.remove(QStringLiteral("timestamp"));
    QCOMPARE(actual, lines);
}

void tst_E2bEventFormat::outputIsStampedInUtc()
{
    E2bEventFormat format;
    const QDateTime now = QDateTime::fromString(QStringLiteral("2026-01-02T03:04:05.678+02:00"), Qt::ISODateWithMs);
    const QList<QJsonObject> lines = format.translate(stream("stdout", "x\n"), now);
    QCOMPARE(lines.size(), 1);
    QCOMPARE(lines[0].value(QStringLiteral("timestamp")).toString(), QStringLiteral("2026-01-02T01:04:05.678Z"));
}

void tst_E2bEventFormat::heldBackOutputIsFlushedOnRequest()
{
    E2bEventFormat format;
    QVERIFY(format.translate(stream("stdout", "Name? "), QDateTime::currentDateTimeUtc()).isEmpty());
    QVERIFY(format.hasPending());
    QList<QJsonObject> flushed = format.flushPending(QDateTime::currentDateTimeUtc());
    QCOMPARE(flushed.size(), 1);
    flushed[0].remove(QStringLiteral("timestamp"));
    QCOMPARE(flushed[0], out("stdout", "Name? "));
    QVERIFY(!format.hasPending());
    QVERIFY(format.flushPending(QDateTime::currentDateTimeUtc()).isEmpty());
}

QTEST_GUILESS_MAIN(tst_E2bEventFormat)
#include "tst_e2beventformat.moc"
