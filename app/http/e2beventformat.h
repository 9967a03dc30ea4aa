// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "wholelines.h"

#include <replhost/sdk/event.h>

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace replhost::http {

// The events of one execution in the E2B code interpreter's stream format: one compact JSON
// object per line (NDJSON), as `POST /execute` answers and the E2B SDKs read line by line.
//
//   replhost event                  E2B lines
//   started                         number_of_executions {execution_count}
//   stream (stdout/stderr)          stdout / stderr {text, timestamp (ISO 8601, UTC)}, cut
//                                   after the last line end it holds (see below)
//   result                          result {<MIME fields>, is_main_result: true}
//   display                         result {<MIME fields>, is_main_result: false}
//   error                           error {name, value, traceback (one string)}; only the first
//                                   error of a run, as E2B reports it
//   done                            end_of_execution (after an error made up from the status
//                                   when the run ended badly and no error was sent)
//   state_reset, truncated,         stderr, the notice as a line starting "[replhost] ": E2B has
//   restored (incomplete only)      no event for them and a client must not miss them
//   anything else                   nothing
//
// MIME fields: text/plain → text (one pair of surrounding single quotes removed, as E2B does),
// text/html → html, text/markdown → markdown, image/svg+xml → svg, image/png → png,
// image/jpeg → jpeg, application/pdf → pdf, text/latex → latex, application/json → json,
// application/javascript → javascript; every other MIME type goes into `extra`.
//
// E2B's kernels send whole lines, and clients compare `text` with what was printed, so output
// is sent in whole lines (WholeLines): held back until its line ends, another event (or the
// other stream's output) comes, or flushPending() is called (the stream calls it when text
// has been held a while, so a prompt without a line end is not held for long).
//
// Stateful (held-back text, whether an error was sent), so use one object per stream.
// Threading: a value; no shared state.
class E2bEventFormat {
public:
    // The lines for one replhost event; `now` stamps stdout and stderr.
    QList<QJsonObject> translate(const sdk::Event &event, const QDateTime &now);
    // The output held back for want of a line end, as lines; empty when there is none.
    QList<QJsonObject> flushPending(const QDateTime &now);
    bool hasPending() const { return m_lines.hasPending(); }

    // Sent while a run is quiet, so a client that has gone is noticed (and E2B's own SDKs
    // ignore it).
    static QJsonObject keepAlive();
    static QJsonObject endOfExecution();
    // A MIME bundle as an E2B result.
    static QJsonObject result(const QJsonObject &mimeBundle, bool isMainResult);
    // One line on the wire: compact JSON and "\n".
    static QByteArray line(const QJsonObject &event);

private:
    static QJsonObject output(const QString &stream, const QString &text, const QDateTime &now);
    QList<QJsonObject> streamed(const QString &stream, const QString &text, const QDateTime &now);
    QJsonObject error(const QString &name, const QString &value, const QString &traceback);

    bool m_errorSent = false;
    WholeLines m_lines;
};

} // namespace replhost::http
