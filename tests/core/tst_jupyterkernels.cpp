// SPDX-License-Identifier: Apache-2.0
// The Jupyter plugin against a fixture kernel (fixtures/kernels/fixture): what real kernels
// rarely do — a reply before the iopub status, a forged signature, a kernel that exits in the
// middle of a run, a heartbeat that stops — and the kernelspecs of this machine as languages.
// The behaviour every language shares is in tst_contexts, with R and ipykernel rows.
#include "core/engine.h"
#include "executionevents.h"
#include "testengine.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>

using namespace replhost;
using namespace replhost::core;
using namespace replhost::core::testing;
using sdk::Event;

namespace {

constexpr int kRunTimeout = 60000;
const QString kFixture = QStringLiteral("jupyter-fixture");

} // namespace

class JupyterKernelsTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_cacheHome;
    TestEngine m_engine;

    EngineConfig config() const
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        config.languageSettings = QJsonObject{
            {QStringLiteral("jupyter"),
             QJsonObject{{QStringLiteral("kernelspec_path"),
                          QJsonArray{QStringLiteral(REPLHOST_TEST_KERNELSPEC_DIR)}}}},
            // A silent kernel is noticed in a second rather than ten.
            {kFixture, QJsonObject{{QStringLiteral("heartbeat_interval_ms"), 100}}},
        };
        return config;
    }

    ContextManager &contexts() { return m_engine->contexts(); }

    QString createContext(const QString &language, const QMap<QString, QString> &env = {})
    {
        CreateContextRequest request;
        request.language = language;
        request.env = env;
        return m_engine.createContext(request);
    }

    ExecutionPtr start(const QString &contextId, const QString &code, RunRequest request = {})
    {
        return m_engine.start(contextId, code, std::move(request));
    }

    ExecutionPtr run(const QString &contextId, const QString &code, RunRequest request = {})
    {
        return m_engine.run(contextId, code, kRunTimeout, std::move(request));
    }

    // A run whose client can answer its questions.
    ExecutionPtr startAnswerable(const QString &contextId, const QString &code)
    {
        RunRequest request;
        request.input = true;
        return start(contextId, code, request);
    }

    qint64 pidOf(const QString &contextId) { return m_engine.info(contextId).pid; }

    // The run comes to wait for input, rather than end without asking.
    static bool comesToAsk(const ExecutionPtr &execution)
    {
        return QTest::qWaitFor([&] { return execution->isWaitingForInput() || execution->isFinished(); },
                               kRunTimeout)
               && execution->isWaitingForInput();
    }

private slots:
    void initTestCase()
    {
        // The probe's cache goes to a directory of the suite's own, not the user's.
        QVERIFY(m_cacheHome.isValid());
        qputenv("XDG_CACHE_HOME", m_cacheHome.path().toLocal8Bit());
    }

    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(m_engine.open(config()));
    }

    void cleanup() { m_engine.reset(); }

    void eachKernelspecIsALanguageWithItsLanguageAsAlias()
    {
        const auto fixture = m_engine->plugins().resolve(kFixture);
        QVERIFY2(fixture, qPrintable(fixture ? QString() : fixture.error().message));
        QCOMPARE((*fixture)->provider, QStringLiteral("jupyter"));
        QCOMPARE((*fixture)->name, QStringLiteral("Fixture kernel"));
        const auto byAlias = m_engine->plugins().resolve(QStringLiteral("fixture-lang"));
        QVERIFY(byAlias);
        QCOMPARE((*byAlias)->id, kFixture);
        QCOMPARE((*fixture)->capabilities.value(QLatin1String("env_per_execution")).toBool(true), false);
        // The version is the kernel's own word, from its kernel_info_reply.
        QCOMPARE((*fixture)->runtime.version, QStringLiteral("1.0"));
    }

    // replhost's own kernelspecs run replhost-kernel, a client of a replhost server.
    void replhostsOwnKernelspecsAreNotLanguages()
    {
        const auto own = m_engine->plugins().resolve(QStringLiteral("jupyter-replhost-python"));
        QVERIFY(!own);
        QCOMPARE(own.error().code, QStringLiteral("unknown_language"));
    }

    void kernelspecThatCannotRunIsUnavailableSayingWhy_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("reason");
        QTest::newRow("program not installed") << "jupyter-missing-program" << "/nonexistent/replhost-test-kernel";
        QTest::newRow("kernel exits at once") << "jupyter-failing" << "no such kernel module";
    }

    void kernelspecThatCannotRunIsUnavailableSayingWhy()
    {
        QFETCH(QString, language);
        QFETCH(QString, reason);
        const auto resolved = m_engine->plugins().resolve(language);
        QVERIFY(!resolved);
        QCOMPARE(resolved.error().code, QStringLiteral("unavailable"));
        QVERIFY2(resolved.error().message.contains(reason), qPrintable(resolved.error().message));
    }

    void aliasThatAnotherLanguageHasIsDropped()
    {
        // ipykernel's kernelspec says "python", which is the Python plugin's id.
        const auto kernel = m_engine->plugins().resolve(QStringLiteral("jupyter-python3"));
        QVERIFY2(kernel, qPrintable(kernel ? QString() : kernel.error().message));
        QVERIFY2(!(*kernel)->aliases.contains(QStringLiteral("python")),
                 qPrintable((*kernel)->aliases.join(QLatin1Char(','))));
        const auto python = m_engine->plugins().resolve(QStringLiteral("python"));
        QVERIFY(python);
        QCOMPARE((*python)->id, QStringLiteral("python"));
        // R has no plugin of its own: "r" is IRkernel's.
        const auto r = m_engine->plugins().resolve(QStringLiteral("r"));
        QVERIFY2(r, qPrintable(r ? QString() : r.error().message));
        QCOMPARE((*r)->id, QStringLiteral("jupyter-ir"));
    }

    void stateAndResultTravelThroughTheKernel()
    {
        const QString context = createContext(kFixture);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr set = run(context, QStringLiteral("set 41"));
        QVERIFY(set);
        VERIFY_EXEC(set->status() == "ok", set);
        const ExecutionPtr get = run(context, QStringLiteral("get"));
        QVERIFY(get);
        VERIFY_EXEC(get->status() == "ok", get);
        QCOMPARE(resultText(get), QStringLiteral("41"));
    }

    void runEndsWhenBothReplyAndIdleArrivedInEitherOrder_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("output");
        QTest::newRow("reply before the iopub status")
            << "reply-before-status" << "before the reply\nafter the reply\n";
        QTest::newRow("iopub status before the reply") << "status-before-reply" << "before the status\n";
    }

    void runEndsWhenBothReplyAndIdleArrivedInEitherOrder()
    {
        QFETCH(QString, code);
        QFETCH(QString, output);
        const QString context = createContext(kFixture);
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        QCOMPARE(out(execution), output);
        // The next run is not confused by the order of the last one's messages.
        const ExecutionPtr next = run(context, QStringLiteral("print next"));
        QVERIFY(next);
        QCOMPARE(out(next), QStringLiteral("next\n"));
    }

    void messageWithABadSignatureIsDropped()
    {
        const QString context = createContext(kFixture);
        const ExecutionPtr execution = run(context, QStringLiteral("forge"));
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        QCOMPARE(out(execution), QStringLiteral("genuine\n"));
        VERIFY_EXEC(err(execution).contains(QLatin1String("signature")), execution);
    }

    void kernelExitingMidRunIsReportedAndTheNextRunGetsAFreshKernel()
    {
        const QString context = createContext(kFixture);
        QVERIFY(run(context, QStringLiteral("set 41")));
        const qint64 pid = pidOf(context);
        const ExecutionPtr dying = run(context, QStringLiteral("exit"));
        QVERIFY(dying);
        VERIFY_EXEC(dying->status() == "error", dying);
        const QJsonObject done = doneOf(dying);
        VERIFY_EXEC(done.value(QLatin1String("state_lost")).toBool(), dying);
        const QList<Event> errors = eventsOfType(dying, QStringLiteral("error"));
        QVERIFY(!errors.isEmpty());
        QCOMPARE(errors.last().fields.value(QLatin1String("ename")).toString(),
                 QStringLiteral("WorkerDied"));
        VERIFY_EXEC(errors.last().fields.value(QLatin1String("evalue")).toString().contains(
                        QLatin1String("status 3")), dying);

        const ExecutionPtr after = run(context, QStringLiteral("get"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(resultText(after), QStringLiteral("None"));
        QVERIFY(pidOf(context) != pid);
    }

    void kernelThatStopsAnsweringItsHeartbeatIsReplaced()
    {
        const QString context = createContext(kFixture);
        QVERIFY(run(context, QStringLiteral("set 41")));
        const qint64 pid = pidOf(context);
        RunRequest mute;
        mute.replay = false;  // the kernel that replaces it answers
        const ExecutionPtr muted = run(context, QStringLiteral("mute-heartbeat"), mute);
        QVERIFY(muted);
        VERIFY_EXEC(muted->status() == "ok", muted);
        // Ten beats of 100 ms unanswered while idle: the kernel is taken for gone, and the
        // context is dormant like one whose worker went away between runs.
        QTRY_COMPARE_WITH_TIMEOUT(pidOf(context), qint64(0), kRunTimeout);

        // Its next run restores it in a new kernel by replaying its history.
        const ExecutionPtr after = run(context, QStringLiteral("get"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        VERIFY_EXEC(hasEvent(after, "restored"), after);
        QCOMPARE(resultText(after), QStringLiteral("41"));
        QVERIFY(pidOf(context) != pid);
    }

    void interruptFollowsTheKernelspecsInterruptMode_data()
    {
        QTest::addColumn<QString>("language");
        QTest::newRow("signal") << kFixture;
        // This kernel ignores SIGINT and obeys an interrupt_request on its control channel.
        QTest::newRow("message") << "jupyter-fixture-message";
    }

    void interruptFollowsTheKernelspecsInterruptMode()
    {
        QFETCH(QString, language);
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("set 41")));
        const qint64 pid = pidOf(context);
        const ExecutionPtr busy = start(context, QStringLiteral("loop"));
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(QLatin1String("looping")), kRunTimeout);
        QVERIFY(contexts().interruptExecution(busy->id()).ok());
        QVERIFY(waitForEnd(busy, kRunTimeout));
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        VERIFY_EXEC(!doneOf(busy).value(QLatin1String("state_lost")).toBool(), busy);
        const ExecutionPtr after = run(context, QStringLiteral("get"));
        QVERIFY(after);
        QCOMPARE(resultText(after), QStringLiteral("41"));
        QCOMPARE(pidOf(context), pid);
    }

    void tcpTransportWorksLikeIpc()
    {
        EngineConfig tcp = config();
        tcp.languageSettings.insert(kFixture, QJsonObject{{QStringLiteral("transport"), QStringLiteral("tcp")}});
        QVERIFY(m_engine.open(tcp));
        const QString context = createContext(kFixture);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("set 41")));
        const ExecutionPtr get = run(context, QStringLiteral("get"));
        QVERIFY(get);
        VERIFY_EXEC(get->status() == "ok", get);
        QCOMPARE(resultText(get), QStringLiteral("41"));
    }

    void displayIdsAndUpdatesArePassedOn()
    {
        const QString context = createContext(kFixture);
        const ExecutionPtr execution = run(context, QStringLiteral("display"));
        QVERIFY(execution);
        const QList<Event> displays = eventsOfType(execution, QStringLiteral("display"));
        QCOMPARE(displays.size(), 2);
        QCOMPARE(displays.at(0).fields.value(QLatin1String("display_id")).toString(), QStringLiteral("d1"));
        QVERIFY(!displays.at(0).fields.value(QLatin1String("update")).toBool());
        QCOMPARE(displays.at(1).fields.value(QLatin1String("display_id")).toString(), QStringLiteral("d1"));
        QVERIFY(displays.at(1).fields.value(QLatin1String("update")).toBool());
    }

    void contextEnvironmentReachesTheKernelAndAChangeRestartsItSayingSo()
    {
        const QString context = createContext(kFixture, {{QStringLiteral("RH_KERNEL_VAR"),
                                                           QStringLiteral("first")}});
        const ExecutionPtr first = run(context, QStringLiteral("env RH_KERNEL_VAR"));
        QVERIFY(first);
        QCOMPARE(resultText(first), QStringLiteral("first"));
        QVERIFY(!hasEvent(first, "state_reset"));

        QVERIFY(contexts().changeEnv({}, context, {{QStringLiteral("RH_KERNEL_VAR"),
                                                    QStringLiteral("second")}}, {}, {}).ok());
        const ExecutionPtr second = run(context, QStringLiteral("env RH_KERNEL_VAR"));
        QVERIFY(second);
        VERIFY_EXEC(second->status() == "ok", second);
        QCOMPARE(resultText(second), QStringLiteral("second"));
        const QJsonObject reset = eventFields(second, QStringLiteral("state_reset"));
        VERIFY_EXEC(reset.value(QLatin1String("reason")).toString().contains(
                        QLatin1String("RH_KERNEL_VAR")), second);
    }

    void environmentForOneRunIsRefused()
    {
        const QString context = createContext(kFixture);
        RunRequest request;
        request.contextId = context;
        request.code = QStringLiteral("env RH_ONE_RUN");
        request.env = {{QStringLiteral("RH_ONE_RUN"), QStringLiteral("x")}};
        auto refused = contexts().run(request);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, QStringLiteral("bad_request"));
        QVERIFY2(refused.error().message.contains(QLatin1String("env_per_execution")),
                 qPrintable(refused.error().message));
    }

    // R prints each visible value of a cell's top level, and IRkernel sends each one as a
    // display (not as an execute_result): so they are displays here too, in their order.
    void rVisibleValuesAreDisplays_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QStringList>("shown");  // text/plain of each display
        QTest::newRow("expression") << "x <- 41; x + 1" << QStringList{"[1] 42"};
        QTest::newRow("two visible values") << "1\n'two'" << QStringList{"[1] 1", "[1] \"two\""};
        QTest::newRow("assignment") << "y <- 1" << QStringList{};
        QTest::newRow("invisible") << "invisible(1)" << QStringList{};
    }

    void rVisibleValuesAreDisplays()
    {
        QFETCH(QString, code);
        QFETCH(QStringList, shown);
        const QString context = createContext(QStringLiteral("r"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        QStringList texts;
        for (const Event &display : eventsOfType(execution, QStringLiteral("display")))
            texts.append(display.fields.value(QLatin1String("data")).toObject()
                             .value(QLatin1String("text/plain")).toString());
        QCOMPARE(texts, shown);
        VERIFY_EXEC(!hasEvent(execution, "result"), execution);
    }

    void rPlotIsAPngDisplay()
    {
        const QString context = createContext(QStringLiteral("r"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, QStringLiteral("plot(1:10)"));
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        const QList<Event> displays = eventsOfType(execution, QStringLiteral("display"));
        VERIFY_EXEC(displays.size() == 1, execution);
        const QByteArray png = QByteArray::fromBase64(
            displays.first().fields.value(QLatin1String("data")).toObject()
                .value(QLatin1String("image/png")).toString().toLatin1());
        QVERIFY(png.startsWith("\x89PNG\r\n\x1a\n"));
    }

    void inputIsAskedOnTheStdinChannelAndAnswered_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("prompt");
        QTest::addColumn<QString>("answer");  // a null string: the end of input
        QTest::addColumn<bool>("password");
        QTest::addColumn<QString>("result");
        QTest::newRow("a line") << "input Name?" << "Name?" << "Ada" << false << "got Ada";
        QTest::newRow("the end of input") << "input Name?" << "Name?" << QString() << false << "end of input";
        QTest::newRow("a password") << "password Secret?" << "Secret?" << "s3cret" << true << "got s3cret";
    }

    void inputIsAskedOnTheStdinChannelAndAnswered()
    {
        QFETCH(QString, code);
        QFETCH(QString, prompt);
        QFETCH(QString, answer);
        QFETCH(bool, password);
        QFETCH(QString, result);
        const QString context = createContext(kFixture);
        const ExecutionPtr execution = startAnswerable(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(comesToAsk(execution), execution);
        const QJsonObject asked = eventFields(execution, QStringLiteral("input_request"));
        QCOMPARE(asked.value(QLatin1String("prompt")).toString(), prompt);
        QCOMPARE(asked.value(QLatin1String("password")).toBool(), password);
        QVERIFY(contexts().answerInput(execution->id(), answer, answer.isNull()).ok());
        // Answered once: a second answer finds nothing waiting.
        QVERIFY(!contexts().answerInput(execution->id(), answer, answer.isNull()).ok());
        QVERIFY(waitForEnd(execution, kRunTimeout));
        VERIFY_EXEC(execution->status() == "ok", execution);
        QCOMPARE(resultText(execution), result);
    }

    // IRkernel's readline() asks even when the request does not allow stdin; nobody could answer,
    // so the end of input is the answer, at once, and the run never waits.
    void runWithoutInputIsNeverAsked_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");
        QTest::newRow("a kernel that honours allow_stdin") << "input Name?" << "no stdin";
        QTest::newRow("a kernel that asks anyway") << "readline Name?" << "end of input";
    }

    void runWithoutInputIsNeverAsked()
    {
        QFETCH(QString, code);
        QFETCH(QString, result);
        const QString context = createContext(kFixture);
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        QCOMPARE(resultText(execution), result);
        VERIFY_EXEC(!hasEvent(execution, "input_request"), execution);
    }

    void interruptEndsTheWaitForInputAndKeepsState()
    {
        const QString context = createContext(kFixture);
        QVERIFY(run(context, QStringLiteral("set 41")));
        const qint64 pid = pidOf(context);
        const ExecutionPtr execution = startAnswerable(context, QStringLiteral("input Name?"));
        QVERIFY(execution);
        VERIFY_EXEC(comesToAsk(execution), execution);
        QVERIFY(contexts().interruptExecution(execution->id()).ok());
        QVERIFY(waitForEnd(execution, kRunTimeout));
        VERIFY_EXEC(execution->status() == "interrupted", execution);
        VERIFY_EXEC(!doneOf(execution).value(QLatin1String("state_lost")).toBool(), execution);
        QVERIFY(!contexts().answerInput(execution->id(), QStringLiteral("late"), false).ok());
        const ExecutionPtr after = run(context, QStringLiteral("get"));
        QVERIFY(after);
        QCOMPARE(resultText(after), QStringLiteral("41"));
        QCOMPARE(pidOf(context), pid);
    }

    // The ladder: shutdown_request, SIGTERM a grace later, SIGKILL after another.
    void kernelThatIgnoresShutdownAndSigtermIsKilled()
    {
        EngineConfig quick = config();
        quick.languageSettings.insert(kFixture, QJsonObject{{QStringLiteral("shutdown_grace_ms"), 200}});
        QVERIFY(m_engine.open(quick));
        QTemporaryDir notes;
        const QString ignored = notes.filePath(QStringLiteral("ignored"));
        const QString context = createContext(kFixture);
        const ExecutionPtr stubborn = run(context, QStringLiteral("ignore-shutdown ") + ignored);
        QVERIFY(stubborn);
        VERIFY_EXEC(stubborn->status() == "ok", stubborn);
        const qint64 pid = pidOf(context);
        QVERIFY(pid > 0);
        QVERIFY(contexts().evict({}, context));
        QTRY_VERIFY_WITH_TIMEOUT(::kill(-pid_t(pid), 0) != 0 && errno == ESRCH, kRunTimeout);
        QFile file(ignored);
        QVERIFY(file.open(QIODevice::ReadOnly));
        // It saw both and went only with SIGKILL, which it cannot ignore.
        QCOMPARE(file.readAll(), QByteArray("shutdown_request\nSIGTERM\n"));
    }

    // What a probe learns is kept in $XDG_CACHE_HOME, which the suite points at a directory of
    // its own: the user's cache is never written.
    void probeIsCachedUnderXdgCacheHome()
    {
        QFile cache(QDir(qEnvironmentVariable("XDG_CACHE_HOME"))
                        .filePath(QStringLiteral("replhost/jupyter-kernels.json")));
        QVERIFY2(cache.open(QIODevice::ReadOnly), qPrintable(cache.fileName()));
        const QJsonObject entries = QJsonDocument::fromJson(cache.readAll()).object();
        const QJsonObject fixture =
            entries.value(QDir(QStringLiteral(REPLHOST_TEST_KERNELSPEC_DIR)).filePath(QStringLiteral("fixture")))
                .toObject();
        QCOMPARE(fixture.value(QLatin1String("version")).toString(), QStringLiteral("1.0"));
    }

    void completionAsksTheKernel()
    {
        const QString context = createContext(kFixture);
        QVERIFY(run(context, QStringLiteral("print warm")));
        std::optional<Result<QJsonObject>> answer;
        contexts().complete({}, context, QStringLiteral("st"), 2,
                            [&](Result<QJsonObject> reply) { answer = std::move(reply); });
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), kRunTimeout);
        QVERIFY2(*answer, qPrintable(*answer ? QString() : answer->error().message));
        const QJsonObject reply = answer->value();
        QCOMPARE(reply.value(QLatin1String("matches")).toArray(),
                 (QJsonArray{QStringLiteral("status"), QStringLiteral("stream")}));
        QCOMPARE(reply.value(QLatin1String("cursor_start")).toInt(), 0);
        QCOMPARE(reply.value(QLatin1String("cursor_end")).toInt(), 2);
    }
};

QTEST_GUILESS_MAIN(JupyterKernelsTest)
#include "tst_jupyterkernels.moc"
