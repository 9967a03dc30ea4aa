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

// Where the header block that starts `data` ends (just after its blank line: "\n\r\n" or
// "\n\n"), searching from `from`; -1 when it has not arrived yet.
qsizetype headEnd(QByteArrayView data, qsizetype from)
{
    for (qsizetype nl = data.indexOf('\n', from); nl >= 0; nl = data.indexOf('\n', nl + 1)) {
        if (nl + 1 < data.size() && data[nl + 1] == '\n')
            return nl + 2;
        if (nl + 2 < data.size() && data[nl + 1] == '\r' && data[nl + 2] == '\n')
            return nl + 3;
    }
    return -1;
}

// The most room set aside for a body before its bytes arrive.
constexpr qint64 kBodyReserveBytes = 1024 * 1024;

bool equalsLower(QByteArrayView value, QByteArrayView lower)
{
    return value.size() == lower.size() && value.compare(lower, Qt::CaseInsensitive) == 0;
}

// `text` as a QByteArray, shared with a static one when it is a method, header name or value
// that clients send on every request: a head would otherwise allocate for each of them. Only an
// exact match is shared, since names are kept as sent.
QByteArray sharedText(QByteArrayView text)
{
    static const QByteArray common[] = {
        QByteArrayLiteral("GET"), QByteArrayLiteral("POST"), QByteArrayLiteral("PATCH"),
        QByteArrayLiteral("DELETE"), QByteArrayLiteral("Host"), QByteArrayLiteral("Authorization"),
        QByteArrayLiteral("Content-Type"), QByteArrayLiteral("Content-Length"),
        QByteArrayLiteral("Accept"), QByteArrayLiteral("User-Agent"),
        QByteArrayLiteral("Connection"), QByteArrayLiteral("Accept-Encoding"),
        QByteArrayLiteral("application/json"), QByteArrayLiteral("keep-alive"),
        QByteArrayLiteral("*/*")};
    for (const QByteArray &known : common) {
        if (known.size() == text.size() && QByteArrayView(known) == text)
            return known;
    }
    return text.toByteArray();
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
    steps.reserve(2);  // a request that arrives whole: its head, then the request
    qsizetype i = 0;
    while (i < data.size() && m_state != State::Rejected) {
        const QByteArrayView rest = data.sliced(i);
        switch (m_state) {
        case State::Head:
            i += feedHead(rest, steps);
            break;
        case State::Body: {
            const qsizetype n = qsizetype(std::min<qint64>(m_remaining, rest.size()));
            m_body.append(rest.first(n));
            m_remaining -= n;
            i += n;
            if (m_remaining == 0)
                completeRequest(steps);
            break;
        }
        case State::ChunkSize:
        case State::Trailer:
            i += feedLine(rest, steps);
            break;
        case State::ChunkData: {
            const qsizetype n = qsizetype(std::min<qint64>(m_remaining, rest.size()));
            m_body.append(rest.first(n));
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
        // Empty lines before a request line are allowed (RFC 9112 §2.2).
        while (skipped < data.size() && (data[skipped] == '\r' || data[skipped] == '\n'))
            ++skipped;
        data = data.sliced(skipped);
        if (data.isEmpty())
            return skipped;
        // The usual case: the whole head arrived in one read, so it is parsed where it lies.
        const qsizetype end = headEnd(data, 0);
        if (end >= 0 && end <= m_limits.maxHeaderBytes) {
            finishHead(data.first(end), steps);
            return skipped + end;
        }
    }

    // Take no more than can still fit, plus the terminator, so a flood never grows the buffer.
    const qsizetype room = std::max<qsizetype>(0, m_limits.maxHeaderBytes + 4 - m_buffer.size());
    const qsizetype take = std::min(room, data.size());
    const qsizetype searchFrom = std::max<qsizetype>(0, m_buffer.size() - 3);
    m_buffer.append(data.first(take));

    const qsizetype end = headEnd(m_buffer, searchFrom);
    if (end < 0) {
        if (m_buffer.size() > m_limits.maxHeaderBytes) {
            reject(steps, 431, QStringLiteral("header_fields_too_large"),
                   QStringLiteral("request header block is larger than %1 bytes")
                           .arg(m_limits.maxHeaderBytes));
        }
        return skipped + take;
    }

    const qsizetype consumed = take - (m_buffer.size() - end);
    if (end > m_limits.maxHeaderBytes) {
        reject(steps, 431, QStringLiteral("header_fields_too_large"),
               QStringLiteral("request header block is larger than %1 bytes")
                       .arg(m_limits.maxHeaderBytes));
        return skipped + consumed;
    }
    const QByteArray block = std::exchange(m_buffer, {}).first(end);
    finishHead(block, steps);
    return skipped + consumed;
}

void RequestFramer::finishHead(QByteArrayView block, QList<Step> &steps)
{
    qsizetype lineEnd = block.indexOf('\n');
    Head head;
    // Room for a usual request's fields at once, instead of growing the list field by field.
    head.fields.reserve(12);
    {
        // Request line: method, target and version, separated by (runs of) spaces.
        const QByteArrayView line = withoutCr(block.first(lineEnd));
        QByteArrayView parts[3];
        int count = 0;
        for (qsizetype at = 0; at < line.size();) {
            if (line[at] == ' ') {
                ++at;
                continue;
            }
            qsizetype space = line.indexOf(' ', at);
            if (space < 0)
                space = line.size();
            if (count == 3) {
                count = 4;
                break;
            }
            parts[count++] = line.sliced(at, space - at);
            at = space;
        }
        if (count != 3) {
            reject(steps, 400, QStringLiteral("bad_request"), QStringLiteral("malformed request line"));
            return;
        }
        head.method = sharedText(parts[0]);
        head.target = parts[1].toByteArray();
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

    while (lineEnd + 1 < block.size()) {
        const qsizetype start = lineEnd + 1;
        lineEnd = block.indexOf('\n', start);
        if (lineEnd < 0)
            lineEnd = block.size();
        const QByteArrayView line = withoutCr(block.sliced(start, lineEnd - start));
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
        const QByteArrayView name = line.first(colon);
        const QByteArrayView value = line.sliced(colon + 1).trimmed();
        head.fields.emplaceBack(sharedText(name), sharedText(value));

        if (equalsLower(name, "content-length")) {
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
        } else if (equalsLower(name, "transfer-encoding")) {
            if (haveEncoding || !equalsLower(value, "chunked")) {
                reject(steps, 501, QStringLiteral("not_implemented"),
                       QStringLiteral("only the chunked transfer coding is supported"));
                return;
            }
            haveEncoding = true;
        } else if (equalsLower(name, "connection")) {
            for (qsizetype at = 0; at <= value.size();) {
                qsizetype comma = value.indexOf(',', at);
                if (comma < 0)
                    comma = value.size();
                const QByteArrayView token = value.sliced(at, comma - at).trimmed();
                close = close || equalsLower(token, "close");
                keepAlive = keepAlive || equalsLower(token, "keep-alive");
                at = comma + 1;
            }
        } else if (equalsLower(name, "expect")) {
            expectContinue = equalsLower(value, "100-continue");
        } else if (equalsLower(name, "upgrade")) {
            // A WebSocket upgrade asks for a protocol this server does not speak.
            if (value.toByteArray().toLower().contains("websocket")) {
                reject(steps, 400, QStringLiteral("bad_request"),
                       QStringLiteral("WebSocket upgrades are not supported"));
                return;
            }
        } else if (equalsLower(name, "host")) {
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
    steps.append(std::move(step));

    m_head = std::move(head);
    m_body.clear();
    if (m_head.chunked) {
        m_state = State::ChunkSize;
        m_bodyBytes = 0;
    } else if (m_head.contentLength > 0) {
        m_state = State::Body;
        m_remaining = m_head.contentLength;
        // Room for a body of the usual size at once; a large one grows as it really arrives, so
        // a client cannot make the server set aside the whole limit by announcing it.
        m_body.reserve(std::min<qint64>(m_head.contentLength, kBodyReserveBytes));
    } else {
        completeRequest(steps);
    }
}

void RequestFramer::completeRequest(QList<Step> &steps)
{
    m_state = State::Head;
    Step step;
    step.kind = Step::Kind::RequestComplete;
    step.head = std::exchange(m_head, {});
    step.body = std::exchange(m_body, {});
    steps.append(std::move(step));
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
            // Nothing here reads trailer fields, and a parser in front of the server that does
            // not know them would take them for the next request: refuse them.
            reject(steps, 400, QStringLiteral("bad_request"),
                   QStringLiteral("trailer fields in chunked requests are not supported"));
            return take;
        }
        completeRequest(steps);
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
    m_head = {};
    m_body.clear();
    Step step;
    step.kind = Step::Kind::Rejected;
    step.rejection = Rejection{status, code, message};
    steps.append(step);
}

} // namespace replhost::http
