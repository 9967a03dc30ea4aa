// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace replhost::core { class Engine; }

namespace replhost::gui {

class EnvLayerTable;

// The env layers of the selected context: its workspace's layer, its own layer, and the
// effective environment its next run will see (base → workspace → context), with the keys the
// layers set shown in bold.
//
// Ownership: a QWidget in its parent's tree; the engine must outlive it. GUI thread only.
class EnvPanel : public QWidget {
    Q_OBJECT
public:
    EnvPanel(core::Engine &engine, QWidget *parent = nullptr);

    void setContext(const QString &workspace, const QString &contextId);
    void refreshEffective();

    EnvLayerTable *workspaceLayer() const { return m_workspaceLayer; }
    EnvLayerTable *contextLayer() const { return m_contextLayer; }
    // The effective value of `key` as shown, or a null QString when absent.
    QString effectiveValue(const QString &key) const;

private:
    core::Engine &m_engine;
    QString m_workspace, m_contextId;
    EnvLayerTable *m_workspaceLayer;
    EnvLayerTable *m_contextLayer;
    QLineEdit *m_filter;
    QTableWidget *m_effective;
    QLabel *m_effectiveTitle;
};

} // namespace replhost::gui
