// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "connectionlimits.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace replhost::http {

// Follows the request stream of one HTTP/1.x connection byte by byte, without keeping bodies:
// it finds where each request's header block ends, checks it against the limits, then counts
// (and forgets) the body, by Content-Length or by chunked framing, to find where the next
// request starts.
//
// It is deliberately stricter than Qt HttpServer's own parser: whatever it cannot frame without
// ambiguity (duplicate or malformed Content-Length, Content-Length together with
// Transfer-Encoding, folded header lines, unknown transfer codings, chunked trailer fields) is
// rejected, so the two
// parsers never disagree about where a request ends.
//
// Memory: at most one header block (bounded by maxHeaderBytes) and one chunk-size line.
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
    };

    // Why a request was refused: an HTTP status, an error code word and a sentence.
    struct Rejection {
        int status = 400;
        QString code;
        QString message;
    };

    struct Step {
        enum class Kind { HeadComplete, Rejected };
        Kind kind = Kind::HeadComplete;
        Head head;             // for HeadComplete
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
    void finishHead(QList<Step> &steps);
    void reject(QList<Step> &steps, int status, const QString &code, const QString &message);

    ConnectionLimits m_limits;
    State m_state = State::Head;
    QByteArray m_buffer;        // the header block or the current chunk-size/trailer line
    qint64 m_remaining = 0;     // body or chunk bytes still to come
    qint64 m_bodyBytes = 0;     // chunked: body bytes so far
};

} // namespace replhost::http
