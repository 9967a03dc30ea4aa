// SPDX-License-Identifier: Apache-2.0
#include "replhost/sdk/event.h"

#include <QTest>

using replhost::sdk::Event;

class tst_Event : public QObject {
    Q_OBJECT

private slots:
    void factoriesSetKindAndType()
    {
        QCOMPARE(Event::started("e1", 3).kind, Event::Kind::Started);
        QCOMPARE(Event::started("e1", 3).fields.value("execution_count").toInt(), 3);
        const Event s = Event::stream("e1", "stdout", "hi\n");
        QCOMPARE(s.type, QStringLiteral("stream"));
        QCOMPARE(s.fields.value("text").toString(), QStringLiteral("hi\n"));
        QCOMPARE(Event::display("e1", {{"text/plain", "x"}}).kind, Event::Kind::Display);
        QCOMPARE(Event::result("e1", 2, {{"text/plain", "2"}}).fields.value("data")
                     .toObject().value("text/plain").toString(),
                 QStringLiteral("2"));
        const Event err = Event::error("e1", "ValueError", "bad", {"line 1", "line 2"});
        QCOMPARE(err.fields.value("traceback").toArray().size(), 2);
        QCOMPARE(Event::other("e1", "truncated").kind, Event::Kind::Other);
    }

    void displaysCanBeUpdatedAndCleared()
    {
        const Event plain = Event::display("e1", {{"text/plain", "x"}}, {}, QString());
        QVERIFY(!plain.fields.contains("display_id"));
        const Event shown = Event::display("e1", {{"text/plain", "0%"}}, {}, "bar");
        QCOMPARE(shown.fields.value("display_id").toString(), QStringLiteral("bar"));
        QVERIFY(!shown.fields.contains("update"));
        const Event update = Event::display("e1", {{"text/plain", "50%"}}, {}, "bar", true);
        QCOMPARE(update.kind, Event::Kind::Display);
        QCOMPARE(update.fields.value("update").toBool(), true);
        const Event clear = Event::clearOutput("e1", true);
        QCOMPARE(clear.kind, Event::Kind::ClearOutput);
        QCOMPARE(clear.type, QStringLiteral("clear_output"));
        QCOMPARE(clear.fields.value("wait").toBool(), true);
        QCOMPARE(Event::fromJson(clear.toJson()).kind, Event::Kind::ClearOutput);
    }

    void doneHasHostFieldsByDefault()
    {
        const Event d = Event::done("e1", "ok", {{"execution_count", 4}});
        QCOMPARE(d.kind, Event::Kind::Done);
        QCOMPARE(d.fields.value("status").toString(), QStringLiteral("ok"));
        QCOMPARE(d.fields.value("state_lost").toBool(true), false);
        QCOMPARE(d.fields.value("streams_synced").toBool(false), true);
        const Event lost = Event::done("e1", "error", {{"state_lost", true}});
        QCOMPARE(lost.fields.value("state_lost").toBool(), true);
    }

    void kindFromType()
    {
        QCOMPARE(Event::kindFromType("display"), Event::Kind::Display);
        QCOMPARE(Event::kindFromType("done"), Event::Kind::Done);
        QCOMPARE(Event::kindFromType("clear_output"), Event::Kind::ClearOutput);
        QCOMPARE(Event::kindFromType("truncated"), Event::Kind::Other);
        QCOMPARE(Event::kindFromType(""), Event::Kind::Other);
    }

    void jsonRoundTrip()
    {
        const Event e = Event::error("e9", "KeyboardInterrupt", "", {"tb"});
        const QJsonObject json = e.toJson();
        QCOMPARE(json.value("type").toString(), QStringLiteral("error"));
        QCOMPARE(json.value("execution_id").toString(), QStringLiteral("e9"));
        QCOMPARE(json.value("ename").toString(), QStringLiteral("KeyboardInterrupt"));
        const Event back = Event::fromJson(json);
        QCOMPARE(back.kind, e.kind);
        QCOMPARE(back.type, e.type);
        QCOMPARE(back.executionId, e.executionId);
        QCOMPARE(back.fields, e.fields);
    }

    void backgroundEventHasNullExecutionId()
    {
        const QJsonObject json = Event::stream({}, "stderr", "late").toJson();
        QVERIFY(json.value("execution_id").isNull());
        QVERIFY(Event::fromJson(json).executionId.isEmpty());
    }

    void unknownFieldsTravelThrough()
    {
        const Event e = Event::fromJson({{"type", "display"}, {"execution_id", "e1"},
                                         {"data", QJsonObject{}}, {"display_id", "d7"}});
        QCOMPARE(e.kind, Event::Kind::Display);
        QCOMPARE(e.fields.value("display_id").toString(), QStringLiteral("d7"));
        QCOMPARE(e.toJson().value("display_id").toString(), QStringLiteral("d7"));
    }
};

QTEST_GUILESS_MAIN(tst_Event)
#include "tst_event.moc"
