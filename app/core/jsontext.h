// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>

#include <QByteArray>
#include <QJsonValue>
#include <QStringView>

namespace replhost::core {

// Compact JSON appended to a QByteArray, one value at a time, for callers that write a single
// value (an event for the history or a stream). A document of many values is written with one
// JsonWriter instead, which these wrap.
//
// The text is what QJsonDocument::toJson(QJsonDocument::Compact) writes for the same values:
// the same escapes, UTF-8, the same numbers (tst_jsontext holds the two side by side).
// Threading: none of its own; any thread.
class JsonText {
public:
    JsonText() = delete;

    // `text` as a JSON string, quotes included.
    static void appendString(QByteArray &out, QStringView text);
    // Any JSON value; objects and arrays nest.
    static void appendValue(QByteArray &out, const QJsonValue &value);
    // The event as stored and served: {"type": …, "execution_id": … or null, <its fields>}.
    // Fields named "type" or "execution_id" are left out, as Event::toJson() overwrites them.
    static void appendEvent(QByteArray &out, const sdk::Event &event);
    static QByteArray event(const sdk::Event &event);
};

} // namespace replhost::core
