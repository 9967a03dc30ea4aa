// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QByteArray>
#include <QHostAddress>
#include <QSet>
#include <QString>
#include <QStringList>

namespace replhost::http {

// Who may talk to the server. A local code runner must not be reachable by a web page the user
// happens to visit, so three checks run on every request:
// - Host must be a local name (localhost, 127.0.0.1, [::1], the bound address) or an allowed
//   extra host, with any port: a DNS-rebinding page sends its own domain as Host.
// - Origin, when present, must be allowed: by default only the server's own local origins
//   (http://localhost:<port>, http://127.0.0.1:<port>, http://[::1]:<port>).
// - Authorization must be "Bearer <token>" (except on public routes). The comparison takes the
//   same time whatever the token sent.
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

    bool isAllowedOrigin(const QByteArray &origin) const { return checkOrigin(origin).ok(); }

    // "http://localhost:8080/" → "http://localhost:8080"; empty when not an origin.
    static QString normalizeOrigin(const QString &origin);

private:
    QByteArray m_tokenDigest;
    QSet<QString> m_hosts;          // lower-case names, IPv6 without brackets
    QStringList m_extraOrigins;     // normalized
    QSet<QString> m_localOrigins;   // normalized, from setEndpoint()
};

} // namespace replhost::http
