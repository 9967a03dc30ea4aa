// SPDX-License-Identifier: Apache-2.0
#include "httpresponse.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace replhost::http {

QByteArray HttpResponse::reasonPhrase(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 423: return "Locked";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error";
    }
}

QByteArray HttpResponse::head(int status, const HeaderList &headers)
{
    QByteArray out;
    out.reserve(256);
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    for (const auto &[name, value] : headers)
        out += name + ": " + value + "\r\n";
    out += "\r\n";
    return out;
}

QByteArray HttpResponse::full(int status, const HeaderList &headers, const QByteArray &body)
{
    HeaderList all = headers;
    all.emplaceBack("Content-Length", QByteArray::number(body.size()));
    return head(status, all) + body;
}

QByteArray HttpResponse::errorBody(const QString &code, const QString &message)
{
    const QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    return QJsonDocument(error).toJson(QJsonDocument::Compact) + '\n';
}

} // namespace replhost::http
