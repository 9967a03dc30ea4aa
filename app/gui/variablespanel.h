// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonObject>
#include <QWidget>

class QCheckBox;
class QLabel;
class QTableWidget;

namespace replhost::gui {

class DataTableDialog;
class EngineClient;

// The selected context's top-level variables — name, type, a short value, size — as its
// interpreter lists them (EngineClient::variables, the same answer as GET
// /v1/contexts/{id}/variables). The window refreshes it after each run of the context, as
// Spyder's and RStudio's variable explorers do. A variable the interpreter sends as a table (a
// DataFrame, an array, a list) opens as one on a double click or Enter.
//
// Modules, functions and classes are left out unless "Modules, functions and classes" is ticked
// (Spyder's "exclude callables and modules"): what a run computed is what the panel is for.
//
// A context without a running interpreter (dormant) or with code running is not asked: asking
// would restore it, or wait for the run; the panel says so and keeps what it showed.
//
// Ownership: a QWidget in its parent's tree; the engine must outlive it. GUI thread only.
class VariablesPanel : public QWidget {
    Q_OBJECT
public:
    enum Column { NameColumn, TypeColumn, ValueColumn, SizeColumn };

    VariablesPanel(EngineClient &engine, QWidget *parent = nullptr);

    // Shows the context's variables (empty id: none); `state` is its ContextInfo::state.
    void setContext(const QString &workspace, const QString &contextId, const QString &state);
    // Asks the interpreter again (when it is idle).
    void refresh();

    QTableWidget *table() const { return m_table; }
    QCheckBox *showCallablesBox() const { return m_showCallables; }
    QString message() const;
    // Opens the variable's table in a window; null when the variable has none.
    DataTableDialog *openTable(const QString &name);

signals:
    // A reply was shown (or an error said why there is none).
    void refreshed();

private:
    void showReply(const QJsonObject &reply);
    static bool isCallableOrModule(const QString &type);

    EngineClient &m_engine;
    QString m_workspace, m_contextId, m_state;
    quint64 m_generation = 0;  // replies to an earlier request or context are dropped
    QHash<QString, QJsonObject> m_tables;  // variable name -> its table
    QJsonObject m_lastReply;
    QTableWidget *m_table;
    QLabel *m_message;
    QCheckBox *m_showCallables;
};

} // namespace replhost::gui
