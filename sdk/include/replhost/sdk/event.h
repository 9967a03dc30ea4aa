// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "replhost/sdk/sdk_export.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace replhost::sdk {

// One thing that happened during an execution, in the shape of the worker protocol's events
// (docs/worker-protocol.md §4). `fields` holds the event's own fields (without "type" and "id"),
// so a plugin can add fields the host does not know and they travel through untouched.
//
// Kinds and their fields:
//   Started  execution_count
//   Stream   name ("stdout" | "stderr"), text
//   Display  data (MIME bundle), metadata, display_id (optional: a display that can be updated),
//            update (optional, true: this replaces the data of the earlier display with the
//            same display_id, wherever it is shown, instead of adding a display) (SDK 1.2)
//   Result   execution_count, data (MIME bundle, always with "text/plain"), metadata
//   Error    ename, evalue, traceback (array of strings)
//   ClearOutput  wait (bool: clear when the next output arrives rather than now): the output
//            the execution has shown so far is to be cleared (SDK 1.2)
//   InputRequest  prompt (string), password (bool: do not show or keep the answer): the run
//            waits for input (only when its ExecuteRequest::allowInput) (SDK 1.3)
//   Done     status ("ok" | "error" | "interrupted" | "aborted"), execution_count, cwd,
//            duration_ms, exit_code (optional), state_lost (bool), streams_synced (bool)
//            (done() fills in state_lost = false and streams_synced = true when `extra` lacks them)
// Core adds more kinds of its own (for example "truncated" when an output cap is hit); they are
// represented with Kind::Other and their name in `type`.
struct REPLHOST_SDK_EXPORT Event {
    // New kinds are added at the end: the values are compiled into plugins.
    enum class Kind { Started, Stream, Display, Result, Error, Done, Other, ClearOutput, InputRequest };

    Kind kind = Kind::Other;
    QString type;        // protocol name of the kind: "started", "stream", ...
    QString executionId; // id of the execute request this event belongs to; empty = background
    QJsonObject fields;

    static Event started(const QString &executionId, int executionCount);
    static Event stream(const QString &executionId, const QString &name, const QString &text);
    static Event display(const QString &executionId, const QJsonObject &data,
                         const QJsonObject &metadata = {});
    // A display that can be updated later (displayId not empty), or with `update` true the
    // update of the display with that id. (SDK 1.2)
    static Event display(const QString &executionId, const QJsonObject &data,
                         const QJsonObject &metadata, const QString &displayId,
                         bool update = false);
    // Clears the execution's output so far; with `wait`, when its next output arrives. (SDK 1.2)
    static Event clearOutput(const QString &executionId, bool wait = false);
    // The run waits for a line of input; `password`: its answer is a secret. (SDK 1.3)
    static Event inputRequest(const QString &executionId, const QString &prompt, bool password);
    static Event result(const QString &executionId, int executionCount, const QJsonObject &data,
                        const QJsonObject &metadata = {});
    static Event error(const QString &executionId, const QString &ename, const QString &evalue,
                       const QStringList &traceback = {});
    static Event done(const QString &executionId, const QString &status,
                      const QJsonObject &extra = {});
    static Event other(const QString &executionId, const QString &type,
                       const QJsonObject &fields = {});

    // Kind for a protocol type name ("display" -> Display); unknown names give Other.
    static Kind kindFromType(const QString &type);

    // {"type": ..., "execution_id": ..., <fields>} — the form stored and served over HTTP.
    // A background event (empty executionId) has "execution_id": null.
    QJsonObject toJson() const;
    static Event fromJson(const QJsonObject &json);
};

} // namespace replhost::sdk

Q_DECLARE_METATYPE(replhost::sdk::Event)
