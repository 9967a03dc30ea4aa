// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QDialog>

class QLabel;
class QTableWidget;

namespace replhost::gui { class EngineClient; }

namespace replhost::gui {

// Every plugin the registry found — loaded, incompatible, broken or shadowed — with its version,
// runtime, the directory it was found in and the reason it cannot be used; below, the
// directories searched, in order. A broken plugin is shown here, never fatal.
//
// Ownership: a QDialog with a parent; the engine client must outlive it. GUI thread only.
class PluginsDialog : public QDialog {
    Q_OBJECT
public:
    enum Column { PluginColumn, VersionColumn, StateColumn, RuntimeColumn, DetailsColumn };

    PluginsDialog(const EngineClient &engine, QWidget *parent = nullptr);

    void reload();
    QTableWidget *table() const { return m_table; }
    QLabel *searchPathLabel() const { return m_searchPath; }

private:
    const EngineClient &m_engine;
    QTableWidget *m_table;
    QLabel *m_searchPath;
};

} // namespace replhost::gui
