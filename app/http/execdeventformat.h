// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "wholelines.h"

#include <replhost/sdk/event.h>

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace replhost::http {

// The events of one execution (or command) in OpenSandbox execd's stream format: one compact JSON
// object per event followed by a blank line, with no "data:" prefix (the only framing every
// official OpenSandbox SDK parses; the Kotlin one decodes every non-blank line as JSON). Every
// event has "type" and a millisecond "timestamp" (the Python and Kotlin SDKs drop events without
// them).
//
//   replhost event                      execd events
//   stream (stdout/stderr)              stdout / stderr {text}: for code whole lines
//                                       (WholeLines, the rest held back until its line ends or
//                                       flushPending()); for commands one event per line, the
//                                       terminator stripped, an empty line sent as "\n"
//   display                             result {results}
//   result                              execution_count {execution_count}, result {results}
//   error                               error {error: {ename, evalue, traceback}}
//   done, status "ok"                   execution_complete {execution_time (ms)}
//   done, any other status              error (one is made up from the status when none was
//                                       sent; a command's is CommandExecError with the exit code
//                                       as evalue, which the SDKs read as the exit code)
//   anything else                       nothing
// MIME bundles are passed through with "text/plain" renamed to "text".
//
// Stateful (command lines are buffered until complete; whether an error was sent), so use one
// object per stream. Threading: a value; no shared state.
class ExecdEventFormat {
public:
    enum class Mode { Code, Command };
    explicit ExecdEventFormat(Mode mode) : m_mode(mode) {}

    // The execd events for one replhost event, stamped with `nowMs`.
    QList<QJsonObject> translate(const sdk::Event &event, qint64 nowMs);
    // Code: the output held back for want of a line end; empty when there is none.
    QList<QJsonObject> flushPending(qint64 nowMs);
    bool hasPending() const { return m_wholeLines.hasPending(); }

    // The first event of every stream: `id` is what DELETE /code?id= (or /command?id=) takes.
    static QJsonObject init(const QString &id, qint64 nowMs);
    static QJsonObject ping(qint64 nowMs);
    static QJsonObject complete(qint64 executionTimeMs, qint64 nowMs);
    // One event on the wire: compact JSON and a blank line.
    static QByteArray frame(const QJsonObject &event);
    // A MIME bundle with "text/plain" renamed to "text".
    static QJsonObject results(const QJsonObject &mimeBundle);

private:
    static QJsonObject event(const char *type, qint64 nowMs);
    static QJsonObject output(const QString &stream, const QString &text, qint64 nowMs);
    void lines(const QString &stream, const QString &text, qint64 nowMs, QList<QJsonObject> &out);
    void flushLines(qint64 nowMs, QList<QJsonObject> &out);
    QJsonObject finalError(const sdk::Event &done, qint64 nowMs) const;

    Mode m_mode;
    bool m_errorSent = false;
    QHash<QString, QString> m_partialLines;  // command mode: per stream, text after the last '\n'
    WholeLines m_wholeLines;                 // code mode
};

} // namespace replhost::http
