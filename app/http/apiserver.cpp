// SPDX-License-Identifier: Apache-2.0
#include "apiserver.h"

#include "commandsapi.h"
#include "connectionguard.h"
#include "e2bapi.h"
#include "errorstatus.h"
#include "filesapi.h"
#include "guardedresponder.h"
#include "guardedtcpserver.h"
#include "httpexchange.h"
#include "httpmetrics.h"
#include "httpserverbridge.h"
#include "mcpendpoint.h"
#include "nativeapi.h"
#include "opensandboxapi.h"
#include "opensandboxexecdapi.h"
#include "workspacearchiveapi.h"
#include "workspaceroute.h"

#include "core/engine.h"
#include "core/prometheuswriter.h"

#include <QDeadlineTimer>
#include <QEventLoop>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTcpSocket>
#include <QTimer>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcAccess, "replhost.http.access", QtWarningMsg)

namespace {

// The request fields a browser may send to the routes (CORS preflight): the credentials the
// SecurityGate reads (Authorization, and the OpenSandbox clients' own headers), the body's type,
// the resumption of an event stream, a range of a download, MCP's session and revision, and the
// workspace a request is for (WorkspaceRoute).
constexpr const char *kCorsRequestHeaders =
        "Authorization, Content-Type, Last-Event-ID, Range, OPEN-SANDBOX-API-KEY, "
        "X-EXECD-ACCESS-TOKEN, Mcp-Session-Id, MCP-Protocol-Version, X-Request-ID, "
        "X-Replhost-Workspace";

} // namespace

ApiServer::ApiServer(core::Engine &engine, ApiServerConfig config, QObject *parent)
    : QObject(parent),
      m_engine(engine),
      m_config(std::move(config)),
      m_gate(m_config.token, m_config.allowedHosts, m_config.allowedOrigins),
      m_streams(m_config.maxStreamsPerClient),
      m_native(std::make_unique<NativeApi>(engine, m_config.sseKeepAliveMs, m_streams)),
      m_files(std::make_unique<FilesApi>(engine)),
      m_commands(std::make_unique<CommandsApi>(engine, m_config.sseKeepAliveMs, m_streams)),
      m_e2b(std::make_unique<E2bApi>(engine, m_streams, m_config.e2bWorkspace)),
      m_httpMetrics(std::make_shared<HttpMetrics>())
{
    if (m_config.e2bOnly) {
        // No token protects this listener, so it serves nothing but the E2B routes.
        m_e2b->registerRoutes(m_router, QString());
        m_e2b->registerRoutes(m_router, QStringLiteral("/workspaces/{ws}"));
        return;
    }
    m_router.add("GET", QStringLiteral("/healthz"),
                 [](const std::shared_ptr<HttpExchange> &exchange) {
                     exchange->sendJson(200, QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")}});
                 },
                 Router::Access::Public);
    m_router.add("GET", QStringLiteral("/metrics"),
                 [this](const std::shared_ptr<HttpExchange> &exchange) { metrics(exchange); });
    m_native->registerRoutes(m_router);
    m_files->registerRoutes(m_router);
    m_commands->registerRoutes(m_router);
    m_archives = std::make_unique<WorkspaceArchiveApi>(engine, m_config.limits.maxBodyBytes);
    m_archives->registerRoutes(m_router);
    m_gate.acceptTokenInPath(E2bApi::capabilityPrefix());
    m_e2b->registerRoutes(m_router, E2bApi::capabilityPrefix() + QStringLiteral("/{token}"));
    m_e2b->registerRoutes(m_router, E2bApi::capabilityPrefix() + QStringLiteral("/{token}/workspaces/{ws}"));
    m_openSandbox = std::make_unique<OpenSandboxApi>(engine, m_config.token, m_config.sseKeepAliveMs, m_streams);
    m_openSandbox->registerRoutes(m_router, m_gate);
    m_mcp = std::make_unique<McpEndpoint>(engine, m_config.sseKeepAliveMs, m_streams);
    m_mcp->registerRoutes(m_router);
}

ApiServer::~ApiServer()
{
    delete m_http;
}

Result<void> ApiServer::listen()
{
    if (m_config.e2bOnly && !m_config.address.isLoopback())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("the E2B listener has no token, so it listens on a loopback "
                                        "address only, not %1").arg(m_config.address.toString()));
    auto *http = new HttpServerBridge(
            [this](ConnectionGuard &guard, const QHttpServerRequest &request,
                   QHttpServerResponder &&responder) {
                dispatch(guard, request, std::move(responder));
            },
            this);
    auto *tcp = new GuardedTcpServer(
            m_config.limits,
            [this](const RequestHead &head, const QHostAddress &peer) { return admit(head, peer); },
            http);
    if (!tcp->listen(m_config.address, m_config.port)) {
        const QString why = tcp->errorString();
        delete tcp;
        delete http;
        return makeError(QStringLiteral("io"),
                         QStringLiteral("cannot listen on %1 port %2: %3")
                                 .arg(m_config.address.toString())
                                 .arg(m_config.port)
                                 .arg(why));
    }
    if (!m_config.instanceId.isEmpty())
        tcp->setAnswerFields({{"X-Replhost-Instance", m_config.instanceId}});
    http->bind(tcp);
    delete m_http;
    m_http = http;
    m_tcp = tcp;
    m_gate.setEndpoint(tcp->serverAddress(), tcp->serverPort());
    return {};
}

void ApiServer::stopListening()
{
    if (m_tcp)
        m_tcp->close();
}

void ApiServer::flush(int timeoutMs)
{
    if (!m_tcp)
        return;
    const QDeadlineTimer deadline(timeoutMs);
    QEventLoop loop;
    QTimer tick;  // wakes the loop when no socket event comes
    tick.start(20);
    while (!deadline.hasExpired()) {
        bool pending = false;
        for (QTcpSocket *socket : m_tcp->findChildren<QTcpSocket *>()) {
            if (socket->state() == QAbstractSocket::ConnectedState && socket->bytesToWrite() > 0)
                pending = true;
        }
        if (!pending)
            return;
        loop.processEvents(QEventLoop::ExcludeUserInputEvents | QEventLoop::WaitForMoreEvents);
    }
}

quint16 ApiServer::port() const
{
    return m_tcp ? m_tcp->serverPort() : 0;
}

QHostAddress ApiServer::address() const
{
    return m_tcp ? m_tcp->serverAddress() : QHostAddress();
}

QString ApiServer::baseUrl() const
{
    QHostAddress host = address();
    if (host == QHostAddress::Any || host == QHostAddress::AnyIPv4 || host.isNull())
        host = QHostAddress(QHostAddress::LocalHost);
    else if (host == QHostAddress::AnyIPv6)
        host = QHostAddress(QHostAddress::LocalHostIPv6);
    const QString name = host.protocol() == QAbstractSocket::IPv6Protocol
            ? QLatin1Char('[') + host.toString() + QLatin1Char(']')
            : host.toString();
    return QStringLiteral("http://%1:%2").arg(name).arg(port());
}

std::optional<HeadRefusal> ApiServer::admit(const RequestHead &head, const QHostAddress &peer)
{
    HttpRequest request = HttpRequest::fromHead(head, {}, peer);
    m_gate.takePathToken(request);
    OpenSandboxExecdApi::servePathOfProxy(request.path);
    const Router::Match match = m_router.match(request.method, request.path);
    std::optional<HeadRefusal> refusal = gateCheck(request, match);
    if (refusal) {
        // Answered by the guard, not through an exchange: the echo is added here.
        if (const QByteArray id = HttpResponse::requestId(head.fields); !id.isEmpty())
            refusal->headers.emplaceBack("X-Request-ID", id);
        qCInfo(lcAccess).noquote() << request.method << request.path << "refused"
                                   << refusal->status;
        m_httpMetrics->record(match.kind == Router::Match::Kind::Found ? match.route : QString(),
                              refusal->status);
    }
    return refusal;
}

std::optional<HeadRefusal> ApiServer::gateCheck(const HttpRequest &request,
                                                const Router::Match &match) const
{
    const auto refusal = [](const Error &error) {
        HeadRefusal out{ErrorStatus::forCode(error.code), error.code, error.message, {}};
        if (out.status == 401)
            out.headers.emplaceBack("WWW-Authenticate", "Bearer");
        return out;
    };
    if (const Result<void> host = m_gate.checkHost(request.header("host")); !host)
        return refusal(host.error());
    const QByteArray origin = request.header("origin");
    if (const Result<void> allowed = m_gate.checkOrigin(origin); !allowed)
        return refusal(allowed.error());
    // A browser's preflight carries no credentials; answering it reveals nothing.
    if (!origin.isEmpty() && request.method == "OPTIONS")
        return std::nullopt;
    if (!m_config.e2bOnly
        && (match.kind != Router::Match::Kind::Found || match.access != Router::Access::Public)) {
        // Authenticate before saying whether a route exists.
        if (const Result<void> token = m_gate.checkToken(request); !token) {
            HeadRefusal out = refusal(token.error());
            if (!origin.isEmpty()) {
                out.headers.emplaceBack("Access-Control-Allow-Origin", origin);
                out.headers.emplaceBack("Vary", "Origin");
            }
            return out;
        }
    }
    return std::nullopt;
}

void ApiServer::dispatch(ConnectionGuard &guard, const QHttpServerRequest &qtRequest,
                         QHttpServerResponder &&responder)
{
    RequestHead head = guard.beginAnswer();
    // The fields and the body as Qt parsed them; the method and the target as the head check
    // read them (see HttpRequest).
    head.fields = qtRequest.headers();
    QByteArray body = qtRequest.body();
    const bool http11 = head.httpMinor >= 1;
    // A chunked body is counted as it arrives, framing included; decoded, it is measured here.
    const bool tooLarge = head.chunked && body.size() > m_config.limits.maxBodyBytes;
    const bool closeAfter = head.wantsClose || tooLarge;
    QTcpSocket *socket = guard.socket();
    auto exchange = std::make_shared<HttpExchange>(
            GuardedResponder(std::move(responder), socket),
            HttpRequest::fromHead(std::move(head), std::move(body), socket->peerAddress()),
            closeAfter, &guard);
    if (!m_config.instanceId.isEmpty())
        exchange->addHeader("X-Replhost-Instance", m_config.instanceId);
    // Before anything reads the path (the access log below): a token in it is taken out.
    m_gate.takePathToken(exchange->request());
    OpenSandboxExecdApi::servePathOfProxy(exchange->request().path);
    exchange->setChunkedAllowed(http11);
    exchange->setAnswerObserver([metrics = std::weak_ptr<HttpMetrics>(m_httpMetrics)](const QString &route, int status) {
        if (const std::shared_ptr<HttpMetrics> alive = metrics.lock())
            alive->record(route, status);
    });
    qCInfo(lcAccess).noquote() << exchange->request().method << exchange->request().path;
    if (tooLarge) {
        exchange->sendError(413, QStringLiteral("payload_too_large"),
                            QStringLiteral("request body larger than the limit of %1 bytes")
                                    .arg(m_config.limits.maxBodyBytes));
        return;
    }
    handle(exchange);
}

void ApiServer::handle(const std::shared_ptr<HttpExchange> &exchange)
{
    HttpRequest &request = exchange->request();
    const Router::Match match = m_router.match(request.method, request.path);
    if (match.kind == Router::Match::Kind::Found)
        exchange->setRoute(match.route);  // counted under its route even when refused below

    // The guard asked the same before the body was read; asked again, so that no request
    // reaches a route without it.
    if (std::optional<HeadRefusal> refusal = gateCheck(request, match)) {
        for (const auto &[name, value] : std::as_const(refusal->headers)) {
            if (name != "WWW-Authenticate")  // sendError adds it
                exchange->addHeader(name, value);
        }
        exchange->sendError(refusal->status, refusal->code, refusal->message);
        return;
    }
    const QByteArray origin = request.header("origin");
    if (!origin.isEmpty()) {
        exchange->addHeader("Access-Control-Allow-Origin", origin);
        exchange->addHeader("Vary", "Origin");
        if (request.method == "OPTIONS") {
            // Every method a route has, and every request field a route or the gate reads.
            exchange->addHeader("Access-Control-Allow-Methods",
                                "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
            exchange->addHeader("Access-Control-Allow-Headers", kCorsRequestHeaders);
            exchange->addHeader("Access-Control-Max-Age", "600");
            exchange->sendEmpty(204);
            return;
        }
    }

    switch (match.kind) {
    case Router::Match::Kind::NotFound:
        exchange->sendError(404, QStringLiteral("not_found"),
                            QStringLiteral("no route for %1 %2")
                                    .arg(QString::fromLatin1(request.method), request.path));
        return;
    case Router::Match::Kind::MethodNotAllowed: {
        QByteArrayList allowed = match.allowedMethods;
        if (allowed.contains("GET"))
            allowed.append("HEAD");  // every GET route answers HEAD
        exchange->addHeader("Allow", allowed.join(", "));
        exchange->sendError(405, QStringLiteral("method_not_allowed"),
                            QStringLiteral("%1 is not allowed on %2; use %3")
                                    .arg(QString::fromLatin1(request.method), request.path,
                                         QString::fromLatin1(allowed.join(", "))));
        return;
    }
    case Router::Match::Kind::Found:
        request.params = match.params;
        if (const std::optional<QString> wrong = WorkspaceRoute::misdirection(request, match.route)) {
            exchange->sendError(421, QStringLiteral("misdirected"), *wrong);
            return;
        }
        (*match.handler)(exchange);
        return;
    }
}

void ApiServer::metrics(const std::shared_ptr<HttpExchange> &exchange)
{
    core::PrometheusWriter out;
    m_engine.metrics().write(out);
    m_httpMetrics->write(out, m_streams.openStreams());
    exchange->send(200, core::PrometheusWriter::contentType(), out.text());
}

} // namespace replhost::http
