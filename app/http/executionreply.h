// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "streamlimiter.h"

#include "core/contextmanager.h"

#include <replhost/sdk/result.h>

#include <functional>
#include <memory>

namespace replhost::http {

class HttpExchange;

// How a request that started an execution (or a command, which is one too) is answered: with
// the execution's event stream (SseStream), or, for ?wait=true, with its JSON document once it
// has finished. Shared by the routes that run code and the routes that run commands.
class ExecutionReply {
public:
    // `lease`: the stream's slot (streams only; see StreamLimiter::admit).
    static void send(const std::shared_ptr<HttpExchange> &exchange,
                     const core::ExecutionPtr &execution, bool wait, int keepAliveMs,
                     StreamLimiter::Lease lease);
    // A route that starts an execution or a command (`start`, which says why it could not): the
    // stream's slot is taken first, unless the request asks ?wait=true, so that a client
    // refused a stream leaves no run behind that nobody watches; then send().
    static void start(const std::shared_ptr<HttpExchange> &exchange,
                      const std::function<Result<core::ExecutionPtr>()> &start, int keepAliveMs,
                      StreamLimiter &streams);
    // Answers 200 with the execution's JSON document as it is now (core::ExecutionDocument),
    // or the error of reading its older events back from the history.
    static void sendDocument(HttpExchange &exchange, const core::Execution &execution);

    // GET …/events of an execution or a command: its event stream from the request's
    // Last-Event-ID (or ?from), under a slot of `streams`. `find` answers the request itself
    // when there is nothing to stream (and returns null); a bad Last-Event-ID is a 400 first.
    static void stream(const std::shared_ptr<HttpExchange> &exchange,
                       const std::function<core::ExecutionPtr()> &find, int keepAliveMs,
                       StreamLimiter &streams);
    // POST …/interrupt: 409 "conflict" when `execution` has finished (the message calls it
    // `noun`: "execution", "command"), else `interrupt` and 202 {id, status}, or its error.
    static void interrupt(HttpExchange &exchange, const core::Execution &execution,
                          const QString &noun, const std::function<Result<void>()> &interrupt);
};

} // namespace replhost::http
