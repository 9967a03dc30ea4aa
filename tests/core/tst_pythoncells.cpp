// SPDX-License-Identifier: Apache-2.0
// Python cells written for IPython, run by the real Python driver in a real engine: the
// indentation a client's template string adds is taken off as IPython takes it off, `!cmd`
// lines run in a shell with their output streamed and their status in `_exit_code`, the magics
// replhost runs do what IPython's do, and every other magic is an error that says what to use.
// Valid Python that only looks like an escape (inside a string or a bracket) keeps its meaning.
#include "core/engine.h"
#include "executionevents.h"
#include "testengine.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>
#include <QTest>

using namespace replhost;
using namespace replhost::core;
using sdk::Event;
using namespace replhost::core::testing;

namespace {

// Long enough for a fresh worker to start and a short run to finish on a busy machine.
constexpr int kRunTimeout = 60000;
// Well below the 30 s the interrupted command would sleep.
constexpr int kPromptly = 8000;

QString errorField(const ExecutionPtr &execution, const char *field)
{
    return eventFields(execution, QStringLiteral("error")).value(QLatin1String(field)).toString();
}

} // namespace

class PythonCellsTest : public QObject {
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

    // Runs `code`, which must succeed printing `printed` (unless null) with `result` as its
    // result's text/plain (empty: none).
    void expectRun(const QString &code, const QString &printed, const QString &result)
    {
        const ExecutionPtr done = run(code);
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        if (!printed.isNull())
            QCOMPARE(out(done), printed);
        QCOMPARE(resultText(done), result);
    }

    // The workspace directory, where a new context starts.
    QString workspaceDir()
    {
        auto found = contexts().get({}, m_context);
        return found ? found->cwd : QString();
    }

private slots:
    void init()
    {
        QVERIFY(m_engine.makeDataDir());
        EngineConfig config = m_engine.config(QStringLiteral(REPLHOST_TEST_PLUGIN_DIR));
        config.warmPoolSize = 0;
        QVERIFY(m_engine.open(config));
        CreateContextRequest request;
        request.language = QStringLiteral("python");
        auto created = contexts().create(request);
        QVERIFY2(created, created ? "" : qPrintable(created.error().message));
        m_context = created->id;
    }

    void cleanup() { m_engine.reset(); }

    void indentedCellIsCleanedAsIPythonCleansIt_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");

        // What E2B's clients send: the code of a template string, indented with the source.
        QTest::newRow("template string") << "\n    x = 1\n    x\n    " << "1";
        QTest::newRow("tabs") << "\tx = 2\n\tx" << "2";
        QTest::newRow("a block inside")
            << "\n        def f():\n            return 3\n        f()\n" << "3";
        QTest::newRow("blank lines with spaces around")
            << "  \n\n    y = 4\n  \n    y\n\n  " << "4";
        // A string's own lines that start further left stay as they are.
        QTest::newRow("string line further left")
            << "    s = '''a\nb'''\n    s" << "'a\\nb'";
        QTest::newRow("not indented stays") << "\nz = 5\nz" << "5";
    }

    void indentedCellIsCleanedAsIPythonCleansIt()
    {
        QFETCH(QString, code);
        QFETCH(QString, result);
        expectRun(code, QString(), result);
    }

    void indentationBeyondTheFirstLineIsStillAnError()
    {
        const ExecutionPtr done = run(QStringLiteral("    x = 1\n      y = 2"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "error", done);
        QCOMPARE(errorField(done, "ename"), QStringLiteral("IndentationError"));
    }

    void shellEscapePrintsTheCwd()
    {
        const ExecutionPtr done = run(QStringLiteral("!pwd"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(out(done), workspaceDir() + QLatin1Char('\n'));
        QCOMPARE(resultText(done), QString());
    }

    void shellEscapeKeepsItsExitStatus_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("exitCode");
        QTest::newRow("success") << "!true" << "0";
        QTest::newRow("failure") << "!exit 3" << "3";
        QTest::newRow("indented in a block") << "if True:\n    !exit 7" << "7";
    }

    void shellEscapeKeepsItsExitStatus()
    {
        QFETCH(QString, command);
        QFETCH(QString, exitCode);
        const ExecutionPtr done = run(command);
        QVERIFY(done);
        // A failing command is not a failing cell, as in IPython.
        VERIFY_EXEC(done->status() == "ok", done);
        const ExecutionPtr check = run(QStringLiteral("_exit_code"));
        QVERIFY(check);
        QCOMPARE(resultText(check), exitCode);
    }

    void shellEscapeExpandsPythonValues_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("printed");
        QTest::newRow("braces and dollar")
            << "n = 'world'\n!echo {n.upper()} $n" << "WORLD world\n";
        QTest::newRow("in a loop") << "for i in range(3):\n    !echo {i * 2}" << "0\n2\n4\n";
        QTest::newRow("doubled dollar and braces")
            << "n = 1\n!echo $$n {{n}}" << "{n}\n";
        // One name that Python does not know leaves the whole text to the shell.
        QTest::newRow("a shell variable")
            << "import os\nos.environ['RH_CELLS_VAR'] = 'from env'\n!echo $RH_CELLS_VAR"
            << "from env\n";
    }

    void shellEscapeExpandsPythonValues()
    {
        QFETCH(QString, code);
        QFETCH(QString, printed);
        expectRun(code, printed, QString());
    }

    void assignedShellOutputIsItsLines_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");
        QTest::newRow("x = !cmd") << "x = !printf 'a\\nb\\n'\nx" << "['a', 'b']";
        QTest::newRow("!!cmd") << "!!printf 'c\\n'" << "['c']";
        QTest::newRow("stderr included") << "x = !echo e >&2\nx" << "['e']";
        QTest::newRow("unpacked") << "a, b = !printf '1\\n2\\n'\nb + a" << "'21'";
    }

    void assignedShellOutputIsItsLines()
    {
        QFETCH(QString, code);
        QFETCH(QString, result);
        expectRun(code, QStringLiteral(""), result);
    }

    void pythonThatLooksLikeAnEscapeKeepsItsMeaning_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("result");
        QTest::newRow("inside a string") << "s = '''\n!echo no\n%cd /\n'''\ns" << "'\\n!echo no\\n%cd /\\n'";
        QTest::newRow("inside brackets") << "y = (5\n%3)\ny" << "2";
        QTest::newRow("comparison continued") << "z = (1\n!= 2)\nz" << "True";
        QTest::newRow("modulo") << "w = 7 % 4\nw" << "3";
    }

    void pythonThatLooksLikeAnEscapeKeepsItsMeaning()
    {
        QFETCH(QString, code);
        QFETCH(QString, result);
        expectRun(code, QStringLiteral(""), result);
    }

    void cdMagicMovesTheContext()
    {
        QVERIFY(QDir(workspaceDir()).mkpath(QStringLiteral("sub")));
        const QString sub = QDir(workspaceDir()).filePath(QStringLiteral("sub"));
        const ExecutionPtr done = run(QStringLiteral("%cd sub"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(out(done), sub + QLatin1Char('\n'));
        QCOMPARE(doneOf(done).value(QLatin1String("cwd")).toString(), sub);
        const ExecutionPtr back = run(QStringLiteral("%cd -q -\nimport os\nos.getcwd()"));
        QVERIFY(back);
        VERIFY_EXEC(back->status() == "ok", back);
        QCOMPARE(out(back), QString());
        QCOMPARE(resultText(back), QLatin1Char('\'') + workspaceDir() + QLatin1Char('\''));
        const ExecutionPtr missing = run(QStringLiteral("%cd no-such-dir"));
        QVERIFY(missing);
        VERIFY_EXEC(missing->status() == "error", missing);
        QCOMPARE(errorField(missing, "ename"), QStringLiteral("FileNotFoundError"));
    }

    void envMagicSetsAndReads()
    {
        const ExecutionPtr set = run(QStringLiteral("%env RH_CELLS_A=1\n%env RH_CELLS_B two"));
        QVERIFY(set);
        VERIFY_EXEC(set->status() == "ok", set);
        QCOMPARE(out(set), QStringLiteral("env: RH_CELLS_A=1\nenv: RH_CELLS_B=two\n"));
        const ExecutionPtr read = run(QStringLiteral("v = %env RH_CELLS_B\n"
                                                     "all_env = %env\n"
                                                     "(v, all_env['RH_CELLS_A'])"));
        QVERIFY(read);
        VERIFY_EXEC(read->status() == "ok", read);
        QCOMPARE(resultText(read), QStringLiteral("('two', '1')"));
        const ExecutionPtr shell = run(QStringLiteral("!echo $RH_CELLS_B"));
        QVERIFY(shell);
        QCOMPARE(out(shell), QStringLiteral("two\n"));
        const ExecutionPtr missing = run(QStringLiteral("%env RH_CELLS_NOT_SET"));
        QVERIFY(missing);
        VERIFY_EXEC(missing->status() == "error", missing);
        QCOMPARE(errorField(missing, "ename"), QStringLiteral("UsageError"));
    }

    void pipMagicRunsPipOrSaysWhatToInstall()
    {
        const ExecutionPtr has = run(QStringLiteral(
                "import importlib.util\nimportlib.util.find_spec('pip') is not None"));
        QVERIFY(has);
        VERIFY_EXEC(has->status() == "ok", has);
        const ExecutionPtr done = run(QStringLiteral("%pip --version"));
        QVERIFY(done);
        if (resultText(has) == QLatin1String("True")) {
            VERIFY_EXEC(done->status() == "ok", done);
            QVERIFY2(out(done).startsWith(QLatin1String("pip ")), qPrintable(out(done)));
        } else {
            VERIFY_EXEC(done->status() == "error", done);
            QVERIFY2(errorField(done, "evalue").contains(QLatin1String("apt install")),
                     qPrintable(errorField(done, "evalue")));
        }
    }

    void bashCellMagicRunsTheCellInBash()
    {
        const ExecutionPtr done = run(QStringLiteral(
                "\n    %%bash\n    words=(a b)\n    echo ${#words[@]} \"$PWD\"\n    exit 4\n    "));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(out(done), QStringLiteral("2 %1\n").arg(workspaceDir()));
        const ExecutionPtr check = run(QStringLiteral("_exit_code"));
        QVERIFY(check);
        QCOMPARE(resultText(check), QStringLiteral("4"));
    }

    void writefileCellMagicWritesTheCell()
    {
        const ExecutionPtr done = run(QStringLiteral("%%writefile made.py\nvalue = 6 * 7"));
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "ok", done);
        QCOMPARE(out(done), QStringLiteral("Writing made.py\n"));
        QFile made(QDir(workspaceDir()).filePath(QStringLiteral("made.py")));
        QVERIFY(made.open(QIODevice::ReadOnly));
        QCOMPARE(made.readAll(), QByteArray("value = 6 * 7\n"));
        const ExecutionPtr imported = run(QStringLiteral("from made import value\nvalue"));
        QVERIFY(imported);
        QCOMPARE(resultText(imported), QStringLiteral("42"));
    }

    void otherMagicsAreAnHonestError_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("names");
        QTest::newRow("line magic") << "x = 1\n%timeit x + 1" << "%timeit";
        QTest::newRow("cell magic") << "%%time\nx = 1" << "%%time";
        QTest::newRow("cell magic not first") << "x = 1\n%%bash\necho" << "%%bash";
    }

    void otherMagicsAreAnHonestError()
    {
        QFETCH(QString, code);
        QFETCH(QString, names);
        const ExecutionPtr done = run(code);
        QVERIFY(done);
        VERIFY_EXEC(done->status() == "error", done);
        QCOMPARE(errorField(done, "ename"), QStringLiteral("UsageError"));
        const QString message = errorField(done, "evalue");
        QVERIFY2(message.startsWith(names + QLatin1Char(':')), qPrintable(message));
        QVERIFY2(message.contains(QLatin1String("use ")), qPrintable(message));
    }

    void interruptStopsAShellEscapeAndKeepsState()
    {
        const ExecutionPtr setup = run(QStringLiteral("kept = 'yes'"));
        QVERIFY(setup);
        const ExecutionPtr busy = start(QStringLiteral("!echo ready; sleep 30\nkept = 'no'"));
        QVERIFY(busy);
        QTRY_VERIFY_WITH_TIMEOUT(out(busy).contains(QLatin1String("ready")), kRunTimeout);
        QVERIFY(contexts().interruptExecution(busy->id()).ok());
        QTRY_VERIFY_WITH_TIMEOUT(busy->isFinished(), kPromptly);
        VERIFY_EXEC(busy->status() == "interrupted", busy);
        const ExecutionPtr check = run(QStringLiteral("kept"));
        QVERIFY(check);
        QCOMPARE(resultText(check), QStringLiteral("'yes'"));
    }
};

QTEST_GUILESS_MAIN(PythonCellsTest)
#include "tst_pythoncells.moc"
