// SPDX-License-Identifier: Apache-2.0
#include "backgroundoutput.h"

#include "execution.h"

#include <algorithm>

namespace replhost::core {

BackgroundOutput::BackgroundOutput(qint64 maxBytes, int maxEntries)
    : m_maxBytes(maxBytes), m_maxEntries(std::max(1, maxEntries))
{
}

const BackgroundOutput::Entry &BackgroundOutput::append(const sdk::Event &event,
                                                        const QString &afterExecutionId)
{
    Entry entry;
    entry.seq = ++m_lastSeq;
    entry.at = QDateTime::currentDateTimeUtc();
    entry.afterExecutionId = afterExecutionId;
    entry.event = event;
    entry.event.executionId.clear();
    m_bytes += Execution::memoryEstimate(entry.event);
    m_entries.push_back(std::move(entry));
    // The newest entry stays even when it alone is over the bound.
    while (m_entries.size() > 1
           && (m_bytes > m_maxBytes || m_entries.size() > size_t(m_maxEntries))) {
        m_bytes -= Execution::memoryEstimate(m_entries.front().event);
        m_entries.pop_front();
        ++m_dropped;
    }
    return m_entries.back();
}

QList<BackgroundOutput::Entry> BackgroundOutput::after(qint64 seq, int limit) const
{
    QList<Entry> out;
    // Numbers are consecutive, so the first entry above `seq` is found by arithmetic.
    if (m_entries.empty() || limit <= 0)
        return out;
    const qint64 first = m_entries.front().seq;
    auto it = m_entries.begin() + std::clamp<qint64>(seq + 1 - first, 0, qint64(m_entries.size()));
    for (; it != m_entries.end() && out.size() < limit; ++it)
        out.append(*it);
    return out;
}

} // namespace replhost::core
