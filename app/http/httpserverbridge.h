// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QAbstractHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>

#include <functional>

namespace replhost::http {

class ConnectionGuard;

// Qt HttpServer's part of the server: a QAbstractHttpServer, bound to a GuardedTcpServer, that
// parses each request its connection guard has admitted and hands it, with Qt's responder for
// it, to `handler`. It answers nothing itself.
//
// Ownership: owns the GuardedTcpServer bound to it (QAbstractHttpServer::bind reparents it).
// Threading: the thread it was created in.
class HttpServerBridge : public QAbstractHttpServer {
    Q_OBJECT
public:
    using Handler = std::function<void(ConnectionGuard &guard, const QHttpServerRequest &request,
                                       QHttpServerResponder &&responder)>;

    explicit HttpServerBridge(Handler handler, QObject *parent = nullptr);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    Handler m_handler;
};

} // namespace replhost::http
