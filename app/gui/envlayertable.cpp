// SPDX-License-Identifier: Apache-2.0
#include "envlayertable.h"

#include "themes.h"

#include <QApplication>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace replhost::gui {

EnvLayerTable::EnvLayerTable(const QString &title, QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(title, this))
    , m_table(new QTableWidget(0, 2, this))
    , m_key(new QLineEdit(this))
    , m_value(new QLineEdit(this))
    , m_set(new QPushButton(tr("Set"), this))
    , m_unset(new QPushButton(tr("Unset"), this))
    , m_clear(new QPushButton(tr("Clear"), this))
    , m_status(new QLabel(this))
{
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_table->setHorizontalHeaderLabels({tr("Key"), tr("Value")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setAccessibleName(title);
    m_key->setPlaceholderText(tr("KEY"));
    m_value->setPlaceholderText(tr("value"));
    m_set->setToolTip(tr("Set KEY to value in this layer"));
    m_unset->setToolTip(tr("Remove KEY from the environment, even if a lower layer sets it"));
    m_clear->setToolTip(tr("Drop KEY from this layer (lower layers apply again)"));
    m_status->setWordWrap(true);

    // The fields on a line of their own, the buttons under them: side by side in a dock's
    // width the fields were left a few characters wide.
    auto *fields = new QHBoxLayout;
    fields->addWidget(m_key, 1);
    fields->addWidget(m_value, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_set);
    buttons->addWidget(m_unset);
    buttons->addWidget(m_clear);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(m_table, 1);
    layout->addLayout(fields);
    layout->addLayout(buttons);
    layout->addWidget(m_status);

    connect(m_table, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row < 0)
            return;
        m_key->setText(m_table->item(row, 0)->text());
        const bool isUnset = m_table->item(row, 1)->data(Qt::UserRole).toBool();
        m_value->setText(isUnset ? QString() : m_table->item(row, 1)->text());
    });
    connect(m_set, &QPushButton::clicked, this, [this] { setVariable(m_key->text().trimmed(), m_value->text()); });
    connect(m_unset, &QPushButton::clicked, this, [this] { unsetVariable(m_key->text().trimmed()); });
    connect(m_clear, &QPushButton::clicked, this, [this] { clearVariable(m_key->text().trimmed()); });
    connect(m_value, &QLineEdit::returnPressed, m_set, &QPushButton::click);
    setSource({}, {});
}

void EnvLayerTable::setSource(Reader reader, Writer writer, const QString &why)
{
    ++m_source;
    m_reader = std::move(reader);
    m_writer = std::move(writer);
    const bool enabled = bool(m_reader);
    for (QWidget *w : std::initializer_list<QWidget *>{m_table, m_key, m_value, m_set, m_unset, m_clear})
        w->setEnabled(enabled);
    m_status->setText(why);
    reload();
}

void EnvLayerTable::reload()
{
    m_table->setRowCount(0);
    if (!m_reader)
        return;
    QPointer<EnvLayerTable> self(this);
    const quint64 source = m_source;
    m_reader([self, source](Layer layer) {
        if (self && self->m_source == source)
            self->showLayer(layer);
    });
}

void EnvLayerTable::showLayer(const Layer &layer)
{
    m_table->setRowCount(0);
    if (!layer) {
        m_status->setText(layer.error().message);
        return;
    }
    m_table->setRowCount(int(layer->size()));
    int row = 0;
    for (const storage::EnvVarRecord &var : *layer) {
        auto *key = new QTableWidgetItem(var.key);
        auto *value = new QTableWidgetItem(var.isUnset ? tr("(unset)") : var.value);
        value->setData(Qt::UserRole, var.isUnset);
        if (var.isUnset) {
            QFont italic = value->font();
            italic.setItalic(true);
            value->setFont(italic);
            value->setForeground(Themes::mutedColour(QApplication::palette()));
        }
        value->setToolTip(var.isUnset ? tr("removed from the environment") : var.value);
        m_table->setItem(row, 0, key);
        m_table->setItem(row, 1, value);
        ++row;
    }
    m_table->resizeColumnToContents(0);
}

bool EnvLayerTable::apply(const QMap<QString, QString> &set, const QStringList &unset,
                          const QStringList &clear)
{
    if (!m_writer)
        return false;
    QPointer<EnvLayerTable> self(this);
    const quint64 source = m_source;
    auto refused = std::make_shared<bool>(false);
    m_writer(set, unset, clear, [self, source, refused](Result<void> result) {
        if (!self || self->m_source != source)
            return;
        if (!result) {
            *refused = true;
            self->m_lastError = result.error().message;
            self->m_status->setText(self->m_lastError);
            return;
        }
        self->m_lastError.clear();
        self->m_status->clear();
        self->reload();
        emit self->changed();
    });
    return !*refused;
}

bool EnvLayerTable::setVariable(const QString &key, const QString &value)
{
    return apply({{key, value}}, {}, {});
}

bool EnvLayerTable::unsetVariable(const QString &key)
{
    return apply({}, {key}, {});
}

bool EnvLayerTable::clearVariable(const QString &key)
{
    return apply({}, {}, {key});
}

} // namespace replhost::gui
