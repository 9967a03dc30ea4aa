// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDialog>
#include <QList>

class QAction;
class QTableWidget;

namespace replhost::gui {

// Lists every action of the window with its shortcuts, read from the actions themselves so the
// list cannot drift from what the keys do.
//
// Ownership: a QDialog, usually on its caller's stack; the actions must outlive it.
// GUI thread only.
class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    ShortcutsDialog(const QList<QAction *> &actions, QWidget *parent = nullptr);

    QTableWidget *table() const { return m_table; }

private:
    QTableWidget *m_table;
};

} // namespace replhost::gui
