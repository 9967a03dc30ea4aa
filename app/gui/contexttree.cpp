// SPDX-License-Identifier: Apache-2.0
#include "contexttree.h"

#include "languagebadge.h"


#include <QDateTime>
#include <QHeaderView>

namespace replhost::gui {

namespace {

constexpr int kWorkspaceRole = Qt::UserRole;
constexpr int kContextRole = Qt::UserRole + 1;

} // namespace

ContextTree::ContextTree(EngineClient &engine, QWidget *parent)
    : QTreeWidget(parent)
    , m_engine(engine)
{
    setColumnCount(3);
    setHeaderLabels({tr("Context"), tr("State"), tr("Runs")});
    setRootIsDecorated(true);
    setUniformRowHeights(true);
    setAlternatingRowColors(false);
    setSelectionMode(QAbstractItemView::SingleSelection);
    // Names get the room they need; the state takes what is left (its dot stays when its word
    // does not fit, and its tooltip explains it), and a name wider than the tree scrolls.
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
    header()->setSectionResizeMode(StateColumn, QHeaderView::Stretch);
    header()->setSectionResizeMode(RunsColumn, QHeaderView::ResizeToContents);
    header()->setMinimumSectionSize(24);
    setTextElideMode(Qt::ElideRight);
    setAccessibleName(tr("Contexts"));

    connect(&engine, &EngineClient::contextAdded, this, &ContextTree::addContext);
    connect(&engine, &EngineClient::contextChanged, this, &ContextTree::onChanged);
    connect(&engine, &EngineClient::contextRemoved, this, &ContextTree::onRemoved);
    // Workspaces created or deleted through the API appear and go without a reload.
    connect(&engine, &EngineClient::workspaceAdded, this,
            [this](const QString &name) { workspaceItem(name, true); });
    connect(&engine, &EngineClient::workspaceRemoved, this,
            [this](const QString &name) { delete workspaceItem(name, false); });
    connect(this, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem *current) {
        if (!current) {
            emit currentContextChanged(QString(), QString());
            return;
        }
        emit currentContextChanged(current->data(NameColumn, kWorkspaceRole).toString(),
                                   current->data(NameColumn, kContextRole).toString());
    });
    reload();
}

QString ContextTree::displayName(const core::ContextInfo &info)
{
    if (!info.name.isEmpty())
        return info.name;
    return QStringLiteral("%1 %2").arg(info.language, info.id.left(8));
}

QString ContextTree::stateDescription(const QString &state)
{
    if (state == QLatin1String("dormant"))
        return tr("Dormant: no interpreter is running for this context (the host restarted, or it "
                  "sat idle and its worker was stopped). Its next run starts one and restores its state first.");
    if (state == QLatin1String("idle"))
        return tr("Idle: the interpreter is running and waits for code.");
    if (state == QLatin1String("busy"))
        return tr("Busy: code is running; later runs wait in the queue.");
    if (state == QLatin1String("starting"))
        return tr("Starting: the interpreter is being started.");
    if (state == QLatin1String("restoring"))
        return tr("Restoring: a new interpreter replays the context's history to rebuild its state.");
    if (state == QLatin1String("dead"))
        return tr("Dead: the interpreter stopped unexpectedly. Restart the context to run code again.");
    return state;
}

void ContextTree::reload()
{
    const QString selected = currentContextId();
    const QSignalBlocker blocker(this);
    clear();
    for (const storage::WorkspaceRecord &ws : m_engine.workspaces()) {
        workspaceItem(ws.name, true);
        for (const core::ContextInfo &info : m_engine.contexts(ws.name))
            addContext(info);
    }
    expandAll();
    if (QTreeWidgetItem *item = contextItem(selected))
        setCurrentItem(item);
}

QTreeWidgetItem *ContextTree::workspaceItem(const QString &workspace, bool create)
{
    for (int i = 0; i < topLevelItemCount(); ++i) {
        if (topLevelItem(i)->data(NameColumn, kWorkspaceRole).toString() == workspace)
            return topLevelItem(i);
    }
    if (!create)
        return nullptr;
    auto *item = new QTreeWidgetItem(this);
    item->setText(NameColumn, workspace);
    item->setData(NameColumn, kWorkspaceRole, workspace);
    item->setIcon(NameColumn, style()->standardIcon(QStyle::SP_DirIcon));
    QFont bold = item->font(NameColumn);
    bold.setBold(true);
    item->setFont(NameColumn, bold);
    item->setToolTip(NameColumn, tr("Workspace %1").arg(workspace));
    item->setExpanded(true);
    return item;
}

QTreeWidgetItem *ContextTree::contextItem(const QString &contextId) const
{
    if (contextId.isEmpty())
        return nullptr;
    for (int i = 0; i < topLevelItemCount(); ++i) {
        QTreeWidgetItem *ws = topLevelItem(i);
        for (int j = 0; j < ws->childCount(); ++j) {
            if (ws->child(j)->data(NameColumn, kContextRole).toString() == contextId)
                return ws->child(j);
        }
    }
    return nullptr;
}

void ContextTree::updateItem(QTreeWidgetItem *item, const core::ContextInfo &info)
{
    item->setText(NameColumn, displayName(info));
    item->setIcon(NameColumn, LanguageBadge::icon(info.language));
    item->setData(NameColumn, kWorkspaceRole, info.workspace);
    item->setData(NameColumn, kContextRole, info.id);
    QString state = info.state;
    if (info.queued > 0)
        state += tr(" +%1").arg(info.queued);
    item->setText(StateColumn, state);
    item->setIcon(StateColumn, LanguageBadge::stateIcon(info.state));
    item->setText(RunsColumn, QString::number(info.executionCount));
    item->setTextAlignment(RunsColumn, Qt::AlignRight | Qt::AlignVCenter);
    QString tip = tr("%1 context %2\nid: %3\ncwd: %4")
                          .arg(info.language, displayName(info), info.id, info.cwd);
    if (!info.languageVersion.isEmpty())
        tip += tr("\nruntime: %1").arg(info.languageVersion);
    if (info.pid > 0)
        tip += tr("\npid: %1").arg(info.pid);
    if (info.lastUsedAt > 0)
        tip += tr("\nlast used: %1")
                       .arg(QDateTime::fromMSecsSinceEpoch(info.lastUsedAt).toString(Qt::ISODate));
    for (int column = 0; column < columnCount(); ++column)
        item->setToolTip(column, tip);
    item->setToolTip(StateColumn, stateDescription(info.state) + QStringLiteral("\n\n") + tip);
}

void ContextTree::addContext(const core::ContextInfo &info)
{
    QTreeWidgetItem *item = contextItem(info.id);
    if (!item) {
        QTreeWidgetItem *parent = workspaceItem(info.workspace, true);
        item = new QTreeWidgetItem(parent);
        parent->setExpanded(true);
    }
    updateItem(item, info);
}

void ContextTree::onChanged(const core::ContextInfo &info)
{
    if (QTreeWidgetItem *item = contextItem(info.id))
        updateItem(item, info);
    else
        addContext(info);
}

void ContextTree::onRemoved(const QString &, const QString &id)
{
    delete contextItem(id);
}

QString ContextTree::currentWorkspace() const
{
    const QTreeWidgetItem *item = currentItem();
    return item ? item->data(NameColumn, kWorkspaceRole).toString() : QString();
}

QString ContextTree::currentContextId() const
{
    const QTreeWidgetItem *item = currentItem();
    return item ? item->data(NameColumn, kContextRole).toString() : QString();
}

void ContextTree::selectContext(const QString &contextId)
{
    if (QTreeWidgetItem *item = contextItem(contextId))
        setCurrentItem(item);
}

void ContextTree::stepContext(int direction)
{
    QList<QTreeWidgetItem *> items;
    for (int i = 0; i < topLevelItemCount(); ++i) {
        for (int j = 0; j < topLevelItem(i)->childCount(); ++j)
            items.append(topLevelItem(i)->child(j));
    }
    if (items.isEmpty())
        return;
    const int at = int(items.indexOf(currentItem()));
    const int next = at < 0 ? 0 : (at + direction + int(items.size())) % int(items.size());
    setCurrentItem(items.at(next));
}

} // namespace replhost::gui
