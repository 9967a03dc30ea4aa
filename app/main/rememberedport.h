// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/result.h>

#include <QString>

namespace replhost::app {

// The port that `replhost-server --port auto` chose for a data directory, kept in
// <data dir>/port so that the next start takes the same one while it is free. Each user's server
// (one per data directory) thus gets a port of its own instead of all wanting 49999, and keeps it
// across restarts, so a URL written into an agent's configuration or a bookmark stays right.
// Clients on the machine need none of this: they read server.json, which names the port of the
// running server whatever it is.
//
// Errors: "io". Threading: start-up, one thread.
class RememberedPort {
public:
    static QString fileName() { return QStringLiteral("port"); }

    // The remembered port, or 0 when there is none (or the file does not hold a port number).
    static quint16 read(const QString &dataDir);
    // Replaces the file atomically; its mode comes from the process umask (0600).
    static Result<void> write(const QString &dataDir, quint16 port);
};

} // namespace replhost::app
