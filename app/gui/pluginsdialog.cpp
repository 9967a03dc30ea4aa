// SPDX-License-Identifier: Apache-2.0
#include "pluginsdialog.h"

#include "languagebadge.h"
#include "themes.h"

#include "engineclient.h"

#include <QApplication>

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace replhost::gui {

PluginsDialog::PluginsDialog(const EngineClient &engine, QWidget *parent)
    : QDialog(parent)
    , m_engine(engine)
    , m_table(new QTableWidget(0, 5, this))
    , m_searchPath(new QLabel(this))
{
    setWindowTitle(tr("Plugins"));
    m_table->setHorizontalHeaderLabels({tr("Plugin"), tr("Version"), tr("State"), tr("Runtime"), tr("Details")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(true);
    m_table->setIconSize(QSize(20, 20));
    m_table->setAccessibleName(tr("Plugins"));
    QHeaderView *header = m_table->horizontalHeader();
    for (int column = PluginColumn; column < DetailsColumn; ++column)
        header->setSectionResizeMode(column, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(DetailsColumn, QHeaderView::Stretch);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto *intro = new QLabel(tr("Language plugins found on the plugin path. A plugin that cannot "
                                "be used says why."),
                             this);
    intro->setWordWrap(true);
    m_searchPath->setWordWrap(true);
    m_searchPath->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_searchPath->setAccessibleName(tr("Plugin search path"));
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_searchPath);
    layout->addWidget(buttons);
    resize(980, 420);
    reload();
}

void PluginsDialog::reload()
{
    const QList<core::PluginEntry> entries = m_engine.plugins();
    m_table->setRowCount(int(entries.size()));
    const QPalette pal = QApplication::palette();
    int row = 0;
    for (const core::PluginEntry &entry : entries) {
        const bool loaded = entry.state == core::PluginEntry::State::Loaded;
        QString title = entry.name.isEmpty() ? QFileInfo(entry.fileName).fileName() : entry.name;
        if (!entry.id.isEmpty() && !entry.name.isEmpty())
            title += QStringLiteral(" (%1)").arg(entry.id);
        auto *plugin = new QTableWidgetItem(LanguageBadge::icon(entry.id.isEmpty() ? QStringLiteral("?") : entry.id),
                                            title);
        plugin->setToolTip(tr("%1\nfound in %2 (%3)").arg(entry.fileName, entry.foundIn.path, entry.foundIn.origin));
        auto *version = new QTableWidgetItem(entry.version.isEmpty() ? QStringLiteral("—") : entry.version);
        if (!entry.sdkVersion.isEmpty())
            version->setToolTip(tr("built against SDK %1").arg(entry.sdkVersion));
        auto *state = new QTableWidgetItem(core::PluginEntry::stateName(entry.state));
        QString runtimeText, details;
        QString stateIcon;
        if (!loaded) {
            runtimeText = QStringLiteral("—");
            details = entry.error;
            stateIcon = entry.state == core::PluginEntry::State::Shadowed ? QStringLiteral("dormant")
                                                                          : QStringLiteral("dead");
        } else if (entry.runtime.available) {
            runtimeText = entry.runtime.version;
            details = entry.runtime.executable;
            stateIcon = QStringLiteral("idle");
        } else {
            runtimeText = tr("not available");
            details = entry.runtime.reason;
            stateIcon = QStringLiteral("busy");
        }
        state->setIcon(LanguageBadge::stateIcon(stateIcon));
        auto *runtime = new QTableWidgetItem(runtimeText);
        auto *detailItem = new QTableWidgetItem(details);
        detailItem->setToolTip(details + QStringLiteral("\n\n") + entry.fileName);
        if (!loaded && entry.state != core::PluginEntry::State::Shadowed)
            detailItem->setForeground(Themes::errorColour(pal));
        m_table->setItem(row, PluginColumn, plugin);
        m_table->setItem(row, VersionColumn, version);
        m_table->setItem(row, StateColumn, state);
        m_table->setItem(row, RuntimeColumn, runtime);
        m_table->setItem(row, DetailsColumn, detailItem);
        ++row;
    }

    QStringList searched;
    for (const core::PluginSearchDir &dir : m_engine.pluginSearchDirs()) {
        const bool exists = QFileInfo(dir.path).isDir();
        searched.append(tr("%1. %2 (%3%4)")
                                .arg(searched.size() + 1)
                                .arg(dir.path, dir.origin, exists ? QString() : tr(", missing")));
    }
    m_searchPath->setText(tr("Searched, in order (the first plugin of a language wins):\n%1")
                                  .arg(searched.join(QLatin1Char('\n'))));
}

} // namespace replhost::gui
