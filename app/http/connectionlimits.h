// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QtGlobal>

namespace replhost::http {

// What one HTTP connection, and all of them together, may cost the server. Enforced by
// GuardedTcpServer (connection caps) and ConnectionGuard with HeadCheck (the rest) as a request
// arrives, before Qt HttpServer reads it (see docs/http-api.md, "Limits").
struct ConnectionLimits {
    // Largest request body accepted (Content-Length, or the bytes of a chunked body as sent).
    // Bigger → 413.
    qint64 maxBodyBytes = 32 * 1024 * 1024;
    // More header fields than this → 431.
    int maxHeaderCount = 100;
    // Request line plus header fields, in bytes. Bigger → 431.
    int maxHeaderBytes = 64 * 1024;
    // A connection with no request in progress and no answer pending is closed this long after
    // it became idle. Bytes of a request head that has not ended do not restart it: the head has
    // its own deadline.
    int idleTimeoutMs = 60 * 1000;
    // From its first byte, a request head must be complete within this time (or the idle
    // timeout, when shorter) → 408.
    int headTimeoutMs = 10 * 1000;
    // After headTimeoutMs, a request body must have arrived at this average rate at least → 408.
    qint64 minBodyBytesPerSecond = 1024;
    // After a rejection, how long the connection keeps discarding what the client still sends
    // (so the client reads the error instead of a reset) before it is aborted.
    int lingerMs = 2000;
    // Open connections, in total and from one client address; past them a new connection is
    // answered 503 and closed.
    int maxConnections = 1024;
    int maxConnectionsPerAddress = 512;
};

} // namespace replhost::http
