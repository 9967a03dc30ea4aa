// SPDX-License-Identifier: Apache-2.0
// ExecutionDocument writes an execution's document as bytes directly. It must read exactly as the
// same document built as a QJsonObject and written by QJsonDocument: the summary fields byte for
// byte, and the events as the events' own JSON.
#include "core/execution.h"
#include "core/executiondocument.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace replhost;
using replhost::core::Execution;
using replhost::core::ExecutionDocument;
using sdk::Event;

class tst_ExecutionDocument : public QObject {
    Q_OBJECT

private slots:
    void documentReadsAsQJsonDocumentWritesIt_data();
    void documentReadsAsQJsonDocumentWritesIt();
    void displaysAreWhatTheRunShowsAtItsEnd_data();
    void displaysAreWhatTheRunShowsAtItsEnd();
};

namespace {

const QString kId = QStringLiteral("exec-7");

// `execution` as a finished run with `events`, as the history gives it back.
void restoreFinished(Execution &execution, int executionCount, const QList<Event> &events)
{
    execution.restore(QStringLiteral("ok"), executionCount,
                      QDateTime(QDate(2026, 1, 31), QTime(9, 5, 7, 42), Qt::UTC), 17, events);
}

// The document as QJsonObject insertions, from the events: what docs/http-api.md describes.
QJsonObject reference(const Execution &execution, bool withEvents)
{
    QString out, err;
    QJsonArray displays, events;
    QJsonValue result = QJsonValue::Null, error = QJsonValue::Null;
    bool stateLost = false;
    // Before the done event (a running execution) both are null; a done event without them
    // leaves them out.
    QJsonValue cwd = QJsonValue::Null, exitCode = QJsonValue::Null;
    for (const Event &e : execution.events()) {
        const QJsonObject f = e.fields;
        if (e.kind == Event::Kind::Stream)
            (f.value(QLatin1String("name")).toString() == QLatin1String("stderr") ? err : out)
                    += f.value(QLatin1String("text")).toString();
        if (e.kind == Event::Kind::Result)
            result = f.value(QLatin1String("data"));
        if (e.kind == Event::Kind::Display)
            displays.append(f.value(QLatin1String("data")));
        if (e.kind == Event::Kind::Error) {
            QJsonObject summary;
            for (const char *key : {"ename", "evalue", "traceback"}) {
                if (f.contains(QLatin1String(key)))
                    summary.insert(QLatin1String(key), f.value(QLatin1String(key)));
            }
            error = summary;
        }
        if (e.kind == Event::Kind::Done) {
            stateLost = f.value(QLatin1String("state_lost")).toBool();
            cwd = f.value(QLatin1String("cwd"));
            exitCode = f.value(QLatin1String("exit_code"));
        }
        events.append(e.toJson());
    }
    QJsonObject doc{{QStringLiteral("code"), execution.code()},
                    {QStringLiteral("context_id"), execution.contextId()},
                    {QStringLiteral("displays"), displays},
                    {QStringLiteral("duration_ms"), execution.durationMs()},
                    {QStringLiteral("error"), error},
                    {QStringLiteral("execution_count"), execution.executionCount()},
                    {QStringLiteral("id"), execution.id()},
                    {QStringLiteral("language"), execution.language()},
                    {QStringLiteral("result"), result},
                    {QStringLiteral("started_at"), execution.startedAt().toString(Qt::ISODateWithMs)},
                    {QStringLiteral("state_lost"), stateLost},
                    {QStringLiteral("status"), execution.status()},
                    {QStringLiteral("stderr"), err},
                    {QStringLiteral("stdout"), out},
                    {QStringLiteral("workspace"), execution.workspace()}};
    if (!cwd.isUndefined())
        doc.insert(QStringLiteral("cwd"), cwd);
    if (!exitCode.isUndefined())
        doc.insert(QStringLiteral("exit_code"), exitCode);
    if (withEvents)
        doc.insert(QStringLiteral("events"), events);
    return doc;
}

} // namespace

void tst_ExecutionDocument::documentReadsAsQJsonDocumentWritesIt_data()
{
    QTest::addColumn<QList<Event>>("events");
    const QJsonObject plain{{QStringLiteral("text/plain"), QStringLiteral("42")}};
    QTest::newRow("started and done")
            << QList<Event>{Event::started(kId, 3),
                            Event::done(kId, QStringLiteral("ok"),
                                        {{QStringLiteral("cwd"), QStringLiteral("/srv/é \"q\"")},
                                         {QStringLiteral("duration_ms"), 0.031},
                                         {QStringLiteral("execution_count"), 3}})};
    QTest::newRow("every kind")
            << QList<Event>{Event::started(kId, 4),
                            Event::stream(kId, QStringLiteral("stdout"), QStringLiteral("a\n")),
                            Event::stream(kId, QStringLiteral("stderr"), QStringLiteral("warn\t1\n")),
                            Event::stream(kId, QStringLiteral("stdout"), QStringLiteral("b 😀\n")),
                            Event::display(kId, {{QStringLiteral("text/html"), QStringLiteral("<b>x</b>")}}),
                            Event::display(kId, plain, {{QStringLiteral("isolated"), true}}),
                            Event::result(kId, 4, plain),
                            Event::error(kId, QStringLiteral("ValueError"), QStringLiteral("bad"),
                                         {QStringLiteral("line 1"), QStringLiteral("line 2")}),
                            Event::other(kId, QStringLiteral("truncated"), {{QStringLiteral("limit_bytes"), 1024}}),
                            Event::done(kId, QStringLiteral("error"),
                                        {{QStringLiteral("cwd"), QStringLiteral("/tmp")},
                                         {QStringLiteral("exit_code"), 2},
                                         {QStringLiteral("state_lost"), true},
                                         {QStringLiteral("duration_ms"), 12.5}})};
    QTest::newRow("done without cwd or exit code")
            << QList<Event>{Event::done(kId, QStringLiteral("interrupted"), {{QStringLiteral("state_lost"), true}})};
    QTest::newRow("error without a traceback")
            << QList<Event>{Event::error(kId, QStringLiteral("E"), QStringLiteral("v")),
                            Event::done(kId, QStringLiteral("error"))};
    QTest::newRow("no events yet") << QList<Event>{};
    QTest::newRow("running") << QList<Event>{Event::started(kId, 4),
                                             Event::stream(kId, QStringLiteral("stdout"), QStringLiteral("x"))};
}

void tst_ExecutionDocument::documentReadsAsQJsonDocumentWritesIt()
{
    QFETCH(QList<Event>, events);
    Execution execution(kId, QStringLiteral("default"), QStringLiteral("ctx-1"),
                        QStringLiteral("python"), QStringLiteral("print('a')\nx = \"b\""));
    restoreFinished(execution, 4, events);

    // Without events: the same bytes as QJsonDocument writes.
    const auto summary = ExecutionDocument::write(execution, false);
    QVERIFY(summary);
    QCOMPARE(*summary, QJsonDocument(reference(execution, false)).toJson(QJsonDocument::Compact));

    // With them: the same object (each event's "type" and "execution_id" come first, so the
    // events are compared as values).
    const auto full = ExecutionDocument::write(execution, true);
    QVERIFY(full);
    QJsonParseError error;
    const QJsonDocument parsed = QJsonDocument::fromJson(*full, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, full->constData());
    QCOMPARE(parsed.object(), reference(execution, true));
}

namespace {

QJsonObject bundle(const QString &text)
{
    return {{QStringLiteral("text/plain"), text}};
}

} // namespace

void tst_ExecutionDocument::displaysAreWhatTheRunShowsAtItsEnd_data()
{
    QTest::addColumn<QList<Event>>("events");
    QTest::addColumn<QStringList>("shown");
    const QString bar = QStringLiteral("bar");
    const auto display = [](const QString &text, const QString &id = {}) {
        return Event::display(kId, bundle(text), {}, id);
    };
    const auto update = [](const QString &text, const QString &id) {
        return Event::display(kId, bundle(text), {}, id, true);
    };
    QTest::newRow("an update replaces its display in place")
            << QList<Event>{display(QStringLiteral("0%"), bar), display(QStringLiteral("after")),
                            update(QStringLiteral("50%"), bar), update(QStringLiteral("100%"), bar)}
            << QStringList{QStringLiteral("100%"), QStringLiteral("after")};
    QTest::newRow("an update reaches every display with its id")
            << QList<Event>{display(QStringLiteral("a"), bar), display(QStringLiteral("b"), bar),
                            update(QStringLiteral("c"), bar)}
            << QStringList{QStringLiteral("c"), QStringLiteral("c")};
    QTest::newRow("an update of a display of another run adds nothing")
            << QList<Event>{display(QStringLiteral("mine")), update(QStringLiteral("x"), bar)}
            << QStringList{QStringLiteral("mine")};
    QTest::newRow("a clear drops what was shown before it")
            << QList<Event>{display(QStringLiteral("old")), Event::clearOutput(kId),
                            display(QStringLiteral("new"))}
            << QStringList{QStringLiteral("new")};
    QTest::newRow("a waiting clear waits for the next output")
            << QList<Event>{display(QStringLiteral("old")), Event::clearOutput(kId, true),
                            Event::stream(kId, QStringLiteral("stdout"), QStringLiteral("x")),
                            display(QStringLiteral("new"))}
            << QStringList{QStringLiteral("new")};
    QTest::newRow("a waiting clear with no output after it clears nothing")
            << QList<Event>{display(QStringLiteral("old")), Event::clearOutput(kId, true)}
            << QStringList{QStringLiteral("old")};
}

void tst_ExecutionDocument::displaysAreWhatTheRunShowsAtItsEnd()
{
    QFETCH(QList<Event>, events);
    QFETCH(QStringList, shown);
    events.prepend(Event::started(kId, 1));
    events.append(Event::done(kId, QStringLiteral("ok")));
    Execution execution(kId, QStringLiteral("default"), QStringLiteral("ctx-1"),
                        QStringLiteral("python"), QStringLiteral("show()"));
    restoreFinished(execution, 1, events);
    const auto document = ExecutionDocument::object(execution, true);
    QVERIFY(document);
    QStringList texts;
    for (const QJsonValue &display : document->value(QLatin1String("displays")).toArray())
        texts << display.toObject().value(QLatin1String("text/plain")).toString();
    QCOMPARE(texts, shown);
    // The events themselves stay as they came, updates and clears included.
    QCOMPARE(document->value(QLatin1String("events")).toArray().size(), events.size());
}

QTEST_GUILESS_MAIN(tst_ExecutionDocument)
#include "tst_executiondocument.moc"
