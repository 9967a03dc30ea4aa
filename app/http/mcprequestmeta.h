// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <optional>

namespace replhost::http {

class HttpRequest;

// The per-request protocol fields of MCP's stateless revisions (2026-07-28): with no initialize
// handshake and no session, every request says in params._meta which revision it speaks
// ("io.modelcontextprotocol/protocolVersion") and what the client can do
// ("io.modelcontextprotocol/clientCapabilities"), and on Streamable HTTP mirrors its revision,
// method and name into the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, so that a
// router or gateway can act on them without reading the body. The server checks that the two
// agree: a proxy that routes on the header must not be fooled by a body that says otherwise.
//
// Threading: pure functions; any thread.
class McpRequestMeta {
public:
    McpRequestMeta() = delete;

    static constexpr const char *kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
    static constexpr const char *kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
    static constexpr const char *kServerInfo = "io.modelcontextprotocol/serverInfo";

    // The revision `message` names in its params._meta, or nothing when it names none (a
    // request of a handshake revision, or a malformed one).
    static std::optional<QString> version(const QJsonObject &message);

    // Whether `message` is to be served statelessly: it carries the per-request revision (which
    // only the stateless revisions have; check() refuses any other it names as unsupported), or
    // the MCP-Protocol-Version header names a stateless revision. initialize always selects the
    // handshake.
    static bool isStateless(const QJsonObject &message, const QString &headerVersion);

    // Why the server refuses a stateless request, as the spec words it.
    struct Refusal {
        int httpStatus = 400;
        int code = 0;
        QString message;
        QJsonValue data = QJsonValue::Undefined;
    };
    // Checks a stateless request (isStateless()): its revision is one this server speaks (else
    // UnsupportedProtocolVersion, -32022, with the supported revisions), its required _meta
    // fields are there (else -32602), and, when `http` is given, the mirrored headers are present
    // and match the body (else HeaderMismatch, -32020). Nothing when it passes.
    static std::optional<Refusal> check(const QJsonObject &message, const HttpRequest *http);

    // A header value as Streamable HTTP carries it: plain visible ASCII, or "=?base64?…?=" for
    // a value that is not. Nothing when it is neither (control characters, bad base64).
    static std::optional<QString> decodeHeaderValue(const QByteArray &value);
};

} // namespace replhost::http
