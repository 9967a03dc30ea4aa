// SPDX-License-Identifier: Apache-2.0
#include "datatablemodel.h"

#include <QFont>
#include <QJsonDocument>

namespace replhost::gui {

DataTableModel::DataTableModel(const QJsonObject &table, QObject *parent)
    : QAbstractTableModel(parent)
{
    const QJsonObject index = table.value(QLatin1String("index")).toObject();
    if (index.value(QLatin1String("values")).isArray()) {
        m_hasIndex = true;
        m_columns.append({index.value(QLatin1String("name")).toString(), QString(),
                          index.value(QLatin1String("values")).toArray()});
    }
    for (const QJsonValue &value : table.value(QLatin1String("columns")).toArray()) {
        const QJsonObject column = value.toObject();
        const QJsonValue name = column.value(QLatin1String("name"));
        m_columns.append({name.isString() ? name.toString() : cellText(name),
                          column.value(QLatin1String("dtype")).toString(),
                          column.value(QLatin1String("values")).toArray()});
    }
    for (const Column &column : std::as_const(m_columns))
        m_rows = qMax(m_rows, int(column.values.size()));
    m_totalRows = table.value(QLatin1String("total_rows")).toInteger(m_rows);
    m_truncated = table.value(QLatin1String("truncated")).toBool();
}

QString DataTableModel::cellText(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        return QString();
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("True") : QStringLiteral("False");
    case QJsonValue::Double: {
        const double d = value.toDouble();
        if (d == qint64(d) && qAbs(d) < 1e15)
            return QString::number(qint64(d));
        return QString::number(d, 'g', 10);
    }
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    }
    return QString();
}

int DataTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int DataTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QVariant DataTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.column() >= m_columns.size())
        return {};
    const QJsonValue value = m_columns.at(index.column()).values.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        return cellText(value);
    case Qt::TextAlignmentRole:
        return value.isDouble() ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::FontRole:
        if (m_hasIndex && index.column() == 0) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    default:
        return {};
    }
}

QVariant DataTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical)
        return role == Qt::DisplayRole ? QVariant(section) : QVariant();
    if (section < 0 || section >= m_columns.size())
        return {};
    const Column &column = m_columns.at(section);
    if (role == Qt::DisplayRole)
        return column.name;
    if (role == Qt::ToolTipRole)
        return column.dtype.isEmpty() ? (m_hasIndex && section == 0 ? tr("index") : QString())
                                      : tr("%1 (%2)").arg(column.name, column.dtype);
    return {};
}

} // namespace replhost::gui
