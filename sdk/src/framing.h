// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>
#include <QStringView>

#include <functional>

namespace replhost::sdk {

// Frames of the worker protocol (docs/worker-protocol.md §2): `<decimal length>\n<JSON object>`.

// The largest frame either side accepts.
inline constexpr qsizetype kMaxFrameBytes = 64 * 1024 * 1024;

// Compact JSON for `object` with every non-ASCII character escaped as \uXXXX (a surrogate pair
// above U+FFFF), so byte and character counts agree in every driver runtime.
QByteArray asciiJson(const QJsonObject &object);

// Appends `text` as a JSON string literal, quotes included, in the form asciiJson() gives it:
// ASCII only, with \uXXXX for every non-ASCII UTF-16 unit (an unpaired surrogate as \ufffd).
// For frames written field by field, without building a QJsonObject and escaping it again.
void appendJsonString(QByteArray &out, QStringView text);

// Rewrites UTF-8 JSON text so that it is ASCII-only. Non-ASCII bytes can only occur inside string
// literals of JSON text, where \uXXXX means the same character. Invalid UTF-8 becomes \ufffd.
QByteArray escapeNonAscii(const QByteArray &utf8Json);

// The frame header for a body of `size` bytes, "<size>\n", written into `out` (at least 24 bytes).
// Returns the header's length.
int writeFrameHeader(char *out, qsizetype size);

// Incremental parser for a stream of frames, fed with whatever each read() returned.
//
// Frames may be split across reads at any byte and many may arrive in one read. A frame that is
// complete within one read is parsed in place; only a frame split across reads is buffered, with
// its whole size allocated once. Any violation (a header that is not 1-10 decimal digits and a
// newline, a length above the limit, a body that is not one JSON object) puts the reader into a
// failed state for good: the stream cannot be resynchronised, so the caller ends the worker.
class FrameReader {
public:
    explicit FrameReader(qsizetype maxFrameBytes = kMaxFrameBytes);

    // Called for each frame in order with its body, valid only during the call; the handler
    // parses it with parse() or takes it apart itself. Returning false stops the current feed()
    // at once, without touching the reader again (the handler may have destroyed it); the rest of
    // that input is dropped. A handler that also sets `*error` instead declares the body
    // malformed, which fails the reader (it must not have destroyed it then).
    using Handler = std::function<bool(QByteArrayView body, QString *error)>;

    // Returns false when the stream is (or was already) malformed; error() says why. Returns
    // true when all input was consumed or the handler asked to stop.
    bool feed(QByteArrayView input, const Handler &handler);

    // Parses one frame body, which must be one JSON object. On failure `*error` says why.
    static bool parse(QByteArrayView body, QJsonObject *object, QString *error);

    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }

    // Bytes of an unfinished frame currently held (header digits not counted).
    qsizetype buffered() const { return m_body.size(); }

private:
    bool fail(QString message);

    const qsizetype m_maxFrameBytes;
    qsizetype m_length = 0;   // length from the header being read, or of the body being read
    int m_headerDigits = 0;
    bool m_inBody = false;
    QByteArray m_body;        // only for a body split across reads
    QString m_error;
};

} // namespace replhost::sdk
