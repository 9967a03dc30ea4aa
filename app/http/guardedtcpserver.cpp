// SPDX-License-Identifier: Apache-2.0
#include "guardedtcpserver.h"

#include "connectionguard.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcTcp, "replhost.http.tcp", QtInfoMsg)

GuardedTcpServer::GuardedTcpServer(const ConnectionLimits &limits, QObject *parent)
    : QTcpServer(parent), m_limits(limits)
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
    // parent() is the HTTP server once bind() has been called; connections arrive only after.
    auto *guard = new ConnectionGuard(socket, parent(), m_limits);

    // Emits pendingConnectionAvailable(), on which QAbstractHttpServer takes the socket and
    // connects its parser, synchronously (Qt 6.4: QAbstractHttpServerPrivate::handleNewConnections).
    addPendingConnection(socket);
    if (hasPendingConnections()) {
        // Not taken synchronously (a Qt that behaves differently): the after-read slot would
        // run before Qt's parser and could miscount, so refuse to serve rather than guess.
        qCCritical(lcTcp) << "the HTTP server did not take the connection synchronously; closing it";
        nextPendingConnection();
        socket->abort();
        socket->deleteLater();
        return;
    }
    guard->attachAfterServer();
}

} // namespace replhost::http
