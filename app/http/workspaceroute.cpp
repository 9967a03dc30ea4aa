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

QString WorkspaceRoute::of(const HttpExchange &exchange)
{
    const QString ws = exchange.request().param(QStringLiteral("ws"));
    return ws.isEmpty() ? core::WorkspaceManager::defaultName() : ws;
}

} // namespace replhost::http
