// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <QStringList>

namespace replhost::http {

struct HttpRequest;

// Who may talk to the server. A local code runner must not be reachable by a web page the user
// happens to visit, so three checks run on every request:
// - Host must be a local name (localhost, 127.0.0.1, [::1], the bound address) or an allowed
//   extra host, with any port: a DNS-rebinding page sends its own domain as Host.
// - Origin, when present, must be allowed: by default only the server's own local origins
//   (http://localhost:<port>, http://127.0.0.1:<port>, http://[::1]:<port>).
// - Authorization must be "Bearer <token>" (except on public routes). The comparison's time
//   depends on the length of what was sent alone, not on how much of it matches the token. Under a path prefix registered with acceptTokenHeader()
//   the bare token is also accepted in that header, for compatible surfaces whose official
//   clients cannot send Authorization (they have a header of their own for their key); under
//   one registered with acceptTokenInPath(), as a path segment.
//
// Errors: "bad_request" (no Host), "forbidden" (Host or Origin), "unauthorized" (token).
// Threading: const after setEndpoint(); any thread.
class SecurityGate {
public:
    SecurityGate(QByteArray token, const QStringList &extraHosts, const QStringList &extraOrigins);

    // Where the server listens (its port completes the default origins).
    void setEndpoint(const QHostAddress &address, quint16 port);

    Result<void> checkHost(const QByteArray &host) const;
    Result<void> checkOrigin(const QByteArray &origin) const;  // empty: no Origin sent, allowed
    Result<void> checkToken(const QByteArray &authorization) const;
    // Like checkToken(), also looking at the headers accepted for the request's path.
    Result<void> checkToken(const HttpRequest &request) const;

    // Requests whose path starts with `pathPrefix` may carry the bare token in `header`.
    // Call before serving.
    void acceptTokenHeader(const QString &pathPrefix, const QByteArray &header);

    // Requests whose path is `pathPrefix/<token>/…` may carry the token as that path segment,
    // for clients that send no header at all (E2B's SDKs in debug mode only take a URL).
    // Authorization, when sent, is checked instead. Call before serving.
    void acceptTokenInPath(const QString &pathPrefix);
    // Moves such a segment out of request.path into request.pathToken and leaves "{token}" in
    // its place, so no log line, error message or metrics label downstream can carry it. Call
    // on every request before anything looks at its path.
    void takePathToken(HttpRequest &request) const;

    bool isAllowedOrigin(const QByteArray &origin) const { return checkOrigin(origin).ok(); }

    // "http://localhost:8080/" → "http://localhost:8080"; empty when not an origin.
    static QString normalizeOrigin(const QString &origin);

private:
    // "127.0.0.1", "localhost" or "[::1]", each with an optional ":<port>", exactly.
    static bool isPlainLocalHost(QByteArrayView host);

    QByteArray m_token;
    QSet<QString> m_hosts;          // lower-case names, IPv6 without brackets
    QStringList m_extraOrigins;     // normalized
    QSet<QString> m_localOrigins;   // normalized, from setEndpoint()
    QList<QPair<QString, QByteArray>> m_tokenHeaders;  // (path prefix, header name)
    QStringList m_tokenPathPrefixes;
};

} // namespace replhost::http
