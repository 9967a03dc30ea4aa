// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <replhost/sdk/event.h>

#include <QDateTime>
#include <QList>
#include <QString>

#include <deque>

namespace replhost::core {

// What a context's interpreter wrote while none of its runs was going on: a timer, a thread or
// a background job that an earlier run left behind. Such output belongs to no execution (the
// next run must not be charged with it), so it is kept here, per context, for the faces to show.
//
// Entries are numbered from 1 in the order they came, so a client asks for what came after the
// last number it saw. Only the newest entries are kept, up to a bound on their text; `dropped`
// counts what was let go. Nothing is persisted: a restart of the engine starts empty.
// Threading: a plain value, used on the engine's thread.
class BackgroundOutput {
public:
    struct Entry {
        qint64 seq = 0;
        QDateTime at;               // UTC, when the host read it
        QString afterExecutionId;   // the context's last execution before it ("" when none)
        sdk::Event event;           // a stream or display event, without an execution id
    };

    static constexpr qint64 kDefaultMaxBytes = 1 << 20;
    static constexpr int kDefaultMaxEntries = 4096;

    explicit BackgroundOutput(qint64 maxBytes = kDefaultMaxBytes, int maxEntries = kDefaultMaxEntries);

    // Keeps `event` (any execution id it carries is cleared) and returns its entry.
    const Entry &append(const sdk::Event &event, const QString &afterExecutionId);
    // At most `limit` entries numbered above `seq`, oldest first.
    QList<Entry> after(qint64 seq, int limit) const;
    // The number of the newest entry ever appended; 0 when none.
    qint64 lastSeq() const { return m_lastSeq; }
    // Entries let go to stay within the bounds.
    qint64 dropped() const { return m_dropped; }

private:
    qint64 m_maxBytes;
    int m_maxEntries;
    std::deque<Entry> m_entries;
    qint64 m_bytes = 0;
    qint64 m_lastSeq = 0;
    qint64 m_dropped = 0;
};

} // namespace replhost::core
