// SPDX-License-Identifier: Apache-2.0
#include "httpresponse.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <charconv>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <initializer_list>

namespace replhost::http {

namespace {

// Static text, so that writing a head allocates nothing but the head.
const char *reason(int status)
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

qsizetype fieldsSize(const HeaderList &headers)
{
    qsizetype size = 0;
    for (const auto &[name, value] : headers)
        size += name.size() + 2 + value.size() + 2;
    return size;
}

// Copies `piece` to `at` and returns the end of the copy.
char *put(char *at, QByteArrayView piece)
{
    if (piece.isEmpty())
        return at;  // an empty view may have no data pointer at all
    std::memcpy(at, piece.data(), size_t(piece.size()));
    return at + piece.size();
}

char *putFields(char *at, const HeaderList &headers)
{
    for (const auto &[name, value] : headers)
        at = put(put(put(put(at, name), ": "), value), "\r\n");
    return at;
}

// Writes the status line and the header fields, and `tail` after them, into one array sized
// once and written through a pointer: an answer is a handful of short fields, and appending them
// piece by piece cost more than the bytes.
QByteArray headLines(int status, const HeaderList &headers,
                     std::initializer_list<QByteArrayView> tail)
{
    const QByteArrayView phrase(reason(status));
    char code[12];
    const QByteArrayView number(code, std::to_chars(code, code + sizeof code, status).ptr - code);
    qsizetype size = 9 + number.size() + 1 + phrase.size() + 2 + fieldsSize(headers);
    for (const QByteArrayView piece : tail)
        size += piece.size();
    QByteArray out(size, Qt::Uninitialized);
    char *at = put(put(put(put(put(out.data(), "HTTP/1.1 "), number), " "), phrase), "\r\n");
    at = putFields(at, headers);
    for (const QByteArrayView piece : tail)
        at = put(at, piece);
    return out;
}

// The head with Content-Length, and `body` (which may be left to the caller) after it.
QByteArray withLength(int status, const HeaderList &headers, qint64 contentLength,
                      QByteArrayView body)
{
    char length[24];
    const QByteArrayView lengthText(
            length, std::to_chars(length, length + sizeof length, contentLength).ptr - length);
    return headLines(status, headers, {"Content-Length: ", lengthText, "\r\n\r\n", body});
}

} // namespace

QByteArray HttpResponse::full(int status, const HeaderList &headers, const QByteArray &body)
{
    return withLength(status, headers, body.size(), body);
}

QByteArray HttpResponse::fieldLines(const HeaderList &first, const HeaderList &second)
{
    QByteArray out(fieldsSize(first) + fieldsSize(second), Qt::Uninitialized);
    putFields(putFields(out.data(), first), second);
    return out;
}

QByteArray HttpResponse::date()
{
    // Formatted by hand: strftime's names follow the process's locale, which Qt sets from the
    // environment.
    static constexpr const char *kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char *kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    thread_local std::time_t cachedSecond = -1;
    thread_local QByteArray cached;
    const std::time_t now = std::time(nullptr);
    if (now != cachedSecond) {
        std::tm utc{};
        gmtime_r(&now, &utc);
        char text[32];
        std::snprintf(text, sizeof text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[utc.tm_wday],
                      utc.tm_mday, kMonths[utc.tm_mon], utc.tm_year + 1900, utc.tm_hour,
                      utc.tm_min, utc.tm_sec);
        cached = QByteArray(text);
        cachedSecond = now;
    }
    return cached;
}

QByteArray HttpResponse::errorBody(const QString &code, const QString &message)
{
    const QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    return QJsonDocument(error).toJson(QJsonDocument::Compact) + '\n';
}

QByteArray HttpResponse::requestId(const HeaderList &requestFields)
{
    static constexpr QByteArrayView kName("x-request-id");
    for (const auto &[name, value] : requestFields) {
        if (name.size() != kName.size() || QByteArrayView(name).compare(kName, Qt::CaseInsensitive) != 0)
            continue;
        if (value.isEmpty() || value.size() > 256)
            return {};
        for (const char c : value) {
            if (c < 0x20 || c > 0x7e)
                return {};
        }
        return value;
    }
    return {};
}

} // namespace replhost::http
