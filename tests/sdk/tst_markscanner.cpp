// SPDX-License-Identifier: Apache-2.0
#include "markscanner.h"

#include <QTest>

using replhost::sdk::MarkScanner;

namespace {

const QByteArray kNonce = "0123456789abcdef0123456789abcdef";

QByteArray mark(quint64 seq, const QByteArray &nonce = kNonce)
{
    return "\x1b]5253;rh;" + nonce + ';' + QByteArray::number(seq) + '\x07';
}

// Records the scanner's output as text runs and marks, merging adjacent text (how the input is
// cut must not matter).
class Recorder final : public MarkScanner::Sink {
public:
    QStringList items; // "T:<text>" or "M:<seq>"
    int stopAfterMarks = -1;

    bool text(const char *data, qsizetype size) override
    {
        const QString t = QString::fromLatin1(data, size);
        if (!items.isEmpty() && items.last().startsWith("T:"))
            items.last() += t;
        else
            items.append("T:" + t);
        return true;
    }
    bool mark(quint64 seq) override
    {
        items.append("M:" + QString::number(seq));
        return stopAfterMarks < 0 || --stopAfterMarks > 0;
    }
};

QStringList scan(const QList<QByteArray> &pieces, const QByteArray &nonce = kNonce,
                 quint64 *lastSeq = nullptr)
{
    MarkScanner scanner(nonce);
    Recorder r;
    for (const QByteArray &p : pieces)
        scanner.feed(p.constData(), p.size(), r);
    scanner.flush(r);
    if (lastSeq)
        *lastSeq = scanner.lastSeq();
    return r.items;
}

} // namespace

class tst_MarkScanner : public QObject {
    Q_OBJECT

private slots:
    void marksAreStripped()
    {
        quint64 last = 0;
        QCOMPARE(scan({"before" + mark(1) + "after"}, kNonce, &last),
                 QStringList({"T:before", "M:1", "T:after"}));
        QCOMPARE(last, quint64(1));
        QCOMPARE(scan({mark(1) + mark(2)}), QStringList({"M:1", "M:2"}));
        QCOMPARE(scan({"plain text, no marks"}), QStringList({"T:plain text, no marks"}));
    }

    void splitAtEveryOffset()
    {
        const QByteArray input = "hello" + mark(1) + "world\n" + mark(2) + "\x1b[31mred\x1b[0m"
                                 + mark(12345) + "\x1b]0;title\x07" + "tail\x1b";
        const QStringList expected = {"T:hello", "M:1", "T:world\n", "M:2",
                                      "T:\x1b[31mred\x1b[0m", "M:12345",
                                      "T:\x1b]0;title\x07tail\x1b"};
        QCOMPARE(scan({input}), expected);
        for (qsizetype cut = 0; cut <= input.size(); ++cut)
            QCOMPARE(scan({input.left(cut), input.mid(cut)}), expected);
        for (qsizetype a = 0; a <= input.size(); a += 3)
            for (qsizetype b = a; b <= input.size(); b += 5)
                QCOMPARE(scan({input.left(a), input.mid(a, b - a), input.mid(b)}), expected);
        QList<QByteArray> bytes;
        for (char c : input)
            bytes.append(QByteArray(1, c));
        QCOMPARE(scan(bytes), expected);
    }

    void wrongNonceIsText()
    {
        QByteArray other = kNonce;
        other[5] = 'X';
        const QByteArray input = "a" + mark(7, other) + "b";
        for (qsizetype cut = 0; cut <= input.size(); ++cut) {
            quint64 last = 0;
            QCOMPARE(scan({input.left(cut), input.mid(cut)}, kNonce, &last),
                     QStringList({"T:" + QString::fromLatin1(input)}));
            QCOMPARE(last, quint64(0));
        }
        // A shorter nonce that is a prefix of ours is not ours either.
        const QByteArray shorter = "x" + mark(3, kNonce.left(31)) + "y";
        QCOMPARE(scan({shorter}), QStringList({"T:" + QString::fromLatin1(shorter)}));
    }

    void almostMarksAreText_data()
    {
        QTest::addColumn<QByteArray>("input");
        const QByteArray prefix = "\x1b]5253;rh;" + kNonce + ';';
        QTest::newRow("no digits") << QByteArray(prefix + '\x07');
        QTest::newRow("letter in seq") << QByteArray(prefix + "12x\x07");
        QTest::newRow("no terminator at end") << QByteArray(prefix + "12");
        QTest::newRow("prefix only at end") << prefix;
        QTest::newRow("ST instead of BEL") << QByteArray(prefix + "3\x1b\\");
        QTest::newRow("20 digits") << QByteArray(prefix + "12345678901234567890\x07");
        QTest::newRow("other OSC") << QByteArray("\x1b]5254;rh;" + kNonce + ";1\x07");
        QTest::newRow("lone ESC") << QByteArray("\x1b");
    }

    void almostMarksAreText()
    {
        QFETCH(QByteArray, input);
        const QStringList expected = {"T:" + QString::fromLatin1(input)};
        for (qsizetype cut = 0; cut <= input.size(); ++cut)
            QCOMPARE(scan({input.left(cut), input.mid(cut)}), expected);
    }

    void markAfterFalseStart()
    {
        // A candidate that fails must not swallow a real mark right behind it.
        const QByteArray input = "\x1b]5253;rh;" + mark(4) + "z";
        const QStringList expected = {"T:\x1b]5253;rh;", "M:4", "T:z"};
        for (qsizetype cut = 0; cut <= input.size(); ++cut)
            QCOMPARE(scan({input.left(cut), input.mid(cut)}), expected);
    }

    void seqTracking()
    {
        quint64 last = 0;
        QCOMPARE(scan({mark(3) + mark(9) + mark(5)}, kNonce, &last),
                 QStringList({"M:3", "M:9", "M:5"}));
        QCOMPARE(last, quint64(9));
        QCOMPARE(scan({mark(Q_UINT64_C(9999999999999999999))}, kNonce, &last),
                 QStringList({"M:9999999999999999999"}));
        QCOMPARE(last, Q_UINT64_C(9999999999999999999));
    }

    void sinkCanStop()
    {
        MarkScanner scanner(kNonce);
        Recorder r;
        r.stopAfterMarks = 1;
        const QByteArray input = "a" + mark(1) + "b" + mark(2);
        QVERIFY(!scanner.feed(input.constData(), input.size(), r));
        QCOMPARE(r.items, QStringList({"T:a", "M:1"}));
    }
};

QTEST_GUILESS_MAIN(tst_MarkScanner)
#include "tst_markscanner.moc"
