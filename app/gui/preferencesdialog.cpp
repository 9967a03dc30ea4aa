// SPDX-License-Identifier: Apache-2.0
#include "preferencesdialog.h"

#include "themes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFontComboBox>
#include <QFormLayout>
#include <QSpinBox>
#include <QVBoxLayout>

namespace replhost::gui {

PreferencesDialog::PreferencesDialog(const WorkbenchSettings &settings, const QStringList &languages,
                                     QWidget *parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_editorFont(new QFontComboBox(this))
    , m_editorSize(new QSpinBox(this))
    , m_outputSize(new QSpinBox(this))
    , m_theme(new QComboBox(this))
    , m_language(new QComboBox(this))
    , m_autostart(new QCheckBox(tr("Start the HTTP server with the workbench"), this))
    , m_port(new QSpinBox(this))
    , m_askRestart(new QCheckBox(tr("Ask before restarting a context"), this))
    , m_askDelete(new QCheckBox(tr("Ask before deleting a context"), this))
    , m_wordWrap(new QCheckBox(tr("Wrap long lines"), this))
    , m_showWhitespace(new QCheckBox(tr("Show spaces and tabs"), this))
{
    setWindowTitle(tr("Preferences"));
    m_editorFont->setFontFilters(QFontComboBox::MonospacedFonts);
    m_editorFont->setCurrentFont(settings.editorFont);
    m_editorSize->setRange(6, 48);
    m_editorSize->setValue(qMax(6, settings.editorFont.pointSize()));
    m_outputSize->setRange(6, 48);
    m_outputSize->setValue(qMax(6, settings.outputFont.pointSize()));
    m_theme->addItem(tr("Follow the system"), QStringLiteral("system"));
    m_theme->addItem(tr("Light"), QStringLiteral("light"));
    m_theme->addItem(tr("Dark"), QStringLiteral("dark"));
    m_theme->setCurrentIndex(qMax(0, m_theme->findData(settings.theme)));
    m_language->addItems(languages);
    if (!languages.contains(settings.defaultLanguage))
        m_language->addItem(settings.defaultLanguage);
    m_language->setCurrentText(settings.defaultLanguage);
    m_autostart->setChecked(settings.serverAutostart);
    m_port->setRange(0, 65535);
    m_port->setValue(settings.serverPort);
    m_port->setToolTip(tr("0 picks a free port"));
    m_askRestart->setChecked(settings.askBeforeRestart);
    m_askDelete->setChecked(settings.askBeforeDelete);
    m_wordWrap->setObjectName(QStringLiteral("wordWrap"));
    m_wordWrap->setChecked(settings.wordWrap);
    m_showWhitespace->setObjectName(QStringLiteral("showWhitespace"));
    m_showWhitespace->setChecked(settings.showWhitespace);

    auto *form = new QFormLayout;
    form->addRow(tr("&Editor font:"), m_editorFont);
    form->addRow(tr("Editor font &size:"), m_editorSize);
    form->addRow(tr("Editor:"), m_wordWrap);
    form->addRow(QString(), m_showWhitespace);
    form->addRow(tr("&Output font size:"), m_outputSize);
    form->addRow(tr("&Theme:"), m_theme);
    form->addRow(tr("&Default language:"), m_language);
    form->addRow(QString(), m_autostart);
    form->addRow(tr("Server &port:"), m_port);
    form->addRow(tr("Confirmations:"), m_askRestart);
    form->addRow(QString(), m_askDelete);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

WorkbenchSettings PreferencesDialog::settings() const
{
    WorkbenchSettings s = m_settings;
    s.editorFont = m_editorFont->currentFont();
    s.editorFont.setPointSize(m_editorSize->value());
    s.outputFont = s.editorFont;
    s.outputFont.setPointSize(m_outputSize->value());
    s.theme = m_theme->currentData().toString();
    s.defaultLanguage = m_language->currentText();
    s.serverAutostart = m_autostart->isChecked();
    s.serverPort = quint16(m_port->value());
    s.askBeforeRestart = m_askRestart->isChecked();
    s.askBeforeDelete = m_askDelete->isChecked();
    s.wordWrap = m_wordWrap->isChecked();
    s.showWhitespace = m_showWhitespace->isChecked();
    return s;
}

} // namespace replhost::gui
