// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"

#include <QByteArray>
#include <QHostAddress>
#include <QStringList>

namespace replhost::http {

// How an ApiServer listens and whom it lets in. Constant once the server listens.
struct ApiServerConfig {
    QHostAddress address = QHostAddress(QHostAddress::LocalHost);
    quint16 port = 0;               // 0: any free port (ApiServer::port() says which)
    QByteArray token;               // required as "Authorization: Bearer <token>"
    // Sent as X-Replhost-Instance on every answer, refusals included, so that a client behind a
    // router sees which server answered; empty: not sent. A header value (no CR, LF or NUL).
    QByteArray instanceId;
    QStringList allowedHosts;       // Host names accepted besides the local ones
    QStringList allowedOrigins;     // Origins accepted besides the server's own local ones
    ConnectionLimits limits;
    int sseKeepAliveMs = 15 * 1000; // ": keep-alive" comment interval on quiet streams
    int maxStreamsPerClient = 32;   // event streams one client address may hold open; 0: no cap
    // Serve only the E2B-compatible routes, at the root, with no token (E2bApi): for E2B SDKs in
    // debug mode, which send no credential. Host and Origin are still checked; listen() refuses
    // any address but loopback.
    bool e2bOnly = false;
    // The workspace the E2B routes serve when a request names none (by path or
    // X-Replhost-Workspace): `--e2b-workspace`, a sandbox seen at /home/user as E2B's is.
    // Empty: the default workspace.
    QString e2bWorkspace;
};

} // namespace replhost::http
