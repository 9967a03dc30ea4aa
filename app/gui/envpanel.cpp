// SPDX-License-Identifier: Apache-2.0
#include "envpanel.h"

#include "engineclient.h"
#include "envlayertable.h"


#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace replhost::gui {

EnvPanel::EnvPanel(EngineClient &engine, QWidget *parent)
    : QWidget(parent)
    , m_engine(engine)
    , m_workspaceLayer(new EnvLayerTable(tr("Workspace layer"), this))
    , m_contextLayer(new EnvLayerTable(tr("Context layer"), this))
    , m_filter(new QLineEdit(this))
    , m_effective(new QTableWidget(0, 2, this))
    , m_effectiveTitle(new QLabel(tr("Effective environment of the next run"), this))
{
    QFont bold = m_effectiveTitle->font();
    bold.setBold(true);
    m_effectiveTitle->setFont(bold);
    m_filter->setPlaceholderText(tr("Filter keys and values"));
    m_filter->setClearButtonEnabled(true);
    m_effective->setHorizontalHeaderLabels({tr("Key"), tr("Value")});
    m_effective->horizontalHeader()->setStretchLastSection(true);
    m_effective->verticalHeader()->hide();
    m_effective->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_effective->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_effective->setAccessibleName(tr("Effective environment"));

    auto *effective = new QWidget(this);
    auto *effectiveLayout = new QVBoxLayout(effective);
    effectiveLayout->setContentsMargins(0, 0, 0, 0);
    effectiveLayout->addWidget(m_effectiveTitle);
    effectiveLayout->addWidget(m_filter);
    effectiveLayout->addWidget(m_effective, 1);

    // The two layers share a tabbed area so that the effective environment (dozens of variables)
    // gets most of the height; a layer holds a few, and its table scrolls.
    auto *layers = new QTabWidget(this);
    layers->setObjectName(QStringLiteral("envLayers"));
    layers->setDocumentMode(true);
    layers->addTab(m_contextLayer, tr("Context layer"));
    layers->addTab(m_workspaceLayer, tr("Workspace layer"));

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(layers);
    splitter->addWidget(effective);
    splitter->setChildrenCollapsible(false);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);

    connect(m_workspaceLayer, &EnvLayerTable::changed, this, &EnvPanel::refreshEffective);
    connect(m_contextLayer, &EnvLayerTable::changed, this, &EnvPanel::refreshEffective);
    connect(m_filter, &QLineEdit::textChanged, this, [this] { showEffective(m_shownEnv); });
    setContext(QString(), QString());
}

void EnvPanel::setContext(const QString &workspace, const QString &contextId)
{
    m_workspace = workspace;
    m_contextId = contextId;
    // The engine client outlives the panel and its tables, so the sources may hold it.
    EngineClient *engine = &m_engine;
    const auto source = [engine, workspace](EnvLayerTable *table, const QString &contextId) {
        table->setSource(
                [engine, workspace, contextId](std::function<void(EnvLayerTable::Layer)> answer) {
                    engine->envLayer(workspace, contextId, std::move(answer));
                },
                [engine, workspace, contextId](const QMap<QString, QString> &set, const QStringList &unset,
                                               const QStringList &clear,
                                               std::function<void(Result<void>)> answer) {
                    engine->changeEnvLayer(workspace, contextId, set, unset, clear, std::move(answer));
                });
    };
    if (workspace.isEmpty())
        m_workspaceLayer->setSource({}, {}, tr("Select a workspace or a context."));
    else
        source(m_workspaceLayer, QString());
    if (contextId.isEmpty())
        m_contextLayer->setSource({}, {}, tr("Select a context to edit its own layer."));
    else
        source(m_contextLayer, contextId);
    refreshEffective();
}

void EnvPanel::refreshEffective()
{
    m_effective->setRowCount(0);
    if (m_contextId.isEmpty()) {
        m_effectiveTitle->setText(tr("Effective environment (select a context)"));
        return;
    }
    m_effectiveTitle->setText(tr("Effective environment of the next run"));
    const quint64 generation = ++m_generation;
    QPointer<EnvPanel> self(this);
    // The keys the layers set are in bold: they are the layers' tables' rows.
    m_engine.effectiveEnv(m_workspace, m_contextId, [self, generation](Result<QMap<QString, QString>> env) {
        if (!self || self->m_generation != generation)
            return;
        if (!env) {
            self->m_effectiveTitle->setText(tr("Effective environment unavailable: %1").arg(env.error().message));
            return;
        }
        self->showEffective(*env);
    });
}

QSet<QString> EnvPanel::layeredKeys() const
{
    QSet<QString> keys;
    for (const EnvLayerTable *layer : {m_workspaceLayer, m_contextLayer}) {
        for (int row = 0; row < layer->table()->rowCount(); ++row)
            keys.insert(layer->table()->item(row, 0)->text());
    }
    return keys;
}

void EnvPanel::showEffective(const QMap<QString, QString> &environment)
{
    m_shownEnv = environment;
    const QMap<QString, QString> *env = &m_shownEnv;
    const QSet<QString> layered = layeredKeys();
    m_effective->setRowCount(0);
    const QString filter = m_filter->text().trimmed();
    int row = 0;
    m_effective->setRowCount(int(env->size()));
    for (auto it = env->constBegin(); it != env->constEnd(); ++it) {
        if (!filter.isEmpty() && !it.key().contains(filter, Qt::CaseInsensitive)
            && !it.value().contains(filter, Qt::CaseInsensitive))
            continue;
        auto *key = new QTableWidgetItem(it.key());
        auto *value = new QTableWidgetItem(it.value());
        value->setToolTip(it.value().left(4000));
        if (layered.contains(it.key())) {
            QFont bold = key->font();
            bold.setBold(true);
            key->setFont(bold);
            value->setFont(bold);
            key->setToolTip(tr("set by a layer"));
        }
        m_effective->setItem(row, 0, key);
        m_effective->setItem(row, 1, value);
        ++row;
    }
    m_effective->setRowCount(row);
    m_effective->resizeColumnToContents(0);
}

QString EnvPanel::effectiveValue(const QString &key) const
{
    for (int row = 0; row < m_effective->rowCount(); ++row) {
        if (m_effective->item(row, 0)->text() == key)
            return m_effective->item(row, 1)->text();
    }
    return QString();
}

} // namespace replhost::gui
