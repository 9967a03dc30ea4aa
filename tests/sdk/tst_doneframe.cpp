// SPDX-License-Identifier: Apache-2.0
#include "doneframe.h"
#include "framecheck.h"
#include "framing.h"

#include <QJsonDocument>
#include <QTest>
#include <QVariant>

using replhost::sdk::DoneFrame;
using replhost::sdk::FrameReader;

namespace {

// What the host made of a `done` before DoneFrame, and still makes of the frames it leaves
// alone: the parsed object without type, id and mark, status "ok" unless a string, and the flags.
QJsonObject fieldsThroughTheParser(const QByteArray &body, bool streamsSynced)
{
    QJsonObject fields;
    QString error;
    if (!FrameReader::parse(body, &fields, &error))
        return {};
    fields.remove(QStringLiteral("type"));
    fields.remove(QStringLiteral("id"));
    fields.remove(QStringLiteral("mark"));
    if (!fields.value(QLatin1String("status")).isString())
        fields.insert(QStringLiteral("status"), QStringLiteral("ok"));
    fields.insert(QStringLiteral("streams_synced"), streamsSynced);
    fields.insert(QStringLiteral("state_lost"), false);
    return fields;
}

// The fields with each value's stored kind: QJsonObject's == takes an integer and a double of the
// same value as equal, but they serialise differently (2^53 + 1 is exact only as an integer).
QStringList typedMembers(const QJsonObject &fields)
{
    QStringList members;
    for (auto it = fields.begin(); it != fields.end(); ++it) {
        const QVariant value = it.value().toVariant();
        members << QStringLiteral("%1=%2:%3").arg(it.key(), QLatin1String(value.typeName()),
                                                   value.toString());
    }
    return members;
}

} // namespace

class tst_DoneFrame : public QObject {
    Q_OBJECT

private slots:
    void takesTheDriversDoneApart_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("hasMark");
        QTest::addColumn<quint64>("mark");
        QTest::newRow("python, marked")
                << QByteArray("{\"type\":\"done\",\"id\":\"a1-7\",\"status\":\"ok\",\"execution_count\":7,"
                              "\"cwd\":\"/tmp/w\",\"duration_ms\":0.123,\"mark\":3}")
                << QStringLiteral("a1-7") << true << quint64(3);
        QTest::newRow("unmarked, error status")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"status\":\"error\",\"execution_count\":1}")
                << QStringLiteral("x") << false << quint64(0);
        QTest::newRow("no status")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"mark\":12}") << QStringLiteral("x")
                << true << quint64(12);
        QTest::newRow("spaces, escapes in values, literals")
                << QByteArray(" { \"type\" : \"done\" , \"id\":\"r\", \"cwd\": \"/a\\\"b\\\\c\\u00e9\","
                              " \"exit_code\": -2, \"x\": null, \"y\": true, \"z\": false,"
                              " \"duration_ms\": 12.5 }\n")
                << QStringLiteral("r") << false << quint64(0);
        QTest::newRow("integer beyond 18 digits")
                << QByteArray("{\"type\":\"done\",\"id\":\"r\",\"n\":12345678901234567890}")
                << QStringLiteral("r") << false << quint64(0);
    }

    // The fast path takes nothing the parser or the frame check refuses: such a frame goes to
    // them, and they say what is wrong with it.
    void leavesWhatIsRefusedToTheParserAndTheCheck_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("status that is none") << QByteArray(R"({"type":"done","id":"r","status":"forged"})");
        QTest::newRow("negative duration") << QByteArray(R"({"type":"done","id":"r","duration_ms":-1})");
        QTest::newRow("execution count beyond an int")
                << QByteArray(R"({"type":"done","id":"r","execution_count":4294967296})");
        QTest::newRow("exit code beyond an int")
                << QByteArray(R"({"type":"done","id":"r","exit_code":-4294967296})");
        QTest::newRow("cwd that is a number") << QByteArray(R"({"type":"done","id":"r","cwd":7})");
        QTest::newRow("mark beyond 2^53")
                << QByteArray(R"({"type":"done","id":"r","mark":9007199254741000})");
        // Found by fuzz_doneframe: a bad escape, then a literal where the string stopped.
        QTest::newRow("bad escape before a literal")
                << QByteArray("{\"type\":\"done\",\"id\":\"r\",\"cwd\":\"/a\\unull, \"y\": true}");
        QTest::newRow("long id")
                << QByteArray(R"({"type":"done","id":")") + QByteArray(257, 'x') + QByteArray(R"("})");
    }

    void leavesWhatIsRefusedToTheParserAndTheCheck()
    {
        QFETCH(QByteArray, body);
        QVERIFY(!DoneFrame::scan(body));
        QJsonObject parsed;
        QString error;
        if (FrameReader::parse(body, &parsed, &error))
            QVERIFY(!replhost::sdk::checkWorkerFrame(parsed));
    }

    void takesTheDriversDoneApart()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, id);
        QFETCH(bool, hasMark);
        QFETCH(quint64, mark);
        for (const bool synced : {true, false}) {
            std::optional<DoneFrame> frame = DoneFrame::scan(body);
            QVERIFY(frame);
            QCOMPARE(QString(QLatin1StringView(frame->idText())), id);
            QCOMPARE(frame->hasMark(), hasMark);
            QCOMPARE(frame->mark(), mark);
            QCOMPARE(frame->takeFields(synced), fieldsThroughTheParser(body, synced));
        }
    }

    // One worker's frames in a row through one DoneFrame::Recent: each must give exactly what
    // the parser gives, whether it has the kept shape (numbers put into a copy) or not (parsed,
    // and kept in turn).
    void reusesTheLastShapeOnlyWhereItFits_data()
    {
        QTest::addColumn<QList<QByteArray>>("bodies");
        QTest::addColumn<QList<bool>>("synced");
        const auto python = [](const char *count, const char *cwd, const char *status,
                               const char *duration, const char *tail = "") {
            return QByteArray("{\"type\":\"done\",\"id\":\"a1-") + count
                   + "\",\"status\":\"" + status + "\",\"execution_count\":" + count
                   + ",\"cwd\":\"" + cwd + "\",\"duration_ms\":" + duration + tail + "}";
        };
        // A number in a member of the driver's own, where any number is allowed (duration_ms
        // is never negative, execution_count an int).
        const auto numbered = [](const char *count, const char *number) {
            return QByteArray("{\"type\":\"done\",\"id\":\"a1-") + count
                   + "\",\"status\":\"ok\",\"execution_count\":" + count
                   + ",\"cwd\":\"/w\",\"n\":" + number + "}";
        };
        QTest::newRow("numbers change")
                << QList<QByteArray>{python("1", "/w", "ok", "0.123", ",\"mark\":1"),
                                     python("2", "/w", "ok", "0.5"),
                                     python("3", "/w", "ok", "12.25", ",\"mark\":9")}
                << QList<bool>{true, true, true};
        QTest::newRow("cwd changes")
                << QList<QByteArray>{python("1", "/w", "ok", "0.1"), python("2", "/x", "ok", "0.1"),
                                     python("3", "/x", "ok", "0.2")}
                << QList<bool>{true, true, true};
        QTest::newRow("status changes")
                << QList<QByteArray>{python("1", "/w", "ok", "0.1"),
                                     python("2", "/w", "error", "0.1"),
                                     python("3", "/w", "interrupted", "0.1")}
                << QList<bool>{true, true, true};
        QTest::newRow("synced flag changes")
                << QList<QByteArray>{python("1", "/w", "ok", "0.1"), python("2", "/w", "ok", "0.1"),
                                     python("3", "/w", "ok", "0.1")}
                << QList<bool>{true, false, true};
        QTest::newRow("member added, then dropped")
                << QList<QByteArray>{python("1", "/w", "ok", "0.1"),
                                     python("2", "/w", "ok", "0.1", ",\"exit_code\":3"),
                                     python("3", "/w", "ok", "0.1")}
                << QList<bool>{true, true, true};
        QTest::newRow("integer turns into a double and back")
                << QList<QByteArray>{numbered("1", "1"), numbered("2", "1.5"),
                                     numbered("3", "2.0"), numbered("4", "-0"),
                                     numbered("5", "-0.0")}
                << QList<bool>{true, true, true, true, true};
        QTest::newRow("integers at the edge of 64 bits")
                << QList<QByteArray>{numbered("1", "9007199254740993"),
                                     numbered("2", "9223372036854775807"),
                                     numbered("3", "9223372036854775808"),
                                     numbered("4", "-9223372036854775808"),
                                     numbered("5", "-9223372036854775809"),
                                     numbered("6", "12345678901234567890123")}
                << QList<bool>{true, true, true, true, true, true};
        QTest::newRow("number becomes a string of the same text")
                << QList<QByteArray>{
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"n\":1,\"s\":\"a\"}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"n\":\"1\",\"s\":\"a\"}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"n\":2,\"s\":\"a\"}")}
                << QList<bool>{true, true, true};
        QTest::newRow("members in another order")
                << QList<QByteArray>{
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":1,\"b\":2}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"b\":3,\"a\":4}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":5,\"b\":6}")}
                << QList<bool>{true, true, true};
        QTest::newRow("more numbers than a shape keeps")
                << QList<QByteArray>{
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":1,\"b\":2}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":1,\"b\":2,\"c\":3,"
                                      "\"d\":4,\"e\":5}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":6,\"b\":7,\"c\":8,"
                                      "\"d\":9,\"e\":10}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":11,\"b\":12}")}
                << QList<bool>{true, true, true, true};
        QTest::newRow("no numbers, spaces moved")
                << QList<QByteArray>{
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"s\":\"a\"}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"s\": \"a\"}"),
                           QByteArray("{\"type\":\"done\",\"id\":\"x\",\"s\":\"a\"}")}
                << QList<bool>{false, false, false};
    }

    void reusesTheLastShapeOnlyWhereItFits()
    {
        QFETCH(QList<QByteArray>, bodies);
        QFETCH(QList<bool>, synced);
        DoneFrame::Recent recent;
        for (qsizetype i = 0; i < bodies.size(); ++i) {
            std::optional<DoneFrame> frame = DoneFrame::scan(bodies[i]);
            QVERIFY2(frame, bodies[i].constData());
            const QJsonObject expected = fieldsThroughTheParser(bodies[i], synced[i]);
            const QJsonObject fields = frame->takeFields(synced[i], &recent);
            QCOMPARE(fields, expected);
            QCOMPARE(typedMembers(fields), typedMembers(expected));
        }
    }

    // A frame of the kept shape is made from the kept fields, which the copy leaves as they were:
    // after a second frame with other numbers, the kept fields are still the first frame's.
    void keepsTheFirstOfTheShapeUnchanged()
    {
        const QByteArray first("{\"type\":\"done\",\"id\":\"a\",\"execution_count\":1,"
                               "\"cwd\":\"/w\",\"duration_ms\":0.25,\"mark\":4}");
        const QByteArray second("{\"type\":\"done\",\"id\":\"b\",\"execution_count\":2,"
                                "\"cwd\":\"/w\",\"duration_ms\":7}");
        DoneFrame::Recent recent;
        std::optional<DoneFrame> frame = DoneFrame::scan(first);
        QVERIFY(frame);
        const QJsonObject firstFields = frame->takeFields(true, &recent);
        frame = DoneFrame::scan(second);
        QVERIFY(frame);
        QCOMPARE(typedMembers(frame->takeFields(true, &recent)),
                 typedMembers(fieldsThroughTheParser(second, true)));
        QCOMPARE(typedMembers(recent.fields), typedMembers(firstFields));
        QCOMPARE(recent.fields.value(QLatin1String("execution_count")).toInt(), 1);
    }

    void leavesOtherFramesToTheParser_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::newRow("another type") << QByteArray("{\"type\":\"display\",\"id\":\"x\",\"mark\":1}");
        QTest::newRow("type not first") << QByteArray("{\"id\":\"x\",\"type\":\"done\"}");
        QTest::newRow("escaped type") << QByteArray("{\"type\":\"d\\u006fne\",\"id\":\"x\"}");
        QTest::newRow("no id") << QByteArray("{\"type\":\"done\",\"status\":\"ok\"}");
        QTest::newRow("escaped id") << QByteArray("{\"type\":\"done\",\"id\":\"a\\\"b\"}");
        QTest::newRow("id not a string") << QByteArray("{\"type\":\"done\",\"id\":5}");
        QTest::newRow("nested value")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"data\":{\"a\":1}}");
        QTest::newRow("array value") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"a\":[1]}");
        QTest::newRow("repeated key")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"status\":\"ok\",\"status\":\"error\"}");
        QTest::newRow("status not a string")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"status\":3}");
        QTest::newRow("negative mark") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"mark\":-1}");
        QTest::newRow("fractional mark") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"mark\":1.5}");
        QTest::newRow("null mark") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"mark\":null}");
        QTest::newRow("exponent") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"t\":1e400}");
        QTest::newRow("driver's own flag")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"state_lost\":true}");
        QTest::newRow("escaped key") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"c\\u0077d\":\"/\"}");
        QTest::newRow("non-ascii") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"cwd\":\"/\xc3\xa9\"}");
        QTest::newRow("control character")
                << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"cwd\":\"a\tb\"}");
        QTest::newRow("bad escape") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"cwd\":\"\\q\"}");
        QTest::newRow("leading zero") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"n\":01}");
        QTest::newRow("trailing comma") << QByteArray("{\"type\":\"done\",\"id\":\"x\",}");
        QTest::newRow("text after the object") << QByteArray("{\"type\":\"done\",\"id\":\"x\"} x");
        QTest::newRow("unterminated") << QByteArray("{\"type\":\"done\",\"id\":\"x\"");
        QTest::newRow("bare word") << QByteArray("{\"type\":\"done\",\"id\":\"x\",\"ok\":yes}");
    }

    void leavesOtherFramesToTheParser()
    {
        QFETCH(QByteArray, body);
        QVERIFY(!DoneFrame::scan(body));
    }
};

QTEST_GUILESS_MAIN(tst_DoneFrame)
#include "tst_doneframe.moc"
