// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/workspacesettings.h"

#include <replhost/sdk/result.h>

#include <QDialog>
#include <QHash>

#include <functional>

class QAbstractSpinBox;
class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace replhost::gui {

class EngineClient;

// Shows and edits one workspace's settings: its limits (0 shows as "no limit"), isolation,
// network and, for a sandbox, where its code sees the workspace (view_path). The fields start at
// the effective values, which the engine answers (EngineClient::workspaceSettings: at once in
// this process, later from a server): until then they are disabled and the dialog says it is
// loading. Applying sends only what was changed to the engine (changeWorkspaceSettings), which
// validates it: a refused value keeps the dialog open with the engine's message, which names the
// field.
//
// Ownership: a QDialog, usually on the stack of its caller; the engine must outlive it.
// GUI thread only.
class WorkspaceSettingsDialog : public QDialog {
    Q_OBJECT
public:
    WorkspaceSettingsDialog(EngineClient &engine, const QString &workspace,
                            QWidget *parent = nullptr);

    QString workspace() const { return m_workspace; }
    // Whether the effective settings have come (see loaded()); false also when reading failed.
    bool isLoaded() const { return m_isLoaded; }
    // Sends the changed fields to the engine; `done`, then applied(), get its answer. accept()
    // does this and closes only on success. Nothing is sent before the settings are loaded.
    void apply(std::function<void(Result<core::WorkspaceSettings>)> done = {});
    // What the engine said about the last refused change (or why the settings could not be
    // read); empty after a success.
    QString errorText() const;

    void accept() override;

signals:
    // The effective settings were read (ok) or could not be (with the engine's message).
    void loaded(bool ok);
    // The engine answered a change apply() sent: taken (ok), or refused (errorText() says why).
    void applied(bool ok);

private:
    void fill(const core::WorkspaceSettings &settings);
    void setFieldsEnabled(bool enabled);
    void showError(const QString &message);

    EngineClient &m_engine;
    bool m_isLoaded = false;
    bool m_applying = false;  // a change was sent and its answer has not come
    const QString m_workspace;
    core::WorkspaceSettings m_loaded;  // effective when the dialog opened or last applied
    QHash<QString, QAbstractSpinBox *> m_limits;  // by JSON name, e.g. "timeout_ms"
    QComboBox *m_isolation;
    QCheckBox *m_network;
    bool m_networkTouched = false;  // the user set the network box, so it no longer follows
    QLineEdit *m_viewPath;          // enabled only while the isolation is "sandbox"
    QLabel *m_status;               // "Loading…" until the settings come
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
};

} // namespace replhost::gui
