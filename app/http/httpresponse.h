// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace replhost::http {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// Serializes HTTP/1.1 responses. Every write of one must first check that the socket is still
// there (see HttpExchange).
class HttpResponse {
public:
    // "HTTP/1.1 <status> <reason>\r\n" + headers + "\r\n". The caller adds Content-Length or
    // Transfer-Encoding.
    static QByteArray head(int status, const HeaderList &headers);
    // The head of a complete response whose body of `contentLength` bytes is sent separately:
    // the headers, then Content-Length.
    static QByteArray head(int status, const HeaderList &headers, qint64 contentLength);

    // A complete response with a body (Content-Length is added).
    static QByteArray full(int status, const HeaderList &headers, const QByteArray &body);

    // The body of every error this server sends: {"code": ..., "message": ...} and a newline.
    static QByteArray errorBody(const QString &code, const QString &message);
};

} // namespace replhost::http
