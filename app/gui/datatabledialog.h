// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDialog>
#include <QJsonObject>

class QLabel;
class QTableView;

namespace replhost::gui {

class DataTableModel;

// A table (application/vnd.replhost.data+json, see DataTableModel) in a window of its own:
// sortable columns, and a line that says how many rows it shows of how many.
//
// Ownership: a QDialog with a parent. GUI thread only.
class DataTableDialog : public QDialog {
    Q_OBJECT
public:
    DataTableDialog(const QJsonObject &table, const QString &title, QWidget *parent = nullptr);

    QTableView *view() const { return m_view; }
    DataTableModel *model() const { return m_model; }

private:
    DataTableModel *m_model;
    QTableView *m_view;
    QLabel *m_summary;
};

} // namespace replhost::gui
