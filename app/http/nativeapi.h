// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/contextmanager.h"

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;
class StreamLimiter;

// The native API, version 1 (docs/http-api.md): languages, workspaces, contexts, executions
// (streamed as Server-Sent Events, or one JSON document with ?wait=true), their history,
// interrupts, completion, variables and env layers. Every context, env and execution route
// exists twice: under /v1/… for the "default" workspace and under /v1/workspaces/{ws}/… for any
// workspace (WorkspaceRoute), and the stream of what happens in the engine (GET /v1/events,
// EventsStream). Files and commands have classes of their own.
//
// Handlers translate HTTP to Engine calls and back, and nothing else: validation that belongs to
// the engine (cwd inside the workspace, env key syntax, language names) is the engine's, and its
// errors are answered through ErrorStatus.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class NativeApi {
public:
    // `streams` caps the event streams per client; it must outlive this object.
    NativeApi(core::Engine &engine, int sseKeepAliveMs, StreamLimiter &streams);

    void registerRoutes(Router &router);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void info(const ExchangePtr &exchange);
    void events(const ExchangePtr &exchange);
    void languages(const ExchangePtr &exchange);
    void plugins(const ExchangePtr &exchange);

    void listWorkspaces(const ExchangePtr &exchange);
    void createWorkspace(const ExchangePtr &exchange);
    void getWorkspace(const ExchangePtr &exchange);
    void patchWorkspace(const ExchangePtr &exchange);
    void deleteWorkspace(const ExchangePtr &exchange);

    void listContexts(const ExchangePtr &exchange);
    void createContext(const ExchangePtr &exchange);
    void getContext(const ExchangePtr &exchange);
    void deleteContext(const ExchangePtr &exchange);
    void patchContext(const ExchangePtr &exchange);
    void restartContext(const ExchangePtr &exchange);
    void interruptContext(const ExchangePtr &exchange);
    void completeInContext(const ExchangePtr &exchange);
    void contextVariables(const ExchangePtr &exchange);
    void contextHistory(const ExchangePtr &exchange);
    void contextBackgroundOutput(const ExchangePtr &exchange);

    void runInContext(const ExchangePtr &exchange);
    void run(const ExchangePtr &exchange);
    void getExecution(const ExchangePtr &exchange);
    void streamExecution(const ExchangePtr &exchange);
    void interruptExecution(const ExchangePtr &exchange);
    void answerInput(const ExchangePtr &exchange);

    void getWorkspaceEnv(const ExchangePtr &exchange);
    void patchWorkspaceEnv(const ExchangePtr &exchange);
    void getContextEnv(const ExchangePtr &exchange);
    void patchContextEnv(const ExchangePtr &exchange);

    // Starts a run and answers with its stream, or with its JSON once finished (?wait=true).
    void startRun(const ExchangePtr &exchange, core::RunRequest request);
    // The execution named by the {eid} parameter (live, recent or from the history), if it
    // belongs to the route's workspace; answers 404 and returns null otherwise.
    core::ExecutionPtr findExecution(const ExchangePtr &exchange);
    // The workspace as the API shows it, its effective settings included.
    Result<QJsonObject> workspaceJson(const storage::WorkspaceRecord &record) const;

    core::Engine &m_engine;
    int m_keepAliveMs;
    StreamLimiter &m_streams;
};

} // namespace replhost::http
