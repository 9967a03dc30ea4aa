// SPDX-License-Identifier: Apache-2.0
#include "opensandboxerror.h"

#include "errorstatus.h"
#include "httpexchange.h"

#include <QTcpSocket>

namespace replhost::http {

QString OpenSandboxError::codeFor(const QString &replhostCode, const QString &notFoundCode)
{
    if (replhostCode == QLatin1String("not_found"))
        return notFoundCode;
    if (replhostCode == QLatin1String("bad_request"))
        return QStringLiteral("INVALID_REQUEST_BODY");
    if (replhostCode == QLatin1String("unknown_language") || replhostCode == QLatin1String("unsupported")
        || replhostCode == QLatin1String("not_implemented"))
        return QStringLiteral("NOT_SUPPORTED");
    if (replhostCode == QLatin1String("unauthorized"))
        return QStringLiteral("INVALID_API_KEY");
    return QStringLiteral("RUNTIME_ERROR");
}

void OpenSandboxError::send(HttpExchange &exchange, const Error &error, const QString &notFoundCode)
{
    const QString code = error.code.isEmpty() ? QStringLiteral("internal") : error.code;
    exchange.sendError(ErrorStatus::forCode(code), codeFor(code, notFoundCode), error.message);
}

void OpenSandboxError::missingQuery(HttpExchange &exchange, const QString &parameter)
{
    exchange.sendError(400, QStringLiteral("MISSING_QUERY"),
                       QStringLiteral("query parameter '%1' is required").arg(parameter));
}

void OpenSandboxError::sendEmptyOr(HttpExchange &exchange, const Result<void> &result,
                                   const QString &notFoundCode)
{
    if (result)
        exchange.sendEmpty(200);
    else
        send(exchange, result.error(), notFoundCode);
}

std::optional<JsonBody> OpenSandboxError::jsonBodyOf(HttpExchange &exchange)
{
    Result<JsonBody> json = JsonBody::parse(exchange.request().body);
    if (!json) {
        send(exchange, json.error());
        return std::nullopt;
    }
    return std::move(*json);
}

} // namespace replhost::http
