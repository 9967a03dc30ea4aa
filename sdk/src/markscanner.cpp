// SPDX-License-Identifier: Apache-2.0
#include "markscanner.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace replhost::sdk {

namespace {
constexpr char kEsc = '\x1b';
constexpr char kBel = '\x07';
} // namespace

MarkScanner::MarkScanner(const QByteArray &nonce)
{
    setNonce(nonce);
}

void MarkScanner::setNonce(const QByteArray &nonce)
{
    // Nonces are 32 hex digits; anything longer than the carry buffer allows is cut, which only
    // makes marks impossible to match, never unsafe.
    m_prefix = QByteArray("\x1b]5253;rh;") + nonce.left(64) + ';';
    m_carrySize = 0;
}

MarkScanner::Match MarkScanner::match(const char *s, qsizetype n, qsizetype *length,
                                      quint64 *seq) const
{
    const qsizetype prefixSize = m_prefix.size();
    const qsizetype compared = std::min(n, prefixSize);
    if (std::memcmp(s, m_prefix.constData(), size_t(compared)) != 0)
        return Match::None;
    if (n < prefixSize)
        return Match::Partial;
    quint64 value = 0;
    int digits = 0;
    for (qsizetype i = prefixSize; i < n; ++i) {
        const char c = s[i];
        if (c >= '0' && c <= '9') {
            if (++digits > kMaxSeqDigits)
                return Match::None;
            value = value * 10 + quint64(c - '0');
        } else if (c == kBel && digits > 0) {
            *length = i + 1;
            *seq = value;
            return Match::Full;
        } else {
            return Match::None;
        }
    }
    return Match::Partial;
}

bool MarkScanner::emitMark(quint64 seq, Sink &sink)
{
    if (seq > m_lastSeq)
        m_lastSeq = seq;
    return sink.mark(seq);
}

bool MarkScanner::feed(const char *data, qsizetype size, Sink &sink)
{
    qsizetype pos = 0;
    if (m_carrySize > 0) {
        // The carry starts with ESC and is a proper prefix of a mark; decide it with the new bytes.
        char joined[kMaxMark];
        const qsizetype take = std::min(size, qsizetype(kMaxMark) - m_carrySize);
        std::memcpy(joined, m_carry, size_t(m_carrySize));
        std::memcpy(joined + m_carrySize, data, size_t(take));
        qsizetype length = 0;
        quint64 seq = 0;
        switch (match(joined, m_carrySize + take, &length, &seq)) {
        case Match::Full:
            pos = length - m_carrySize;
            m_carrySize = 0;
            if (!emitMark(seq, sink))
                return false;
            break;
        case Match::Partial:
            // Still undecided: every new byte belongs to the candidate.
            std::memcpy(m_carry + m_carrySize, data, size_t(take));
            m_carrySize += take;
            return true;
        case Match::None: {
            // Not a mark. Only its first byte was ESC (the rest matched prefix bytes or digits),
            // so the carry holds no other candidate: it is all text, and the new bytes are
            // scanned from their start.
            const qsizetype carried = std::exchange(m_carrySize, 0);
            char text[kMaxMark];
            std::memcpy(text, m_carry, size_t(carried));
            if (!sink.text(text, carried))
                return false;
            break;
        }
        }
    }

    const char *p = data + pos;
    const char *const end = data + size;
    const char *textStart = p;
    while (p < end) {
        const auto *esc = static_cast<const char *>(std::memchr(p, kEsc, size_t(end - p)));
        if (!esc)
            break;
        qsizetype length = 0;
        quint64 seq = 0;
        const Match m = match(esc, end - esc, &length, &seq);
        if (m == Match::None) {
            p = esc + 1;
            continue;
        }
        if (esc > textStart && !sink.text(textStart, esc - textStart))
            return false;
        if (m == Match::Partial) {
            m_carrySize = end - esc;
            std::memcpy(m_carry, esc, size_t(m_carrySize));
            return true;
        }
        p = esc + length;
        textStart = p;
        if (!emitMark(seq, sink))
            return false;
    }
    if (end > textStart)
        return sink.text(textStart, end - textStart);
    return true;
}

bool MarkScanner::flush(Sink &sink)
{
    if (m_carrySize == 0)
        return true;
    char text[kMaxMark];
    const qsizetype carried = std::exchange(m_carrySize, 0);
    std::memcpy(text, m_carry, size_t(carried));
    return sink.text(text, carried);
}

} // namespace replhost::sdk
