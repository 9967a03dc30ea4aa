// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QAbstractTableModel>
#include <QJsonArray>
#include <QJsonObject>

namespace replhost::gui {

// A table in replhost's application/vnd.replhost.data+json form — {columns: [{name, dtype,
// values}], index: {name, values}, rows, total_rows, truncated} — as a read-only Qt model: the
// index (when there is one) is the first column, then the columns in order; headers show the
// names, tooltips the dtypes. Cells show numbers right-aligned and null as an empty cell.
//
// Ownership: a QObject with a parent. GUI thread only.
class DataTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr const char *kMime = "application/vnd.replhost.data+json";

    explicit DataTableModel(const QJsonObject &table, QObject *parent = nullptr);

    // Rows the table has in all (what the interpreter had, before any cut).
    qint64 totalRows() const { return m_totalRows; }
    bool isTruncated() const { return m_truncated; }
    bool hasIndex() const { return m_hasIndex; }
    // The text of a cell, as shown.
    static QString cellText(const QJsonValue &value);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Column {
        QString name;
        QString dtype;
        QJsonArray values;
    };
    QList<Column> m_columns;  // the index first when there is one
    int m_rows = 0;
    qint64 m_totalRows = 0;
    bool m_truncated = false;
    bool m_hasIndex = false;
};

} // namespace replhost::gui
