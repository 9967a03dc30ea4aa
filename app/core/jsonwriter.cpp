// SPDX-License-Identifier: Apache-2.0
#include "jsonwriter.h"

#include <QJsonArray>
#include <QLocale>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace replhost::core {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Whether the four UTF-16 units at `at` are all printable ASCII other than '"' and '\\', so
// they are copied as they are. Each 16-bit lane of one 64-bit word is tested at once.
bool plainQuad(const char16_t *at)
{
    constexpr quint64 kOnes = 0x0001000100010001ULL;
    constexpr quint64 kHigh = 0x8000800080008000ULL;
    const auto hasZeroLane = [](quint64 v) { return ((v - kOnes) & ~v & kHigh) != 0; };
    quint64 v;
    std::memcpy(&v, at, sizeof v);
    if (v & 0xff80ff80ff80ff80ULL)
        return false;  // a unit of 0x80 or more
    // Every lane is below 0x80 now, so subtracting 0x20 borrows only in lanes below 0x20.
    if (((v - 0x20 * kOnes) & kHigh) != 0)
        return false;
    return !hasZeroLane(v ^ (quint64('"') * kOnes)) && !hasZeroLane(v ^ (quint64('\\') * kOnes));
}

#if defined(__SSE2__)
// Like plainQuad() for eight units at once, copying them to `dst` (eight bytes) when they are
// all plain. Signed 16-bit comparisons: units of 0x8000 and more read as negative, so below 0x20.
bool copyPlainOctet(const char16_t *at, char *dst)
{
    const __m128i units = _mm_loadu_si128(reinterpret_cast<const __m128i *>(at));
    const __m128i escaped = _mm_or_si128(
            _mm_or_si128(_mm_cmplt_epi16(units, _mm_set1_epi16(0x20)),
                         _mm_cmpgt_epi16(units, _mm_set1_epi16(0x7f))),
            _mm_or_si128(_mm_cmpeq_epi16(units, _mm_set1_epi16('"')),
                         _mm_cmpeq_epi16(units, _mm_set1_epi16('\\'))));
    if (_mm_movemask_epi8(escaped) != 0)
        return false;
    _mm_storel_epi64(reinterpret_cast<__m128i *>(dst), _mm_packus_epi16(units, units));
    return true;
}
#endif

// Each writes at `dst` and returns the end of what it wrote.
char *appendUtf8(char *dst, char32_t c)
{
    if (c < 0x800) {
        *dst++ = char(0xc0 | (c >> 6));
    } else if (c < 0x10000) {
        *dst++ = char(0xe0 | (c >> 12));
        *dst++ = char(0x80 | ((c >> 6) & 0x3f));
    } else {
        *dst++ = char(0xf0 | (c >> 18));
        *dst++ = char(0x80 | ((c >> 12) & 0x3f));
        *dst++ = char(0x80 | ((c >> 6) & 0x3f));
    }
    *dst++ = char(0x80 | (c & 0x3f));
    return dst;
}

char *appendEscape(char *dst, char16_t c)
{
    *dst++ = '\\';
    *dst++ = 'u';
    for (int shift = 12; shift >= 0; shift -= 4)
        *dst++ = kHex[(c >> shift) & 0xf];
    return dst;
}

} // namespace

JsonWriter::JsonWriter(qsizetype reserve)
{
    grow(std::max<qsizetype>(reserve, 16));
}

void JsonWriter::grow(qsizetype n)
{
    // At least doubled: a document is many short pieces, and growing by each piece's size would
    // reallocate for every one of them.
    m_capacity = std::max(m_size + n, 2 * m_capacity);
    m_buffer.resize(m_capacity);
    m_data = m_buffer.data();
}

QByteArray JsonWriter::take()
{
    m_buffer.resize(m_size);
    QByteArray out = std::move(m_buffer);
    m_buffer = QByteArray();
    m_data = nullptr;
    m_size = m_capacity = 0;
    return out;
}

void JsonWriter::string(QStringView text)
{
    // Room for the worst case of a block (six bytes a character, "\u001f") is made first, so
    // the inner loop neither checks capacity nor grows the buffer, and a large string is never
    // reserved six times over.
    constexpr qsizetype kBlock = 512;
    constexpr qsizetype kWorst = 6;
    const char16_t *at = text.utf16();
    const char16_t *const end = at + text.size();
    // +2: the quotes; the room for each block also holds a pair that ends past it.
    char *dst = room(std::min(text.size(), kBlock) * kWorst + 2);
    *dst++ = '"';
    while (at < end) {
        const char16_t *const blockEnd = at + std::min<qsizetype>(kBlock, end - at);
        m_size = dst - m_data;
        dst = room((blockEnd - at) * kWorst + 2);
        while (at < blockEnd) {
#if defined(__SSE2__)
            if (blockEnd - at >= 8 && copyPlainOctet(at, dst)) {
                dst += 8;
                at += 8;
                continue;
            }
#endif
            if (blockEnd - at >= 4 && plainQuad(at)) {
                // Four characters that need no escape, tested and copied together.
                dst[0] = char(at[0]);
                dst[1] = char(at[1]);
                dst[2] = char(at[2]);
                dst[3] = char(at[3]);
                dst += 4;
                at += 4;
                continue;
            }
            const char16_t c = *at++;
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
                *dst++ = char(c);  // the common case
                continue;
            }
            switch (c) {
            case '"': *dst++ = '\\'; *dst++ = '"'; break;
            case '\\': *dst++ = '\\'; *dst++ = '\\'; break;
            case '\b': *dst++ = '\\'; *dst++ = 'b'; break;
            case '\f': *dst++ = '\\'; *dst++ = 'f'; break;
            case '\n': *dst++ = '\\'; *dst++ = 'n'; break;
            case '\r': *dst++ = '\\'; *dst++ = 'r'; break;
            case '\t': *dst++ = '\\'; *dst++ = 't'; break;
            default:
                if (c < 0x20) {
                    dst = appendEscape(dst, c);
                } else if (QChar::isHighSurrogate(c) && at < end && QChar::isLowSurrogate(*at)) {
                    dst = appendUtf8(dst, QChar::surrogateToUcs4(c, *at++));
                } else if (QChar::isSurrogate(c)) {
                    // A lone half of a pair has no UTF-8 form: escaped, as QJsonDocument does.
                    dst = appendEscape(dst, c);
                } else {
                    dst = appendUtf8(dst, c);
                }
            }
        }
    }
    *dst++ = '"';
    m_size = dst - m_data;
}

void JsonWriter::integer(qint64 value)
{
    char *dst = room(20);
    m_size = std::to_chars(dst, dst + 20, value).ptr - m_data;
}

void JsonWriter::number(double value)
{
    if (!std::isfinite(value)) {
        raw("null");
        return;
    }
    // QJsonDocument writes the shortest digits that read back the same, in fixed or exponent
    // form, whichever is shorter. A number from 0.01 up to 1e9 with a fraction is always shorter
    // in fixed form, where std::to_chars writes the same shortest digits for a fraction of
    // QLocale's cost; the rest is left to Qt.
    const double magnitude = std::fabs(value);
    if (magnitude >= 0.01 && magnitude < 1e9 && value != std::trunc(value)) {
        char *dst = room(40);
        m_size = std::to_chars(dst, dst + 40, value, std::chars_format::fixed).ptr - m_data;
        return;
    }
    raw(QByteArray::number(value, 'g', QLocale::FloatingPointShortest));
}

void JsonWriter::value(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        raw("null");
        break;
    case QJsonValue::Bool:
        raw(value.toBool() ? QByteArrayView("true") : QByteArrayView("false"));
        break;
    case QJsonValue::Double: {
        // Integers are kept as integers by QJsonValue; a double that holds one is written as
        // QJsonDocument does, as that integer.
        const qint64 integer = value.toInteger(LLONG_MIN);
        if (integer != LLONG_MIN || value.toDouble() == double(LLONG_MIN))
            this->integer(integer);
        else
            number(value.toDouble());
        break;
    }
    case QJsonValue::String:
        string(value.toString());
        break;
    case QJsonValue::Array: {
        raw('[');
        bool first = true;
        for (const QJsonValue &item : value.toArray()) {
            if (!first)
                raw(',');
            first = false;
            this->value(item);
        }
        raw(']');
        break;
    }
    case QJsonValue::Object:
        raw('{');
        members(value.toObject(), false, false);
        raw('}');
        break;
    }
}

void JsonWriter::members(const QJsonObject &object, bool afterOthers, bool skipEventKeys)
{
    bool comma = afterOthers;
    for (auto it = object.constBegin(), end = object.constEnd(); it != end; ++it) {
        const QString key = it.key();
        if (skipEventKeys && (key == QLatin1String("type") || key == QLatin1String("execution_id")))
            continue;
        if (comma)
            raw(',');
        comma = true;
        string(key);
        raw(':');
        value(it.value());
    }
}

void JsonWriter::event(const sdk::Event &event)
{
    raw("{\"type\":");
    string(event.type);
    raw(",\"execution_id\":");
    if (event.executionId.isEmpty())
        raw("null");
    else
        string(event.executionId);
    members(event.fields, true, true);
    raw('}');
}

QByteArray JsonWriter::eventJson(const sdk::Event &event)
{
    JsonWriter writer;
    writer.event(event);
    return writer.take();
}

} // namespace replhost::core
