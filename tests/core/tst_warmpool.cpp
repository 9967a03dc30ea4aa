// SPDX-License-Identifier: Apache-2.0
// The warm pool: started idle workers per language that new, restarted and restored contexts
// take instead of waiting for an interpreter start, bound to their context's env layers and cwd
// at hand-out. Real Engine on a temporary data directory, real workers through the real plugins,
// a JVM among them (the reason the pool exists).
#include "core/engine.h"
#include "core/prometheuswriter.h"
#include "core/warmpool.h"
#include "executionevents.h"
#include "testengine.h"
#include "workerchildren.h"

#include <QDir>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>

#include <csignal>
#include <optional>

#include <sys/types.h>

using namespace replhost;
using namespace replhost::core;
using namespace replhost::core::testing;

namespace {

// Long enough for a worker (a JVM among them) to start on a busy machine.
constexpr int kStartTimeout = 90000;

// What a probe run printed: "probe=<POOL_PROBE or <unset>>", "id=<REPLHOST_CONTEXT_ID>" and the
// cwd as a child process sees it, in whatever order the streams delivered them.
struct Probe {
    QString value;
    QString contextId;
    QString cwd;
};

Probe parseProbe(const QString &text)
{
    Probe probe;
    for (const QString &line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (line.startsWith(QLatin1String("probe=")))
            probe.value = line.mid(6);
        else if (line.startsWith(QLatin1String("id=")))
            probe.contextId = line.mid(3);
        else if (line.startsWith(QLatin1Char('/')))
            probe.cwd = line;
    }
    return probe;
}

} // namespace

// Opens an engine with a pool of one worker of `language`, skips the test when the language's
// runtime is not installed, and waits until the pooled worker is ready.
#define OPEN_WITH_READY_POOL(language)                                                            \
    do {                                                                                          \
        QVERIFY(openEngine(language, 1));                                                         \
        if (!available(language))                                                                 \
            QSKIP("the runtime is not installed");                                                \
        QVERIFY(waitForPool(language, 1));                                                        \
    } while (false)

class WarmPoolTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;


    // A pool of `size` for `language` only, so a row starts no other runtime.
    bool openEngine(const QString &language, int size)
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        config.warmPoolSizes.insert(language, size);
        return m_engine.open(config);
    }

    bool available(const QString &language) { return bool(m_engine->plugins().resolve(language)); }

    ContextManager &contexts() { return m_engine->contexts(); }

    WarmPool::LanguageState pool(const QString &language)
    {
        return contexts().warmPool().state().value(language);
    }

    // Waits until the pool of `language` holds `ready` ready workers and none starting.
    bool waitForPool(const QString &language, int ready)
    {
        const bool reached = QTest::qWaitFor(
            [&] {
                const WarmPool::LanguageState state = pool(language);
                return state.ready == ready && state.starting == 0;
            },
            kStartTimeout);
        if (!reached)
            qWarning("the %s pool has %d ready, %d starting; expected %d ready",
                     qPrintable(language), pool(language).ready, pool(language).starting, ready);
        return reached;
    }

    QString createContext(const QString &language, const QString &workspace = {},
                          const QString &cwd = {})
    {
        CreateContextRequest request;
        request.language = language;
        request.workspace = workspace;
        request.cwd = cwd;
        return m_engine.createContext(request);
    }

    // A context of the default workspace that has run `define` successfully; empty (and a
    // warning) when it could not.
    QString createContextWithState(const QString &language, const QString &define)
    {
        const QString context = createContext(language);
        const ExecutionPtr defined = context.isEmpty() ? nullptr : run(context, define);
        if (!defined || defined->status() != QLatin1String("ok")) {
            qWarning("cannot set state: %s", qPrintable(describe(defined)));
            return {};
        }
        return context;
    }

    ContextInfo info(const QString &id, const QString &workspace = {}) { return m_engine.info(id, workspace); }

    // Runs and waits for the end; null (and a warning) when it never ends.
    ExecutionPtr run(const QString &contextId, const QString &code, const QString &workspace = {})
    {
        RunRequest request;
        request.workspace = workspace;
        return m_engine.run(contextId, code, kStartTimeout, request);
    }

    // What a Java context's run of System.getProperty("replhost.warm_up") shows: the quoted
    // summary of the driver's warm-up, or "null" when it did none; empty (and a warning) when
    // the run failed.
    QString warmUpProperty(const QString &contextId)
    {
        const ExecutionPtr shown =
            run(contextId, QStringLiteral("System.getProperty(\"replhost.warm_up\")"));
        if (!shown || shown->status() != QLatin1String("ok")) {
            qWarning("cannot read the property: %s", qPrintable(describe(shown)));
            return {};
        }
        return resultText(shown);
    }

    // The interpreter's variables, as ContextManager::variables() answers; nullopt on an error.
    std::optional<QJsonObject> variables(const QString &contextId)
    {
        std::optional<Result<QJsonObject>> reply;
        contexts().variables({}, contextId, [&](Result<QJsonObject> r) { reply = std::move(r); });
        if (!QTest::qWaitFor([&] { return reply.has_value(); }, kStartTimeout) || !*reply) {
            qWarning("no variables for %s", qPrintable(contextId));
            return std::nullopt;
        }
        return **reply;
    }

    // Every language, with code that prints the probe (see parseProbe()), code that sets state
    // and code that shows it.
    void languageRows()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("probe");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("show");
        QTest::newRow("python")
            << "python"
            << "import os\nprint('probe=' + os.environ.get('POOL_PROBE', '<unset>'))\n"
               "print('id=' + os.environ.get('REPLHOST_CONTEXT_ID', ''), flush=True)\n"
               "os.system('/bin/pwd')"
            << "x = 41" << "print(x + 1)";
        QTest::newRow("bash")
            << "bash"
            << "echo \"probe=${POOL_PROBE-<unset>}\"\necho \"id=$REPLHOST_CONTEXT_ID\"\n/bin/pwd"
            << "x=41" << "echo $(( x + 1 ))";
        QTest::newRow("perl")
            << "perl"
            << "$| = 1;\nprint 'probe=', ($ENV{POOL_PROBE} // '<unset>'), \"\\n\";\n"
               "print \"id=$ENV{REPLHOST_CONTEXT_ID}\\n\";\nsystem('/bin/pwd');"
            << "my $x = 41;" << "print $x + 1, \"\\n\";";
        QTest::newRow("javascript")
            << "javascript"
            << "console.log('probe=' + (process.env.POOL_PROBE ?? '<unset>'))\n"
               "console.log('id=' + process.env.REPLHOST_CONTEXT_ID)\n"
               "require('child_process').execSync('/bin/pwd', { stdio: 'inherit' })"
            << "let x = 41" << "console.log(x + 1)";
        QTest::newRow("typescript")
            << "typescript"
            << "const probe: string = process.env.POOL_PROBE ?? '<unset>'\n"
               "console.log('probe=' + probe)\n"
               "console.log('id=' + process.env.REPLHOST_CONTEXT_ID)\n"
               "require('child_process').execSync('/bin/pwd', { stdio: 'inherit' })"
            << "let x: number = 41" << "console.log(x + 1)";
        QTest::newRow("java")
            << "java"
            << "String probe = System.getenv(\"POOL_PROBE\");\n"
               "System.out.println(\"probe=\" + (probe == null ? \"<unset>\" : probe));\n"
               "System.out.println(\"id=\" + System.getenv(\"REPLHOST_CONTEXT_ID\"));\n"
               "System.out.flush();\n"
               "new ProcessBuilder(\"/bin/pwd\").inheritIO().start().waitFor();"
            << "int x = 41;" << "System.out.println(x + 1);";
        QTest::newRow("go")
            << "go"
            << "probe, set := os.LookupEnv(\"POOL_PROBE\")\nif !set {\n    probe = \"<unset>\"\n}\n"
               "fmt.Println(\"probe=\" + probe)\n"
               "fmt.Println(\"id=\" + os.Getenv(\"REPLHOST_CONTEXT_ID\"))\n"
               "pwd := exec.Command(\"/bin/pwd\")\npwd.Stdout = os.Stdout\npwd.Run()"
            << "x := 41" << "fmt.Println(x + 1)";
    }

private slots:
    void init() { QVERIFY(m_engine.makeDataDir()); }
    void cleanup() { m_engine.reset(); }

    void contextTakesPooledWorker_data() { languageRows(); }
    void contextTakesPooledWorker()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, show);
        OPEN_WITH_READY_POOL(language);
        const QList<qint64> pooled = workerChildren();
        QCOMPARE(pooled.size(), 1);

        // The context's worker is the pooled process itself, and it runs code at once.
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QCOMPARE(info(context).pid, pooled.first());
        QCOMPARE(pool(language).hits, quint64(1));
        QCOMPARE(pool(language).misses, quint64(0));
        const ExecutionPtr defined = run(context, define);
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);
        const ExecutionPtr shown = run(context, show);
        QVERIFY(shown);
        VERIFY_EXEC(shown->status() == "ok", shown);
        QCOMPARE(out(shown), QStringLiteral("42\n"));

        // /metrics says so.
        PrometheusWriter writer;
        m_engine->metrics().write(writer);
        const QString text = QString::fromUtf8(writer.text());
        QVERIFY2(text.contains(QStringLiteral("replhost_warm_pool_hits_total{language=\"%1\"} 1\n")
                                   .arg(language)),
                 qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("replhost_warm_pool_size{language=\"%1\"} 1\n")
                                  .arg(language)));
    }

    void poolRefillsAfterHandOut_data() { languageRows(); }
    void poolRefillsAfterHandOut()
    {
        QFETCH(QString, language);
        QFETCH(QString, show);
        OPEN_WITH_READY_POOL(language);

        const QString first = createContext(language);
        QVERIFY(!first.isEmpty());
        // A replacement starts in the background, and the next context takes that one.
        QVERIFY(waitForPool(language, 1));
        const QList<qint64> replacement = workerChildren();
        QCOMPARE(replacement.size(), 2);
        const QString second = createContext(language);
        QVERIFY(!second.isEmpty());
        QVERIFY(info(second).pid != info(first).pid);
        QVERIFY(replacement.contains(info(second).pid));
        QCOMPARE(pool(language).hits, quint64(2));
        // Two contexts, two interpreters: state does not cross.
        const ExecutionPtr unset = run(second, show);
        QVERIFY(unset);
        QVERIFY(unset->status() != QLatin1String("ok") || out(unset) != QStringLiteral("42\n"));
    }

    void sizeZeroStartsNoWorker()
    {
        QVERIFY(openEngine(QStringLiteral("python"), 0));
        if (!available(QStringLiteral("python")))
            QSKIP("python3 is not installed");
        // Nothing starts, now or later (the engine's event loop runs while the run waits).
        QCOMPARE(pool(QStringLiteral("python")).size, 0);
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr ran = run(context, QStringLiteral("print(1)"));
        QVERIFY(ran);
        VERIFY_EXEC(ran->status() == "ok", ran);
        QCOMPARE(workerChildren(), QList<qint64>{info(context).pid});
        const WarmPool::LanguageState state = pool(QStringLiteral("python"));
        QCOMPARE(state.ready + state.starting, 0);
        QCOMPARE(state.hits, quint64(0));
        QCOMPARE(state.misses, quint64(0));
        // No language has a pool.
        const auto all = contexts().warmPool().state();
        for (auto it = all.cbegin(); it != all.cend(); ++it)
            QVERIFY2(it->size == 0 && it->ready + it->starting == 0, qPrintable(it.key()));
    }

    void defaultSizeIsOnePerAvailableLanguage()
    {
        EngineConfig config;
        QCOMPARE(config.warmPoolSize, 1);
        QVERIFY(config.warmPoolSizes.isEmpty());
    }

    void pooledContextHasItsWorkspaceEnvAndCwd_data() { languageRows(); }
    void pooledContextHasItsWorkspaceEnvAndCwd()
    {
        QFETCH(QString, language);
        QFETCH(QString, probe);
        QVERIFY(openEngine(language, 1));
        if (!available(language))
            QSKIP("the runtime is not installed");
        WorkspaceManager &workspaces = m_engine->workspaces();
        auto alpha = workspaces.create(QStringLiteral("alpha"));
        QVERIFY(alpha);
        auto beta = workspaces.create(QStringLiteral("beta"));
        QVERIFY(beta);
        QVERIFY(workspaces.changeEnv(QStringLiteral("alpha"),
                                     {{QStringLiteral("POOL_PROBE"), QStringLiteral("alpha secret")}},
                                     {}, {}));
        QVERIFY(QDir(alpha->directory).mkpath(QStringLiteral("sub")));
        const QString alphaSub = QDir(QDir(alpha->directory).filePath(QStringLiteral("sub")))
                                     .canonicalPath();

        QVERIFY(waitForPool(language, 1));
        const QString inAlpha = createContext(language, QStringLiteral("alpha"), QStringLiteral("sub"));
        QVERIFY(!inAlpha.isEmpty());
        QCOMPARE(pool(language).hits, quint64(1));
        const ExecutionPtr alphaRun = run(inAlpha, probe, QStringLiteral("alpha"));
        QVERIFY(alphaRun);
        VERIFY_EXEC(alphaRun->status() == "ok", alphaRun);
        const Probe seenInAlpha = parseProbe(out(alphaRun));
        QCOMPARE(seenInAlpha.value, QStringLiteral("alpha secret"));
        QCOMPARE(seenInAlpha.contextId, inAlpha);
        QCOMPARE(seenInAlpha.cwd, alphaSub);
        QCOMPARE(info(inAlpha, QStringLiteral("alpha")).cwd, alphaSub);

        // The next pooled worker, in another workspace, never saw alpha's layer.
        QVERIFY(waitForPool(language, 1));
        const QString inBeta = createContext(language, QStringLiteral("beta"));
        QVERIFY(!inBeta.isEmpty());
        QCOMPARE(pool(language).hits, quint64(2));
        const ExecutionPtr betaRun = run(inBeta, probe, QStringLiteral("beta"));
        QVERIFY(betaRun);
        VERIFY_EXEC(betaRun->status() == "ok", betaRun);
        const Probe seenInBeta = parseProbe(out(betaRun));
        QCOMPARE(seenInBeta.value, QStringLiteral("<unset>"));
        QCOMPARE(seenInBeta.contextId, inBeta);
        QCOMPARE(seenInBeta.cwd, QDir(beta->directory).canonicalPath());
    }

    void startupVariableStartsCold()
    {
        // LC_ALL is read when the runtime starts: a delta afterwards would not act the same, so
        // a context whose layers set it gets a worker started with it.
        QVERIFY(openEngine(QStringLiteral("python"), 1));
        if (!available(QStringLiteral("python")))
            QSKIP("python3 is not installed");
        QVERIFY(m_engine->workspaces().changeEnv({}, {{QStringLiteral("LC_ALL"), QStringLiteral("C")}},
                                                 {}, {}));
        QVERIFY(waitForPool(QStringLiteral("python"), 1));
        const QList<qint64> pooled = workerChildren();
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        QCOMPARE(pool(QStringLiteral("python")).hits, quint64(0));
        QCOMPARE(pool(QStringLiteral("python")).misses, quint64(1));
        QVERIFY(!pooled.contains(info(context).pid));
        const ExecutionPtr ran = run(
            context, QStringLiteral("import locale, os\n"
                                   "print(os.environ['LC_ALL'], locale.setlocale(locale.LC_CTYPE))"));
        QVERIFY(ran);
        VERIFY_EXEC(ran->status() == "ok", ran);
        QCOMPARE(out(ran), QStringLiteral("C C\n"));
        // The pooled worker is still there for the next context that fits.
        QCOMPARE(pool(QStringLiteral("python")).ready, 1);
    }

    void deadPooledWorkerIsReplaced_data() { languageRows(); }
    void deadPooledWorkerIsReplaced()
    {
        QFETCH(QString, language);
        QFETCH(QString, show);
        QFETCH(QString, define);
        OPEN_WITH_READY_POOL(language);
        const QList<qint64> before = workerChildren();
        QCOMPARE(before.size(), 1);
        QCOMPARE(::kill(pid_t(before.first()), SIGKILL), 0);

        // Gone from the pool, counted as a failure, and replaced after the back-off.
        QTRY_COMPARE_WITH_TIMEOUT(pool(language).failures, 1, kStartTimeout);
        QVERIFY(waitForPool(language, 1));
        const QList<qint64> after = workerChildren();
        QCOMPARE(after.size(), 1);
        QVERIFY(after.first() != before.first());

        // The replacement works, and a hand-out clears the failure count.
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QCOMPARE(info(context).pid, after.first());
        QCOMPARE(pool(language).failures, 0);
        QVERIFY(run(context, define));
        const ExecutionPtr shown = run(context, show);
        QVERIFY(shown);
        QCOMPARE(out(shown), QStringLiteral("42\n"));
    }

    void restartTakesPooledWorker_data() { languageRows(); }
    void restartTakesPooledWorker()
    {
        QFETCH(QString, language);
        QFETCH(QString, probe);
        QFETCH(QString, define);
        QFETCH(QString, show);
        OPEN_WITH_READY_POOL(language);
        const QString context = createContextWithState(language, define);
        QVERIFY(!context.isEmpty());
        QVERIFY(contexts().changeEnv({}, context, {{QStringLiteral("POOL_PROBE"), QStringLiteral("kept")}},
                                     {}, {}));

        QVERIFY(waitForPool(language, 1));
        const QList<qint64> pooled = workerChildren();
        const qint64 oldPid = info(context).pid;
        auto restarted = contexts().restart({}, context);
        QVERIFY(restarted);
        QCOMPARE(pool(language).hits, quint64(2));
        QVERIFY(restarted->pid != oldPid);
        QVERIFY(pooled.contains(restarted->pid));

        // A fresh interpreter, with the context's layer and id, in its cwd.
        const ExecutionPtr shown = run(context, show);
        QVERIFY(shown);
        QVERIFY(out(shown) != QStringLiteral("42\n"));
        const ExecutionPtr probed = run(context, probe);
        QVERIFY(probed);
        VERIFY_EXEC(probed->status() == "ok", probed);
        const Probe seen = parseProbe(out(probed));
        QCOMPARE(seen.value, QStringLiteral("kept"));
        QCOMPARE(seen.contextId, context);
        QCOMPARE(seen.cwd, info(context).cwd);
    }

    void evictedContextRestoresInPooledWorker_data() { languageRows(); }
    void evictedContextRestoresInPooledWorker()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, show);
        OPEN_WITH_READY_POOL(language);
        const QString context = createContextWithState(language, define);
        QVERIFY(!context.isEmpty());
        QVERIFY(waitForPool(language, 1));
        QVERIFY(contexts().evict({}, context));

        // The replay runs in the pooled worker, which gets the cwd and env with its first
        // replayed execution.
        const ExecutionPtr shown = run(context, show);
        QVERIFY(shown);
        VERIFY_EXEC(shown->status() == "ok", shown);
        QCOMPARE(out(shown), QStringLiteral("42\n"));
        VERIFY_EXEC(hasEvent(shown, QStringLiteral("restored")), shown);
        QCOMPARE(pool(language).hits, quint64(2));
    }

    void warmUpLeavesNothingBehind_data() { languageRows(); }
    void warmUpLeavesNothingBehind()
    {
        // A pooled worker ran a warm-up request (an empty run with a cwd and an env change)
        // before the context took it; the context sees what a cold one sees.
        QFETCH(QString, language);
        QFETCH(QString, define);
        QVERIFY(openEngine(language, 0));
        if (!available(language))
            QSKIP("the runtime is not installed");
        const QString cold = createContext(language);
        QVERIFY(!cold.isEmpty());
        const std::optional<QJsonObject> coldVariables = variables(cold);
        QVERIFY(coldVariables);

        QVERIFY(openEngine(language, 1));
        QVERIFY(waitForPool(language, 1));
        const QString pooled = createContext(language);
        QVERIFY(!pooled.isEmpty());
        QCOMPARE(pool(language).hits, quint64(1));
        const std::optional<QJsonObject> pooledVariables = variables(pooled);
        QVERIFY(pooledVariables);
        QCOMPARE(*pooledVariables, *coldVariables);
        // The first run is the context's first.
        const ExecutionPtr first = run(pooled, define);
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        QCOMPARE(first->executionCount(), 1);
    }

    void pooledJavaWorkerWarmedJavacUpInIsolation()
    {
        // A pooled JVM ran a few hundred snippets in throwaway shells before it was ready (it
        // was started with settings["pooled"]), so the context's first snippet runs on warm
        // compiler code; none of those snippets is visible in the context.
        OPEN_WITH_READY_POOL(QStringLiteral("java"));
        const QString context = createContext(QStringLiteral("java"));
        QVERIFY(!context.isEmpty());
        QCOMPARE(pool(QStringLiteral("java")).hits, quint64(1));
        const std::optional<QJsonObject> before = variables(context);
        QVERIFY(before);
        QVERIFY(before->value(QLatin1String("variables")).isArray());
        QCOMPARE(before->value(QLatin1String("variables")).toArray().size(), 0);

        // The driver tells what it ran.
        static const QRegularExpression summary(
            QStringLiteral(R"(^"(\d+) snippets, \d+ ms of CPU in \d+ ms"$)"));
        const QString warmUp = warmUpProperty(context);
        const QRegularExpressionMatch match = summary.match(warmUp);
        QVERIFY2(match.hasMatch(), qPrintable(warmUp));
        QVERIFY2(match.captured(1).toInt() > 0, qPrintable(warmUp));

        // Names and imports of the warm-up snippets (WarmUp.java) are unknown here.
        for (const QString &code : {QStringLiteral("square(7)"), QStringLiteral("new Point(4)"),
                                    QStringLiteral("Color.RED"), QStringLiteral("List.of(1)"),
                                    QStringLiteral("items")}) {
            const ExecutionPtr unknown = run(context, code);
            QVERIFY(unknown);
            VERIFY_EXEC(unknown->status() == "error", unknown);
            QCOMPARE(eventFields(unknown, QStringLiteral("error"))
                         .value(QLatin1String("ename"))
                         .toString(),
                     QStringLiteral("CompileError"));
        }
    }

    void javaWorkerUnderCpuLimitSkipsWarmUp()
    {
        // A warm-up would spend seconds of the worker's CPU-time limit before the user's code
        // ran: a pooled JVM under one says hello without it.
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        config.warmPoolSizes.insert(QStringLiteral("java"), 1);
        config.workspaceDefaults.limits.cpuSeconds = 3600;
        QVERIFY(m_engine.open(config));
        if (!available(QStringLiteral("java")))
            QSKIP("the runtime is not installed");
        QVERIFY(waitForPool(QStringLiteral("java"), 1));
        const QString context = createContext(QStringLiteral("java"));
        QVERIFY(!context.isEmpty());
        QCOMPARE(pool(QStringLiteral("java")).hits, quint64(1));
        QCOMPARE(warmUpProperty(context), QStringLiteral("null"));
    }

    void coldJavaWorkerSkipsWarmUp()
    {
        // A worker started for a context answers at once: its start is what the user waits for.
        QVERIFY(openEngine(QStringLiteral("java"), 0));
        if (!available(QStringLiteral("java")))
            QSKIP("the runtime is not installed");
        const QString context = createContext(QStringLiteral("java"));
        QVERIFY(!context.isEmpty());
        QCOMPARE(warmUpProperty(context), QStringLiteral("null"));
    }

    void unavailableLanguageHasNoPool()
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_FIXTURE_DIR "/fixture_ghost"));
        // The build tree's real plugins are found too; only the ghost gets a pool size.
        config.warmPoolSize = 0;
        config.warmPoolSizes.insert(QStringLiteral("ghost"), 1);
        QVERIFY(m_engine.open(config));
        QVERIFY(!m_engine->plugins().resolve(QStringLiteral("ghost")));
        const auto state = contexts().warmPool().state();
        QVERIFY(!state.contains(QStringLiteral("ghost")) || state.value(QStringLiteral("ghost")).size == 0);
        QCOMPARE(state.value(QStringLiteral("ghost")).starting, 0);
    }

    void comparableSettingsIgnoreCgroupPathsOnly_data()
    {
        QTest::addColumn<QJsonObject>("pooled");
        QTest::addColumn<QJsonObject>("wanted");
        QTest::addColumn<bool>("fits");
        const QJsonObject limits{{QStringLiteral("memory_bytes"), 1 << 30},
                                 {QStringLiteral("processes"), 4096}};
        auto confined = [&](const QJsonObject &limitsValue, const QJsonArray &cgroups,
                            const QJsonObject &sandbox = {}) {
            QJsonObject confinement{{QStringLiteral("launcher"), QStringLiteral("/opt/replhost-confine")},
                                    {QStringLiteral("limits"), limitsValue},
                                    {QStringLiteral("cgroups"), cgroups}};
            if (!sandbox.isEmpty())
                confinement.insert(QStringLiteral("sandbox"), sandbox);
            return QJsonObject{{QStringLiteral("interpreter"), QStringLiteral("/usr/bin/python3")},
                               {QStringLiteral("confinement"), confinement}};
        };
        QTest::newRow("none") << QJsonObject{} << QJsonObject{} << true;
        QTest::newRow("cgroup paths differ")
            << confined(limits, {QStringLiteral("/sys/fs/cgroup/a/cgroup.procs")})
            << confined(limits, {QStringLiteral("/sys/fs/cgroup/b/cgroup.procs")}) << true;
        QJsonObject other = limits;
        other.insert(QStringLiteral("memory_bytes"), 1 << 20);
        QTest::newRow("limits differ") << confined(limits, {}) << confined(other, {}) << false;
        QTest::newRow("confined vs not") << QJsonObject{} << confined(limits, {}) << false;
        const QJsonObject sandbox{{QStringLiteral("bwrap"), QStringLiteral("/usr/bin/bwrap")},
                                  {QStringLiteral("root"), QStringLiteral("/srv/ws/alpha")},
                                  {QStringLiteral("network"), false}};
        QTest::newRow("sandbox vs none") << confined(limits, {}) << confined(limits, {}, sandbox)
                                         << false;
        QJsonObject otherRoot = sandbox;
        otherRoot.insert(QStringLiteral("root"), QStringLiteral("/srv/ws/beta"));
        QTest::newRow("sandbox of another workspace")
            << confined(limits, {}, sandbox) << confined(limits, {}, otherRoot) << false;
        QTest::newRow("other interpreter")
            << QJsonObject{{QStringLiteral("interpreter"), QStringLiteral("/usr/bin/python3")}}
            << QJsonObject{{QStringLiteral("interpreter"), QStringLiteral("/opt/python3")}} << false;
    }
    void comparableSettingsIgnoreCgroupPathsOnly()
    {
        QFETCH(QJsonObject, pooled);
        QFETCH(QJsonObject, wanted);
        QFETCH(bool, fits);
        QCOMPARE(WarmPool::comparableSettings(pooled) == WarmPool::comparableSettings(wanted), fits);
    }

    void startupVariables_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<bool>("startup");
        QTest::newRow("PYTHONPATH") << "PYTHONPATH" << true;
        QTest::newRow("NODE_OPTIONS") << "NODE_OPTIONS" << true;
        QTest::newRow("JAVA_TOOL_OPTIONS") << "JAVA_TOOL_OPTIONS" << true;
        QTest::newRow("PERL5LIB") << "PERL5LIB" << true;
        QTest::newRow("LD_PRELOAD") << "LD_PRELOAD" << true;
        QTest::newRow("LC_ALL") << "LC_ALL" << true;
        QTest::newRow("LANG") << "LANG" << true;
        QTest::newRow("GOMAXPROCS") << "GOMAXPROCS" << true;
        QTest::newRow("PATH") << "PATH" << false;
        QTest::newRow("API_KEY") << "API_KEY" << false;
        QTest::newRow("GOOGLE_CLOUD_PROJECT") << "GOOGLE_CLOUD_PROJECT" << false;
    }
    void startupVariables()
    {
        QFETCH(QString, key);
        QFETCH(bool, startup);
        QCOMPARE(WarmPool::isStartupVariable(key), startup);
    }
};

QTEST_GUILESS_MAIN(WarmPoolTest)
#include "tst_warmpool.moc"
