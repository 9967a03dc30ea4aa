// SPDX-License-Identifier: Apache-2.0
#include "httpserverbridge.h"

#include "connectionguard.h"

#include <QLoggingCategory>
#include <QTcpSocket>

namespace replhost::http {

Q_LOGGING_CATEGORY(lcBridge, "replhost.http.qt", QtInfoMsg)

HttpServerBridge::HttpServerBridge(Handler handler, QObject *parent)
    : QAbstractHttpServer(parent), m_handler(std::move(handler))
{
}

bool HttpServerBridge::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    ConnectionGuard *guard = ConnectionGuard::of(socket);
    if (!guard || !guard->isReading()) {
        // Qt parsed bytes its guard did not admit: never answered.
        qCWarning(lcBridge) << "a request was parsed that was not admitted; closing the connection";
        if (guard)
            guard->abortConnection();
        else
            socket->abort();
        return true;
    }
    m_handler(*guard, request, makeResponder(request, socket));
    return true;
}

void HttpServerBridge::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    // handleRequest() handles every request; Qt calls this only when it returns false.
    socket->abort();
}

} // namespace replhost::http
