// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>
#include <QString>

namespace replhost::http {

// Parses the request stream of one HTTP/1.x connection: it finds where each request's header
// block ends, checks it against the limits, then collects the body, by Content-Length or by
// chunked framing (decoded), up to where the next request starts. It is the server's only HTTP
// parser: every byte of a request is looked at once.
//
// It is deliberately strict: whatever it cannot frame without ambiguity (duplicate or malformed
// Content-Length, Content-Length together with Transfer-Encoding, folded header lines, unknown
// transfer codings, chunked trailer fields) is rejected, so no proxy in front of the server can
// read a request's end differently.
//
// Memory: one header block (bounded by maxHeaderBytes) and one body (bounded by maxBodyBytes),
// until the request is complete; a body over the limit is refused from its length (or chunk
// size) before its bytes are kept.
// Threading: none; a plain value owned by its ConnectionGuard.
class RequestFramer {
public:
    struct Head {
        QByteArray method;
        QByteArray target;
        int httpMinor = 1;              // HTTP/1.<minor>
        bool wantsClose = false;        // "Connection: close", or HTTP/1.0 without keep-alive
        bool expectsContinue = false;   // "Expect: 100-continue" with a body to come
        bool chunked = false;
        qint64 contentLength = 0;       // 0 when chunked
        // Header fields in the order sent: names as sent, values without surrounding whitespace.
        QList<QPair<QByteArray, QByteArray>> fields;
    };

    // Why a request was refused: an HTTP status, an error code word and a sentence.
    struct Rejection {
        int status = 400;
        QString code;
        QString message;
    };

    // Every request gives HeadComplete (its head is known, its body may still be coming) and
    // then RequestComplete (with its body), unless it is rejected in between.
    struct Step {
        enum class Kind { HeadComplete, RequestComplete, Rejected };
        Kind kind = Kind::HeadComplete;
        Head head;             // for HeadComplete and RequestComplete
        QByteArray body;       // for RequestComplete: the body, chunked framing removed
        Rejection rejection;   // for Rejected
    };

    explicit RequestFramer(const ConnectionLimits &limits);

    // Consumes the next bytes of the connection and says what they completed, in order (several
    // pipelined requests may complete in one call). After a rejection every later byte is
    // ignored and nothing more is reported.
    QList<Step> feed(QByteArrayView data);

    // True when no request is partly received (between requests).
    bool atMessageBoundary() const;
    bool isRejected() const { return m_state == State::Rejected; }

private:
    enum class State { Head, Body, ChunkSize, ChunkData, ChunkDataEnd, Trailer, Rejected };

    qsizetype feedHead(QByteArrayView data, QList<Step> &steps);
    qsizetype feedLine(QByteArrayView data, QList<Step> &steps);
    void finishHead(QByteArrayView block, QList<Step> &steps);
    void completeRequest(QList<Step> &steps);
    void reject(QList<Step> &steps, int status, const QString &code, const QString &message);

    ConnectionLimits m_limits;
    State m_state = State::Head;
    QByteArray m_buffer;        // a header block split across reads, or the current chunk-size/trailer line
    Head m_head;                // the request whose body is being received
    QByteArray m_body;
    qint64 m_remaining = 0;     // body or chunk bytes still to come
    qint64 m_bodyBytes = 0;     // chunked: body bytes so far
};

} // namespace replhost::http
