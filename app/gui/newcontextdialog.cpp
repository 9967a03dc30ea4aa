// SPDX-License-Identifier: Apache-2.0
#include "newcontextdialog.h"

#include "languagebadge.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

namespace replhost::gui {

namespace {

constexpr int kLanguageRole = Qt::UserRole;
constexpr int kDetailsRole = Qt::UserRole + 1;

} // namespace

NewContextDialog::NewContextDialog(const EngineClient &engine, const QString &defaultLanguage,
                                   const QString &workspace, QWidget *parent)
    : QDialog(parent)
    , m_languages(new QListWidget(this))
    , m_workspace(new QComboBox(this))
    , m_name(new QLineEdit(this))
    , m_details(new QLabel(this))
{
    setWindowTitle(tr("New Context"));
    m_languages->setIconSize(QSize(24, 24));
    m_languages->setAccessibleName(tr("Language"));
    m_languages->setWordWrap(true);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setMinimumHeight(m_details->fontMetrics().lineSpacing() * 3);
    m_name->setPlaceholderText(tr("optional, e.g. analysis"));

    int brokenPlugins = 0;
    for (const core::PluginEntry &entry : engine.plugins()) {
        if (entry.state != core::PluginEntry::State::Loaded) {
            if (entry.state != core::PluginEntry::State::Shadowed)
                ++brokenPlugins;
            continue;
        }
        auto *item = new QListWidgetItem(LanguageBadge::icon(entry.id), QString(), m_languages);
        item->setData(kLanguageRole, entry.id);
        if (entry.runtime.available) {
            item->setText(tr("%1  %2").arg(entry.name, entry.runtime.version));
            item->setData(kDetailsRole, tr("%1 %2 — %3").arg(entry.name, entry.runtime.version,
                                                            entry.runtime.executable));
            ++m_usable;
        } else {
            item->setFlags(item->flags() & ~(Qt::ItemIsEnabled | Qt::ItemIsSelectable));
            item->setToolTip(entry.runtime.reason);
            item->setData(kDetailsRole, entry.runtime.reason);
            // The reason says what to install; show it right in the list, not only on hover.
            item->setText(tr("%1 — not available: %2").arg(entry.name, entry.runtime.reason));
        }
    }

    for (const storage::WorkspaceRecord &ws : engine.workspaces())
        m_workspace->addItem(ws.name);
    const int wsIndex = m_workspace->findText(workspace.isEmpty() ? core::WorkspaceManager::defaultName() : workspace);
    if (wsIndex >= 0)
        m_workspace->setCurrentIndex(wsIndex);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Create"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_languages, &QListWidget::currentItemChanged, this, [this, buttons](QListWidgetItem *item) {
        const bool usable = item && (item->flags() & Qt::ItemIsEnabled);
        buttons->button(QDialogButtonBox::Ok)->setEnabled(usable);
        m_details->setText(item ? item->data(kDetailsRole).toString() : QString());
    });
    connect(m_languages, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem *item) {
        if (item->flags() & Qt::ItemIsEnabled)
            accept();
    });

    auto *form = new QFormLayout;
    form->addRow(tr("&Workspace:"), m_workspace);
    form->addRow(tr("&Name:"), m_name);

    auto *layout = new QVBoxLayout(this);
    auto *languageLabel = new QLabel(tr("&Language:"), this);
    languageLabel->setBuddy(m_languages);
    layout->addWidget(languageLabel);
    layout->addWidget(m_languages, 1);
    layout->addWidget(m_details);
    if (brokenPlugins > 0) {
        auto *note = new QLabel(tr("%n plugin(s) could not be loaded; see Plugins (Ctrl+Shift+P).",
                                   nullptr, brokenPlugins),
                                this);
        note->setWordWrap(true);
        layout->addWidget(note);
    }
    if (m_usable == 0) {
        auto *none = new QLabel(tr("No language runtime is usable. Install one of the runtimes "
                                   "listed above."),
                                this);
        none->setWordWrap(true);
        layout->addWidget(none);
    }
    layout->addLayout(form);
    layout->addWidget(buttons);
    resize(520, 420);

    buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    if (!selectLanguage(defaultLanguage)) {
        for (int i = 0; i < m_languages->count(); ++i) {
            if (m_languages->item(i)->flags() & Qt::ItemIsEnabled) {
                m_languages->setCurrentRow(i);
                break;
            }
        }
    }
    m_languages->setFocus();
}

bool NewContextDialog::selectLanguage(const QString &id)
{
    for (int i = 0; i < m_languages->count(); ++i) {
        QListWidgetItem *item = m_languages->item(i);
        if (item->data(kLanguageRole).toString() == id && (item->flags() & Qt::ItemIsEnabled)) {
            m_languages->setCurrentItem(item);
            return true;
        }
    }
    return false;
}

QString NewContextDialog::language() const
{
    const QListWidgetItem *item = m_languages->currentItem();
    return item && (item->flags() & Qt::ItemIsEnabled) ? item->data(kLanguageRole).toString() : QString();
}

core::CreateContextRequest NewContextDialog::request() const
{
    core::CreateContextRequest request;
    request.workspace = m_workspace->currentText();
    request.language = language();
    request.name = m_name->text().trimmed();
    return request;
}

} // namespace replhost::gui
