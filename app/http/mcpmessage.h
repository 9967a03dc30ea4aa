// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace replhost::http {

// The JSON-RPC 2.0 vocabulary of the Model Context Protocol (MCP): what kind of message a JSON
// value is, and the responses, errors and notifications the server writes. Transport-neutral:
// the HTTP face (McpEndpoint) frames these as JSON or Server-Sent Events.
//
// Threading: values and pure functions; any thread.
class McpMessage {
public:
    McpMessage() = delete;

    // JSON-RPC's own error codes, and the one MCP adds for resources.
    static constexpr int kParseError = -32700;
    static constexpr int kInvalidRequest = -32600;
    static constexpr int kMethodNotFound = -32601;
    static constexpr int kInvalidParams = -32602;
    static constexpr int kInternalError = -32603;
    static constexpr int kResourceNotFound = -32002;  // handshake revisions; -32602 since 2026-07-28
    // The codes the stateless revision (2026-07-28) adds.
    static constexpr int kHeaderMismatch = -32020;
    static constexpr int kUnsupportedProtocolVersion = -32022;

    // The revisions this server speaks through the initialize handshake, newest first. An
    // initialize asking for another one is answered with the first.
    static const QStringList &supportedVersions();
    // What a request that names no revision (no header, no session) is taken to speak, as the
    // Streamable HTTP transport says.
    static QString assumedVersion() { return QStringLiteral("2025-03-26"); }
    static bool isSupportedVersion(const QString &version);
    // The stateless revisions (no initialize, per-request _meta; McpRequestMeta), newest first.
    static const QStringList &statelessVersions();
    static bool isStatelessVersion(const QString &version);
    // Every revision this server speaks, newest first: what an unsupported one is told.
    static QStringList allVersions();

    // Whether a client speaking `version` that declared `capabilities` takes elicitation/create
    // in form mode: a revision from 2025-06-18 on (where elicitation began) and an "elicitation"
    // capability that names "form", or no mode at all, which means form.
    static bool takesFormElicitation(const QString &version, const QJsonObject &capabilities);

    enum class Kind { Request, Notification, Response, Invalid };
    // What `message` is: a request (method and an id that is a string or a number), a
    // notification (method, no id), a response (result or error, no method), or none of these;
    // then `why` says what is wrong.
    static Kind classify(const QJsonValue &message, QString *why = nullptr);

    // The request id as a key for maps: a string id and a number id never share a key.
    static QString idKey(const QJsonValue &id);

    static QJsonObject result(const QJsonValue &id, const QJsonObject &result);
    static QJsonObject error(const QJsonValue &id, int code, const QString &message,
                             const QJsonValue &data = QJsonValue::Undefined);
    static QJsonObject notification(const QString &method, const QJsonObject &params);

    static QByteArray compact(const QJsonObject &message);
};

} // namespace replhost::http
