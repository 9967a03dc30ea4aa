// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"
#include "requestframer.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <deque>
#include <functional>


namespace replhost::http {

// One HTTP/1.x connection: it reads the socket, parses requests (RequestFramer, the server's only
// HTTP parser) and hands each complete request to the handler, and enforces what the protocol
// leaves to the server: body size, header count and size, "Connection: close", idle connections,
// "100 Continue", and the order of answers to pipelined requests.
//
// A refused request (413, 431, malformed framing) is answered here and ends the connection
// gracefully: the answer is sent, then what the client still sends is read and dropped until it
// closes or the linger time is over, so it reads the answer instead of a reset.
//
// The HTTP layer tells the guard when an answer is complete (endResponse); submit() holds later
// pipelined requests back until then.
//
// Ownership: a child of its socket, so it goes when the socket is deleted (on disconnect).
// Threading: the socket's thread only.
class ConnectionGuard : public QObject {
    Q_OBJECT
public:
    // Called once per complete request, in the order they arrive, never after a request that
    // asked to close the connection. It answers through submit() (usually via an HttpExchange).
    using RequestHandler = std::function<void(ConnectionGuard &guard, RequestFramer::Head head,
                                              QByteArray body)>;

    // `handler` must outlive the socket (the HTTP server that owns the listening socket).
    ConnectionGuard(QTcpSocket *socket, const ConnectionLimits &limits, RequestHandler handler);
    ~ConnectionGuard() override;

    QTcpSocket *socket() const { return m_socket; }

    // Runs `respond` now when no answer is being written on this connection, otherwise after
    // the answers before it (HTTP/1.1 answers in request order). `respond` must lead to exactly
    // one endResponse(). Too many waiting requests abort the connection.
    void submit(std::function<void()> respond);

    // The current answer is completely written (queued on the socket). `close`: the client asked
    // for it or the answer was framed by closing, so the connection closes once it is sent.
    void endResponse(bool close);

    // The connection is going away: no more answers may be started on it.
    bool isClosing() const { return m_closing; }

    // Ends the connection at once, e.g. when an answer can no longer be completed.
    void abortConnection();

private:
    void readRequests();
    // Feeds bytes read to the framer and acts on what they complete; false when the connection
    // reads no more (refused, closing, or gone).
    bool frame(QByteArrayView bytes);
    void refuse(const RequestFramer::Rejection &rejection);
    void closeLingering();
    void halfCloseWhenWritten();
    void onIdleTimeout();
    void restartIdleTimer();

    QPointer<QTcpSocket> m_socket;
    const ConnectionLimits m_limits;
    const RequestHandler m_handler;
    RequestFramer m_framer;
    std::deque<std::function<void()>> m_waiting;
    bool m_responding = false;
    bool m_closeRequested = false;  // a request asked to close: later ones are not answered
    bool m_closing = false;
    bool m_lingering = false;
    bool m_halfClosed = false;
    QElapsedTimer m_lastActivity;  // since the last byte read or written, or answer completed
    QTimer m_idleTimer;
    QTimer m_lingerTimer;
};

} // namespace replhost::http
