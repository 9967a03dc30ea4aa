// SPDX-License-Identifier: Apache-2.0
#include "framing.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <functional>

using replhost::sdk::appendJsonString;
using replhost::sdk::asciiJson;
using replhost::sdk::escapeNonAscii;
using replhost::sdk::FrameReader;
using replhost::sdk::writeFrameHeader;

namespace {

QByteArray frame(const QByteArray &body)
{
    return QByteArray::number(body.size()) + '\n' + body;
}

struct Collected {
    QList<QJsonObject> frames;
    bool ok = true;
    QString error;
};

// Feeds `input`, handing each frame's body to `handler` parsed, as the worker's reader does
// for the frames it does not take apart itself.
bool feedObjects(FrameReader &reader, QByteArrayView input,
                 const std::function<bool(const QJsonObject &)> &handler)
{
    return reader.feed(input, [&handler](QByteArrayView body, QString *error) {
        QJsonObject object;
        return FrameReader::parse(body, &object, error) && handler(object);
    });
}

Collected feedPieces(const QList<QByteArray> &pieces,
                     qsizetype limit = replhost::sdk::kMaxFrameBytes)
{
    FrameReader reader(limit);
    Collected c;
    for (const QByteArray &piece : pieces) {
        c.ok = feedObjects(reader, piece, [&](const QJsonObject &o) {
            c.frames.append(o);
            return true;
        });
        if (!c.ok)
            break;
    }
    c.error = reader.error();
    return c;
}

} // namespace

class tst_Framing : public QObject {
    Q_OBJECT

private slots:
    void parsesOneFrame()
    {
        const Collected c = feedPieces({frame("{\"type\":\"hello\",\"id\":\"x\"}")});
        QVERIFY(c.ok);
        QCOMPARE(c.frames.size(), 1);
        QCOMPARE(c.frames[0].value("type").toString(), QStringLiteral("hello"));
    }

    void splitAtEveryByte()
    {
        const QByteArray stream = frame("{\"n\":1}") + frame("{\"n\":2,\"s\":\"é\"}")
                                  + frame("{\"n\":3}");
        for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
            const Collected c = feedPieces({stream.left(cut), stream.mid(cut)});
            QVERIFY2(c.ok, qPrintable(c.error));
            QCOMPARE(c.frames.size(), 3);
            QCOMPARE(c.frames[1].value("s").toString(), QStringLiteral("é"));
        }
        QList<QByteArray> bytes;
        for (char b : stream)
            bytes.append(QByteArray(1, b));
        const Collected c = feedPieces(bytes);
        QVERIFY(c.ok);
        QCOMPARE(c.frames.size(), 3);
        QCOMPARE(c.frames[2].value("n").toInt(), 3);
    }

    void manyFramesInOneRead()
    {
        QByteArray stream;
        for (int i = 0; i < 1000; ++i)
            stream += frame(QJsonDocument(QJsonObject{{"n", i}}).toJson(QJsonDocument::Compact));
        const Collected c = feedPieces({stream});
        QVERIFY(c.ok);
        QCOMPARE(c.frames.size(), 1000);
        for (int i = 0; i < 1000; ++i)
            QCOMPARE(c.frames[i].value("n").toInt(), i);
    }

    void largeFrameSpanningReads()
    {
        const QString big(3 * 1024 * 1024 + 7, QLatin1Char('z'));
        const QByteArray stream =
            frame(QJsonDocument(QJsonObject{{"data", big}}).toJson(QJsonDocument::Compact))
            + frame("{\"after\":true}");
        QList<QByteArray> pieces;
        for (qsizetype at = 0; at < stream.size(); at += 65536)
            pieces.append(stream.mid(at, 65536));
        const Collected c = feedPieces(pieces);
        QVERIFY(c.ok);
        QCOMPARE(c.frames.size(), 2);
        QCOMPARE(c.frames[0].value("data").toString().size(), big.size());
        QVERIFY(c.frames[1].value("after").toBool());
    }

    void oversizeFrameIsRejected()
    {
        Collected c = feedPieces({"101\n"}, 100);
        QVERIFY(!c.ok);
        QVERIFY2(c.error.contains("limit"), qPrintable(c.error));
        QVERIFY(feedPieces({"100\n"}, 100).ok);
        // The real limit is checked from the header alone, before any allocation.
        c = feedPieces({QByteArray::number(replhost::sdk::kMaxFrameBytes + 1) + '\n'});
        QVERIFY(!c.ok);
    }

    void garbageLengthIsRejected_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::newRow("letters") << QByteArray("abc\n{}");
        QTest::newRow("empty length") << QByteArray("\n{}");
        QTest::newRow("digits then letter") << QByteArray("12x\n{\"type\":\"done\"}");
        QTest::newRow("negative") << QByteArray("-1\n{}");
        QTest::newRow("leading space") << QByteArray(" 2\n{}");
        QTest::newRow("too many digits") << QByteArray("00000000002\n{}");
        QTest::newRow("zero") << QByteArray("0\n");
        QTest::newRow("json without header") << QByteArray("{\"type\":\"hello\"}");
    }

    void garbageLengthIsRejected()
    {
        QFETCH(QByteArray, input);
        const Collected c = feedPieces({input});
        QVERIFY(!c.ok);
        QVERIFY(!c.error.isEmpty());
        QVERIFY(c.frames.isEmpty());
    }

    void invalidBodyIsRejected_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::newRow("not json") << frame("{x}");
        QTest::newRow("array") << frame("[1]");
        QTest::newRow("string") << frame("\"s\"");
        QTest::newRow("truncated object") << frame("{\"a\":");
    }

    void invalidBodyIsRejected()
    {
        QFETCH(QByteArray, input);
        QVERIFY(!feedPieces({input}).ok);
    }

    void failedReaderStaysFailed()
    {
        FrameReader reader;
        QVERIFY(!feedObjects(reader, "x\n", [](const QJsonObject &) { return true; }));
        int seen = 0;
        QVERIFY(!feedObjects(reader, frame("{}"), [&](const QJsonObject &) { return ++seen, true; }));
        QCOMPARE(seen, 0);
        QVERIFY(reader.failed());
    }

    void handlerCanStop()
    {
        FrameReader reader;
        int seen = 0;
        QVERIFY(feedObjects(reader, frame("{}") + frame("{}"), [&](const QJsonObject &) {
            ++seen;
            return false;
        }));
        QCOMPARE(seen, 1);
    }

    void bodiesAreHandedOverWhole()
    {
        // One frame inside a read, one split across two reads.
        const QByteArray stream = frame("{\"n\":1}") + frame("{\"n\":22}");
        FrameReader reader;
        QList<QByteArray> bodies;
        const auto collect = [&](QByteArrayView body, QString *) {
            bodies.append(body.toByteArray());
            return true;
        };
        QVERIFY(reader.feed(stream.left(stream.size() - 3), collect));
        QVERIFY(reader.feed(stream.right(3), collect));
        QCOMPARE(bodies, QList<QByteArray>({"{\"n\":1}", "{\"n\":22}"}));
    }

    void bodyHandlerErrorFailsTheReader()
    {
        FrameReader reader;
        int seen = 0;
        QVERIFY(!reader.feed(frame("{x}") + frame("{}"), [&](QByteArrayView body,
                                                                     QString *error) {
            ++seen;
            QJsonObject object;
            return FrameReader::parse(body, &object, error);
        }));
        QCOMPARE(seen, 1);
        QVERIFY(reader.failed());
        QVERIFY(reader.error().startsWith(QStringLiteral("frame body is not valid JSON")));
    }

    void frameHeader()
    {
        char buffer[24];
        QCOMPARE(QByteArray(buffer, writeFrameHeader(buffer, 0)), QByteArray("0\n"));
        QCOMPARE(QByteArray(buffer, writeFrameHeader(buffer, 41)), QByteArray("41\n"));
        QCOMPARE(QByteArray(buffer, writeFrameHeader(buffer, 67108864)), QByteArray("67108864\n"));
    }

    void asciiEscaping_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QByteArray>("escaped");
        QTest::newRow("ascii") << QStringLiteral("plain") << QByteArray("\"plain\"");
        QTest::newRow("latin") << QStringLiteral("é") << QByteArray("\"\\u00e9\"");
        QTest::newRow("bmp") << QStringLiteral("€") << QByteArray("\"\\u20ac\"");
        QTest::newRow("cjk") << QStringLiteral("漢") << QByteArray("\"\\u6f22\"");
        QTest::newRow("surrogate pair")
            << QStringLiteral("🎉") << QByteArray("\"\\ud83c\\udf89\"");
        QTest::newRow("highest") << QString::fromUcs4(U"\U0010FFFF")
                                 << QByteArray("\"\\udbff\\udfff\"");
        QTest::newRow("mixed") << QStringLiteral("a\"é\n🎉b")
                               << QByteArray("\"a\\\"\\u00e9\\n\\ud83c\\udf89b\"");
    }

    void asciiEscaping()
    {
        QFETCH(QString, text);
        QFETCH(QByteArray, escaped);
        const QByteArray json = asciiJson(QJsonObject{{"k", text}});
        QCOMPARE(json, QByteArray("{\"k\":") + escaped + '}');
    }

    void jsonStringIsWhatAsciiJsonWrites_data()
    {
        asciiEscaping_data();
        QTest::newRow("empty") << QString() << QByteArray("\"\"");
        QTest::newRow("quotes and backslashes")
            << QStringLiteral("say \"hi\" \\ bye\\") << QByteArray("\"say \\\"hi\\\" \\\\ bye\\\\\"");
        QTest::newRow("controls") << QStringLiteral("\b\f\n\r\t\u0001\u001f\u007f/")
                                  << QByteArray("\"\\b\\f\\n\\r\\t\\u0001\\u001f\u007f/\"");
    }

    void jsonStringIsWhatAsciiJsonWrites()
    {
        QFETCH(QString, text);
        QFETCH(QByteArray, escaped);
        QByteArray out("{\"k\":");
        appendJsonString(out, text);
        out.append('}');
        QCOMPARE(out, QByteArray("{\"k\":") + escaped + '}');
        QCOMPARE(out, asciiJson(QJsonObject{{"k", text}}));
    }

    void jsonStringReplacesUnpairedSurrogates()
    {
        const QChar high(0xd83c);
        const QChar low(0xdf89);
        QByteArray out;
        appendJsonString(out, QString(high) + QLatin1Char('a') + low + QString(high));
        QCOMPARE(out, QByteArray("\"\\ufffda\\ufffd\\ufffd\""));
        QCOMPARE(QJsonDocument::fromJson("[" + out + "]").array().at(0).toString(),
                 QStringLiteral("\ufffda\ufffd\ufffd"));
    }

    void asciiJsonRoundTrips()
    {
        const QJsonObject object{
            {QStringLiteral("ключ"), QStringLiteral("значение 🎉")},
            {"code", QStringLiteral("print('héllo')\n# 漢字 \u0001")},
            {"list", QJsonArray{QStringLiteral("ü"), 1, true}},
        };
        const QByteArray json = asciiJson(object);
        for (char c : json)
            QVERIFY2(uchar(c) < 0x80, json.constData());
        QCOMPARE(QJsonDocument::fromJson(json).object(), object);
    }

    void invalidUtf8BecomesReplacement()
    {
        QCOMPARE(escapeNonAscii(QByteArray("\"a\xff" "b\"")), QByteArray("\"a\\ufffdb\""));
        QCOMPARE(escapeNonAscii(QByteArray("\"\xc3\"")), QByteArray("\"\\ufffd\""));
        QCOMPARE(escapeNonAscii(QByteArray("\"\xed\xa0\x80\"")),
                 QByteArray("\"\\ufffd\\ufffd\\ufffd\"")); // an encoded surrogate is invalid
    }
};

QTEST_GUILESS_MAIN(tst_Framing)
#include "tst_framing.moc"
