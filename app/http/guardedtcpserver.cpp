// SPDX-License-Identifier: Apache-2.0
#include "guardedtcpserver.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcTcp, "replhost.http.tcp", QtInfoMsg)

GuardedTcpServer::GuardedTcpServer(const ConnectionLimits &limits,
                                   ConnectionGuard::Admission admission, QObject *httpServer)
    : m_limits(limits), m_admission(std::move(admission)), m_httpServer(httpServer)
{
}

void GuardedTcpServer::handOver(QTcpSocket *socket)
{
    // Qt 6.4's QAbstractHttpServer takes pending connections on pendingConnectionAvailable,
    // which this emits, and connects its readyRead slot to the socket then.
    addPendingConnection(socket);
}

void GuardedTcpServer::incomingConnection(qintptr socketDescriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(socketDescriptor)) {
        qCWarning(lcTcp) << "cannot adopt connection:" << socket->errorString();
        delete socket;
        return;
    }
    // No Nagle: a stream's head and events are separate small writes, and Nagle would hold each
    // one back until the client acknowledged the previous one, which a client that delays its
    // ACKs does for up to 40 ms.
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    // Deleted later, not at once: an exchange or a stream may be on the stack when it goes.
    connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
    auto *guard = new ConnectionGuard(socket, m_limits, m_admission, this);

    const QHostAddress peer = socket->peerAddress();
    if (m_open >= m_limits.maxConnections
        || m_openByAddress.value(peer) >= m_limits.maxConnectionsPerAddress) {
        // Not counted: it is answered and closed within the linger time.
        qCWarning(lcTcp).noquote() << "refusing a connection from" << peer.toString() << "with"
                                   << m_open << "open";
        guard->refuse({503, QStringLiteral("too_many_connections"),
                       QStringLiteral("the server has too many open connections (at most %1, %2 "
                                      "from one address); try again later")
                               .arg(m_limits.maxConnections)
                               .arg(m_limits.maxConnectionsPerAddress),
                       {{"Retry-After", "1"}}});
        return;
    }
    ++m_open;
    ++m_openByAddress[peer];
    connect(socket, &QObject::destroyed, this, [this, peer] {
        --m_open;
        if (--m_openByAddress[peer] <= 0)
            m_openByAddress.remove(peer);
    });
}

} // namespace replhost::http
