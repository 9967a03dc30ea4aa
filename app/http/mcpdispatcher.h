// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcpcall.h"

#include <QJsonObject>
#include <QString>

#include <functional>
#include <memory>

namespace replhost::core { class Engine; }

namespace replhost::http {

class McpFiles;
class McpTools;

// The methods of the Model Context Protocol this server answers, whatever the transport:
// initialize (the revision negotiated as the spec says: the client's when supported, else the
// newest), ping, server/discover, tools/list and tools/call (McpTools), resources/list,
// resources/read and resources/templates/list (McpFiles: the workspaces' files). A request it
// does not know is answered with JSON-RPC's "method not found", malformed params with "invalid
// params".
//
// Under a stateless revision (2026-07-28; McpRequestMeta checked the request) there is no
// initialize and no ping; every result says `resultType: "complete"` and names the server in
// its _meta, the cacheable ones carry `ttlMs` and `cacheScope`, and a missing resource is
// "invalid params" instead of the handshake revisions' -32002.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class McpDispatcher {
public:
    explicit McpDispatcher(core::Engine &engine);
    ~McpDispatcher();

    // The complete JSON-RPC response to `request` (a message McpMessage::classify() calls a
    // request), once; maybe later. `version` is the revision the request is made in.
    using Respond = std::function<void(const QJsonObject &response)>;
    void handle(const QJsonObject &request, const QString &version, const McpCallPtr &call,
                Respond respond);

    // The revision an initialize that asks for `requested` gets.
    static QString negotiate(const QString &requested);

private:
    QJsonObject initializeResult(const QString &version) const;
    QJsonObject discoverResult() const;
    // `response` as a stateless revision has it (see above), for a request of `method`.
    static QJsonObject asStateless(QJsonObject response, const QString &method);

    std::unique_ptr<McpFiles> m_files;
    std::unique_ptr<McpTools> m_tools;
};

} // namespace replhost::http
