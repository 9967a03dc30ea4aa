// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QtGlobal>

namespace replhost::sdk {

// Finds and strips the sync marks of docs/worker-protocol.md §5 in one raw output stream:
//
//     ESC ] 5253 ; rh ; <nonce> ; <seq> BEL
//
// Input arrives in arbitrary pieces, so a mark can be split at any byte: a possible mark at the
// end of a piece is held back (at most maxMarkLength() - 1 bytes) until the next piece decides
// it. Only the exact nonce counts; anything that does not match (another nonce, a different OSC
// sequence, a stray ESC) is passed on as text unchanged.
class MarkScanner {
public:
    // Receives the stream split into text and marks, in stream order. Returning false stops the
    // scan at once without touching the scanner again (the receiver may have destroyed it).
    class Sink {
    public:
        virtual bool text(const char *data, qsizetype size) = 0;
        virtual bool mark(quint64 seq) = 0;

    protected:
        ~Sink() = default;
    };

    explicit MarkScanner(const QByteArray &nonce = {});

    void setNonce(const QByteArray &nonce);

    // Scans the next piece of the stream. Text pointers handed to the sink point into `data` or
    // into the scanner's own carry-over buffer and are valid only during the call.
    // Returns false if the sink asked to stop.
    bool feed(const char *data, qsizetype size, Sink &sink);

    // Passes bytes held back as a possible mark on as text (when the stream ends, or when they
    // are known not to be the start of one).
    bool flush(Sink &sink);

    // Whether bytes are held back as a possible mark.
    bool holdsPartialMark() const { return m_carrySize > 0; }

    // Highest seq seen so far; 0 before the first mark.
    quint64 lastSeq() const { return m_lastSeq; }

    qsizetype maxMarkLength() const { return m_prefix.size() + kMaxSeqDigits + 1; }

private:
    static constexpr int kMaxSeqDigits = 19; // any quint64 of up to 19 digits fits
    static constexpr int kMaxMark = 11 + 64 + 1 + kMaxSeqDigits + 1;

    enum class Match { None, Partial, Full };
    Match match(const char *s, qsizetype n, qsizetype *length, quint64 *seq) const;
    bool emitMark(quint64 seq, Sink &sink);

    QByteArray m_prefix; // ESC ] 5253 ; rh ; <nonce> ;
    char m_carry[kMaxMark];
    qsizetype m_carrySize = 0;
    quint64 m_lastSeq = 0;
};

} // namespace replhost::sdk
