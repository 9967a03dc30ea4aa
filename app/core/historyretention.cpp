// SPDX-License-Identifier: Apache-2.0
#include "historyretention.h"

#include "workspacemanager.h"

#include <QDateTime>
#include <QLoggingCategory>

#include <algorithm>

namespace replhost::core {

Q_LOGGING_CATEGORY(lcRetention, "replhost.retention")

namespace {
constexpr int kFirstPassAtMostMs = 60 * 1000;
}

HistoryRetention::HistoryRetention(storage::HistoryPruner *pruner, WorkspaceManager *workspaces,
                                   int intervalMs, QObject *parent)
    : QObject(parent), m_pruner(pruner), m_workspaces(workspaces)
{
    if (intervalMs <= 0)
        return;
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, [this] { pruneNow(); });
    m_timer.start();
    QTimer::singleShot(std::min(intervalMs, kFirstPassAtMostMs), this, [this] { pruneNow(); });
}

void HistoryRetention::pruneNow(bool wait)
{
    auto workspaces = m_workspaces->list();
    if (!workspaces) {
        qCWarning(lcRetention) << "history retention skipped:" << workspaces.error().message;
        return;
    }
    QList<storage::RetentionLimits> limits;
    for (const storage::WorkspaceRecord &workspace : *workspaces) {
        auto settings = m_workspaces->settings(workspace.name);
        if (!settings) {
            // Stored settings that no longer validate: nothing is pruned rather than pruning
            // against limits the workspace did not choose.
            qCWarning(lcRetention) << "history of workspace" << workspace.name
                                   << "not pruned:" << settings.error().message;
            continue;
        }
        limits.append({workspace.id, settings->history.maxExecutions, settings->history.maxBytes,
                       settings->history.maxAge * 1000});
    }
    m_pruner->prune(std::move(limits), QDateTime::currentMSecsSinceEpoch());
    if (wait)
        m_pruner->waitIdle();
}

} // namespace replhost::core
