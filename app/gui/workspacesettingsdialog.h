// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/workspacesettings.h"

#include <replhost/sdk/result.h>

#include <QDialog>
#include <QHash>

class QAbstractSpinBox;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace replhost::core { class Engine; }

namespace replhost::gui {

// Shows and edits one workspace's settings: its limits (0 shows as "no limit"), isolation,
// network and, for a sandbox, where its code sees the workspace (view_path). The fields start at the effective values; applying sends only what was changed to
// the engine (WorkspaceManager::changeSettings), which validates it: a refused value keeps the
// dialog open with the engine's message, which names the field.
//
// Ownership: a QDialog, usually on the stack of its caller; the engine must outlive it.
// GUI thread only.
class WorkspaceSettingsDialog : public QDialog {
    Q_OBJECT
public:
    WorkspaceSettingsDialog(core::Engine &engine, const QString &workspace,
                            QWidget *parent = nullptr);

    QString workspace() const { return m_workspace; }
    // Sends the changed fields to the engine; accept() does this and closes only on success.
    Result<core::WorkspaceSettings> apply();
    // What the engine said about the last refused change; empty after a success.
    QString errorText() const;

    void accept() override;

private:
    core::Engine &m_engine;
    const QString m_workspace;
    core::WorkspaceSettings m_loaded;  // effective when the dialog opened or last applied
    QHash<QString, QAbstractSpinBox *> m_limits;  // by JSON name, e.g. "timeout_ms"
    QComboBox *m_isolation;
    QCheckBox *m_network;
    bool m_networkTouched = false;  // the user set the network box, so it no longer follows
    QLineEdit *m_viewPath;          // enabled only while the isolation is "sandbox"
    QLabel *m_error;
};

} // namespace replhost::gui
