// SPDX-License-Identifier: Apache-2.0
#include "mcprequestmeta.h"

#include "httprequest.h"
#include "mcpmessage.h"

#include <QJsonArray>

namespace replhost::http {

namespace {

QJsonObject metaOf(const QJsonObject &message)
{
    return message.value(QLatin1String("params")).toObject().value(QLatin1String("_meta")).toObject();
}

McpRequestMeta::Refusal headerMismatch(const QString &why)
{
    return {400, McpMessage::kHeaderMismatch, QStringLiteral("Header mismatch: ") + why, QJsonValue::Undefined};
}

// The body value a method's Mcp-Name mirrors, or nothing for a method without one.
std::optional<QString> nameSource(const QJsonObject &message)
{
    const QString method = message.value(QLatin1String("method")).toString();
    const QJsonObject params = message.value(QLatin1String("params")).toObject();
    if (method == QLatin1String("tools/call") || method == QLatin1String("prompts/get"))
        return params.value(QLatin1String("name")).toString();
    if (method == QLatin1String("resources/read"))
        return params.value(QLatin1String("uri")).toString();
    return std::nullopt;
}

} // namespace

std::optional<QString> McpRequestMeta::version(const QJsonObject &message)
{
    const QJsonValue value = metaOf(message).value(QLatin1String(kProtocolVersion));
    if (!value.isString())
        return std::nullopt;
    return value.toString();
}

bool McpRequestMeta::isStateless(const QJsonObject &message, const QString &headerVersion)
{
    if (message.value(QLatin1String("method")) == QLatin1String("initialize"))
        return false;
    return McpMessage::isStatelessVersion(headerVersion) || version(message).has_value();
}

std::optional<McpRequestMeta::Refusal> McpRequestMeta::check(const QJsonObject &message, const HttpRequest *http)
{
    const std::optional<QString> named = version(message);
    if (!named) {
        return Refusal{400, McpMessage::kInvalidParams,
                       QStringLiteral("a request of revision %1 carries params._meta[\"%2\"]")
                               .arg(McpMessage::statelessVersions().first(), QLatin1String(kProtocolVersion))};
    }
    if (!McpMessage::isStatelessVersion(*named)) {
        // A handshake revision named per request is not served that way: it needs initialize.
        return Refusal{400, McpMessage::kUnsupportedProtocolVersion,
                       McpMessage::isSupportedVersion(*named)
                               ? QStringLiteral("Unsupported protocol version: %1 is spoken after initialize, "
                                                "without a per-request revision").arg(*named)
                               : QStringLiteral("Unsupported protocol version"),
                       QJsonObject{{QStringLiteral("supported"), QJsonArray::fromStringList(McpMessage::allVersions())},
                                   {QStringLiteral("requested"), *named}}};
    }
    if (!metaOf(message).value(QLatin1String(kClientCapabilities)).isObject()) {
        return Refusal{400, McpMessage::kInvalidParams,
                       QStringLiteral("a request of revision %1 carries params._meta[\"%2\"], an object (empty "
                                      "when the client declares no capabilities)")
                               .arg(*named, QLatin1String(kClientCapabilities))};
    }
    if (!http)
        return std::nullopt;

    const QByteArray headerVersion = http->header("mcp-protocol-version").trimmed();
    if (headerVersion.isEmpty())
        return headerMismatch(QStringLiteral("the MCP-Protocol-Version header is missing"));
    if (QString::fromLatin1(headerVersion) != *named) {
        return headerMismatch(QStringLiteral("MCP-Protocol-Version header value '%1' does not match body value '%2'")
                                      .arg(QString::fromLatin1(headerVersion), *named));
    }
    const QString method = message.value(QLatin1String("method")).toString();
    const QByteArray methodHeader = http->header("mcp-method");
    if (methodHeader.isEmpty())
        return headerMismatch(QStringLiteral("the Mcp-Method header is missing"));
    if (QString::fromLatin1(methodHeader) != method) {
        return headerMismatch(QStringLiteral("Mcp-Method header value '%1' does not match body value '%2'")
                                      .arg(QString::fromLatin1(methodHeader), method));
    }
    if (const std::optional<QString> source = nameSource(message)) {
        const QByteArray nameHeader = http->header("mcp-name");
        if (nameHeader.isEmpty())
            return headerMismatch(QStringLiteral("the Mcp-Name header is missing (%1 needs it)").arg(method));
        const std::optional<QString> name = decodeHeaderValue(nameHeader);
        if (!name)
            return headerMismatch(QStringLiteral("the Mcp-Name header holds characters a header cannot carry; "
                                                 "send =?base64?…?= for such a value"));
        if (*name != *source) {
            return headerMismatch(QStringLiteral("Mcp-Name header value '%1' does not match body value '%2'")
                                          .arg(*name, *source));
        }
    }
    return std::nullopt;
}

std::optional<QString> McpRequestMeta::decodeHeaderValue(const QByteArray &value)
{
    static constexpr QByteArrayView kPrefix("=?base64?");
    static constexpr QByteArrayView kSuffix("?=");
    if (value.startsWith(kPrefix) && value.endsWith(kSuffix) && value.size() >= kPrefix.size() + kSuffix.size()) {
        const QByteArray encoded = value.sliced(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
        const auto decoded = QByteArray::fromBase64Encoding(encoded, QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded)
            return std::nullopt;
        const QString text = QString::fromUtf8(*decoded);
        if (text.toUtf8() != *decoded)
            return std::nullopt;  // not UTF-8
        return text;
    }
    for (const char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if (!(byte == '\t' || (byte >= 0x20 && byte <= 0x7e)))
            return std::nullopt;
    }
    return QString::fromLatin1(value);
}

} // namespace replhost::http
