// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QHash>
#include <QHostAddress>
#include <QString>

#include <memory>

namespace replhost::http {

class HttpExchange;

// Caps the event streams one client address may hold open at once. A stream holds a connection,
// a socket buffer and a timer for as long as a run lasts, so one client must not be able to
// open them without bound. Streams are counted per address, not per connection: a client that
// opens a new connection for every stream is still one client.
//
// acquire() hands out a Lease; the slot is free again when the last copy of the lease goes.
// Leases may outlive the limiter (they share its counts).
//
// Threading: one thread (the server's).
class StreamLimiter {
public:
    using Lease = std::shared_ptr<void>;

    // `maxPerClient` <= 0: no cap.
    explicit StreamLimiter(int maxPerClient);

    // A lease for one more stream from `client`, or null when it already holds the maximum.
    Lease acquire(const QHostAddress &client);

    int maxPerClient() const { return m_max; }
    // acquire() for the exchange's client; when refused, answers 429 with Retry-After and
    // returns null (the caller must not start anything then).
    Lease admit(HttpExchange &exchange);

    // Streams open now, over every client.
    int openStreams() const;
    // What a refused client is told to wait before trying again (Retry-After), in seconds.
    static int retryAfterSeconds() { return 1; }

    struct Counts {
        QHash<QString, int> perClient;
        int total = 0;
    };

private:
    int m_max;
    std::shared_ptr<Counts> m_counts = std::make_shared<Counts>();
};

} // namespace replhost::http
