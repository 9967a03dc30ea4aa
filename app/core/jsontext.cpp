// SPDX-License-Identifier: Apache-2.0
#include "jsontext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <climits>
#include <cmath>
#include <cstring>

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

void JsonText::appendString(QByteArray &out, QStringView text)
{
    // Written through a raw pointer a block at a time: room for the worst case of a block (six
    // bytes a character, "\u001f") is made first, so the loop neither checks capacity nor
    // grows the array, and a large string is never reserved six times over.
    constexpr qsizetype kBlock = 512;
    constexpr qsizetype kWorst = 6;
    // Enough for plain text and one block's worst case: no reallocation unless it escapes a lot.
    // Only when the room is missing, and then at least doubled: a document is many short
    // strings appended to one array, and reserving an exact size for each would reallocate it
    // for every one of them.
    const qsizetype needed = out.size() + text.size() + std::min(text.size(), kBlock) * kWorst + 3;
    if (out.capacity() < needed)
        out.reserve(std::max(needed, 2 * out.capacity()));
    const char16_t *at = text.utf16();
    const char16_t *const end = at + text.size();
    // The quotes are written through the pointer too: the first block's room includes both.
    qsizetype written = out.size();
    out.resize(written + std::min(text.size(), kBlock) * kWorst + 3);
    char *dst = out.data() + written;
    *dst++ = '"';
    while (at < end) {
        const char16_t *const blockEnd = at + std::min<qsizetype>(kBlock, end - at);
        written = dst - out.constData();
        // +2: a pair that ends past the block, and the closing quote.
        if (out.size() < written + (blockEnd - at) * kWorst + 2) {
            out.resize(written + (blockEnd - at) * kWorst + 2);
            dst = out.data() + written;
        }
        while (at < blockEnd) {
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
    out.resize(dst - out.constData());
}

void JsonText::appendValue(QByteArray &out, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        out += "null";
        break;
    case QJsonValue::Bool:
        out += value.toBool() ? "true" : "false";
        break;
    case QJsonValue::Double: {
        // Integers are kept as integers by QJsonValue; a double that holds one is written as
        // QJsonDocument does, in the shortest form that reads back the same.
        const double d = value.toDouble();
        const qint64 integer = value.toInteger(LLONG_MIN);
        if (integer != LLONG_MIN || d == double(LLONG_MIN))
            out += QByteArray::number(integer);
        else if (std::isfinite(d))
            out += QByteArray::number(d, 'g', QLocale::FloatingPointShortest);
        else
            out += "null";
        break;
    }
    case QJsonValue::String:
        appendString(out, value.toString());
        break;
    case QJsonValue::Array: {
        out += '[';
        bool first = true;
        for (const QJsonValue &item : value.toArray()) {
            if (!first)
                out += ',';
            first = false;
            appendValue(out, item);
        }
        out += ']';
        break;
    }
    case QJsonValue::Object: {
        out += '{';
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            if (it != object.begin())
                out += ',';
            appendString(out, it.key());
            out += ':';
            appendValue(out, it.value());
        }
        out += '}';
        break;
    }
    }
}

void JsonText::appendEvent(QByteArray &out, const sdk::Event &event)
{
    out += "{\"type\":";
    appendString(out, event.type);
    out += ",\"execution_id\":";
    if (event.executionId.isEmpty())
        out += "null";
    else
        appendString(out, event.executionId);
    for (auto it = event.fields.begin(); it != event.fields.end(); ++it) {
        const QString key = it.key();
        if (key == QLatin1String("type") || key == QLatin1String("execution_id"))
            continue;
        out += ',';
        appendString(out, key);
        out += ':';
        appendValue(out, it.value());
    }
    out += '}';
}

QByteArray JsonText::event(const sdk::Event &event)
{
    QByteArray out;
    appendEvent(out, event);
    return out;
}

} // namespace replhost::core
