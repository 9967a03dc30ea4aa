// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workbenchsettings.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QFontComboBox;
class QSpinBox;

namespace replhost::gui {

// Edits a WorkbenchSettings value (fonts, theme, default language, server autostart and port,
// confirmations, the editors' word wrap and whitespace);
// the window saves and applies it when the dialog is accepted.
//
// Ownership: a QDialog, usually on its caller's stack. GUI thread only.
class PreferencesDialog : public QDialog {
    Q_OBJECT
public:
    PreferencesDialog(const WorkbenchSettings &settings, const QStringList &languages,
                      QWidget *parent = nullptr);

    WorkbenchSettings settings() const;

private:
    WorkbenchSettings m_settings;
    QFontComboBox *m_editorFont;
    QSpinBox *m_editorSize;
    QSpinBox *m_outputSize;
    QComboBox *m_theme;
    QComboBox *m_language;
    QCheckBox *m_autostart;
    QSpinBox *m_port;
    QCheckBox *m_askRestart;
    QCheckBox *m_askDelete;
    QCheckBox *m_wordWrap;
    QCheckBox *m_showWhitespace;
};

} // namespace replhost::gui
