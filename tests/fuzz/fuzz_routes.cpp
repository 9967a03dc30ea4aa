// SPDX-License-Identifier: Apache-2.0
// The JSON request bodies of every route, through the whole server: an Engine on a temporary
// data directory whose only language is the fake one of fixtures/ (no interpreter runs), an
// ApiServer listening on 127.0.0.1, and a client on a socket in the same thread. Each input is
// one request, sent as a client would and routed as the server routes it (connection guard,
// head check, security gate, Qt HttpServer, Router, the route's handler):
//
//   line 1: "METHOD /pattern[?query]", a route as Router::routes() names it ("POST
//           /v1/contexts/{id}/executions?wait=true"); a line that names no route picks one
//   rest:   the body, sent as it is with its Content-Length
//
// Every route with a body is a candidate: every POST, PUT and PATCH the router holds, so a new
// route is fuzzed as soon as it is registered. A body that would run a shell command or make a
// workspace of a host directory is not sent (see actsOutside). The placeholders are filled with
// a context, an execution and a sandbox made when the target starts; an input answer goes to a
// run started for it that waits for input, and which is interrupted after the answer.
//
// Besides the sanitizers it checks the answer against the server's contract, and aborts when
// it is broken: an answer within the time limit; a well-formed status line and framing; a Date;
// a JSON {code, message} body for every 4xx and 5xx; no 5xx but 501 and 503 (which a
// well-formed request may get: a language or a sandbox this host cannot provide), so a malformed
// body is never a server error. It also leaves some streams in the middle (after a number of
// bytes the input decides, by FIN or by reset) while the run goes on, so that a client that
// leaves mid-stream is tried under AddressSanitizer on every run.
#include "core/engine.h"
#include "http/apiserver.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include <sys/socket.h>

using namespace replhost;

namespace {

[[noreturn]] void broken(const char *what, const QByteArray &request, const QByteArray &answer)
{
    std::fprintf(stderr, "fuzz_routes: %s\n--- request\n%s\n--- answer\n%s\n", what,
                 request.left(2048).constData(), answer.left(4096).constData());
    std::abort();
}

struct Answer {
    int status = 0;
    QByteArray head;   // status line and fields, lower-cased
    QByteArray body;   // de-chunked
    QByteArray raw;    // everything received
};

// A keep-alive connection to the server, read in the server's own thread by running its event
// loop until an answer is complete.
class Client {
public:
    explicit Client(quint16 port) : m_port(port) {}

    // Sends `request` and returns its answer; `leaveAfter` >= 0 leaves once that many bytes of
    // a streamed body have arrived (a reset when `reset`), and returns nothing.
    std::optional<Answer> exchange(const QByteArray &request, qsizetype leaveAfter = -1,
                                   bool reset = false)
    {
        if (!m_socket || m_socket->state() != QAbstractSocket::ConnectedState) {
            m_socket = std::make_unique<QTcpSocket>();
            m_socket->connectToHost(QStringLiteral("127.0.0.1"), m_port);
            if (!pumpUntil([this] { return m_socket->state() == QAbstractSocket::ConnectedState; }))
                broken("cannot connect to the server", request, {});
        }
        m_socket->write(request);
        Answer answer;
        bool complete = false;
        bool left = false;
        const bool ok = pumpUntil([&] {
            answer.raw += m_socket->readAll();
            complete = parse(answer);
            if (!complete && leaveAfter >= 0 && answer.body.size() >= leaveAfter
                && answer.head.contains("transfer-encoding: chunked")) {
                left = true;
                return true;
            }
            return complete || m_socket->state() != QAbstractSocket::ConnectedState;
        });
        if (left) {
            if (reset) {
                // A linger time of 0: the close is a reset, not a FIN.
                const linger now{1, 0};
                ::setsockopt(int(m_socket->socketDescriptor()), SOL_SOCKET, SO_LINGER, &now, sizeof now);
                m_socket->abort();
            } else {
                m_socket->disconnectFromHost();
            }
            m_socket.reset();
            settle();
            return std::nullopt;
        }
        if (!ok)
            broken("no answer within 5 s", request, answer.raw);
        if (!complete)
            broken("the connection closed before the answer was complete", request, answer.raw);
        if (answer.head.contains("\r\nconnection: close"))
            m_socket.reset();
        return answer;
    }

    // Lets the server and the fake language run what is due (a stream's next events after its
    // client left, a closed socket's clean-up).
    static void settle()
    {
        for (int i = 0; i < 16; ++i)
            QCoreApplication::processEvents(QEventLoop::AllEvents);
    }

private:
    template <typename Done>
    static bool pumpUntil(Done done)
    {
        const QDeadlineTimer deadline(5000);
        QTimer wake;  // the loop wakes up even when no socket event comes
        wake.start(50);
        while (!done()) {
            if (deadline.hasExpired())
                return false;
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
        }
        return true;
    }

    // True when `answer.raw` holds a complete answer (status line, fields, framed body): then
    // status, head and body are set. Aborts on an answer no client could read.
    static bool parse(Answer &answer)
    {
        const QByteArray &raw = answer.raw;
        const qsizetype headEnd = raw.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return false;
        answer.head = raw.left(headEnd + 2).toLower();
        static const QRegularExpression statusLine(QStringLiteral("^http/1\\.1 ([1-5][0-9][0-9]) [^\\r\\n]*\\r\\n"));
        const auto match = statusLine.match(QString::fromLatin1(answer.head));
        if (!match.hasMatch())
            broken("malformed status line", {}, raw);
        answer.status = match.captured(1).toInt();
        const QByteArray rest = raw.mid(headEnd + 4);
        if (answer.head.contains("\r\ntransfer-encoding: chunked\r\n")) {
            answer.body.clear();
            qsizetype at = 0;
            for (;;) {
                const qsizetype lineEnd = rest.indexOf("\r\n", at);
                if (lineEnd < 0)
                    return false;
                bool ok = false;
                const qsizetype size = rest.mid(at, lineEnd - at).toLongLong(&ok, 16);
                if (!ok || size < 0)
                    broken("malformed chunk size", {}, raw);
                if (rest.size() < lineEnd + 2 + size + 2)
                    return false;
                if (size == 0)
                    return true;
                answer.body += rest.mid(lineEnd + 2, size);
                at = lineEnd + 2 + size + 2;
            }
        }
        static const QRegularExpression length(QStringLiteral("\\r\\ncontent-length: *([0-9]+)\\r\\n"));
        const auto lengthMatch = length.match(QString::fromLatin1(answer.head));
        const qsizetype size = lengthMatch.hasMatch() ? lengthMatch.captured(1).toLongLong() : 0;
        if (!lengthMatch.hasMatch() && answer.status != 204 && answer.status != 304)
            broken("an answer with neither Content-Length nor chunked framing", {}, raw);
        if (rest.size() < size)
            return false;
        answer.body = rest.left(size);
        return true;
    }

    quint16 m_port;
    std::unique_ptr<QTcpSocket> m_socket;
};

// The server, its engine and the objects the routes' placeholders name.
class Harness {
public:
    Harness()
    {
        if (!m_dataDir.isValid())
            std::abort();
        core::EngineConfig config;
        config.dataDir = m_dataDir.path();
        config.pluginPaths = {QStringLiteral(REPLHOST_FUZZ_PLUGIN_DIR)};
        config.warmPoolSize = 0;
        auto engine = core::Engine::open(config);
        if (!engine) {
            std::fprintf(stderr, "fuzz_routes: %s\n", qPrintable(engine.error().message));
            std::abort();
        }
        m_engine = std::move(*engine);
        http::ApiServerConfig serverConfig;
        serverConfig.token = m_token;
        serverConfig.maxStreamsPerClient = 0;
        m_server = std::make_unique<http::ApiServer>(*m_engine, serverConfig);
        if (!m_server->listen())
            std::abort();
        m_client = std::make_unique<Client>(m_server->port());

        for (const QString &route : m_server->router().routes()) {
            const QString method = route.section(QLatin1Char(' '), 0, 0);
            if (method == QLatin1String("POST") || method == QLatin1String("PUT")
                || method == QLatin1String("PATCH"))
                m_routes.append(route);
        }
        makeFixtures();
    }

    ~Harness()
    {
        m_client.reset();
        m_server.reset();
        m_engine.reset();
    }

    void run(const QByteArray &input)
    {
        if (m_routes.isEmpty())
            return;
        const qsizetype newline = input.indexOf('\n');
        const QByteArray line = newline < 0 ? input : input.left(newline);
        const QByteArray body = newline < 0 ? QByteArray() : input.mid(newline + 1);
        const qsizetype question = line.indexOf('?');
        const QString route = QString::fromLatin1(question < 0 ? line : line.left(question));
        const QByteArray query = question < 0 ? QByteArray() : line.mid(question);
        const QString chosen = m_routes.contains(route)
                ? route
                : m_routes.at(qsizetype(qHash(line) % size_t(m_routes.size())));
        if (actsOutside(QJsonDocument::fromJson(body)))
            return;
        const QString method = chosen.section(QLatin1Char(' '), 0, 0);
        // An answer goes to a run that waits for one, so that the body reaches the session.
        const bool answering = chosen == QLatin1String("POST /v1/executions/{eid}/input");
        const QString waiting = answering ? startWaitingRun() : QString();
        QString path = fill(chosen.section(QLatin1Char(' '), 1));
        if (answering)
            path.replace(m_execution, waiting);

        QByteArray request = method.toLatin1() + ' ' + path.toUtf8() + sanitisedQuery(query)
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + m_token
                + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
                  "\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        // One request in four leaves its stream (if it gets one) after a number of bytes.
        const size_t hash = qHash(body);
        const qsizetype leaveAfter = hash % 4 == 0 ? qsizetype((hash >> 2) % 400) : -1;
        const std::optional<Answer> answer = m_client->exchange(request, leaveAfter, (hash >> 12) & 1);
        if (answer)
            check(request, *answer);
        Client::settle();
        if (answering)
            stopWaitingRun(waiting);
    }

private:
    // A body the server would act on outside its data directory, which is not sent: a string
    // "command" or "cmd" at any depth runs a shell command (the command routes, a tool call),
    // and "directory" makes a workspace of a directory of this machine. The server parses a
    // body with the same QJsonDocument, so it would read these fields just as they are read
    // here; every malformed body of those routes is still sent.
    static bool actsOutside(const QJsonValue &value)
    {
        if (value.isArray()) {
            for (const QJsonValue item : value.toArray()) {
                if (actsOutside(item))
                    return true;
            }
        } else if (value.isObject()) {
            const QJsonObject object = value.toObject();
            for (auto it = object.begin(); it != object.end(); ++it) {
                if ((it.key() == QLatin1String("command") || it.key() == QLatin1String("cmd")
                     || it.key() == QLatin1String("directory"))
                    && it.value().isString())
                    return true;
                if (actsOutside(it.value()))
                    return true;
            }
        }
        return false;
    }
    static bool actsOutside(const QJsonDocument &document)
    {
        return actsOutside(document.isArray() ? QJsonValue(document.array())
                                              : QJsonValue(document.object()));
    }

    static void check(const QByteArray &request, const Answer &answer)
    {
        if (!answer.head.contains("\r\ndate: "))
            broken("an answer without Date", request, answer.raw);
        if (answer.status >= 500 && answer.status != 501 && answer.status != 503)
            broken("a server error", request, answer.raw);
        const bool json = answer.head.contains("\r\ncontent-type: application/json");
        if (answer.status >= 400) {
            if (!json)
                broken("an error that is not JSON", request, answer.raw);
            // {code, message}, or on the MCP endpoint the JSON-RPC error its protocol defines.
            const QJsonObject body = QJsonDocument::fromJson(answer.body).object();
            const QJsonObject rpc = body.value(QStringLiteral("error")).toObject();
            const bool replhostError = body.value(QStringLiteral("code")).isString()
                    && !body.value(QStringLiteral("code")).toString().isEmpty()
                    && body.value(QStringLiteral("message")).isString();
            const bool rpcError = body.value(QStringLiteral("jsonrpc")) == QLatin1String("2.0")
                    && rpc.value(QStringLiteral("code")).isDouble()
                    && rpc.value(QStringLiteral("message")).isString();
            if (!replhostError && !rpcError)
                broken("an error body that is not {code, message}", request, answer.raw);
        } else if (json && !answer.body.isEmpty()
                   // Any JSON value (E2B answers some routes with null), which QJsonDocument
                   // reads only inside an array.
                   && QJsonDocument::fromJson('[' + answer.body + ']').isNull()) {
            broken("a JSON answer that does not parse", request, answer.raw);
        }
    }

    // A query as a client could send it: the head check refuses control characters and spaces
    // in a target (tested by the headcheck target), so they are percent-encoded here.
    static QByteArray sanitisedQuery(const QByteArray &query)
    {
        QByteArray out;
        for (const char c : query) {
            if (uchar(c) <= 0x20 || uchar(c) >= 0x7f || c == '#')
                out += '%' + QByteArray::number(uchar(c), 16).rightJustified(2, '0');
            else
                out += c;
        }
        return out;
    }

    QString fill(QString pattern) const
    {
        const bool lifecycle = pattern.startsWith(QLatin1String("/opensandbox/v1/sandboxes"));
        const bool execd = pattern.startsWith(QLatin1String("/opensandbox/execd"));
        pattern.replace(QLatin1String("{token}"), QString::fromLatin1(m_token));
        pattern.replace(QLatin1String("{ws}"), execd ? m_sandbox : QStringLiteral("default"));
        pattern.replace(QLatin1String("{id}"), lifecycle ? m_sandbox : execd ? m_sandboxContext : m_context);
        pattern.replace(QLatin1String("{eid}"), m_execution);
        pattern.replace(QLatin1String("{port}"), QStringLiteral("8080"));
        static const QRegularExpression other(QStringLiteral("\\{[^}]*\\}"));
        pattern.replace(other, QStringLiteral("none"));
        return pattern;
    }

    // A field of the JSON answer to a request made with a body that must work.
    QString make(const QByteArray &method, const QString &path, const QByteArray &body,
                 const QString &field)
    {
        const QByteArray request = method + ' ' + path.toUtf8()
                + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + m_token
                + "\r\nContent-Type: application/json\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        const std::optional<Answer> answer = m_client->exchange(request);
        const QString value = QJsonDocument::fromJson(answer->body).object().value(field).toString();
        if (answer->status >= 300 || value.isEmpty())
            broken("a fixture cannot be made", request, answer->raw);
        return value;
    }

    // A run of the input context that waits for its first answer; two more questions follow
    // (one a password), so that an answer is never the run's last event.
    QString startWaitingRun()
    {
        // Through the engine: over HTTP the run would be a stream this client has to read.
        core::RunRequest request;
        request.contextId = m_inputContext;
        request.code = QStringLiteral("input\npassword\ninput");
        request.input = true;
        const Result<core::ExecutionPtr> run = m_engine->contexts().run(request);
        if (!run)
            broken("a run that asks for input cannot start", run.error().message.toUtf8(), {});
        for (int turn = 0; turn < 64; ++turn) {
            if ((*run)->isWaitingForInput())
                return (*run)->id();
            Client::settle();
        }
        broken("a run that asks for input never waits", {}, {});
    }

    // Ends that run whatever the answer did, so that the input context is idle for the next one.
    void stopWaitingRun(const QString &id)
    {
        (void)m_engine->contexts().interruptExecution(id);
        for (int turn = 0; turn < 64; ++turn) {
            const auto execution = m_engine->contexts().execution(id);
            if (!execution || (*execution)->isFinished())
                return;
            Client::settle();
        }
        broken("an interrupted run waiting for input never ends", {}, {});
    }

    void makeFixtures()
    {
        m_context = make("POST", QStringLiteral("/v1/contexts"), R"({"language":"python"})",
                         QStringLiteral("id"));
        m_inputContext = make("POST", QStringLiteral("/v1/contexts"), R"({"language":"python"})",
                              QStringLiteral("id"));
        m_execution = make("POST", QStringLiteral("/v1/contexts/%1/executions?wait=true").arg(m_context),
                           R"({"code":"1"})", QStringLiteral("id"));
        m_sandbox = make("POST", QStringLiteral("/opensandbox/v1/sandboxes"),
                         R"({"image":{"uri":"python:3.11"},"entrypoint":["python"],"timeout":3600,)"
                         R"("resourceLimits":{"memory":"1Gi"}})",
                         QStringLiteral("id"));
        m_sandboxContext = make("POST", QStringLiteral("/opensandbox/execd/%1/code/context").arg(m_sandbox),
                                R"({"language":"python"})", QStringLiteral("id"));
    }

    QTemporaryDir m_dataDir;
    const QByteArray m_token = "fuzz-token-0123456789";
    std::unique_ptr<core::Engine> m_engine;
    std::unique_ptr<http::ApiServer> m_server;
    std::unique_ptr<Client> m_client;
    QStringList m_routes;
    QString m_context, m_inputContext, m_execution, m_sandbox, m_sandboxContext;
};

std::unique_ptr<Harness> harness;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    static int argc = 1;
    static char name[] = "fuzz_routes";
    static char *argv[] = {name, nullptr};
    qputenv("REPLHOST_PLUGIN_PATH", "");
    // A line per connection and request would be most of the run's time; warnings stay.
    qputenv("QT_LOGGING_RULES", "replhost.*.info=false");
    static QCoreApplication app(argc, argv);
    harness = std::make_unique<Harness>();
    std::atexit([] { harness.reset(); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    // Workspaces, sandboxes and contexts that inputs made pile up: a fresh server now and then
    // keeps every input as fast as the first.
    static int runs = 0;
    if (++runs % 4096 == 0) {
        harness.reset();
        harness = std::make_unique<Harness>();
    }
    harness->run(QByteArray(reinterpret_cast<const char *>(data), qsizetype(size)));
    return 0;
}
