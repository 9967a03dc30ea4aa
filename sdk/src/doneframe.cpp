// SPDX-License-Identifier: Apache-2.0
#include "doneframe.h"

#include "framecheck.h"

#include <QJsonDocument>

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cstring>
#include <utility>

namespace replhost::sdk {

namespace {

// The highest mark checkWorkerFrame() passes: 2^53, the last integer every JSON reader keeps.
constexpr quint64 kMaxMark = quint64(1) << 53;

// The value the parser gives a number scan() took: an integer when the text is one that fits in
// 64 bits, otherwise the correctly rounded double, again as an integer when it is integral and
// in [-2^63, 2^63) (which QJsonValue(double) alone does not do at -2^63).
QJsonValue numberValue(QByteArrayView text)
{
    const char *const end = text.data() + text.size();
    qint64 integer = 0;
    if (const auto [stop, error] = std::from_chars(text.data(), end, integer);
        error == std::errc() && stop == end)
        return QJsonValue(integer);
    double value = 0;
    std::from_chars(text.data(), end, value);
    constexpr double twoTo63 = 9223372036854775808.0;
    if (value >= -twoTo63 && value < twoTo63 && double(qint64(value)) == value)
        return QJsonValue(qint64(value));
    return QJsonValue(value);
}

// A cursor over the frame that accepts exactly what it can vouch for and nothing else: any
// false return sends the frame to the full parser, never to an error.
class FlatScanner {
public:
    explicit FlatScanner(QByteArrayView text) : m_p(text.data()), m_end(text.data() + text.size()) {}

    const char *position() const { return m_p; }
    bool atEnd() const { return m_p == m_end; }

    void skipSpace()
    {
        // Drivers write compact frames: one comparison settles the usual case.
        while (m_p < m_end && static_cast<unsigned char>(*m_p) <= ' '
               && (*m_p == ' ' || *m_p == '\t' || *m_p == '\n' || *m_p == '\r'))
            ++m_p;
    }

    bool take(char c)
    {
        skipSpace();
        if (m_p == m_end || *m_p != c)
            return false;
        ++m_p;
        return true;
    }

    // A string literal of printable ASCII, escapes included (they are checked, not decoded).
    // `plain` tells whether it had no escape, so that its text is its value.
    bool string(QByteArrayView *text, bool *plain)
    {
        if (m_p == m_end || *m_p != '"')
            return false;
        const char *const start = ++m_p;
        *plain = true;
        for (;;) {
            m_p = skipPlainBytes(m_p, m_end);
            if (m_p == m_end || *m_p == '"')
                break;
            const auto c = static_cast<unsigned char>(*m_p);
            if (c < 0x20 || c >= 0x80)
                return false;
            if (c == '\\') {
                *plain = false;
                if (++m_p == m_end)
                    return false;
                if (*m_p == 'u') {
                    for (int i = 0; i < 4; ++i) {
                        if (++m_p == m_end || !isHexDigit(*m_p))
                            return false;
                    }
                } else if (!QByteArrayView("\"\\/bfnrt").contains(*m_p)) {
                    return false;
                }
            }
            ++m_p;
        }
        if (m_p == m_end)
            return false;
        *text = QByteArrayView(start, m_p - start);
        ++m_p;
        return true;
    }

    // A number as JSON writes it, without an exponent and of at most 32 characters, so that it
    // is certainly a finite double (the full parser rejects one that overflows). `integer` gets
    // its value when it is a plain non-negative integer of at most 18 digits.
    bool number(std::optional<quint64> *integer)
    {
        const char *const start = m_p;
        if (m_p < m_end && *m_p == '-')
            ++m_p;
        if (m_p == m_end || !isDigit(*m_p))
            return false;
        if (*m_p == '0')
            ++m_p;
        else
            skipDigits();
        bool plain = *start != '-';
        if (m_p < m_end && *m_p == '.') {
            plain = false;
            ++m_p;
            if (!skipDigits())
                return false;
        }
        if (m_p - start > 32 || (m_p < m_end && (*m_p == 'e' || *m_p == 'E')))
            return false;
        integer->reset();
        if (plain && m_p - start <= 18) {
            quint64 value = 0;
            for (const char *d = start; d < m_p; ++d)
                value = value * 10 + quint64(*d - '0');
            *integer = value;
        }
        return true;
    }

    bool literal(QByteArrayView word)
    {
        if (QByteArrayView(m_p, m_end - m_p).startsWith(word)) {
            m_p += word.size();
            return true;
        }
        return false;
    }

private:
    static bool isDigit(char c) { return c >= '0' && c <= '9'; }
    static bool isPlainByte(char c)
    {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x80 && u != '"' && u != '\\';
    }
    // Past the bytes that stand for themselves in a string (printable ASCII but the quote and
    // the backslash), eight at a time: a cwd or an id is most of a frame's text.
    static const char *skipPlainBytes(const char *p, const char *end)
    {
        constexpr quint64 ones = 0x0101010101010101ULL;
        constexpr quint64 highs = 0x8080808080808080ULL;
        // The high bit of some byte of the result is set when some byte of `w` is below `n`
        // (n <= 0x80; exact as to whether any is, which is all that is asked).
        const auto anyBelow = [](quint64 w, quint64 n) { return (w - ones * n) & ~w & highs; };
        while (end - p >= 8) {
            quint64 w;
            std::memcpy(&w, p, sizeof w);
            if ((w & highs) | anyBelow(w, 0x20) | anyBelow(w ^ (ones * '"'), 1)
                | anyBelow(w ^ (ones * '\\'), 1))
                break;
            p += 8;
        }
        while (p < end && isPlainByte(*p))
            ++p;
        return p;
    }
    static bool isHexDigit(char c)
    {
        return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
    bool skipDigits()
    {
        const char *const start = m_p;
        while (m_p < m_end && isDigit(*m_p))
            ++m_p;
        return m_p > start;
    }

    const char *m_p;
    const char *const m_end;
};

} // namespace

std::optional<DoneFrame> DoneFrame::scan(QByteArrayView body)
{
    FlatScanner in(body);
    if (!in.take('{'))
        return std::nullopt;
    DoneFrame frame;
    bool sawType = false;
    bool sawId = false;
    bool sawStatus = false;
    // A repeated key is left to the full parser; so is a frame with more members than a `done`
    // has any reason to carry.
    std::array<QByteArrayView, 16> keys;
    std::size_t keyCount = 0;
    // Room for the object's braces and what takeFields() appends, so it never reallocates.
    frame.m_members.reserve(body.size() + 64);
    frame.m_members.append('{');
    in.skipSpace();
    if (in.take('}'))
        return std::nullopt;  // no type
    for (;;) {
        in.skipSpace();
        const char *const memberStart = in.position();
        QByteArrayView key;
        bool plainKey = false;
        // Drivers write `type` first: any other frame is passed on after a few bytes.
        if (!in.string(&key, &plainKey) || !plainKey || (keyCount == 0 && key != "type")
            || keyCount == keys.size()
            || std::find(keys.begin(), keys.begin() + keyCount, key) != keys.begin() + keyCount)
            return std::nullopt;
        keys[keyCount++] = key;
        if (!in.take(':'))
            return std::nullopt;
        in.skipSpace();
        const char *const valueStart = in.position();
        QByteArrayView text;
        bool plainText = false;
        bool isString = false;
        bool isNumber = false;
        std::optional<quint64> integer;
        bool isNull = false;
        if (!in.atEnd() && *valueStart == '"') {
            // A string that fails leaves the cursor inside it: nothing else may be tried there
            // (`"\unull` is no `null`).
            if (!in.string(&text, &plainText))
                return std::nullopt;
            isString = true;
        } else if (in.atEnd()) {
            return std::nullopt;
        } else if (*valueStart == '-' || (*valueStart >= '0' && *valueStart <= '9')) {
            if (!in.number(&integer))
                return std::nullopt;
            isNumber = true;
        } else if (in.literal("null")) {
            isNull = true;
        } else if (!in.literal("true") && !in.literal("false")) {
            return std::nullopt;  // an object, an array, or not JSON
        }

        if (key == "type") {
            if (!isString || text != "done")
                return std::nullopt;
            sawType = true;
        } else if (key == "id") {
            if (!isString || !plainText || text.size() > FrameLimits::kMaxIdChars)
                return std::nullopt;
            frame.m_idText = text;
            sawId = true;
        } else if (key == "mark") {
            if (!integer || *integer > kMaxMark)
                return std::nullopt;
            frame.m_hasMark = true;
            frame.m_mark = *integer;
        } else if (key == "streams_synced" || key == "state_lost") {
            return std::nullopt;  // the host's to set; the full path replaces them
        } else {
            // The members checkWorkerFrame() checks, as it checks them; anything it would not
            // pass goes to it, for its message.
            if (key == "status") {
                if (!isString || !plainText
                    || (text != "ok" && text != "error" && text != "interrupted"))
                    return std::nullopt;
                sawStatus = true;
            } else if (key == "execution_count") {
                if (!integer || *integer > quint64(INT_MAX))
                    return std::nullopt;
            } else if (key == "exit_code") {
                qint64 code = 0;
                const char *const end = in.position();
                if (const auto [stop, failure] = std::from_chars(valueStart, end, code);
                    !isNumber || failure != std::errc() || stop != end || code < INT_MIN
                    || code > INT_MAX)
                    return std::nullopt;
            } else if (key == "duration_ms") {
                if (!isNumber || *valueStart == '-')
                    return std::nullopt;
            } else if (key == "cwd") {
                if (!(isString && text.size() <= FrameLimits::kMaxPathChars) && !isNull)
                    return std::nullopt;
            }
            if (isNumber && frame.m_numberCount >= 0) {
                if (frame.m_numberCount == kShapeNumbers) {
                    frame.m_numberCount = -1;
                } else {
                    const qsizetype at = frame.m_members.size();
                    frame.m_numbers[frame.m_numberCount++] = {
                            at + (key.data() - memberStart), key.size(),
                            at + (valueStart - memberStart), in.position() - valueStart};
                }
            }
            // The member as it stands in the frame, key to value: one copy.
            frame.m_members.append(memberStart, in.position() - memberStart).append(',');
        }
        if (in.take('}'))
            break;
        if (!in.take(','))
            return std::nullopt;
    }
    in.skipSpace();
    if (!in.atEnd() || !sawType || !sawId)
        return std::nullopt;
    if (!sawStatus)
        frame.m_members.append("\"status\":\"ok\",");
    return frame;
}

QJsonObject DoneFrame::takeFields(bool streamsSynced, Recent *recent)
{
    if (recent && hasShapeOf(*recent, streamsSynced)) {
        QJsonObject fields = recent->fields;
        // begin() detaches once; each write then replaces one element in place.
        const QJsonObject::iterator first = fields.begin();
        for (qsizetype i = 0; i < m_numberCount; ++i) {
            const NumberSpan &n = m_numbers[i];
            *(first + recent->numberIndexes[i]) =
                    numberValue(QByteArrayView(m_members.constData() + n.valueAt, n.valueSize));
        }
        m_members = QByteArray();
        return fields;
    }
    const qsizetype membersSize = m_members.size();
    m_members.append(streamsSynced ? "\"streams_synced\":true,\"state_lost\":false}"
                                   : "\"streams_synced\":false,\"state_lost\":false}");
    // Cannot fail: every member was checked by scan(), and the ones added are literals.
    QJsonObject fields = QJsonDocument::fromJson(m_members).object();
    if (recent && m_numberCount >= 0)
        keepShape(recent, streamsSynced, fields, membersSize);
    m_members = QByteArray();
    return fields;
}

bool DoneFrame::hasShapeOf(const Recent &recent, bool streamsSynced) const
{
    if (m_numberCount < 0 || recent.numberCount != m_numberCount
        || recent.streamsSynced != streamsSynced)
        return false;
    // The text between the numbers, piece by piece, against the kept text without its numbers.
    const char *const text = m_members.constData();
    const QByteArrayView shape(recent.shape);
    qsizetype from = 0;
    qsizetype shapeAt = 0;
    for (qsizetype i = 0; i <= m_numberCount; ++i) {
        const qsizetype to = i < m_numberCount ? m_numbers[i].valueAt : m_members.size();
        const qsizetype size = to - from;
        if (shapeAt + size > shape.size()
            || QByteArrayView(text + from, size) != shape.sliced(shapeAt, size))
            return false;
        shapeAt += size;
        if (i < m_numberCount)
            from = to + m_numbers[i].valueSize;
    }
    return shapeAt == shape.size();
}

void DoneFrame::keepShape(Recent *recent, bool streamsSynced, const QJsonObject &fields,
                          qsizetype membersSize) const
{
    recent->numberCount = -1;  // until complete
    recent->shape.clear();
    qsizetype from = 0;
    for (qsizetype i = 0; i < m_numberCount; ++i) {
        const NumberSpan &n = m_numbers[i];
        recent->shape.append(m_members.constData() + from, n.valueAt - from);
        from = n.valueAt + n.valueSize;
        const auto key = QLatin1StringView(m_members.constData() + n.keyAt, n.keySize);
        const QJsonObject::const_iterator it = fields.constFind(key);
        if (it == fields.constEnd())
            return;  // cannot happen for a frame scan() took; keep nothing then
        recent->numberIndexes[i] = it - fields.constBegin();
    }
    // Up to the flags takeFields() appended, which are not part of the frame's text.
    recent->shape.append(m_members.constData() + from, membersSize - from);
    recent->streamsSynced = streamsSynced;
    recent->fields = fields;
    recent->numberCount = m_numberCount;
}

} // namespace replhost::sdk
