// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "workspacesettings.h"

#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

namespace replhost::core {

// How an Engine is set up. Constant after Engine::open().
struct EngineConfig {
    // Directory holding the database, the lock file, the token and the default workspaces.
    // Empty: REPLHOST_DATA_DIR, else $XDG_DATA_HOME/replhost (~/.local/share/replhost).
    QString dataDir;
    // Searched for plugins before the standard places (see PluginRegistry).
    QStringList pluginPaths;
    // Per-language settings handed to handlers: {"python": {"interpreter": "/usr/bin/python3"}}.
    QJsonObject languageSettings;
    // The settings of every workspace that does not choose otherwise (WorkspaceSettings): its
    // limits (contexts, execution time, output kept per execution, worker resources), isolation
    // and network. limits.outputBytes also caps each stateless command's output.
    WorkspaceSettings workspaceDefaults;
    // Executions kept in memory after they finish, so clients can still attach to their stream.
    int finishedExecutionsKept = 256;
    // Workers that may run at once; beyond it the least recently used idle context is made
    // dormant, and restored on its next use. 0: sized to memory (defaultMaxResidentWorkers()).
    int maxResidentWorkers = 0;
    // A worker idle this long is stopped and its context made dormant; 0: never.
    int workerIdleTimeoutMs = 30 * 60 * 1000;
    // Between two passes of history retention (HistoryRetention, the workspaces' history
    // limits); 0: only when asked (HistoryRetention::pruneNow).
    int historyPruneIntervalMs = 10 * 60 * 1000;
    // Started workers kept idle per available language for new, restarted and restored contexts
    // to take, so they do not wait for an interpreter start (see WarmPool); 0 disables.
    // `warmPoolSizes` overrides it by language id: {"java": 2, "go": 0}.
    int warmPoolSize = 1;
    QMap<QString, int> warmPoolSizes;
    // bwrap, for workspaces whose isolation is "sandbox"; empty: looked up on PATH. Either way
    // it is tried once when the engine opens (SandboxSupport).
    QString bwrapPath;

    // The data dir this config resolves to (dataDir, REPLHOST_DATA_DIR or the XDG default).
    // replhost-cli, which links no Qt, repeats this rule in cli::ServerLocator::dataDir(): a
    // change here must be made there too (tst_cli checks that both agree).
    QString resolvedDataDir() const;
    // maxResidentWorkers, or the default when it is 0.
    int resolvedMaxResidentWorkers() const;
    // One worker per 256 MiB of physical memory, at least 4 and at most 64.
    static int defaultMaxResidentWorkers();
};

} // namespace replhost::core
