// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcpcall.h"
#include "streamlimiter.h"

#include <QJsonObject>
#include <QObject>
#include <QTimer>

#include <memory>

namespace replhost::http {

class HttpExchange;

// The HTTP answer to one MCP request on the Streamable HTTP transport: either one
// application/json body with the response, or (when the request streams progress) a
// text/event-stream of "message" events, its notifications first and the response last, with a
// ": keep-alive" comment every keepAliveMs while the request is quiet. The stream begins with
// the first notification, so a request that sends none is answered as JSON all the same.
//
// A client that leaves only ends the answer: under revisions 2025-03-26 to 2025-11-25 a
// disconnection is not a cancellation; since 2026-07-28 it is (cancelWhenClientLeaves()).
//
// Ownership: shared by the code answering the request; keeps the exchange until it answered.
// Threading: the engine thread.
class McpAnswer : public QObject {
    Q_OBJECT
public:
    // `streamable`: the client accepts text/event-stream and the request asked for progress.
    // `lease`: the stream's slot in the per-client cap (for a streamable answer).
    McpAnswer(std::shared_ptr<HttpExchange> exchange, bool streamable, int keepAliveMs,
              StreamLimiter::Lease lease);
    ~McpAnswer() override;

    // A notification on the stream (nothing when the answer cannot stream or has ended).
    void notify(const QJsonObject &notification);
    // The response, which ends the answer; `status` is the HTTP status of a JSON answer (a
    // stream has begun with 200).
    void respond(const QJsonObject &response, int status = 200);
    // The client closing its connection before the answer cancels `call` (the stateless
    // revisions' cancellation over HTTP).
    void cancelWhenClientLeaves(const McpCallPtr &call);
    // `left` runs when the client closes its connection before the answer (at once if it has).
    void whenClientLeaves(std::function<void()> left);
    // Ends the answer without a response (the request was cancelled): an open stream ends; a
    // JSON answer becomes 202 with no body.
    void abandon();

    bool isDone() const { return m_done; }

    static QByteArray event(const QJsonObject &message);

private:
    bool begin();
    void finish();

    std::shared_ptr<HttpExchange> m_exchange;
    StreamLimiter::Lease m_lease;
    QTimer m_keepAlive;
    bool m_streamable = false;
    bool m_streaming = false;
    bool m_done = false;
};

} // namespace replhost::http
