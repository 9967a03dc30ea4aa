// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "commandrunner.h"
#include "contextmanager.h"
#include "engineconfig.h"
#include "historyretention.h"
#include "metrics.h"
#include "pluginregistry.h"
#include "sandboxsupport.h"
#include "workspacemanager.h"

#include <replhost/sdk/result.h>

#include <QJsonObject>
#include <QObject>

#include <memory>

class QLockFile;

namespace replhost::storage { class Store; class HistoryWriter; class HistoryPruner; }

namespace replhost::core {

// The engine: one data directory (held with a lock file for the engine's life, so a second
// engine on the same directory fails with who holds it), its database, the plugins, the
// workspaces and the contexts. Both faces (HTTP and GUI) are built over one Engine.
//
// Threading: create, use and destroy in one thread with a running Qt event loop.
class Engine : public QObject {
    Q_OBJECT
public:
    ~Engine() override;

    // Errors: "locked" (another engine holds the data dir; the message names its pid),
    // "storage", "io".
    static Result<std::unique_ptr<Engine>> open(const EngineConfig &config);

    const EngineConfig &config() const { return m_config; }
    QString dataDir() const { return m_dataDir; }
    PluginRegistry &plugins() { return *m_plugins; }
    WorkspaceManager &workspaces() { return *m_workspaces; }
    ContextManager &contexts() { return *m_contexts; }
    CommandRunner &commands() { return *m_commands; }
    Metrics &metrics() { return *m_metrics; }
    HistoryRetention &retention() { return *m_retention; }
    // Whether workers can be sandboxed here, as found when the engine opened.
    const SandboxSupport &sandbox() const { return m_sandbox; }
    storage::Store &store() { return *m_store; }
    // Waits until every queued history write is committed, so that this thread's store() sees
    // every run that has ended (a workspace's export reads them).
    void flushHistory();
    // The database's size and what retention has done since the engine opened:
    //   {"bytes", "free_bytes", "wal_bytes", "incremental_vacuum",
    //    "retention": {"passes", "outputs_pruned", "executions_deleted", "pages_reclaimed",
    //                  "failed_passes", "last_error"}}
    // ("error" instead of the sizes when they cannot be read). Cheap: reads two pragmas and
    // the WAL file's size.
    QJsonObject databaseJson();

    static QString appVersion();
    static int schemaVersion();

private:
    Engine() = default;

    EngineConfig m_config;
    QString m_dataDir;
    std::unique_ptr<QLockFile> m_lock;
    std::unique_ptr<storage::Store> m_store;
    std::unique_ptr<storage::HistoryWriter> m_writer;
    std::unique_ptr<storage::HistoryPruner> m_pruner;
    PluginRegistry *m_plugins = nullptr;
    WorkspaceManager *m_workspaces = nullptr;
    ContextManager *m_contexts = nullptr;
    CommandRunner *m_commands = nullptr;
    Metrics *m_metrics = nullptr;
    HistoryRetention *m_retention = nullptr;
    SandboxSupport m_sandbox;
};

} // namespace replhost::core
