// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

namespace replhost::core {

class Context;

// Keeps workers from piling up: at most `maxResident` contexts have a running worker, and a
// worker idle for `idleTimeoutMs` is stopped. Either way the context is evicted: made dormant,
// to be restored on its next use (Context::evict). The least recently used idle context goes
// first. A context that is running, has runs queued, is starting, restoring or answering a
// question is never evicted, so the count may stay above the limit until enough of them are idle
// again; it is brought down as soon as one is. When the least recently used one is a worker
// still starting for a context with nothing to do, it is the one evicted once it is ready, not a
// context used more recently.
//
// Threading: the engine thread. `contexts` is the ContextManager's own table and outlives this.
class ResidencyLimiter : public QObject {
    Q_OBJECT
public:
    ResidencyLimiter(const QHash<QString, Context *> &contexts, QObject *parent);

    // maxResident >= 1; idleTimeoutMs 0 = never.
    void setLimits(int maxResident, int idleTimeoutMs);
    int maxResident() const { return m_maxResident; }
    int idleTimeoutMs() const { return m_idleTimeoutMs; }

    // `context` has just started a worker: evicts others beyond the limit.
    void admit(const Context *context);
    // A context has finished some work: evicts what earlier could not be (all were busy).
    void settle();

private:
    void enforce(const Context *keep);
    void evictIdle();

    const QHash<QString, Context *> &m_contexts;
    int m_maxResident = 64;
    int m_idleTimeoutMs = 0;
    bool m_overLimit = false;  // the last enforce() could not get down to the limit
    QTimer m_idleTimer;
};

} // namespace replhost::core
