// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"
#include "httpresponse.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace replhost::http {

// What the head check learnt from one request head.
struct RequestHead {
    QByteArray method;
    QByteArray target;              // the request-target as sent
    int httpMinor = 1;              // HTTP/1.<minor>
    HeaderList fields;              // names as sent, values without surrounding SP/HTAB
    qint64 contentLength = 0;       // 0 when chunked or absent
    bool chunked = false;
    bool wantsClose = false;        // "Connection: close", or HTTP/1.0 without keep-alive
    bool expectsContinue = false;   // "Expect: 100-continue" with a body to come
    qsizetype size = 0;             // bytes of the head, from the first byte to the blank line's end

    bool hasBody() const { return chunked || contentLength > 0; }
};

// Why a request was refused from its head: an HTTP status, an error code word and a sentence.
struct HeadRefusal {
    int status = 400;
    QString code;
    QString message;
    HeaderList headers;  // more fields of the answer (WWW-Authenticate, CORS)
};

// Looks at the bytes of a request head before Qt HttpServer parses it, and refuses what Qt 6.4's
// parser would accept although RFC 9112 forbids it, or would read differently from a proxy in
// front of the server (request smuggling): Content-Length together with Transfer-Encoding, more
// than one Content-Length, transfer codings other than "chunked", obs-fold, field names that are
// not tokens, control characters in values (NUL, bare CR, VT, FF...), lines ended by a bare LF,
// more than one Host, malformed request lines. It also applies the server's limits on the head's
// size and field count and on the announced body size. Qt 6.4 checks none of these; its parser
// reads a head one byte at a time, accepts LF line ends and any method, reads
// "Transfer-Encoding: xchunkedx" as chunked and buffers any body in full.
//
// It is not the server's parser: Qt HttpServer parses every request that passes. This check
// only finds the end of the head and reads what the server must decide on before a body is
// read (its framing, its size, and the fields the SecurityGate looks at).
//
// Threading: none; a pure function.
class HeadCheck {
public:
    enum class Outcome { Incomplete, Complete, Refused };
    struct Verdict {
        Outcome outcome = Outcome::Incomplete;
        RequestHead head;        // for Complete
        HeadRefusal refusal;     // for Refused
    };

    // `bytes` are what the connection holds from the start of a request (empty lines before a
    // request line are skipped, RFC 9112 §2.2). Incomplete: the head's end has not arrived yet
    // and nothing seen so far is refused; a head that cannot end within the limits is refused
    // without waiting for its end.
    static Verdict inspect(QByteArrayView bytes, const ConnectionLimits &limits);
};

} // namespace replhost::http
