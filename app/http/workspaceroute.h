// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include <optional>

namespace replhost::http {

class HttpExchange;
struct HttpRequest;

// How a request names its workspace, which is also what a router in front of several servers
// places it by (docs/architecture.md, "Many servers"). Every workspace-scoped native route exists
// twice: the short form under /v1 and the long form under /v1/workspaces/{ws}. The long form
// names its workspace in the path; the short form acts on the workspace the request's
// X-Replhost-Workspace field names, and on "default" without one. Shared by the API classes so
// they agree on it.
class WorkspaceRoute {
public:
    // "/v1" and "/v1/workspaces/{ws}".
    static QStringList prefixes();
    // The field clients send, and a router sets, to say which workspace a request is for.
    static constexpr QByteArrayView kHeader = "x-replhost-workspace";

    // The {ws} parameter of the matched route, else the X-Replhost-Workspace field, else
    // `fallback` ("default" when empty).
    static QString of(const HttpExchange &exchange, const QString &fallback = QString());
    // The X-Replhost-Workspace field, empty when it is not sent.
    static QString ofHeader(const HttpRequest &request);

    // The workspace that the matched route `pattern` names in its path ({ws}, or the {id} of an
    // OpenSandbox sandbox, which is a workspace); empty when it names none.
    static QString ofPath(const HttpRequest &request, const QString &pattern);

    // Why the request is at the wrong server, when its X-Replhost-Workspace field names another
    // workspace than its path: a router placed it by the field, so the path's workspace may live
    // elsewhere. Nothing when they agree, or when either is not given. Answered 421.
    static std::optional<QString> misdirection(const HttpRequest &request, const QString &pattern);
};

} // namespace replhost::http
