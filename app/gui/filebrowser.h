// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QWidget>

class QFileSystemModel;
class QLabel;
class QTreeView;

namespace replhost::gui {

// The files of the selected workspace (a QFileSystemModel on its directory, watched by Qt, so
// files written by code show up). Activating a file asks the window to open it in the editor.
//
// Ownership: a QWidget in its parent's tree. GUI thread only.
class FileBrowser : public QWidget {
    Q_OBJECT
public:
    explicit FileBrowser(QWidget *parent = nullptr);

    void setRoot(const QString &directory);
    QString root() const { return m_root; }
    QString currentFile() const;
    QTreeView *view() const { return m_view; }

signals:
    void openRequested(const QString &path);

private:
    QString m_root;
    QFileSystemModel *m_model;
    QTreeView *m_view;
    QLabel *m_path;
};

} // namespace replhost::gui
