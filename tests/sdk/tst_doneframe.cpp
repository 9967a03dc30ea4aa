// SPDX-License-Identifier: Apache-2.0
#include "doneframe.h"
#include "framing.h"

#include <QJsonDocument>
#include <QTest>

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
                << QByteArray("{\"type\":\"done\",\"id\":\"r\",\"execution_count\":12345678901234567890}")
                << QStringLiteral("r") << false << quint64(0);
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
            QCOMPARE(frame->id(), id);
            QCOMPARE(frame->hasMark(), hasMark);
            QCOMPARE(frame->mark(), mark);
            QCOMPARE(frame->takeFields(synced), fieldsThroughTheParser(body, synced));
        }
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
