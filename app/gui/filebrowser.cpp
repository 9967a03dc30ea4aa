// SPDX-License-Identifier: Apache-2.0
#include "filebrowser.h"

#include <QFileInfo>
#include <QFileSystemModel>
#include <QHeaderView>
#include <QLabel>
#include <QTreeView>
#include <QVBoxLayout>

namespace replhost::gui {

FileBrowser::FileBrowser(QWidget *parent)
    : QWidget(parent)
    , m_model(new QFileSystemModel(this))
    , m_view(new QTreeView(this))
    , m_path(new QLabel(this))
{
    m_model->setReadOnly(true);
    m_model->setFilter(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::AllDirs);
    m_view->setModel(m_model);
    m_view->setAccessibleName(tr("Workspace files"));
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    for (int column = 1; column < m_model->columnCount(); ++column)
        m_view->hideColumn(column);
    m_view->header()->hide();
    m_path->setContentsMargins(4, 2, 4, 2);
    m_path->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_path);
    layout->addWidget(m_view, 1);
    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex &index) {
        if (!m_model->isDir(index))
            emit openRequested(m_model->filePath(index));
    });
}

void FileBrowser::setRoot(const QString &directory)
{
    if (directory == m_root)
        return;
    m_root = directory;
    // The full path can be long: show the directory's name, the path on hover.
    m_path->setText(directory.isEmpty() ? QString() : tr("Workspace folder: %1").arg(QFileInfo(directory).fileName()));
    m_path->setToolTip(directory);
    if (directory.isEmpty()) {
        m_view->setRootIndex(QModelIndex());
        m_view->setEnabled(false);
        return;
    }
    m_view->setEnabled(true);
    m_view->setRootIndex(m_model->setRootPath(directory));
}

QString FileBrowser::currentFile() const
{
    const QModelIndex index = m_view->currentIndex();
    return index.isValid() && !m_model->isDir(index) ? m_model->filePath(index) : QString();
}

} // namespace replhost::gui
