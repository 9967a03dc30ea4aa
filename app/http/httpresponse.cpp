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

namespace {

// Writes the status line and the header fields, without the blank line, into one buffer sized
// once: an answer is a handful of short fields, and concatenating them piece by piece costs more
// than writing them.
QByteArray headLines(int status, const HeaderList &headers, qsizetype extra)
{
    const QByteArray reason = HttpResponse::reasonPhrase(status);
    qsizetype size = 9 + 3 + 1 + reason.size() + 2 + extra;
    for (const auto &[name, value] : headers)
        size += name.size() + 2 + value.size() + 2;
    QByteArray out;
    out.reserve(size);
    out += "HTTP/1.1 ";
    out += QByteArray::number(status);
    out += ' ';
    out += reason;
    out += "\r\n";
    for (const auto &[name, value] : headers) {
        out += name;
        out += ": ";
        out += value;
        out += "\r\n";
    }
    return out;
}

} // namespace

QByteArray HttpResponse::head(int status, const HeaderList &headers)
{
    QByteArray out = headLines(status, headers, 2);
    out += "\r\n";
    return out;
}

QByteArray HttpResponse::full(int status, const HeaderList &headers, const QByteArray &body)
{
    const QByteArray length = QByteArray::number(body.size());
    QByteArray out = headLines(status, headers, 16 + length.size() + 4 + body.size());
    out += "Content-Length: ";
    out += length;
    out += "\r\n\r\n";
    out += body;
    return out;
}

QByteArray HttpResponse::errorBody(const QString &code, const QString &message)
{
    const QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    return QJsonDocument(error).toJson(QJsonDocument::Compact) + '\n';
}

} // namespace replhost::http
