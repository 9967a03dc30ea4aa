// SPDX-License-Identifier: Apache-2.0
// An execution keeps only a window of its most recent events in memory; the ones that left it
// come back from the history, so readers see every event whatever the window. A real Engine on
// a temporary data directory and real python3 workers.
#include "core/engine.h"
#include "core/executiondocument.h"
#include "executionevents.h"
#include "testengine.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <memory>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;

namespace {

constexpr int kRunTimeout = 60000;

// Prints `lines` numbered lines, flushing each, so the run has many stream events.
QString numberedLines(int lines)
{
    return QStringLiteral("import sys\nfor i in range(%1):\n    print('line', i, flush=True)\n").arg(lines);
}

QString expectedLines(int lines)
{
    QString text;
    for (int i = 0; i < lines; ++i)
        text += QStringLiteral("line %1\n").arg(i);
    return text;
}

QString stdoutOf(const QList<Event> &events)
{
    QString text;
    for (const Event &event : events) {
        if (event.kind == Event::Kind::Stream
            && event.fields.value(QLatin1String("name")).toString() == QLatin1String("stdout"))
            text += event.fields.value(QLatin1String("text")).toString();
    }
    return text;
}

} // namespace

class tst_ExecutionHistory : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(m_engine.open(m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR))));
        if (!m_engine->plugins().resolve(QStringLiteral("python")))
            QSKIP("no python plugin or runtime");
    }

    void cleanup()
    {
        m_engine.reset();
    }

    void olderEventsComeBackFromTheHistory_data()
    {
        QTest::addColumn<qint64>("windowBytes");
        QTest::addColumn<int>("lines");
        QTest::newRow("no window") << qint64(0) << 300;
        QTest::newRow("16 KiB window") << qint64(16 * 1024) << 2000;
        QTest::newRow("window larger than the run") << qint64(64 * 1024 * 1024) << 300;
    }

    void olderEventsComeBackFromTheHistory()
    {
        QFETCH(qint64, windowBytes);
        QFETCH(int, lines);
        m_engine->contexts().setEventWindowBytes(windowBytes);
        const ExecutionPtr execution = run(numberedLines(lines));
        QVERIFY(execution);
        QCOMPARE(execution->status(), QStringLiteral("ok"));

        const int count = execution->eventCount();
        QVERIFY(count > 2);
        if (windowBytes < 64 * 1024 * 1024) {
            QVERIFY2(execution->firstRecentIndex() > 0, "the window kept every event");
            QCOMPARE(int(execution->events().size()), count - execution->firstRecentIndex());
        } else {
            QCOMPARE(execution->firstRecentIndex(), 0);
        }
        if (windowBytes == 0) {
            QCOMPARE(execution->events().size(), 1);  // the newest one always stays
            QCOMPARE(execution->events().first().kind, Event::Kind::Done);
        }

        // Every event, in order, from any index, in pages or at once.
        const auto all = execution->eventRange();
        QVERIFY2(all, all ? "" : qPrintable(all.error().message));
        QCOMPARE(int(all->size()), count);
        QCOMPARE(all->first().type, QStringLiteral("started"));
        QCOMPARE(all->last().kind, Event::Kind::Done);
        QCOMPARE(stdoutOf(*all), expectedLines(lines));
        QList<Event> paged;
        for (int from = 0; from < count;) {
            const auto page = execution->eventRange(from, 7);
            QVERIFY(page && !page->isEmpty() && page->size() <= 7);
            paged += *page;
            from += int(page->size());
        }
        QCOMPARE(paged.size(), all->size());
        for (qsizetype i = 0; i < paged.size(); ++i)
            QCOMPARE(paged.at(i).toJson(), all->at(i).toJson());
        const auto tail = execution->eventRange(count - 1);
        QVERIFY(tail && tail->size() == 1 && tail->first().kind == Event::Kind::Done);
        const auto beyond = execution->eventRange(count);
        QVERIFY(beyond && beyond->isEmpty());

        // The document a client gets holds all of it too.
        const auto document = ExecutionDocument::object(*execution);
        QVERIFY2(document, document ? "" : qPrintable(document.error().message));
        QCOMPARE(document->value(QStringLiteral("stdout")).toString(), expectedLines(lines));
        QCOMPARE(document->value(QStringLiteral("events")).toArray().size(), count);
        QCOMPARE(document->value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    }

    void outputBytesCountEveryEvent()
    {
        m_engine->contexts().setEventWindowBytes(0);
        const ExecutionPtr execution = run(numberedLines(500));
        QVERIFY(execution);
        QCOMPARE(execution->outputBytes(), qint64(expectedLines(500).toUtf8().size()));
    }

    void negativeIndexIsBadRequest()
    {
        const ExecutionPtr execution = run(QStringLiteral("x = 1"));
        QVERIFY(execution);
        const auto range = execution->eventRange(-1);
        QVERIFY(!range);
        QCOMPARE(range.error().code, QStringLiteral("bad_request"));
    }

    void documentOfAFinishedRunMatchesItsEvents()
    {
        const ExecutionPtr execution = run(QStringLiteral(
                "import sys\nprint('out')\nprint('err', file=sys.stderr)\nraise ValueError('bad')\n"));
        QVERIFY(execution);
        const auto document = ExecutionDocument::object(*execution);
        QVERIFY(document);
        QCOMPARE(document->value(QStringLiteral("id")).toString(), execution->id());
        QCOMPARE(document->value(QStringLiteral("status")).toString(), QStringLiteral("error"));
        QCOMPARE(document->value(QStringLiteral("stdout")).toString(), QStringLiteral("out\n"));
        QCOMPARE(document->value(QStringLiteral("stderr")).toString(), QStringLiteral("err\n"));
        const QJsonObject error = document->value(QStringLiteral("error")).toObject();
        QCOMPARE(error.value(QStringLiteral("ename")).toString(), QStringLiteral("ValueError"));
        QCOMPARE(error.value(QStringLiteral("evalue")).toString(), QStringLiteral("bad"));
        QVERIFY(error.value(QStringLiteral("traceback")).isArray());
        QCOMPARE(document->value(QStringLiteral("result")), QJsonValue(QJsonValue::Null));
        QCOMPARE(document->value(QStringLiteral("state_lost")).toBool(), false);
        QCOMPARE(document->value(QStringLiteral("events")).toArray().size(), execution->eventCount());
        QCOMPARE(document->value(QStringLiteral("started_at")).toString(),
                 execution->startedAt().toString(Qt::ISODateWithMs));
        // Without events, the same summary.
        const auto summary = ExecutionDocument::object(*execution, false);
        QVERIFY(summary && !summary->contains(QStringLiteral("events")));
        QCOMPARE(summary->value(QStringLiteral("stdout")), document->value(QStringLiteral("stdout")));
    }

private:
    ExecutionPtr run(const QString &code)
    {
        RunRequest request;
        request.language = QStringLiteral("python");
        request.code = code;
        auto started = m_engine->contexts().run(request);
        if (!started) {
            qWarning("run refused: %s", qPrintable(started.error().message));
            return nullptr;
        }
        const ExecutionPtr execution = *started;
        if (!QTest::qWaitFor([&] { return execution->isFinished(); }, kRunTimeout)) {
            qWarning("the run did not finish: %s", qPrintable(describe(execution)));
            return nullptr;
        }
        return execution;
    }

    TestEngine m_engine;
};

QTEST_GUILESS_MAIN(tst_ExecutionHistory)
#include "tst_executionhistory.moc"
