// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "apiserverconfig.h"
#include "headcheck.h"
#include "router.h"
#include "securitygate.h"
#include "streamlimiter.h"

#include <replhost/sdk/result.h>

#include <QHostAddress>
#include <QObject>
#include <QPointer>

#include <memory>
#include <optional>

class QHttpServerRequest;
class QHttpServerResponder;

namespace replhost::core { class Engine; }

namespace replhost::http {

class CommandsApi;
class E2bApi;
class FilesApi;
class ConnectionGuard;
class HttpMetrics;
class GuardedTcpServer;
class HttpExchange;
class HttpServerBridge;
class McpEndpoint;
struct HttpRequest;
class NativeApi;
class OpenSandboxApi;
class WorkspaceArchiveApi;

// The HTTP face of an Engine: one listening socket on one address (GuardedTcpServer), every
// request head checked by its ConnectionGuard and passed through the SecurityGate before its
// body is read, then parsed by Qt HttpServer (HttpServerBridge) and routed (Router) to the
// native API v1 (NativeApi, FilesApi, CommandsApi) and the E2B-compatible routes under
// /e2b/<token>/ (E2bApi) and the OpenSandbox-compatible ones under /opensandbox/
// (OpenSandboxApi), and MCP's Streamable HTTP transport at /mcp (McpEndpoint). GET /healthz is the only route that needs no token; GET /metrics
// serves the engine's and the server's counters in the Prometheus format. With
// ApiServerConfig::e2bOnly it serves the E2B routes alone, at the root and without a token.
//
// Ownership: owns its listening socket and connections. The engine must
// outlive this object. Threading: the engine's thread; create, listen and destroy there.
class ApiServer : public QObject {
    Q_OBJECT
public:
    ApiServer(core::Engine &engine, ApiServerConfig config, QObject *parent = nullptr);
    ~ApiServer() override;

    // Starts listening. Error "io" when the address cannot be bound (the message says why).
    Result<void> listen();

    // Graceful shutdown, in two steps around stopping the engine's work: stopListening() takes
    // no new connections; after the engine has ended its runs (their streams get their last
    // events), flush() lets the answers already written reach the clients, waiting at most
    // `timeoutMs` while the event loop runs.
    void stopListening();
    void flush(int timeoutMs);

    quint16 port() const;
    QHostAddress address() const;
    // "http://127.0.0.1:<port>" (a local URL even when bound to every interface).
    QString baseUrl() const;

    const ApiServerConfig &config() const { return m_config; }
    Router &router() { return m_router; }

private:
    // The guard's question, from a request's head: may its body be read?
    std::optional<HeadRefusal> admit(const RequestHead &head, const QHostAddress &peer);
    // The SecurityGate's answer for a request (its path token already taken out): nothing when
    // it may go on to its route. `match` is the request's route.
    std::optional<HeadRefusal> gateCheck(const HttpRequest &request, const Router::Match &match) const;
    void dispatch(ConnectionGuard &guard, const QHttpServerRequest &request,
                  QHttpServerResponder &&responder);
    void handle(const std::shared_ptr<HttpExchange> &exchange);
    void metrics(const std::shared_ptr<HttpExchange> &exchange);

    core::Engine &m_engine;
    ApiServerConfig m_config;
    SecurityGate m_gate;
    StreamLimiter m_streams;
    Router m_router;
    std::unique_ptr<NativeApi> m_native;
    std::unique_ptr<FilesApi> m_files;
    std::unique_ptr<CommandsApi> m_commands;
    std::unique_ptr<E2bApi> m_e2b;
    std::unique_ptr<OpenSandboxApi> m_openSandbox;  // absent on an E2B-only listener
    std::unique_ptr<McpEndpoint> m_mcp;             // absent on an E2B-only listener
    std::unique_ptr<WorkspaceArchiveApi> m_archives; // absent on an E2B-only listener
    // Shared with the exchanges' observers, which may answer after the server is gone.
    std::shared_ptr<HttpMetrics> m_httpMetrics;
    // A child of this object, deleted first in the destructor: its connections' exchanges and
    // streams use the members above. It owns the listening socket, m_tcp.
    QPointer<HttpServerBridge> m_http;
    QPointer<GuardedTcpServer> m_tcp;
};

} // namespace replhost::http
