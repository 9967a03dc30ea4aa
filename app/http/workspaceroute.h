// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QString>
#include <QStringList>

namespace replhost::http {

class HttpExchange;

// How the native API's routes name their workspace. Every workspace-scoped route exists twice:
// the short form under /v1 acts on the workspace "default", the long form under
// /v1/workspaces/{ws} on the named one. Shared by the API classes so they agree on it.
class WorkspaceRoute {
public:
    // "/v1" and "/v1/workspaces/{ws}".
    static QStringList prefixes();
    // The {ws} parameter of the matched route, or "default".
    static QString of(const HttpExchange &exchange);
};

} // namespace replhost::http
