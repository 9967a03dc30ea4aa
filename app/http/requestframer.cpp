// SPDX-License-Identifier: Apache-2.0
#include "requestframer.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace replhost::http {

namespace {

constexpr qsizetype kMaxChunkLine = 1024;

bool isDigits(QByteArrayView v)
{
    return !v.isEmpty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool isHexDigits(QByteArrayView v)
{
    return !v.isEmpty() && std::all_of(v.begin(), v.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
}

QByteArrayView withoutCr(QByteArrayView line)
{
    return line.endsWith('\r') ? line.chopped(1) : line;
}

} // namespace

RequestFramer::RequestFramer(const ConnectionLimits &limits) : m_limits(limits) {}

bool RequestFramer::atMessageBoundary() const
{
    return m_state == State::Head && m_buffer.isEmpty();
}

QList<RequestFramer::Step> RequestFramer::feed(QByteArrayView data)
{
    QList<Step> steps;
    qsizetype i = 0;
    while (i < data.size() && m_state != State::Rejected) {
        const QByteArrayView rest = data.sliced(i);
        switch (m_state) {
        case State::Head:
            i += feedHead(rest, steps);
            break;
        case State::Body: {
            const qsizetype n = qsizetype(std::min<qint64>(m_remaining, rest.size()));
            m_remaining -= n;
            i += n;
            if (m_remaining == 0)
                m_state = State::Head;
            break;
        }
        case State::ChunkSize:
        case State::Trailer:
            i += feedLine(rest, steps);
            break;
        case State::ChunkData: {
            const qsizetype n = qsizetype(std::min<qint64>(m_remaining, rest.size()));
            m_remaining -= n;
            i += n;
            if (m_remaining == 0) {
                m_state = State::ChunkDataEnd;
                m_buffer.clear();
            }
            break;
        }
        case State::ChunkDataEnd: {
            // Each chunk's data is followed by CRLF (a bare LF is tolerated, as Qt does).
            const char c = rest.front();
            ++i;
            if (c == '\r' && m_buffer.isEmpty()) {
                m_buffer.append(c);
            } else if (c == '\n') {
                m_buffer.clear();
                m_state = State::ChunkSize;
            } else {
                reject(steps, 400, QStringLiteral("bad_request"),
                       QStringLiteral("malformed chunked request body: chunk data not followed by CRLF"));
            }
            break;
        }
        case State::Rejected:
            break;
        }
    }
    return steps;
}

qsizetype RequestFramer::feedHead(QByteArrayView data, QList<Step> &steps)
{
    qsizetype skipped = 0;
    if (m_buffer.isEmpty()) {
        // Empty lines before a request line are allowed (RFC 9112 §2.2) and Qt skips them too.
        while (skipped < data.size() && (data[skipped] == '\r' || data[skipped] == '\n'))
            ++skipped;
        data = data.sliced(skipped);
        if (data.isEmpty())
            return skipped;
    }

    // Take no more than can still fit, plus the terminator, so a flood never grows the buffer.
    const qsizetype room = std::max<qsizetype>(0, m_limits.maxHeaderBytes + 4 - m_buffer.size());
    const qsizetype take = std::min(room, data.size());
    const qsizetype searchFrom = std::max<qsizetype>(0, m_buffer.size() - 3);
    m_buffer.append(data.first(take));

    qsizetype end = -1;
    const qsizetype crlf = m_buffer.indexOf("\n\r\n", searchFrom);
    const qsizetype lf = m_buffer.indexOf("\n\n", searchFrom);
    if (crlf >= 0)
        end = crlf + 3;
    if (lf >= 0 && (end < 0 || lf + 2 < end))
        end = lf + 2;

    if (end < 0) {
        if (m_buffer.size() > m_limits.maxHeaderBytes) {
            reject(steps, 431, QStringLiteral("header_fields_too_large"),
                   QStringLiteral("request header block is larger than %1 bytes")
                           .arg(m_limits.maxHeaderBytes));
        }
        return skipped + take;
    }

    const qsizetype consumed = take - (m_buffer.size() - end);
    m_buffer.truncate(end);
    if (m_buffer.size() > m_limits.maxHeaderBytes) {
        reject(steps, 431, QStringLiteral("header_fields_too_large"),
               QStringLiteral("request header block is larger than %1 bytes")
                       .arg(m_limits.maxHeaderBytes));
        return skipped + consumed;
    }
    finishHead(steps);
    return skipped + consumed;
}

void RequestFramer::finishHead(QList<Step> &steps)
{
    const QByteArray block = std::exchange(m_buffer, {});
    const QList<QByteArray> lines = block.split('\n');

    Head head;
    {
        QList<QByteArray> parts = withoutCr(lines.front()).toByteArray().split(' ');
        parts.removeAll(QByteArray());
        if (parts.size() != 3) {
            reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("malformed request line"));
            return;
        }
        head.method = parts[0];
        head.target = parts[1];
        if (parts[2] == "HTTP/1.1") {
            head.httpMinor = 1;
        } else if (parts[2] == "HTTP/1.0") {
            head.httpMinor = 0;
        } else {
            reject(steps, 400, QStringLiteral("bad_request"),
                   QStringLiteral("unsupported protocol version; use HTTP/1.1"));
            return;
        }
    }

    int fields = 0;
    int hostFields = 0;
    bool haveLength = false;
    bool haveEncoding = false;
    bool keepAlive = false;
    bool close = false;
    bool expectContinue = false;
    qint64 length = 0;

    for (qsizetype n = 1; n < lines.size(); ++n) {
        const QByteArrayView line = withoutCr(lines[n]);
        if (line.isEmpty())
            continue;  // the terminating blank line(s)
        if (line.front() == ' ' || line.front() == '\t') {
            reject(steps, 400, QStringLiteral("bad_request"),
                   QStringLiteral("folded header lines are not supported"));
            return;
        }
        if (++fields > m_limits.maxHeaderCount) {
            reject(steps, 431, QStringLiteral("header_fields_too_large"),
                   QStringLiteral("more than %1 request header fields").arg(m_limits.maxHeaderCount));
            return;
        }
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0 || line.first(colon).contains(' ') || line.first(colon).contains('\t')) {
            reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("malformed header line"));
            return;
        }
        const QByteArray name = line.first(colon).toByteArray().toLower();
        const QByteArray value = line.sliced(colon + 1).toByteArray().trimmed();

        if (name == "content-length") {
            if (!isDigits(value)) {
                reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("malformed Content-Length"));
                return;
            }
            const qint64 v = value.size() > 18 ? std::numeric_limits<qint64>::max() : value.toLongLong();
            if (haveLength && v != length) {
                reject(steps, 400, QStringLiteral("bad_request"),
                       QStringLiteral("conflicting Content-Length fields"));
                return;
            }
            haveLength = true;
            length = v;
        } else if (name == "transfer-encoding") {
            if (haveEncoding || value.toLower() != "chunked") {
                reject(steps, 501, QStringLiteral("not_implemented"),
                       QStringLiteral("only the chunked transfer coding is supported"));
                return;
            }
            haveEncoding = true;
        } else if (name == "connection") {
            for (const QByteArray &token : value.split(',')) {
                const QByteArray t = token.trimmed().toLower();
                close = close || t == "close";
                keepAlive = keepAlive || t == "keep-alive";
            }
        } else if (name == "expect") {
            expectContinue = value.toLower() == "100-continue";
        } else if (name == "upgrade") {
            // Qt would hand a WebSocket upgrade to a code path we do not serve; refuse it here.
            if (value.toLower().contains("websocket")) {
                reject(steps, 400, QStringLiteral("bad_request"),
                       QStringLiteral("WebSocket upgrades are not supported"));
                return;
            }
        } else if (name == "host") {
            if (++hostFields > 1) {
                reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("more than one Host field"));
                return;
            }
        }
    }

    if (haveLength && haveEncoding) {
        reject(steps, 400, QStringLiteral("bad_request"),
               QStringLiteral("Content-Length and Transfer-Encoding must not be combined"));
        return;
    }
    if (length > m_limits.maxBodyBytes) {
        reject(steps, 413, QStringLiteral("payload_too_large"),
               QStringLiteral("request body of %1 bytes is larger than the limit of %2 bytes")
                       .arg(length).arg(m_limits.maxBodyBytes));
        return;
    }

    head.chunked = haveEncoding;
    head.contentLength = haveEncoding ? 0 : length;
    head.wantsClose = head.httpMinor == 0 ? !keepAlive : close;
    head.expectsContinue = expectContinue && (head.chunked || head.contentLength > 0);

    Step step;
    step.kind = Step::Kind::HeadComplete;
    step.head = head;
    steps.append(step);

    if (head.chunked) {
        m_state = State::ChunkSize;
        m_bodyBytes = 0;
    } else if (head.contentLength > 0) {
        m_state = State::Body;
        m_remaining = head.contentLength;
    } else {
        m_state = State::Head;
    }
}

qsizetype RequestFramer::feedLine(QByteArrayView data, QList<Step> &steps)
{
    const qsizetype nl = data.indexOf('\n');
    const qsizetype take = nl >= 0 ? nl + 1 : data.size();
    if (m_buffer.size() + take > kMaxChunkLine + 2) {
        reject(steps, 400, QStringLiteral("bad_request"),
               m_state == State::ChunkSize ? QStringLiteral("chunk size line too long")
                                           : QStringLiteral("trailer fields in chunked requests are not supported"));
        return take;
    }
    m_buffer.append(data.first(take));
    if (nl < 0)
        return take;

    const QByteArray line = std::exchange(m_buffer, {});
    const QByteArrayView content = withoutCr(QByteArrayView(line).chopped(1));

    if (m_state == State::Trailer) {
        if (!content.isEmpty()) {
            // Qt 6.4's parser mistakes trailer fields for the next request; refuse them rather
            // than disagree with it about where this request ends.
            reject(steps, 400, QStringLiteral("bad_request"),
                   QStringLiteral("trailer fields in chunked requests are not supported"));
            return take;
        }
        m_state = State::Head;  // the request is complete
        return take;
    }

    QByteArrayView size = content;
    if (const qsizetype semi = size.indexOf(';'); semi >= 0)
        size = size.first(semi);  // chunk extensions are ignored
    const QByteArray hex = size.toByteArray().trimmed();
    if (!isHexDigits(hex)) {
        reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("malformed chunk size"));
        return take;
    }
    const qint64 chunk = hex.size() > 15 ? std::numeric_limits<qint64>::max() : hex.toLongLong(nullptr, 16);
    if (chunk > m_limits.maxBodyBytes - m_bodyBytes) {
        reject(steps, 413, QStringLiteral("payload_too_large"),
               QStringLiteral("request body is larger than the limit of %1 bytes")
                       .arg(m_limits.maxBodyBytes));
        return take;
    }
    if (chunk == 0) {
        m_state = State::Trailer;
    } else {
        m_bodyBytes += chunk;
        m_remaining = chunk;
        m_state = State::ChunkData;
    }
    return take;
}

void RequestFramer::reject(QList<Step> &steps, int status, const QString &code, const QString &message)
{
    m_state = State::Rejected;
    m_buffer.clear();
    Step step;
    step.kind = Step::Kind::Rejected;
    step.rejection = Rejection{status, code, message};
    steps.append(step);
}

} // namespace replhost::http
