// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/contextmanager.h"

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;
class StreamLimiter;

// Stateless shell commands over HTTP (docs/http-api.md, "Commands"): run one in a workspace,
// streamed like an execution or answered as one JSON document (?wait=true); fetch it, re-attach
// to its stream (Last-Event-ID), interrupt it. The running is core::CommandRunner's.
//
// Ownership: the engine and the limiter must outlive this object. Threading: the engine's thread.
class CommandsApi {
public:
    CommandsApi(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void run(const ExchangePtr &exchange);
    void get(const ExchangePtr &exchange);
    void events(const ExchangePtr &exchange);
    void interrupt(const ExchangePtr &exchange);

    // The command named by {cid} in the route's workspace, or null after answering 404.
    core::ExecutionPtr find(const ExchangePtr &exchange);

    core::Engine &m_engine;
    int m_keepAliveMs;
    StreamLimiter &m_streams;
};

} // namespace replhost::http
