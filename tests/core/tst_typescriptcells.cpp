// SPDX-License-Identifier: Apache-2.0
// TypeScript cells, run by the real TypeScript plugin (the JavaScript driver with the TypeScript
// compiler) in a real engine: the types go and the JavaScript context's semantics stay (state,
// redeclaration, top-level await, the last value, interrupts that keep state, completion,
// variables); a type error does not stop a run, a syntax error does before anything runs, and
// every error points at the line of the TypeScript the user wrote.
#include "core/engine.h"
#include "executionevents.h"
#include "testengine.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

#include <optional>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;

namespace {

// Long enough for a fresh worker to start and a short run to finish on a busy machine.
constexpr int kRunTimeout = 60000;
// "Promptly": well below a 30 s sleep and the 10 s after which the interrupt ladder kills.
constexpr int kPromptly = 8000;

QString errorName(const ExecutionPtr &execution)
{
    return eventFields(execution, QStringLiteral("error")).value(QLatin1String("ename")).toString();
}

QStringList traceback(const ExecutionPtr &execution)
{
    QStringList lines;
    for (const QJsonValue &line :
         eventFields(execution, QStringLiteral("error")).value(QLatin1String("traceback")).toArray())
        lines.append(line.toString());
    return lines;
}

// The line numbers of the frames of cell `count` in the traceback (`<cell-3>:7:5` is 7).
QList<int> cellFrameLines(const ExecutionPtr &execution, int count)
{
    QList<int> lines;
    const QRegularExpression frame(QStringLiteral("<cell-%1>:(\\d+):\\d+").arg(count));
    for (auto it = frame.globalMatch(traceback(execution).join(QLatin1Char('\n'))); it.hasNext();)
        lines.append(it.next().captured(1).toInt());
    return lines;
}

int executionCount(const ExecutionPtr &execution)
{
    return doneOf(execution).value(QLatin1String("execution_count")).toInt();
}

} // namespace

class TypeScriptCellsTest : public QObject {
    Q_OBJECT

private:
    TestEngine m_engine;
    QString m_context;

    ContextManager &contexts() { return m_engine->contexts(); }

    ExecutionPtr start(const QString &code)
    {
        RunRequest request;
        request.contextId = m_context;
        request.code = code;
        return startRun(contexts(), request);
    }

    ExecutionPtr run(const QString &code) { return waitForEnd(start(code), kRunTimeout); }

    // Runs `code`, which must succeed with `result` as its result's text/plain (empty: none).
    void expectResult(const QString &code, const QString &result)
    {
        const ExecutionPtr done = run(code);
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(resultText(done), result);
    }

    qint64 workerPid()
    {
        auto found = contexts().get({}, m_context);
        return found ? found->pid : 0;
    }

    // Interrupts `code` once it printed `ready` (or started); the run ends promptly as
    // interrupted, in the same worker, and `check` then prints `expected`.
    void interruptKeepsState(const QString &code, const QString &ready, const QString &check,
                             const QString &expected)
    {
        const qint64 pid = workerPid();
        const ExecutionPtr busy = start(code);
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(hasEvent(busy, "started"), kRunTimeout);
        if (!ready.isEmpty())
            QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(ready), kRunTimeout);
        QVERIFY(!busy->isFinished());
        QVERIFY(contexts().interruptExecution(busy->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        VERIFY_EXEC(!doneOf(busy).value(QLatin1String("state_lost")).toBool(), busy);

        const ExecutionPtr after = run(check);
        QVERIFY(after);
        VERIFY_EXEC(after->status() == "ok", after);
        QCOMPARE(out(after), expected);
        QCOMPARE(workerPid(), pid);
    }

    template <typename Call>
    QJsonObject answerOf(Call call)
    {
        std::optional<Result<QJsonObject>> answer;
        call([&](Result<QJsonObject> reply) { answer = std::move(reply); });
        if (!QTest::qWaitFor([&] { return answer.has_value(); }, kRunTimeout) || !*answer)
            return {};
        return answer->value();
    }

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        QVERIFY(m_engine.open(config));
        CreateContextRequest request;
        // By its alias, as E2B's SDK names it.
        request.language = QStringLiteral("ts");
        auto created = contexts().create(request);
        QVERIFY2(created, created ? "" : qPrintable(created.error().message));
        QCOMPARE(created->language, QStringLiteral("typescript"));
        m_context = created->id;
    }

    void cleanup() { m_engine.reset(); }

    void stateSurvivesAcrossCells()
    {
        const ExecutionPtr first = run(QStringLiteral(
            "let x: number = 41\n"
            "function inc(v: number): number { return v + 1 }\n"
            "class Counter { constructor(public count: number) {} }"));
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        expectResult(QStringLiteral("inc(x) + new Counter(0).count"), QStringLiteral("42"));
    }

    void topLevelDeclarationsCanBeDeclaredAgain()
    {
        const ExecutionPtr first = run(QStringLiteral(
            "let x: number = 1\nconst y: number = 2\nclass K {}\nfunction f(): number { return 1 }"));
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        expectResult(QStringLiteral("let x: string = 'a'\nconst y: number = 3\n"
                                    "class K { m(): string { return x + y } }\n"
                                    "function f(): number { return 2 }\n"
                                    "new K().m() + f()"),
                     QStringLiteral("'a32'"));
    }

    void topLevelAwaitWorks()
    {
        expectResult(QStringLiteral("const v: number = await Promise.resolve(41)\n"
                                    "const w = await new Promise<number>((r) => setTimeout(() => r(v + 1), 10))\n"
                                    "w"),
                     QStringLiteral("42"));
    }

    void typesAreStrippedAndTheLastExpressionIsTheResult_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");
        QTest::newRow("expression") << "41 + 1" << "42";
        QTest::newRow("annotated declaration has no value") << "const z: number = 1" << "";
        QTest::newRow("interface and type alias have no value")
            << "interface Point { x: number; y: number }\ntype Maybe<T> = T | null" << "";
        QTest::newRow("interface before the expression")
            << "interface Point {\n  x: number\n  y: number\n}\nconst p: Point = { x: 1, y: 2 }\np.x + p.y"
            << "3";
        QTest::newRow("as assertion") << "({ a: 42 } as { a: number }).a" << "42";
        QTest::newRow("angle-bracket assertion") << "<number>(41 + 1)" << "42";
        QTest::newRow("non-null assertion") << "const list: number[] | undefined = [1, 2]\nlist!.length"
                                            << "2";
        QTest::newRow("generic function") << "function id<T>(v: T): T { return v }\nid<string>('s')"
                                          << "'s'";
        QTest::newRow("parameter properties and access modifiers")
            << "class P { constructor(private readonly x: number, public y = 2) {} sum(): number { return this.x + this.y } }\nnew P(40).sum()"
            << "42";
        QTest::newRow("optional parameters and declare")
            << "declare const unknownGlobal: number\nfunction f(a?: number): number { return a ?? 42 }\nf()"
            << "42";
        QTest::newRow("enum") << "enum Color { Red, Green }\nColor.Green" << "1";
        QTest::newRow("const enum") << "const enum Size { S = 's', M = 'm' }\nSize.M" << "'m'";
        QTest::newRow("overloads") << "function g(a: string): string\nfunction g(a: number): number\n"
                                      "function g(a: any): any { return a }\ng(7)"
                                   << "7";
        QTest::newRow("object literal") << "({ n: 1 as number, list: [2] as number[] })"
                                        << "{ n: 1, list: [ 2 ] }";
    }

    void typesAreStrippedAndTheLastExpressionIsTheResult()
    {
        QFETCH(QString, code);
        QFETCH(QString, result);
        expectResult(code, result);
    }

    // As `ts-node --transpile-only`: types are not checked.
    void typeErrorStillRuns()
    {
        const ExecutionPtr done = run(QStringLiteral(
            "const n: number = 'not a number'\nconsole.log(typeof n)\nn"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(out(done), QStringLiteral("string\n"));
        QCOMPARE(resultText(done), QStringLiteral("'not a number'"));
    }

    void importsStayForLaterCells()
    {
        // Not used in its own cell, which the compiler would otherwise take as types only.
        const ExecutionPtr first = run(QStringLiteral(
            "import path from 'path'\nimport type { Stats } from 'fs'\nimport { basename } from 'path'"));
        QVERIFY(first);
        VERIFY_EXEC(first->status() == "ok", first);
        expectResult(QStringLiteral("const s: Stats | null = null\npath.basename('/a/b') + basename('/c/d')"),
                     QStringLiteral("'bd'"));
    }

    void runtimeErrorPointsAtTheTypeScriptLine()
    {
        // Six lines of types that the JavaScript no longer has.
        const ExecutionPtr done = run(QStringLiteral(
            "interface Point {\n  x: number\n  y: number\n}\ntype Maybe = Point | null\n"
            "const p: Maybe = null as Maybe\n"
            "p!.x"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "error", done);
        QCOMPARE(errorName(done), QStringLiteral("TypeError"));
        const QList<int> lines = cellFrameLines(done, executionCount(done));
        VERIFY_EXEC(!lines.isEmpty(), done);
        QCOMPARE(lines.first(), 7);
    }

    void errorInAFunctionOfAnEarlierCellPointsAtItsLine()
    {
        const ExecutionPtr define = run(QStringLiteral(
            "type Shape = { kind: 'circle'; r: number }\n"
            "interface Options {\n  strict: boolean\n}\n"
            "function area(s: Shape, o?: Options): number {\n"
            "  if (s.r < 0) throw new RangeError('negative radius')\n"
            "  return Math.PI * s.r * s.r\n"
            "}"));
        QVERIFY(define);
        VERIFY_EXEC(define->status() == "ok", define);
        const ExecutionPtr call = run(QStringLiteral("area({ kind: 'circle', r: -1 })"));
        QVERIFY(call);
        VERIFY_EXEC(call->status() == "error", call);
        QCOMPARE(errorName(call), QStringLiteral("RangeError"));
        const QList<int> lines = cellFrameLines(call, executionCount(define));
        VERIFY_EXEC(!lines.isEmpty(), call);
        QCOMPARE(lines.first(), 6);
    }

    // Found by the TypeScript compiler: nothing of the cell runs, and the traceback has the shape
    // of a JavaScript syntax error (where, the line, a caret, the message).
    void syntaxErrorIsReportedBeforeAnythingRuns()
    {
        const ExecutionPtr done = run(QStringLiteral(
            "console.log('ran')\nlet a: number = 1\nfunction broken( {"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "error", done);
        QCOMPARE(errorName(done), QStringLiteral("SyntaxError"));
        QCOMPARE(out(done), QString());
        const QStringList lines = traceback(done);
        QCOMPARE(lines.value(0), QStringLiteral("<cell-%1>:3").arg(executionCount(done)));
        QCOMPARE(lines.value(1), QStringLiteral("function broken( {"));
        QVERIFY2(lines.value(2).trimmed() == QLatin1String("^"), qPrintable(lines.join('\n')));
        QVERIFY2(lines.last().startsWith(QLatin1String("SyntaxError: ")), qPrintable(lines.join('\n')));
    }

    // Found only by V8, after the types are gone: still at the TypeScript line.
    void syntaxErrorOfTheJavaScriptPointsAtTheTypeScriptLine()
    {
        const ExecutionPtr done = run(QStringLiteral(
            "interface A {\n  a: number\n}\nlet q: number = 1\nlet q: number = 2"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "error", done);
        QCOMPARE(errorName(done), QStringLiteral("SyntaxError"));
        const QStringList lines = traceback(done);
        QCOMPARE(lines.value(0), QStringLiteral("<cell-%1>:5").arg(executionCount(done)));
        QCOMPARE(lines.value(1), QStringLiteral("let q: number = 2"));
    }

    void errorKeepsState()
    {
        const ExecutionPtr setup = run(QStringLiteral("let kept: number = 41"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        const ExecutionPtr failing = run(QStringLiteral("kept = 42\nthrow new Error('boom')"));
        QVERIFY(failing);
        VERIFY_EXEC(failing->status() == "error", failing);
        expectResult(QStringLiteral("kept"), QStringLiteral("42"));
    }

    void interruptOfALoopKeepsState()
    {
        const ExecutionPtr setup = run(QStringLiteral("let n: number = 0"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        interruptKeepsState(QStringLiteral("console.log('looping'); while (true) n++"),
                            QStringLiteral("looping"), QStringLiteral("console.log(n > 0)"),
                            QStringLiteral("true\n"));
    }

    void interruptOfAnAwaitKeepsState()
    {
        const ExecutionPtr setup = run(QStringLiteral("const kept: number = 41"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        interruptKeepsState(QStringLiteral("await new Promise<void>((r) => setTimeout(r, 30000))"),
                            QString(), QStringLiteral("console.log(kept + 1)"),
                            QStringLiteral("42\n"));
    }

    void completionFindsTheCellsNames()
    {
        const ExecutionPtr setup = run(QStringLiteral("const typedValue: string = 'x'"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        for (const auto &[code, expected] :
             {std::pair{QStringLiteral("typedV"), QStringLiteral("typedValue")},
              std::pair{QStringLiteral("typedValue.toUpp"), QStringLiteral("toUpperCase")}}) {
            const QJsonObject reply = answerOf([&](auto done) {
                contexts().complete({}, m_context, code, int(code.size()), done);
            });
            const QJsonArray matches = reply.value(QLatin1String("matches")).toArray();
            QVERIFY2(matches.contains(expected),
                     qPrintable(code + QLatin1String(": ") + QJsonDocument(reply).toJson()));
        }
    }

    void variablesListTheCellsNames()
    {
        const ExecutionPtr setup = run(QStringLiteral(
            "let count: number = 3\nconst label: string = 'three'\ninterface Unlisted { a: number }"));
        QVERIFY(setup);
        VERIFY_EXEC(setup->status() == "ok", setup);
        const QJsonObject reply = answerOf([&](auto done) { contexts().variables({}, m_context, done); });
        QMap<QString, QJsonObject> byName;
        for (const QJsonValue &v : reply.value(QLatin1String("variables")).toArray())
            byName.insert(v.toObject().value(QLatin1String("name")).toString(), v.toObject());
        QCOMPARE(byName.value(QStringLiteral("count")).value(QLatin1String("type")).toString(),
                 QStringLiteral("number"));
        QCOMPARE(byName.value(QStringLiteral("count")).value(QLatin1String("repr")).toString(),
                 QStringLiteral("3"));
        QCOMPARE(byName.value(QStringLiteral("label")).value(QLatin1String("repr")).toString(),
                 QStringLiteral("'three'"));
        QVERIFY(!byName.contains(QStringLiteral("Unlisted")));
    }
};

QTEST_GUILESS_MAIN(TypeScriptCellsTest)
#include "tst_typescriptcells.moc"
