// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "executionstream.h"

namespace replhost::http {

struct HttpRequest;

// Streams one execution to one client as Server-Sent Events, over HTTP/1.1 chunked framing
// written by hand (Qt 6.4 has no chunked API):
//
//   event: execution                    (no id: it describes the stream, not an event)
//   data: {"id":…,"context_id":…,…}
//
//   id: <index>                         (the event's index in the execution, from 0)
//   event: <type>                       (started, stream, display, result, error, done, …)
//   data: <the event as compact JSON>
//
// Events that happened before the client subscribed are replayed first, then live ones follow;
// the stream ends after "done". While nothing happens a ": keep-alive" comment is sent every
// keepAliveMs, which also finds clients that have gone away.
//
// A client that disconnects only ends its stream: the execution keeps running (use the
// interrupt routes to stop it).
//
// Ownership and threading: see ExecutionStream.
class SseStream : public ExecutionStream {
    Q_OBJECT
public:
    // `firstIndex`: the first event sent; a client resuming with Last-Event-ID n passes n + 1
    // and gets the events it missed, then live ones.
    // `lease`: the stream's slot in the per-client cap, held until the stream ends.
    static void start(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
                      int keepAliveMs, int firstIndex = 0, StreamLimiter::Lease lease = {});

    // Where a stream for this request starts: after the event named by the Last-Event-ID header
    // (or the last_event_id query parameter), else at 0. Error "bad_request" for an id that is
    // not an event index.
    static Result<int> firstIndexFor(const HttpRequest &request);

    // The SSE text of one event (without chunk framing). `id` < 0 writes no id line.
    static QByteArray format(qint64 id, const QByteArray &type, const QByteArray &data);

private:
    SseStream(std::shared_ptr<HttpExchange> exchange, core::ExecutionPtr execution,
              int keepAliveMs, int firstIndex, StreamLimiter::Lease lease);

    QByteArray preamble() override;
    QByteArray translate(const sdk::Event &event, int index) override;
    QByteArray keepAlive() override;
};

} // namespace replhost::http
