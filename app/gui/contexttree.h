// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QTreeWidget>

namespace replhost::core { class Engine; }

namespace replhost::gui {

// Workspaces and their contexts: language badge, name, live state and execution count, kept
// current by the ContextManager's signals (contexts created, changed or removed through the HTTP
// API show up too).
//
// Ownership: a QWidget in its parent's tree; the engine must outlive it. GUI thread only.
class ContextTree : public QTreeWidget {
    Q_OBJECT
public:
    enum Column { NameColumn, StateColumn, RunsColumn };

    ContextTree(EngineClient &engine, QWidget *parent = nullptr);

    // Re-reads every workspace and context.
    void reload();
    // Lists a context (or updates its row when it is listed already).
    void addContext(const core::ContextInfo &info);

    // The selected context (empty id when a workspace or nothing is selected).
    QString currentWorkspace() const;
    QString currentContextId() const;
    void selectContext(const QString &contextId);
    // Moves the selection to the next (+1) or previous (-1) context.
    void stepContext(int direction);

    QTreeWidgetItem *contextItem(const QString &contextId) const;
    // One sentence on what a context in `state` is doing and what the next run does.
    static QString stateDescription(const QString &state);
    static QString displayName(const core::ContextInfo &info);

signals:
    // The selection moved to a context, to a workspace (empty contextId) or to nothing.
    void currentContextChanged(const QString &workspace, const QString &contextId);

private:
    QTreeWidgetItem *workspaceItem(const QString &workspace, bool create);
    void updateItem(QTreeWidgetItem *item, const core::ContextInfo &info);
    void onChanged(const core::ContextInfo &info);
    void onRemoved(const QString &workspace, const QString &id);

    EngineClient &m_engine;
};

} // namespace replhost::gui
