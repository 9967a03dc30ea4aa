// SPDX-License-Identifier: Apache-2.0
#include "connectionguard.h"

#include "httpresponse.h"

#include <QLoggingCategory>
#include <QTcpSocket>

#include <sys/socket.h>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcGuard, "replhost.http.connection", QtInfoMsg)

ConnectionGuard::ConnectionGuard(QTcpSocket *socket, const ConnectionLimits &limits,
                                 RequestHandler handler)
    : QObject(socket), m_socket(socket), m_limits(limits), m_handler(std::move(handler)),
      m_framer(limits)
{
    connect(socket, &QIODevice::readyRead, this, &ConnectionGuard::readRequests);

    // The idle timer is not restarted on every request: activity only moves m_lastActivity, and
    // the timer, when it fires early, waits for the rest (a timer restart per request costs
    // more than the clock read).
    m_idleTimer.setSingleShot(true);
    connect(&m_idleTimer, &QTimer::timeout, this, &ConnectionGuard::onIdleTimeout);
    m_lastActivity.start();
    m_idleTimer.start(m_limits.idleTimeoutMs);
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

void ConnectionGuard::readRequests()
{
    // Read a block at a time into the stack: readAll() allocated and resized a new array for
    // every request, and the framer copies what it keeps (a split head, a body) anyway.
    char block[16 * 1024];
    while (m_socket) {
        if (m_lingering) {
            // Discard what the client still sends, keeping nothing.
            m_socket->skip(m_socket->bytesAvailable());
            return;
        }
        const qint64 n = m_socket->read(block, sizeof block);
        if (n <= 0)
            return;
        restartIdleTimer();
        // Asked before reading again: a read of an empty buffer costs more than the question.
        if (!frame(QByteArrayView(block, n)) || !m_socket || m_socket->bytesAvailable() == 0)
            return;
    }
}

bool ConnectionGuard::frame(QByteArrayView bytes)
{
    for (RequestFramer::Step &step : m_framer.feed(bytes)) {
        if (m_closing)
            return false;
        switch (step.kind) {
        case RequestFramer::Step::Kind::Rejected:
            refuse(step.rejection);
            return false;
        case RequestFramer::Step::Kind::HeadComplete:
            // Clients that send "Expect: 100-continue" (curl does, for bodies over 1 MiB) wait
            // for it. Only when nothing else is being answered, so the interim response cannot
            // land inside another response.
            if (step.head.expectsContinue && !m_closeRequested && !m_responding && m_waiting.empty())
                m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
            break;
        case RequestFramer::Step::Kind::RequestComplete:
            if (m_closeRequested)
                break;  // pipelined behind "Connection: close": not answered
            m_closeRequested = step.head.wantsClose;
            m_handler(*this, std::move(step.head), std::move(step.body));
            if (!m_socket)
                return false;
            break;
        }
    }
    return !m_closing;
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
    m_idleTimer.stop();
    if (!m_socket || m_lingering)
        return;
    m_lingering = true;

    // Nothing more of this connection is parsed: not the refused body, not a request pipelined
    // after "Connection: close".
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
        m_idleTimer.start(m_limits.idleTimeoutMs);  // an answer is being produced: not idle
        return;
    }
    if (const qint64 left = m_limits.idleTimeoutMs - m_lastActivity.elapsed(); left > 0) {
        m_idleTimer.start(int(left));  // there was traffic since the timer was started
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
    if (m_closing)
        return;
    m_lastActivity.start();
    if (!m_idleTimer.isActive())
        m_idleTimer.start(m_limits.idleTimeoutMs);
}

} // namespace replhost::http
