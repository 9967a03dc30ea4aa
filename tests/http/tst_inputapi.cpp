// SPDX-License-Identifier: Apache-2.0
// Code that reads input, over HTTP: a run whose request says "input": true asks with an
// input_request event and waits for POST /v1/executions/{id}/input; a run without it finds the
// end of input at once. Interrupts and timeouts end the wait and keep the state; passwords are
// never stored; answers that do not fit are refused. A real replhost-server and real
// interpreters, spoken to with Poco.

#include "apiclient.h"
#include "serverprocess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#define REQUIRE_LANGUAGE(id)                                            \
    do {                                                                \
        const QString why = client().missingLanguage(id);               \
        if (!why.isEmpty())                                             \
            QSKIP(qPrintable(why));                                     \
    } while (false)

class tst_InputApi : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void inputIsAnsweredThroughTheApi_data();
    void inputIsAnsweredThroughTheApi();
    void endOfInputCanBeTheAnswer();
    void pythonStandardInputAsks_data();
    void pythonStandardInputAsks();
    void passwordIsNeitherEchoedNorStored();
    void runWithoutInputFindsTheEndOfInputAtOnce_data();
    void runWithoutInputFindsTheEndOfInputAtOnce();
    void interruptEndsTheWaitAndKeepsState_data();
    void interruptEndsTheWaitAndKeepsState();
    void timeoutEndsTheWaitAndKeepsState();
    void answeringAnExecutionThatIsNotWaitingIs409();
    void answeringTwiceIs409();
    void malformedAnswersAre400_data();
    void malformedAnswersAre400();
    void oversizedAnswerIs413();
    void answeringAnUnknownExecutionIs404();
    void forgedInputRequestOfARunWithoutInputIsAProtocolError();

private:
    ApiClient client() const { return ApiClient(m_server.port(), m_server.token()); }
    // Starts `code` in `contextId` with "input": true (and `extra`); reads up to its first
    // input_request, whose fields go to `request`. The stream, or null with a failure recorded.
    std::unique_ptr<ApiClient::Stream> runUntilAsked(const QString &contextId, const QString &code,
                                                     QString *executionId, QJsonObject *request,
                                                     const QJsonObject &extra = {});
    // Reads the rest of a stream: its events' types, stdout joined, the done's fields.
    struct Rest {
        QList<QByteArray> types;
        QList<QJsonObject> events;
        QString stdoutText;
        QJsonObject done;
    };
    static Rest readRest(ApiClient::Stream &stream);
    ApiClient::Response answer(const QString &executionId, const QJsonObject &body) const
    {
        return client().post(QStringLiteral("/v1/executions/%1/input").arg(executionId), body);
    }

    ServerProcess m_server;
};

void tst_InputApi::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
}

std::unique_ptr<ApiClient::Stream> tst_InputApi::runUntilAsked(const QString &contextId,
                                                               const QString &code,
                                                               QString *executionId,
                                                               QJsonObject *request,
                                                               const QJsonObject &extra)
{
    QJsonObject body = extra;
    body.insert(QStringLiteral("code"), code);
    body.insert(QStringLiteral("input"), true);
    std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(contextId), body);
    if (stream->status() != 200) {
        qWarning() << "run answered" << stream->status();
        return nullptr;
    }
    while (std::optional<ApiClient::Event> event = stream->next(30000)) {
        if (event->type == "execution")
            *executionId = event->json().value(QStringLiteral("id")).toString();
        if (event->type == "input_request") {
            *request = event->json();
            return stream;
        }
        if (event->type == "done") {
            qWarning() << "the run ended without asking:" << event->data;
            return nullptr;
        }
        if (event->type == "error")
            qWarning() << "error before the question:" << event->data;
    }
    qWarning() << "the stream ended without a question";
    return nullptr;
}

tst_InputApi::Rest tst_InputApi::readRest(ApiClient::Stream &stream)
{
    Rest rest;
    while (std::optional<ApiClient::Event> event = stream.next(30000)) {
        rest.types.append(event->type);
        rest.events.append(event->json());
        if (event->type == "stream"
            && event->json().value(QStringLiteral("name")).toString() == QLatin1String("stdout"))
            rest.stdoutText += event->json().value(QStringLiteral("text")).toString();
        if (event->type == "done")
            rest.done = event->json();
    }
    return rest;
}

void tst_InputApi::inputIsAnsweredThroughTheApi_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("prompt");
    const QString readline = QStringLiteral(
            "const rl = require('readline').createInterface({input: process.stdin});\n"
            "const name%1 = await new Promise(done => rl.question('Name? ', done));\n"
            "rl.close();\n"
            "console.log('hello ' + name)");
    QTest::newRow("python") << "python"
                            << "name = input('Name? ')\nprint('hello', name)" << "Name? ";
    // Perl's prompt is what the code prints before it reads: the question itself has none.
    QTest::newRow("perl") << "perl"
                          << "print 'Name? ';\nmy $name = <STDIN>;\nchomp $name;\nprint \"hello $name\\n\";"
                          << "";
    QTest::newRow("bash") << "bash" << "read -r -p 'Name? ' name\necho \"hello $name\"" << "Name? ";
    QTest::newRow("javascript") << "javascript" << readline.arg(QString()) << "Name? ";
    QTest::newRow("typescript") << "typescript" << readline.arg(QStringLiteral(": string")) << "Name? ";
    // Jupyter kernels ask on their stdin channel.
    QTest::newRow("r") << "jupyter-ir" << "name <- readline('Name? ')\ncat('hello ', name, '\\n', sep = '')" << "Name? ";
    QTest::newRow("jupyter-python3") << "jupyter-python3"
                                     << "name = input('Name? ')\nprint('hello', name)" << "Name? ";
}

void tst_InputApi::inputIsAnsweredThroughTheApi()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, prompt);
    REQUIRE_LANGUAGE(language);
    const QString id = client().createContext(language);
    QVERIFY(!id.isEmpty());

    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(id, code, &executionId, &request);
    QVERIFY(stream);
    QCOMPARE(request.value(QStringLiteral("prompt")).toString(), prompt);
    QCOMPARE(request.value(QStringLiteral("password")), QJsonValue(false));
    QCOMPARE(request.value(QStringLiteral("execution_id")).toString(), executionId);
    const auto waiting = client().get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(waiting.object().value(QStringLiteral("status")).toString(), QStringLiteral("running"));

    const auto answered = answer(executionId, {{QStringLiteral("value"), QStringLiteral("Ada Lovelace")}});
    QCOMPARE(answered.status, 202);
    const Rest rest = readRest(*stream);
    QCOMPARE(rest.types.first(), QByteArray("input_reply"));
    QCOMPARE(rest.events.first().value(QStringLiteral("value")).toString(), QStringLiteral("Ada Lovelace"));
    QCOMPARE(rest.done.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(rest.stdoutText, QStringLiteral("hello Ada Lovelace\n"));

    // The document says what was asked and answered.
    const QJsonObject document = client().get(QStringLiteral("/v1/executions/") + executionId).object();
    const QJsonArray inputs = document.value(QStringLiteral("inputs")).toArray();
    QCOMPARE(inputs.size(), 1);
    QCOMPARE(inputs.at(0).toObject(),
             (QJsonObject{{QStringLiteral("prompt"), prompt},
                          {QStringLiteral("password"), false},
                          {QStringLiteral("value"), QStringLiteral("Ada Lovelace")}}));
}

void tst_InputApi::endOfInputCanBeTheAnswer()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(
            id, QStringLiteral("try:\n    input()\nexcept EOFError:\n    print('no more input')"),
            &executionId, &request);
    QVERIFY(stream);
    QCOMPARE(answer(executionId, {{QStringLiteral("eof"), true}}).status, 202);
    const Rest rest = readRest(*stream);
    QCOMPARE(rest.events.first().value(QStringLiteral("eof")), QJsonValue(true));
    QCOMPARE(rest.stdoutText, QStringLiteral("no more input\n"));
    QCOMPARE(rest.done.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
}

void tst_InputApi::pythonStandardInputAsks_data()
{
    QTest::addColumn<QString>("code");
    // The answers given, one per question, in order; a null one is the end of input.
    QTest::addColumn<QJsonArray>("answers");
    QTest::addColumn<QString>("expected");
    const QJsonArray twoThenEnd{QStringLiteral("ada"), QStringLiteral("bob"), QJsonValue()};
    QTest::newRow("readline") << "import sys\nprint(repr(sys.stdin.readline()))"
                              << QJsonArray{QStringLiteral("ada")} << "'ada\\n'\n";
    QTest::newRow("readline at the end of input")
            << "import sys\nprint(repr(sys.stdin.readline()))" << QJsonArray{QJsonValue()} << "''\n";
    QTest::newRow("readline with a size keeps the rest for the next read")
            << "import sys\nprint(repr(sys.stdin.readline(2)), repr(sys.stdin.readline()))"
            << QJsonArray{QStringLiteral("ada")} << "'ad' 'a\\n'\n";
    QTest::newRow("read asks until the end of input")
            << "import sys\nprint(repr(sys.stdin.read()))" << twoThenEnd << "'ada\\nbob\\n'\n";
    QTest::newRow("read with a size") << "import sys\nprint(repr(sys.stdin.read(2)))"
                                      << QJsonArray{QStringLiteral("ada")} << "'ad'\n";
    QTest::newRow("readlines") << "import sys\nprint(sys.stdin.readlines())" << twoThenEnd
                               << "['ada\\n', 'bob\\n']\n";
    QTest::newRow("iteration") << "import sys\nfor line in sys.stdin:\n    print('got', line.strip())"
                               << twoThenEnd << "got ada\ngot bob\n";
    QTest::newRow("fileinput") << "import fileinput\nprint([l for l in fileinput.input(files=('-',))])"
                               << twoThenEnd << "['ada\\n', 'bob\\n']\n";
    QTest::newRow("fileinput, binary")
            << "import fileinput\nprint([l for l in fileinput.input(files=('-',), mode='rb')])"
            << QJsonArray{QStringLiteral("\u00e9"), QJsonValue()} << "[b'\\xc3\\xa9\\n']\n";
    QTest::newRow("buffer") << "import sys\nprint(sys.stdin.buffer.readline())"
                            << QJsonArray{QStringLiteral("ada")} << "b'ada\\n'\n";
    QTest::newRow("input() takes what a read left")
            << "import sys\nsys.stdin.read(1)\nprint(repr(input()))" << QJsonArray{QStringLiteral("ada")}
            << "'da'\n";
    QTest::newRow("a read after the end of input asks again")
            << "import sys\nsys.stdin.read()\nprint(repr(sys.stdin.readline()))"
            << QJsonArray{QJsonValue(), QStringLiteral("more")} << "'more\\n'\n";
}

// sys.stdin of a Python cell is a file that asks as input() does: every way of reading it.
void tst_InputApi::pythonStandardInputAsks()
{
    QFETCH(QString, code);
    QFETCH(QJsonArray, answers);
    QFETCH(QString, expected);
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    std::unique_ptr<ApiClient::Stream> stream = client().openStream(
            "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
            {{QStringLiteral("code"), code}, {QStringLiteral("input"), true}});
    QCOMPARE(stream->status(), 200);
    QString executionId;
    QString stdoutText;
    QJsonObject done;
    qsizetype asked = 0;
    while (std::optional<ApiClient::Event> event = stream->next(30000)) {
        const QJsonObject fields = event->json();
        if (event->type == "execution")
            executionId = fields.value(QStringLiteral("id")).toString();
        if (event->type == "input_request") {
            QVERIFY2(asked < answers.size(), "asked more often than there are answers");
            QCOMPARE(fields.value(QStringLiteral("prompt")).toString(), QString());
            const QJsonValue given = answers.at(asked++);
            QCOMPARE(answer(executionId, given.isNull() ? QJsonObject{{QStringLiteral("eof"), true}}
                                                        : QJsonObject{{QStringLiteral("value"), given}})
                             .status,
                     202);
        }
        if (event->type == "stream" && fields.value(QStringLiteral("name")).toString() == QLatin1String("stdout"))
            stdoutText += fields.value(QStringLiteral("text")).toString();
        if (event->type == "done")
            done = fields;
    }
    QCOMPARE(asked, answers.size());
    QCOMPARE(done.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(stdoutText, expected);

    // Without "input": true every read finds the end of input at once.
    const QJsonObject unanswerable = client().runAndWait(
            id, QStringLiteral("import sys\nprint(repr(sys.stdin.read()), repr(sys.stdin.readline()), list(sys.stdin))"));
    QCOMPARE(unanswerable.value(QStringLiteral("stdout")).toString(), QStringLiteral("'' '' []\n"));
}

void tst_InputApi::passwordIsNeitherEchoedNorStored()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(
            id, QStringLiteral("import getpass\nsecret = getpass.getpass()\nprint(len(secret))"),
            &executionId, &request);
    QVERIFY(stream);
    QCOMPARE(request.value(QStringLiteral("password")), QJsonValue(true));
    QCOMPARE(request.value(QStringLiteral("prompt")).toString(), QStringLiteral("Password: "));
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("hunter2-s3cret")}}).status, 202);
    const Rest rest = readRest(*stream);
    QCOMPARE(rest.stdoutText, QStringLiteral("14\n"));
    QCOMPARE(rest.events.first().value(QStringLiteral("password")), QJsonValue(true));
    QVERIFY(!rest.events.first().contains(QStringLiteral("value")));

    // Nowhere: not in the stream, the document, the history or a stream replayed from storage.
    const QByteArray secret("hunter2-s3cret");
    for (const QString &path : {QStringLiteral("/v1/executions/%1").arg(executionId),
                                QStringLiteral("/v1/contexts/%1/executions").arg(id)}) {
        const auto response = client().get(path);
        QCOMPARE(response.status, 200);
        QVERIFY2(!response.body.contains(secret), qPrintable(path));
    }
    for (const ApiClient::Event &event :
         client().stream(QStringLiteral("/v1/executions/%1/events").arg(executionId), {}))
        QVERIFY(!event.data.contains(secret));
    const QJsonArray inputs = client().get(QStringLiteral("/v1/executions/") + executionId)
                                      .object().value(QStringLiteral("inputs")).toArray();
    QCOMPARE(inputs.at(0).toObject(),
             (QJsonObject{{QStringLiteral("prompt"), QStringLiteral("Password: ")},
                          {QStringLiteral("password"), true}}));
    const QString dataDir = m_server.dataDir();
    QCOMPARE(m_server.stop(), 0);
    QVERIFY2(m_server.start({}, {}, dataDir), qPrintable(m_server.error()));
    const auto stored = client().get(QStringLiteral("/v1/executions/") + executionId);
    QCOMPARE(stored.status, 200);
    QVERIFY(!stored.body.contains(secret));
}

void tst_InputApi::runWithoutInputFindsTheEndOfInputAtOnce_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    const QString readline = QStringLiteral(
            "const rl = require('readline').createInterface({input: process.stdin});\n"
            "const got%1 = await new Promise(done => {\n"
            "    rl.question('Name? ', () => done('line'));\n"
            "    rl.on('close', () => done('eof'));\n"
            "});\n"
            "console.log(got)");
    QTest::newRow("python") << "python"
                            << "try:\n    input('Name? ')\nexcept EOFError:\n    print('eof')" << "eof";
    QTest::newRow("perl") << "perl" << "my $line = <STDIN>;\nprint defined $line ? \"line\\n\" : \"eof\\n\";"
                          << "eof";
    QTest::newRow("bash") << "bash" << "read -r line\necho \"read status $?\"" << "read status 1";
    QTest::newRow("javascript") << "javascript" << readline.arg(QString()) << "eof";
    QTest::newRow("typescript") << "typescript" << readline.arg(QStringLiteral(": string")) << "eof";
    // IRkernel's readline() asks whether the request allows stdin or not: it gets the end of
    // input at once, "\x04" as jupyter_console answers it.
    QTest::newRow("r") << "jupyter-ir" << "line <- readline('Name? ')\ncat(if (line == '\\004') 'eof' else 'line', '\\n')"
                       << "eof";
}

void tst_InputApi::runWithoutInputFindsTheEndOfInputAtOnce()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    REQUIRE_LANGUAGE(language);
    const QString id = client().createContext(language);
    for (const QJsonObject &extra : {QJsonObject{}, QJsonObject{{QStringLiteral("input"), false}}}) {
        const QJsonObject run = client().runAndWait(id, code, extra);
        QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY2(run.value(QStringLiteral("stdout")).toString().contains(expected),
                 qPrintable(run.value(QStringLiteral("stdout")).toString()));
        QVERIFY(!run.contains(QStringLiteral("inputs")));
    }
    // Streamed too, nothing asks.
    const QList<ApiClient::Event> events =
            client().stream(QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), code}});
    QVERIFY(!events.isEmpty());
    QCOMPARE(events.last().type, QByteArray("done"));
    for (const ApiClient::Event &event : events)
        QVERIFY(event.type != "input_request");
}

void tst_InputApi::interruptEndsTheWaitAndKeepsState_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("setup");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("check");
    QTest::addColumn<QString>("expected");
    const QString readline = QStringLiteral(
            "const rl = require('readline').createInterface({input: process.stdin});\n"
            "await new Promise(done => rl.question('? ', done));");
    QTest::newRow("python") << "python" << "kept = 41" << "answer = input('? ')"
                            << "print(kept + 1)" << "42";
    QTest::newRow("perl") << "perl" << "our $kept = 41;" << "my $answer = <STDIN>;"
                          << "print $kept + 1, \"\\n\";" << "42";
    QTest::newRow("bash") << "bash" << "kept=41" << "read -r answer" << "echo $((kept + 1))" << "42";
    QTest::newRow("javascript") << "javascript" << "var kept = 41" << readline
                                << "console.log(kept + 1)" << "42";
    QTest::newRow("typescript") << "typescript" << "var kept: number = 41" << readline
                                << "console.log(kept + 1)" << "42";
    QTest::newRow("r") << "jupyter-ir" << "kept <- 41" << "answer <- readline('? ')" << "cat(kept + 1, '\\n')"
                       << "42";
    QTest::newRow("jupyter-python3") << "jupyter-python3" << "kept = 41" << "answer = input('? ')"
                                     << "print(kept + 1)" << "42";
}

void tst_InputApi::interruptEndsTheWaitAndKeepsState()
{
    QFETCH(QString, language);
    QFETCH(QString, setup);
    QFETCH(QString, code);
    QFETCH(QString, check);
    QFETCH(QString, expected);
    REQUIRE_LANGUAGE(language);
    const QString id = client().createContext(language);
    QCOMPARE(client().runAndWait(id, setup).value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(id, code, &executionId, &request);
    QVERIFY(stream);
    QCOMPARE(client().post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {}).status, 202);
    const Rest rest = readRest(*stream);
    QCOMPARE(rest.done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QCOMPARE(rest.done.value(QStringLiteral("state_lost")), QJsonValue(false));
    // The question is over: an answer now is refused.
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("late")}}).status, 409);
    const QJsonObject after = client().runAndWait(id, check);
    QCOMPARE(after.value(QStringLiteral("stdout")).toString().trimmed(), expected);
}

void tst_InputApi::timeoutEndsTheWaitAndKeepsState()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QCOMPARE(client().runAndWait(id, QStringLiteral("kept = 'yes'")).value(QStringLiteral("status")).toString(),
             QStringLiteral("ok"));
    // Nobody answers, even though the request says someone could.
    const QJsonObject run = client().runAndWait(
            id, QStringLiteral("input('never answered? ')"),
            {{QStringLiteral("input"), true}, {QStringLiteral("timeout_ms"), 500}});
    QCOMPARE(run.value(QStringLiteral("status")).toString(), QStringLiteral("timeout"));
    QCOMPARE(run.value(QStringLiteral("state_lost")), QJsonValue(false));
    QCOMPARE(run.value(QStringLiteral("inputs")).toArray().size(), 1);
    QCOMPARE(ApiClient::resultText(client().runAndWait(id, QStringLiteral("kept"))), QStringLiteral("'yes'"));
}

void tst_InputApi::answeringAnExecutionThatIsNotWaitingIs409()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    // Finished.
    const QJsonObject finished = client().runAndWait(id, QStringLiteral("1"));
    const auto late = answer(finished.value(QStringLiteral("id")).toString(),
                             {{QStringLiteral("value"), QStringLiteral("x")}});
    QCOMPARE(late.status, 409);
    QCOMPARE(late.object().value(QStringLiteral("code")).toString(), QStringLiteral("conflict"));

    // Running, but not asking: one run that could be answered, one that could not.
    for (const bool input : {true, false}) {
        const auto stream = client().openStream(
                "POST", QStringLiteral("/v1/contexts/%1/executions").arg(id),
                {{QStringLiteral("code"), QStringLiteral("print('busy', flush=True)\nimport time\ntime.sleep(60)")},
                 {QStringLiteral("input"), input}});
        QString executionId;
        bool busy = false;
        while (std::optional<ApiClient::Event> event = stream->next(30000)) {
            if (event->type == "execution")
                executionId = event->json().value(QStringLiteral("id")).toString();
            if (event->type == "stream") {
                busy = true;
                break;
            }
        }
        QVERIFY(busy);
        QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("x")}}).status, 409);
        QCOMPARE(client().post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {}).status, 202);
        QCOMPARE(readRest(*stream).done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    }
}

void tst_InputApi::answeringTwiceIs409()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QString executionId;
    QJsonObject request;
    // After its answer the run keeps running, without asking again.
    const auto stream = runUntilAsked(
            id, QStringLiteral("got = input()\nprint('got', got, flush=True)\nimport time\ntime.sleep(60)"),
            &executionId, &request);
    QVERIFY(stream);
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("first")}}).status, 202);
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("second")}}).status, 409);
    QString text;
    while (std::optional<ApiClient::Event> event = stream->next(30000)) {
        if (event->type == "stream")
            text += event->json().value(QStringLiteral("text")).toString();
        if (text.contains(QLatin1Char('\n')))
            break;
    }
    QCOMPARE(text, QStringLiteral("got first\n"));
    QCOMPARE(client().post(QStringLiteral("/v1/executions/%1/interrupt").arg(executionId), {}).status, 202);
    const Rest rest = readRest(*stream);
    QCOMPARE(rest.done.value(QStringLiteral("status")).toString(), QStringLiteral("interrupted"));
    QVERIFY(!rest.types.contains("input_reply"));
}

void tst_InputApi::malformedAnswersAre400_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("not JSON") << QByteArray("value=x");
    QTest::newRow("not an object") << QByteArray("[\"x\"]");
    QTest::newRow("no value") << QByteArray("{}");
    QTest::newRow("a number") << QByteArray("{\"value\": 42}");
    QTest::newRow("an object") << QByteArray("{\"value\": {\"text\": \"x\"}}");
    QTest::newRow("eof not a boolean") << QByteArray("{\"eof\": \"yes\"}");
}

void tst_InputApi::malformedAnswersAre400()
{
    QFETCH(QByteArray, body);
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(id, QStringLiteral("print('answer:', input())"), &executionId, &request);
    QVERIFY(stream);
    const auto refused = client().request("POST", QStringLiteral("/v1/executions/%1/input").arg(executionId),
                                          body, {{"Content-Type", "application/json"}});
    QCOMPARE(refused.status, 400);
    // The question still stands and takes a proper answer.
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), QStringLiteral("fine")}}).status, 202);
    QCOMPARE(readRest(*stream).stdoutText, QStringLiteral("answer: fine\n"));
}

void tst_InputApi::oversizedAnswerIs413()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    QString executionId;
    QJsonObject request;
    const auto stream = runUntilAsked(id, QStringLiteral("print(len(input()))"), &executionId, &request);
    QVERIFY(stream);
    const QString huge(1024 * 1024 + 1, QLatin1Char('x'));
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), huge}}).status, 413);
    const QString largest(1024 * 1024, QLatin1Char('y'));
    QCOMPARE(answer(executionId, {{QStringLiteral("value"), largest}}).status, 202);
    QCOMPARE(readRest(*stream).stdoutText, QStringLiteral("1048576\n"));
}

void tst_InputApi::answeringAnUnknownExecutionIs404()
{
    QCOMPARE(answer(QStringLiteral("no-such-execution"), {{QStringLiteral("value"), QStringLiteral("x")}}).status,
             404);
}

void tst_InputApi::forgedInputRequestOfARunWithoutInputIsAProtocolError()
{
    REQUIRE_LANGUAGE(QStringLiteral("python"));
    const QString id = client().createContext(QStringLiteral("python"));
    // Code that writes a question of its own on the event channel, for its own run (whose id it
    // finds in the driver's frame): nobody could answer it, so the host must not wait for one.
    const QString code = QStringLiteral(
            "import os, sys, json\n"
            "f = sys._getframe()\n"
            "while '_current_id' not in f.f_globals:\n"
            "    f = f.f_back\n"
            "body = json.dumps({'type': 'input_request', 'id': f.f_globals['_current_id'],"
            " 'prompt': 'forged', 'password': False}).encode()\n"
            "os.write(4, b'%d\\n' % len(body) + body)\n"
            "import time\ntime.sleep(5)\n");
    const QList<ApiClient::Event> events =
            client().stream(QStringLiteral("/v1/contexts/%1/executions").arg(id), {{QStringLiteral("code"), code}});
    QVERIFY(!events.isEmpty());
    bool reported = false;
    for (const ApiClient::Event &event : events)
        reported = reported || (event.type == "error"
                                && event.json().value(QStringLiteral("evalue")).toString().contains(
                                        QStringLiteral("takes no input")));
    QVERIFY(reported);
    for (const ApiClient::Event &event : events)
        QVERIFY(event.type != "input_request");
    QCOMPARE(events.last().type, QByteArray("done"));
    QCOMPARE(events.last().json().value(QStringLiteral("status")).toString(), QStringLiteral("error"));
    QCOMPARE(events.last().json().value(QStringLiteral("state_lost")), QJsonValue(true));
}

QTEST_GUILESS_MAIN(tst_InputApi)
#include "tst_inputapi.moc"
