// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;

namespace replhost::gui {

// Asks for a new context: language (only runtimes that can start are selectable; the others are
// listed greyed out with what to install), workspace and an optional name.
//
// Ownership: a QDialog, usually on the stack of its caller; the engine must outlive it.
// GUI thread only.
class NewContextDialog : public QDialog {
    Q_OBJECT
public:
    NewContextDialog(const EngineClient &engine, const QString &defaultLanguage,
                     const QString &workspace, QWidget *parent = nullptr);

    core::CreateContextRequest request() const;
    QString language() const;
    // Selects a language by id; false if it is not selectable.
    bool selectLanguage(const QString &id);
    // Number of selectable languages.
    int usableCount() const { return m_usable; }

private:
    QListWidget *m_languages;
    QComboBox *m_workspace;
    QLineEdit *m_name;
    QLabel *m_details;
    int m_usable = 0;
};

} // namespace replhost::gui
