// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcpcall.h"
#include "mcpsessions.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class McpDispatcher;
class Router;
class StreamLimiter;

// MCP's Streamable HTTP transport at /mcp (docs/mcp.md), behind the same SecurityGate as every
// other route: bearer token, Host and Origin.
//
// POST /mcp takes one JSON-RPC message (a batch only under revision 2025-03-26, the one that has
// them). Notifications and responses are answered 202 with no body; a request is answered with
// its response as application/json, or, when it asks for progress (params._meta.progressToken)
// and the client accepts text/event-stream, as an event stream of its progress notifications
// and then its response (McpAnswer).
//
// initialize opens a session (McpSessions), whose id the answer carries in Mcp-Session-Id;
// requests that carry it are in that session and speak its revision. An unknown session is 404,
// a MCP-Protocol-Version header naming a revision this server does not speak (or not the
// session's) is 400. A request without a session speaks the header's revision, else 2025-03-26.
// notifications/cancelled cancels a request of the same session (a run is interrupted; the
// context keeps its state) and no response is sent for it. When the session's client declared
// elicitation (form mode), a tools/call may ask it questions: elicitation/create requests on the
// call's event stream, whose responses the client POSTs like any message (McpCall). DELETE /mcp ends the session. GET
// /mcp is 405: this server sends nothing that is not an answer to a request.
//
// A request of the stateless revision 2026-07-28 (its params._meta names it; McpRequestMeta)
// has no session and no handshake: its headers must mirror its body (else 400 with the spec's
// error), Mcp-Session-Id is ignored, a method this server lacks is 404 with JSON-RPC's "method
// not found", and a client that closes the connection before the answer has cancelled the
// request. Both eras are served on the same endpoint at once.
//
// Ownership: the engine and the limiter must outlive this object. Threading: the engine thread.
class McpEndpoint {
public:
    McpEndpoint(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams);
    ~McpEndpoint();

    void registerRoutes(Router &router);

    static constexpr const char *kPath = "/mcp";

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void post(const ExchangePtr &exchange);
    void remove(const ExchangePtr &exchange);

    // A request that is not part of a batch.
    void request(const ExchangePtr &exchange, const QJsonObject &message, const QString &session,
                 const QString &version, bool acceptsStream);
    // One message (not a batch) of `session` (none for a stateless revision), in `version`.
    void single(const ExchangePtr &exchange, const QJsonObject &message, const QString &session,
                const QString &version, bool acceptsStream);
    void batch(const ExchangePtr &exchange, const QJsonArray &messages, const QString &session,
               const QString &version);
    void notification(const QJsonObject &message, const QString &session);

    int m_keepAliveMs;
    StreamLimiter &m_streams;
    std::unique_ptr<McpDispatcher> m_dispatcher;
    McpSessions m_sessions;
    // Requests being answered, by session and request id, for notifications/cancelled. Shared
    // weakly with the answers, which may come after this object is gone (at exit).
    using InFlight = QHash<QString, std::weak_ptr<McpCall>>;
    std::shared_ptr<InFlight> m_inFlight;
    // The questions (elicitation/create) asked of clients, by session and the question's id,
    // for the client's response.
    std::shared_ptr<InFlight> m_questions;
};

} // namespace replhost::http
