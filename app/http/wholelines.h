// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QList>
#include <QString>

#include <optional>

namespace replhost::http {

// A run's stdout and stderr cut at line ends, for the streams whose clients compare each
// event's text with what was printed (E2B's, OpenSandbox's /code). Output is read from pipes,
// so one print() can arrive in pieces ("21", then "\n"; CPython writes a print's text and its
// end separately). The text after a stream's last line end is held back until its line ends,
// the other stream's output comes (it was written after it), or take() is called: by the
// translation on any other event, and by the stream when the text has been held a while
// (ExecutionStream::kHoldMs), so a prompt without a line end is not held for long.
//
// Threading: a value; no shared state.
class WholeLines {
public:
    struct Piece {
        QString stream;  // "stdout" or "stderr"
        QString text;
    };

    // What can be sent now that `stream` has written `text`: the other stream's held text
    // first, then `stream`'s text up to its last line end (several lines in one piece).
    QList<Piece> add(const QString &stream, const QString &text);
    // The held text, which is then no longer held; nothing when none is.
    std::optional<Piece> take();
    bool hasPending() const { return !m_text.isEmpty(); }

private:
    QString m_stream;  // whose text is held
    QString m_text;
};

} // namespace replhost::http
