// SPDX-License-Identifier: Apache-2.0
#include "headcheck.h"

#include "chartable.h"

#include <algorithm>
#include <limits>

namespace replhost::http {

namespace {

// tchar (RFC 9110 §5.6.2): what a method and a field name are made of.
constexpr CharTable kTokenChars("!#$%&'*+-.^_`|~");

bool isToken(QByteArrayView text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text) {
        if (!kTokenChars.contains(c))
            return false;
    }
    return true;
}

// field-vchar, SP and HTAB (RFC 9110 §5.5): everything but the other control characters and DEL.
bool isFieldValueChar(char c)
{
    const uchar u = uchar(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
}

// A request-target is visible ASCII only (RFC 9112 §3.2, RFC 3986).
bool isTargetChar(char c)
{
    return uchar(c) > 0x20 && uchar(c) < 0x7f;
}

// Only SP and HTAB are whitespace around a field value (RFC 9110 §5.6.3). QByteArrayView's
// trimmed() also strips VT, FF, CR and LF, which would turn "chunked\v" into "chunked".
QByteArrayView withoutOws(QByteArrayView value)
{
    while (!value.isEmpty() && (value.front() == ' ' || value.front() == '\t'))
        value = value.sliced(1);
    while (!value.isEmpty() && (value.back() == ' ' || value.back() == '\t'))
        value.chop(1);
    return value;
}

bool equalsLower(QByteArrayView text, QByteArrayView lower)
{
    return text.size() == lower.size() && text.compare(lower, Qt::CaseInsensitive) == 0;
}

bool isDigits(QByteArrayView text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
    }
    return true;
}

HeadCheck::Verdict refused(int status, const char *code, const QString &message)
{
    HeadCheck::Verdict verdict;
    verdict.outcome = HeadCheck::Outcome::Refused;
    verdict.refusal = {status, QString::fromLatin1(code), message, {}};
    return verdict;
}

HeadCheck::Verdict badRequest(const QString &message)
{
    return refused(400, "bad_request", message);
}

QString printable(QByteArrayView name)
{
    return QString::fromLatin1(name.first(std::min<qsizetype>(name.size(), 64)));
}

} // namespace

HeadCheck::Verdict HeadCheck::inspect(QByteArrayView bytes, const ConnectionLimits &limits)
{
    qsizetype start = 0;
    while (bytes.sliced(start).startsWith("\r\n"))
        start += 2;
    if (start < bytes.size() && bytes[start] == '\r' && start + 1 == bytes.size())
        return {};

    RequestHead head;
    int fields = 0;
    int hostFields = 0;
    int lengthFields = 0;
    int encodingFields = 0;
    bool keepAlive = false;
    bool close = false;
    bool expectContinue = false;
    qint64 length = 0;

    qsizetype at = start;
    for (bool requestLine = true;; requestLine = false) {
        const qsizetype newline = bytes.indexOf('\n', at);
        const qsizetype lineEnd = newline < 0 ? bytes.size() : newline + 1;
        if (lineEnd - start > limits.maxHeaderBytes)
            return refused(431, "header_fields_too_large",
                           QStringLiteral("the request head is larger than %1 bytes")
                                   .arg(limits.maxHeaderBytes));
        if (newline < 0)
            return {};
        if (newline == at || bytes[newline - 1] != '\r')
            return badRequest(QStringLiteral("a line of the request head ends with a bare LF; "
                                             "end lines with CRLF"));
        const QByteArrayView line = bytes.sliced(at, newline - 1 - at);
        at = lineEnd;
        if (line.contains('\r'))
            return badRequest(QStringLiteral("a bare CR in the request head"));

        if (requestLine) {
            // method SP request-target SP HTTP-version, single spaces (RFC 9112 §3).
            const qsizetype first = line.indexOf(' ');
            const qsizetype second = first < 0 ? -1 : line.indexOf(' ', first + 1);
            if (first < 0 || second < 0 || line.indexOf(' ', second + 1) >= 0)
                return badRequest(QStringLiteral("malformed request line"));
            const QByteArrayView method = line.first(first);
            const QByteArrayView target = line.sliced(first + 1, second - first - 1);
            const QByteArrayView version = line.sliced(second + 1);
            if (!isToken(method))
                return badRequest(QStringLiteral("malformed request line: the method is not a token"));
            if (target.isEmpty())
                return badRequest(QStringLiteral("malformed request line: no request target"));
            for (const char c : target) {
                if (!isTargetChar(c))
                    return badRequest(QStringLiteral("malformed request line: the target holds "
                                                     "a character that must be percent-encoded"));
            }
            if (version == "HTTP/1.1") {
                head.httpMinor = 1;
            } else if (version == "HTTP/1.0") {
                head.httpMinor = 0;
            } else if (version.size() == 8 && version.startsWith("HTTP/") && version[6] == '.'
                       && version[5] >= '0' && version[5] <= '9' && version[7] >= '0'
                       && version[7] <= '9') {
                return refused(505, "http_version_not_supported",
                               QStringLiteral("unsupported protocol version; use HTTP/1.1"));
            } else {
                return badRequest(QStringLiteral("malformed request line: no HTTP version"));
            }
            head.method = method.toByteArray();
            head.target = target.toByteArray();
            continue;
        }

        if (line.isEmpty())
            break;  // the blank line that ends the head
        if (line.front() == ' ' || line.front() == '\t')
            return badRequest(QStringLiteral("folded header lines (obs-fold) are not accepted"));
        if (++fields > limits.maxHeaderCount)
            return refused(431, "header_fields_too_large",
                           QStringLiteral("more than %1 request header fields").arg(limits.maxHeaderCount));
        const qsizetype colon = line.indexOf(':');
        const QByteArrayView name = colon < 0 ? line : line.first(colon);
        if (colon < 0 || !isToken(name))
            return badRequest(QStringLiteral("malformed header line: '%1' is not a field name")
                                      .arg(printable(name)));
        const QByteArrayView value = withoutOws(line.sliced(colon + 1));
        for (const char c : value) {
            if (!isFieldValueChar(c))
                return badRequest(QStringLiteral("the value of %1 holds a control character")
                                          .arg(printable(name)));
        }
        head.fields.emplaceBack(name.toByteArray(), value.toByteArray());

        if (equalsLower(name, "content-length")) {
            if (++lengthFields > 1)
                return badRequest(QStringLiteral("more than one Content-Length field"));
            if (!isDigits(value))
                return badRequest(QStringLiteral("malformed Content-Length"));
            length = value.size() > 18 ? std::numeric_limits<qint64>::max() : value.toLongLong();
        } else if (equalsLower(name, "transfer-encoding")) {
            if (++encodingFields > 1 || !equalsLower(value, "chunked"))
                return refused(501, "not_implemented",
                               QStringLiteral("only the chunked transfer coding is supported"));
        } else if (equalsLower(name, "connection")) {
            for (qsizetype from = 0; from <= value.size();) {
                qsizetype comma = value.indexOf(',', from);
                if (comma < 0)
                    comma = value.size();
                const QByteArrayView option = withoutOws(value.sliced(from, comma - from));
                close = close || equalsLower(option, "close");
                keepAlive = keepAlive || equalsLower(option, "keep-alive");
                from = comma + 1;
            }
        } else if (equalsLower(name, "expect")) {
            expectContinue = equalsLower(value, "100-continue");
        } else if (equalsLower(name, "upgrade")) {
            // A WebSocket upgrade asks for a protocol this server does not speak (and Qt
            // HttpServer would hand the socket to a QWebSocketServer).
            if (value.toByteArray().toLower().contains("websocket"))
                return badRequest(QStringLiteral("WebSocket upgrades are not supported"));
        } else if (equalsLower(name, "host")) {
            if (++hostFields > 1)
                return badRequest(QStringLiteral("more than one Host field"));
        }
    }

    if (lengthFields > 0 && encodingFields > 0)
        return badRequest(QStringLiteral("Content-Length and Transfer-Encoding must not be combined"));
    if (encodingFields > 0 && head.httpMinor == 0)
        return badRequest(QStringLiteral("Transfer-Encoding in an HTTP/1.0 request"));
    if (length > limits.maxBodyBytes)
        return refused(413, "payload_too_large",
                       QStringLiteral("request body of %1 bytes is larger than the limit of %2 bytes")
                               .arg(length).arg(limits.maxBodyBytes));

    head.contentLength = length;
    head.chunked = encodingFields > 0;
    head.wantsClose = close || (head.httpMinor == 0 && !keepAlive);
    head.expectsContinue = expectContinue && head.hasBody();
    head.size = at;
    Verdict verdict;
    verdict.outcome = Outcome::Complete;
    verdict.head = std::move(head);
    return verdict;
}

} // namespace replhost::http
