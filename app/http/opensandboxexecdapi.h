// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/contextmanager.h"
#include "core/hostusage.h"

#include <QString>

#include <memory>
#include <optional>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;
class StreamLimiter;

// OpenSandbox's execd API (the daemon inside a sandbox that its SDKs talk to), served for every
// workspace under /opensandbox/execd/{ws}: the endpoint the lifecycle API hands out for a
// sandbox (docs/compat.md). Code contexts are the workspace's contexts, commands are
// core::CommandRunner's, files are the workspace's (OpenSandboxFilesApi).
//
//   GET /ping                        200, empty
//   POST /code/context               {"language","cwd"?} → {"id","language"}; unknown language 400
//   GET|DELETE /code/contexts        ?language= (required for DELETE)
//   GET|DELETE /code/contexts/{id}   404 CONTEXT_NOT_FOUND when unknown
//   POST /code                       {"code","context":{"id"|"language"}} → execd stream
//                                    (ExecdStream); without either, the code runs as a command
//   DELETE /code?id=<context id>     interrupts its run; unknown id 404
//   POST /command                    {"command","cwd","background","timeout"(ms),"envs"} → stream
//   DELETE /command?id=              interrupts the command
//   GET /command/status/{id}         {"id","content","running","exit_code","error",…}
//   GET /command/{id}/logs?cursor=   output lines from `cursor`, EXECD-COMMANDS-TAIL-CURSOR
//   GET /metrics                     the machine's CPU and memory (core::HostUsage)
//
// Every error is {"code","message"} JSON in execd's codes (OpenSandboxError), answered before any
// stream starts; every empty success is 200 with Content-Length: 0 (the JS SDK parses a body
// otherwise).
//
// Ownership: the engine and the limiter must outlive this object. Threading: the engine's thread.
class OpenSandboxExecdApi {
public:
    // `pingIntervalMs`: the longest silence on a stream before a "ping" event.
    OpenSandboxExecdApi(core::Engine &engine, int pingIntervalMs, StreamLimiter &streams);

    // "/opensandbox/execd": its routes are <prefix>/{ws}/…
    static QString prefix();
    // The execd base path of a workspace, without scheme and host: "/opensandbox/execd/<ws>".
    static QString basePath(const QString &workspace);

    // execd's port inside an OpenSandbox sandbox, the one its SDKs ask an endpoint for.
    static constexpr int kExecdPort = 44772;
    // Where the lifecycle API says a sandbox's `port` is, without scheme and host: the form of
    // OpenSandbox's server proxy, "/opensandbox/sandboxes/<ws>/proxy/<port>", a route ending in
    // the port as OpenSandbox's clients check. Only execd's port leads anywhere.
    static QString proxyPath(const QString &workspace, int port);
    // A request path under execd's proxy path is served as the same path under basePath():
    // `path` is rewritten so, before routing (and the logs); any other path is left alone. The
    // proxy path is not a second set of routes, the way OpenSandbox's proxy is not one either.
    static void servePathOfProxy(QString &path);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void ping(const ExchangePtr &exchange);
    void createContext(const ExchangePtr &exchange);
    void listContexts(const ExchangePtr &exchange);
    void deleteContexts(const ExchangePtr &exchange);
    void getContext(const ExchangePtr &exchange);
    void deleteContext(const ExchangePtr &exchange);
    void runCode(const ExchangePtr &exchange);
    void interruptCode(const ExchangePtr &exchange);
    void runCommand(const ExchangePtr &exchange);
    void interruptCommand(const ExchangePtr &exchange);
    void commandStatus(const ExchangePtr &exchange);
    void commandLogs(const ExchangePtr &exchange);
    void metrics(const ExchangePtr &exchange);

    // The route's workspace, or nothing after answering 404 SANDBOX_NOT_FOUND.
    std::optional<QString> workspaceOf(HttpExchange &exchange) const;
    // The command named by {id} (or ?id=) in `workspace`, or null.
    core::ExecutionPtr findCommand(const QString &workspace, const QString &id) const;

    core::Engine &m_engine;
    int m_pingIntervalMs;
    StreamLimiter &m_streams;
    core::HostUsage m_usage;
};

} // namespace replhost::http
