// SPDX-License-Identifier: Apache-2.0
#include "connectionguard.h"

#include "httpresponse.h"

#include <QLoggingCategory>
#include <QTcpSocket>

#include <sys/socket.h>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcGuard, "replhost.http.connection", QtInfoMsg)

ConnectionGuard::ConnectionGuard(QTcpSocket *socket, QObject *httpServer,
                                 const ConnectionLimits &limits)
    : QObject(socket), m_socket(socket), m_server(httpServer), m_limits(limits), m_framer(limits)
{
    // Connected before the HTTP server sees the socket: this slot runs before Qt's parser.
    connect(socket, &QIODevice::readyRead, this, &ConnectionGuard::beforeServerRead);

    m_idleTimer.setSingleShot(true);
    m_idleTimer.setInterval(m_limits.idleTimeoutMs);
    connect(&m_idleTimer, &QTimer::timeout, this, &ConnectionGuard::onIdleTimeout);
    m_idleTimer.start();
    // A client still downloading an answer is not idle.
    connect(socket, &QIODevice::bytesWritten, this, &ConnectionGuard::restartIdleTimer);

    m_lingerTimer.setSingleShot(true);
    connect(&m_lingerTimer, &QTimer::timeout, this, [this] {
        if (m_socket)
            m_socket->abort();
    });
}

ConnectionGuard::~ConnectionGuard()
{
    // The waiting requests' exchanges ask this guard about the connection when they go; let them
    // go while the guard is still whole, and tell them it is closing.
    m_closing = true;
    m_waiting.clear();
}

ConnectionGuard *ConnectionGuard::of(const QTcpSocket *socket)
{
    return socket ? socket->findChild<ConnectionGuard *>(QString(), Qt::FindDirectChildrenOnly)
                  : nullptr;
}

void ConnectionGuard::attachAfterServer()
{
    connect(m_socket, &QIODevice::readyRead, this, &ConnectionGuard::afterServerRead);
}

void ConnectionGuard::beforeServerRead()
{
    if (!m_socket)
        return;
    if (m_lingering) {
        // Qt's parser is detached: discard what the client still sends, keeping nothing.
        m_socket->skip(m_socket->bytesAvailable());
        return;
    }
    const qint64 available = m_socket->bytesAvailable();
    if (available <= m_scanned)
        return;  // a re-emitted readyRead for bytes already seen
    restartIdleTimer();
    const QByteArray fresh = m_socket->peek(available).sliced(m_scanned);
    m_scanned = available;

    for (const RequestFramer::Step &step : m_framer.feed(fresh)) {
        if (step.kind == RequestFramer::Step::Kind::Rejected) {
            refuse(step.rejection);
            return;
        }
        m_heads.append(step.head);
        // Qt 6.4 never sends "100 Continue", so clients that wait for it (curl does, for bodies
        // over 1 MiB) would stall for a second. Only when nothing else is being answered, so the
        // interim response cannot land inside another response.
        if (step.head.expectsContinue && !m_responding && m_waiting.empty() && m_heads.size() == 1)
            m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    }
}

void ConnectionGuard::afterServerRead()
{
    if (m_socket && !m_lingering)
        m_scanned = m_socket->bytesAvailable();
}

std::optional<RequestFramer::Head> ConnectionGuard::takeHead()
{
    if (m_heads.isEmpty())
        return std::nullopt;
    return m_heads.takeFirst();
}

void ConnectionGuard::submit(std::function<void()> respond)
{
    if (m_closing)
        return;
    if (m_responding || !m_waiting.empty()) {
        if (int(m_waiting.size()) >= m_limits.maxQueuedRequests) {
            qCWarning(lcGuard) << "too many pipelined requests; closing the connection";
            abortConnection();
            return;
        }
        m_waiting.push_back(std::move(respond));
        return;
    }
    m_responding = true;
    m_idleTimer.stop();
    respond();
}

void ConnectionGuard::endResponse(bool close)
{
    m_responding = false;
    if (close || m_closing) {
        closeLingering();
        return;
    }
    restartIdleTimer();
    if (!m_waiting.empty()) {
        std::function<void()> next = std::move(m_waiting.front());
        m_waiting.pop_front();
        m_responding = true;
        m_idleTimer.stop();
        next();
    }
}

void ConnectionGuard::abortConnection()
{
    m_closing = true;
    m_waiting.clear();
    m_idleTimer.stop();
    if (m_socket)
        m_socket->abort();
}

void ConnectionGuard::refuse(const RequestFramer::Rejection &rejection)
{
    qCInfo(lcGuard).noquote() << "refusing request:" << rejection.status << rejection.message;
    if (!m_socket)
        return;
    if (m_responding) {
        // Another answer is being written on this connection; ours would corrupt it.
        closeLingering();
        abortConnection();
        return;
    }
    m_socket->write(HttpResponse::full(
            rejection.status,
            {{"Content-Type", "application/json"}, {"Connection", "close"}},
            HttpResponse::errorBody(rejection.code, rejection.message)));
    closeLingering();
}

void ConnectionGuard::closeLingering()
{
    m_closing = true;
    m_waiting.clear();
    m_heads.clear();
    m_idleTimer.stop();
    if (!m_socket || m_lingering)
        return;
    m_lingering = true;

    // Qt's parser must not read another byte of this connection: not the refused body, not a
    // request pipelined after "Connection: close". Disconnecting during the readyRead emission
    // also stops Qt's slot from running for the bytes that triggered it.
    if (m_server)
        QObject::disconnect(m_socket, &QIODevice::readyRead, m_server, nullptr);
    // Qt reads requests inside a read transaction, which keeps every byte it has read; end it
    // so what we discard from now on is really freed.
    if (m_socket->isTransactionStarted())
        m_socket->commitTransaction();
    m_socket->skip(m_socket->bytesAvailable());

    // Lingering close: send everything, then FIN, and keep discarding input until the client
    // closes (or the linger time is over). Closing with unread input would make the kernel
    // send a reset, which can destroy the answer before the client reads it.
    connect(m_socket, &QIODevice::bytesWritten, this, &ConnectionGuard::halfCloseWhenWritten);
    halfCloseWhenWritten();
}

void ConnectionGuard::halfCloseWhenWritten()
{
    if (!m_socket || m_halfClosed || m_socket->state() != QAbstractSocket::ConnectedState)
        return;
    m_socket->flush();
    if (m_socket->bytesToWrite() > 0) {
        // Called again on each bytesWritten; a client that stops reading is cut off after the
        // idle timeout without progress.
        m_lingerTimer.start(m_limits.idleTimeoutMs);
        return;
    }
    m_halfClosed = true;
    ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    m_lingerTimer.start(m_limits.lingerMs);
}

void ConnectionGuard::onIdleTimeout()
{
    if (!m_socket || m_closing)
        return;
    if (m_responding || !m_waiting.empty()) {
        m_idleTimer.start();  // an answer is being produced: not idle
        return;
    }
    qCDebug(lcGuard) << "closing idle connection";
    m_closing = true;
    if (m_socket->bytesToWrite() > 0)
        m_socket->abort();  // an answer nobody reads: disconnectFromHost() would wait for ever
    else
        m_socket->disconnectFromHost();
}

void ConnectionGuard::restartIdleTimer()
{
    if (!m_closing)
        m_idleTimer.start();
}

} // namespace replhost::http
