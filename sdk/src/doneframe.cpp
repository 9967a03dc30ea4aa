// SPDX-License-Identifier: Apache-2.0
#include "doneframe.h"

#include <QJsonDocument>

#include <algorithm>
#include <array>
#include <utility>

namespace replhost::sdk {

namespace {

// A cursor over the frame that accepts exactly what it can vouch for and nothing else: any
// false return sends the frame to the full parser, never to an error.
class FlatScanner {
public:
    explicit FlatScanner(QByteArrayView text) : m_p(text.data()), m_end(text.data() + text.size()) {}

    const char *position() const { return m_p; }
    bool atEnd() const { return m_p == m_end; }

    void skipSpace()
    {
        while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\n' || *m_p == '\r'))
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
        while (m_p < m_end && *m_p != '"') {
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
        std::optional<quint64> integer;
        if (in.string(&text, &plainText)) {
            isString = true;
        } else if (in.atEnd()) {
            return std::nullopt;
        } else if (*valueStart == '-' || (*valueStart >= '0' && *valueStart <= '9')) {
            if (!in.number(&integer))
                return std::nullopt;
        } else if (!in.literal("true") && !in.literal("false") && !in.literal("null")) {
            return std::nullopt;  // an object, an array, or not JSON
        }

        if (key == "type") {
            if (!isString || text != "done")
                return std::nullopt;
            sawType = true;
        } else if (key == "id") {
            if (!isString || !plainText)
                return std::nullopt;
            frame.m_id = QString::fromLatin1(text);
            sawId = true;
        } else if (key == "mark") {
            if (!integer)
                return std::nullopt;
            frame.m_hasMark = true;
            frame.m_mark = *integer;
        } else if (key == "streams_synced" || key == "state_lost") {
            return std::nullopt;  // the host's to set; the full path replaces them
        } else {
            if (key == "status") {
                if (!isString)
                    return std::nullopt;
                sawStatus = true;
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

QJsonObject DoneFrame::takeFields(bool streamsSynced)
{
    m_members.append(streamsSynced ? "\"streams_synced\":true,\"state_lost\":false}"
                                   : "\"streams_synced\":false,\"state_lost\":false}");
    // Cannot fail: every member was checked by scan(), and the ones added are literals.
    QJsonObject fields = QJsonDocument::fromJson(std::exchange(m_members, QByteArray())).object();
    return fields;
}

} // namespace replhost::sdk
