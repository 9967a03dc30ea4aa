// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"
#include "requestframer.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

#include <deque>
#include <functional>
#include <optional>

class QTcpSocket;

namespace replhost::http {

// Closes the gaps Qt HttpServer 6.4 leaves on one connection: body size, header count and size,
// "Connection: close", idle connections, and the order of answers to pipelined requests.
//
// How: GuardedTcpServer creates the socket, constructs the guard (which connects its readyRead
// slot first) and only then hands the socket to QHttpServer, which connects its own parser after
// ours. Qt invokes slots in connection order, so on every readyRead the guard looks at the new
// bytes (peek, nothing consumed) before Qt's parser reads them. When a request is refused, the
// guard disconnects Qt's parser from the socket during that same signal emission, so Qt never
// reads or buffers the refused request, and then answers it itself. A second slot, connected
// after Qt's, records how many bytes Qt left unread, so every byte is scanned exactly once.
// (Verified against the Qt 6.4.2 sources and by tests/http.)
//
// The HTTP layer tells the guard when Qt hands over a request (takeHead) and when its answer is
// complete (endResponse); submit() holds later pipelined requests back until then.
//
// Ownership: a child of its socket, so it goes when Qt deletes the socket.
// Threading: the socket's thread only.
class ConnectionGuard : public QObject {
    Q_OBJECT
public:
    // `httpServer` is the QAbstractHttpServer whose parser the guard may detach from the socket.
    ConnectionGuard(QTcpSocket *socket, QObject *httpServer, const ConnectionLimits &limits);
    ~ConnectionGuard() override;

    // The guard installed on `socket`, or null.
    static ConnectionGuard *of(const QTcpSocket *socket);

    // Connects the slot that must run after Qt's parser. Call once the HTTP server has taken the
    // socket (it does so synchronously inside QTcpServer::addPendingConnection()).
    void attachAfterServer();

    // The head of the oldest request that passed the gate and has not been handed over yet; Qt
    // hands requests over in the order they arrive. Empty only if the two parsers disagree.
    std::optional<RequestFramer::Head> takeHead();

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
    void beforeServerRead();
    void afterServerRead();
    void refuse(const RequestFramer::Rejection &rejection);
    void closeLingering();
    void halfCloseWhenWritten();
    void onIdleTimeout();
    void restartIdleTimer();

    QPointer<QTcpSocket> m_socket;
    QPointer<QObject> m_server;
    const ConnectionLimits m_limits;
    RequestFramer m_framer;
    // Bytes at the front of the socket's unread buffer that the framer has already seen (Qt left
    // them unread, e.g. a pipelined request behind the one it just parsed).
    qint64 m_scanned = 0;
    QList<RequestFramer::Head> m_heads;
    std::deque<std::function<void()>> m_waiting;
    bool m_responding = false;
    bool m_closing = false;
    bool m_lingering = false;
    bool m_halfClosed = false;
    QTimer m_idleTimer;
    QTimer m_lingerTimer;
};

} // namespace replhost::http
