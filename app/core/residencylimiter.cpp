// SPDX-License-Identifier: Apache-2.0
#include "residencylimiter.h"

#include "context.h"

#include <algorithm>

namespace replhost::core {

namespace {

// How often idle workers are looked for: a fraction of the timeout, so one is stopped at most a
// quarter of the timeout late, and never more often than needed.
int idleCheckInterval(int idleTimeoutMs)
{
    return std::clamp(idleTimeoutMs / 4, 50, 60 * 1000);
}

} // namespace

ResidencyLimiter::ResidencyLimiter(const QHash<QString, Context *> &contexts, QObject *parent)
    : QObject(parent), m_contexts(contexts)
{
    connect(&m_idleTimer, &QTimer::timeout, this, &ResidencyLimiter::evictIdle);
}

void ResidencyLimiter::setLimits(int maxResident, int idleTimeoutMs)
{
    m_maxResident = std::max(1, maxResident);
    m_idleTimeoutMs = std::max(0, idleTimeoutMs);
    if (m_idleTimeoutMs > 0)
        m_idleTimer.start(idleCheckInterval(m_idleTimeoutMs));
    else
        m_idleTimer.stop();
    enforce(nullptr);
}

void ResidencyLimiter::admit(const Context *context)
{
    enforce(context);
}

void ResidencyLimiter::settle()
{
    // Cheap when under the limit: that is every finished run's path.
    if (m_overLimit)
        enforce(nullptr);
}

void ResidencyLimiter::enforce(const Context *keep)
{
    // Candidates in LRU order: the idle ones, and those whose worker is still starting with
    // nothing to do, which will be idle in a moment. Busy ones are passed over.
    QList<Context *> candidates;
    int resident = 0;
    for (Context *context : m_contexts) {
        if (!context->isResident())
            continue;
        ++resident;
        if (context != keep && (context->isEvictable() || context->isWarmingUp()))
            candidates.append(context);
    }
    if (resident <= m_maxResident) {
        m_overLimit = false;
        return;
    }
    std::sort(candidates.begin(), candidates.end(), [](const Context *a, const Context *b) {
        return a->activityOrder() < b->activityOrder();
    });
    for (Context *context : candidates) {
        // The least recently used one is still starting: it goes when it is ready (settle()),
        // rather than a context used more recently going now.
        if (resident <= m_maxResident || !context->isEvictable())
            break;
        context->evict();
        --resident;
    }
    m_overLimit = resident > m_maxResident;
}

void ResidencyLimiter::evictIdle()
{
    const qint64 now = Context::monotonicNow();
    QList<Context *> idle;
    for (Context *context : m_contexts) {
        if (context->isEvictable() && now - context->lastActive() >= m_idleTimeoutMs)
            idle.append(context);
    }
    // Evicting changes no other context, but it emits signals: not while iterating the table.
    for (Context *context : idle)
        context->evict();
}

} // namespace replhost::core
