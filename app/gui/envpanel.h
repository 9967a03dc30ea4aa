// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QMap>
#include <QSet>
#include <QWidget>

class QLabel;
class QLineEdit;
class QTableWidget;

namespace replhost::gui {

class EngineClient;
class EnvLayerTable;

// The env layers of the selected context: its workspace's layer, its own layer, and the
// effective environment its next run will see (base → workspace → context), with the keys the
// layers set shown in bold.
//
// Ownership: a QWidget in its parent's tree; the engine client must outlive it. GUI thread only.
class EnvPanel : public QWidget {
    Q_OBJECT
public:
    EnvPanel(EngineClient &engine, QWidget *parent = nullptr);

    void setContext(const QString &workspace, const QString &contextId);
    // Asks the engine for the effective environment again; the table follows its answer.
    void refreshEffective();

    EnvLayerTable *workspaceLayer() const { return m_workspaceLayer; }
    EnvLayerTable *contextLayer() const { return m_contextLayer; }
    // The effective value of `key` as shown, or a null QString when absent.
    QString effectiveValue(const QString &key) const;

private:
    void showEffective(const QMap<QString, QString> &env);
    QSet<QString> layeredKeys() const;

    EngineClient &m_engine;
    quint64 m_generation = 0;  // of the last refreshEffective(): older answers are dropped
    QMap<QString, QString> m_shownEnv;
    QString m_workspace, m_contextId;
    EnvLayerTable *m_workspaceLayer;
    EnvLayerTable *m_contextLayer;
    QLineEdit *m_filter;
    QTableWidget *m_effective;
    QLabel *m_effectiveTitle;
};

} // namespace replhost::gui
