// SPDX-License-Identifier: Apache-2.0
// replhost-kernel as Jupyter clients see it: jupyter_client (the library of Notebook, JupyterLab
// and the consoles) talks to the real kernel, which talks to a real replhost-server on 127.0.0.1
// with a temporary data dir.

#include "codequoting.h"
#include "kerneltestbed.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using H = JupyterHarness;

class tst_JupyterKernel : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void executeStreamsOutputAndResult_data();
    void executeStreamsOutputAndResult();
    void errorCarriesNameValueAndTraceback_data();
    void errorCarriesNameValueAndTraceback();
    void displayDataCarriesTheMimeBundle();
    void displayUpdatesAndClearsReachTheFrontend();
    void inputRequestIsAnsweredByTheFrontend();
    void withoutStdinTheRunFindsTheEndOfInput();
    void interruptKeepsState_data();
    void interruptKeepsState();
    void kernelInfoDescribesTheLanguage_data();
    void kernelInfoDescribesTheLanguage();
    void completionComesFromTheContext();
    void inspectShowsAVariableOrSaysNotFound();
    void isCompleteTellsAConsoleWhenToRun();
    void shutdownDeletesTheKernelsContext();
    void kernelOfADeadFrontendEndsAndDeletesItsContext();
    void contextIsNamedAfterTheNotebook();
    void notebookNameIsCleanedForTheServer();
    void forgedRequestIsNotRun();
    void restartKeepsTheContextAndResetsItsState();
    void boundKernelSeesHttpStateAcrossServerRestart_data();
    void boundKernelSeesHttpStateAcrossServerRestart();
    void historyAndCountsAreTheContexts();

private:
    ApiClient client() const { return m_bed.client(); }
    QJsonArray drive(const QString &kernel, const QJsonArray &steps, const QMap<QString, QString> &env = {});
    QJsonArray contexts() const { return client().get(QStringLiteral("/v1/contexts")).array(); }
    // A kernelspec bound to `contextId` (--context).
    QString boundKernel(const QString &contextId);

    KernelTestBed m_bed;
};

// The kernelspec of `language`, after a skip when its runtime is not installed here.
#define KERNEL_FOR(language, variable)          \
    REQUIRE_KERNEL_LANGUAGE(m_bed, language);   \
    const QString variable = QStringLiteral("replhost-") + (language)

void tst_JupyterKernel::initTestCase()
{
    QVERIFY2(m_bed.start(), qPrintable(m_bed.error()));
}

void tst_JupyterKernel::cleanupTestCase()
{
    m_bed.stop();
}

QJsonArray tst_JupyterKernel::drive(const QString &kernel, const QJsonArray &steps, const QMap<QString, QString> &env)
{
    const QJsonArray results = m_bed.jupyter().drive(kernel, steps, env);
    if (results.size() != steps.size())
        qWarning("%s", qPrintable(m_bed.jupyter().error()));
    return results;
}

QString tst_JupyterKernel::boundKernel(const QString &contextId)
{
    return m_bed.jupyter().installKernelspecs({QStringLiteral("--context"), contextId}).value(0);
}

void tst_JupyterKernel::executeStreamsOutputAndResult_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("stdout");
    QTest::addColumn<QString>("stderr");
    QTest::addColumn<QString>("result");  // empty: the language has no value of a cell

    QTest::newRow("python") << "python" << "import sys\nprint('hello, world')\nprint('oops', file=sys.stderr)\n6 * 7"
                            << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("javascript") << "javascript" << "console.log('hello, world'); console.error('oops'); 6 * 7"
                                << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("typescript") << "typescript" << "const n: number = 6\nconsole.log('hello, world'); console.error('oops'); n * 7"
                                << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("perl") << "perl" << "print \"hello, world\\n\"; print STDERR \"oops\\n\"; 6 * 7"
                          << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("java") << "java" << "System.out.println(\"hello, world\");\nSystem.err.println(\"oops\");\n6 * 7"
                          << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("go") << "go" << "fmt.Println(\"hello, world\")\nfmt.Fprintln(os.Stderr, \"oops\")\n6 * 7"
                        << "hello, world\n" << "oops\n" << "42";
    QTest::newRow("bash") << "bash" << "echo hello, world; echo oops >&2" << "hello, world\n" << "oops\n" << "";
}

void tst_JupyterKernel::executeStreamsOutputAndResult()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, stdout);
    QFETCH(QString, stderr);
    QFETCH(QString, result);
    KERNEL_FOR(language, kernel);

    const QJsonArray results = drive(kernel, {H::execute(code)});
    QCOMPARE(results.size(), 1);
    const QJsonObject run = results[0].toObject();
    const QJsonObject reply = run[QStringLiteral("reply")].toObject();
    QCOMPARE(reply[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    const int count = reply[QStringLiteral("execution_count")].toInt();
    QCOMPARE(count, 1);

    const QJsonArray iopub = run[QStringLiteral("iopub")].toArray();
    QCOMPARE(iopub.first()[QStringLiteral("msg_type")].toString(), QStringLiteral("status"));
    QCOMPARE(iopub.first()[QStringLiteral("content")][QStringLiteral("execution_state")].toString(), QStringLiteral("busy"));
    QCOMPARE(iopub.last()[QStringLiteral("content")][QStringLiteral("execution_state")].toString(), QStringLiteral("idle"));
    const QJsonObject input = H::firstMessage(run, QStringLiteral("execute_input"));
    QCOMPARE(input[QStringLiteral("code")].toString(), code);
    QCOMPARE(input[QStringLiteral("execution_count")].toInt(), count);
    QCOMPARE(H::streamText(run, QStringLiteral("stdout")), stdout);
    QCOMPARE(H::streamText(run, QStringLiteral("stderr")), stderr);

    const QJsonObject executeResult = H::firstMessage(run, QStringLiteral("execute_result"));
    if (result.isEmpty()) {
        QVERIFY(executeResult.isEmpty());
        return;
    }
    QCOMPARE(executeResult[QStringLiteral("data")][QStringLiteral("text/plain")].toString(), result);
    QCOMPARE(executeResult[QStringLiteral("execution_count")].toInt(), count);
}

void tst_JupyterKernel::errorCarriesNameValueAndTraceback_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("ename");
    QTest::addColumn<QString>("evalue");

    QTest::newRow("python") << "python" << "1 / 0" << "ZeroDivisionError" << "division by zero";
    QTest::newRow("javascript") << "javascript" << "null.f()" << "TypeError" << "Cannot read properties of null (reading 'f')";
    QTest::newRow("typescript") << "typescript" << "(null as any).f()" << "TypeError" << "Cannot read properties of null (reading 'f')";
    QTest::newRow("perl") << "perl" << "die \"boom\\n\"" << "Error" << "boom";
    QTest::newRow("java") << "java" << "int[] a = new int[1];\na[2] = 1;" << "java.lang.ArrayIndexOutOfBoundsException"
                          << "Index 2 out of bounds for length 1";
    QTest::newRow("go") << "go" << "var m map[string]int\nm[\"a\"] = 1" << "panic" << "assignment to entry in nil map";
    QTest::newRow("bash") << "bash" << "false" << "CommandFailed" << "exit status 1";
}

void tst_JupyterKernel::errorCarriesNameValueAndTraceback()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, ename);
    QFETCH(QString, evalue);
    KERNEL_FOR(language, kernel);

    const QJsonArray results = drive(kernel, {H::execute(code)});
    QCOMPARE(results.size(), 1);
    const QJsonObject reply = results[0][QStringLiteral("reply")].toObject();
    QCOMPARE(reply[QStringLiteral("status")].toString(), QStringLiteral("error"));
    QCOMPARE(reply[QStringLiteral("ename")].toString(), ename);
    QCOMPARE(reply[QStringLiteral("evalue")].toString(), evalue);
    const QJsonObject error = H::firstMessage(results[0].toObject(), QStringLiteral("error"));
    QCOMPARE(error[QStringLiteral("ename")].toString(), ename);
    QCOMPARE(error[QStringLiteral("evalue")].toString(), evalue);
    const QJsonArray traceback = error[QStringLiteral("traceback")].toArray();
    QVERIFY(!traceback.isEmpty());
    const QString lines = QJsonDocument(traceback).toJson();
    QVERIFY2(lines.contains(evalue), qPrintable(lines));
}

void tst_JupyterKernel::displayDataCarriesTheMimeBundle()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const QJsonArray results =
            drive(kernel, {H::execute(QStringLiteral("display({'text/html': '<b>hi</b>', 'text/plain': 'hi'}, raw=True)"))});
    QCOMPARE(results.size(), 1);
    const QJsonObject display = H::firstMessage(results[0].toObject(), QStringLiteral("display_data"));
    QCOMPARE(display[QStringLiteral("data")][QStringLiteral("text/html")].toString(), QStringLiteral("<b>hi</b>"));
    QCOMPARE(display[QStringLiteral("data")][QStringLiteral("text/plain")].toString(), QStringLiteral("hi"));
    QVERIFY(display[QStringLiteral("metadata")].isObject());
}

// A display with an id carries it in `transient`, as frontends look for it there; an update of
// it is update_display_data with the same id, and a clear is clear_output.
void tst_JupyterKernel::displayUpdatesAndClearsReachTheFrontend()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const QJsonArray results = drive(
            kernel, {H::execute(QStringLiteral(
                    "display({'text/plain': '0%'}, raw=True, display_id='bar')\n"
                    "display({'text/plain': '100%'}, raw=True, display_id='bar', update=True)\n"
                    "display({'text/plain': 'fresh'}, raw=True, clear=True)\n"))});
    QCOMPARE(results.size(), 1);
    QStringList order;
    for (const QJsonValue &message : results[0][QStringLiteral("iopub")].toArray()) {
        const QString type = message[QStringLiteral("msg_type")].toString();
        const QJsonObject content = message[QStringLiteral("content")].toObject();
        if (type == QLatin1String("display_data") || type == QLatin1String("update_display_data"))
            order << QStringLiteral("%1 %2 %3").arg(
                    type, content[QStringLiteral("data")][QStringLiteral("text/plain")].toString(),
                    content[QStringLiteral("transient")][QStringLiteral("display_id")].toString());
        else if (type == QLatin1String("clear_output"))
            order << QStringLiteral("clear_output wait=%1")
                             .arg(content[QStringLiteral("wait")].toBool() ? "true" : "false");
    }
    QCOMPARE(order, QStringList({QStringLiteral("display_data 0% bar"),
                                 QStringLiteral("update_display_data 100% bar"),
                                 QStringLiteral("clear_output wait=true"),
                                 QStringLiteral("display_data fresh ")}));
}

// allow_stdin: the run's question is an input_request on the stdin channel, and the frontend's
// input_reply its answer; a password's request says so.
void tst_JupyterKernel::inputRequestIsAnsweredByTheFrontend()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    QJsonObject step = H::execute(QStringLiteral("import getpass\nname = input('Name? ')\n"
                                                 "secret = getpass.getpass('Secret: ')\n"
                                                 "print('hello', name, len(secret))"));
    step.insert(QStringLiteral("allow_stdin"), true);
    step.insert(QStringLiteral("answers"), QJsonArray{QStringLiteral("Ada"), QStringLiteral("s3cret")});
    const QJsonArray results = drive(kernel, {step});
    QCOMPARE(results.size(), 1);
    const QJsonArray stdin = results[0][QStringLiteral("stdin")].toArray();
    QVERIFY2(stdin.size() == 2, QJsonDocument(results[0].toObject()).toJson().constData());
    QCOMPARE(stdin[0][QStringLiteral("msg_type")].toString(), QStringLiteral("input_request"));
    QCOMPARE(stdin[0][QStringLiteral("content")][QStringLiteral("prompt")].toString(), QStringLiteral("Name? "));
    QCOMPARE(stdin[0][QStringLiteral("content")][QStringLiteral("password")].toBool(), false);
    QCOMPARE(stdin[1][QStringLiteral("content")][QStringLiteral("prompt")].toString(), QStringLiteral("Secret: "));
    QCOMPARE(stdin[1][QStringLiteral("content")][QStringLiteral("password")].toBool(), true);
    QCOMPARE(H::streamText(results[0].toObject(), QStringLiteral("stdout")), QStringLiteral("hello Ada 6\n"));
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("ok"));
}

void tst_JupyterKernel::withoutStdinTheRunFindsTheEndOfInput()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    QJsonObject step = H::execute(QStringLiteral("try:\n    input('Name? ')\nexcept EOFError:\n    print('eof')"));
    step.insert(QStringLiteral("allow_stdin"), false);
    step.insert(QStringLiteral("answers"), QJsonArray{QStringLiteral("never asked")});
    const QJsonArray results = drive(kernel, {step});
    QCOMPARE(results.size(), 1);
    QCOMPARE(results[0][QStringLiteral("stdin")].toArray().size(), 0);
    // Python's own input() writes its prompt before it finds the end of input.
    QCOMPARE(H::streamText(results[0].toObject(), QStringLiteral("stdout")), QStringLiteral("Name? eof\n"));
}

void tst_JupyterKernel::interruptKeepsState_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("loop");
    QTest::addColumn<QString>("check");
    QTest::addColumn<QString>("expected");

    // Each loop says it is running once it has counted, and the interrupt is sent once that
    // arrived: whenever the interrupt lands, the count it must keep is there.
    QTest::newRow("python") << "python" << "n = 0"
                            << "while True:\n    n += 1\n    if n == 1000:\n        print('looping', flush=True)"
                            << "print(n >= 1000)" << "True\n";
    QTest::newRow("javascript") << "javascript" << "let n = 0"
                                << "while (true) { n++; if (n === 1000) console.log('looping') }"
                                << "console.log(n >= 1000)" << "true\n";
    QTest::newRow("typescript") << "typescript" << "let n: number = 0"
                                << "while (true) { n++; if (n === 1000) console.log('looping') }"
                                << "console.log(n >= 1000)" << "true\n";
    QTest::newRow("perl") << "perl" << "my $n = 0;" << "$| = 1; while (1) { $n++; print \"looping\\n\" if $n == 1000 }"
                          << "print $n >= 1000 ? \"counted\\n\" : \"too few\\n\"" << "counted\n";
    QTest::newRow("java") << "java" << "long n = 0;" << "while (true) { if (++n == 1000) System.out.println(\"looping\"); }"
                          << "System.out.println(n >= 1000)" << "true\n";
    QTest::newRow("go") << "go" << "n := 0" << "for {\n    n++\n    if n == 1000 {\n        fmt.Println(\"looping\")\n    }\n}"
                        << "fmt.Println(n >= 1000)" << "true\n";
    QTest::newRow("bash") << "bash" << "n=0" << "while true; do n=$((n + 1)); [ $n -eq 10 ] && echo looping; done"
                          << "[ \"$n\" -ge 10 ] && echo counted" << "counted\n";
}

void tst_JupyterKernel::interruptKeepsState()
{
    QFETCH(QString, language);
    QFETCH(QString, setup);
    QFETCH(QString, loop);
    QFETCH(QString, check);
    QFETCH(QString, expected);
    KERNEL_FOR(language, kernel);

    const QJsonArray results =
            drive(kernel, {H::execute(setup), H::execute(loop, QStringLiteral("looping")), H::execute(check)});
    QCOMPARE(results.size(), 3);
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QCOMPARE(results[1][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("error"));
    QVERIFY(!H::firstMessage(results[1].toObject(), QStringLiteral("error")).isEmpty());
    QCOMPARE(results[2][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QCOMPARE(H::streamText(results[2].toObject()), expected);
}

void tst_JupyterKernel::kernelInfoDescribesTheLanguage_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("mimetype");
    QTest::addColumn<QString>("extension");

    QTest::newRow("python") << "python" << "text/x-python" << ".py";
    QTest::newRow("javascript") << "javascript" << "application/javascript" << ".js";
    QTest::newRow("typescript") << "typescript" << "text/typescript" << ".ts";
    QTest::newRow("perl") << "perl" << "text/x-perl" << ".pl";
    QTest::newRow("java") << "java" << "text/x-java" << ".java";
    QTest::newRow("go") << "go" << "text/x-go" << ".go";
    QTest::newRow("bash") << "bash" << "text/x-sh" << ".sh";
}

void tst_JupyterKernel::kernelInfoDescribesTheLanguage()
{
    QFETCH(QString, language);
    QFETCH(QString, mimetype);
    QFETCH(QString, extension);
    KERNEL_FOR(language, kernel);

    const QJsonArray results = drive(kernel, {H::request(QStringLiteral("kernel_info"))});
    QCOMPARE(results.size(), 1);
    const QJsonObject reply = results[0][QStringLiteral("reply")].toObject();
    QCOMPARE(reply[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QCOMPARE(reply[QStringLiteral("implementation")].toString(), QStringLiteral("replhost"));
    QCOMPARE(reply[QStringLiteral("protocol_version")].toString(), QStringLiteral("5.3"));
    const QJsonObject info = reply[QStringLiteral("language_info")].toObject();
    QCOMPARE(info[QStringLiteral("name")].toString(), language);
    QCOMPARE(info[QStringLiteral("mimetype")].toString(), mimetype);
    QCOMPARE(info[QStringLiteral("file_extension")].toString(), extension);
    QVERIFY(!info[QStringLiteral("pygments_lexer")].toString().isEmpty());
    QVERIFY(info.contains(QStringLiteral("codemirror_mode")));
    // The interpreter's version, as the server reports it for the context or its runtime.
    QVERIFY2(!info[QStringLiteral("version")].toString().isEmpty(), qPrintable(QJsonDocument(info).toJson()));
}

void tst_JupyterKernel::completionComesFromTheContext()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const QJsonArray results = drive(kernel, {H::execute(QStringLiteral("import os\npalette = 1")),
                                              H::request(QStringLiteral("complete"),
                                                         {{QStringLiteral("code"), QStringLiteral("os.pa")}}),
                                              H::request(QStringLiteral("complete"),
                                                         {{QStringLiteral("code"), QStringLiteral("x = pal + 1")},
                                                          {QStringLiteral("cursor"), 7}})});
    QCOMPARE(results.size(), 3);
    const QJsonObject module = results[1][QStringLiteral("reply")].toObject();
    QCOMPARE(module[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QVERIFY(module[QStringLiteral("matches")].toArray().contains(QStringLiteral("path")));
    QCOMPARE(module[QStringLiteral("cursor_start")].toInt(), 3);
    QCOMPARE(module[QStringLiteral("cursor_end")].toInt(), 5);
    // A name the context defined, completed in the middle of a line.
    const QJsonObject variable = results[2][QStringLiteral("reply")].toObject();
    QVERIFY(variable[QStringLiteral("matches")].toArray().contains(QStringLiteral("palette")));
    QCOMPARE(variable[QStringLiteral("cursor_start")].toInt(), 4);
    QCOMPARE(variable[QStringLiteral("cursor_end")].toInt(), 7);
}

void tst_JupyterKernel::inspectShowsAVariableOrSaysNotFound()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const QJsonArray results = drive(kernel, {H::execute(QStringLiteral("answer = 42")),
                                              H::request(QStringLiteral("inspect"),
                                                         {{QStringLiteral("code"), QStringLiteral("answer + 1")},
                                                          {QStringLiteral("cursor"), 3}}),
                                              H::request(QStringLiteral("inspect"),
                                                         {{QStringLiteral("code"), QStringLiteral("nothing_here")}})});
    QCOMPARE(results.size(), 3);
    const QJsonObject found = results[1][QStringLiteral("reply")].toObject();
    QCOMPARE(found[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QCOMPARE(found[QStringLiteral("found")].toBool(), true);
    QCOMPARE(found[QStringLiteral("data")][QStringLiteral("text/plain")].toString(), QStringLiteral("answer: int = 42"));
    const QJsonObject missing = results[2][QStringLiteral("reply")].toObject();
    QCOMPARE(missing[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    QCOMPARE(missing[QStringLiteral("found")].toBool(), false);
}

void tst_JupyterKernel::isCompleteTellsAConsoleWhenToRun()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const auto isComplete = [](const char *code) {
        return H::request(QStringLiteral("is_complete"), {{QStringLiteral("code"), QLatin1String(code)}});
    };
    const QJsonArray results = drive(kernel, {isComplete("x = 1"), isComplete("def f():"), isComplete("x = )")});
    QCOMPARE(results.size(), 3);
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("complete"));
    QCOMPARE(results[1][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("incomplete"));
    QCOMPARE(results[1][QStringLiteral("reply")][QStringLiteral("indent")].toString(), QStringLiteral("    "));
    QCOMPARE(results[2][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("invalid"));
}

void tst_JupyterKernel::shutdownDeletesTheKernelsContext()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const qsizetype before = contexts().size();
    const QJsonArray results = drive(kernel, {H::execute(QStringLiteral("x = 1"))});
    QCOMPARE(results.size(), 1);
    QCOMPARE(contexts().size(), before);
}

void tst_JupyterKernel::kernelOfADeadFrontendEndsAndDeletesItsContext()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const qsizetype before = contexts().size();
    QJsonArray results;
    const qint64 pid = m_bed.jupyter().driveAndAbandon(kernel, {H::execute(QStringLiteral("x = 1"))}, &results);
    QVERIFY2(pid > 0, qPrintable(m_bed.jupyter().error()));
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("ok"));
    // Its frontend died without a shutdown_request: the kernel notices and ends on its own.
    QTRY_VERIFY_WITH_TIMEOUT(!ServerProcess::isAlive(pid), 30000);
    QCOMPARE(contexts().size(), before);
}

void tst_JupyterKernel::contextIsNamedAfterTheNotebook()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    // The cell asks the server itself which contexts it has.
    const QString code = QStringLiteral(
            "import json, urllib.request\n"
            "request = urllib.request.Request('http://127.0.0.1:%1/v1/contexts', headers={'Authorization': 'Bearer %2'})\n"
            "print([c['name'] for c in json.load(urllib.request.urlopen(request))])")
                                 .arg(m_bed.server().port())
                                 .arg(QString::fromLatin1(m_bed.server().token()));
    const QJsonArray results =
            drive(kernel, {H::execute(code)}, {{QStringLiteral("JPY_SESSION_NAME"), QStringLiteral("work/analysis.ipynb")}});
    QCOMPARE(results.size(), 1);
    QVERIFY2(H::streamText(results[0].toObject()).contains(QStringLiteral("'work/analysis.ipynb'")),
             qPrintable(QJsonDocument(results[0].toObject()).toJson()));
}

void tst_JupyterKernel::notebookNameIsCleanedForTheServer()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    // Control characters and more than the 200 characters a context name may have: the kernel
    // still starts, in a context named with the name's last 200 printable characters.
    const QString name = QStringLiteral("a\nb\tc\x1b[31m") + QString(300, QLatin1Char('x')) + QStringLiteral("/end.ipynb");
    const QString code = QStringLiteral(
            "import json, urllib.request\n"
            "request = urllib.request.Request('http://127.0.0.1:%1/v1/contexts', headers={'Authorization': 'Bearer %2'})\n"
            "print(json.dumps([c['name'] for c in json.load(urllib.request.urlopen(request))]))")
                                 .arg(m_bed.server().port())
                                 .arg(QString::fromLatin1(m_bed.server().token()));
    const QJsonArray results = drive(kernel, {H::execute(code)}, {{QStringLiteral("JPY_SESSION_NAME"), name}});
    QCOMPARE(results.size(), 1);
    const QJsonArray names = QJsonDocument::fromJson(H::streamText(results[0].toObject()).toUtf8()).array();
    QString expected = name;
    expected.remove(QRegularExpression(QStringLiteral("[\\x00-\\x1f\\x7f]")));
    QVERIFY2(names.contains(expected.right(200)), qPrintable(QJsonDocument(names).toJson()));
}

void tst_JupyterKernel::forgedRequestIsNotRun()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    QTemporaryDir scratch;
    const QString marker = scratch.filePath(QStringLiteral("forged"));
    // Signed with another key: xeus must drop it, so the file is never written; the next,
    // genuine request is answered as usual.
    const QJsonArray results = drive(kernel, {H::request(QStringLiteral("forged_execute"),
                                                         {{QStringLiteral("code"), QStringLiteral("open(%1, 'w').write('ran')").arg(replhost::testing::pythonString(marker))}}),
                                              H::execute(QStringLiteral("import os\nprint(os.path.exists(%1))").arg(replhost::testing::pythonString(marker)))});
    QCOMPARE(results.size(), 2);
    QCOMPARE(H::streamText(results[1].toObject()), QStringLiteral("False\n"));
    QVERIFY(!QFile::exists(marker));
}

void tst_JupyterKernel::restartKeepsTheContextAndResetsItsState()
{
    KERNEL_FOR(QStringLiteral("python"), kernel);
    const qsizetype before = contexts().size();
    const QJsonArray results = drive(kernel, {H::execute(QStringLiteral("x = 1")), H::request(QStringLiteral("kernel_info")),
                                              H::request(QStringLiteral("restart")), H::request(QStringLiteral("kernel_info")),
                                              H::execute(QStringLiteral("print('x' in globals())"))});
    QCOMPARE(results.size(), 5);
    // The banner names the context: the kernel Jupyter started again runs in the same one.
    const QString banner = results[1][QStringLiteral("reply")][QStringLiteral("banner")].toString();
    QVERIFY(banner.contains(QStringLiteral("context ")));
    QCOMPARE(results[3][QStringLiteral("reply")][QStringLiteral("banner")].toString(), banner);
    QCOMPARE(H::streamText(results[4].toObject()), QStringLiteral("False\n"));
    QCOMPARE(contexts().size(), before);
}

void tst_JupyterKernel::boundKernelSeesHttpStateAcrossServerRestart_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("check");
    QTest::addColumn<QString>("expected");

    QTest::newRow("python") << "python" << "x = 41" << "print(x + 1)" << "42\n";
    QTest::newRow("javascript") << "javascript" << "var x = 41" << "console.log(x + 1)" << "42\n";
    QTest::newRow("typescript") << "typescript" << "var x: number = 41" << "console.log(x + 1)" << "42\n";
    QTest::newRow("perl") << "perl" << "our $x = 41;" << "print $x + 1, \"\\n\"" << "42\n";
    QTest::newRow("java") << "java" << "int x = 41;" << "System.out.println(x + 1)" << "42\n";
    QTest::newRow("go") << "go" << "x := 41" << "fmt.Println(x + 1)" << "42\n";
    QTest::newRow("bash") << "bash" << "x=41" << "echo $((x + 1))" << "42\n";
}

void tst_JupyterKernel::boundKernelSeesHttpStateAcrossServerRestart()
{
    QFETCH(QString, language);
    QFETCH(QString, setup);
    QFETCH(QString, check);
    QFETCH(QString, expected);
    REQUIRE_KERNEL_LANGUAGE(m_bed, language);

    const QString contextId = client().createContext(language);
    QVERIFY(!contextId.isEmpty());
    QCOMPARE(client().runAndWait(contextId, setup)[QStringLiteral("status")].toString(), QStringLiteral("ok"));
    const QString kernel = boundKernel(contextId);
    QVERIFY(!kernel.isEmpty());

    QJsonArray results = drive(kernel, {H::execute(check)});
    QCOMPARE(results.size(), 1);
    QCOMPARE(H::streamText(results[0].toObject()), expected);
    // A bound kernel's shutdown leaves the context.
    QCOMPARE(client().get(QStringLiteral("/v1/contexts/") + contextId).status, 200);

    const QString dataDir = m_bed.server().dataDir();
    QCOMPARE(m_bed.server().stop(), 0);
    QVERIFY2(m_bed.server().start({}, {}, dataDir), qPrintable(m_bed.server().error()));
    results = drive(kernel, {H::execute(check)});
    QCOMPARE(results.size(), 1);
    QCOMPARE(H::streamText(results[0].toObject()), expected);
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("status")].toString(), QStringLiteral("ok"));
}

void tst_JupyterKernel::historyAndCountsAreTheContexts()
{
    REQUIRE_KERNEL_LANGUAGE(m_bed, QStringLiteral("python"));
    const QString contextId = client().createContext(QStringLiteral("python"));
    QVERIFY(!contextId.isEmpty());
    client().runAndWait(contextId, QStringLiteral("a = 1"));
    client().runAndWait(contextId, QStringLiteral("b = 2"));
    const QString kernel = boundKernel(contextId);

    const QJsonArray results =
            drive(kernel, {H::execute(QStringLiteral("a + b")),
                           H::request(QStringLiteral("history"), {{QStringLiteral("hist_access_type"), QStringLiteral("tail")},
                                                                  {QStringLiteral("n"), 2},
                                                                  {QStringLiteral("output"), true}}),
                           H::request(QStringLiteral("history"), {{QStringLiteral("hist_access_type"), QStringLiteral("range")},
                                                                  {QStringLiteral("session"), 0},
                                                                  {QStringLiteral("start"), 1},
                                                                  {QStringLiteral("stop"), 3}}),
                           H::request(QStringLiteral("history"), {{QStringLiteral("hist_access_type"), QStringLiteral("search")},
                                                                  {QStringLiteral("pattern"), QStringLiteral("? = *")}})});
    QCOMPARE(results.size(), 4);
    // The context ran two cells before: this is its third, in the kernel too.
    QCOMPARE(results[0][QStringLiteral("reply")][QStringLiteral("execution_count")].toInt(), 3);
    QCOMPARE(H::firstMessage(results[0].toObject(), QStringLiteral("execute_input"))[QStringLiteral("execution_count")].toInt(), 3);
    QCOMPARE(H::firstMessage(results[0].toObject(), QStringLiteral("execute_result"))[QStringLiteral("execution_count")].toInt(), 3);

    const QJsonArray tail = results[1][QStringLiteral("reply")][QStringLiteral("history")].toArray();
    QCOMPARE(QJsonDocument(tail).toJson(QJsonDocument::Compact),
             QByteArray(R"([[0,2,["b = 2",""]],[0,3,["a + b","3"]]])"));
    const QJsonArray range = results[2][QStringLiteral("reply")][QStringLiteral("history")].toArray();
    QCOMPARE(QJsonDocument(range).toJson(QJsonDocument::Compact), QByteArray(R"([[0,1,"a = 1"],[0,2,"b = 2"]])"));
    const QJsonArray search = results[3][QStringLiteral("reply")][QStringLiteral("history")].toArray();
    QCOMPARE(QJsonDocument(search).toJson(QJsonDocument::Compact), QByteArray(R"([[0,1,"a = 1"],[0,2,"b = 2"]])"));
}

QTEST_GUILESS_MAIN(tst_JupyterKernel)
#include "tst_jupyterkernel.moc"
