// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionguard.h"
#include "connectionlimits.h"

#include <QTcpServer>

namespace replhost::http {

// The listening socket. Each accepted connection gets a ConnectionGuard, which reads its requests
// and hands them to `handler`.
//
// Ownership: accepted sockets are its children, each deleted once it has disconnected.
// Threading: the thread it was created in.
class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    GuardedTcpServer(const ConnectionLimits &limits, ConnectionGuard::RequestHandler handler,
                     QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    ConnectionLimits m_limits;
    ConnectionGuard::RequestHandler m_handler;
};

} // namespace replhost::http
