// SPDX-License-Identifier: Apache-2.0
// Code that reads input, run through MCP's Streamable HTTP transport at /mcp and spoken to as raw
// JSON-RPC (Poco::Net) against a real replhost-server: a client that declared the elicitation
// capability gets each question of a run_code as an elicitation/create request (a form of one
// string field, the prompt as its message) on the call's event stream, and its answer is what
// the code reads; declining, cancelling or an error is the end of input; a password is never
// asked that way; clients without the capability, and revisions without elicitation, find the
// end of input at once. Under the stateless revision (2026-07-28) the question is the call's
// answer, an InputRequiredResult with a signed requestState, and the client's retry of the call
// with the answer follows the same run to its end.

#include "apiclient.h"
#include "serverprocess.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {

const QString kPath = QStringLiteral("/mcp");
const Headers kAccept{{"Accept", "application/json, text/event-stream"}};

QJsonObject request(const QJsonValue &id, const QString &method, const QJsonObject &params = {})
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")}, {QStringLiteral("id"), id},
            {QStringLiteral("method"), method}, {QStringLiteral("params"), params}};
}

QJsonObject runCode(const QJsonValue &id, const QString &code)
{
    return request(id, QStringLiteral("tools/call"),
                   {{QStringLiteral("name"), QStringLiteral("run_code")},
                    {QStringLiteral("arguments"),
                     QJsonObject{{QStringLiteral("language"), QStringLiteral("python")}, {QStringLiteral("code"), code}}}});
}

QString stdoutOf(const QJsonObject &response)
{
    return response.value(QLatin1String("result")).toObject().value(QLatin1String("structuredContent")).toObject()
            .value(QLatin1String("stdout")).toString();
}

// A run_code call of the stateless revision, from a client with `capabilities`; `extra` goes into
// its params (requestState, inputResponses).
QJsonObject statelessRunCode(const QJsonValue &id, const QString &code, const QJsonObject &capabilities,
                             const QJsonObject &extra = {})
{
    QJsonObject message = runCode(id, code);
    QJsonObject params = message.value(QLatin1String("params")).toObject();
    for (auto it = extra.begin(); it != extra.end(); ++it)
        params.insert(it.key(), it.value());
    params.insert(QStringLiteral("_meta"),
                  QJsonObject{{QStringLiteral("io.modelcontextprotocol/protocolVersion"), QStringLiteral("2026-07-28")},
                              {QStringLiteral("io.modelcontextprotocol/clientCapabilities"), capabilities},
                              {QStringLiteral("io.modelcontextprotocol/clientInfo"),
                               QJsonObject{{QStringLiteral("name"), QStringLiteral("tst_mcpinput")},
                                           {QStringLiteral("version"), QStringLiteral("1")}}}});
    message.insert(QStringLiteral("params"), params);
    return message;
}

const Headers kStatelessHeaders{{"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2026-07-28"},
                                {"Mcp-Method", "tools/call"},
                                {"Mcp-Name", "run_code"}};
const QJsonObject kElicitation{{QStringLiteral("elicitation"), QJsonObject{}}};

QJsonObject resultOf(const ApiClient::Response &response)
{
    return QJsonDocument::fromJson(response.body).object().value(QLatin1String("result")).toObject();
}

// An ElicitResult that accepts with `value`.
QJsonObject accepted(const QString &value)
{
    return {{QStringLiteral("action"), QStringLiteral("accept")},
            {QStringLiteral("content"), QJsonObject{{QStringLiteral("value"), value}}}};
}

const QString kAskOrEof = QStringLiteral("try:\n    print('got', input('Name? '))\nexcept EOFError:\n    print('eof')");

} // namespace

class tst_McpInput : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void questionIsAnElicitationAndItsAnswerIsRead_data();
    void questionIsAnElicitationAndItsAnswerIsRead();
    void everyQuestionOfARunIsAsked();
    void passwordIsNeverElicited();
    void clientWithoutElicitationFindsTheEndOfInput_data();
    void clientWithoutElicitationFindsTheEndOfInput();
    void clientThatLeavesEndsTheQuestion();
    void statelessQuestionIsTheAnswerAndTheRetryAnswersIt();
    void statelessRetryWithoutTheAnswerIsAskedAgain();
    void statelessRetryWithAForgedStateIsRefused_data();
    void statelessRetryWithAForgedStateIsRefused();
    void statelessClientWithoutElicitationFindsTheEndOfInput();

private:
    // A session of `version` whose client declared `capabilities`; its id.
    QString initialize(const QString &version, const QJsonObject &capabilities) const;
    Headers inSession(const QString &session, const QString &version = QStringLiteral("2025-11-25")) const
    {
        Headers headers = kAccept;
        headers.append({{"Mcp-Session-Id", session.toLatin1()}, {"MCP-Protocol-Version", version.toLatin1()}});
        return headers;
    }
    ApiClient::Response post(const QJsonObject &message, const Headers &headers) const
    {
        return m_client->request("POST", kPath, QJsonDocument(message).toJson(QJsonDocument::Compact), headers);
    }
    // Follows the call's event stream, answering each elicitation/create with the next of
    // `answers` (the result object to send); the questions asked and the call's response.
    struct Followed {
        QList<QJsonObject> questions;
        QJsonObject response;
    };
    Followed follow(ApiClient::Stream &stream, const QString &session, const QList<QJsonObject> &answers,
                    const QString &version = QStringLiteral("2025-11-25")) const;

    ServerProcess m_server;
    std::unique_ptr<ApiClient> m_client;
};

void tst_McpInput::initTestCase()
{
    QVERIFY2(m_server.start(), qPrintable(m_server.error()));
    m_client = std::make_unique<ApiClient>(m_server.port(), m_server.token());
    if (const QString missing = m_client->missingLanguage(QStringLiteral("python")); !missing.isEmpty())
        QSKIP(qPrintable(missing));
}

QString tst_McpInput::initialize(const QString &version, const QJsonObject &capabilities) const
{
    const ApiClient::Response response = post(
            request(0, QStringLiteral("initialize"),
                    {{QStringLiteral("protocolVersion"), version},
                     {QStringLiteral("capabilities"), capabilities},
                     {QStringLiteral("clientInfo"), QJsonObject{{QStringLiteral("name"), QStringLiteral("tst_mcpinput")},
                                                                {QStringLiteral("version"), QStringLiteral("1")}}}}),
            kAccept);
    const QString session = QString::fromLatin1(response.header("Mcp-Session-Id"));
    if (response.status != 200 || session.isEmpty())
        qWarning() << "initialize answered" << response.status << response.body;
    return session;
}

tst_McpInput::Followed tst_McpInput::follow(ApiClient::Stream &stream, const QString &session,
                                            const QList<QJsonObject> &answers, const QString &version) const
{
    Followed followed;
    while (const std::optional<ApiClient::Event> event = stream.next(60000)) {
        const QJsonObject message = event->json();
        if (message.value(QLatin1String("method")) == QLatin1String("elicitation/create")) {
            followed.questions.append(message);
            const QJsonObject answer = answers.value(followed.questions.size() - 1);
            QJsonObject response{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                                 {QStringLiteral("id"), message.value(QLatin1String("id"))}};
            if (answer.contains(QLatin1String("error")))
                response.insert(QStringLiteral("error"), answer.value(QLatin1String("error")));
            else
                response.insert(QStringLiteral("result"), answer);
            const ApiClient::Response accepted = post(response, inSession(session, version));
            if (accepted.status != 202)
                qWarning() << "the answer was answered" << accepted.status << accepted.body;
        } else if (message.contains(QLatin1String("result")) || message.contains(QLatin1String("error"))) {
            followed.response = message;
        }
    }
    return followed;
}

void tst_McpInput::questionIsAnElicitationAndItsAnswerIsRead_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<QJsonObject>("capabilities");
    QTest::addColumn<QJsonObject>("answer");
    QTest::addColumn<QString>("expected");
    const QJsonObject form{{QStringLiteral("elicitation"), QJsonObject{{QStringLiteral("form"), QJsonObject{}}}}};
    const QJsonObject bare{{QStringLiteral("elicitation"), QJsonObject{}}};
    const QJsonObject accept = accepted(QStringLiteral("Ada"));
    QTest::newRow("accepted, 2025-11-25") << "2025-11-25" << form << accept << "got Ada\n";
    QTest::newRow("accepted, 2025-06-18") << "2025-06-18" << bare << accept << "got Ada\n";
    QTest::newRow("accepted, no mode named means form") << "2025-11-25" << bare << accept << "got Ada\n";
    QTest::newRow("declined") << "2025-11-25" << form << QJsonObject{{QStringLiteral("action"), QStringLiteral("decline")}}
                              << "eof\n";
    QTest::newRow("cancelled") << "2025-11-25" << form << QJsonObject{{QStringLiteral("action"), QStringLiteral("cancel")}}
                               << "eof\n";
    QTest::newRow("accepted without the value")
            << "2025-11-25" << form
            << QJsonObject{{QStringLiteral("action"), QStringLiteral("accept")}, {QStringLiteral("content"), QJsonObject{}}}
            << "eof\n";
    QTest::newRow("an error")
            << "2025-11-25" << form
            << QJsonObject{{QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), -32603},
                                                                {QStringLiteral("message"), QStringLiteral("no user")}}}}
            << "eof\n";
}

void tst_McpInput::questionIsAnElicitationAndItsAnswerIsRead()
{
    QFETCH(QString, version);
    QFETCH(QJsonObject, capabilities);
    QFETCH(QJsonObject, answer);
    QFETCH(QString, expected);
    const QString session = initialize(version, capabilities);
    QVERIFY(!session.isEmpty());
    const auto stream = m_client->openStream("POST", kPath, runCode(1, kAskOrEof), inSession(session, version));
    QCOMPARE(stream->status(), 200);
    QVERIFY(stream->contentType().startsWith("text/event-stream"));
    const Followed followed = follow(*stream, session, {answer}, version);
    QCOMPARE(followed.questions.size(), 1);
    const QJsonObject params = followed.questions.first().value(QLatin1String("params")).toObject();
    QCOMPARE(params.value(QLatin1String("message")).toString(), QStringLiteral("Name? "));
    // The form mode is named where the revision has modes.
    QCOMPARE(params.value(QLatin1String("mode")).toString(),
             version == QLatin1String("2025-06-18") ? QString() : QStringLiteral("form"));
    const QJsonObject schema = params.value(QLatin1String("requestedSchema")).toObject();
    QCOMPARE(schema.value(QLatin1String("type")).toString(), QStringLiteral("object"));
    QCOMPARE(schema.value(QLatin1String("properties")).toObject().keys(), QStringList{QStringLiteral("value")});
    QCOMPARE(schema.value(QLatin1String("properties")).toObject().value(QLatin1String("value")).toObject()
                     .value(QLatin1String("type")).toString(),
             QStringLiteral("string"));
    QCOMPARE(followed.response.value(QLatin1String("id")).toInt(), 1);
    QCOMPARE(stdoutOf(followed.response), expected);
}

// Each question of one run is its own elicitation, in order; sys.stdin's reads, which have no
// prompt of their own, are asked with a message that says what the code wants.
void tst_McpInput::everyQuestionOfARunIsAsked()
{
    const QString session = initialize(QStringLiteral("2025-11-25"),
                                       {{QStringLiteral("elicitation"), QJsonObject{}}});
    const auto stream = m_client->openStream(
            "POST", kPath,
            runCode(2, QStringLiteral("import sys\nfirst = input('First? ')\nsecond = sys.stdin.readline()\n"
                                      "print(first, second.strip())")),
            inSession(session));
    const Followed followed = follow(*stream, session, {accepted(QStringLiteral("ada")), accepted(QStringLiteral("bob"))});
    QCOMPARE(followed.questions.size(), 2);
    QCOMPARE(followed.questions.at(0).value(QLatin1String("params")).toObject().value(QLatin1String("message")).toString(),
             QStringLiteral("First? "));
    QVERIFY(!followed.questions.at(1).value(QLatin1String("params")).toObject().value(QLatin1String("message"))
                     .toString().isEmpty());
    QVERIFY(followed.questions.at(0).value(QLatin1String("id")) != followed.questions.at(1).value(QLatin1String("id")));
    QCOMPARE(stdoutOf(followed.response), QStringLiteral("ada bob\n"));
}

void tst_McpInput::passwordIsNeverElicited()
{
    const QString session = initialize(QStringLiteral("2025-11-25"),
                                       {{QStringLiteral("elicitation"), QJsonObject{}}});
    // Nothing is asked, so nothing is streamed: the answer is JSON.
    const ApiClient::Response response = post(
            runCode(3, QStringLiteral("import getpass\ntry:\n    getpass.getpass()\nexcept EOFError:\n    print('eof')")),
            inSession(session));
    QCOMPARE(response.status, 200);
    QVERIFY(response.header("Content-Type").startsWith("application/json"));
    QCOMPARE(stdoutOf(QJsonDocument::fromJson(response.body).object()), QStringLiteral("eof\n"));
}

void tst_McpInput::clientWithoutElicitationFindsTheEndOfInput_data()
{
    QTest::addColumn<QString>("version");
    QTest::addColumn<QJsonObject>("capabilities");
    QTest::newRow("no capability") << "2025-11-25" << QJsonObject{};
    QTest::newRow("only the URL mode")
            << "2025-11-25"
            << QJsonObject{{QStringLiteral("elicitation"), QJsonObject{{QStringLiteral("url"), QJsonObject{}}}}};
    QTest::newRow("a revision without elicitation")
            << "2025-03-26" << QJsonObject{{QStringLiteral("elicitation"), QJsonObject{}}};
}

void tst_McpInput::clientWithoutElicitationFindsTheEndOfInput()
{
    QFETCH(QString, version);
    QFETCH(QJsonObject, capabilities);
    const QString session = initialize(version, capabilities);
    QVERIFY(!session.isEmpty());
    const ApiClient::Response response = post(runCode(4, kAskOrEof), inSession(session, version));
    QCOMPARE(response.status, 200);
    // Nothing to stream: the answer is JSON.
    QVERIFY(response.header("Content-Type").startsWith("application/json"));
    // The prompt is what input() writes when it reads the worker's own (empty) standard input.
    QCOMPARE(stdoutOf(QJsonDocument::fromJson(response.body).object()), QStringLiteral("Name? eof\n"));
}

// A client that closes the call's connection with a question open can answer no more: the run
// finds the end of input and ends, and stays in the history.
void tst_McpInput::clientThatLeavesEndsTheQuestion()
{
    const QString session = initialize(QStringLiteral("2025-11-25"),
                                       {{QStringLiteral("elicitation"), QJsonObject{}}});
    const QString marker = QStringLiteral("left-%1").arg(QDateTime::currentMSecsSinceEpoch());
    {
        const auto stream = m_client->openStream(
                "POST", kPath,
                runCode(5, kAskOrEof + QStringLiteral("\nprint('%1')").arg(marker)),
                inSession(session));
        const std::optional<ApiClient::Event> question = stream->next(60000);
        QVERIFY(question);
        QCOMPARE(question->json().value(QLatin1String("method")).toString(), QStringLiteral("elicitation/create"));
    }  // the connection closes here
    // The python default context's newest run ends with the end of input.
    QJsonObject last;
    QVERIFY(QTest::qWaitFor(
            [&] {
                const QJsonArray contexts = m_client->get(QStringLiteral("/v1/contexts?language=python")).array();
                for (const QJsonValue &context : contexts) {
                    const QJsonArray runs =
                            m_client->get(QStringLiteral("/v1/contexts/%1/executions?limit=1")
                                                  .arg(context.toObject().value(QLatin1String("id")).toString()))
                                    .object().value(QLatin1String("executions")).toArray();
                    if (!runs.isEmpty() && runs.first().toObject().value(QLatin1String("code")).toString().contains(marker))
                        last = runs.first().toObject();
                }
                return last.value(QLatin1String("status")) == QLatin1String("ok");
            },
            60000));
    const QJsonObject document =
            m_client->get(QStringLiteral("/v1/executions/") + last.value(QLatin1String("id")).toString()).object();
    QCOMPARE(document.value(QLatin1String("stdout")).toString(), QStringLiteral("eof\n%1\n").arg(marker));
}

void tst_McpInput::statelessQuestionIsTheAnswerAndTheRetryAnswersIt()
{
    const QString code = QStringLiteral("import sys\nprint('before', flush=True)\nfirst = input('First? ')\n"
                                        "second = sys.stdin.readline().strip()\nprint(first, second)");
    const ApiClient::Response asked = post(statelessRunCode(1, code, kElicitation), kStatelessHeaders);
    QCOMPARE(asked.status, 200);
    QJsonObject result = resultOf(asked);
    QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("input_required"));
    const QJsonObject question = result.value(QLatin1String("inputRequests")).toObject().value(QLatin1String("input")).toObject();
    QCOMPARE(question.value(QLatin1String("method")).toString(), QStringLiteral("elicitation/create"));
    const QJsonObject params = question.value(QLatin1String("params")).toObject();
    QCOMPARE(params.value(QLatin1String("message")).toString(), QStringLiteral("First? "));
    QCOMPARE(params.value(QLatin1String("mode")).toString(), QStringLiteral("form"));
    QCOMPARE(params.value(QLatin1String("requestedSchema")).toObject().value(QLatin1String("properties")).toObject()
                     .value(QLatin1String("value")).toObject().value(QLatin1String("type")).toString(),
             QStringLiteral("string"));
    QString state = result.value(QLatin1String("requestState")).toString();
    QVERIFY(!state.isEmpty());

    // Each retry answers the question it was given; the second question is a second round.
    const auto accept = [](const QString &value) { return QJsonObject{{QStringLiteral("input"), accepted(value)}}; };
    const ApiClient::Response second = post(
            statelessRunCode(2, code, kElicitation,
                             {{QStringLiteral("requestState"), state}, {QStringLiteral("inputResponses"), accept("ada")}}),
            kStatelessHeaders);
    result = resultOf(second);
    QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("input_required"));
    state = result.value(QLatin1String("requestState")).toString();
    const ApiClient::Response done = post(
            statelessRunCode(3, code, kElicitation,
                             {{QStringLiteral("requestState"), state}, {QStringLiteral("inputResponses"), accept("bob")}}),
            kStatelessHeaders);
    result = resultOf(done);
    QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));
    QCOMPARE(result.value(QLatin1String("isError")).toBool(), false);
    // The whole run: what it printed before its first question too.
    QCOMPARE(result.value(QLatin1String("structuredContent")).toObject().value(QLatin1String("stdout")).toString(),
             QStringLiteral("before\nada bob\n"));
}

void tst_McpInput::statelessRetryWithoutTheAnswerIsAskedAgain()
{
    const ApiClient::Response asked = post(statelessRunCode(1, kAskOrEof, kElicitation), kStatelessHeaders);
    const QString state = resultOf(asked).value(QLatin1String("requestState")).toString();
    QVERIFY(!state.isEmpty());
    const ApiClient::Response again = post(
            statelessRunCode(2, kAskOrEof, kElicitation, {{QStringLiteral("requestState"), state}}), kStatelessHeaders);
    const QJsonObject result = resultOf(again);
    QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("input_required"));
    QCOMPARE(result.value(QLatin1String("inputRequests")).toObject().value(QLatin1String("input")).toObject()
                     .value(QLatin1String("params")).toObject().value(QLatin1String("message")).toString(),
             QStringLiteral("Name? "));
    // Declined this time: the end of input.
    const ApiClient::Response done = post(
            statelessRunCode(3, kAskOrEof, kElicitation,
                             {{QStringLiteral("requestState"), result.value(QLatin1String("requestState"))},
                              {QStringLiteral("inputResponses"),
                               QJsonObject{{QStringLiteral("input"), QJsonObject{{QStringLiteral("action"), QStringLiteral("decline")}}}}}}),
            kStatelessHeaders);
    QCOMPARE(resultOf(done).value(QLatin1String("structuredContent")).toObject().value(QLatin1String("stdout")).toString(),
             QStringLiteral("eof\n"));
}

void tst_McpInput::statelessRetryWithAForgedStateIsRefused_data()
{
    QTest::addColumn<QString>("change");
    QTest::newRow("made up") << "made up";
    QTest::newRow("its signature changed") << "signature";
    QTest::newRow("its execution changed") << "execution";
}

void tst_McpInput::statelessRetryWithAForgedStateIsRefused()
{
    QFETCH(QString, change);
    const ApiClient::Response asked = post(statelessRunCode(1, kAskOrEof, kElicitation), kStatelessHeaders);
    const QString state = resultOf(asked).value(QLatin1String("requestState")).toString();
    QVERIFY(!state.isEmpty());
    QString forged = QStringLiteral("v1.bm8.bm8");
    if (change == QLatin1String("signature"))
        forged = state.left(state.size() - 2) + (state.endsWith(QLatin1String("AA")) ? QStringLiteral("BB") : QStringLiteral("AA"));
    else if (change == QLatin1String("execution"))
        forged = QStringLiteral("v1.") + QString::fromLatin1(QByteArray("another").toBase64(QByteArray::Base64UrlEncoding))
                + state.mid(state.lastIndexOf(QLatin1Char('.')));
    const ApiClient::Response refused = post(
            statelessRunCode(2, kAskOrEof, kElicitation,
                             {{QStringLiteral("requestState"), forged},
                              {QStringLiteral("inputResponses"),
                               QJsonObject{{QStringLiteral("input"), accepted(QStringLiteral("x"))}}}}),
            kStatelessHeaders);
    QCOMPARE(resultOf(refused).value(QLatin1String("isError")).toBool(), true);
    // The real question still waits, and takes its answer.
    const ApiClient::Response done = post(
            statelessRunCode(3, kAskOrEof, kElicitation,
                             {{QStringLiteral("requestState"), state},
                              {QStringLiteral("inputResponses"),
                               QJsonObject{{QStringLiteral("input"), accepted(QStringLiteral("Ada"))}}}}),
            kStatelessHeaders);
    QCOMPARE(resultOf(done).value(QLatin1String("structuredContent")).toObject().value(QLatin1String("stdout")).toString(),
             QStringLiteral("got Ada\n"));
}

void tst_McpInput::statelessClientWithoutElicitationFindsTheEndOfInput()
{
    const ApiClient::Response response = post(statelessRunCode(1, kAskOrEof, {}), kStatelessHeaders);
    const QJsonObject result = resultOf(response);
    QCOMPARE(result.value(QLatin1String("resultType")).toString(), QStringLiteral("complete"));
    QCOMPARE(result.value(QLatin1String("structuredContent")).toObject().value(QLatin1String("stdout")).toString(),
             QStringLiteral("Name? eof\n"));
}

QTEST_GUILESS_MAIN(tst_McpInput)
#include "tst_mcpinput.moc"
