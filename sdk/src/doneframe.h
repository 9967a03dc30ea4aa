// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QString>

#include <array>
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
// completely, with the meaning the full parser would give it, and only one checkWorkerFrame()
// (framecheck.h) passes: every other frame (other types, nested values, escapes in keys, in the
// id or in the status, non-ASCII bytes, a repeated key, a number with an exponent, a `status`
// that is not ok, error or interrupted, an `execution_count`, `exit_code` or `mark` that is not
// a plain integer within its bounds, a negative `duration_ms`, a long id or cwd, the flags sent by
// the driver itself) is left to the full parser and the check, and their error messages.
class DoneFrame {
public:
    static std::optional<DoneFrame> scan(QByteArrayView body);

    // The id's text, plain ASCII (so it reads as Latin-1): a view into the body given to scan(),
    // valid only while that is. The caller makes a QString of it only where it has none equal.
    QByteArrayView idText() const { return m_idText; }
    bool hasMark() const { return m_hasMark; }
    quint64 mark() const { return m_mark; }
    // A `done` has two numbers (execution_count, duration_ms) and perhaps exit_code: a frame
    // with more is always parsed. Kept small, since a DoneFrame is moved along a queue.
    static constexpr qsizetype kShapeNumbers = 4;

    // The fields of the last `done` one worker sent that went through the parser, and the text
    // they were parsed from with its numbers cut out. One worker's frames differ from run to run
    // in their numbers only (execution_count, duration_ms), so the next frame of the same shape
    // is a copy of these fields with its numbers put in: a detach and a few element writes
    // instead of a parse (about a seventh of its instructions). Owned by whoever reads one
    // worker's frames; not thread-safe.
    struct Recent {
        QByteArray shape;            // the members' text without the numbers
        bool streamsSynced = false;  // the flag the fields were made with
        QJsonObject fields;
        qsizetype numberCount = -1;  // -1: nothing kept yet
        // Each number's index in `fields`, in text order.
        std::array<qsizetype, kShapeNumbers> numberIndexes{};
    };

    // The event's fields: the frame's members but `type`, `id` and `mark`, `status` "ok" when the
    // frame has none, and `streams_synced` and `state_lost` (false); always exactly what parsing
    // the members' text would give. With `recent`, a frame of its shape is made from its fields,
    // and any other frame is parsed and becomes the new `recent`. Once only: it uses up the
    // text it is made from.
    QJsonObject takeFields(bool streamsSynced, Recent *recent = nullptr);

private:
    DoneFrame() = default;

    bool hasShapeOf(const Recent &recent, bool streamsSynced) const;
    void keepShape(Recent *recent, bool streamsSynced, const QJsonObject &fields,
                   qsizetype membersSize) const;

    QByteArrayView m_idText;
    bool m_hasMark = false;
    quint64 m_mark = 0;
    // "{", then the checked members to keep, each followed by a comma: the start of the fields'
    // JSON text, which takeFields() completes.
    QByteArray m_members;
    // The kept members' number values and their keys, as offsets into m_members, in text order.
    struct NumberSpan {
        qsizetype keyAt, keySize, valueAt, valueSize;
    };
    std::array<NumberSpan, kShapeNumbers> m_numbers{};
    qsizetype m_numberCount = 0;  // -1: more than kShapeNumbers
};

} // namespace replhost::sdk
