// SPDX-License-Identifier: Apache-2.0
#include "datatabledialog.h"

#include "datatablemodel.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace replhost::gui {

DataTableDialog::DataTableDialog(const QJsonObject &table, const QString &title, QWidget *parent)
    : QDialog(parent)
    , m_model(new DataTableModel(table, this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("dataTableDialog"));
    setWindowTitle(title);
    auto *sorted = new QSortFilterProxyModel(this);
    sorted->setSourceModel(m_model);
    m_view->setModel(sorted);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->resizeColumnsToContents();
    const int columns = m_model->columnCount() - (m_model->hasIndex() ? 1 : 0);
    QString summary = tr("%n row(s)", nullptr, m_model->rowCount()) + tr(" × %n column(s)", nullptr, columns);
    if (m_model->isTruncated())
        summary += tr(" — the first %1 of %2 rows").arg(m_model->rowCount()).arg(m_model->totalRows());
    m_summary->setText(summary);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_summary);
    resize(760, 520);
}

} // namespace replhost::gui
