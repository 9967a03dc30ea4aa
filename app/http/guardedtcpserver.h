// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"

#include <QTcpServer>

namespace replhost::http {

// The listening socket handed to QHttpServer::bind(). It creates each connection's socket itself
// so that a ConnectionGuard is attached (and its readyRead slot connected) before QHttpServer
// connects its own parser to the socket.
//
// Ownership: QHttpServer::bind() reparents it to the HTTP server; sockets are its children until
// the HTTP server deletes them. Threading: the thread it was created in.
class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    explicit GuardedTcpServer(const ConnectionLimits &limits, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    ConnectionLimits m_limits;
};

} // namespace replhost::http
