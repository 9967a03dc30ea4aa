// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "opensandboxregistry.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <memory>
#include <optional>

namespace replhost::core { class Engine; }

namespace replhost::http {

class HttpExchange;
class Router;

// The part of OpenSandbox's sandbox lifecycle API its SDKs need, with sandboxes mapped onto
// replhost workspaces (docs/compat.md). The SDK is pointed at "<host>:<port>/opensandbox" and adds
// "/v1" itself, so every route lives under /opensandbox/v1 and cannot clash with the native /v1.
//
//   POST /sandboxes                     202 Sandbox: a new workspace (id = its name, a UUID)
//                                       whose env layer is `env`; `timeout` (s) sets an expiry;
//                                       `image` and `entrypoint` are recorded, not run
//   GET /sandboxes                      {"items", "pagination"}; ?state=, ?metadata=k=v&…,
//                                       ?page=, ?pageSize=
//   GET|DELETE /sandboxes/{id}          any workspace; DELETE answers 204
//   GET /sandboxes/{id}/endpoints/{port}   {"endpoint": "<host>/opensandbox/execd/<id>",
//                                       "headers": {"X-EXECD-ACCESS-TOKEN": <token>}} for any
//                                       port: this server's execd surface for the workspace
//   POST /sandboxes/{id}/renew-expiration  {"expiresAt"} → {"expiresAt"}
//   PATCH /sandboxes/{id}/metadata      JSON merge patch of the metadata
//   POST /sandboxes/{id}/pause|resume   501: a workspace is always running
//   POST /metrics/events                204 (the SDK's telemetry; nothing is kept)
//
// Expiries are kept by an OpenSandboxRegistry in <data dir>/opensandbox/sandboxes.json.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class OpenSandboxLifecycleApi {
public:
    // `token` is handed to clients in endpoint headers (they already hold it: every route here
    // needs it).
    OpenSandboxLifecycleApi(core::Engine &engine, QByteArray token);

    // "/opensandbox": the base a client's ConnectionConfig.domain ends with.
    static QString prefix();
    // The header execd clients send the token in.
    static QByteArray execdTokenHeader() { return QByteArrayLiteral("X-EXECD-ACCESS-TOKEN"); }
    // The header OpenSandbox SDKs send their API key in, on every request.
    static QByteArray apiKeyHeader() { return QByteArrayLiteral("OPEN-SANDBOX-API-KEY"); }

    void registerRoutes(Router &router);

    OpenSandboxRegistry &registry() { return m_registry; }

private:
    using ExchangePtr = std::shared_ptr<HttpExchange>;

    void create(const ExchangePtr &exchange);
    void list(const ExchangePtr &exchange);
    void get(const ExchangePtr &exchange);
    void remove(const ExchangePtr &exchange);
    void endpoint(const ExchangePtr &exchange);
    void renew(const ExchangePtr &exchange);
    void patchMetadata(const ExchangePtr &exchange);
    void pauseOrResume(const ExchangePtr &exchange);
    void telemetry(const ExchangePtr &exchange);

    // The sandbox's lifecycle record: the registry's, or one made up for a workspace created
    // through another face. Error "not_found".
    Result<OpenSandboxRegistry::Record> recordOf(const QString &id) const;
    // The record of the route's {id}, or nothing after answering 404 SANDBOX_NOT_FOUND.
    std::optional<OpenSandboxRegistry::Record> sandboxOf(HttpExchange &exchange) const;
    QJsonObject sandboxJson(const OpenSandboxRegistry::Record &record) const;

    core::Engine &m_engine;
    QByteArray m_token;
    OpenSandboxRegistry m_registry;
};

} // namespace replhost::http
