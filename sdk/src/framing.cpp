// SPDX-License-Identifier: Apache-2.0
#include "framing.h"

#include <QJsonDocument>
#include <QJsonParseError>

#include <algorithm>
#include <utility>

namespace replhost::sdk {

namespace {

void appendEscape(QByteArray &out, char32_t unit)
{
    static constexpr char kHex[] = "0123456789abcdef";
    const char escape[6] = {'\\', 'u', kHex[(unit >> 12) & 0xf], kHex[(unit >> 8) & 0xf],
                            kHex[(unit >> 4) & 0xf], kHex[unit & 0xf]};
    out.append(escape, 6);
}

// Decodes one UTF-8 sequence at `s` (at most `n` bytes). Returns its length, or 0 when invalid
// (overlong forms, surrogates, values above U+10FFFF and truncated sequences are all invalid).
int decodeUtf8(const unsigned char *s, qsizetype n, char32_t *codePoint)
{
    const unsigned char lead = s[0];
    int length;
    char32_t cp;
    char32_t minimum;
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2, cp = lead & 0x1f, minimum = 0x80;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3, cp = lead & 0x0f, minimum = 0x800;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4, cp = lead & 0x07, minimum = 0x10000;
    } else {
        return 0;
    }
    if (n < length)
        return 0;
    for (int i = 1; i < length; ++i) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < minimum || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *codePoint = cp;
    return length;
}

} // namespace

QByteArray escapeNonAscii(const QByteArray &utf8Json)
{
    const auto *data = reinterpret_cast<const unsigned char *>(utf8Json.constData());
    const qsizetype size = utf8Json.size();
    qsizetype first = 0;
    while (first < size && data[first] < 0x80)
        ++first;
    if (first == size)
        return utf8Json; // the common case: shared, not copied

    QByteArray out;
    out.reserve(size + (size - first) * 2);
    out.append(utf8Json.constData(), first);
    for (qsizetype i = first; i < size;) {
        if (data[i] < 0x80) {
            const qsizetype start = i;
            while (i < size && data[i] < 0x80)
                ++i;
            out.append(utf8Json.constData() + start, i - start);
            continue;
        }
        char32_t cp = 0;
        const int length = decodeUtf8(data + i, size - i, &cp);
        if (length == 0) {
            appendEscape(out, 0xfffd);
            ++i;
            continue;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            appendEscape(out, 0xd800 + (cp >> 10));
            appendEscape(out, 0xdc00 + (cp & 0x3ff));
        } else {
            appendEscape(out, cp);
        }
        i += length;
    }
    return out;
}

void appendJsonString(QByteArray &out, QStringView text)
{
    const char16_t *const units = text.utf16();
    const qsizetype size = text.size();
    out.reserve(out.size() + size + 2);
    out.append('"');
    for (qsizetype i = 0; i < size;) {
        // A run that needs no escaping is copied in one go: the common case, code and ids.
        qsizetype end = i;
        while (end < size && units[end] >= 0x20 && units[end] < 0x80 && units[end] != u'"'
               && units[end] != u'\\')
            ++end;
        if (end > i) {
            const qsizetype at = out.size();
            out.resize(at + (end - i));
            char *dest = out.data() + at;
            for (qsizetype k = i; k < end; ++k)
                *dest++ = char(units[k]);
            i = end;
            continue;
        }
        const char16_t unit = units[i++];
        switch (unit) {
        case u'"':
            out.append("\\\"", 2);
            continue;
        case u'\\':
            out.append("\\\\", 2);
            continue;
        case u'\b':
            out.append("\\b", 2);
            continue;
        case u'\f':
            out.append("\\f", 2);
            continue;
        case u'\n':
            out.append("\\n", 2);
            continue;
        case u'\r':
            out.append("\\r", 2);
            continue;
        case u'\t':
            out.append("\\t", 2);
            continue;
        default:
            break;
        }
        if (QChar::isHighSurrogate(unit) && i < size && QChar::isLowSurrogate(units[i])) {
            appendEscape(out, unit);
            appendEscape(out, units[i++]);
        } else if (QChar::isSurrogate(unit)) {
            appendEscape(out, 0xfffd);  // as toUtf8() does, so no frame carries half a pair
        } else {
            appendEscape(out, unit);  // a control character or a non-ASCII one
        }
    }
    out.append('"');
}

QByteArray asciiJson(const QJsonObject &object)
{
    return escapeNonAscii(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

int writeFrameHeader(char *out, qsizetype size)
{
    char digits[24];
    int n = 0;
    auto value = static_cast<quint64>(size);
    do {
        digits[n++] = char('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (int i = 0; i < n; ++i)
        out[i] = digits[n - 1 - i];
    out[n] = '\n';
    return n + 1;
}

FrameReader::FrameReader(qsizetype maxFrameBytes) : m_maxFrameBytes(maxFrameBytes) {}

bool FrameReader::fail(QString message)
{
    m_error = std::move(message);
    m_body = QByteArray();
    return false;
}

bool FrameReader::parse(QByteArrayView body, QJsonObject *object, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(
            QByteArray::fromRawData(body.data(), body.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("frame body is not valid JSON (%1 at offset %2)")
                     .arg(parseError.errorString())
                     .arg(parseError.offset);
        return false;
    }
    if (!document.isObject()) {
        *error = QStringLiteral("frame body is not a JSON object");
        return false;
    }
    *object = document.object();
    return true;
}

bool FrameReader::feed(QByteArrayView input, const Handler &handler)
{
    if (failed())
        return false;
    const char *p = input.data();
    const char *const end = p + input.size();
    while (p < end) {
        if (!m_inBody) {
            const char c = *p++;
            if (c == '\n') {
                if (m_headerDigits == 0)
                    return fail(QStringLiteral("malformed frame header: empty length"));
                if (m_length == 0)
                    return fail(QStringLiteral("empty frame"));
                m_inBody = true;
                m_headerDigits = 0;
            } else if (c >= '0' && c <= '9') {
                // Ten digits cover the 64 MiB limit with room; more is garbage, not a length.
                if (++m_headerDigits > 10)
                    return fail(QStringLiteral("malformed frame header: length too long"));
                m_length = m_length * 10 + (c - '0');
                if (m_length > m_maxFrameBytes)
                    return fail(QStringLiteral("frame of %1 bytes exceeds the limit of %2 bytes")
                                    .arg(m_length)
                                    .arg(m_maxFrameBytes));
            } else {
                return fail(QStringLiteral("malformed frame header: unexpected byte 0x%1")
                                .arg(uint(uchar(c)), 2, 16, QLatin1Char('0')));
            }
            continue;
        }

        QString error;
        const qsizetype available = end - p;
        if (m_body.isEmpty() && available >= m_length) {
            // Whole body inside this read: hand it over where it lies.
            const qsizetype length = m_length;
            m_inBody = false;
            m_length = 0;
            const QByteArrayView body(p, length);
            p += length;
            if (!handler(body, &error))
                return error.isEmpty() ? true : fail(error);
        } else {
            if (m_body.isEmpty())
                m_body.reserve(m_length);
            const qsizetype take = std::min(available, m_length - m_body.size());
            m_body.append(p, take);
            p += take;
            if (m_body.size() < m_length)
                break;
            m_inBody = false;
            m_length = 0;
            const QByteArray body = std::exchange(m_body, QByteArray());
            if (!handler(body, &error))
                return error.isEmpty() ? true : fail(error);
        }
    }
    return true;
}

} // namespace replhost::sdk
