// SPDX-License-Identifier: Apache-2.0
#include "workspaceroute.h"

#include "httpexchange.h"

#include "core/workspacemanager.h"

#include <QTcpSocket>

namespace replhost::http {

QStringList WorkspaceRoute::prefixes()
{
    return {QStringLiteral("/v1"), QStringLiteral("/v1/workspaces/{ws}")};
}

QString WorkspaceRoute::ofHeader(const HttpRequest &request)
{
    return QString::fromUtf8(request.header(kHeader)).trimmed();
}

QString WorkspaceRoute::of(const HttpExchange &exchange, const QString &fallback)
{
    const HttpRequest &request = exchange.request();
    QString ws = request.param(QStringLiteral("ws"));
    if (ws.isEmpty())
        ws = ofHeader(request);
    if (ws.isEmpty())
        ws = fallback;
    return ws.isEmpty() ? core::WorkspaceManager::defaultName() : ws;
}

QString WorkspaceRoute::ofPath(const HttpRequest &request, const QString &pattern)
{
    if (const QString ws = request.param(QStringLiteral("ws")); !ws.isEmpty())
        return ws;
    if (pattern.contains(QLatin1String("/sandboxes/{id}")))
        return request.param(QStringLiteral("id"));
    return {};
}

std::optional<QString> WorkspaceRoute::misdirection(const HttpRequest &request, const QString &pattern)
{
    const QString header = ofHeader(request);
    if (header.isEmpty())
        return std::nullopt;
    const QString path = ofPath(request, pattern);
    if (path.isEmpty() || path == header)
        return std::nullopt;
    return QStringLiteral("the request names workspace \"%1\" in its path but was sent for "
                          "workspace \"%2\" (X-Replhost-Workspace); a router places it by the "
                          "field, so send the path's workspace there")
            .arg(path, header);
}

} // namespace replhost::http
