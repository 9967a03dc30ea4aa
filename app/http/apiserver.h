// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "apiserverconfig.h"
#include "router.h"
#include "securitygate.h"

#include <replhost/sdk/result.h>

#include <QHttpServer>
#include <QObject>
#include <QPointer>

#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class GuardedTcpServer;
class HttpExchange;
class NativeApi;

// The HTTP face of an Engine: one QHttpServer on one address, every connection guarded
// (ConnectionGuard), every request passed through the SecurityGate, then routed (Router) to the
// native API v1 (NativeApi). GET /healthz is the only route that needs no token.
//
// Ownership: owns the HTTP server, its listening socket and connections. The engine must
// outlive this object. Threading: the engine's thread; create, listen and destroy there.
class ApiServer : public QObject {
    Q_OBJECT
public:
    ApiServer(core::Engine &engine, ApiServerConfig config, QObject *parent = nullptr);
    ~ApiServer() override;

    // Starts listening. Error "io" when the address cannot be bound (the message says why).
    Result<void> listen();

    quint16 port() const;
    QHostAddress address() const;
    // "http://127.0.0.1:<port>" (a local URL even when bound to every interface).
    QString baseUrl() const;

    const ApiServerConfig &config() const { return m_config; }
    Router &router() { return m_router; }

private:
    void dispatch(const QHttpServerRequest &request, QHttpServerResponder &&responder);
    void handle(const std::shared_ptr<HttpExchange> &exchange);

    ApiServerConfig m_config;
    SecurityGate m_gate;
    Router m_router;
    std::unique_ptr<NativeApi> m_native;
    QHttpServer m_http;
    QPointer<GuardedTcpServer> m_tcp;  // owned by m_http after bind()
};

} // namespace replhost::http
