// SPDX-License-Identifier: Apache-2.0
#include "variablespanel.h"

#include "datatabledialog.h"

#include "engineclient.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QPointer>
#include <QShortcut>
#include <QTableWidget>
#include <QVBoxLayout>

namespace replhost::gui {

namespace {
constexpr int kTableRole = Qt::UserRole;
}

VariablesPanel::VariablesPanel(EngineClient &engine, QWidget *parent)
    : QWidget(parent)
    , m_engine(engine)
    , m_table(new QTableWidget(0, 4, this))
    , m_message(new QLabel(this))
    , m_showCallables(new QCheckBox(tr("Modules, functions and classes"), this))
{
    m_table->setObjectName(QStringLiteral("variablesTable"));
    m_table->setHorizontalHeaderLabels({tr("Name"), tr("Type"), tr("Value"), tr("Size")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setSortingEnabled(true);
    m_table->horizontalHeader()->setSectionResizeMode(NameColumn, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(TypeColumn, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(ValueColumn, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(SizeColumn, QHeaderView::ResizeToContents);
    m_table->setAccessibleName(tr("Variables"));
    m_message->setWordWrap(true);
    m_message->setContentsMargins(4, 2, 4, 2);
    connect(m_table, &QTableWidget::cellActivated, this, [this](int row, int) {
        if (const QTableWidgetItem *item = m_table->item(row, NameColumn))
            openTable(item->text());
    });

    m_showCallables->setObjectName(QStringLiteral("showCallables"));
    m_showCallables->setToolTip(tr("Also list imported modules, functions and classes"));
    connect(m_showCallables, &QCheckBox::toggled, this, [this] { showReply(m_lastReply); });

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_showCallables);
    layout->addWidget(m_message);
    setContext(QString(), QString(), QString());
}

QString VariablesPanel::message() const
{
    return m_message->text();
}

void VariablesPanel::setContext(const QString &workspace, const QString &contextId, const QString &state)
{
    const bool same = workspace == m_workspace && contextId == m_contextId;
    m_workspace = workspace;
    m_contextId = contextId;
    m_state = state;
    if (!same) {
        ++m_generation;
        m_table->setRowCount(0);
        m_tables.clear();
        m_lastReply = QJsonObject();
    }
    refresh();
}

void VariablesPanel::refresh()
{
    if (m_contextId.isEmpty()) {
        m_message->setText(tr("Select a context to see its variables."));
        return;
    }
    if (const auto info = m_engine.context(m_workspace, m_contextId))
        m_state = info->state;
    if (m_state == QLatin1String("dormant")) {
        m_message->setText(tr("Dormant: its variables are listed after its next run."));
        return;
    }
    if (m_state != QLatin1String("idle")) {
        m_message->setText(tr("Listed again when the context is idle."));
        return;
    }
    const quint64 generation = ++m_generation;
    QPointer<VariablesPanel> self(this);
    m_engine.variables(m_workspace, m_contextId, [self, generation](Result<QJsonObject> reply) {
        if (!self || self->m_generation != generation)
            return;
        if (!reply) {
            self->m_message->setText(reply.error().code == QLatin1String("unsupported")
                                             ? reply.error().message
                                             : tr("Not listed: %1").arg(reply.error().message));
            emit self->refreshed();
            return;
        }
        self->showReply(*reply);
    });
}

bool VariablesPanel::isCallableOrModule(const QString &type)
{
    // The type names the interpreters give them: Python's, and JavaScript's "function".
    static const QStringList callables{
            QStringLiteral("module"), QStringLiteral("function"), QStringLiteral("type"),
            QStringLiteral("builtin_function_or_method"), QStringLiteral("method"),
            QStringLiteral("ABCMeta"), QStringLiteral("class")};
    return callables.contains(type);
}

void VariablesPanel::showReply(const QJsonObject &reply)
{
    m_lastReply = reply;
    QJsonArray variables;
    for (const QJsonValue &value : reply.value(QLatin1String("variables")).toArray()) {
        if (m_showCallables->isChecked()
            || !isCallableOrModule(value.toObject().value(QLatin1String("type")).toString()))
            variables.append(value);
    }
    m_tables.clear();
    m_table->setSortingEnabled(false);
    m_table->setRowCount(int(variables.size()));
    int row = 0;
    for (const QJsonValue &value : variables) {
        const QJsonObject variable = value.toObject();
        const QString name = variable.value(QLatin1String("name")).toString();
        const QJsonObject table = variable.value(QLatin1String("table")).toObject();
        const QString repr = variable.value(QLatin1String("repr")).toString();
        auto *nameItem = new QTableWidgetItem(name);
        auto *typeItem = new QTableWidgetItem(variable.value(QLatin1String("type")).toString());
        // One line of the value; the tooltip has the whole short repr.
        auto *valueItem = new QTableWidgetItem(QString(repr).replace(QLatin1Char('\n'), QStringLiteral(" ⏎ ")));
        valueItem->setToolTip(repr);
        auto *sizeItem = new QTableWidgetItem(variable.value(QLatin1String("size")).toString());
        sizeItem->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (!table.isEmpty()) {
            m_tables.insert(name, table);
            nameItem->setData(kTableRole, true);
            nameItem->setToolTip(tr("Double-click or Enter opens it as a table"));
            QFont underlined = nameItem->font();
            underlined.setUnderline(true);
            nameItem->setFont(underlined);
        }
        m_table->setItem(row, NameColumn, nameItem);
        m_table->setItem(row, TypeColumn, typeItem);
        m_table->setItem(row, ValueColumn, valueItem);
        m_table->setItem(row, SizeColumn, sizeItem);
        ++row;
    }
    m_table->setSortingEnabled(true);
    m_table->sortItems(NameColumn);
    m_message->setText(variables.isEmpty() ? tr("No variables yet.")
                       : variables.size() == 1 ? tr("1 variable; a double click opens a table.")
                                               : tr("%1 variables; a double click opens a table.").arg(variables.size()));
    emit refreshed();
}

DataTableDialog *VariablesPanel::openTable(const QString &name)
{
    const auto found = m_tables.constFind(name);
    if (found == m_tables.constEnd())
        return nullptr;
    auto *dialog = new DataTableDialog(*found, name, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

} // namespace replhost::gui
