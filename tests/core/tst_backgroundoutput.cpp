// SPDX-License-Identifier: Apache-2.0
// BackgroundOutput: the per-context log of output written between runs.
#include "core/backgroundoutput.h"
#include "core/execution.h"

#include <QTest>

using replhost::core::BackgroundOutput;
using replhost::core::Execution;
using replhost::sdk::Event;

class tst_BackgroundOutput : public QObject {
    Q_OBJECT

private:
    static Event stdoutEvent(const QString &text, const QString &executionId = {})
    {
        return Event::stream(executionId, QStringLiteral("stdout"), text);
    }
    static QStringList texts(const QList<BackgroundOutput::Entry> &entries)
    {
        QStringList out;
        for (const BackgroundOutput::Entry &entry : entries)
            out.append(entry.event.fields.value(QLatin1String("text")).toString());
        return out;
    }

private slots:
    void entriesAreNumberedFromOneInOrder()
    {
        BackgroundOutput log;
        QCOMPARE(log.lastSeq(), 0);
        QCOMPARE(log.append(stdoutEvent(QStringLiteral("a")), QStringLiteral("run-1")).seq, 1);
        QCOMPARE(log.append(stdoutEvent(QStringLiteral("b")), QStringLiteral("run-1")).seq, 2);
        QCOMPARE(log.lastSeq(), 2);
        const QList<BackgroundOutput::Entry> all = log.after(0, 100);
        QCOMPARE(texts(all), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
        QCOMPARE(all.first().afterExecutionId, QStringLiteral("run-1"));
        QVERIFY(all.first().at.isValid());
        QCOMPARE(all.first().at.timeSpec(), Qt::UTC);
    }

    void afterSkipsWhatWasSeenAndHonoursTheLimit()
    {
        BackgroundOutput log;
        for (const char *text : {"a", "b", "c", "d"})
            log.append(stdoutEvent(QLatin1String(text)), {});
        QCOMPARE(texts(log.after(2, 100)), (QStringList{QStringLiteral("c"), QStringLiteral("d")}));
        QCOMPARE(texts(log.after(0, 3)), (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
        QVERIFY(log.after(4, 100).isEmpty());
        QVERIFY(log.after(99, 100).isEmpty());
        QVERIFY(log.after(0, 0).isEmpty());
        QCOMPARE(texts(log.after(-5, 1)), QStringList{QStringLiteral("a")});
    }

    void theExecutionIdIsCleared()
    {
        BackgroundOutput log;
        log.append(stdoutEvent(QStringLiteral("late"), QStringLiteral("stale-run")), QStringLiteral("stale-run"));
        QVERIFY(log.after(0, 1).first().event.executionId.isEmpty());
    }

    void theOldestGoFirstBeyondTheByteBound()
    {
        // Entries of one size; room for two of them.
        const qint64 size = Execution::memoryEstimate(stdoutEvent(QString(1000, u'a')));
        BackgroundOutput log(2 * size);
        for (int i = 0; i < 5; ++i)
            log.append(stdoutEvent(QString(1000, QChar(u'a' + i))), {});
        const QList<BackgroundOutput::Entry> kept = log.after(0, 100);
        QCOMPARE(kept.size(), 2);
        QCOMPARE(kept.first().seq, 4);
        QCOMPARE(kept.last().seq, 5);
        QCOMPARE(log.dropped(), 3);
        // Numbers stay those the entries were given, so a client's position is still valid.
        QCOMPARE(log.after(4, 100).size(), 1);
        QCOMPARE(log.after(1, 100).size(), 2);
    }

    void theNewestStaysEvenAloneOverTheBound()
    {
        BackgroundOutput log(10);
        log.append(stdoutEvent(QStringLiteral("small")), {});
        log.append(stdoutEvent(QString(5000, u'z')), {});
        const QList<BackgroundOutput::Entry> kept = log.after(0, 100);
        QCOMPARE(kept.size(), 1);
        QCOMPARE(kept.first().seq, 2);
        QCOMPARE(log.dropped(), 1);
    }

    void theEntryBoundHolds()
    {
        BackgroundOutput log(BackgroundOutput::kDefaultMaxBytes, 3);
        for (int i = 0; i < 10; ++i)
            log.append(stdoutEvent(QString::number(i)), {});
        QCOMPARE(texts(log.after(0, 100)), (QStringList{QStringLiteral("7"), QStringLiteral("8"), QStringLiteral("9")}));
        QCOMPARE(log.dropped(), 7);
        QCOMPARE(log.lastSeq(), 10);
    }
};

QTEST_APPLESS_MAIN(tst_BackgroundOutput)
#include "tst_backgroundoutput.moc"
