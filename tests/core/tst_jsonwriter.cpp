// SPDX-License-Identifier: Apache-2.0
// JsonWriter writes the same bytes as QJsonDocument's compact form for every kind of value, so
// the documents the server writes by hand read exactly as those it used to build with QJsonObject.
#include "core/jsonwriter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <limits>

using namespace replhost;
using replhost::core::JsonWriter;
using sdk::Event;

class tst_JsonWriter : public QObject {
    Q_OBJECT

private slots:
    void valuesReadAsQJsonDocumentWritesThem_data();
    void valuesReadAsQJsonDocumentWritesThem();
    void doublesReadAsQJsonDocumentWritesThem_data();
    void doublesReadAsQJsonDocumentWritesThem();
    void documentOfManyPiecesGrowsAsNeeded();
    void eventsReadAsEventToJson_data();
    void eventsReadAsEventToJson();
    void backgroundEventHasNullExecutionId();
};

namespace {

QByteArray written(const QJsonValue &value)
{
    JsonWriter writer;
    writer.value(value);
    return writer.take();
}

QByteArray qtCompact(const QJsonValue &value)
{
    // QJsonDocument holds only objects and arrays: wrap, then take the brackets off.
    const QByteArray wrapped = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return wrapped.mid(1, wrapped.size() - 2);
}

} // namespace

void tst_JsonWriter::valuesReadAsQJsonDocumentWritesThem_data()
{
    QTest::addColumn<QJsonValue>("value");
    QTest::newRow("null") << QJsonValue(QJsonValue::Null);
    QTest::newRow("true") << QJsonValue(true);
    QTest::newRow("false") << QJsonValue(false);
    QTest::newRow("zero") << QJsonValue(0);
    QTest::newRow("negative integer") << QJsonValue(-42);
    QTest::newRow("large integer") << QJsonValue(qint64(1) << 60);
    QTest::newRow("integral double") << QJsonValue(2.0);
    QTest::newRow("fraction") << QJsonValue(0.1);
    QTest::newRow("small double") << QJsonValue(1.5e-300);
    QTest::newRow("huge double") << QJsonValue(1e300);
    QTest::newRow("infinity") << QJsonValue(std::numeric_limits<double>::infinity());
    QTest::newRow("empty string") << QJsonValue(QString());
    QTest::newRow("ascii") << QJsonValue(QStringLiteral("hello world"));
    QTest::newRow("quotes and backslashes") << QJsonValue(QStringLiteral("say \"hi\" \\ bye /"));
    QTest::newRow("named escapes") << QJsonValue(QStringLiteral("a\bb\fc\nd\re\tf"));
    QTest::newRow("other control characters")
            << QJsonValue(QString::fromUtf16(u"\u0001\u001f\u0000x\u007f"));
    QTest::newRow("latin-1 and bmp") << QJsonValue(QString::fromUtf16(u"café ☃ 中文"));
    QTest::newRow("astral pair") << QJsonValue(QString::fromUtf16(u"smile 😀 end"));
    QTest::newRow("lone high surrogate") << QJsonValue(QString(QChar(0xd83d)) + QStringLiteral("x"));
    QTest::newRow("lone low surrogate") << QJsonValue(QStringLiteral("x") + QChar(0xde00));
    // Long strings are written in blocks of 4,096 units, four at a time where they can be.
    QString acrossBlocks = QString(4095, QLatin1Char('a')) + QString::fromUtf16(u"😀") + QStringLiteral("\"\n")
            + QString(3, QLatin1Char('b')) + QChar(0x1f) + QString(4100, QChar(0xe9));
    QTest::newRow("pair across a block end") << QJsonValue(acrossBlocks);
    QString everyKind;
    for (int i = 0; i < 9000; ++i)
        everyKind += QChar(char16_t(i % 7 == 0 ? 0x22 : i % 11 == 0 ? 0x5c : i % 13 == 0 ? 0x1 : 0x20 + i % 0x5f));
    QTest::newRow("escapes scattered through 9,000 units") << QJsonValue(everyKind);
    // Eight units are tested at once where the processor can: each edge of "copied as it is"
    // (0x1f/0x20, 0x7f/0x80, the sign bit of a 16-bit lane) at each position of a group.
    QString laneEdges;
    for (const char16_t edge : {u'\u001f', u' ', u'\u007f', u'\u0080', u'\u7fff', u'\u8000', u'\uffff', u'"', u'\\'}) {
        for (int position = 0; position < 8; ++position)
            laneEdges += QString(position, QLatin1Char('a')) + QChar(edge) + QString(15 - position, QLatin1Char('b'));
    }
    QTest::newRow("edges of plain text in each lane") << QJsonValue(laneEdges);
    QTest::newRow("empty array") << QJsonValue(QJsonArray());
    QTest::newRow("empty object") << QJsonValue(QJsonObject());
    QTest::newRow("nested") << QJsonValue(QJsonObject{
            {QStringLiteral("text/plain"), QStringLiteral("2")},
            {QStringLiteral("list"), QJsonArray{1, QStringLiteral("two"), QJsonValue::Null,
                                                QJsonObject{{QStringLiteral("k\n"), false}}}},
            {QStringLiteral("ünï"), 3.25}});
}

void tst_JsonWriter::valuesReadAsQJsonDocumentWritesThem()
{
    QFETCH(QJsonValue, value);
    QCOMPARE(written(value), qtCompact(value));
}

void tst_JsonWriter::doublesReadAsQJsonDocumentWritesThem_data()
{
    // Fractions from 0.01 up to 1e9 are written by std::to_chars, the rest by Qt: each decade
    // around and inside that range, with random mantissas of every length (a fixed seed, so
    // every run checks the same numbers), must read as QJsonDocument writes them.
    QTest::addColumn<int>("exponent");
    for (int exponent = -5; exponent <= 10; ++exponent)
        QTest::addRow("1e%d", exponent) << exponent;
}

void tst_JsonWriter::doublesReadAsQJsonDocumentWritesThem()
{
    QFETCH(int, exponent);
    QRandomGenerator random(quint32(1000 + exponent));
    QList<double> values;
    const double decade = std::pow(10.0, exponent);
    for (int i = 0; i < 3000; ++i) {
        const double mantissa = 1.0 + 9.0 * random.generateDouble();
        // Rounded to 1..17 significant digits, so short and long fractions both occur.
        const int digits = 1 + i % 17;
        const double scale = std::pow(10.0, digits - 1);
        values.append(std::round(mantissa * scale) / scale * decade);
        values.append(-mantissa * decade);
    }
    values << decade << std::nextafter(decade, 0.0) << std::nextafter(decade, 1e300);
    for (const double value : std::as_const(values)) {
        const QByteArray ours = written(QJsonValue(value));
        const QByteArray theirs = qtCompact(QJsonValue(value));
        if (ours != theirs)
            QFAIL(qPrintable(QStringLiteral("%1: ours %2, QJsonDocument %3")
                                     .arg(value, 0, 'g', 17)
                                     .arg(QString::fromLatin1(ours), QString::fromLatin1(theirs))));
    }
}

void tst_JsonWriter::documentOfManyPiecesGrowsAsNeeded()
{
    // A writer that starts small grows while pieces, strings and values are added, and hands
    // back exactly what was written.
    JsonWriter writer(1);
    QByteArray expected;
    for (int i = 0; i < 2000; ++i) {
        writer.raw(i == 0 ? '[' : ',');
        expected += i == 0 ? '[' : ',';
        writer.string(QStringLiteral("item \"%1\"").arg(i));
        expected += "\"item \\\"" + QByteArray::number(i) + "\\\"\"";
        writer.raw(',');
        writer.integer(-i);
        expected += ',' + QByteArray::number(-i);
    }
    writer.raw(']');
    expected += ']';
    QCOMPARE(writer.size(), expected.size());
    QCOMPARE(writer.take(), expected);
    QCOMPARE(writer.size(), 0);
}

void tst_JsonWriter::eventsReadAsEventToJson_data()
{
    QTest::addColumn<Event>("event");
    const QString id = QStringLiteral("exec-1");
    QTest::newRow("started") << Event::started(id, 3);
    QTest::newRow("stream") << Event::stream(id, QStringLiteral("stdout"), QStringLiteral("a \"b\"\n"));
    QTest::newRow("result") << Event::result(id, 2, {{QStringLiteral("text/plain"), QStringLiteral("2")}});
    QTest::newRow("error") << Event::error(id, QStringLiteral("NameError"), QStringLiteral("x"),
                                           {QStringLiteral("line 1"), QStringLiteral("line 2")});
    QTest::newRow("done") << Event::done(id, QStringLiteral("ok"), {{QStringLiteral("cwd"), QStringLiteral("/tmp")}});
    QTest::newRow("other") << Event::other(id, QStringLiteral("truncated"), {{QStringLiteral("limit_bytes"), 1024}});
}

void tst_JsonWriter::eventsReadAsEventToJson()
{
    QFETCH(Event, event);
    // Key order aside (the type and id come first), the same object.
    const QByteArray ours = JsonWriter::eventJson(event);
    QJsonParseError error;
    const QJsonDocument parsed = QJsonDocument::fromJson(ours, &error);
    QVERIFY2(error.error == QJsonParseError::NoError, ours.constData());
    QCOMPARE(parsed.object(), event.toJson());
    QVERIFY(ours.startsWith("{\"type\":\"" + event.type.toUtf8() + "\",\"execution_id\":\"exec-1\""));
}

void tst_JsonWriter::backgroundEventHasNullExecutionId()
{
    const QByteArray json = JsonWriter::eventJson(Event::stream({}, QStringLiteral("stderr"), QStringLiteral("x")));
    QCOMPARE(QJsonDocument::fromJson(json).object().value(QStringLiteral("execution_id")),
             QJsonValue(QJsonValue::Null));
}

QTEST_GUILESS_MAIN(tst_JsonWriter)
#include "tst_jsonwriter.moc"
