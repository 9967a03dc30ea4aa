// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace replhost::http {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// Serializes the HTTP/1.1 responses the server writes without Qt HttpServer's responder: those
// to requests refused from their head, which Qt never parsed (see ConnectionGuard), and the
// header fields of the answers written through it (GuardedResponder::writeHeaders). Every write
// of one must first check that the socket is still there.
class HttpResponse {
public:
    // A complete response with a body (Content-Length is added after `headers`).
    static QByteArray full(int status, const HeaderList &headers, const QByteArray &body);

    // The fields of `first` and then `second` as a head carries them ("Name: value\r\n" each),
    // in one array sized once.
    static QByteArray fieldLines(const HeaderList &first, const HeaderList &second);

    // The current time as an HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 §5.6.7), for
    // the Date field of every answer. Made once a second. Threading: the thread that calls it.
    static QByteArray date();

    // The body of every error this server sends: {"code": ..., "message": ...} and a newline.
    static QByteArray errorBody(const QString &code, const QString &message);

    // The request's X-Request-ID as every answer to it echoes it (success, error, stream or a
    // refusal from the head), so a client can match an answer to what it sent, as OpenSandbox's
    // SDKs do in their errors. Empty when the request has none, or one longer than 256 bytes or
    // with bytes other than visible ASCII and spaces, which is then not repeated.
    static QByteArray requestId(const HeaderList &requestFields);
};

} // namespace replhost::http
