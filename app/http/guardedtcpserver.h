// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionguard.h"
#include "connectionlimits.h"
#include "httpresponse.h"

#include <QHash>
#include <QHostAddress>
#include <QPointer>
#include <QTcpServer>

namespace replhost::http {

// The listening socket in front of Qt HttpServer. Each accepted connection gets a
// ConnectionGuard; Qt's QAbstractHttpServer (bound to this server) sees a connection only when
// its guard hands it over (addPendingConnection), with a request the guard has admitted.
//
// It also caps connections, which Qt 6.4 does not: past maxConnections open connections in
// total, or maxConnectionsPerAddress from one client address, a new connection is answered 503
// and closed.
//
// Ownership: accepted sockets are its children, each deleted once it has disconnected. After
// QAbstractHttpServer::bind() it is a child of the HTTP server.
// Threading: the thread it was created in.
class GuardedTcpServer : public QTcpServer {
    Q_OBJECT
public:
    // `httpServer` is the QAbstractHttpServer this server is bound to.
    GuardedTcpServer(const ConnectionLimits &limits, ConnectionGuard::Admission admission,
                     QObject *httpServer);

    // Gives Qt HttpServer the socket: its parser reads from it from now on.
    void handOver(QTcpSocket *socket);
    QObject *httpServer() const { return m_httpServer; }

    int openConnections() const { return m_open; }

    // Header fields every answer of this server carries, also those its guards write themselves
    // (X-Replhost-Instance). Set before listening.
    void setAnswerFields(HeaderList fields) { m_answerFields = std::move(fields); }
    const HeaderList &answerFields() const { return m_answerFields; }

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    ConnectionLimits m_limits;
    ConnectionGuard::Admission m_admission;
    HeaderList m_answerFields;
    QPointer<QObject> m_httpServer;
    int m_open = 0;
    QHash<QHostAddress, int> m_openByAddress;
};

} // namespace replhost::http
