// SPDX-License-Identifier: Apache-2.0
#include "guardedtcpserver.h"

#include "connectionguard.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcTcp, "replhost.http.tcp", QtInfoMsg)

GuardedTcpServer::GuardedTcpServer(const ConnectionLimits &limits,
                                   ConnectionGuard::RequestHandler handler, QObject *parent)
    : QTcpServer(parent), m_limits(limits), m_handler(std::move(handler))
{
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
    new ConnectionGuard(socket, m_limits, m_handler);
}

} // namespace replhost::http
