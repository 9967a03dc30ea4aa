// SPDX-License-Identifier: Apache-2.0
#include "connectionguard.h"

#include "guardedtcpserver.h"
#include "httpresponse.h"

#include <QLoggingCategory>
#include <QMetaObject>
#include <QTcpSocket>

#include <sys/socket.h>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcGuard, "replhost.http.connection", QtInfoMsg)

namespace {

// What the guard lets the socket buffer while it looks for a head's end: the largest head the
// limits allow and a little more, so a head over the limit is seen to be over it. Body bytes
// beyond that wait in the kernel until the request is admitted.
constexpr qint64 kHeadSlackBytes = 4096;

// How often the body rate is checked.
constexpr int kBodyCheckMs = 1000;

// Each hand-over makes Qt 6.4's QAbstractHttpServer allocate a request object that it frees only
// with the socket. Hand-overs happen for requests that arrive pipelined or in pieces; past this
// many on one connection, the next answer closes it.
constexpr int kMaxHandovers = 256;

} // namespace

ConnectionGuard::ConnectionGuard(QTcpSocket *socket, const ConnectionLimits &limits,
                                 Admission admission, GuardedTcpServer *server)
    : QObject(socket), m_socket(socket), m_limits(limits), m_admission(std::move(admission)),
      m_server(server)
{
    // Connected before Qt HttpServer's slot (which is connected at the hand-over), so it runs
    // first for every readyRead.
    connect(socket, &QIODevice::readyRead, this, &ConnectionGuard::onReadyRead);
    m_lastWrite.start();
    connect(socket, &QIODevice::bytesWritten, this, [this] { m_lastWrite.start(); });

    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &ConnectionGuard::onTimer);
    m_lingerTimer.setSingleShot(true);
    connect(&m_lingerTimer, &QTimer::timeout, this, [this] {
        if (m_socket)
            m_socket->abort();
    });
    enterWaiting();
}

ConnectionGuard::~ConnectionGuard()
{
    // Exchanges still holding this guard ask it about the connection when they go.
    m_phase = Phase::Closing;
}

ConnectionGuard *ConnectionGuard::of(QTcpSocket *socket)
{
    return socket ? socket->findChild<ConnectionGuard *>(QString(), Qt::FindDirectChildrenOnly)
                  : nullptr;
}

void ConnectionGuard::enterWaiting()
{
    m_phase = Phase::WaitingForHead;
    m_headStarted = false;
    if (m_socket)
        m_socket->setReadBufferSize(m_limits.maxHeaderBytes + kHeadSlackBytes);
    m_timer.start(m_limits.idleTimeoutMs);
}

void ConnectionGuard::onReadyRead()
{
    if (!m_socket)
        return;
    switch (m_phase) {
    case Phase::Closing:
        if (m_lingering)
            m_socket->skip(m_socket->bytesAvailable());  // discarded, keeping nothing
        return;
    case Phase::QtReading:
        // Qt reads all it can on each pass, so what is buffered now arrived since its last one.
        countBodyBytes(m_socket->bytesAvailable());
        return;
    case Phase::Answering:
        // A request pipelined behind the one being answered: Qt must not parse it yet.
        takeBackFromQt();
        return;
    case Phase::WaitingForHead:
        m_inReadyRead = true;
        inspect();
        m_inReadyRead = false;
        return;
    }
}

void ConnectionGuard::inspect()
{
    while (m_socket && m_phase == Phase::WaitingForHead) {
        // Empty lines between requests are skipped (RFC 9112 §2.2), as Qt does.
        while (m_socket->bytesAvailable() >= 2 && m_socket->peek(2) == "\r\n")
            m_socket->skip(2);
        const qint64 available = m_socket->bytesAvailable();
        if (available == 0)
            return;
        const QByteArray bytes =
                m_socket->peek(qMin<qint64>(available, m_limits.maxHeaderBytes + kHeadSlackBytes));
        HeadCheck::Verdict verdict = HeadCheck::inspect(bytes, m_limits);
        switch (verdict.outcome) {
        case HeadCheck::Outcome::Incomplete:
            // Qt would start reading the head; it gets it whole, once admitted.
            takeBackFromQt();
            if (!m_headStarted) {
                m_headStarted = true;
                m_timer.start(qMin(m_limits.headTimeoutMs, m_limits.idleTimeoutMs));
            }
            return;
        case HeadCheck::Outcome::Refused:
            qCInfo(lcGuard).noquote() << "refusing request:" << verdict.refusal.status
                                      << verdict.refusal.message;
            refuse(verdict.refusal);
            return;
        case HeadCheck::Outcome::Complete:
            break;
        }
        const RequestHead &head = verdict.head;
        const std::optional<HeadRefusal> refusal = m_admission(head, m_socket->peerAddress());
        if (!refusal) {
            admit(head, m_inReadyRead);
            return;
        }
        if (head.hasBody() || head.wantsClose) {
            refuse(*refusal);
            return;
        }
        // Refused without a body to skip: answered, and the connection goes on with the next
        // request, which is looked at in this same pass (before Qt's slot could see it).
        takeBackFromQt();
        m_socket->skip(head.size);
        writeRefusal(*refusal, false);
        enterWaiting();
    }
}

void ConnectionGuard::admit(const RequestHead &head, bool inReadyRead)
{
    m_phase = Phase::QtReading;
    m_current = head;
    m_headStarted = false;
    m_timer.stop();
    // Qt 6.4 keeps a request's bytes in the socket's buffer until the request is complete (a
    // transaction), so the buffer must be able to hold the whole body now.
    m_socket->setReadBufferSize(0);
    if (head.hasBody()) {
        m_bodyClock.start();
        m_timer.start(kBodyCheckMs);
    }
    if (head.expectsContinue) {
        // Only now, after the head was checked and the client authenticated.
        m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
        m_socket->flush();
    }
    if (m_qtConnected && inReadyRead) {
        // Qt's slot runs after this one, in this same readyRead, and reads what is buffered.
        m_bodyBytes = m_socket->bytesAvailable() - head.size;
        return;
    }
    // Qt reads on its own readyRead: handed over (again) if it was taken back, then told.
    m_bodyBytes = -head.size;
    if (!m_qtConnected && m_server) {
        if (++m_handovers > kMaxHandovers)
            m_current.wantsClose = true;
        m_qtConnected = true;
        m_server->handOver(m_socket);
    }
    QMetaObject::invokeMethod(
            m_socket,
            [socket = m_socket] {
                if (socket)
                    emit socket->readyRead();
            },
            Qt::QueuedConnection);
}

void ConnectionGuard::countBodyBytes(qint64 bytes)
{
    m_bodyBytes += bytes;
    if (m_current.chunked && m_bodyBytes > m_limits.maxBodyBytes + m_limits.maxBodyBytes / 16) {
        refuse({413, QStringLiteral("payload_too_large"),
                QStringLiteral("chunked request body larger than the limit of %1 bytes")
                        .arg(m_limits.maxBodyBytes),
                {}});
    }
}

const RequestHead &ConnectionGuard::beginAnswer()
{
    m_phase = Phase::Answering;
    m_timer.stop();
    // While the answer is produced, a pipelined request waits in a bounded buffer (and the
    // kernel), not in memory without limit.
    m_socket->setReadBufferSize(m_limits.maxHeaderBytes + kHeadSlackBytes);
    return m_current;
}

void ConnectionGuard::endResponse(bool close)
{
    if (m_phase != Phase::Answering)
        return;
    if (close || m_current.wantsClose) {
        closeLingering();
        return;
    }
    enterWaiting();
    // Qt, when it still has the socket, emits readyRead itself for bytes left after the request
    // it handed over; otherwise the guard looks at them.
    if (!m_qtConnected && m_socket && m_socket->bytesAvailable() > 0)
        QMetaObject::invokeMethod(this, &ConnectionGuard::inspect, Qt::QueuedConnection);
}

void ConnectionGuard::takeBackFromQt()
{
    if (!m_qtConnected || !m_socket || !m_server)
        return;
    // Qt 6.4 connects the socket's readyRead to a lambda whose context object is the HTTP
    // server; this removes exactly that connection (its disconnected/destroyed handlers stay).
    m_socket->disconnect(m_server->httpServer());
    m_qtConnected = false;
}

void ConnectionGuard::abortConnection()
{
    m_phase = Phase::Closing;
    takeBackFromQt();
    m_timer.stop();
    if (m_socket)
        m_socket->abort();
}

void ConnectionGuard::writeRefusal(const HeadRefusal &refusal, bool close)
{
    HeaderList headers{{"Content-Type", "application/json"}, {"Date", HttpResponse::date()}};
    headers += refusal.headers;
    if (m_server)
        headers += m_server->answerFields();
    if (close)
        headers.emplaceBack("Connection", "close");
    m_socket->write(HttpResponse::full(refusal.status, headers,
                                       HttpResponse::errorBody(refusal.code, refusal.message)));
    m_socket->flush();
}

void ConnectionGuard::refuse(const HeadRefusal &refusal)
{
    if (!m_socket || m_phase == Phase::Closing)
        return;
    if (m_phase == Phase::Answering) {
        // Another answer is being written on this connection; a second would corrupt it.
        abortConnection();
        return;
    }
    takeBackFromQt();
    writeRefusal(refusal, true);
    closeLingering();
}

void ConnectionGuard::closeLingering()
{
    m_phase = Phase::Closing;
    takeBackFromQt();
    m_timer.stop();
    if (!m_socket || m_lingering)
        return;
    m_lingering = true;

    // Nothing more of this connection is parsed: not a refused body, not a request pipelined
    // after "Connection: close".
    m_socket->setReadBufferSize(0);
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

void ConnectionGuard::onTimer()
{
    if (!m_socket)
        return;
    switch (m_phase) {
    case Phase::WaitingForHead: {
        if (m_headStarted) {
            qCInfo(lcGuard) << "request head not complete in time; closing the connection";
            refuse({408, QStringLiteral("request_timeout"),
                    QStringLiteral("the request head did not arrive within %1 ms")
                            .arg(qMin(m_limits.headTimeoutMs, m_limits.idleTimeoutMs)),
                    {}});
            return;
        }
        // A client still downloading the last answer is not idle.
        const qint64 sinceWrite = m_lastWrite.elapsed();
        if (m_socket->bytesToWrite() > 0 && sinceWrite < m_limits.idleTimeoutMs) {
            m_timer.start(int(m_limits.idleTimeoutMs - sinceWrite));
            return;
        }
        qCDebug(lcGuard) << "closing idle connection";
        m_phase = Phase::Closing;
        takeBackFromQt();
        if (m_socket->bytesToWrite() > 0)
            m_socket->abort();  // an answer nobody reads: disconnectFromHost() would wait for ever
        else
            m_socket->disconnectFromHost();
        return;
    }
    case Phase::QtReading: {
        const qint64 elapsed = m_bodyClock.elapsed();
        const qint64 grace = m_limits.headTimeoutMs;
        if (elapsed > grace
            && m_bodyBytes < m_limits.minBodyBytesPerSecond * (elapsed - grace) / 1000) {
            qCInfo(lcGuard) << "request body arriving too slowly; closing the connection";
            refuse({408, QStringLiteral("request_timeout"),
                    QStringLiteral("the request body arrives more slowly than %1 bytes per second")
                            .arg(m_limits.minBodyBytesPerSecond),
                    {}});
            return;
        }
        m_timer.start(kBodyCheckMs);
        return;
    }
    case Phase::Answering:
    case Phase::Closing:
        return;
    }
}

} // namespace replhost::http
