// SPDX-License-Identifier: Apache-2.0
// The host side of the worker protocol, exercised against fixtures/echo_driver.py: a driver whose
// "code" is a tiny command language, so every mechanism can be driven deliberately.
#include "replhost/sdk/workerprocess.h"
#include "replhost/sdk/version.h"

#include "pipeprobe.h"

#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonValue>
#include <QPointer>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace replhost::sdk;
using replhost::Result;

namespace {

constexpr int kLong = 30000; // generous: CI machines stall

WorkerSpec echoSpec(const QStringList &extraArgs = {})
{
    WorkerSpec spec;
    spec.program = QStringLiteral(REPLHOST_TEST_PYTHON);
    spec.arguments = QStringList{QStringLiteral("-S"), QStringLiteral(REPLHOST_ECHO_DRIVER)}
                     + extraArgs;
    spec.startTimeoutMs = 20000;
    spec.interruptRepeatMs = 100;
    spec.interruptRepeats = 3;
    spec.interruptKillMs = 1500;
    spec.shutdownGraceMs = 300;
    return spec;
}

SessionOptions echoOptions()
{
    SessionOptions options;
    options.contextId = QStringLiteral("ctx-1");
    options.workingDirectory = QDir::tempPath();
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &key : env.keys())
        options.environment.insert(key, env.value(key));
    return options;
}

// Every event a session emits, in order.
class Recorder {
public:
    explicit Recorder(Session *session)
    {
        QObject::connect(session, &Session::event, &m_context,
                         [this](const Event &e) { events.append(e); });
    }

    QList<Event> events;

    QList<Event> of(const QString &id) const
    {
        QList<Event> result;
        for (const Event &e : events)
            if (e.executionId == id)
                result.append(e);
        return result;
    }
    int doneCount(const QString &id) const
    {
        int n = 0;
        for (const Event &e : of(id))
            n += e.kind == Event::Kind::Done;
        return n;
    }
    Event done(const QString &id) const
    {
        for (const Event &e : of(id))
            if (e.kind == Event::Kind::Done)
                return e;
        return {};
    }
    Event first(const QString &id, Event::Kind kind) const
    {
        for (const Event &e : of(id))
            if (e.kind == kind)
                return e;
        return {};
    }
    QString text(const QString &id, const QString &stream) const
    {
        QString t;
        for (const Event &e : of(id))
            if (e.kind == Event::Kind::Stream && e.fields.value("name").toString() == stream)
                t += e.fields.value("text").toString();
        return t;
    }
    // The events of `id` in order: the text of its streams, every other event as "<type>".
    QString order(const QString &id) const
    {
        QString t;
        for (const Event &e : of(id))
            t += e.kind == Event::Kind::Stream ? e.fields.value("text").toString()
                                               : QLatin1Char('<') + e.type + QLatin1Char('>');
        return t;
    }
    // Index of the first event after which nothing of `id` follows but (at most) its done.
    int indexOfDone(const QString &id) const
    {
        for (int i = 0; i < events.size(); ++i)
            if (events[i].executionId == id && events[i].kind == Event::Kind::Done)
                return i;
        return -1;
    }

private:
    QObject m_context;
};

// The echo driver in the mode a data-driven test asks for: marking every event, or leaving the
// mark out whenever both output pipes are empty (protocol §5).
WorkerSpec echoSpecFor(bool drainedUnmarked)
{
    return drainedUnmarked ? echoSpec({QStringLiteral("--drained-unmarked")}) : echoSpec();
}

void addMarkModes()
{
    QTest::addColumn<bool>("drainedUnmarked");
    QTest::newRow("marked") << false;
    QTest::newRow("drained-unmarked") << true;
}

ExecuteRequest request(const QString &id, const QString &code, int count = 1)
{
    ExecuteRequest r;
    r.id = id;
    r.code = code;
    r.executionCount = count;
    return r;
}

bool processGone(qint64 pid)
{
    // Gone, or a zombie waiting for a reaper that is not us (a killed grandchild whose parent
    // is gone belongs to init).
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close > 0 && line.mid(close + 2, 1) == "Z";
}

} // namespace

class tst_WorkerProcess : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<WorkerProcess> started(const WorkerSpec &spec = echoSpec(),
                                           const SessionOptions &options = echoOptions())
    {
        auto session = std::make_unique<WorkerProcess>(spec, options);
        QSignalSpy ready(session.get(), &Session::ready);
        QSignalSpy failed(session.get(), &Session::failed);
        session->start();
        if (!QTest::qWaitFor([&] { return ready.count() > 0 || failed.count() > 0; }, kLong))
            qWarning("worker did not start in time");
        if (!failed.isEmpty())
            qWarning() << "worker failed to start:" << failed.first().first().toString();
        return session;
    }

    // Runs code to its done and returns the recorder's events of that run.
    static bool run(WorkerProcess &session, Recorder &recorder, const ExecuteRequest &r,
                    int timeout = kLong)
    {
        session.execute(r);
        return QTest::qWaitFor([&] { return recorder.doneCount(r.id) > 0; }, timeout);
    }

private slots:
    void readyAfterHello()
    {
        auto session = std::make_unique<WorkerProcess>(echoSpec(), echoOptions());
        QSignalSpy ready(session.get(), &Session::ready);
        QSignalSpy states(session.get(), &Session::stateChanged);
        QCOMPARE(session->state(), Session::State::NotStarted);
        session->start();
        QCOMPARE(session->state(), Session::State::Starting);
        QVERIFY(session->pid() > 0);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kLong);
        QCOMPARE(session->state(), Session::State::Idle);
        const SessionInfo info = session->info();
        QCOMPARE(info.language, QStringLiteral("echo"));
        QCOMPARE(info.implementation, QStringLiteral("echo-fixture"));
        QCOMPARE(info.pid, session->pid());
        QVERIFY(info.capabilities.value("complete").toBool());
        QCOMPARE(states.count(), 2);
        QCOMPARE(states[0][0].value<Session::State>(), Session::State::Starting);
        QCOMPARE(states[1][0].value<Session::State>(), Session::State::Idle);
    }

    void outputArrivesBeforeDone_data() { addMarkModes(); }
    void outputArrivesBeforeDone()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        const QString code = QStringLiteral(
            "print:hello\n"
            "child:echo from-child; printf partial >&2; printf tail\n"
            "write:no-newline");
        // Repeated, because what is tested is a race between three pipes.
        for (int i = 0; i < 20; ++i) {
            const QString id = QStringLiteral("e%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, code, i + 1)));
            const QList<Event> events = recorder.of(id);
            QCOMPARE(events.first().kind, Event::Kind::Started);
            QCOMPARE(events.last().kind, Event::Kind::Done);
            QCOMPARE(recorder.text(id, "stdout"),
                     QStringLiteral("hello\nfrom-child\ntailno-newline"));
            QCOMPARE(recorder.text(id, "stderr"), QStringLiteral("partial"));
            const Event done = recorder.done(id);
            QCOMPARE(done.fields.value("status").toString(), QStringLiteral("ok"));
            QCOMPARE(done.fields.value("execution_count").toInt(), i + 1);
            QCOMPARE(done.fields.value("streams_synced").toBool(), true);
            QCOMPARE(done.fields.value("state_lost").toBool(), false);
            QVERIFY(!done.fields.contains("mark"));
            QCOMPARE(session->state(), Session::State::Idle);
        }
        QTest::qWait(200);
        // Nothing after done, for no run; and nothing was mistaken for background output.
        for (int i = 0; i < 20; ++i) {
            const QString id = QStringLiteral("e%1").arg(i);
            QCOMPARE(recorder.of(id).last().kind, Event::Kind::Done);
        }
        for (const Event &e : recorder.events)
            QVERIFY2(!e.executionId.isEmpty(), qPrintable(e.fields.value("text").toString()));
    }

    void displayIsOrderedBetweenPrints_data() { addMarkModes(); }
    void displayIsOrderedBetweenPrints()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        for (int i = 0; i < 10; ++i) {
            const QString id = QStringLiteral("d%1").arg(i);
            QVERIFY(run(*session, recorder,
                        request(id, "print:aaa\ndisplay:img\nprint:bbb\nresult:42")));
            QStringList order;
            for (const Event &e : recorder.of(id)) {
                if (e.kind == Event::Kind::Stream)
                    order.append(e.fields.value("text").toString().trimmed());
                else
                    order.append(e.type);
            }
            order.removeAll(QString());
            QCOMPARE(order, QStringList({"started", "aaa", "display", "bbb", "result", "done"}));
            QCOMPARE(recorder.first(id, Event::Kind::Display).fields.value("data").toObject()
                         .value("text/plain").toString(),
                     QStringLiteral("img"));
            QVERIFY(!recorder.first(id, Event::Kind::Display).fields.contains("mark"));
        }
    }

    void outputAfterAMarkWaitsForItsEvent_data() { addMarkModes(); }
    void outputAfterAMarkWaitsForItsEvent()
    {
        // The host reads a mark while its event is not written yet, then the text written after
        // the mark, and only then the event: the text still goes after the event.
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        for (int i = 0; i < 3; ++i) {
            const QString id = QStringLiteral("m%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, "markahead", i + 1)));
            QCOMPARE(recorder.order(id), QStringLiteral("<started>before\n<display>after\n<done>"));
            QCOMPARE(recorder.done(id).fields.value("streams_synced").toBool(), true);
        }
    }

    void outputAfterAMarkWithoutEventIsNotHeldBack_data() { addMarkModes(); }
    void outputAfterAMarkWithoutEventIsNotHeldBack()
    {
        // A driver that writes a mark and never its event: the text after the mark reaches the
        // host before the run's done, and during a long run within the sync grace.
        QFETCH(bool, drainedUnmarked);
        WorkerSpec spec = echoSpecFor(drainedUnmarked);
        spec.syncGraceMs = 300;
        auto session = started(spec);
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("o1", "orphanmark")));
        QCOMPARE(recorder.text("o1", "stdout"), QStringLiteral("after\n"));
        QVERIFY(recorder.of("o1").last().kind == Event::Kind::Done);

        const QString id = QStringLiteral("o2");
        session->execute(request(id, "orphanmark:3", 2));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.text(id, "stdout"), QStringLiteral("after\n"), 2000);
        QCOMPARE(recorder.doneCount(id), 0);
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount(id), 1, 10000);
    }

    // An owner about to delete a session takes in what the worker wrote that the host has not
    // read yet; without it, the run's last output would go with the worker.
    void writtenOutputIsTakenInOnRequest()
    {
        auto session = started(echoSpec());
        Recorder recorder(session.get());
        session->execute(request("w", "raw:last words\nstderr:and a note\nsleep:30"));
        // The event loop does not turn, so nothing is read until asked for.
        QElapsedTimer waited;
        waited.start();
        while ((replhost::testing::unreadBytesInPipe(session->pid(), STDOUT_FILENO) <= 0
                || replhost::testing::unreadBytesInPipe(session->pid(), STDERR_FILENO) <= 0)
               && waited.elapsed() < kLong)
            QThread::msleep(5);
        QCOMPARE(recorder.text("w", "stdout"), QString());
        session->takeInWrittenOutput();
        QCOMPARE(recorder.text("w", "stdout"), QStringLiteral("last words"));
        QCOMPARE(recorder.text("w", "stderr"), QStringLiteral("and a note\n"));
        QCOMPARE(recorder.doneCount("w"), 0);
        // Found by name too, as hosts call it.
        QVERIFY(QMetaObject::invokeMethod(session.get(), "takeInWrittenOutput", Qt::DirectConnection));
    }

    void backgroundOutputBelongsToNoExecution_data() { addMarkModes(); }
    void backgroundOutputBelongsToNoExecution()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder,
                    request("bg", "child:(sleep 0.3; echo late) &\nprint:now")));
        QCOMPARE(recorder.text("bg", "stdout"), QStringLiteral("now\n"));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.text(QString(), "stdout"), QStringLiteral("late\n"),
                                  kLong);
    }

    void utf8SplitAcrossReadsIsKept_data() { addMarkModes(); }
    void utf8SplitAcrossReadsIsKept()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("u", "split")));
        QCOMPARE(recorder.text("u", "stdout"), QStringLiteral("é €🎉\n"));
        int streamEvents = 0;
        for (const Event &e : recorder.of("u"))
            streamEvents += e.kind == Event::Kind::Stream;
        QVERIFY(streamEvents >= 1);
    }

    void invalidUtf8BecomesReplacementCharacters()
    {
        auto session = started();
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("bad", "invalid\nprint:ok")));
        QCOMPARE(recorder.text("bad", "stdout"), QStringLiteral("a\ufffdb\nok\n"));
    }

    void missingMarkIsReleasedAfterGrace()
    {
        WorkerSpec spec = echoSpec();
        spec.syncGraceMs = 300;
        auto session = started(spec);
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("lost", "print:out\nstderr:err\nlostmark")));
        const Event done = recorder.done("lost");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("ok"));
        QCOMPARE(done.fields.value("streams_synced").toBool(true), false);
        QCOMPARE(recorder.text("lost", "stdout"), QStringLiteral("out\n"));
        QCOMPARE(recorder.text("lost", "stderr"), QStringLiteral("err\n"));
        QCOMPARE(recorder.of("lost").last().kind, Event::Kind::Done);
        // The late stream catches up with the next run's marks; nothing is lost or misplaced.
        QVERIFY(run(*session, recorder, request("next", "print:a\nstderr:b", 2)));
        QCOMPARE(recorder.done("next").fields.value("streams_synced").toBool(), true);
        QCOMPARE(recorder.text("next", "stderr"), QStringLiteral("b\n"));
    }

    void partialMarkAtTheEndIsText_data() { addMarkModes(); }
    void partialMarkAtTheEndIsText()
    {
        // Output that ends like the start of a mark is held back until the next bytes decide
        // it; nothing may keep it behind done.
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        for (int i = 0; i < 5; ++i) {
            const QString id = QStringLiteral("t%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, "print:head\nescapetail", i + 1)));
            QCOMPARE(recorder.text(id, "stdout"), QStringLiteral("head\ntail\x1b]5253;rh;"));
            QCOMPARE(recorder.of(id).last().kind, Event::Kind::Done);
            QCOMPARE(recorder.done(id).fields.value("streams_synced").toBool(), true);
        }
        QTest::qWait(100);
        QCOMPARE(recorder.text(QString(), "stdout"), QString());
    }

    void drainedDoneNeedsNoMark()
    {
        // A run that writes nothing leaves both pipes empty, so its done goes without a mark:
        // released all the same, in order, and synced.
        auto session = started(echoSpecFor(true));
        Recorder recorder(session.get());
        for (int i = 0; i < 5; ++i) {
            const QString id = QStringLiteral("q%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, "sleep:0", i + 1)));
            QStringList order;
            for (const Event &e : recorder.of(id))
                order << e.type;
            QCOMPARE(order, QStringList({"started", "done"}));
            QCOMPARE(recorder.done(id).fields.value("streams_synced").toBool(), true);
            QVERIFY(!recorder.done(id).fields.contains("mark"));
        }
        // No mark was written for any of them.
        QVERIFY(run(*session, recorder, request("count", "marks", 6)));
        QCOMPARE(recorder.text("count", "stdout"), QStringLiteral("0\n"));
        // Rich events keep their marks: output written after them must not overtake them. (The
        // done of the run before may have had one too: its output was "0".)
        QVERIFY(run(*session, recorder, request("rich", "display:d\nresult:r\nmarks", 7)));
        QVERIFY2(recorder.text("rich", "stdout").trimmed().toInt() >= 2,
                 qPrintable(recorder.text("rich", "stdout")));
        QVERIFY(recorder.text(QString(), "stdout").isEmpty());
    }

    void outputAfterARichEventStaysAfterIt_data() { addMarkModes(); }
    void outputAfterARichEventStaysAfterIt()
    {
        // The next run is started from the slot of a done that then blocks, so the driver runs
        // all of it while the host is away: the display event leaves with both pipes empty
        // (nothing was written yet) and "d" follows it at once. The host finds both waiting.
        // Only a mark on the display event can put "d" after it, so a driver must not leave it
        // out, empty pipes or not.
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        int next = 0;
        QObject::connect(session.get(), &Session::event, session.get(), [&](const Event &e) {
            if (e.kind != Event::Kind::Done || next >= 3)
                return;
            ++next;
            session->execute(request(QStringLiteral("rr%1").arg(next), "display:x\nraw:d",
                                     next + 1));
            QThread::msleep(200);
        });
        QVERIFY(run(*session, recorder, request("first", "sleep:0")));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("rr3"), 1, kLong);
        for (int i = 1; i <= 3; ++i) {
            const QString id = QStringLiteral("rr%1").arg(i);
            QCOMPARE(recorder.order(id), QStringLiteral("<started><display>d<done>"));
        }
    }

    void drainedUnmarkedOrderUnderRaces()
    {
        // Many short runs whose output comes from the driver and from a child, on both streams,
        // with rich events in between: the host reads fd 1, fd 2 and fd 4 in every order. Each
        // run's output must be whole, in order, attributed to it, and before its done.
        auto session = started(echoSpecFor(true));
        Recorder recorder(session.get());
        // "d" is written straight to the pipe right after the display event.
        const QString code = QStringLiteral("print:a\nchild:printf b; printf c >&2\n"
                                            "display:x\nraw:d\nstderr:e");
        for (int i = 0; i < 150; ++i) {
            const QString id = QStringLiteral("r%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, code, i + 1)));
            QCOMPARE(recorder.text(id, "stdout"), QStringLiteral("a\nbd"));
            QCOMPARE(recorder.text(id, "stderr"), QStringLiteral("ce\n"));
            // stdout and the events in the order they came; the display comes after "a\nb" and
            // before "d".
            QString order;
            for (const Event &e : recorder.of(id)) {
                if (e.kind != Event::Kind::Stream)
                    order += QLatin1Char('<') + e.type + QLatin1Char('>');
                else if (e.fields.value("name").toString() == QLatin1String("stdout"))
                    order += e.fields.value("text").toString();
            }
            QCOMPARE(order, QStringLiteral("<started>a\nb<display>d<done>"));
            QCOMPARE(recorder.done(id).fields.value("streams_synced").toBool(), true);
        }
        QTest::qWait(100);
        for (const Event &e : recorder.events)
            QVERIFY2(!e.executionId.isEmpty(), qPrintable(e.fields.value("text").toString()));
    }

    void unmarkedEventWaitsForBytesInHand()
    {
        // The host reads a stream whose bytes lead it to fd 4 (a mark), and finds there an
        // event without a mark: bytes of that read it has not handled yet were written before
        // the event and must come before it. A slot that blocks on the text before the mark
        // holds the host there, with "tail" in hand, while the driver writes the events.
        auto session = started(echoSpecFor(true));
        Recorder recorder(session.get());
        QObject::connect(session.get(), &Session::event, session.get(), [](const Event &e) {
            if (e.kind == Event::Kind::Stream && e.fields.value("text").toString().contains("nap"))
                QThread::msleep(300);
        });
        for (int i = 0; i < 3; ++i) {
            const QString id = QStringLiteral("h%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, "handoff", i + 1)));
            QCOMPARE(recorder.order(id), QStringLiteral("<started>nap\n<display>tail<done>"));
            QCOMPARE(recorder.done(id).fields.value("streams_synced").toBool(), true);
        }
        // Text read with the unmarked event in hand, but after the mark of a later event, goes
        // after that later event.
        for (int i = 0; i < 3; ++i) {
            const QString id = QStringLiteral("k%1").arg(i);
            QVERIFY(run(*session, recorder, request(id, "handoff2", i + 1)));
            QString order;
            for (const Event &e : recorder.of(id)) {
                if (e.kind == Event::Kind::Display)
                    order += e.fields.value("data").toObject().value("text/plain").toString();
                else if (e.kind != Event::Kind::Stream)
                    order += QLatin1Char('<') + e.type + QLatin1Char('>');
                else
                    order += e.fields.value("text").toString();
            }
            QCOMPARE(order, QStringLiteral("<started>nap\nonetwoafter<done>"));
        }
        QTest::qWait(100);
        QVERIFY(recorder.text(QString(), "stdout").isEmpty());
    }

    void nonAsciiCodeRoundTrips()
    {
        auto session = started();
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("n", QStringLiteral("print:héllo 🎉 漢"))));
        QCOMPARE(recorder.text("n", "stdout"), QStringLiteral("héllo 🎉 漢\n"));
    }

    void wrongNonceMarkIsText_data() { addMarkModes(); }
    void wrongNonceMarkIsText()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("f", "fakemark")));
        const QString out = recorder.text("f", "stdout");
        QVERIFY2(out.startsWith(QStringLiteral("\x1b]5253;rh;")), qPrintable(out));
        QVERIFY(out.endsWith(QStringLiteral(";99\x07" "after\n")));
    }

    void envAndCwdAreApplied()
    {
        SessionOptions options = echoOptions();
        options.environment.remove("LANG");
        options.environment.insert("TERM", "xterm-256color");
        auto session = started(echoSpec(), options);
        Recorder recorder(session.get());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString cwd = QDir(dir.path()).canonicalPath();

        ExecuteRequest r = request("env1", "env:FOO\nenv:TOKEN\ncwd\nenv:TERM\nenv:LANG\n"
                                           "env:REPLHOST_CONTEXT_ID\nenv:GIT_TERMINAL_PROMPT");
        r.env.context.set.insert("FOO", QStringLiteral("1 'quoted' \"é\""));
        r.env.exec.set.insert("TOKEN", "x");
        r.cwd = cwd;
        QVERIFY(run(*session, recorder, r));
        QCOMPARE(recorder.text("env1", "stdout"),
                 QStringLiteral("1 'quoted' \"é\"\nx\n") + cwd
                     + QStringLiteral("\ndumb\nC.UTF-8\nctx-1\n0\n"));
        QCOMPARE(recorder.done("env1").fields.value("cwd").toString(), cwd);

        // The exec layer is gone after its run, the context layer and the cwd stay.
        QVERIFY(run(*session, recorder, request("env2", "env:FOO\nenv:TOKEN\ncwd", 2)));
        QCOMPARE(recorder.text("env2", "stdout"),
                 QStringLiteral("1 'quoted' \"é\"\n<unset>\n") + cwd + '\n');
    }

    void errorEndsRunNotWorker_data() { addMarkModes(); }
    void errorEndsRunNotWorker()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("x", "print:a\nfail:boom")));
        QCOMPARE(recorder.first("x", Event::Kind::Error).fields.value("evalue").toString(),
                 QStringLiteral("boom"));
        QCOMPARE(recorder.done("x").fields.value("status").toString(), QStringLiteral("error"));
        QCOMPARE(recorder.done("x").fields.value("state_lost").toBool(), false);
        QCOMPARE(session->state(), Session::State::Idle);
    }

    void interruptStopsRunAndKeepsWorker_data() { addMarkModes(); }
    void interruptStopsRunAndKeepsWorker()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        session->execute(request("loop", "busyloop"));
        QTRY_VERIFY_WITH_TIMEOUT(!recorder.first("loop", Event::Kind::Started).type.isEmpty(),
                                 kLong);
        session->interrupt("other-id"); // not the running one: ignored
        QCOMPARE(session->state(), Session::State::Busy);
        session->interrupt("loop");
        QCOMPARE(session->state(), Session::State::Interrupting);
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("loop"), 1, kLong);
        const Event done = recorder.done("loop");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("interrupted"));
        QCOMPARE(done.fields.value("state_lost").toBool(), false);
        QCOMPARE(recorder.first("loop", Event::Kind::Error).fields.value("ename").toString(),
                 QStringLiteral("KeyboardInterrupt"));
        QCOMPARE(session->state(), Session::State::Idle);
        QVERIFY(run(*session, recorder, request("after", "print:still here", 2)));
        QCOMPARE(recorder.text("after", "stdout"), QStringLiteral("still here\n"));
    }

    void interruptRightAfterExecute_data()
    {
        QTest::addColumn<bool>("implicitStarted");
        // The host waits for the driver's `started` before it signals.
        QTest::newRow("started-sent") << false;
        // The host signals at once, most likely before the driver has armed SIGINT: the
        // interrupt frame waiting on fd 3 must stop the run all the same.
        QTest::newRow("implicit-started") << true;
    }

    void interruptRightAfterExecute()
    {
        QFETCH(bool, implicitStarted);
        auto session = started(implicitStarted ? echoSpec({QStringLiteral("--implicit-started")})
                                               : echoSpec());
        Recorder recorder(session.get());
        session->execute(request("early", "busyloop"));
        session->interrupt("early"); // no `started` can have been read yet
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("early"), 1, kLong);
        QCOMPARE(recorder.done("early").fields.value("status").toString(),
                 QStringLiteral("interrupted"));
        QCOMPARE(recorder.done("early").fields.value("state_lost").toBool(), false);
        QCOMPARE(recorder.of("early").first().kind, Event::Kind::Started);
        QVERIFY(run(*session, recorder, request("after", "print:still here")));
        QCOMPARE(recorder.done("after").fields.value("status").toString(), QStringLiteral("ok"));
        QCOMPARE(recorder.text("after", "stdout"), QStringLiteral("still here\n"));
    }

    void implicitStartedComesFromTheHost()
    {
        auto session = started(echoSpec({QStringLiteral("--implicit-started")}));
        QVERIFY(session->info().capabilities.value("implicit_started").toBool());
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("quiet", "cwd", 7)));
        QVERIFY(run(*session, recorder, request("loud", "print:a\ndisplay:d\nstderr:b", 8)));
        for (const auto &[id, count] :
             {std::pair{QStringLiteral("quiet"), 7}, std::pair{QStringLiteral("loud"), 8}}) {
            const QList<Event> events = recorder.of(id);
            QVERIFY(!events.isEmpty());
            QCOMPARE(events.first().kind, Event::Kind::Started);
            QCOMPARE(events.first().fields.value("execution_count").toInt(), count);
            QCOMPARE(int(std::count_if(events.begin(), events.end(), [](const Event &e) {
                         return e.kind == Event::Kind::Started;
                     })),
                     1);
            QCOMPARE(recorder.done(id).fields.value("status").toString(), QStringLiteral("ok"));
        }
        QCOMPARE(recorder.text("loud", "stdout"), QStringLiteral("a\n"));
        QCOMPARE(recorder.text("loud", "stderr"), QStringLiteral("b\n"));
    }

    void implicitStartedComesWhileTheRunIsSilent_data()
    {
        QTest::addColumn<bool>("waitingLoop");
        // QEventLoop::exec(): the loop waits for events, so the `started` goes out before it does.
        QTest::newRow("waiting loop") << true;
        // QTest::qWaitFor() spins processEvents() without waiting for events.
        QTest::newRow("spinning loop") << false;
    }

    void implicitStartedComesWhileTheRunIsSilent()
    {
        QFETCH(bool, waitingLoop);
        auto session = started(echoSpec({QStringLiteral("--implicit-started")}));
        Recorder recorder(session.get());
        session->execute(request("quiet", "sleep:30", 3));
        QVERIFY(recorder.of("quiet").isEmpty());  // never from inside execute()
        const auto hasStarted = [&] {
            return !recorder.first("quiet", Event::Kind::Started).type.isEmpty();
        };
        if (waitingLoop) {
            QEventLoop loop;
            QObject context;
            QObject::connect(session.get(), &Session::event, &context, [&] { loop.quit(); });
            QTimer::singleShot(kLong, &loop, &QEventLoop::quit);
            loop.exec();
        } else {
            QVERIFY(QTest::qWaitFor(hasStarted, kLong));
        }
        QVERIFY(hasStarted());
        QCOMPARE(recorder.first("quiet", Event::Kind::Started).fields.value("execution_count")
                         .toInt(),
                 3);
        QCOMPARE(recorder.doneCount("quiet"), 0);  // the cell sleeps for half a minute
        session->interrupt("quiet");
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("quiet"), 1, kLong);
        QCOMPARE(recorder.of("quiet").first().kind, Event::Kind::Started);
    }

    void interruptRepeatsThenKills()
    {
        // Python runs a signal handler once for SIGINTs that arrive before it gets to run, so
        // on a loaded machine 100 ms between them could show two as one: here they are further
        // apart.
        WorkerSpec spec = echoSpec();
        spec.interruptRepeatMs = 500;
        spec.interruptKillMs = 2500;
        auto session = started(spec);
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        const qint64 pid = session->pid();
        session->execute(request("stubborn", "ignoreint"));
        QTRY_VERIFY_WITH_TIMEOUT(!recorder.first("stubborn", Event::Kind::Started).type.isEmpty(),
                                 kLong);
        session->interrupt("stubborn");
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("stubborn"), 1, kLong);

        // Three SIGINTs in all (interruptRepeats), each seen by the driver, then the kill.
        QCOMPARE(recorder.text("stubborn", "stderr"), QStringLiteral("sigint\nsigint\nsigint\n"));
        const Event error = recorder.first("stubborn", Event::Kind::Error);
        QCOMPARE(error.fields.value("ename").toString(), QStringLiteral("WorkerKilled"));
        QVERIFY(error.fields.value("evalue").toString().contains("state is lost"));
        const Event done = recorder.done("stubborn");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("interrupted"));
        QCOMPARE(done.fields.value("state_lost").toBool(), true);
        QCOMPARE(recorder.of("stubborn").last().kind, Event::Kind::Done);
        QCOMPARE(session->state(), Session::State::Dead);
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), false);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kLong);
        QTRY_COMPARE_WITH_TIMEOUT(session->pid(), qint64(0), kLong);
    }

    void workerExitDuringRunReportsStateLost()
    {
        auto session = started();
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        QVERIFY(run(*session, recorder,
                    request("die", "print:last words\nstderr:about to die\nexit:3")));
        QCOMPARE(recorder.text("die", "stdout"), QStringLiteral("last words\n"));
        const Event error = recorder.first("die", Event::Kind::Error);
        QCOMPARE(error.fields.value("ename").toString(), QStringLiteral("WorkerDied"));
        QCOMPARE(error.fields.value("evalue").toString(), QStringLiteral("exited with code 3"));
        QVERIFY(error.fields.value("traceback").toArray().contains(QStringLiteral("about to die")));
        const Event done = recorder.done("die");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("error"));
        QCOMPARE(done.fields.value("state_lost").toBool(), true);
        QCOMPARE(recorder.of("die").last().kind, Event::Kind::Done);
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), false);
        QVERIFY(terminated[0][1].toString().contains("exited with code 3"));
        QCOMPARE(session->state(), Session::State::Dead);

        // A dead session answers, but runs nothing.
        session->execute(request("next", "print:x", 2));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("next"), 1, kLong);
        QCOMPARE(recorder.done("next").fields.value("status").toString(),
                 QStringLiteral("aborted"));
    }

    void workerKilledBySignalIsNamed()
    {
        auto session = started();
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("k", "child:kill -SEGV $PPID\nsleep:10")));
        QCOMPARE(recorder.first("k", Event::Kind::Error).fields.value("evalue").toString(),
                 QStringLiteral("killed by signal 11 (SIGSEGV)"));
    }

    void idleWorkerExitIsTerminated()
    {
        auto session = started();
        QSignalSpy terminated(session.get(), &Session::terminated);
        Recorder recorder(session.get());
        ::kill(pid_t(session->pid()), SIGKILL);
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), false);
        QVERIFY(terminated[0][1].toString().contains("SIGKILL"));
        QCOMPARE(session->state(), Session::State::Dead);
        for (const Event &e : recorder.events)
            QVERIFY(e.kind != Event::Kind::Done);
    }

    void malformedFrameKillsWorker()
    {
        auto session = started();
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        const qint64 pid = session->pid();
        // What is in the pipes when the worker is killed still belongs to the run.
        QVERIFY(run(*session, recorder, request("g", "child:echo before\ngarbage\nsleep:30")));
        QCOMPARE(recorder.first("g", Event::Kind::Error).fields.value("ename").toString(),
                 QStringLiteral("ProtocolError"));
        const Event done = recorder.done("g");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("error"));
        QCOMPARE(done.fields.value("state_lost").toBool(), true);
        QCOMPARE(recorder.text("g", "stdout"), QStringLiteral("before\n"));
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), false);
        QVERIFY(terminated[0][1].toString().contains("protocol"));
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kLong);
    }

    // Code in a context can write anything on fd 4, not only its driver. Each of these frames
    // is a protocol error: the worker is killed, the run it hit ends with a ProtocolError saying
    // why, and nothing the frame said becomes an event.
    void forgedFrameIsAProtocolError_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("reason");  // part of the ProtocolError's evalue
        const auto frame = [](const QString &json) { return QStringLiteral("frame:") + json; };
        const auto hex = [](const QByteArray &bytes) {
            return QStringLiteral("rawframe:") + QString::fromLatin1(bytes.toHex());
        };
        QString manyMimeTypes;
        for (int i = 0; i < 65; ++i)
            manyMimeTypes += QStringLiteral("%1\"text/x-%2\":\"x\"").arg(i ? "," : "").arg(i);
        QString longTraceback;
        for (int i = 0; i < 100001; ++i)
            longTraceback += i ? QStringLiteral(",\"\"") : QStringLiteral("\"\"");
        QString manyMembers;
        for (int i = 0; i < 64; ++i)
            manyMembers += QStringLiteral(",\"k%1\":0").arg(i);

        QTest::newRow("done of another execution")
                << frame(R"({"type":"done","id":"other","status":"ok"})")
                << R"(a `done` for execution "other" while execution "f" runs)";
        QTest::newRow("result of another execution")
                << frame(R"({"type":"result","id":"other","data":{"text/plain":"1"}})")
                << R"(a `result` for execution "other")";
        QTest::newRow("started of another execution")
                << frame(R"({"type":"started","id":"other"})")
                << R"(a `started` for execution "other")";
        QTest::newRow("second started") << frame(R"({"type":"started","id":"$ID"})")
                                        << R"(a second `started` for execution "f")";
        QTest::newRow("done before started")
                << QStringLiteral(R"(early:{"type":"done","id":"$ID","status":"ok"})")
                << R"(a `done` for execution "f" before its `started`)";
        QTest::newRow("result before started")
                << QStringLiteral(R"(early:{"type":"result","id":"$ID","data":{"text/plain":"1"}})")
                << "before its `started`";
        QTest::newRow("second hello") << frame(R"({"type":"hello","protocol":1})")
                                      << "a second `hello`";
        QTest::newRow("one of the host's own event types")
                << frame(R"({"type":"state_reset","id":"$ID","reason":"forged"})")
                << R"(a frame of unknown type "state_reset")";
        QTest::newRow("stream, which only the host makes")
                << frame(R"({"type":"stream","id":"$ID","name":"stdout","text":"forged"})")
                << R"(unknown type "stream")";
        QTest::newRow("SSE lines in the type")
                << frame(R"({"type":"x\ndata: {}\n\nevent: done","id":"$ID"})")
                << R"(unknown type "x?data: {}??event: done")";
        QTest::newRow("frame without a type") << frame(R"({"id":"$ID"})")
                                              << "a frame without a `type`";
        QTest::newRow("status that is none")
                << frame(R"({"type":"done","id":"$ID","status":"forged"})")
                << R"(`status` is "forged", not ok, error or interrupted)";
        QTest::newRow("execution count as text")
                << frame(R"({"type":"done","id":"$ID","execution_count":"1"})")
                << "`execution_count` is not an integer";
        QTest::newRow("negative mark")
                << frame(R"({"type":"display","id":"$ID","data":{"text/plain":"x"},"mark":-1})")
                << "`mark` is not an integer";
        QTest::newRow("long id")
                << frame(QStringLiteral(R"({"type":"display","id":"%1","data":{}})")
                                 .arg(QString(300, QLatin1Char('x'))))
                << "`id` is longer than 256 characters";
        QTest::newRow("key that is not a MIME type")
                << frame(R"({"type":"display","id":"$ID","data":{"text plain":"x"}})")
                << R"(`data` has "text plain" as a key, which is not a MIME type)";
        QTest::newRow("too many MIME types")
                << frame(QStringLiteral(R"({"type":"display","id":"$ID","data":{%1}})")
                                 .arg(manyMimeTypes))
                << "`data` has more than 64 MIME types";
        QTest::newRow("update without a display id")
                << frame(R"({"type":"display","id":"$ID","data":{"text/plain":"x"},"update":true})")
                << "`update` is true without a `display_id` to update";
        QTest::newRow("display id that is not text")
                << frame(R"({"type":"display","id":"$ID","data":{"text/plain":"x"},"display_id":7})")
                << "`display_id` is not a string";
        QTest::newRow("clear whose wait is not a boolean")
                << frame(R"({"type":"clear_output","id":"$ID","wait":"yes"})")
                << "`wait` is not a boolean";
        QTest::newRow("traceback entry that is not text")
                << frame(R"({"type":"error","id":"$ID","ename":"E","traceback":[1]})")
                << "`traceback` has an entry that is not a string";
        QTest::newRow("traceback too long")
                << frame(QStringLiteral(R"({"type":"error","id":"$ID","ename":"E","traceback":[%1]})")
                                 .arg(longTraceback))
                << "`traceback` has more than 100000 entries";
        QTest::newRow("too many members")
                << frame(QStringLiteral(R"({"type":"display","id":"$ID","data":{}%1})")
                                 .arg(manyMembers))
                << "a frame with more than 64 members";
        QTest::newRow("body that is not an object") << hex("5\n[1,2]")
                                                    << "frame body is not a JSON object";
        QTest::newRow("length over the limit") << hex("67108865\n")
                                               << "exceeds the limit of 67108864 bytes";
    }

    void forgedFrameIsAProtocolError()
    {
        QFETCH(QString, code);
        QFETCH(QString, reason);
        auto session = started();
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        const qint64 pid = session->pid();
        // The driver itself would not end the run for 30 s: the frame ends it.
        QVERIFY(run(*session, recorder, request("f", code + QStringLiteral("\nsleep:30"))));
        QCOMPARE(recorder.doneCount("f"), 1);
        const Event error = recorder.first("f", Event::Kind::Error);
        QCOMPARE(error.fields.value("ename").toString(), QStringLiteral("ProtocolError"));
        QVERIFY2(error.fields.value("evalue").toString().contains(reason),
                 qPrintable(error.fields.value("evalue").toString()));
        const Event done = recorder.done("f");
        QCOMPARE(done.fields.value("status").toString(), QStringLiteral("error"));
        QCOMPARE(done.fields.value("state_lost").toBool(), true);
        for (const Event &e : recorder.events) {
            QVERIFY2(e.executionId == QLatin1String("f") || e.executionId.isEmpty(),
                     qPrintable(e.executionId));
            QVERIFY2(e.kind == Event::Kind::Started || e.kind == Event::Kind::Stream
                             || e.kind == Event::Kind::Error || e.kind == Event::Kind::Done,
                     qPrintable(e.type));
            if (e.kind == Event::Kind::Stream)
                QVERIFY(!e.fields.value("text").toString().contains("forged"));
        }
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), false);
        QVERIFY(terminated[0][1].toString().contains(reason));
        QCOMPARE(session->state(), Session::State::Dead);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kLong);
    }

    // Code can end its own run early (it owns the run), but only once: the driver's own done
    // then comes as a second one, which is a protocol error, and the worker is replaced.
    void forgedDoneOfTheRunCountsOnce()
    {
        auto session = started();
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        QVERIFY(run(*session, recorder,
                    request("f", R"(frame:{"type":"done","id":"$ID","status":"ok"})")));
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QVERIFY(terminated[0][1].toString().contains(R"(a second `done` for execution "f")"));
        QCOMPARE(recorder.doneCount("f"), 1);
        QCOMPARE(session->state(), Session::State::Dead);
    }

    // A display can carry an id, a later display with that id and "update" replaces it, and a
    // run can clear what it showed: all three reach the session's events as the driver sent them.
    void displayUpdatesAndClearsArePassedOn()
    {
        auto session = started();
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder,
                    request("u", R"(frame:{"type":"display","id":"$ID","data":{"text/plain":"0%"},"display_id":"bar"}
frame:{"type":"display","id":"$ID","data":{"text/plain":"99%"},"display_id":"bar","update":true}
frame:{"type":"clear_output","id":"$ID","wait":true})")));
        QCOMPARE(recorder.done("u").fields.value("status").toString(), QStringLiteral("ok"));
        QList<Event> shown;
        for (const Event &e : recorder.of("u"))
            if (e.kind == Event::Kind::Display || e.kind == Event::Kind::ClearOutput)
                shown << e;
        QCOMPARE(shown.size(), 3);
        QCOMPARE(shown[0].fields.value("display_id").toString(), QStringLiteral("bar"));
        QVERIFY(!shown[0].fields.contains("update"));
        QCOMPARE(shown[1].fields.value("display_id").toString(), QStringLiteral("bar"));
        QCOMPARE(shown[1].fields.value("update").toBool(), true);
        QCOMPARE(shown[1].fields.value("data").toObject().value("text/plain").toString(),
                 QStringLiteral("99%"));
        QCOMPARE(shown[2].type, QStringLiteral("clear_output"));
        QCOMPARE(shown[2].fields.value("wait").toBool(), true);
    }

    // The host tells the driver which additions to protocol 1 it takes.
    void initNamesTheProtocolRevision()
    {
        auto session = started();
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("r", "revision")));
        QCOMPARE(recorder.text("r", "stdout"),
                 QStringLiteral("revision:%1\n").arg(replhost::sdk::kWorkerProtocolRevision));
    }

    // ExecuteRequest::allowInput came with SDK 1.3: a plugin built against an older SDK may pass
    // requests of its own that end before it, so it is read only for plugins that have it (the
    // host names the plugin's SDK in the settings).
    void allowInputIsReadOnlyForPluginsThatHaveIt_data()
    {
        QTest::addColumn<QJsonValue>("sdkVersion");
        QTest::addColumn<QString>("sent");
        QTest::newRow("no version named") << QJsonValue(QJsonValue::Undefined) << "true";
        QTest::newRow("1.3") << QJsonValue("1.3") << "true";
        QTest::newRow("1.12") << QJsonValue("1.12") << "true";
        QTest::newRow("2.0") << QJsonValue("2.0") << "true";
        QTest::newRow("1.2") << QJsonValue("1.2") << "false";
        QTest::newRow("1.0") << QJsonValue("1.0") << "false";
    }
    void allowInputIsReadOnlyForPluginsThatHaveIt()
    {
        QFETCH(QJsonValue, sdkVersion);
        QFETCH(QString, sent);
        SessionOptions options = echoOptions();
        if (!sdkVersion.isUndefined())
            options.settings.insert(QStringLiteral("sdk_version"), sdkVersion);
        auto session = started(echoSpec(), options);
        Recorder recorder(session.get());
        ExecuteRequest asking = request("r", "inputflag");
        asking.allowInput = true;
        QVERIFY(run(*session, recorder, asking));
        QCOMPARE(recorder.text("r", "stdout"), QStringLiteral("input:%1\n").arg(sent));
        QVERIFY(run(*session, recorder, request("s", "inputflag")));
        QCOMPARE(recorder.text("s", "stdout"), QStringLiteral("input:false\n"));
    }

    // A display or error that names no execution comes from a thread of an earlier run; it is
    // dropped, and neither the run nor the worker suffer for it.
    void eventOfNoExecutionIsDropped_data()
    {
        QTest::addColumn<QString>("frame");
        QTest::newRow("display, null id")
                << R"({"type":"display","id":null,"data":{"text/plain":"late"}})";
        QTest::newRow("display, no id") << R"({"type":"display","data":{"text/plain":"late"}})";
        QTest::newRow("error, null id") << R"({"type":"error","id":null,"ename":"E"})";
        QTest::newRow("clear_output, null id") << R"({"type":"clear_output","id":null,"wait":false})";
    }

    void eventOfNoExecutionIsDropped()
    {
        QFETCH(QString, frame);
        auto session = started();
        Recorder recorder(session.get());
        const qint64 pid = session->pid();
        QVERIFY(run(*session, recorder, request("f", "frame:" + frame + "\nprint:after")));
        QCOMPARE(recorder.done("f").fields.value("status").toString(), QStringLiteral("ok"));
        QCOMPARE(recorder.order("f"), QStringLiteral("<started>after\n<done>"));
        QVERIFY(run(*session, recorder, request("g", "print:again")));
        QCOMPARE(recorder.text("g", "stdout"), QStringLiteral("again\n"));
        QCOMPARE(session->pid(), pid);
    }

    void fdsAboveFourAreClosedInWorker()
    {
        // Descriptors the host leaks carelessly (no O_CLOEXEC), low and high.
        const int leaked = ::open("/dev/null", O_RDONLY);
        QVERIFY(leaked >= 0);
        const int high = ::dup2(leaked, 200);
        QCOMPARE(high, 200);
        auto session = started();
        ::close(leaked);
        ::close(high);
        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("fds", "fds")));
        QCOMPARE(recorder.text("fds", "stdout"), QStringLiteral("fds:\nfd0:/dev/null\n"));
    }

    void signalsAreResetInWorker()
    {
        // A host started with SIGINT/SIGTERM ignored and SIGINT/SIGUSR1 blocked must not hand
        // that on.
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        struct sigaction oldInt {}, oldTerm {};
        ::sigaction(SIGINT, &ignore, &oldInt);
        ::sigaction(SIGTERM, &ignore, &oldTerm);
        sigset_t block, oldMask;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGUSR1);
        ::sigprocmask(SIG_BLOCK, &block, &oldMask);
        auto session = std::make_unique<WorkerProcess>(echoSpec(), echoOptions());
        QSignalSpy ready(session.get(), &Session::ready);
        session->start(); // spawns synchronously
        ::sigprocmask(SIG_SETMASK, &oldMask, nullptr);
        ::sigaction(SIGINT, &oldInt, nullptr);
        ::sigaction(SIGTERM, &oldTerm, nullptr);
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kLong);

        Recorder recorder(session.get());
        QVERIFY(run(*session, recorder, request("sig", "sigstatus")));
        QHash<QString, quint64> masks;
        const QString status = recorder.text("sig", "stdout");
        for (const QString &line : status.split('\n', Qt::SkipEmptyParts)) {
            bool ok = false;
            masks.insert(line.section(':', 0, 0),
                         line.section(':', 1).trimmed().toULongLong(&ok, 16));
            QVERIFY(ok);
        }
        QVERIFY(masks.contains("SigBlk") && masks.contains("SigIgn"));
        QCOMPARE(masks["SigBlk"], quint64(0));
        // Of the standard signals (1-31), only what CPython ignores itself at start-up (SIGPIPE
        // and SIGXFSZ). glibc's posix_spawn leaves its two internal real-time signals (32, 33)
        // ignored; glibc programs install their own handlers for those when they need them.
        const quint64 pythonOwn = (1ull << (SIGPIPE - 1)) | (1ull << (SIGXFSZ - 1));
        QCOMPARE(masks["SigIgn"] & 0x7fffffffull, pythonOwn);
    }

    void bigOutputDoesNotDeadlock_data() { addMarkModes(); }
    void bigOutputDoesNotDeadlock()
    {
        QFETCH(bool, drainedUnmarked);
        auto session = started(echoSpecFor(drainedUnmarked));
        Recorder recorder(session.get());
        const qsizetype size = 10 * 1000 * 1000;
        QVERIFY(run(*session, recorder,
                    request("big", QStringLiteral("bigout:%1\nbigdisplay:2000000\nprint:end")
                                       .arg(size)),
                    120000));
        const QString out = recorder.text("big", "stdout");
        QCOMPARE(out.size(), size + 4);
        QVERIFY(out.endsWith("xxend\n"));
        QCOMPARE(recorder.text("big", "stderr").size(), size);
        QCOMPARE(recorder.first("big", Event::Kind::Display).fields.value("data").toObject()
                     .value("text/plain").toString().size(),
                 2000000);
        QCOMPARE(recorder.done("big").fields.value("streams_synced").toBool(), true);
    }

    void deleteKillsProcessGroup()
    {
        auto session = started();
        Recorder recorder(session.get());
        QSignalSpy terminated(session.get(), &Session::terminated);
        QVERIFY(run(*session, recorder, request("gc", "child:sleep 1000 & echo $!")));
        bool ok = false;
        const qint64 grandchild = recorder.text("gc", "stdout").trimmed().toLongLong(&ok);
        QVERIFY(ok);
        const qint64 worker = session->pid();
        QVERIFY(!processGone(grandchild));
        session.reset();
        QCOMPARE(terminated.count(), 0); // no signals from the destructor
        // The worker was reaped by the destructor: not even a zombie is left.
        QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(worker)));
        QTRY_VERIFY_WITH_TIMEOUT(processGone(grandchild), kLong);
    }

    // Owners may delete a session from any of its signals (not only with deleteLater()).
    void deleteFromSlotIsSafe_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("kind"); // 0: first stream event, 1: done, 2: terminated
        QTest::newRow("stream") << QStringLiteral("bigout:3000000") << 0;
        QTest::newRow("done") << QStringLiteral("print:x\ndisplay:y\nprint:z") << 1;
        QTest::newRow("done of a dying run") << QStringLiteral("print:x\nexit:4") << 1;
        QTest::newRow("terminated") << QStringLiteral("print:x\nexit:4") << 2;
        QTest::newRow("done after a protocol error")
            << QStringLiteral("child:echo a\ngarbage") << 1;
    }

    void deleteFromSlotIsSafe()
    {
        QFETCH(QString, code);
        QFETCH(int, kind);
        WorkerProcess *session = started().release();
        const qint64 pid = session->pid();
        QPointer<WorkerProcess> watch(session);
        connect(session, &Session::event, session, [session, kind](const Event &e) {
            if ((kind == 0 && e.kind == Event::Kind::Stream)
                || (kind == 1 && e.kind == Event::Kind::Done))
                delete session;
        });
        connect(session, &Session::terminated, session, [session, kind] {
            if (kind == 2)
                delete session;
        });
        session->execute(request("del", code));
        QTRY_VERIFY_WITH_TIMEOUT(watch.isNull(), kLong);
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kLong);
        QTest::qWait(50); // let anything queued run
    }

    void completeRepliesOnce()
    {
        auto session = started();
        Recorder recorder(session.get());
        int calls = 0;
        Result<QJsonObject> last = replhost::makeError("none", "none");
        session->complete("pri", 3, [&](Result<QJsonObject> r) {
            ++calls;
            last = std::move(r);
        });
        QCOMPARE(calls, 0); // never inside the call
        QTRY_COMPARE_WITH_TIMEOUT(calls, 1, kLong);
        QVERIFY(last.ok());
        QCOMPARE(last->value("matches").toArray(), QJsonArray({"print:"}));
        QCOMPARE(last->value("cursor_end").toInt(), 3);

        int variableCalls = 0;
        session->variables([&](Result<QJsonObject> r) {
            ++variableCalls;
            QVERIFY(r.ok());
            QCOMPARE(r->value("variables").toArray().size(), 1);
        });
        QTRY_COMPARE_WITH_TIMEOUT(variableCalls, 1, kLong);

        // While busy: "busy", asynchronously, once.
        session->execute(request("s", "sleep:0.5"));
        int busyCalls = 0;
        QString busyCode;
        session->complete("p", 1, [&](Result<QJsonObject> r) {
            ++busyCalls;
            busyCode = r.ok() ? QString() : r.error().code;
        });
        QCOMPARE(busyCalls, 0);
        QTRY_COMPARE_WITH_TIMEOUT(busyCalls, 1, kLong);
        QCOMPARE(busyCode, QStringLiteral("busy"));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("s"), 1, kLong);

        // The worker dies before answering: "worker_died", once.
        int diedCalls = 0;
        QString diedCode;
        session->complete("die", 3, [&](Result<QJsonObject> r) {
            ++diedCalls;
            diedCode = r.ok() ? QString() : r.error().code;
        });
        QTRY_COMPARE_WITH_TIMEOUT(diedCalls, 1, kLong);
        QCOMPARE(diedCode, QStringLiteral("worker_died"));

        QTest::qWait(200);
        QCOMPARE(calls, 1);
        QCOMPARE(variableCalls, 1);
        QCOMPARE(busyCalls, 1);
        QCOMPARE(diedCalls, 1);
    }

    void pendingReplyRunsWhenSessionIsDeleted()
    {
        auto session = started();
        int calls = 0;
        QString code;
        session->complete("p", 1, [&](Result<QJsonObject> r) {
            ++calls;
            code = r.ok() ? QString() : r.error().code;
        });
        session.reset(); // the request is on its way; its answer never will be
        QTRY_COMPARE_WITH_TIMEOUT(calls, 1, kLong);
        QCOMPARE(code, QStringLiteral("worker_died"));
    }

    void executeWhileBusyIsAborted()
    {
        auto session = started();
        Recorder recorder(session.get());
        session->execute(request("first", "sleep:0.5\nprint:first", 1));
        session->execute(request("second", "print:second", 2));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("second"), 1, kLong);
        QCOMPARE(recorder.first("second", Event::Kind::Error).fields.value("ename").toString(),
                 QStringLiteral("SessionBusy"));
        QCOMPARE(recorder.done("second").fields.value("status").toString(),
                 QStringLiteral("aborted"));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("first"), 1, kLong);
        QCOMPARE(recorder.text("first", "stdout"), QStringLiteral("first\n"));
        QCOMPARE(recorder.done("first").fields.value("status").toString(), QStringLiteral("ok"));
        QCOMPARE(recorder.text("second", "stdout"), QString());
        QCOMPARE(recorder.doneCount("second"), 1);
    }

    void nextRunCanStartFromDoneSlot()
    {
        auto session = started();
        Recorder recorder(session.get());
        int chained = 0;
        QObject context;
        connect(session.get(), &Session::event, &context, [&](const Event &e) {
            if (e.kind == Event::Kind::Done && chained < 50) {
                ++chained;
                session->execute(request(QStringLiteral("c%1").arg(chained),
                                         QStringLiteral("print:%1").arg(chained)));
            }
        });
        session->execute(request("c0", "print:0"));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("c50"), 1, kLong);
        for (int i = 0; i <= 50; ++i) {
            const QString id = QStringLiteral("c%1").arg(i);
            QCOMPARE(recorder.text(id, "stdout"), QStringLiteral("%1\n").arg(i));
            QCOMPARE(recorder.done(id).fields.value("status").toString(), QStringLiteral("ok"));
        }
    }

    void startFailsWithStderr()
    {
        auto session = std::make_unique<WorkerProcess>(echoSpec({"--fail-start"}), echoOptions());
        QSignalSpy ready(session.get(), &Session::ready);
        QSignalSpy failed(session.get(), &Session::failed);
        QSignalSpy terminated(session.get(), &Session::terminated);
        session->start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLong);
        const QString message = failed[0][0].toString();
        QVERIFY2(message.contains("exited with code 3 before it was ready"), qPrintable(message));
        QVERIFY2(message.contains("cannot start: missing runtime (asked to fail)"),
                 qPrintable(message));
        QCOMPARE(ready.count(), 0);
        QCOMPARE(terminated.count(), 0);
        QCOMPARE(session->state(), Session::State::Dead);
    }

    void startFailsForMissingProgram()
    {
        WorkerSpec spec = echoSpec();
        spec.program = QStringLiteral("/nonexistent/replhost-driver");
        WorkerProcess session(spec, echoOptions());
        QSignalSpy failed(&session, &Session::failed);
        session.start();
        QCOMPARE(failed.count(), 0); // asynchronously
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLong);
        QVERIFY(failed[0][0].toString().contains("/nonexistent/replhost-driver"));
        QCOMPARE(session.state(), Session::State::Dead);
    }

    void startTimesOut()
    {
        WorkerSpec spec = echoSpec({"--no-hello"});
        spec.startTimeoutMs = 300;
        WorkerProcess session(spec, echoOptions());
        QSignalSpy failed(&session, &Session::failed);
        session.start();
        const qint64 pid = session.pid();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLong);
        QVERIFY2(failed[0][0].toString().contains("did not become ready"),
                 qPrintable(failed[0][0].toString()));
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kLong);
    }

    void shutdownIsExpected()
    {
        auto session = started();
        QSignalSpy terminated(session.get(), &Session::terminated);
        const qint64 pid = session->pid();
        session->shutdown();
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), true);
        QCOMPARE(session->state(), Session::State::Dead);
        QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(pid)));
    }

    void shutdownEscalatesToKill()
    {
        auto session = started(echoSpec({"--ignore-shutdown"}));
        QSignalSpy terminated(session.get(), &Session::terminated);
        session->shutdown();
        QTRY_COMPARE_WITH_TIMEOUT(terminated.count(), 1, kLong);
        QCOMPARE(terminated[0][0].toBool(), true);
        QCOMPARE(session->pid(), qint64(0));
    }

    void failedSessionFailsOnStart()
    {
        FailedSession session(QStringLiteral("python3 not found on PATH; install python3"));
        QSignalSpy failed(&session, &Session::failed);
        Recorder recorder(&session);
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kLong);
        QCOMPARE(failed[0][0].toString(),
                 QStringLiteral("python3 not found on PATH; install python3"));
        session.execute(request("x", "1"));
        QTRY_COMPARE_WITH_TIMEOUT(recorder.doneCount("x"), 1, kLong);
        QCOMPARE(recorder.done("x").fields.value("status").toString(), QStringLiteral("aborted"));

        int calls = 0;
        QString code;
        session.complete("x", 1, [&](Result<QJsonObject> r) {
            ++calls;
            code = r.ok() ? QString() : r.error().code;
        });
        QCOMPARE(calls, 0);
        QTRY_COMPARE_WITH_TIMEOUT(calls, 1, kLong);
        QCOMPARE(code, QStringLiteral("unsupported"));
    }
};

QTEST_GUILESS_MAIN(tst_WorkerProcess)
#include "tst_workerprocess.moc"
