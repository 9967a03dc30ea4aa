// SPDX-License-Identifier: Apache-2.0
// System tests of the engine: a real Engine on a temporary data directory, real python3 and bash
// workers started through the real plugins, and every behaviour checked through the events of
// Executions. Behaviour shared by the languages is data-driven; the language-specific code is in
// the tables.
#include "core/engine.h"
#include "executionevents.h"
#include "pipeprobe.h"
#include "testengine.h"
#include "storage/store.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <optional>

#include <sys/types.h>
#include <unistd.h>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;
using replhost::testing::unreadBytesInPipe;

namespace {

// Long enough for a fresh worker to start and a short run to finish on a busy machine.
constexpr int kRunTimeout = 60000;
// "Promptly": well below a 30 s sleep and the 10 s after which the interrupt ladder kills.
constexpr int kPromptly = 8000;

QString firstErrorName(const ExecutionPtr &execution)
{
    const QList<Event> errors = eventsOfType(execution, QStringLiteral("error"));
    return errors.isEmpty() ? QString()
                            : errors.first().fields.value(QLatin1String("ename")).toString();
}

// What the run wrote on stdout before its first display event.
QString stdoutBeforeFirstDisplay(const ExecutionPtr &execution)
{
    QString before;
    for (const Event &event : execution->events()) {
        if (event.type == QLatin1String("display"))
            break;
        if (event.type == QLatin1String("stream")
            && event.fields.value(QLatin1String("name")).toString() == QLatin1String("stdout"))
            before += event.fields.value(QLatin1String("text")).toString();
    }
    return before;
}

QStringList matchesOf(const QJsonObject &completeReply)
{
    QStringList list;
    for (const QJsonValue &match : completeReply.value(QLatin1String("matches")).toArray())
        list.append(match.toString());
    return list;
}

// KEY=VALUE lines as printed by env(1).
QMap<QString, QString> parseEnv(const QString &text)
{
    QMap<QString, QString> env;
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq > 0)
            env.insert(line.left(eq), line.mid(eq + 1));
    }
    return env;
}

// Whether a process still runs. A zombie has ended: it only waits for a parent to reap it, which
// for an orphan is whatever init the machine has.
bool processIsRunning(qint64 pid)
{
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0)
        return false;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray line = stat.readAll();
    const qsizetype paren = line.lastIndexOf(')');
    const char state = paren >= 0 && paren + 2 < line.size() ? line.at(paren + 2) : '?';
    return state != 'Z' && state != 'X';
}

} // namespace

class ContextsTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;

    EngineConfig config() const
    {
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        // Every test opens an engine: a warm pool (tst_warmpool) would start a JVM for each.
        config.warmPoolSize = 0;
        return config;
    }

    // Opens the engine on the test's data directory; a warning says why when it cannot.
    bool openEngine(const EngineConfig &config) { return m_engine.open(config); }

    ContextManager &contexts() { return m_engine->contexts(); }

    // A new context in the default workspace; empty (and a warning) when it cannot be created.
    QString createContext(const QString &language, const QString &cwd = {})
    {
        CreateContextRequest request;
        request.language = language;
        request.cwd = cwd;
        return m_engine.createContext(request);
    }

    ContextInfo info(const QString &contextId) { return m_engine.info(contextId); }

    // Submits a run without waiting for it; null (and a warning) when it is refused.
    ExecutionPtr start(const RunRequest &request) { return startRun(contexts(), request); }

    ExecutionPtr start(const QString &contextId, const QString &code, RunRequest request = {})
    {
        return m_engine.start(contextId, code, std::move(request));
    }

    // Submits a run and waits for its Done event; null (and a warning) when it never ends.
    ExecutionPtr run(const QString &contextId, const QString &code, RunRequest request = {})
    {
        return m_engine.run(contextId, code, kRunTimeout, std::move(request));
    }

    ExecutionPtr runInLanguage(const QString &language, const QString &code)
    {
        RunRequest request;
        request.language = language;
        request.code = code;
        return waitForEnd(start(request), kRunTimeout);
    }

    // Shared by the interrupt tests: `code` is interrupted after it started (and, when `ready`
    // is given, after it printed `ready`: "started" only says the worker took the cell, which for
    // a compiling language can be well before the first statement runs); the run ends promptly
    // as "interrupted" and the interpreter still has what `setup` defined.
    void interruptKeepsState(const QString &language, const QString &setup, const QString &code,
                             const QString &check, const QString &expected,
                             const QString &ready = {})
    {
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr before = run(context, setup);
        QVERIFY(before);
        VERIFY_EXEC(before->status() == "ok", before);
        const qint64 pid = info(context).pid;

        const ExecutionPtr busy = start(context, code);
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(busy, "started"), kRunTimeout);
        if (!ready.isEmpty())
            QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(ready), kRunTimeout);
        QVERIFY(!busy->isFinished());
        QVERIFY(contexts().interruptExecution(busy->id()).ok());

        QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        VERIFY_EXEC(!doneOf(busy).value(QLatin1String("state_lost")).toBool(), busy);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
        QCOMPARE(info(context).pid, pid);
    }

    // The lines of an error event's traceback, without their indentation.
    static QStringList tracebackLines(const Event &error)
    {
        QStringList lines;
        for (const QJsonValue &line : error.fields.value(QLatin1String("traceback")).toArray())
            lines.append(line.toString().trimmed());
        return lines;
    }

    // The complete_reply for `code` with the cursor at its end; empty when none came.
    QJsonObject complete(const QString &contextId, const QString &code)
    {
        std::optional<Result<QJsonObject>> answer;
        contexts().complete({}, contextId, code, int(code.size()),
                            [&](Result<QJsonObject> reply) { answer = std::move(reply); });
        if (!QTest::qWaitFor([&] { return answer.has_value(); }, kRunTimeout) || !*answer)
            return {};
        return answer->value();
    }

    // The context's variables by name; empty when no answer came.
    QMap<QString, QJsonObject> variablesByName(const QString &contextId)
    {
        std::optional<Result<QJsonObject>> answer;
        contexts().variables({}, contextId,
                             [&](Result<QJsonObject> reply) { answer = std::move(reply); });
        QMap<QString, QJsonObject> byName;
        if (!QTest::qWaitFor([&] { return answer.has_value(); }, kRunTimeout) || !*answer)
            return byName;
        for (const QJsonValue &v : answer->value().value(QLatin1String("variables")).toArray())
            byName.insert(v.toObject().value(QLatin1String("name")).toString(), v.toObject());
        return byName;
    }

    // The capabilities the language's plugin declares in its metadata; a case a language cannot
    // do is checked against this declaration instead of being skipped.
    QJsonObject declaredCapabilities(const QString &language)
    {
        const auto plugin = m_engine->plugins().resolve(language);
        return plugin ? (*plugin)->capabilities : QJsonObject();
    }

private slots:
    void initTestCase()
    {
        // Host environment for the env-layer test: keys the layers hide and one they leave alone.
        qputenv("RH_HOST_HIDDEN_BY_WORKSPACE", "host");
        qputenv("RH_HOST_HIDDEN_BY_CONTEXT", "host");
        qputenv("RH_HOST_HIDDEN_BY_EXECUTION", "host");
        qputenv("RH_HOST_KEPT", "host");

        QVERIFY(m_engine.makeDataDir());
        QVERIFY(openEngine(config()));
        for (const QString &language : {QStringLiteral("python"), QStringLiteral("bash"),
                                         QStringLiteral("javascript"), QStringLiteral("perl"),
                                         QStringLiteral("typescript"),
                                         QStringLiteral("java"), QStringLiteral("go"),
                                         QStringLiteral("r"), QStringLiteral("jupyter-python3")}) {
            const auto plugin = m_engine->plugins().resolve(language);
            if (!plugin) {
                QStringList found;
                for (const PluginEntry &entry : m_engine->plugins().entries())
                    found.append(QStringLiteral("%1 (%2: %3)").arg(
                        entry.fileName, PluginEntry::stateName(entry.state), entry.error));
                QFAIL(qPrintable(QStringLiteral("%1: %2; plugins found: %3")
                                     .arg(language, plugin.error().message,
                                          found.isEmpty() ? QStringLiteral("none")
                                                          : found.join(QStringLiteral(", ")))));
            }
        }
        m_engine.reset();
    }

    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        QVERIFY(openEngine(config()));
    }

    void cleanup() { m_engine.reset(); }

    // The Context document a client of the API reads is the engine's ContextInfo again, every
    // field of a context that has run (pid, language version, times) included.
    void contextInfoReadsBackFromItsJson()
    {
        const QString context = createContext(QStringLiteral("bash"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, QStringLiteral("cd /tmp"));
        QVERIFY(execution);
        const QJsonObject json = m_engine.info(context).toJson();
        QVERIFY(json.value(QLatin1String("pid")).toInteger() > 0);
        QVERIFY(json.value(QLatin1String("last_used_at")).isString());
        QCOMPARE(ContextInfo::fromJson(json).toJson(), json);
        QCOMPARE(ContextInfo::fromJson(json).createdAt, m_engine.info(context).createdAt);
    }

    void stateSurvivesAcrossRuns_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("use");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python"
                                << "x = 41\ndef inc(v):\n    return v + 1\nimport math"
                                << "print(inc(x), math.floor(2.5))"
                                << "42 2\n";
        QTest::newRow("bash") << "bash"
                              << "x=41\ninc() { echo $(( $1 + 1 )); }\nexport Y=7"
                              << "echo \"$(inc $x) $Y\""
                              << "42 7\n";
        QTest::newRow("perl") << "perl"
                              << "my $x = 41;\nsub inc { $_[0] + 1 }\n"
                                 "package Counter { sub new { bless {n => 2}, shift } }\n"
                                 "use List::Util qw(sum);"
                              << "print inc($x), ' ', Counter->new->{n}, ' ', sum(1, 2), \"\\n\""
                              << "42 2 3\n";
        QTest::newRow("java") << "java"
                              << "int x = 41;\nint inc(int v) { return v + 1; }\n"
                                 "class Box { int v = 2; }\nimport java.util.stream.*;"
                              << "System.out.println(inc(x) + \" \" + new Box().v + \" \"\n"
                                 "    + IntStream.rangeClosed(1, 2).sum())"
                              << "42 2 3\n";
        QTest::newRow("javascript") << "javascript" << "let x = 41\nfunction inc(v) { return v + 1 }\nclass K { m() { return 2 } }\nconst path = require('path')" << "console.log(inc(x), new K().m(), path.basename('/a/b'))" << "42 2 b\n";
        QTest::newRow("javascript redeclared") << "javascript" << "let x = 1\nconst y = 2\nclass K {}" << "let x = 40; const y = 2\nclass K { m() { return x + y } }\nconsole.log(new K().m())" << "42\n";
        QTest::newRow("typescript") << "typescript" << "let x: number = 41\nfunction inc(v: number): number { return v + 1 }\nclass K { m(): number { return 2 } }\nconst path = require('path')" << "console.log(inc(x), new K().m(), path.basename('/a/b'))" << "42 2 b\n";
        QTest::newRow("typescript redeclared") << "typescript" << "let x: number = 1\nconst y = 2\nclass K {}" << "let x: number = 40; const y: number = 2\nclass K { m(): number { return x + y } }\nconsole.log(new K().m())" << "42\n";
        QTest::newRow("go") << "go"
                            << "x := 41\nfunc inc(v int) int { return v + 1 }\n"
                               "type Box struct{ V int }\nimport str \"strings\""
                            << "fmt.Println(inc(x), Box{2}.V, str.Repeat(\"a\", 3))"
                            << "42 2 aaa\n";
        QTest::newRow("go redeclared")
            << "go" << "x := 1\nvar y = \"s\"\nfunc f() int { return 1 }"
            << "x := 40\nvar y = 2\nfunc f() int { return x + y }\nfmt.Println(f())" << "42\n";
        // A variable declared in an if, for, switch or block statement is that statement's own,
        // as in Go: the globals of the same name keep their values and types.
        QTest::newRow("go statements keep their own variables")
            << "go" << "i := \"global\"\nvar n = 7"
            << "for i := 0; i < 3; i++ { n := i; _ = n }\n"
               "if v := 2; v > 1 { i := 5; _ = i }\n"
               "switch n := 1; n {\ncase 1:\n}\n"
               "for i := range []int{1, 2} { _ = i }\n"
               "outer:\nfor j := 0; j < 3; j++ {\n    for {\n        continue outer\n    }\n}\n"
               "{ n := \"block\"; _ = n }\n"
               "var any interface{} = 3\nswitch n := any.(type) {\ncase int:\n    i = fmt.Sprint(\"int \", n+1)\n}\n"
               "fmt.Println(i, n)"
            << "int 4 7\n";
        // Jupyter kernels, through plugins/jupyter: R (IRkernel) and Python (ipykernel).
        QTest::newRow("r") << "r"
                           << "x <- 41\ninc <- function(v) v + 1\nlibrary(stats)"
                           << "cat(inc(x), median(c(1, 2, 3)), '\\n', sep = ' ')"
                           << "42 2 \n";
        QTest::newRow("jupyter-python3") << "jupyter-python3"
                                         << "x = 41\ndef inc(v):\n    return v + 1\nimport math"
                                         << "print(inc(x), math.floor(2.5))"
                                         << "42 2\n";
    }

    void stateSurvivesAcrossRuns()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, use);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr first = run(context, define);
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        const ExecutionPtr second = run(context, use);
        QVERIFY(second);
        VERIFY_EXEC(second->status() == "ok", second);
        QCOMPARE(out(second), expected);
        QCOMPARE(first->executionCount(), 1);
        QCOMPARE(second->executionCount(), 2);
    }

    void lastExpressionIsTheResult_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");  // text/plain; empty: no result at all

        QTest::newRow("python expression") << "python" << "x = 41" << "x + 1" << "42";
        QTest::newRow("python statements, then an expression")
            << "python" << "x = 41" << "y = 1\nx + y" << "42";
        QTest::newRow("python statement only") << "python" << "x = 41" << "y = x + 1" << "";
        // The driver compiles a cell once when its last line is certainly a statement without a
        // value (an assignment or an import); lines that only look like one must keep theirs.
        QTest::newRow("python import only") << "python" << "x = 41" << "import os" << "";
        QTest::newRow("python augmented assignment only") << "python" << "x = 41" << "x += 1" << "";
        QTest::newRow("python call ending in a keyword argument")
            << "python" << "x = 41" << "int('4' + '2',\nbase = 10)" << "42";
        QTest::newRow("python string ending in an assignment")
            << "python" << "x = 41" << "'''a\nb = 1'''" << "'a\\nb = 1'";
        QTest::newRow("python expression after a semicolon")
            << "python" << "x = 41" << "y = 1; x + y" << "42";
        QTest::newRow("python comparison") << "python" << "x = 41" << "x == 41" << "True";
        QTest::newRow("python future import lasts")
            << "python" << "from __future__ import annotations"
            << "def f(a: undefined_name): pass\nf.__annotations__['a']" << "'undefined_name'";
        QTest::newRow("bash has no values") << "bash" << "x=41" << "echo $((x + 1))" << "";
        QTest::newRow("perl expression") << "perl" << "my $x = 41;" << "$x + 1" << "42";
        QTest::newRow("perl statements, then an expression")
            << "perl" << "my $x = 41;" << "my $y = 1;\n$x + $y" << "42";
        QTest::newRow("perl loop has no value")
            << "perl" << "my $x = 41;" << "for my $i (1 .. 3) { $x += $i }" << "";
        QTest::newRow("perl print has no value") << "perl" << "my $x = 41;" << "print '';" << "";
        QTest::newRow("perl reference shown like Data::Dumper")
            << "perl" << "my %h = (b => [1, 2], a => 1);" << "\\%h"
            << "{\n  a => 1,\n  b => [\n    1,\n    2\n  ]\n}";
        QTest::newRow("perl list") << "perl" << "my @a = (1, 'two');" << "@a" << "(1, 'two')";
        QTest::newRow("java expression") << "java" << "int x = 41;" << "x + 1" << "42";
        QTest::newRow("java statements, then an expression")
            << "java" << "int x = 41;" << "int y = 1\nx + y" << "42";
        QTest::newRow("java statement only") << "java" << "int x = 41;" << "int y = x + 1;" << "";
        QTest::newRow("java string shown like jshell")
            << "java" << "String s = \"hi\";" << "s" << "\"hi\"";
        QTest::newRow("javascript expression") << "javascript" << "let x = 41" << "x + 1" << "42";
        QTest::newRow("javascript statements, then an expression") << "javascript" << "let x = 41" << "let y = 1\nx + y" << "42";
        QTest::newRow("javascript declaration has no value") << "javascript" << "let x = 41" << "let y = x + 1" << "";
        QTest::newRow("javascript object shown like util.inspect") << "javascript" << "let x = 41" << "({ x, list: [x + 1] })" << "{ x: 41, list: [ 42 ] }";
        QTest::newRow("javascript top-level await") << "javascript" << "let x = 41" << "await Promise.resolve(x + 1)" << "42";
        QTest::newRow("typescript expression") << "typescript" << "let x: number = 41" << "x + 1" << "42";
        QTest::newRow("typescript statements, then an expression") << "typescript" << "let x: number = 41" << "let y: number = 1\nx + y" << "42";
        QTest::newRow("typescript declaration has no value") << "typescript" << "let x: number = 41" << "let y: number = x + 1" << "";
        QTest::newRow("typescript types only have no value") << "typescript" << "let x: number = 41" << "interface I { x: number }\ntype T = I[]" << "";
        QTest::newRow("typescript object shown like util.inspect") << "typescript" << "let x: number = 41" << "({ x, list: [x + 1] as number[] })" << "{ x: 41, list: [ 42 ] }";
        QTest::newRow("typescript top-level await") << "typescript" << "let x: number = 41" << "await Promise.resolve<number>(x + 1)" << "42";
        QTest::newRow("go expression") << "go" << "x := 41" << "x + 1" << "42";
        QTest::newRow("go statements, then an expression")
            << "go" << "x := 41" << "y := 1\nx + y" << "42";
        QTest::newRow("go declarations, then an expression")
            << "go" << "x := 41" << "var y = 1\nfunc twice(v int) int { return 2 * v }\ntwice(x + y) / 2"
            << "42";
        QTest::newRow("go statement only") << "go" << "x := 41" << "y := x + 1" << "";
        QTest::newRow("go print has no value") << "go" << "x := 41" << "fmt.Print(\"\")" << "";
        QTest::newRow("go nil error has no value")
            << "go" << "x := 41" << "os.Setenv(\"RH_UNUSED\", \"1\")" << "";
        QTest::newRow("go string shown quoted") << "go" << "s := \"hi\"" << "s" << "\"hi\"";
        QTest::newRow("go every value of a call")
            << "go" << "x := 41" << "strconv.Atoi(\"42\")" << "(42, <nil>)";
        QTest::newRow("go struct shown with field names")
            << "go" << "type P struct{ X, Y int }" << "P{4, 2}" << "{X:4 Y:2}";
        // R prints every visible value of a cell, and IRkernel sends each as a display:
        // tst_jupyterkernels has those rows.
        QTest::newRow("jupyter-python3 expression") << "jupyter-python3" << "x = 41" << "x + 1" << "42";
        QTest::newRow("jupyter-python3 statement only") << "jupyter-python3" << "x = 41" << "y = x + 1" << "";
    }

    void lastExpressionIsTheResult()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, code);
        QFETCH(QString, result);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, setup));
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);

        const QList<Event> results = eventsOfType(execution, QStringLiteral("result"));
        if (result.isEmpty()) {
            VERIFY_EXEC(results.isEmpty(), execution);
            return;
        }
        VERIFY_EXEC(results.size() == 1, execution);
        const QJsonObject data = results.first().fields.value(QLatin1String("data")).toObject();
        QCOMPARE(data.value(QLatin1String("text/plain")).toString(), result);
        QCOMPARE(results.first().fields.value(QLatin1String("execution_count")).toInt(),
                 execution->executionCount());
    }

    void stdoutAndStderrIncludingChildProcessArriveBeforeDone_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QStringList>("stdoutLines");
        QTest::addColumn<QStringList>("stderrLines");

        QTest::newRow("python")
            << "python"
            << "import os, sys\n"
               "print('out from python')\n"
               "print('err from python', file=sys.stderr)\n"
               "os.system('echo out from child; echo err from child >&2')\n"
               "sys.stdout.write('partial')"
            << QStringList{"out from python\n", "out from child\n"}
            << QStringList{"err from python\n", "err from child\n"};
        QTest::newRow("bash")
            << "bash"
            << "echo out from bash\n"
               "echo err from bash >&2\n"
               "sh -c 'echo out from child; echo err from child >&2'\n"
               "printf partial"
            << QStringList{"out from bash\n", "out from child\n"}
            << QStringList{"err from bash\n", "err from child\n"};
        QTest::newRow("perl")
            << "perl"
            << "print \"out from perl\\n\";\n"
               "print STDERR \"err from perl\\n\";\n"
               "system('echo out from child; echo err from child >&2');\n"
               "print 'partial';"
            << QStringList{"out from perl\n", "out from child\n"}
            << QStringList{"err from perl\n", "err from child\n"};
        QTest::newRow("java")
            << "java"
            << "System.out.println(\"out from java\");\n"
               "System.err.println(\"err from java\");\n"
               "new ProcessBuilder(\"sh\", \"-c\", \"echo out from child; echo err from child >&2\")\n"
               "    .inheritIO().start().waitFor();\n"
               "System.out.print(\"partial\");"
            << QStringList{"out from java\n", "out from child\n"}
            << QStringList{"err from java\n", "err from child\n"};
        QTest::newRow("javascript") << "javascript" << "console.log('out from javascript')\nconsole.error('err from javascript')\nrequire('child_process').execSync('echo out from child; echo err from child >&2',\n { stdio: 'inherit' })\nprocess.stdout.write('partial')" << QStringList{"out from javascript\n", "out from child\n"} << QStringList{"err from javascript\n", "err from child\n"};
        QTest::newRow("typescript") << "typescript" << "const greeting: string = 'out from typescript'\nconsole.log(greeting)\nconsole.error('err from typescript')\nrequire('child_process').execSync('echo out from child; echo err from child >&2',\n { stdio: 'inherit' })\nprocess.stdout.write('partial')" << QStringList{"out from typescript\n", "out from child\n"} << QStringList{"err from typescript\n", "err from child\n"};
        QTest::newRow("go")
            << "go"
            << "fmt.Println(\"out from go\")\n"
               "fmt.Fprintln(os.Stderr, \"err from go\")\n"
               "child := exec.Command(\"sh\", \"-c\", \"echo out from child; echo err from child >&2\")\n"
               "child.Stdout, child.Stderr = os.Stdout, os.Stderr\n"
               "child.Run()\n"
               "fmt.Print(\"partial\")"
            << QStringList{"out from go\n", "out from child\n"}
            << QStringList{"err from go\n", "err from child\n"};
        // A kernel's own child processes write to the kernel's stdout, which its frontends do not
        // show either: what the kernel reads from them (intern = TRUE, capture_output) is output.
        QTest::newRow("r")
            << "r"
            << "cat('out from r\\n')\nmessage('err from r')\n"
               "cat(system('echo out from child', intern = TRUE), '\\n', sep = '')\n"
               "cat('partial')"
            << QStringList{"out from r\n", "out from child\n"} << QStringList{"err from r\n"};
        QTest::newRow("jupyter-python3")
            << "jupyter-python3"
            << "import subprocess, sys\nprint('out from python')\n"
               "print('err from python', file=sys.stderr)\n"
               "print(subprocess.run(['echo', 'out from child'], capture_output=True, text=True).stdout, end='')\n"
               "sys.stdout.write('partial')"
            << QStringList{"out from python\n", "out from child\n"}
            << QStringList{"err from python\n"};
    }

    void stdoutAndStderrIncludingChildProcessArriveBeforeDone()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(QStringList, stdoutLines);
        QFETCH(QStringList, stderrLines);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = start(context, code);
        QVERIFY(execution);

        // Record events as they arrive, with the output seen when Done arrives.
        QStringList arrival;
        for (const Event &event : execution->events())
            arrival.append(event.type);
        QString stdoutAtDone, stderrAtDone;
        QObject receiver;  // ends the connection with this function
        connect(execution.get(), &Execution::eventAdded, &receiver,
                [&](const Event &event, int) {
                    arrival.append(event.type);
                    if (event.kind == Event::Kind::Done) {
                        stdoutAtDone = out(execution);
                        stderrAtDone = err(execution);
                    }
                });
        QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), kRunTimeout);
        VERIFY_EXEC(execution->status() == "ok", execution);

        for (const QString &line : stdoutLines)
            VERIFY_EXEC(stdoutAtDone.contains(line), execution);
        for (const QString &line : stderrLines)
            VERIFY_EXEC(stderrAtDone.contains(line), execution);
        // A trailing partial line arrives as it is.
        VERIFY_EXEC(stdoutAtDone.endsWith(QLatin1String("partial")), execution);
        // Sync marks never show.
        VERIFY_EXEC(!stdoutAtDone.contains(QChar(0x1b)) && !stderrAtDone.contains(QChar(0x1b)),
                    execution);
        const qsizetype doneIndex = arrival.lastIndexOf(QStringLiteral("done"));
        QCOMPARE(doneIndex, arrival.size() - 1);
        QVERIFY(arrival.lastIndexOf(QStringLiteral("stream")) < doneIndex);
        QCOMPARE(out(execution), stdoutAtDone);
        QCOMPARE(err(execution), stderrAtDone);
    }

    // C code that writes through stdio leaves its output in the C library's buffers, which the
    // Python driver must flush before every `done`: also in runs after one that left every stream
    // flushed (the driver then only looks whether the streams changed), and for a stream C code
    // opened itself on fd 1.
    void pythonCStdioOutputArrivesBeforeDoneInEveryRun_data()
    {
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("write"); // writes the bytes in `text`

        QTest::newRow("fully buffered stdout")
            << "import ctypes\n"
               "libc = ctypes.CDLL(None)\n"
               "buffer = ctypes.create_string_buffer(4096)\n"
               "libc.setvbuf(ctypes.c_void_p.in_dll(libc, 'stdout'), buffer, 0, len(buffer))"
            << "libc.printf(b'%s', text)";
        QTest::newRow("stream opened on fd 1")
            << "import ctypes, os\n"
               "libc = ctypes.CDLL(None)\n"
               "libc.fdopen.restype = ctypes.c_void_p\n"
               "stream = ctypes.c_void_p(libc.fdopen(os.dup(1), b'w'))"
            << "libc.fputs(text, stream)";
    }

    void pythonCStdioOutputArrivesBeforeDoneInEveryRun()
    {
        QFETCH(QString, setup);
        QFETCH(QString, write);

        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr prepared = run(context, setup);
        QVERIFY(prepared);
        VERIFY_EXEC(prepared->status() == "ok", prepared);
        for (int i = 1; i <= 3; ++i) {
            // No newline: a line-buffered stream would not hold it either.
            const QString text = QStringLiteral("run %1").arg(i);
            const ExecutionPtr execution =
                run(context, QStringLiteral("text = b'%1'\n").arg(text) + write);
            QVERIFY(execution);
            VERIFY_EXEC(execution->status() == "ok", execution);
            QCOMPARE(out(execution), text);
        }
    }

    // The Python driver keeps one SIGINT handler that only raises while a cell runs: a SIGINT
    // that reaches the idle worker is dropped, and an interrupt sent right after the request,
    // before the driver armed, still stops the run (its frame waits on fd 3).
    void pythonSigintWhileIdleIsDroppedAndInterruptRightAfterStartStops()
    {
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr setup = run(context, QStringLiteral("x = 41"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        const qint64 pid = info(context).pid;
        QVERIFY(pid > 0);

        for (int i = 0; i < 20; ++i)
            QCOMPARE(::kill(pid_t(pid), SIGINT), 0);
        const ExecutionPtr afterSignals =
            run(context, QStringLiteral("import time\ntime.sleep(0.2)\nprint(x + 1)"));
        QVERIFY(afterSignals);
        VERIFY_EXEC(afterSignals->status() == "ok", afterSignals);
        QCOMPARE(out(afterSignals), QStringLiteral("42\n"));

        for (int i = 0; i < 5; ++i) {
            const ExecutionPtr busy = start(context, QStringLiteral("import time\ntime.sleep(30)"));
            QVERIFY(busy);
            QVERIFY(contexts().interruptExecution(busy->id()).ok());
            QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
            VERIFY_EXEC(busy->status() == "interrupted", busy);
            VERIFY_EXEC(!doneOf(busy).value(QLatin1String("state_lost")).toBool(), busy);
        }
        const ExecutionPtr check = run(context, QStringLiteral("print(x + 1)"));
        QVERIFY(check);
        VERIFY_EXEC(check->status() == "ok", check);
        QCOMPARE(out(check), QStringLiteral("42\n"));
        QCOMPARE(info(context).pid, pid);
    }

    void errorIsReportedAndStateKept_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("failing");
        QTest::addColumn<QString>("ename");   // empty: any
        QTest::addColumn<int>("exitCode");    // -1: not reported
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python runtime error")
            << "python" << "x = 41" << "1 / 0" << "ZeroDivisionError" << -1
            << "print(x + 1)" << "42\n";
        QTest::newRow("python syntax error")
            << "python" << "x = 41" << "def broken(:\n    pass" << "SyntaxError" << -1
            << "print(x + 1)" << "42\n";
        QTest::newRow("python statements before the error took effect")
            << "python" << "x = 41" << "x = 42\nraise ValueError('boom')" << "ValueError" << -1
            << "print(x)" << "42\n";
        QTest::newRow("bash failing command")
            << "bash" << "x=41" << "ls /nonexistent-directory" << "" << 2
            << "echo $((x + 1))" << "42\n";
        QTest::newRow("bash false")
            << "bash" << "x=41" << "false" << "" << 1 << "echo $((x + 1))" << "42\n";
        QTest::newRow("perl die")
            << "perl" << "my $x = 41;" << "die \"boom\\n\"" << "Error" << -1
            << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("perl syntax error")
            << "perl" << "my $x = 41;" << "my $y = ;" << "SyntaxError" << -1
            << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("perl strict violation")
            << "perl" << "use strict;\nmy $x = 41;" << "$undeclared = 1;" << "CompileError" << -1
            << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("perl statements before the error took effect")
            << "perl" << "my $x = 41;" << "$x = 42;\ndie 'boom';" << "Error" << -1
            << "print \"$x\\n\"" << "42\n";
        QTest::newRow("perl exception object")
            << "perl" << "my $x = 41;" << "die bless({code => 7}, 'My::Error');" << "My::Error"
            << -1 << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("java runtime error")
            << "java" << "int x = 41;" << "1 / 0" << "java.lang.ArithmeticException" << -1
            << "System.out.println(x + 1)" << "42\n";
        QTest::newRow("java compile error")
            << "java" << "int x = 41;" << "int broken = ;" << "CompileError" << -1
            << "System.out.println(x + 1)" << "42\n";
        QTest::newRow("java statements before the error took effect")
            << "java" << "int x = 41;" << "x = 42;\nthrow new IllegalStateException(\"boom\");"
            << "java.lang.IllegalStateException" << -1 << "System.out.println(x)" << "42\n";
        QTest::newRow("javascript TypeError") << "javascript" << "let x = 41" << "null.boom" << "TypeError" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("javascript syntax error") << "javascript" << "let x = 41" << "function broken( {" << "SyntaxError" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("javascript statements before the error took effect") << "javascript" << "let x = 41" << "x = 42\nthrow new RangeError('boom')" << "RangeError" << -1 << "console.log(x)" << "42\n";
        QTest::newRow("javascript rejected await") << "javascript" << "let x = 41" << "await Promise.reject(new Error('no'))" << "Error" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript TypeError") << "typescript" << "let x: number = 41" << "(null as any).boom" << "TypeError" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript syntax error") << "typescript" << "let x: number = 41" << "function broken(a: number {" << "SyntaxError" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript statements before the error took effect") << "typescript" << "let x: number = 41" << "x = 42\nthrow new RangeError('boom')" << "RangeError" << -1 << "console.log(x)" << "42\n";
        QTest::newRow("typescript rejected await") << "typescript" << "let x: number = 41" << "await Promise.reject<number>(new Error('no'))" << "Error" << -1 << "console.log(x + 1)" << "42\n";
        QTest::newRow("go panic")
            << "go" << "x := 41" << "panic(\"boom\")" << "panic" << -1 << "fmt.Println(x + 1)"
            << "42\n";
        QTest::newRow("go runtime error")
            << "go" << "x := 41" << "var m map[string]int\nm[\"a\"] = 1" << "panic" << -1
            << "fmt.Println(x + 1)" << "42\n";
        QTest::newRow("go compile error")
            << "go" << "x := 41" << "y := x + \"s\"" << "CompileError" << -1
            << "fmt.Println(x + 1)" << "42\n";
        QTest::newRow("go syntax error")
            << "go" << "x := 41" << "func broken( {" << "SyntaxError" << -1
            << "fmt.Println(x + 1)" << "42\n";
        QTest::newRow("go statements before the error took effect")
            << "go" << "x := 41" << "x = 42\npanic(\"boom\")" << "panic" << -1 << "fmt.Println(x)"
            << "42\n";
        QTest::newRow("go a loop's variable ends with the loop")
            << "go" << "x := 41\nfor i := 0; i < 3; i++ {\n}" << "fmt.Println(i)" << "CompileError"
            << -1 << "fmt.Println(x + 1)" << "42\n";
        QTest::newRow("r stop") << "r" << "x <- 41" << "stop('boom')" << "ERROR" << -1
                                << "cat(x + 1, '\\n', sep = '')" << "42\n";
        QTest::newRow("r syntax error") << "r" << "x <- 41" << "f <- function( {" << "ERROR" << -1
                                        << "cat(x + 1, '\\n', sep = '')" << "42\n";
        QTest::newRow("r statements before the error took effect")
            << "r" << "x <- 41" << "x <- 42\nstop('boom')" << "ERROR" << -1
            << "cat(x, '\\n', sep = '')" << "42\n";
        QTest::newRow("jupyter-python3 runtime error")
            << "jupyter-python3" << "x = 41" << "1 / 0" << "ZeroDivisionError" << -1
            << "print(x + 1)" << "42\n";
    }

    void errorIsReportedAndStateKept()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, failing);
        QFETCH(QString, ename);
        QFETCH(int, exitCode);
        QFETCH(QString, check);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, setup));
        const qint64 pid = info(context).pid;

        const ExecutionPtr failed = run(context, failing);
        QVERIFY(failed);
        VERIFY_EXEC(failed->status() == "error", failed);
        VERIFY_EXEC(hasEvent(failed, "error"), failed);
        if (!ename.isEmpty())
            QCOMPARE(firstErrorName(failed), ename);
        if (exitCode >= 0)
            QCOMPARE(doneOf(failed).value(QLatin1String("exit_code")).toInt(-1), exitCode);
        VERIFY_EXEC(!doneOf(failed).value(QLatin1String("state_lost")).toBool(), failed);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
        QCOMPARE(info(context).pid, pid);
    }

    void interruptCpuLoopKeepsState_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<QString>("ready");

        // The "loop state" rows check that what the loop changed survives, so they interrupt
        // only once the loop printed that it is running.
        QTest::newRow("python") << "python" << "x = 41" << "while True: pass"
                                << "print(x + 1)" << "42\n" << "";
        QTest::newRow("python loop state")
            << "python" << "n = 0" << "print('looping', flush=True)\nwhile True:\n    n += 1"
            << "print(n > 0)" << "True\n" << "looping";
        // A handler a cell installs lasts for that cell only: the next one is interruptible.
        QTest::newRow("python after a cell ignored SIGINT")
            << "python" << "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nx = 41"
            << "while True: pass" << "print(x + 1)" << "42\n" << "";
        QTest::newRow("bash") << "bash" << "x=41" << "while true; do :; done"
                              << "echo $((x + 1))" << "42\n" << "";
        QTest::newRow("bash loop state")
            << "bash" << "n=0" << "echo looping; while true; do n=$((n + 1)); done"
            << "[ \"$n\" -gt 0 ] && echo counted" << "counted\n" << "looping";
        QTest::newRow("perl") << "perl" << "my $x = 41;" << "while (1) { }"
                              << "print $x + 1, \"\\n\"" << "42\n" << "";
        QTest::newRow("perl loop state")
            << "perl" << "my $n = 0;" << "$| = 1; print \"looping\\n\"; while (1) { $n++ }"
            << "print $n > 0 ? \"counted\\n\" : \"zero\\n\"" << "counted\n" << "looping";
        QTest::newRow("java") << "java" << "int x = 41;" << "while (true) { }"
                              << "System.out.println(x + 1)" << "42\n" << "";
        // One statement: JShell runs each statement of a cell as its own snippet, so a print
        // before the loop would be seen while the loop is still being compiled. The print call
        // also makes the JIT store n before it, so the count is in memory when the thread stops.
        QTest::newRow("java loop state")
            << "java" << "long n = 0;"
            << "while (true) { if (n++ == 0) System.out.println(\"looping\"); }"
            << "System.out.println(n > 0)" << "true\n" << "looping";
        QTest::newRow("javascript") << "javascript" << "let x = 41" << "while (true) {}"
                                    << "console.log(x + 1)" << "42\n" << "";
        QTest::newRow("javascript loop state")
            << "javascript" << "let n = 0" << "console.log('looping'); while (true) n++"
            << "console.log(n > 0)" << "true\n" << "looping";
        QTest::newRow("typescript") << "typescript" << "let x: number = 41" << "while (true) {}"
                                    << "console.log(x + 1)" << "42\n" << "";
        QTest::newRow("typescript loop state")
            << "typescript" << "let n: number = 0" << "console.log('looping'); while (true) n++"
            << "console.log(n > 0)" << "true\n" << "looping";
        QTest::newRow("go") << "go" << "x := 41" << "for {\n}" << "fmt.Println(x + 1)" << "42\n"
                            << "";
        QTest::newRow("go loop state")
            << "go" << "n := 0" << "fmt.Println(\"looping\")\nfor {\n    n++\n}"
            << "fmt.Println(n > 0)" << "true\n" << "looping";
        QTest::newRow("go loop in a function")
            << "go" << "n := 0\nfunc spin() {\n    for {\n        n++\n    }\n}"
            << "fmt.Println(\"looping\")\nspin()" << "fmt.Println(n > 0)" << "true\n" << "looping";
        // yaegi's cancellation stops every interpreted goroutine, also those of earlier cells.
        QTest::newRow("go goroutine of an earlier cell")
            << "go" << "n := 0\ngo func() {\n    for {\n        n++\n    }\n}()"
            << "fmt.Println(\"looping\")\nfor {\n}"
            << "a := n\ntime.Sleep(200 * time.Millisecond)\nfmt.Println(a > 0 && a == n)" << "true\n"
            << "looping";
        QTest::newRow("r") << "r" << "x <- 41" << "while (TRUE) {}"
                           << "cat(x + 1, '\\n', sep = '')" << "42\n" << "";
        QTest::newRow("r loop state")
            << "r" << "n <- 0" << "cat('looping\\n'); flush(stdout())\nwhile (TRUE) n <- n + 1"
            << "cat(n > 0, '\\n', sep = '')" << "TRUE\n" << "looping";
        QTest::newRow("jupyter-python3") << "jupyter-python3" << "x = 41" << "while True: pass"
                                         << "print(x + 1)" << "42\n" << "";
    }

    void interruptCpuLoopKeepsState()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, code);
        QFETCH(QString, check);
        QFETCH(QString, expected);
        QFETCH(QString, ready);
        interruptKeepsState(language, setup, code, check, expected, ready);
    }

    void interruptSleepKeepsState_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "x = 41" << "import time\ntime.sleep(30)"
                                << "print(x + 1)" << "42\n";
        QTest::newRow("bash") << "bash" << "x=41" << "sleep 30" << "echo $((x + 1))" << "42\n";
        QTest::newRow("perl") << "perl" << "my $x = 41;" << "sleep 30"
                              << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("perl child process") << "perl" << "my $x = 41;" << "system('sleep 30');"
                                            << "print $x + 1, \"\\n\"" << "42\n";
        // system() ignores SIGINT in the parent; the driver ends the run when its child got one.
        QTest::newRow("perl loop around a child process")
            << "perl" << "my $x = 41;" << "system('sleep 30') for 1 .. 5;"
            << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("java") << "java" << "int x = 41;" << "Thread.sleep(30000);"
                              << "System.out.println(x + 1)" << "42\n";
        QTest::newRow("java child process")
            << "java" << "int x = 41;"
            << "new ProcessBuilder(\"sleep\", \"30\").inheritIO().start().waitFor();"
            << "System.out.println(x + 1)" << "42\n";
        QTest::newRow("javascript timer") << "javascript" << "let x = 41" << "await new Promise(r => setTimeout(r, 30000))" << "console.log(x + 1)" << "42\n";
        QTest::newRow("javascript pending promise") << "javascript" << "let x = 41" << "await new Promise(() => {})" << "console.log(x + 1)" << "42\n";
        QTest::newRow("javascript child process") << "javascript" << "let x = 41" << "require('child_process').execSync('sleep 30')" << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript timer") << "typescript" << "let x: number = 41" << "await new Promise<void>(r => setTimeout(r, 30000))" << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript pending promise") << "typescript" << "let x: number = 41" << "await new Promise<never>(() => {})" << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript child process") << "typescript" << "let x: number = 41" << "require('child_process').execSync('sleep 30')" << "console.log(x + 1)" << "42\n";
        QTest::newRow("go") << "go" << "x := 41" << "time.Sleep(30 * time.Second)"
                            << "fmt.Println(x + 1)" << "42\n";
        // The rest of an interrupted cell never runs, not even once the sleep is over.
        QTest::newRow("go rest of the cell")
            << "go" << "x := 41" << "time.Sleep(30 * time.Second)\nx = 0"
            << "time.Sleep(500 * time.Millisecond)\nfmt.Println(x + 1)" << "42\n";
        QTest::newRow("go channel receive") << "go" << "x := 41" << "<-make(chan int)"
                                            << "fmt.Println(x + 1)" << "42\n";
        QTest::newRow("go child process")
            << "go" << "x := 41" << "exec.Command(\"sleep\", \"30\").Run()" << "fmt.Println(x + 1)"
            << "42\n";
        QTest::newRow("go loop around a child process")
            << "go" << "x := 41"
            << "for i := 0; i < 5; i++ {\n    exec.Command(\"sleep\", \"30\").Run()\n}"
            << "fmt.Println(x + 1)" << "42\n";
    }

    void interruptSleepKeepsState()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, code);
        QFETCH(QString, check);
        QFETCH(QString, expected);
        interruptKeepsState(language, setup, code, check, expected);
    }

    // An interrupted run's error says so in the language's own words, not in another's.
    void interruptIsNamedAsTheLanguageNamesIt_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("ename");
        QTest::newRow("python") << "python" << "import time\ntime.sleep(30)" << "KeyboardInterrupt";
        QTest::newRow("bash") << "bash" << "sleep 30" << "Interrupted";
    }

    void interruptIsNamedAsTheLanguageNamesIt()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(QString, ename);
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr busy = start(context, code);
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(busy, "started"), kRunTimeout);
        QVERIFY(contexts().interruptExecution(busy->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        QCOMPARE(firstErrorName(busy), ename);
    }

    // At exit a running execution is interrupted rather than killed: it ends as interrupted runs
    // do, with what it wrote in its last instant (here from a `finally`) recorded before its done.
    // What waits in the queue never starts, and nothing new is taken once the exit has begun.
    void shutdownInterruptsRunningWork()
    {
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr busy = start(context, QStringLiteral(
                "import time\ntry:\n    print('going', flush=True)\n    time.sleep(60)\n"
                "finally:\n    print('tail', flush=True)"));
        QVERIFY(busy);
        const ExecutionPtr queued = start(context, QStringLiteral("1"));
        QVERIFY(queued);
        QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(QLatin1String("going")), kRunTimeout);

        QElapsedTimer timer;
        timer.start();
        contexts().shutdownAll(ContextManager::kExitGrace);
        QVERIFY2(timer.elapsed() < kPromptly, qPrintable(QString::number(timer.elapsed())));

        QVERIFY(busy->isFinished());
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        QCOMPARE(out(busy), QStringLiteral("going\ntail\n"));
        QCOMPARE(eventFields(busy, QStringLiteral("error")).value(QLatin1String("ename")).toString(),
                 QStringLiteral("KeyboardInterrupt"));
        QVERIFY(queued->isFinished());
        VERIFY_EXEC(queued->status() == "aborted", queued);
        QVERIFY(eventFields(queued, QStringLiteral("error")).value(QLatin1String("evalue")).toString()
                        .contains(QLatin1String("shutting down")));

        RunRequest request;
        request.contextId = context;
        request.code = QStringLiteral("1");
        const auto refused = contexts().run(request);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code, QStringLiteral("unavailable"));
        CreateContextRequest create;
        create.language = QStringLiteral("python");
        QCOMPARE(contexts().create(create).error().code, QStringLiteral("unavailable"));
    }

    // A run that ignores the interrupt does not hold the exit up beyond the grace: it is aborted,
    // its worker killed, with the output it had written kept.
    void shutdownAbortsWhatOutlastsTheGrace()
    {
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr stubborn = start(context, QStringLiteral(
                "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                "print('stubborn', flush=True)\ntime.sleep(60)"));
        QVERIFY(stubborn);
        QTRY_VERIFY_WITH_TIMEOUT(out(stubborn).contains(QLatin1String("stubborn")), kRunTimeout);
        const qint64 pid = info(context).pid;
        QVERIFY(pid > 0);

        QElapsedTimer timer;
        timer.start();
        contexts().shutdownAll(std::chrono::milliseconds(300));
        QVERIFY2(timer.elapsed() < kPromptly, qPrintable(QString::number(timer.elapsed())));

        QVERIFY(stubborn->isFinished());
        VERIFY_EXEC(stubborn->status() == "aborted", stubborn);
        QCOMPARE(out(stubborn), QStringLiteral("stubborn\n"));
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(pid), kPromptly);
    }

    void workerExitIsReportedAndNextRunGetsFreshWorker_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("exit");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "x = 41" << "import os\nos._exit(3)"
                                << "print('x' in globals())" << "False\n";
        QTest::newRow("bash builtin exit") << "bash" << "x=41" << "builtin exit 3"
                                           << "echo \"${x:-gone}\"" << "gone\n";
        QTest::newRow("perl POSIX::_exit")
            << "perl" << "our $x = 41;" << "use POSIX ();\nPOSIX::_exit(3);"
            << "print defined $x ? \"kept\\n\" : \"gone\\n\"" << "gone\n";
        QTest::newRow("perl CORE::exit") << "perl" << "our $x = 41;" << "CORE::exit(3);"
                                         << "print defined $x ? \"kept\\n\" : \"gone\\n\""
                                         << "gone\n";
        // A fresh JVM has no trace of the old one's system properties.
        QTest::newRow("java System.exit")
            << "java" << "System.setProperty(\"rh.x\", \"41\");" << "System.exit(3);"
            << "System.out.println(System.getProperty(\"rh.x\", \"gone\"))" << "gone\n";
        QTest::newRow("javascript process.exit") << "javascript" << "let x = 41" << "process.exit(3)" << "console.log(typeof x)" << "undefined\n";
        QTest::newRow("typescript process.exit") << "typescript" << "let x: number = 41" << "process.exit(3)" << "console.log(typeof x)" << "undefined\n";
        // A fresh worker has only the context's environment, not what the old one set.
        QTest::newRow("go os.Exit") << "go" << "os.Setenv(\"RH_X\", \"41\")" << "os.Exit(3)"
                                    << "fmt.Println(os.Getenv(\"RH_X\") == \"\")" << "true\n";
    }

    void workerExitIsReportedAndNextRunGetsFreshWorker()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, exit);
        QFETCH(QString, check);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, setup));
        const qint64 pid = info(context).pid;
        QVERIFY(pid > 0);

        const ExecutionPtr died = run(context, exit);
        QVERIFY(died);
        VERIFY_EXEC(died->status() == "error", died);
        VERIFY_EXEC(doneOf(died).value(QLatin1String("state_lost")).toBool(), died);
        QCOMPARE(firstErrorName(died), QStringLiteral("WorkerDied"));
        const QString evalue =
            eventsOfType(died, "error").first().fields.value(QLatin1String("evalue")).toString();
        VERIFY_EXEC(evalue.contains(QLatin1Char('3')), died);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        VERIFY_EXEC(hasEvent(after, "state_reset"), after);
        QCOMPARE(out(after), expected);
        QCOMPARE(after->executionCount(), died->executionCount() + 1);
        const qint64 freshPid = info(context).pid;
        QVERIFY(freshPid > 0);
        QVERIFY(freshPid != pid);
        QVERIFY(!processIsRunning(pid));
    }

    // In a cell, `exit` ends the cell with its status like Python's SystemExit: the shell and its
    // variables stay (only `builtin exit`, `exec` or `set -e` end the worker).
    void bashExitEndsTheCellAndKeepsTheShell()
    {
        const QString context = createContext(QStringLiteral("bash"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("x=41")));
        const qint64 pid = info(context).pid;

        const ExecutionPtr exited = run(context, QStringLiteral("exit 3"));
        QVERIFY(exited);
        VERIFY_EXEC(exited->status() == "error", exited);
        VERIFY_EXEC(!doneOf(exited).value(QLatin1String("state_lost")).toBool(), exited);
        QCOMPARE(doneOf(exited).value(QLatin1String("exit_code")).toInt(), 3);

        const ExecutionPtr after = run(context, QStringLiteral("echo \"$x\""));
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("41\n"));
        QCOMPARE(info(context).pid, pid);
    }

    void pythonSystemExitKeepsWorker_data()
    {
        QTest::addColumn<QString>("code");
        QTest::newRow("sys.exit with a status") << "import sys\nsys.exit(3)";
        QTest::newRow("raise SystemExit") << "raise SystemExit('bye')";
        QTest::newRow("builtin exit") << "exit()";
    }

    void pythonSystemExitKeepsWorker()
    {
        QFETCH(QString, code);

        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, "x = 41"));
        const qint64 pid = info(context).pid;

        const ExecutionPtr exited = run(context, code);
        QVERIFY(exited);
        QCOMPARE(firstErrorName(exited), QStringLiteral("SystemExit"));
        VERIFY_EXEC(!doneOf(exited).value(QLatin1String("state_lost")).toBool(), exited);

        const ExecutionPtr after = run(context, "print(x + 1)");
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        VERIFY_EXEC(!hasEvent(after, "state_reset"), after);
        QCOMPARE(out(after), QStringLiteral("42\n"));
        QCOMPARE(info(context).pid, pid);
    }

    // In a cell, `exit` ends the cell like Python's SystemExit: the worker and its state stay.
    // A status other than 0 is an error, and done carries the status.
    void perlExitEndsTheCellAndKeepsTheWorker_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("exit with a status") << "exit 3;" << "error" << 3;
        QTest::newRow("exit 0") << "print \"bye\\n\";\nexit;\nprint \"never\\n\";" << "ok" << 0;
        QTest::newRow("exit in a sub") << "sub leave { exit(4) }\nleave();" << "error" << 4;
    }

    void perlExitEndsTheCellAndKeepsTheWorker()
    {
        QFETCH(QString, code);
        QFETCH(QString, status);
        QFETCH(int, exitCode);

        const QString context = createContext(QStringLiteral("perl"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("my $x = 41;")));
        const qint64 pid = info(context).pid;

        const ExecutionPtr exited = run(context, code);
        QVERIFY(exited);
        VERIFY_EXEC(exited->status() == status, exited);
        VERIFY_EXEC(!doneOf(exited).value(QLatin1String("state_lost")).toBool(), exited);
        QCOMPARE(doneOf(exited).value(QLatin1String("exit_code")).toInt(-1), exitCode);
        QVERIFY(!out(exited).contains(QLatin1String("never")));
        if (exitCode != 0)
            QCOMPARE(firstErrorName(exited), QStringLiteral("Exit"));

        const ExecutionPtr after = run(context, QStringLiteral("print $x + 1, \"\\n\";"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("42\n"));
        QCOMPARE(info(context).pid, pid);
    }

    // A cell of types, one with a main method, is a program (a Hello.java): its main runs once
    // the types are declared, as `java Hello.java` runs it. Other cells only declare.
    void javaProgramCellRunsItsMain()
    {
        const QString context = createContext(QStringLiteral("java"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr program = run(context, QStringLiteral(
                "import java.util.*;\n"
                "class Util { static int twice(int v) { return 2 * v; } }\n"
                "public class Hello {\n"
                "    public static void main(String[] args) {\n"
                "        System.out.println(Util.twice(21) + \" \" + args.length);\n"
                "    }\n"
                "}"));
        QVERIFY(program);
        VERIFY_EXEC(program->status() == "ok", program);
        QCOMPARE(out(program), QStringLiteral("42 0\n"));

        const ExecutionPtr withStatement = run(context, QStringLiteral(
                "int z = 1;\nclass Tool { public static void main(String... a) { System.out.println(\"ran\"); } }"));
        QVERIFY(withStatement);
        VERIFY_EXEC(withStatement->status() == "ok", withStatement);
        QCOMPARE(out(withStatement), QString());

        const ExecutionPtr failing = run(context, QStringLiteral(
                "class Boom {\n    public static void main(String args[]) {\n"
                "        throw new IllegalStateException(\"bad\");\n    }\n}"));
        QVERIFY(failing);
        VERIFY_EXEC(failing->status() == "error", failing);
        const QList<Event> errors = eventsOfType(failing, QStringLiteral("error"));
        VERIFY_EXEC(errors.size() == 1, failing);
        const QStringList expected{QStringLiteral("java.lang.IllegalStateException: bad"),
                                   QStringLiteral("at Boom.main(In[3]:3)")};
        QCOMPARE(tracebackLines(errors.first()), expected);

        // The program's types stay declared, like any others.
        const ExecutionPtr after = run(context, QStringLiteral("System.out.println(Util.twice(z))"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("2\n"));
    }

    // JShell compiles every snippet into a wrapper class; errors name what the cell declared
    // as the cell wrote it, not as REPL.$JShell$12$Pt.
    void javaErrorsNameWhatTheCellDeclared()
    {
        const QString context = createContext(QStringLiteral("java"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr defined = run(context, QStringLiteral(
                "record Pt(int x, int y) {}\n"
                "class MyErr extends RuntimeException { MyErr(String m) { super(m); } }"));
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);

        const auto errorOf = [&](const QString &code) {
            const ExecutionPtr failed = run(context, code);
            const QList<Event> errors = failed ? eventsOfType(failed, QStringLiteral("error")) : QList<Event>();
            return errors.size() == 1 ? errors.first() : Event();
        };
        const Event npe = errorOf(QStringLiteral("String s = null;\ns.length()"));
        QCOMPARE(npe.fields.value(QLatin1String("ename")).toString(),
                 QStringLiteral("java.lang.NullPointerException"));
        QCOMPARE(npe.fields.value(QLatin1String("evalue")).toString(),
                 QStringLiteral("Cannot invoke \"String.length()\" because \"s\" is null"));

        const Event cast = errorOf(QStringLiteral("Object o = new Pt(1, 2);\nString t = (String) o;"));
        const QString castText = cast.fields.value(QLatin1String("evalue")).toString();
        QVERIFY2(castText.startsWith(QLatin1String("class Pt cannot be cast to class java.lang.String")),
                 qPrintable(castText));
        QVERIFY2(!castText.contains(QLatin1String("$JShell")), qPrintable(castText));

        const Event mine = errorOf(QStringLiteral("throw new RuntimeException(\"outer\", new MyErr(\"inner\"));"));
        const QStringList traceback = tracebackLines(mine);
        QVERIFY2(traceback.contains(QStringLiteral("Caused by: MyErr: inner")), qPrintable(traceback.join('|')));
        const Event own = errorOf(QStringLiteral("throw new MyErr(\"mine\");"));
        QCOMPARE(own.fields.value(QLatin1String("ename")).toString(), QStringLiteral("MyErr"));
        QCOMPARE(tracebackLines(own).value(0), QStringLiteral("MyErr: mine"));
    }

    // Beyond the usual Perl REPLs: `my` variables of a cell's top level, and its pragmas, carry
    // over to the next cells as if all cells were one file.
    void perlLexicalsAndPragmasPersist()
    {
        const QString context = createContext(QStringLiteral("perl"));
        QVERIFY(!context.isEmpty());
        const auto step = [&](const QString &code, const QString &status) -> ExecutionPtr {
            const ExecutionPtr execution = run(context, code);
            if (execution && execution->status() != status)
                qWarning("unexpected status: %s", qPrintable(describe(execution)));
            return execution && execution->status() == status ? execution : nullptr;
        };

        QVERIFY(step("use strict;\nuse warnings;\nmy $x = 41;\nmy @list = (1, 2);\n"
                     "my %h = (k => 'v');\n{ my $inner = 1; }\nsub get_x { $x }",
                     "ok"));
        ExecutionPtr e = step("$x++;\nprint \"$x @list $h{k} \", get_x(), \"\\n\";", "ok");
        QVERIFY(e);
        QCOMPARE(out(e), QStringLiteral("42 1 2 v 42\n"));

        // Closures keep sharing the variables they closed over.
        QVERIFY(step("my $count = 0;\nmy $inc = sub { ++$count };", "ok"));
        e = step("$inc->();\n$inc->();\nprint \"$count\\n\";", "ok");
        QVERIFY(e);
        QCOMPARE(out(e), QStringLiteral("2\n"));

        // `use strict` still applies, and a lexical of an inner block did not leak out.
        e = step("$inner = 2;", "error");
        QVERIFY(e);
        QCOMPARE(firstErrorName(e), QStringLiteral("CompileError"));
        e = step("$undeclared = 1;", "error");
        QVERIFY(e);
        QCOMPARE(firstErrorName(e), QStringLiteral("CompileError"));

        // `use warnings` still applies.
        e = step("my $u;\nmy $v = $u + 1;", "ok");
        QVERIFY(e);
        VERIFY_EXEC(err(e).contains(QLatin1String("Use of uninitialized value $u")), e);

        // `use v5.36` brings its features (and keeps strict and warnings on).
        QVERIFY(step("use v5.36;\nsub add ($p, $q) { $p + $q }", "ok"));
        e = step("say add(2, 3);\nmy $undefined;\nmy $s = \"$undefined\";", "ok");
        QVERIFY(e);
        QCOMPARE(out(e), QStringLiteral("5\n"));
        VERIFY_EXEC(err(e).contains(QLatin1String("Use of uninitialized value")), e);

        // Pragmas change for later cells too.
        QVERIFY(step("no strict 'vars';\nno warnings;", "ok"));
        e = step("$undeclared = 1;\nmy $w;\nmy $z = $w + 1;\nprint \"$undeclared\\n\";", "ok");
        QVERIFY(e);
        QCOMPARE(out(e), QStringLiteral("1\n"));
        QCOMPARE(err(e), QString());

        // Declaring again makes a new variable; a sub compiled earlier keeps the old one.
        e = step("my $x = 100;\nprint \"$x \", get_x(), \"\\n\";", "ok");
        QVERIFY(e);
        QCOMPARE(out(e), QStringLiteral("100 42\n"));

    }

    // Completion offers what earlier runs defined, each language with its own sigils and call
    // syntax, and says which part of the code the match replaces.
    void completionOffersNamesOfEarlierRuns_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("code");  // completed with the cursor at its end
        QTest::addColumn<QString>("match");
        QTest::addColumn<int>("cursorStart");

        const QString python = "counter = 41\ndef compute_total(): return 1\n"
                               "class Shape:\n    def area(self): return 1\nshape = Shape()";
        QTest::newRow("python variable") << "python" << python << "print(cou" << "counter" << 6;
        QTest::newRow("python function") << "python" << python << "compute_t" << "compute_total" << 0;
        QTest::newRow("python method") << "python" << python << "shape.ar" << "area" << 6;
        const QString bash = "counter=41\ncompute_total() { :; }";
        QTest::newRow("bash variable") << "bash" << bash << "echo $cou" << "$counter" << 5;
        QTest::newRow("bash function") << "bash" << bash << "compute_t" << "compute_total" << 0;
        const QString perl = "my $counter = 41;\nsub compute_total { 1 }\n"
                             "package Shape { sub new { bless {}, shift } sub area { 1 } }\n"
                             "my $shape = Shape->new;";
        QTest::newRow("perl variable") << "perl" << perl << "print $cou" << "$counter" << 6;
        QTest::newRow("perl sub") << "perl" << perl << "compute_t" << "compute_total" << 0;
        QTest::newRow("perl method") << "perl" << perl << "$shape->ar" << "area" << 8;
        const QString java = "int counter = 41;\nint computeTotal() { return 1; }\n"
                             "class Shape { int area() { return 1; } }\nShape shape = new Shape();";
        QTest::newRow("java variable") << "java" << java << "System.out.println(cou" << "counter" << 19;
        QTest::newRow("java method") << "java" << java << "computeT" << "computeTotal()" << 0;
        QTest::newRow("java method of an object") << "java" << java << "shape.ar" << "area()" << 6;
        QTest::newRow("java class") << "java" << java << "Sha" << "Shape" << 0;
        const QString javascript = "let counter = 41\nfunction computeTotal() { return 1 }\n"
                                   "class Shape { area() { return 1 } }\nconst shape = new Shape()";
        QTest::newRow("javascript variable") << "javascript" << javascript << "console.log(cou" << "counter" << 12;
        QTest::newRow("javascript function") << "javascript" << javascript << "computeT" << "computeTotal" << 0;
        QTest::newRow("javascript method") << "javascript" << javascript << "shape.ar" << "area" << 6;
        const QString typescript = "let counter: number = 41\nfunction computeTotal(): number { return 1 }\n"
                                   "class Shape { area(): number { return 1 } }\nconst shape: Shape = new Shape()";
        QTest::newRow("typescript variable") << "typescript" << typescript << "console.log(cou" << "counter" << 12;
        QTest::newRow("typescript function") << "typescript" << typescript << "computeT" << "computeTotal" << 0;
        QTest::newRow("typescript method") << "typescript" << typescript << "shape.ar" << "area" << 6;
        const QString go = "counter := 41\ntype Shape struct {\n    Name  string\n    Sides int\n}\n"
                           "shape := Shape{\"square\", 4}\nfunc computeTotal() int { return 1 }";
        QTest::newRow("go variable") << "go" << go << "cou" << "counter" << 0;
        QTest::newRow("go function") << "go" << go << "computeT" << "computeTotal" << 0;
        QTest::newRow("go field") << "go" << go << "shape.Si" << "Sides" << 6;
        QTest::newRow("go package member") << "go" << go << "x := fmt.Prin" << "Println" << 9;
        QTest::newRow("r variable") << "r" << "counter <- 41\ncompute_total <- function() 1"
                                    << "print(cou" << "counter" << 6;
        QTest::newRow("r function") << "r" << "counter <- 41\ncompute_total <- function() 1"
                                    << "compute_t" << "compute_total" << 0;
        QTest::newRow("jupyter-python3 variable") << "jupyter-python3" << python << "print(cou"
                                                  << "counter" << 6;
    }

    void completionOffersNamesOfEarlierRuns()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, code);
        QFETCH(QString, match);
        QFETCH(int, cursorStart);

        QVERIFY(declaredCapabilities(language).value(QLatin1String("complete")).toBool());
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr defined = run(context, define);
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);

        const QJsonObject reply = complete(context, code);
        QVERIFY2(matchesOf(reply).contains(match),
                 qPrintable(QJsonDocument(reply).toJson(QJsonDocument::Compact)));
        QCOMPARE(reply.value(QLatin1String("cursor_start")).toInt(), cursorStart);
        QCOMPARE(reply.value(QLatin1String("cursor_end")).toInt(), int(code.size()));
    }

    // The variables view lists what earlier runs defined, with the language's own rendering.
    void variablesListNamesOfEarlierRuns_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("repr");  // empty: not checked
        QTest::addColumn<QString>("type");  // empty: not checked

        QTest::newRow("python") << "python" << "counter = 41" << "counter" << "41" << "int";
        QTest::newRow("bash") << "bash" << "counter=41" << "counter" << "41" << "";
        QTest::newRow("perl scalar") << "perl" << "my $counter = 41;" << "$counter" << "41" << "";
        QTest::newRow("perl package array") << "perl" << "our @items = (1, 2);" << "@items" << ""
                                            << "";
        QTest::newRow("perl object")
            << "perl" << "package Shape { sub new { bless {}, shift } }\nmy $shape = Shape->new;"
            << "$shape" << "" << "Shape";
        QTest::newRow("java") << "java" << "int counter = 41;" << "counter" << "41" << "int";
        QTest::newRow("javascript") << "javascript" << "let counter = 41" << "counter" << "41" << "number";
        QTest::newRow("typescript") << "typescript" << "let counter: number = 41" << "counter" << "41" << "number";
        QTest::newRow("go") << "go" << "counter := 41" << "counter" << "41" << "int";
        QTest::newRow("go struct")
            << "go" << "type Shape struct {\n    Name  string\n    Sides int\n}\nshape := Shape{\"square\", 4}"
            << "shape" << "{Name:square Sides:4}" << "";
    }

    void variablesListNamesOfEarlierRuns()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, name);
        QFETCH(QString, repr);
        QFETCH(QString, type);

        QVERIFY(declaredCapabilities(language).value(QLatin1String("variables")).toBool());
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr defined = run(context, define);
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);

        const QMap<QString, QJsonObject> byName = variablesByName(context);
        QVERIFY2(byName.contains(name), qPrintable(byName.keys().join(QLatin1Char(' '))));
        if (!repr.isEmpty())
            QCOMPARE(byName.value(name).value(QLatin1String("repr")).toString(), repr);
        if (!type.isEmpty())
            QCOMPARE(byName.value(name).value(QLatin1String("type")).toString(), type);
    }

    // Where a language says how big a value is (a length, a shape), the variables view gets it
    // as `size`, which the workbench's Variables panel shows.
    void variablesCarryASize_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("size");

        QTest::newRow("python list") << "python" << "items = [1, 2, 3]" << "items" << "3";
        QTest::newRow("python str") << "python" << "word = 'hello'" << "word" << "5";
        QTest::newRow("javascript array") << "javascript" << "const items = [1, 2, 3]" << "items" << "3";
        QTest::newRow("javascript map") << "javascript" << "var seen = new Map([[1, 2]])" << "seen" << "1";
        QTest::newRow("typescript array") << "typescript" << "let items: number[] = [1, 2, 3, 4]" << "items" << "4";
    }

    void variablesCarryASize()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, name);
        QFETCH(QString, size);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr defined = run(context, define);
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);
        const QMap<QString, QJsonObject> byName = variablesByName(context);
        QVERIFY2(byName.contains(name), qPrintable(byName.keys().join(QLatin1Char(' '))));
        QCOMPARE(byName.value(name).value(QLatin1String("size")).toString(), size);
    }

    // Every language's display() helper carries a PNG through unchanged and HTML as text, each
    // where the cell showed it among its prints.
    void displayHelperRoundTripsAPng_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");  // %1: the PNG in base64
        QTest::addColumn<bool>("inPrintOrder");  // false: displays follow all of the cell's output

        QTest::newRow("python")
            << "python"
            << "import base64\nprint('before')\n"
               "display({'image/png': base64.b64decode('%1')}, raw=True)\nprint('after')\n"
               "display({'text/html': '<b>hi</b>'}, raw=True)"
            << true;
        QTest::newRow("bash")
            << "bash"
            << "echo before\nprintf %s '%1' | base64 -d | display image/png\necho after\n"
               "display text/html <<< '<b>hi</b>'"
            << false;
        QTest::newRow("perl")
            << "perl"
            << "use MIME::Base64 qw(decode_base64);\nprint \"before\\n\";\n"
               "display('image/png' => decode_base64('%1'));\nprint \"after\\n\";\n"
               "display('text/html' => '<b>hi</b>');"
            << true;
        QTest::newRow("java")
            << "java"
            << "System.out.println(\"before\");\n"
               "display(\"image/png\", java.util.Base64.getDecoder().decode(\"%1\"));\n"
               "System.out.println(\"after\");\ndisplay(\"text/html\", \"<b>hi</b>\");"
            << true;
        QTest::newRow("javascript")
            << "javascript"
            << "console.log('before')\ndisplay('image/png', Buffer.from('%1', 'base64'))\n"
               "console.log('after')\ndisplay('text/html', '<b>hi</b>')"
            << true;
        QTest::newRow("typescript")
            << "typescript"
            << "const png: Buffer = Buffer.from('%1', 'base64')\nconsole.log('before')\ndisplay('image/png', png)\n"
               "console.log('after')\ndisplay('text/html', '<b>hi</b>' as string)"
            << true;
        QTest::newRow("go")
            << "go"
            << "fmt.Println(\"before\")\npng, _ := base64.StdEncoding.DecodeString(\"%1\")\n"
               "display(\"image/png\", png)\nfmt.Println(\"after\")\n"
               "display(\"text/html\", \"<b>hi</b>\")"
            << true;
        QTest::newRow("r")
            << "r"
            << "cat('before\\n')\nIRdisplay::display_png(jsonlite::base64_dec('%1'))\n"
               "cat('after\\n')\nIRdisplay::display_html('<b>hi</b>')"
            << true;
        QTest::newRow("jupyter-python3")
            << "jupyter-python3"
            << "import base64\nfrom IPython.display import display, Image, HTML\nprint('before')\n"
               "display(Image(data=base64.b64decode('%1')))\nprint('after')\n"
               "display(HTML('<b>hi</b>'))"
            << true;
    }

    void displayHelperRoundTripsAPng()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(bool, inPrintOrder);
        // A 1x1 PNG.
        const QString png =
            QStringLiteral("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
                           "2mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==");

        const QJsonArray declared =
            declaredCapabilities(language).value(QLatin1String("display")).toArray();
        QVERIFY(declared.contains(QStringLiteral("image/png")));
        QVERIFY(declared.contains(QStringLiteral("text/html")));
        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, code.arg(png));
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        const QList<Event> displays = eventsOfType(execution, QStringLiteral("display"));
        VERIFY_EXEC(displays.size() == 2, execution);
        QCOMPARE(displays.at(0).fields.value(QLatin1String("data")).toObject()
                     .value(QLatin1String("image/png")).toString(),
                 png);
        QCOMPARE(displays.at(1).fields.value(QLatin1String("data")).toObject()
                     .value(QLatin1String("text/html")).toString().trimmed(),
                 QStringLiteral("<b>hi</b>"));
        VERIFY_EXEC(!hasEvent(execution, "result"), execution);
        QCOMPARE(out(execution), QStringLiteral("before\nafter\n"));
        QCOMPARE(stdoutBeforeFirstDisplay(execution),
                 inPrintOrder ? QStringLiteral("before\n") : QStringLiteral("before\nafter\n"));
    }

    // Bash's display is a command: bad arguments fail the command with a message that says why.
    void bashDisplayRejectsBadArguments_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown type") << "display text/x-unknown </dev/null" << "cannot show text/x-unknown";
        QTest::newRow("no type") << "display" << "usage: display MIME-TYPE [FILE]";
        QTest::newRow("missing file") << "display image/png /nonexistent.png" << "/nonexistent.png";
    }

    void bashDisplayRejectsBadArguments()
    {
        QFETCH(QString, code);
        QFETCH(QString, message);
        const QString context = createContext(QStringLiteral("bash"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "error", execution);
        VERIFY_EXEC(err(execution).contains(message), execution);
        VERIFY_EXEC(!hasEvent(execution, "display"), execution);
    }

    // Output that a run's background process or timer writes after the run ended, while the
    // context is idle, belongs to no execution: the next run does not get it, and the context
    // keeps it as background output, after the run that left the writer behind. (Output written
    // while a later run is going on shares that run's pipe and is shown as its output.)
    void backgroundOutputIsNotPinnedOnTheNextRun_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("leaveWriter");  // %1: file the writer creates after "late"
        QTest::addColumn<QString>("printMine");

        QTest::newRow("python child process")
            << "python"
            << "import subprocess\n"
               "writer = subprocess.Popen(\"sleep 0.5; echo late; : > '%1'\", shell=True)"
            << "print('mine')";
        QTest::newRow("python thread")
            << "python"
            << "import threading, time\n"
               "def later():\n    time.sleep(0.5)\n    print('late', flush=True)\n"
               "    open('%1', 'w').close()\n"
               "threading.Thread(target=later, daemon=True).start()"
            << "print('mine')";
        QTest::newRow("bash") << "bash" << "(sleep 0.5; echo late; : > '%1') &" << "echo mine";
        QTest::newRow("perl") << "perl" << "system(q{(sleep 0.5; echo late; : > '%1') &});"
                              << "print \"mine\\n\";";
        QTest::newRow("java")
            << "java"
            << "new ProcessBuilder(\"sh\", \"-c\", \"sleep 0.5; echo late; : > '%1'\")"
               ".inheritIO().start();"
            << "System.out.println(\"mine\");";
        QTest::newRow("javascript child process")
            << "javascript"
            << "require('child_process').spawn('sh', ['-c', \"sleep 0.5; echo late; : > '%1'\"],"
               " { stdio: 'inherit' }); undefined"
            << "console.log('mine')";
        QTest::newRow("javascript timer")
            << "javascript"
            << "setTimeout(() => process.stdout.write('late\\n',\n"
               "    () => require('fs').writeFileSync('%1', '')), 500); undefined"
            << "console.log('mine')";
        QTest::newRow("typescript timer")
            << "typescript"
            << "setTimeout((): void => { process.stdout.write('late\\n',\n"
               "    () => require('fs').writeFileSync('%1', '')) }, 500); undefined"
            << "console.log('mine')";
        QTest::newRow("go")
            << "go"
            << "writer := exec.Command(\"sh\", \"-c\", \"sleep 0.5; echo late; : > '%1'\")\n"
               "writer.Stdout = os.Stdout\nwriter.Start()"
            << "fmt.Println(\"mine\")";
    }

    void backgroundOutputIsNotPinnedOnTheNextRun()
    {
        QFETCH(QString, language);
        QFETCH(QString, leaveWriter);
        QFETCH(QString, printMine);
        const QString flag = QDir(m_engine.dataDir()).filePath(QStringLiteral("writer-done"));

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr first = run(context, leaveWriter.arg(flag));
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        const qint64 pid = info(context).pid;

        // "late" is in the worker's stdout pipe once the flag exists, and the host has taken it
        // once the pipe is empty.
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(flag), kRunTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(unreadBytesInPipe(pid, STDOUT_FILENO), 0, kRunTimeout);
        VERIFY_EXEC(!out(first).contains(QLatin1String("late")), first);
        QString background;
        QTRY_VERIFY_WITH_TIMEOUT(
                [&] {
                    background.clear();
                    const auto page = contexts().backgroundOutput({}, context, 0, 100);
                    for (const BackgroundOutput::Entry &entry : page ? page->entries : QList<BackgroundOutput::Entry>()) {
                        if (entry.afterExecutionId == first->id()
                            && entry.event.fields.value(QLatin1String("name")).toString() == QLatin1String("stdout"))
                            background += entry.event.fields.value(QLatin1String("text")).toString();
                    }
                    return background == QLatin1String("late\n");
                }(),
                kRunTimeout);

        const ExecutionPtr second = run(context, printMine);
        QVERIFY(second);
        VERIFY_EXEC(second->status() == "ok", second);
        QCOMPARE(out(second), QStringLiteral("mine\n"));
    }

    // Two contexts of one language are two interpreters in two processes: what one defines,
    // the other does not have.
    void contextsOfOneLanguageAreIsolated_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("use");  // prints 42 where `define` ran

        QTest::newRow("python") << "python" << "x = 41" << "print(x + 1)";
        QTest::newRow("bash") << "bash" << "x=41" << "echo $((x + 1))";
        QTest::newRow("perl") << "perl" << "our $x = 41;" << "print $main::x + 1, \"\\n\";";
        QTest::newRow("java") << "java" << "int x = 41;" << "System.out.println(x + 1);";
        QTest::newRow("javascript") << "javascript" << "var x = 41" << "console.log(x + 1)";
        QTest::newRow("typescript") << "typescript" << "var x: number = 41" << "console.log(x + 1)";
        QTest::newRow("go") << "go" << "x := 41" << "fmt.Println(x + 1)";
    }

    void contextsOfOneLanguageAreIsolated()
    {
        QFETCH(QString, language);
        QFETCH(QString, define);
        QFETCH(QString, use);

        const QString first = createContext(language);
        const QString second = createContext(language);
        QVERIFY(!first.isEmpty());
        QVERIFY(!second.isEmpty());
        const ExecutionPtr defined = run(first, define);
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);
        // Unknown in the other: an error (Python, Java, JavaScript, Go) or an unset value that
        // counts as 0 (Bash, Perl).
        const ExecutionPtr inSecond = run(second, use);
        QVERIFY(inSecond);
        VERIFY_EXEC(inSecond->status() == "error" || out(inSecond) == "1\n", inSecond);
        const ExecutionPtr inFirst = run(first, use);
        QVERIFY(inFirst);
        VERIFY_EXEC(inFirst->status() == "ok", inFirst);
        QCOMPARE(out(inFirst), QStringLiteral("42\n"));
        QVERIFY(info(first).pid > 0);
        QVERIFY(info(second).pid > 0);
        QVERIFY(info(first).pid != info(second).pid);
    }

    // yaegi takes source that starts with a declaration as a file and anything else as a
    // function body; cells mix both freely and run top to bottom.
    void goCellsMixDeclarationsAndStatements_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("expected");

        QTest::newRow("declarations, then statements")
            << "var base = 40\nfunc add(v int) int { return base + v }\nfmt.Println(add(2))"
            << "42\n";
        QTest::newRow("statements, then a declaration that uses them")
            << "n := 40\nfunc more() int { return n + 2 }\nfmt.Println(more())" << "42\n";
        QTest::newRow("functions that call each other")
            << "func first() int { return second() + 1 }\nfunc second() int { return 41 }\n"
               "fmt.Println(first())"
            << "42\n";
        QTest::newRow("a type, its method and a call")
            << "type T struct{ A int }\nfunc (t T) Twice() int { return t.A * 2 }\n"
               "fmt.Println(T{21}.Twice())"
            << "42\n";
        QTest::newRow("semicolons on one line")
            << "a := 40; func b() int { return 2 }; fmt.Println(a + b())" << "42\n";
        QTest::newRow("a function literal is a statement")
            << "func() {\n    fmt.Println(42)\n}()" << "42\n";
        // As `go run` would: main runs once, after the cell's declarations, and not again.
        QTest::newRow("a whole program")
            << "package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n"
               "func main() {\n\tfmt.Println(strings.ToUpper(\"go\"), answer())\n}\n\n"
               "func answer() int { return 42 }\n"
            << "GO 42\n";
    }

    void goCellsMixDeclarationsAndStatements()
    {
        QFETCH(QString, code);
        QFETCH(QString, expected);

        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(context, code);
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        QCOMPARE(out(execution), expected);
        VERIFY_EXEC(!hasEvent(execution, "result"), execution);

        // Nothing of it runs again with the next cell.
        const ExecutionPtr next = run(context, QStringLiteral("fmt.Println(\"next\")"));
        QVERIFY(next);
        QCOMPARE(out(next), QStringLiteral("next\n"));
    }

    // A panic ends the cell with an error that says where, in which cell, and the worker and
    // everything defined before stay.
    void goPanicKeepsWorkerAndSaysWhere()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr defined =
            run(context, QStringLiteral("x := 41\nfunc divide(a, b int) int {\n    return a / b\n}"));
        QVERIFY(defined);
        VERIFY_EXEC(defined->status() == "ok", defined);
        const qint64 pid = info(context).pid;

        const ExecutionPtr failed =
            run(context, QStringLiteral("fmt.Println(\"before\")\ndivide(1, 0)\nx = 0"));
        QVERIFY(failed);
        VERIFY_EXEC(failed->status() == "error", failed);
        QCOMPARE(out(failed), QStringLiteral("before\n"));
        const QList<Event> errors = eventsOfType(failed, QStringLiteral("error"));
        VERIFY_EXEC(errors.size() == 1, failed);
        QCOMPARE(errors.first().fields.value(QLatin1String("ename")).toString(),
                 QStringLiteral("panic"));
        QCOMPARE(errors.first().fields.value(QLatin1String("evalue")).toString(),
                 QStringLiteral("runtime error: integer divide by zero"));
        const QStringList traceback = tracebackLines(errors.first());
        // Innermost first: the division in the first cell, the call in the second.
        const QStringList expected{QStringLiteral("panic: runtime error: integer divide by zero"),
                                   QStringLiteral("at In[1]:3:12"), QStringLiteral("at In[2]:2:1")};
        QCOMPARE(traceback, expected);
        VERIFY_EXEC(!doneOf(failed).value(QLatin1String("state_lost")).toBool(), failed);

        const ExecutionPtr after = run(context, QStringLiteral("fmt.Println(x + 1)"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), QStringLiteral("42\n"));
        QCOMPARE(info(context).pid, pid);
    }

    // A panic inside a cell's loop points into the loop (yaegi places that frame at the loop's
    // header); what the worker puts around the loop to scope its variables does not show.
    void goPanicInALoopSaysWhere()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("func divide(a, b int) int {\n    return a / b\n}")));
        const ExecutionPtr failed = run(context, QStringLiteral(
                "for i := 1; i >= 0; i-- {\n    fmt.Println(divide(6, i))\n}"));
        QVERIFY(failed);
        VERIFY_EXEC(failed->status() == "error", failed);
        QCOMPARE(out(failed), QStringLiteral("6\n"));
        const QList<Event> errors = eventsOfType(failed, QStringLiteral("error"));
        VERIFY_EXEC(errors.size() == 1, failed);
        const QStringList traceback = tracebackLines(errors.first());
        const QStringList expected{QStringLiteral("panic: runtime error: integer divide by zero"),
                                   QStringLiteral("at In[1]:2:12"), QStringLiteral("at In[2]:1:5")};
        QCOMPARE(traceback, expected);
    }

    // Errors found before running point into the cell as "In[<execution count>]:line:column".
    // A syntax error anywhere stops the whole cell; a compile error stops it where it is.
    void goCompileErrorsPointIntoTheCell_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("ename");
        QTest::addColumn<QString>("evalue");
        QTest::addColumn<QString>("stdout");

        QTest::newRow("undefined name")
            << "x := 1\nfmt.Println(\"ran\")\n\nz := x + missing" << "CompileError"
            << "In[1]:4:10: undefined: missing" << "ran\n";
        QTest::newRow("wrong type in a declaration")
            << "fmt.Println(\"ran\")\nvar bad int = \"s\"" << "CompileError"
            << "In[1]:2:15: cannot convert \"s\" to int" << "ran\n";
        QTest::newRow("syntax error on a later line")
            << "fmt.Println(\"never\")\nx := (1 + )" << "SyntaxError"
            << "In[1]:2:11: expected operand, found ')'" << "";
        QTest::newRow("cell ends too early")
            << "fmt.Println(\"never\")\nif true {" << "SyntaxError"
            << "In[1]:2:10: unexpected end of the cell: expected '}'" << "";
        QTest::newRow("unknown package")
            << "import \"no/such/package\"" << "CompileError"
            << "In[1]:1:8: import \"no/such/package\" error: unable to find source related to: "
               "\"no/such/package\""
            << "";
    }

    void goCompileErrorsPointIntoTheCell()
    {
        QFETCH(QString, code);
        QFETCH(QString, ename);
        QFETCH(QString, evalue);
        QFETCH(QString, stdout);

        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr failed = run(context, code);
        QVERIFY(failed);
        VERIFY_EXEC(failed->status() == "error", failed);
        QCOMPARE(firstErrorName(failed), ename);
        const Event error = eventsOfType(failed, QStringLiteral("error")).first();
        QCOMPARE(error.fields.value(QLatin1String("evalue")).toString(), evalue);
        QCOMPARE(out(failed), stdout);
        VERIFY_EXEC(!doneOf(failed).value(QLatin1String("state_lost")).toBool(), failed);
    }

    // Imports persist, and a cell that imports again (run twice) does not fail.
    void goImportsPersist()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const QString imports = QStringLiteral("import str \"strings\"\nimport \"math/rand\"");
        const QString use =
            QStringLiteral("fmt.Println(str.ToUpper(\"ok\"), rand.New(rand.NewSource(1)).Intn(1))");
        for (int round = 0; round < 2; ++round) {
            const ExecutionPtr imported = run(context, imports);
            QVERIFY(imported);
            VERIFY_EXEC(imported->status() == "ok", imported);
            const ExecutionPtr used = run(context, use);
            QVERIFY(used);
            VERIFY_EXEC(used->status() == "ok", used);
            QCOMPARE(out(used), QStringLiteral("OK 0\n"));
        }
        // Packages of the standard library need no import, as in yaegi's REPL.
        const ExecutionPtr implicit = run(context, QStringLiteral("strconv.Itoa(42)"));
        QVERIFY(implicit);
        const QList<Event> results = eventsOfType(implicit, QStringLiteral("result"));
        VERIFY_EXEC(results.size() == 1, implicit);
        QCOMPARE(results.first().fields.value(QLatin1String("data")).toObject()
                     .value(QLatin1String("text/plain")).toString(),
                 QStringLiteral("\"42\""));
    }

    // yaegi keeps the first definition of a type or method and would silently ignore a new
    // one; the worker refuses the change instead. Running the same definition again is fine,
    // and functions and variables can change.
    void goTypesAndMethodsCannotChange()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const QString type = QStringLiteral("type P struct{ A int }\nfunc (p P) Get() int { return p.A }");
        for (int round = 0; round < 2; ++round) {
            const ExecutionPtr declared = run(context, type);
            QVERIFY(declared);
            VERIFY_EXEC(declared->status() == "ok", declared);
        }
        for (const QString &change : {QStringLiteral("type P struct{ A, B int }"),
                                      QStringLiteral("func (p P) Get() int { return 0 }")}) {
            const ExecutionPtr refused = run(context, change);
            QVERIFY(refused);
            VERIFY_EXEC(refused->status() == "error", refused);
            QCOMPARE(firstErrorName(refused), QStringLiteral("CompileError"));
            const QString evalue = eventsOfType(refused, QStringLiteral("error"))
                                       .first().fields.value(QLatin1String("evalue")).toString();
            VERIFY_EXEC(evalue.startsWith(QLatin1String("In[")) && evalue.contains(QLatin1String("restart the context")),
                        refused);
        }
        const ExecutionPtr kept = run(context, QStringLiteral("fmt.Println(P{42}.Get())"));
        QVERIFY(kept);
        QCOMPARE(out(kept), QStringLiteral("42\n"));

        QVERIFY(run(context, QStringLiteral("func f() int { return 1 }")));
        const ExecutionPtr changed =
            run(context, QStringLiteral("func f() int { return 2 }\nfmt.Println(f())"));
        QVERIFY(changed);
        VERIFY_EXEC(changed->status() == "ok", changed);
        QCOMPARE(out(changed), QStringLiteral("2\n"));
    }

    // Go's display() helper: rich output in order with the cell's prints.
    void goDisplayHelperShowsRichOutputInOrder()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = run(
            context, QStringLiteral("fmt.Println(\"before\")\n"
                                    "display(\"image/png\", image.NewRGBA(image.Rect(0, 0, 2, 3)))\n"
                                    "fmt.Println(\"after\")\n"
                                    "display(\"text/html\", \"<b>hi</b>\")\n"
                                    "display(\"application/json\", map[string]int{\"a\": 1})"));
        QVERIFY(execution);
        VERIFY_EXEC(execution->status() == "ok", execution);
        const QList<Event> displays = eventsOfType(execution, QStringLiteral("display"));
        VERIFY_EXEC(displays.size() == 3, execution);

        const QJsonObject image = displays.at(0).fields.value(QLatin1String("data")).toObject();
        const QByteArray png =
            QByteArray::fromBase64(image.value(QLatin1String("image/png")).toString().toLatin1());
        QVERIFY(png.startsWith("\x89PNG\r\n\x1a\n"));
        const QJsonObject imageMeta = displays.at(0).fields.value(QLatin1String("metadata"))
                                          .toObject().value(QLatin1String("image/png")).toObject();
        QCOMPARE(imageMeta.value(QLatin1String("width")).toInt(), 2);
        QCOMPARE(imageMeta.value(QLatin1String("height")).toInt(), 3);
        QCOMPARE(displays.at(1).fields.value(QLatin1String("data")).toObject()
                     .value(QLatin1String("text/html")).toString(),
                 QStringLiteral("<b>hi</b>"));
        QCOMPARE(displays.at(2).fields.value(QLatin1String("data")).toObject()
                     .value(QLatin1String("application/json")).toObject(),
                 QJsonObject({{QStringLiteral("a"), 1}}));

        // The image sits between the two prints.
        QCOMPARE(stdoutBeforeFirstDisplay(execution), QStringLiteral("before\n"));
        QCOMPARE(out(execution), QStringLiteral("before\nafter\n"));

        // Bad input is an error that says what is wrong.
        const ExecutionPtr bad = run(context, QStringLiteral("display(\"not a type\", 1)"));
        QVERIFY(bad);
        VERIFY_EXEC(bad->status() == "error", bad);
        const QString evalue = eventsOfType(bad, QStringLiteral("error"))
                                   .first().fields.value(QLatin1String("evalue")).toString();
        QVERIFY2(evalue.contains(QLatin1String("is not a MIME type")), qPrintable(evalue));
    }

    // The limit of yaegi's interrupt: a call into compiled code that blocks (here a second Lock
    // of a mutex) cannot be stopped, so the interrupt ladder ends the worker and says the state
    // is lost; the next run gets a fresh worker.
    void goInterruptOfABlockedCompiledCallEndsTheWorker()
    {
        const QString context = createContext(QStringLiteral("go"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("os.Setenv(\"RH_X\", \"41\")")));
        const qint64 pid = info(context).pid;

        const ExecutionPtr blocked = start(
            context, QStringLiteral("var mu sync.Mutex\nmu.Lock()\nfmt.Println(\"blocking\")\nmu.Lock()"));
        QVERIFY(blocked);
        QTRY_VERIFY_WITH_TIMEOUT(out(blocked).contains(QLatin1String("blocking")), kRunTimeout);
        QVERIFY(contexts().interruptExecution(blocked->id()).ok());
        // The ladder's default: SIGKILL 10 s after the first SIGINT.
        QTRY_VERIFY_WITH_TIMEOUT(blocked->isFinished(), 10000 + kPromptly);
        VERIFY_EXEC(blocked->status() == "interrupted", blocked);
        VERIFY_EXEC(doneOf(blocked).value(QLatin1String("state_lost")).toBool(), blocked);
        QCOMPARE(firstErrorName(blocked), QStringLiteral("WorkerKilled"));

        const ExecutionPtr after = run(context, QStringLiteral("fmt.Println(os.Getenv(\"RH_X\") == \"\")"));
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        VERIFY_EXEC(hasEvent(after, "state_reset"), after);
        QCOMPARE(out(after), QStringLiteral("true\n"));
        QVERIFY(info(context).pid != pid);
    }

    // A Go plugin whose worker was not built (no Go toolchain at build time) still loads, and
    // says the language is unavailable, why, and what to install.
    void goPluginWithoutItsWorkerSaysWhatToInstall()
    {
        // Nothing may point the plugin at a worker elsewhere, or load the built plugin first.
        const QByteArray workerSetting = qgetenv("REPLHOST_GO");
        const QByteArray pluginPath = qgetenv("REPLHOST_PLUGIN_PATH");
        qunsetenv("REPLHOST_GO");
        qunsetenv("REPLHOST_PLUGIN_PATH");
        const auto restoreEnvironment = qScopeGuard([&] {
            if (!workerSetting.isNull())
                qputenv("REPLHOST_GO", workerSetting);
            if (!pluginPath.isNull())
                qputenv("REPLHOST_PLUGIN_PATH", pluginPath);
        });

        QTemporaryDir pluginDir;
        QVERIFY(pluginDir.isValid());
        const QString plugin =
            QDir(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR)).filePath(QStringLiteral("replhost-go.so"));
        QVERIFY(QFile::copy(plugin, pluginDir.filePath(QStringLiteral("replhost-go.so"))));
        QTemporaryDir otherData;
        QVERIFY(otherData.isValid());
        EngineConfig lonely;
        lonely.dataDir = otherData.path();
        lonely.pluginPaths = {pluginDir.path()};
        auto engine = Engine::open(lonely);
        QVERIFY(engine.ok());

        const auto resolved = (*engine)->plugins().resolve(QStringLiteral("go"));
        QVERIFY(!resolved.ok());
        QCOMPARE(resolved.error().code, QStringLiteral("unavailable"));
        const QString reason = resolved.error().message;
        QVERIFY2(reason.contains(QLatin1String("replhost-go-worker")), qPrintable(reason));
        QVERIFY2(reason.contains(QDir(pluginDir.path()).canonicalPath()), qPrintable(reason));
        QVERIFY2(reason.contains(QLatin1String("golang-go")), qPrintable(reason));

        CreateContextRequest request;
        request.language = QStringLiteral("go");
        const auto created = (*engine)->contexts().create(request);
        QVERIFY(!created.ok());
        QVERIFY2(created.error().message.contains(QLatin1String("golang-go")),
                 qPrintable(created.error().message));
    }

    // A worker setting that names something else is refused, saying what was found.
    void goWorkerSettingMustNameAWorker_data()
    {
        QTest::addColumn<QString>("interpreter");
        QTest::addColumn<QString>("reason");

        QTest::newRow("missing file") << "/nonexistent/replhost-go-worker"
                                      << "is not an executable file";
        QTest::newRow("another program") << "/bin/echo" << "is not a replhost Go worker";
    }

    void goWorkerSettingMustNameAWorker()
    {
        QFETCH(QString, interpreter);
        QFETCH(QString, reason);

        EngineConfig configured = config();
        configured.languageSettings = QJsonObject{
            {QStringLiteral("go"), QJsonObject{{QStringLiteral("interpreter"), interpreter}}}};
        QVERIFY(openEngine(configured));
        const auto resolved = m_engine->plugins().resolve(QStringLiteral("go"));
        QVERIFY(!resolved.ok());
        QCOMPARE(resolved.error().code, QStringLiteral("unavailable"));
        const QString message = resolved.error().message;
        QVERIFY2(message.contains(interpreter) && message.contains(reason), qPrintable(message));
    }

    void envLayersWorkspaceContextExecution_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("noop");
        QTest::addColumn<QString>("printEnv");  // through a child process

        QTest::newRow("python") << "python" << "pass" << "import os\nos.system('env')";
        QTest::newRow("bash") << "bash" << ":" << "env";
        QTest::newRow("perl") << "perl" << "1;" << "system('env');";
        QTest::newRow("java") << "java" << "int noop = 0;"
                              << "new ProcessBuilder(\"env\").inheritIO().start().waitFor();";
        QTest::newRow("javascript") << "javascript" << "void 0" << "require('child_process').execSync('env', { stdio: 'inherit' })";
        QTest::newRow("typescript") << "typescript" << "void 0" << "require('child_process').execSync('env', { stdio: 'inherit' })";
        QTest::newRow("go") << "go" << "noop := 0"
                            << "printer := exec.Command(\"env\")\nprinter.Stdout = os.Stdout\n"
                               "printer.Run()";
        QTest::newRow("r") << "r" << "invisible(0)" << "cat(system('env', intern = TRUE), sep = '\\n')";
        QTest::newRow("jupyter-python3") << "jupyter-python3" << "pass"
                                         << "import subprocess\nprint(subprocess.run(['env'], capture_output=True, text=True).stdout, end='')";
    }

    void envLayersWorkspaceContextExecution()
    {
        QFETCH(QString, language);
        QFETCH(QString, noop);
        QFETCH(QString, printEnv);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        // The worker is already running when the layers change: they reach it as a delta.
        QVERIFY(run(context, noop));

        QVERIFY(m_engine->workspaces()
                    .changeEnv({}, {{"RH_WORKSPACE", "w"}, {"RH_LAYER", "workspace"}},
                               {"RH_HOST_HIDDEN_BY_WORKSPACE"}, {})
                    .ok());
        QVERIFY(contexts()
                    .changeEnv({}, context, {{"RH_CONTEXT", "c"}, {"RH_LAYER", "context"}},
                               {"RH_HOST_HIDDEN_BY_CONTEXT"}, {})
                    .ok());
        const QString quoted = QStringLiteral("it's \"quoted\" $HOME `id` $(id); echo injected");
        if (!declaredCapabilities(language).value(QLatin1String("env_per_execution")).toBool(true)) {
            // A language that declares no environment per run refuses one, and still has the
            // workspace and context layers.
            RunRequest refused;
            refused.contextId = context;
            refused.code = printEnv;
            refused.env = {{"RH_EXECUTION", "e"}};
            const auto answer = contexts().run(refused);
            QVERIFY(!answer.ok());
            QCOMPARE(answer.error().code, QStringLiteral("bad_request"));
            const ExecutionPtr layered = run(context, printEnv);
            QVERIFY(layered);
            VERIFY_EXEC(layered->status() == "ok", layered);
            const auto env = parseEnv(out(layered));
            QCOMPARE(env.value("RH_HOST_KEPT"), QStringLiteral("host"));
            QCOMPARE(env.value("RH_WORKSPACE"), QStringLiteral("w"));
            QCOMPARE(env.value("RH_LAYER"), QStringLiteral("context"));
            QVERIFY(!env.contains("RH_HOST_HIDDEN_BY_WORKSPACE"));
            QVERIFY(!env.contains("RH_HOST_HIDDEN_BY_CONTEXT"));
            return;
        }
        RunRequest withExecLayer;
        withExecLayer.env = {{"RH_EXECUTION", "e"}, {"RH_LAYER", "execution"},
                             {"RH_QUOTED", quoted}};
        withExecLayer.envUnset = {"RH_HOST_HIDDEN_BY_EXECUTION"};

        const ExecutionPtr first = run(context, printEnv, withExecLayer);
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        const auto env1 = parseEnv(out(first));
        QCOMPARE(env1.value("RH_HOST_KEPT"), QStringLiteral("host"));
        QCOMPARE(env1.value("RH_WORKSPACE"), QStringLiteral("w"));
        QCOMPARE(env1.value("RH_CONTEXT"), QStringLiteral("c"));
        QCOMPARE(env1.value("RH_EXECUTION"), QStringLiteral("e"));
        QCOMPARE(env1.value("RH_LAYER"), QStringLiteral("execution"));
        QCOMPARE(env1.value("RH_QUOTED"), quoted);
        QVERIFY(!env1.contains("RH_HOST_HIDDEN_BY_WORKSPACE"));
        QVERIFY(!env1.contains("RH_HOST_HIDDEN_BY_CONTEXT"));
        QVERIFY(!env1.contains("RH_HOST_HIDDEN_BY_EXECUTION"));

        // The execution layer was for that run only.
        const ExecutionPtr second = run(context, printEnv);
        QVERIFY(second);
        VERIFY_EXEC(second->status() == "ok", second);
        const auto env2 = parseEnv(out(second));
        QVERIFY(!env2.contains("RH_EXECUTION"));
        QVERIFY(!env2.contains("RH_QUOTED"));
        QCOMPARE(env2.value("RH_LAYER"), QStringLiteral("context"));
        QCOMPARE(env2.value("RH_HOST_HIDDEN_BY_EXECUTION"), QStringLiteral("host"));
        QVERIFY(!env2.contains("RH_HOST_HIDDEN_BY_WORKSPACE"));
        QVERIFY(!env2.contains("RH_HOST_HIDDEN_BY_CONTEXT"));
        QCOMPARE(env2.value("RH_WORKSPACE"), QStringLiteral("w"));
        QCOMPARE(env2.value("RH_CONTEXT"), QStringLiteral("c"));

        const auto effective = contexts().effectiveEnv({}, context);
        QVERIFY(effective.ok());
        QCOMPARE(effective->value("RH_LAYER"), QStringLiteral("context"));
        QVERIFY(!effective->contains("RH_HOST_HIDDEN_BY_CONTEXT"));

        // Clearing keys from the layers uncovers what is below them.
        QVERIFY(contexts().changeEnv({}, context, {}, {}, {"RH_LAYER", "RH_CONTEXT"}).ok());
        QVERIFY(m_engine->workspaces().changeEnv({}, {}, {}, {"RH_HOST_HIDDEN_BY_WORKSPACE"}).ok());
        const ExecutionPtr third = run(context, printEnv);
        QVERIFY(third);
        VERIFY_EXEC(third->status() == "ok", third);
        const auto env3 = parseEnv(out(third));
        QCOMPARE(env3.value("RH_LAYER"), QStringLiteral("workspace"));
        QVERIFY(!env3.contains("RH_CONTEXT"));
        QCOMPARE(env3.value("RH_HOST_HIDDEN_BY_WORKSPACE"), QStringLiteral("host"));
        QVERIFY(!env3.contains("RH_HOST_HIDDEN_BY_CONTEXT"));
    }

    void cwdPersistsAndIsConfinedToWorkspace_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("changeToTmp");
        QTest::addColumn<QString>("printCwd");  // through a child process

        QTest::newRow("python") << "python" << "import os\nos.chdir('/tmp')"
                                << "import os\nos.system('/bin/pwd')";
        QTest::newRow("bash") << "bash" << "cd /tmp" << "/bin/pwd";
        QTest::newRow("perl") << "perl" << "chdir '/tmp' or die;" << "system('/bin/pwd');";
        QTest::newRow("java") << "java" << "cd(\"/tmp\");"
                              << "new ProcessBuilder(\"/bin/pwd\").inheritIO().start().waitFor();";
        QTest::newRow("javascript") << "javascript" << "process.chdir('/tmp')" << "require('child_process').execSync('/bin/pwd', { stdio: 'inherit' })";
        QTest::newRow("typescript") << "typescript" << "process.chdir('/tmp' as string)" << "require('child_process').execSync('/bin/pwd', { stdio: 'inherit' })";
        QTest::newRow("go") << "go" << "os.Chdir(\"/tmp\")"
                            << "pwd := exec.Command(\"/bin/pwd\")\npwd.Stdout = os.Stdout\npwd.Run()";
        QTest::newRow("r") << "r" << "setwd('/tmp')"
                           << "cat(system('/bin/pwd', intern = TRUE), '\\n', sep = '')";
        QTest::newRow("jupyter-python3") << "jupyter-python3" << "import os\nos.chdir('/tmp')"
                                         << "import subprocess\nprint(subprocess.run(['/bin/pwd'], capture_output=True, text=True).stdout, end='')";
    }

    void cwdPersistsAndIsConfinedToWorkspace()
    {
        QFETCH(QString, language);
        QFETCH(QString, changeToTmp);
        QFETCH(QString, printCwd);

        const auto workspace = m_engine->workspaces().get({});
        QVERIFY(workspace.ok());
        const QDir root(workspace->directory);
        QVERIFY(root.mkpath(QStringLiteral("sub/dir")));
        const QString subdir = QDir(root.filePath(QStringLiteral("sub/dir"))).canonicalPath();

        // A relative cwd is taken inside the workspace.
        const QString context = createContext(language, QStringLiteral("sub/dir"));
        QVERIFY(!context.isEmpty());
        QCOMPARE(info(context).cwd, subdir);
        const ExecutionPtr inSubdir = run(context, printCwd);
        QVERIFY(inSubdir);
        QCOMPARE(out(inSubdir), subdir + QLatin1Char('\n'));

        // Code may go anywhere, and the context stays there.
        const ExecutionPtr moved = run(context, changeToTmp);
        QVERIFY(moved);
        VERIFY_EXEC(moved->status() == "ok", moved);
        QCOMPARE(doneOf(moved).value(QLatin1String("cwd")).toString(), QStringLiteral("/tmp"));
        const ExecutionPtr inTmp = run(context, printCwd);
        QVERIFY(inTmp);
        QCOMPARE(out(inTmp), QStringLiteral("/tmp\n"));
        QCOMPARE(info(context).cwd, QStringLiteral("/tmp"));

        // But a context cannot be created outside its workspace.
        QVERIFY(QFile::link(QStringLiteral("/"), root.filePath(QStringLiteral("escape"))));
        for (const QString &outside : {QStringLiteral("/"), QStringLiteral("/tmp"),
                                       QStringLiteral("../.."), QStringLiteral("sub/../.."),
                                       QStringLiteral("escape"), QStringLiteral("no-such-dir")}) {
            CreateContextRequest request;
            request.language = language;
            request.cwd = outside;
            const auto refused = contexts().create(request);
            QVERIFY2(!refused.ok(), qPrintable(outside));
            QCOMPARE(refused.error().code, QStringLiteral("bad_request"));
        }
        QCOMPARE(contexts().list({})->size(), 1);
    }

    void tenMegabytesOfOutputDoNotDeadlock_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");  // 10 x (1 MiB of 'x' on stdout, 1 KiB of 'y' on stderr)

        QTest::newRow("python") << "python"
                                << "import sys\n"
                                   "for _ in range(10):\n"
                                   "    sys.stdout.write('x' * 1048576)\n"
                                   "    sys.stdout.flush()\n"
                                   "    sys.stderr.write('y' * 1024)\n"
                                   "    sys.stderr.flush()";
        QTest::newRow("bash") << "bash"
                              << "for i in 1 2 3 4 5 6 7 8 9 10; do\n"
                                 "  head -c 1048576 /dev/zero | tr '\\0' x\n"
                                 "  head -c 1024 /dev/zero | tr '\\0' y >&2\n"
                                 "done";
        QTest::newRow("perl") << "perl"
                              << "for (1 .. 10) {\n"
                                 "    print 'x' x 1048576;\n"
                                 "    print STDERR 'y' x 1024;\n"
                                 "}";
        QTest::newRow("java") << "java"
                              << "for (int i = 0; i < 10; i++) {\n"
                                 "    System.out.print(\"x\".repeat(1048576));\n"
                                 "    System.err.print(\"y\".repeat(1024));\n"
                                 "}";
        QTest::newRow("javascript") << "javascript" << "for (let i = 0; i < 10; i++) {\n  process.stdout.write('x'.repeat(1048576))\n  process.stderr.write('y'.repeat(1024))\n}";
        QTest::newRow("typescript") << "typescript" << "for (let i: number = 0; i < 10; i++) {\n  process.stdout.write('x'.repeat(1048576))\n  process.stderr.write('y'.repeat(1024))\n}";
        QTest::newRow("go") << "go"
                            << "for i := 0; i < 10; i++ {\n"
                               "    fmt.Print(strings.Repeat(\"x\", 1048576))\n"
                               "    fmt.Fprint(os.Stderr, strings.Repeat(\"y\", 1024))\n"
                               "}";
    }

    void tenMegabytesOfOutputDoNotDeadlock()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr execution = start(context, code);
        QVERIFY(execution);
        QTRY_VERIFY_WITH_TIMEOUT(execution->isFinished(), 2 * kRunTimeout);
        QCOMPARE(execution->status(), QStringLiteral("ok"));
        QVERIFY(!hasEvent(execution, "truncated"));
        const QString stdoutText = out(execution);
        QCOMPARE(stdoutText.size(), qsizetype(10 * 1048576));
        QVERIFY(stdoutText == QString(10 * 1048576, QLatin1Char('x')));
        QCOMPARE(err(execution), QString(10 * 1024, QLatin1Char('y')));
    }

    void outputBeyondTheCapIsTruncatedAndTheRunStillFinishes_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("flood");  // 1 MiB on stdout
        QTest::addColumn<QString>("small");

        QTest::newRow("python") << "python" << "import sys\nsys.stdout.write('x' * 1048576)"
                                << "print('after')";
        QTest::newRow("bash") << "bash" << "head -c 1048576 /dev/zero | tr '\\0' x"
                              << "echo after";
        QTest::newRow("perl") << "perl" << "print 'x' x 1048576;" << "print \"after\\n\";";
        QTest::newRow("java") << "java" << "System.out.print(\"x\".repeat(1048576));"
                              << "System.out.println(\"after\");";
        QTest::newRow("javascript") << "javascript" << "process.stdout.write('x'.repeat(1048576))" << "console.log('after')";
        QTest::newRow("typescript") << "typescript" << "process.stdout.write('x'.repeat(1048576) as string)" << "console.log('after')";
        QTest::newRow("go") << "go" << "fmt.Print(strings.Repeat(\"x\", 1048576))"
                            << "fmt.Println(\"after\")";
    }

    void outputBeyondTheCapIsTruncatedAndTheRunStillFinishes()
    {
        QFETCH(QString, language);
        QFETCH(QString, flood);
        QFETCH(QString, small);

        const qint64 cap = 100000;  // not a multiple of any pipe or read size
        EngineConfig capped = config();
        capped.workspaceDefaults.limits.outputBytes = cap;
        QVERIFY(openEngine(capped));

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr flooded = run(context, flood);
        QVERIFY(flooded);
        VERIFY_EXEC(flooded->status() == "ok", flooded);
        VERIFY_EXEC(eventsOfType(flooded, "truncated").size() == 1, flooded);
        VERIFY_EXEC(doneOf(flooded).value(QLatin1String("truncated")).toBool(), flooded);
        // What is kept is the output up to the cap, exactly.
        QCOMPARE(out(flooded).size(), qsizetype(cap));
        QVERIFY(out(flooded) == QString(cap, QLatin1Char('x')));

        // The cap is per execution.
        const ExecutionPtr after = run(context, small);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QVERIFY(!hasEvent(after, "truncated"));
        QCOMPARE(out(after), QStringLiteral("after\n"));
    }

    void runByLanguageUsesOldestDefaultContext_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("otherSpelling");
        QTest::addColumn<QString>("define");
        QTest::addColumn<QString>("use");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "PY" << "x = 41" << "print(x + 1)" << "42\n";
        QTest::newRow("bash") << "bash" << "BASH" << "x=41" << "echo $((x + 1))" << "42\n";
        QTest::newRow("perl") << "perl" << "Perl5" << "my $x = 41;" << "print $x + 1, \"\\n\""
                              << "42\n";
        QTest::newRow("java") << "java" << "JSHELL" << "int x = 41;" << "System.out.println(x + 1)"
                              << "42\n";
        QTest::newRow("javascript") << "javascript" << "Node" << "let x = 41" << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript") << "typescript" << "TS" << "let x: number = 41" << "console.log(x + 1)" << "42\n";
        QTest::newRow("go") << "go" << "GoLang" << "x := 41" << "fmt.Println(x + 1)" << "42\n";
    }

    void runByLanguageUsesOldestDefaultContext()
    {
        QFETCH(QString, language);
        QFETCH(QString, otherSpelling);
        QFETCH(QString, define);
        QFETCH(QString, use);
        QFETCH(QString, expected);

        // The first run by language creates the default context.
        const ExecutionPtr first = runInLanguage(language, define);
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        const QString oldest = first->contextId();
        auto listed = contexts().list({}, language);
        QVERIFY(listed.ok());
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().id, oldest);

        // A newer context of the same language does not take over.
        const QString newer = createContext(language);
        QVERIFY(!newer.isEmpty());
        const ExecutionPtr second = runInLanguage(otherSpelling, use);
        QVERIFY(second);
        QCOMPARE(second->contextId(), oldest);
        QCOMPARE(out(second), expected);
        listed = contexts().list({}, language);
        QCOMPARE(listed->size(), 2);
        QCOMPARE(listed->at(0).id, oldest);
        QCOMPARE(listed->at(1).id, newer);

        // Once the oldest is gone, the next oldest is the default.
        QVERIFY(contexts().remove({}, oldest).ok());
        const ExecutionPtr third = runInLanguage(language, use);
        QVERIFY(third);
        QCOMPARE(third->contextId(), newer);
    }

    void runsInOneContextAreFifo_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("warmUp");
        QTest::addColumn<QStringList>("steps");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "order = []"
                                << QStringList{"import time\ntime.sleep(0.2)\norder.append(1)",
                                               "order.append(2)",
                                               "order.append(3)\nprint(order)"}
                                << "[1, 2, 3]\n";
        QTest::newRow("bash") << "bash" << "order="
                              << QStringList{"sleep 0.2\norder=\"$order 1\"",
                                             "order=\"$order 2\"",
                                             "order=\"$order 3\"\necho $order"}
                              << "1 2 3\n";
        QTest::newRow("perl") << "perl" << "my @order;"
                              << QStringList{"select(undef, undef, undef, 0.2);\npush @order, 1;",
                                             "push @order, 2;",
                                             "push @order, 3;\nprint \"@order\\n\";"}
                              << "1 2 3\n";
        QTest::newRow("java") << "java" << "var order = new java.util.ArrayList<Integer>();"
                              << QStringList{"Thread.sleep(200);\norder.add(1);", "order.add(2);",
                                             "order.add(3);\nSystem.out.println(order);"}
                              << "[1, 2, 3]\n";
        QTest::newRow("javascript") << "javascript" << "const order = []" << QStringList{"await new Promise(r => setTimeout(r, 200))\norder.push(1)", "order.push(2)", "order.push(3)\nconsole.log(order)"} << "[ 1, 2, 3 ]\n";
        QTest::newRow("typescript") << "typescript" << "const order: number[] = []" << QStringList{"await new Promise<void>(r => setTimeout(r, 200))\norder.push(1)", "order.push(2)", "order.push(3)\nconsole.log(order)"} << "[ 1, 2, 3 ]\n";
        QTest::newRow("go") << "go" << "order := []int{}"
                            << QStringList{"time.Sleep(200 * time.Millisecond)\norder = append(order, 1)",
                                           "order = append(order, 2)",
                                           "order = append(order, 3)\nfmt.Println(order)"}
                            << "[1 2 3]\n";
    }

    void runsInOneContextAreFifo()
    {
        QFETCH(QString, language);
        QFETCH(QString, warmUp);
        QFETCH(QStringList, steps);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr warm = run(context, warmUp);
        QVERIFY(warm);

        QSignalSpy startedSpy(&contexts(), &ContextManager::executionStarted);
        QList<ExecutionPtr> executions;
        for (const QString &step : steps) {
            executions.append(start(context, step));
            QVERIFY(executions.last());
        }
        QCOMPARE(info(context).queued, int(steps.size()) - 1);

        QTRY_VERIFY_WITH_TIMEOUT(executions.last()->isFinished(), kRunTimeout);
        QCOMPARE(startedSpy.size(), steps.size());
        for (qsizetype i = 0; i < executions.size(); ++i) {
            VERIFY_EXEC(executions.at(i)->status() == "ok", executions.at(i));
            QCOMPARE(startedSpy.at(i).at(0).value<ExecutionPtr>()->id(), executions.at(i)->id());
            QCOMPARE(executions.at(i)->executionCount(), warm->executionCount() + 1 + int(i));
        }
        QCOMPARE(out(executions.last()), expected);
    }

    void contextsRunInParallel_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("sleep");
        QTest::addColumn<QString>("quick");

        QTest::newRow("python") << "python" << "import time\ntime.sleep(30)" << "print('quick')";
        QTest::newRow("bash") << "bash" << "sleep 30" << "echo quick";
        QTest::newRow("perl") << "perl" << "sleep 30" << "print \"quick\\n\";";
        QTest::newRow("java") << "java" << "Thread.sleep(30000);" << "System.out.println(\"quick\");";
        QTest::newRow("javascript") << "javascript" << "await new Promise(r => setTimeout(r, 30000))" << "console.log('quick')";
        QTest::newRow("typescript") << "typescript" << "await new Promise<void>(r => setTimeout(r, 30000))" << "console.log('quick')";
        QTest::newRow("go") << "go" << "time.Sleep(30 * time.Second)" << "fmt.Println(\"quick\")";
    }

    void contextsRunInParallel()
    {
        QFETCH(QString, language);
        QFETCH(QString, sleep);
        QFETCH(QString, quick);

        const QString sleeping = createContext(language);
        const QString other = createContext(language);
        QVERIFY(!sleeping.isEmpty() && !other.isEmpty());

        const ExecutionPtr slow = start(sleeping, sleep);
        QVERIFY(slow);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(slow, "started"), kRunTimeout);

        const ExecutionPtr fast = start(other, quick);
        QVERIFY(fast);
        QTRY_VERIFY_WITH_TIMEOUT(fast->isFinished(), kRunTimeout);
        VERIFY_EXEC(fast->status() == "ok", fast);
        QCOMPARE(out(fast), QStringLiteral("quick\n"));
        // The other context was not waited for.
        VERIFY_EXEC(!slow->isFinished(), slow);

        QVERIFY(contexts().interruptExecution(slow->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(slow->isFinished(), kPromptly);
    }

    void unknownLanguageListsAvailable()
    {
        CreateContextRequest create;
        create.language = QStringLiteral("cobol");
        const auto created = contexts().create(create);
        QVERIFY(!created.ok());
        QCOMPARE(created.error().code, QStringLiteral("unknown_language"));
        QVERIFY2(created.error().message.contains(QLatin1String("cobol")),
                 qPrintable(created.error().message));
        QVERIFY2(created.error().message.contains(QLatin1String("python")),
                 qPrintable(created.error().message));
        QVERIFY2(created.error().message.contains(QLatin1String("bash")),
                 qPrintable(created.error().message));

        RunRequest request;
        request.language = QStringLiteral("cobol");
        request.code = QStringLiteral("DISPLAY 'HI'.");
        const auto ran = contexts().run(request);
        QVERIFY(!ran.ok());
        QCOMPARE(ran.error().code, QStringLiteral("unknown_language"));

        QCOMPARE(contexts().list({}, QStringLiteral("cobol")).error().code,
                 QStringLiteral("unknown_language"));
        QCOMPARE(contexts().list({})->size(), 0);
    }

    void deleteKillsProcessGroup_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("spawnChild");  // prints the pid of a long-lived child

        QTest::newRow("python") << "python"
                                << "import subprocess\n"
                                   "child = subprocess.Popen(['sleep', '1000'])\n"
                                   "print(child.pid)";
        QTest::newRow("bash") << "bash" << "sleep 1000 &\necho $!";
        QTest::newRow("perl") << "perl" << "system('sleep 1000 & echo $!');";
        QTest::newRow("java") << "java"
                              << "var child = new ProcessBuilder(\"sleep\", \"1000\").start();\n"
                                 "System.out.println(child.pid());";
        QTest::newRow("go") << "go"
                            << "child := exec.Command(\"sleep\", \"1000\")\nchild.Start()\n"
                               "fmt.Println(child.Process.Pid)";
    }

    void deleteKillsProcessGroup()
    {
        QFETCH(QString, language);
        QFETCH(QString, spawnChild);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr spawned = run(context, spawnChild);
        QVERIFY(spawned);
        VERIFY_EXEC(spawned->status() == "ok", spawned);
        bool isNumber = false;
        const qint64 child = out(spawned).trimmed().toLongLong(&isNumber);
        VERIFY_EXEC(isNumber && child > 0, spawned);
        const qint64 worker = info(context).pid;
        QVERIFY(processIsRunning(worker));
        QVERIFY(processIsRunning(child));

        QVERIFY(contexts().remove({}, context).ok());

        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(child), kPromptly);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(worker), kPromptly);
        QCOMPARE(contexts().get({}, context).error().code, QStringLiteral("not_found"));
        QCOMPARE(contexts().list({})->size(), 0);
    }

    void deleteEndsRunningAndQueuedExecutions()
    {
        const QString context = createContext(QStringLiteral("bash"));
        QVERIFY(!context.isEmpty());
        const ExecutionPtr running = start(context, "sleep 30");
        const ExecutionPtr queued = start(context, "echo never");
        QVERIFY(running && queued);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(running, "started"), kRunTimeout);

        QVERIFY(contexts().remove({}, context).ok());

        QTRY_VERIFY_WITH_TIMEOUT(running->isFinished() && queued->isFinished(), kPromptly);
        VERIFY_EXEC(running->status() == "aborted", running);
        VERIFY_EXEC(queued->status() == "aborted", queued);
        QVERIFY(!hasEvent(queued, "started"));
        QVERIFY(out(queued).isEmpty());
    }

    // What a run wrote just before a restart, still in the pipe when the restart comes, is
    // kept with the run: the host takes it in before it kills the worker.
    void restartKeepsWhatTheRunWroteLast()
    {
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, QStringLiteral("import sys, time")));
        const qint64 pid = info(context).pid;
        QVERIFY(pid > 0);

        const ExecutionPtr last = start(context, QStringLiteral(
                "sys.stdout.write('last words\\n')\nsys.stdout.flush()\ntime.sleep(60)"));
        QVERIFY(last);
        // The event loop does not turn here, so the host has not read the words: they wait in
        // the worker's stdout pipe when the restart comes.
        QElapsedTimer waited;
        waited.start();
        while (unreadBytesInPipe(pid, STDOUT_FILENO) <= 0 && waited.elapsed() < kRunTimeout)
            QThread::msleep(5);
        QVERIFY(unreadBytesInPipe(pid, STDOUT_FILENO) > 0);

        QVERIFY(contexts().restart({}, context).ok());
        QVERIFY(last->isFinished());
        VERIFY_EXEC(last->status() == "aborted", last);
        QCOMPARE(out(last), QStringLiteral("last words\n"));
    }

    void restartGivesFreshInterpreter_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("sleep");
        QTest::addColumn<QString>("check");  // prints whether the variable is there and RH_KEPT
        QTest::addColumn<QString>("fresh");

        QTest::newRow("python") << "python" << "x = 41" << "import time\ntime.sleep(30)"
                                << "import os\nprint('x' in globals(), os.environ.get('RH_KEPT'))"
                                << "False kept\n";
        QTest::newRow("bash") << "bash" << "x=41" << "sleep 30"
                              << "echo \"${x:-gone} $RH_KEPT\"" << "gone kept\n";
        QTest::newRow("perl") << "perl" << "my $x = 41;" << "sleep 30"
                              << "print defined $x ? 'kept' : 'gone', \" $ENV{RH_KEPT}\\n\""
                              << "gone kept\n";
        QTest::newRow("java") << "java" << "System.setProperty(\"rh.x\", \"41\");"
                              << "Thread.sleep(30000);"
                              << "System.out.println(System.getProperty(\"rh.x\", \"gone\") + \" \"\n"
                                 "    + System.getenv(\"RH_KEPT\"))"
                              << "gone kept\n";
        QTest::newRow("go") << "go" << "os.Setenv(\"RH_X\", \"41\")" << "time.Sleep(30 * time.Second)"
                            << "x := os.Getenv(\"RH_X\")\nif x == \"\" {\n    x = \"gone\"\n}\n"
                               "fmt.Println(x, os.Getenv(\"RH_KEPT\"))"
                            << "gone kept\n";
        QTest::newRow("r") << "r" << "x <- 41" << "Sys.sleep(30)"
                           << "cat(exists('x'), Sys.getenv('RH_KEPT'), '\\n')" << "FALSE kept \n";
        QTest::newRow("jupyter-python3") << "jupyter-python3" << "x = 41" << "import time\ntime.sleep(30)"
                                         << "import os\nprint('x' in globals(), os.environ.get('RH_KEPT'))"
                                         << "False kept\n";
    }

    void restartGivesFreshInterpreter()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, sleep);
        QFETCH(QString, check);
        QFETCH(QString, fresh);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(contexts().changeEnv({}, context, {{"RH_KEPT", "kept"}}, {}, {}).ok());
        QVERIFY(run(context, setup));
        const qint64 pid = info(context).pid;
        QVERIFY(pid > 0);

        const ExecutionPtr running = start(context, sleep);
        QVERIFY(running);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(running, "started"), kRunTimeout);

        const auto restarted = contexts().restart({}, context);
        QVERIFY(restarted.ok());
        QCOMPARE(restarted->id, context);
        QTRY_VERIFY_WITH_TIMEOUT(running->isFinished(), kPromptly);
        VERIFY_EXEC(running->status() == "aborted", running);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), fresh);
        const qint64 freshPid = info(context).pid;
        QVERIFY(freshPid > 0);
        QVERIFY(freshPid != pid);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(pid), kPromptly);
    }

    void interruptQueuedExecutionAborts_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("sleep");
        QTest::addColumn<QString>("queuedCode");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("neverRan");

        QTest::newRow("python") << "python" << "import time\ntime.sleep(30)" << "ran = True"
                                << "print('ran' in globals())" << "False\n";
        QTest::newRow("bash") << "bash" << "sleep 30" << "ran=yes" << "echo \"${ran:-no}\""
                              << "no\n";
        QTest::newRow("perl") << "perl" << "sleep 30" << "our $ran = 'yes';"
                              << "print $main::ran // 'no', \"\\n\"" << "no\n";
        QTest::newRow("java") << "java" << "Thread.sleep(30000);"
                              << "System.setProperty(\"rh.ran\", \"yes\");"
                              << "System.out.println(System.getProperty(\"rh.ran\", \"no\"))"
                              << "no\n";
        QTest::newRow("go") << "go" << "time.Sleep(30 * time.Second)"
                            << "os.Setenv(\"RH_RAN\", \"yes\")"
                            << "fmt.Println(os.Getenv(\"RH_RAN\") == \"yes\")" << "false\n";
    }

    void interruptQueuedExecutionAborts()
    {
        QFETCH(QString, language);
        QFETCH(QString, sleep);
        QFETCH(QString, queuedCode);
        QFETCH(QString, check);
        QFETCH(QString, neverRan);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        const ExecutionPtr running = start(context, sleep);
        QVERIFY(running);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(running, "started"), kRunTimeout);
        const ExecutionPtr queued = start(context, queuedCode);
        QVERIFY(queued);

        QVERIFY(contexts().interruptExecution(queued->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(queued->isFinished(), kPromptly);
        VERIFY_EXEC(queued->status() == "aborted", queued);
        QVERIFY(!hasEvent(queued, "started"));
        // Only the queued one was interrupted.
        VERIFY_EXEC(!running->isFinished(), running);

        QVERIFY(contexts().interruptExecution(running->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(running->isFinished(), kPromptly);
        VERIFY_EXEC(running->status() == "interrupted", running);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        QCOMPARE(out(after), neverRan);
    }

    void interruptingAContextStopsTheRunAndDropsTheQueue()
    {
        const QString context = createContext(QStringLiteral("python"));
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, "x = 41"));
        const ExecutionPtr running = start(context, "import time\ntime.sleep(30)");
        const ExecutionPtr queued = start(context, "x = 0");
        QVERIFY(running && queued);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(running, "started"), kRunTimeout);

        QVERIFY(contexts().interrupt({}, context).ok());

        QTRY_VERIFY_WITH_TIMEOUT(running->isFinished() && queued->isFinished(), kPromptly);
        VERIFY_EXEC(running->status() == "interrupted", running);
        VERIFY_EXEC(queued->status() == "aborted", queued);
        const ExecutionPtr after = run(context, "print(x)");
        QVERIFY(after);
        QCOMPARE(out(after), QStringLiteral("41\n"));
    }

    void timeoutInterruptsAndSaysTimeout_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("sleep");
        QTest::addColumn<QString>("quick");
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "x = 41" << "import time\ntime.sleep(30)"
                                << "y = 1" << "print(x + 1)" << "42\n";
        QTest::newRow("bash") << "bash" << "x=41" << "sleep 30" << "y=1" << "echo $((x + 1))"
                              << "42\n";
        QTest::newRow("perl") << "perl" << "my $x = 41;" << "sleep 30" << "my $y = 1;"
                              << "print $x + 1, \"\\n\"" << "42\n";
        QTest::newRow("java") << "java" << "int x = 41;" << "Thread.sleep(30000);" << "int y = 1;"
                              << "System.out.println(x + 1)" << "42\n";
        QTest::newRow("javascript") << "javascript" << "let x = 41" << "await new Promise(r => setTimeout(r, 30000))" << "let y = 1" << "console.log(x + 1)" << "42\n";
        QTest::newRow("typescript") << "typescript" << "let x: number = 41" << "await new Promise<void>(r => setTimeout(r, 30000))" << "let y: number = 1" << "console.log(x + 1)" << "42\n";
        QTest::newRow("go") << "go" << "x := 41" << "time.Sleep(30 * time.Second)" << "y := 1"
                            << "fmt.Println(x + 1)" << "42\n";
    }

    void timeoutInterruptsAndSaysTimeout()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, sleep);
        QFETCH(QString, quick);
        QFETCH(QString, check);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, setup));

        RunRequest limited;
        limited.timeoutMs = 1000;
        const ExecutionPtr slow = start(context, sleep, limited);
        QVERIFY(slow);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(slow, "started"), kRunTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(slow->isFinished(), limited.timeoutMs + kPromptly);
        VERIFY_EXEC(slow->status() == "timeout", slow);
        VERIFY_EXEC(doneOf(slow).value(QLatin1String("status")).toString() == "timeout", slow);
        VERIFY_EXEC(eventsOfType(slow, "error").last().fields.value(QLatin1String("ename"))
                            .toString() == "Timeout",
                    slow);
        VERIFY_EXEC(!doneOf(slow).value(QLatin1String("state_lost")).toBool(), slow);

        // A run that ends within its limit is not affected.
        RunRequest generous;
        generous.timeoutMs = kRunTimeout;
        const ExecutionPtr fast = run(context, quick, generous);
        QVERIFY(fast);
        VERIFY_EXEC(fast->status() == "ok", fast);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
    }

    void historyIsPersisted_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QStringList>("codes");  // ok, ok printing "42", error
        QTest::addColumn<QString>("next");

        QTest::newRow("python") << "python"
                                << QStringList{"x = 41", "print(x + 1)", "1 / 0"} << "print('back')";
        QTest::newRow("bash") << "bash" << QStringList{"x=41", "echo $((x + 1))", "false"}
                              << "echo back";
        QTest::newRow("perl") << "perl"
                              << QStringList{"my $x = 41;", "print $x + 1, \"\\n\";",
                                             "die \"boom\\n\";"}
                              << "print \"back\\n\";";
        QTest::newRow("java") << "java"
                              << QStringList{"int x = 41;", "System.out.println(x + 1)", "1 / 0"}
                              << "System.out.println(\"back\")";
        QTest::newRow("go") << "go"
                            << QStringList{"x := 41", "fmt.Println(x + 1)", "panic(\"boom\")"}
                            << "fmt.Println(\"back\")";
    }

    void historyIsPersisted()
    {
        QFETCH(QString, language);
        QFETCH(QStringList, codes);
        QFETCH(QString, next);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QStringList ids;
        for (const QString &code : codes) {
            const ExecutionPtr execution = run(context, code);
            QVERIFY(execution);
            ids.append(execution->id());
        }

        // Closing the engine flushes the history; a new engine on the directory finds it.
        m_engine.close();
        QVERIFY(openEngine(config()));

        const auto listed = contexts().list({});
        QVERIFY(listed.ok());
        QCOMPARE(listed->size(), 1);
        QCOMPARE(listed->first().id, context);
        QCOMPARE(listed->first().language, language);
        QCOMPARE(listed->first().executionCount, 3);

        const auto executions = m_engine->store().executions(context, 0, 10);
        QVERIFY(executions.ok());
        QCOMPARE(executions->size(), 3);
        const QStringList statuses{QStringLiteral("error"), QStringLiteral("ok"),
                                   QStringLiteral("ok")};
        for (int i = 0; i < 3; ++i) {  // newest first
            const storage::ExecutionRecord &record = executions->at(i);
            QCOMPARE(record.id, ids.at(2 - i));
            QCOMPARE(record.code, codes.at(2 - i));
            QCOMPARE(record.status, statuses.at(i));
            QCOMPARE(record.executionCount, 3 - i);
            QVERIFY(record.durationMs >= 0);
        }

        const auto events = m_engine->store().events(ids.at(1));
        QVERIFY(events.ok());
        QVERIFY(!events->isEmpty());
        QString stdoutText;
        for (int i = 0; i < events->size(); ++i) {
            QCOMPARE(events->at(i).seq, i);
            const Event event = Event::fromJson(QJsonDocument::fromJson(events->at(i).json).object());
            if (event.type == QLatin1String("stream")
                && event.fields.value(QLatin1String("name")).toString() == QLatin1String("stdout"))
                stdoutText += event.fields.value(QLatin1String("text")).toString();
        }
        QCOMPARE(stdoutText, QStringLiteral("42\n"));
        const Event last = Event::fromJson(QJsonDocument::fromJson(events->last().json).object());
        QCOMPARE(last.type, QStringLiteral("done"));
        QCOMPARE(last.fields.value(QLatin1String("status")).toString(), QStringLiteral("ok"));

        // The context is usable again, and its count goes on.
        const ExecutionPtr again = run(context, next);
        QVERIFY(again);
        VERIFY_EXEC(again->status() == "ok", again);
        QCOMPARE(out(again), QStringLiteral("back\n"));
        QCOMPARE(again->executionCount(), 4);
    }

    void secondEngineOnSameDataDirIsRefused()
    {
        const auto second = Engine::open(config());
        QVERIFY(!second.ok());
        QCOMPARE(second.error().code, QStringLiteral("locked"));
        QVERIFY2(second.error().message.contains(QString::number(QCoreApplication::applicationPid())),
                 qPrintable(second.error().message));

        // Once the first engine is gone, the directory is free again.
        m_engine.close();
        QVERIFY(openEngine(config()));
    }

    void malformedWorkerFramesAreReported_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("setup");
        QTest::addColumn<QString>("garbage");  // writes a broken frame on the event channel
        QTest::addColumn<QString>("check");
        QTest::addColumn<QString>("expected");

        QTest::newRow("python") << "python" << "x = 41" << "import os\nos.write(4, b'zz\\n')"
                                << "print('x' in globals())" << "False\n";
        QTest::newRow("perl") << "perl" << "our $x = 41;"
                              << "open(my $events, '>&=', 4) or die;\nsyswrite($events, \"zz\\n\");"
                              << "print defined $x ? \"kept\\n\" : \"gone\\n\"" << "gone\n";
        QTest::newRow("java") << "java" << "System.setProperty(\"rh.x\", \"41\");"
                              << "try (var events = new java.io.FileOutputStream(\"/proc/self/fd/4\")) {\n"
                                 "    events.write(\"zz\\n\".getBytes());\n"
                                 "}"
                              << "System.out.println(System.getProperty(\"rh.x\", \"gone\"))"
                              << "gone\n";
        QTest::newRow("go") << "go" << "os.Setenv(\"RH_X\", \"41\")"
                            << "syscall.Write(4, []byte(\"zz\\n\"))"
                            << "fmt.Println(os.Getenv(\"RH_X\") == \"\")" << "true\n";
    }

    void malformedWorkerFramesAreReported()
    {
        QFETCH(QString, language);
        QFETCH(QString, setup);
        QFETCH(QString, garbage);
        QFETCH(QString, check);
        QFETCH(QString, expected);

        const QString context = createContext(language);
        QVERIFY(!context.isEmpty());
        QVERIFY(run(context, setup));
        const qint64 pid = info(context).pid;

        const ExecutionPtr broken = run(context, garbage);
        QVERIFY(broken);
        VERIFY_EXEC(broken->status() == "error", broken);
        VERIFY_EXEC(hasEvent(broken, "error"), broken);
        VERIFY_EXEC(doneOf(broken).value(QLatin1String("state_lost")).toBool(), broken);

        const ExecutionPtr after = run(context, check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        VERIFY_EXEC(hasEvent(after, "state_reset"), after);
        QCOMPARE(out(after), expected);
        QVERIFY(info(context).pid != pid);
        QTRY_VERIFY_WITH_TIMEOUT(!processIsRunning(pid), kPromptly);
    }
};

QTEST_GUILESS_MAIN(ContextsTest)
#include "tst_contexts.moc"
