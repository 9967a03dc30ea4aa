// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringView>

#include <cstring>

namespace replhost::core {

// Compact JSON written piece by piece into one buffer through a cursor, for the documents the
// server writes on every run (an execution's answer, each event of a stream or of the history).
// A document is dozens of short pieces; appending each to a QByteArray (insert(), a resize, a
// detach check) cost more than the bytes themselves, so the buffer is grown ahead, at least
// doubling, and each piece is a bounds check and a copy.
//
// The text is what QJsonDocument::toJson(QJsonDocument::Compact) writes for the same values:
// the same escapes, UTF-8, the same numbers (tst_jsonwriter holds the two side by side).
// The writer does not check structure: the caller writes the punctuation between values.
// Nothing here fails. Ownership: the writer owns its buffer until take() hands it over.
// Threading: a plain value; any thread, one at a time.
class JsonWriter {
public:
    // `reserve`: the size expected, so that a typical document is allocated once.
    explicit JsonWriter(qsizetype reserve = 256);
    JsonWriter(const JsonWriter &) = delete;
    JsonWriter &operator=(const JsonWriter &) = delete;

    // Bytes as they are: punctuation, keys already in JSON form, a document written elsewhere.
    void raw(QByteArrayView bytes)
    {
        const qsizetype n = bytes.size();
        if (n == 0)
            return;  // an empty view may have no data pointer, which memcpy may not be given
        std::memcpy(room(n), bytes.data(), size_t(n));
        m_size += n;
    }
    void raw(char c)
    {
        *room(1) = c;
        ++m_size;
    }
    // `text` as a JSON string, quotes included.
    void string(QStringView text);
    void integer(qint64 value);
    // A double as QJsonDocument writes one: the shortest digits that read back the same;
    // infinities and NaN as null.
    void number(double value);
    // Any JSON value; objects and arrays nest.
    void value(const QJsonValue &value);
    // The event as stored and served: {"type": …, "execution_id": … or null, <its fields>}.
    // Fields named "type" or "execution_id" are left out, as Event::toJson() overwrites them.
    void event(const sdk::Event &event);
    // One event alone, as event() writes it: for the history and for a stream's data lines.
    static QByteArray eventJson(const sdk::Event &event);

    qsizetype size() const { return m_size; }
    // The text written; the writer is empty afterwards.
    QByteArray take();

private:
    // Where `n` more bytes go; the caller writes them and adds them to m_size.
    char *room(qsizetype n)
    {
        if (m_capacity - m_size < n)
            grow(n);
        return m_data + m_size;
    }
    void grow(qsizetype n);
    // The members of `object` after `{` (or after other members: `afterOthers`).
    void members(const QJsonObject &object, bool afterOthers, bool skipEventKeys);

    // Sized to its capacity while writing (so the cursor may write anywhere below it, without a
    // resize per piece); cut to m_size by take(). Never shared while writing.
    QByteArray m_buffer;
    char *m_data = nullptr;
    qsizetype m_size = 0;
    qsizetype m_capacity = 0;
};

} // namespace replhost::core
