// SPDX-License-Identifier: Apache-2.0
// replhost-cli's Server-Sent Events reader against the framing rules, including those the
// server never exercises (CRLF, several data lines, comments, messages cut off by the end).

#include "ssereader.h"

#include <QTest>

#include <sstream>

using replhost::cli::SseEvent;
using replhost::cli::SseReader;

class tst_SseReader : public QObject {
    Q_OBJECT

private slots:
    void readsMessages_data();
    void readsMessages();
};

void tst_SseReader::readsMessages_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QStringList>("expected");  // "id|type|data" per message

    QTest::newRow("one message") << QByteArray("id: 3\nevent: stream\ndata: {\"a\":1}\n\n")
                                 << QStringList{"3|stream|{\"a\":1}"};
    QTest::newRow("two messages") << QByteArray("event: a\ndata: 1\n\nevent: b\ndata: 2\n\n")
                                  << QStringList{"|a|1", "|b|2"};
    QTest::newRow("crlf line ends") << QByteArray("id: 1\r\nevent: done\r\ndata: x\r\n\r\n")
                                    << QStringList{"1|done|x"};
    QTest::newRow("data lines are joined") << QByteArray("data: one\ndata: two\n\n")
                                           << QStringList{"|message|one\ntwo"};
    QTest::newRow("comments are skipped") << QByteArray(": keep-alive\n\n: keep-alive\nevent: e\ndata: d\n\n")
                                          << QStringList{"|e|d"};
    QTest::newRow("no space after the colon") << QByteArray("event:e\ndata:d\n\n") << QStringList{"|e|d"};
    QTest::newRow("only the first space is dropped") << QByteArray("data:  two spaces\n\n")
                                                     << QStringList{"|message| two spaces"};
    QTest::newRow("a message without data is not dispatched")
            << QByteArray("event: nothing\n\nevent: e\ndata: d\n\n") << QStringList{"|e|d"};
    QTest::newRow("unknown fields are ignored") << QByteArray("retry: 10\nfoo: bar\ndata: d\n\n")
                                                << QStringList{"|message|d"};
    QTest::newRow("a message cut off by the end is dropped")
            << QByteArray("data: whole\n\ndata: half") << QStringList{"|message|whole"};
    QTest::newRow("empty data") << QByteArray("data\n\n") << QStringList{"|message|"};
}

void tst_SseReader::readsMessages()
{
    QFETCH(QByteArray, input);
    QFETCH(QStringList, expected);

    std::istringstream in(input.toStdString());
    SseReader reader(in);
    QStringList seen;
    while (const std::optional<SseEvent> event = reader.next()) {
        seen.append(QStringLiteral("%1|%2|%3").arg(QString::fromStdString(event->id),
                                                   QString::fromStdString(event->type),
                                                   QString::fromStdString(event->data)));
    }
    QCOMPARE(seen, expected);
    QVERIFY(!reader.next().has_value());
}

QTEST_APPLESS_MAIN(tst_SseReader)
#include "tst_ssereader.moc"
