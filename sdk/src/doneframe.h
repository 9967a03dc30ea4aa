// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace replhost::sdk {

// A `done` frame taken apart without building a JSON object for it first
// (docs/worker-protocol.md §4): its `id` and `mark` as values, and the text of its other members,
// from which fields() makes the event's fields with `streams_synced` and `state_lost` already in
// place. Every `done` of a run passes here, and going through a parsed object costs about half as
// much again as one parse: taking `type`, `id` and `mark` out of it and inserting the two flags
// (each insert grows the parsed object's storage).
//
// scan() takes only a flat frame that starts with `"type":"done"` and that it can check
// completely, with the meaning the full parser would give it: every other frame (other types,
// nested values, escapes in keys or in the id, non-ASCII bytes, a repeated key, a number with
// an exponent, a `status` that is not a string, a `mark` that is not a plain integer, the flags
// sent by the driver itself) is left to the full parser and its error messages.
class DoneFrame {
public:
    static std::optional<DoneFrame> scan(QByteArrayView body);

    QString id() const { return m_id; }
    bool hasMark() const { return m_hasMark; }
    quint64 mark() const { return m_mark; }
    // The event's fields: the frame's members but `type`, `id` and `mark`, `status` "ok" when the
    // frame has none, and `streams_synced` and `state_lost` (false). Once only: it uses up the
    // text it is made from.
    QJsonObject takeFields(bool streamsSynced);

private:
    DoneFrame() = default;

    QString m_id;
    bool m_hasMark = false;
    quint64 m_mark = 0;
    // "{", then the checked members to keep, each followed by a comma: the start of the fields'
    // JSON text, which takeFields() completes.
    QByteArray m_members;
};

} // namespace replhost::sdk
