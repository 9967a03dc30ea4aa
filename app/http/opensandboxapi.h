// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class OpenSandboxExecdApi;
class OpenSandboxFilesApi;
class OpenSandboxLifecycleApi;
class Router;
class SecurityGate;
class StreamLimiter;

// The OpenSandbox-compatible surface (docs/compat.md), everything under /opensandbox: the
// lifecycle API (OpenSandboxLifecycleApi) and, per workspace, execd (OpenSandboxExecdApi,
// OpenSandboxFilesApi). Its SDKs send their API key in OPEN-SANDBOX-API-KEY on every request and
// the token an endpoint hands them in X-EXECD-ACCESS-TOKEN, so under /opensandbox the server's
// token is accepted in either header, besides Authorization.
//
// Ownership: the engine and the limiter must outlive this object. Threading: the engine's thread.
class OpenSandboxApi {
public:
    // `streamKeepAliveMs`: the server's keep-alive interval; execd streams ping at most 3 s
    // apart, sooner when it is shorter. `token`: the server's token.
    OpenSandboxApi(core::Engine &engine, QByteArray token, int streamKeepAliveMs,
                   StreamLimiter &streams);
    ~OpenSandboxApi();

    void registerRoutes(Router &router, SecurityGate &gate);

    // The longest silence on an execd stream, as execd's SDKs expect it.
    static constexpr int kMaxPingIntervalMs = 3000;

private:
    std::unique_ptr<OpenSandboxLifecycleApi> m_lifecycle;
    std::unique_ptr<OpenSandboxExecdApi> m_execd;
    std::unique_ptr<OpenSandboxFilesApi> m_files;
};

} // namespace replhost::http
