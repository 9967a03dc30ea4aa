// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "storage/historypruner.h"

#include <QObject>
#include <QTimer>

namespace replhost::core {

class WorkspaceManager;

// Keeps every workspace's execution history within its settings' `history` limits
// (WorkspaceSettings::History). On a timer it hands the limits of every workspace to the
// pruner, which does the work on its own thread (storage::HistoryPruner): the engine thread only
// reads the settings it has cached, so no run and no answer waits for retention.
//
// Threading: the engine thread. The pruner and the workspace manager outlive this object.
class HistoryRetention : public QObject {
    Q_OBJECT
public:
    // `intervalMs`: between passes (0: only when asked). The first pass comes one interval, at
    // most a minute, after construction, so that opening the engine does not wait for it.
    HistoryRetention(storage::HistoryPruner *pruner, WorkspaceManager *workspaces,
                     int intervalMs, QObject *parent = nullptr);

    // Queues a pass now. With `wait`, returns once it is done (blocking the calling thread: for
    // tools and tests, never the engine's own timers).
    void pruneNow(bool wait = false);

    storage::HistoryPruner::Totals totals() const { return m_pruner->totals(); }

private:
    storage::HistoryPruner *m_pruner;
    WorkspaceManager *m_workspaces;
    QTimer m_timer;
};

} // namespace replhost::core
