// SPDX-License-Identifier: Apache-2.0
#include "commitbarrier.h"

#include "storage/historywriter.h"

#include <QCoreApplication>

namespace replhost::core {

CommitBarrier::CommitBarrier(storage::HistoryWriter *writer,
                             std::function<void(const ExecutionPtr &)> released, QObject *parent)
    : QObject(parent), m_writer(writer), m_released(std::move(released))
{
    // On the writer's thread: one queued call per batch carries its ids here. Posting to this
    // object is safe there because the destructor detaches the listener (waiting for a call in
    // progress) before the object goes.
    m_writer->setCommitListener([this](const QStringList &ids) {
        QMetaObject::invokeMethod(this, [this, ids] { release(ids); }, Qt::QueuedConnection);
    });
}

CommitBarrier::~CommitBarrier()
{
    m_writer->setCommitListener({});
}

void CommitBarrier::hold(const ExecutionPtr &execution, const sdk::Event &done, qint64 durationMs,
                         bool durable)
{
    m_held.insert(execution->id(), Held{execution, done, durationMs});
    if (!durable)
        return;
    // Not released here: the caller goes on with its bookkeeping (its state, the next queued
    // run) before anyone hears that the run ended, as for a release that comes from the writer.
    // An open Batch releases it when it closes; otherwise a call queued to this thread does, at
    // the next loop turn (no thread switch, but a wake-up of the loop).
    m_durable.append(execution->id());
    if (m_batches == 0 && !m_turnQueued) {
        m_turnQueued = true;
        QMetaObject::invokeMethod(this, [this] {
            m_turnQueued = false;
            releaseDurable();
        }, Qt::QueuedConnection);
    }
}

void CommitBarrier::releaseDurable()
{
    if (!m_durable.isEmpty())
        release(std::exchange(m_durable, {}));
}

CommitBarrier::Batch::Batch(CommitBarrier *barrier) : m_barrier(barrier)
{
    ++m_barrier->m_batches;
}

CommitBarrier::Batch::~Batch()
{
    // What a slot of the release holds anew is released by its own Batch or the next turn.
    if (--m_barrier->m_batches == 0)
        m_barrier->releaseDurable();
}

void CommitBarrier::releaseCommitted()
{
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    releaseDurable();  // also those an open Batch would release when it closes
}

void CommitBarrier::release(const QStringList &executionIds)
{
    for (const QString &id : executionIds) {
        // Ends not held here (there are none today) are simply not announced twice.
        const auto it = m_held.find(id);
        if (it == m_held.end())
            continue;
        const Held held = std::move(it.value());
        m_held.erase(it);
        held.execution->addEvent(held.done, held.durationMs);
        m_released(held.execution);
    }
}

} // namespace replhost::core
