// SPDX-License-Identifier: Apache-2.0
#include "mcpmessage.h"

#include <QJsonDocument>

namespace replhost::http {

const QStringList &McpMessage::supportedVersions()
{
    // The revisions that negotiate through initialize; 2025-11-25 is what the official
    // TypeScript SDK 1.32 asks for.
    static const QStringList versions{QStringLiteral("2025-11-25"), QStringLiteral("2025-06-18"),
                                      QStringLiteral("2025-03-26")};
    return versions;
}

bool McpMessage::isSupportedVersion(const QString &version)
{
    return supportedVersions().contains(version);
}

const QStringList &McpMessage::statelessVersions()
{
    static const QStringList versions{QStringLiteral("2026-07-28")};
    return versions;
}

bool McpMessage::isStatelessVersion(const QString &version)
{
    return statelessVersions().contains(version);
}

QStringList McpMessage::allVersions()
{
    return statelessVersions() + supportedVersions();
}

bool McpMessage::takesFormElicitation(const QString &version, const QJsonObject &capabilities)
{
    const QJsonValue elicitation = capabilities.value(QLatin1String("elicitation"));
    if (version < QLatin1String("2025-06-18") || !elicitation.isObject())
        return false;
    const QJsonObject modes = elicitation.toObject();
    return modes.contains(QLatin1String("form")) || !modes.contains(QLatin1String("url"));
}

McpMessage::Kind McpMessage::classify(const QJsonValue &message, QString *why)
{
    const auto invalid = [why](const QString &reason) {
        if (why)
            *why = reason;
        return Kind::Invalid;
    };
    if (!message.isObject())
        return invalid(QStringLiteral("a JSON-RPC message must be an object"));
    const QJsonObject object = message.toObject();
    if (object.value(QLatin1String("jsonrpc")) != QLatin1String("2.0"))
        return invalid(QStringLiteral("\"jsonrpc\" must be \"2.0\""));
    const QJsonValue id = object.value(QLatin1String("id"));
    const bool hasId = object.contains(QLatin1String("id"));
    if (hasId && !id.isString() && !id.isDouble())
        return invalid(QStringLiteral("\"id\" must be a string or a number"));
    if (object.contains(QLatin1String("method"))) {
        if (!object.value(QLatin1String("method")).isString())
            return invalid(QStringLiteral("\"method\" must be a string"));
        const QJsonValue params = object.value(QLatin1String("params"));
        if (!params.isUndefined() && !params.isObject())
            return invalid(QStringLiteral("\"params\" must be an object"));
        return hasId ? Kind::Request : Kind::Notification;
    }
    if (hasId && (object.contains(QLatin1String("result")) || object.contains(QLatin1String("error"))))
        return Kind::Response;
    return invalid(QStringLiteral("a message needs \"method\" (a request or a notification) or "
                                  "\"id\" with \"result\" or \"error\" (a response)"));
}

QString McpMessage::idKey(const QJsonValue &id)
{
    if (id.isString())
        return QLatin1Char('s') + id.toString();
    return QLatin1Char('n') + QString::number(id.toDouble(), 'g', 17);
}

QJsonObject McpMessage::result(const QJsonValue &id, const QJsonObject &result)
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id},
            {QStringLiteral("result"), result}};
}

QJsonObject McpMessage::error(const QJsonValue &id, int code, const QString &message,
                              const QJsonValue &data)
{
    QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    if (!data.isUndefined())
        error.insert(QStringLiteral("data"), data);
    // An error about a message whose id could not be read has "id": null.
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id.isUndefined() ? QJsonValue(QJsonValue::Null) : id},
            {QStringLiteral("error"), error}};
}

QJsonObject McpMessage::notification(const QString &method, const QJsonObject &params)
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("method"), method},
            {QStringLiteral("params"), params}};
}

QByteArray McpMessage::compact(const QJsonObject &message)
{
    return QJsonDocument(message).toJson(QJsonDocument::Compact);
}

} // namespace replhost::http
