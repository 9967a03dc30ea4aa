// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "filework.h"

#include <replhost/sdk/result.h>

#include <QSet>
#include <QString>

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;
class StreamLimiter;

// The API of E2B's code interpreter server (what `@e2b/code-interpreter` and
// `e2b-code-interpreter` call), over the same engine as the native API (docs/compat.md):
//
//   GET    /health                   "OK"
//   POST   /execute                  {code, context_id?, language?, env_vars?} → NDJSON stream
//   POST   /contexts                 {language?, cwd?} → {id, language, cwd}
//   GET    /contexts                 [{id, language, cwd}]
//   POST   /contexts/{id}/restart    null
//   DELETE /contexts/{id}            null
//   GET    /files?path=              the file's bytes (envd's file read; a single Range too)
//   POST   /files?path=              multipart "file" parts → [{name, type, path}] (envd's
//                                    write: `path` names the file, or the directory of several)
//
// Contexts are those of the "default" workspace (or the one the server was given for E2B,
// ApiServerConfig::e2bWorkspace), so they are the same contexts the native API and the
// workbench show; under <prefix>/workspaces/{ws} (a router places those by their path) or with
// X-Replhost-Workspace, those of the named workspace (WorkspaceRoute). A sandbox with a view
// (WorkspaceSettings::viewPath) is seen as E2B's: contexts' cwd and the paths of written files
// are its own (/home/user/…), and file paths may be its own, /tmp and "~" included. As E2B's server makes a Python and a JavaScript context when it starts,
// the first request to these routes makes each of the two that the workspace lacks (and whose
// runtime is there), so a client's first listing has both; later ones are left as the client
// leaves them. `language` picks that language's default context (created on first
// use), neither field the Python one; `env_vars` form the execution env layer, so they hold for
// that run only. E2B's status codes: 400 when both context_id and language are given, 404 for
// an unknown context. Errors have replhost's body ({"code", "message"}) with E2B's wording.
// The files are the workspace's, through core::WorkspaceFiles like every file route:
// confined to its directory (403), regular files only (400), on FileWork threads.
//
// Ownership: the engine and the limiter must outlive this object. Threading: the engine thread.
class E2bApi {
public:
    // Interval of keepalive lines on a quiet /execute stream, E2B's own.
    static constexpr int kKeepAliveMs = 5000;
    // Where the E2B routes live on the main listener: the token is a path segment, because the
    // E2B SDKs in debug mode send no credential at all, only the URL they are given.
    static QString capabilityPrefix() { return QStringLiteral("/e2b"); }

    // `workspace`: the one a request that names none is for; empty: "default".
    E2bApi(core::Engine &engine, StreamLimiter &streams, QString workspace = QString());

    // `prefix`: "" for the routes at the root (the E2B-only listener), or
    // capabilityPrefix() + "/{token}".
    void registerRoutes(Router &router, const QString &prefix);

    // Where E2B's code sees its files: the home of its sandbox's user.
    static QString viewPath() { return QStringLiteral("/home/user"); }
    // Makes `name` the sandbox E2B's clients expect, for `--e2b-workspace`: a workspace with
    // isolation "sandbox" whose code sees it at viewPath(), created when missing. Errors:
    // "unavailable" when this machine cannot make sandboxes (the reason), "conflict" when the
    // workspace exists with other isolation or view, "bad_request" for a bad name. Engine thread.
    static Result<void> prepareWorkspace(core::Engine &engine, const QString &name);

    // The engine's language for an E2B language name: "" → "python", the rest unchanged (the
    // engine knows "js", "ts" and the other aliases, and says which languages exist).
    static Result<QString> engineLanguage(const QString &e2bLanguage);

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void health(const ExchangePtr &exchange);
    void execute(const ExchangePtr &exchange);
    void createContext(const ExchangePtr &exchange);
    void listContexts(const ExchangePtr &exchange);
    void restartContext(const ExchangePtr &exchange);
    void removeContext(const ExchangePtr &exchange);
    void readFile(const ExchangePtr &exchange);
    void writeFiles(const ExchangePtr &exchange);

    // Once: the default Python and JavaScript contexts E2B's server starts with.
    void makeDefaultContexts(const QString &workspace);
    // Answers an engine error, in E2B's words for an unknown context.
    static void sendError(const ExchangePtr &exchange, const Error &error, const QString &contextId);

    QString workspaceOf(const ExchangePtr &exchange) const;

    core::Engine &m_engine;
    StreamLimiter &m_streams;
    const QString m_workspace;
    FileWork m_work;
    QSet<QString> m_defaultContextsMade;  // workspaces whose first request made them
};

} // namespace replhost::http
