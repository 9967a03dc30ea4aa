// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "serverprocess.h"

#include "gui/httpengine.h"

#include <QTest>

#include <memory>
#include <optional>

namespace replhost::gui {

// An HttpEngine connected to a test's running server (ServerProcess), or null with why in
// `error`. Waits for the server's first answers up to `timeoutMs`.
inline std::unique_ptr<HttpEngine> connectedTo(const ServerProcess &server, QString *error, int timeoutMs = 60000)
{
    ServerEndpoint endpoint;
    endpoint.url = QUrl(QStringLiteral("http://127.0.0.1:%1").arg(server.port()));
    endpoint.pid = server.pid();
    endpoint.token = server.token();
    endpoint.holder = QStringLiteral("replhost-server");
    auto http = std::make_unique<HttpEngine>(endpoint, server.dataDir());
    std::optional<Result<void>> connected;
    http->connectToServer([&connected](Result<void> outcome) { connected = outcome; });
    if (!QTest::qWaitFor([&connected] { return connected.has_value(); }, timeoutMs)) {
        *error = QStringLiteral("no answer from the server");
        return nullptr;
    }
    if (!*connected) {
        *error = connected->error().message;
        return nullptr;
    }
    return http;
}

} // namespace replhost::gui
