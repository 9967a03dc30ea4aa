// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>

#include <QByteArray>
#include <QJsonValue>
#include <QStringView>

namespace replhost::core {

// Compact JSON written straight into bytes, for the documents the server writes on every run
// (an execution's answer, each event of a stream or of the history), where building a
// QJsonObject first and serialising it afterwards cost more than the run itself.
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
