// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QtGlobal>

namespace replhost::http {

// What one HTTP connection may cost the server. Enforced by ConnectionGuard and RequestFramer as
// the request arrives (see docs/http-api.md, "Limits").
struct ConnectionLimits {
    // Largest request body accepted (Content-Length or the sum of chunk sizes). Bigger → 413.
    qint64 maxBodyBytes = 32 * 1024 * 1024;
    // More header fields than this → 431.
    int maxHeaderCount = 100;
    // Request line plus header fields, in bytes. Bigger → 431.
    int maxHeaderBytes = 64 * 1024;
    // A connection with no request in progress and no response pending is closed after this long
    // without traffic.
    int idleTimeoutMs = 60 * 1000;
    // After a rejection, how long the connection keeps discarding what the client still sends
    // (so the client reads the error instead of a reset) before it is aborted.
    int lingerMs = 2000;
    // Requests a client may pipeline behind one that is still being answered.
    int maxQueuedRequests = 16;
};

} // namespace replhost::http
