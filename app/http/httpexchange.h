// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "guardedresponder.h"
#include "httprequest.h"
#include "httpresponse.h"

#include <replhost/sdk/result.h>

#include <QJsonValue>
#include <QPointer>

#include <functional>

class QTcpSocket;

namespace replhost::http {

class ConnectionGuard;

// One request and its answer. Every answer to a request Qt HttpServer parsed goes through here,
// written by Qt's responder (GuardedResponder), so that:
// - nothing is ever written to a socket that is gone (checked before each write);
// - the connection's guard learns when the answer is complete (the next request is looked at
//   only then, which keeps answers in order; keep-alive; "Connection: close");
// - every answer carries the same headers (Date, Connection, CORS), and an answer to HEAD
//   has the head of the GET answer and no body.
//
// Exactly one answer per exchange: send*/sendError, or beginStream + writeChunk… + endStream.
// If the client has left, the calls do nothing and report it (isConnected()).
//
// Ownership: shared (handlers that answer later keep a std::shared_ptr). It owns the responder,
// which writes through a guarded pointer to the connection's socket (not its own). Destroying an exchange that
// never answered aborts the connection (a handler bug; a late answer would be out of order).
// Threading: the socket's thread only.
class HttpExchange {
public:
    HttpExchange(GuardedResponder responder, HttpRequest request, bool closeAfter,
                 ConnectionGuard *guard);
    ~HttpExchange();
    HttpExchange(const HttpExchange &) = delete;
    HttpExchange &operator=(const HttpExchange &) = delete;

    HttpRequest &request() { return m_request; }
    const HttpRequest &request() const { return m_request; }

    // HTTP/1.0 clients cannot take chunked framing: their streams are sent unframed and end by
    // closing the connection. Call before answering.
    void setChunkedAllowed(bool allowed) { m_chunkedAllowed = allowed; }

    // Told the status of the answer when it starts (for metrics), with the route set below.
    using AnswerObserver = std::function<void(const QString &route, int status)>;
    void setAnswerObserver(AnswerObserver observer) { m_observer = std::move(observer); }
    // The pattern of the route that handles the request ("GET /v1/contexts/{id}").
    void setRoute(const QString &route) { m_route = route; }

    // Headers added to the answer (for example CORS); call before answering.
    void addHeader(const QByteArray &name, const QByteArray &value);

    bool isConnected() const;
    bool isAnswered() const { return m_answered; }
    QTcpSocket *socket() const { return m_responder.socket(); }

    void send(int status, const QByteArray &contentType, const QByteArray &body);
    void sendJson(int status, const QJsonValue &json);
    void sendEmpty(int status);
    void sendError(int status, const QString &code, const QString &message);
    // Status from ErrorStatus::forCode(error.code).
    void sendError(const Error &error);

    // Streaming. beginStream writes the status line and headers (and Transfer-Encoding: chunked);
    // writeChunk frames one chunk; endStream writes the last chunk and completes the answer.
    // Return false when the client is gone. An answer to HEAD is complete after its head: then
    // writeChunk returns false, so a stream ends as if its client had left.
    bool beginStream(int status, const HeaderList &headers);
    // Like beginStream, for a body whose length is known (a file): Content-Length instead of
    // chunked framing, and writeChunk writes the bytes as they are. The caller writes exactly
    // `length` bytes before endStream.
    bool beginBody(int status, const HeaderList &headers, qint64 length);
    bool writeChunk(const QByteArray &data);
    void endStream();

private:
    HeaderList commonHeaders() const;
    // The status line and the header fields (the common ones after `headers`).
    bool writeHead(int status, const HeaderList &headers);
    bool isHead() const { return m_request.method == "HEAD"; }
    void complete();
    void answering(int status);

    HttpRequest m_request;
    GuardedResponder m_responder;
    QPointer<ConnectionGuard> m_guard;
    HeaderList m_extraHeaders;
    AnswerObserver m_observer;
    QString m_route;
    bool m_closeAfter = false;
    bool m_chunkedAllowed = true;
    bool m_fixedLength = false;  // beginBody(): no chunk framing
    bool m_answered = false;   // an answer has been started
    bool m_completed = false;  // the answer is complete (the guard was told)
};

} // namespace replhost::http
