// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "streamlimiter.h"

#include "core/contextmanager.h"

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
    // Answers 200 with the execution's JSON document as it is now (core::ExecutionDocument),
    // or the error of reading its older events back from the history.
    static void sendDocument(HttpExchange &exchange, const core::Execution &execution);
};

} // namespace replhost::http
