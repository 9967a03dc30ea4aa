// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/workspacesettings.h"
#include "http/apiserverconfig.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace replhost::app {

// The command line of replhost-server, parsed and checked.
struct ServerOptions {
    enum class Action { Serve, ShowHelp, ShowVersion, Fail };

    Action action = Action::Serve;
    QString error;        // for Fail: what is wrong, for people
    QString helpText;     // for ShowHelp

    QString dataDir;      // empty: REPLHOST_DATA_DIR, else the XDG default
    QStringList pluginPaths;
    // The settings of workspaces that set nothing themselves: --workspace-defaults over the
    // engine's, then --max-output (limits.outputBytes) when given.
    core::WorkspaceSettings workspaceDefaults;
    int maxResidentWorkers = 0;    // 0: the engine's default (sized to memory)
    int workerIdleTimeoutMs = -1;  // -1: the engine's default; 0: never
    int warmPoolSize = -1;         // --warm-pool COUNT; -1: the engine's default
    QMap<QString, int> warmPoolSizes;  // --warm-pool LANGUAGE=COUNT
    QString bwrapPath;             // --bwrap: for sandboxed workspaces; empty: found on PATH
    // Everything but the token; instanceId from --instance-id, else the host name.
    http::ApiServerConfig server;
    // --port auto: server.port is not used; the server takes the port it had last time on this
    // data directory while it is free, else a free one (RememberedPort).
    bool portAuto = false;
    int e2bPort = -1;              // --e2b-port: the token-less E2B listener; -1: none
    // --token-file: the token is read from this file (a Kubernetes Secret's, shared by every
    // instance) instead of REPLHOST_TOKEN or <data dir>/token; never written. Empty: not given.
    QString tokenFile;

    // The port E2B's SDKs in debug mode expect; they reach the E2B routes there only through
    // /e2b/<token>, or at the root of a --e2b-port listener.
    static constexpr quint16 kDefaultPort = 49999;
    // A bound on --warm-pool, so a typo cannot start a thousand JVMs.
    static constexpr int kMaxWarmPool = 32;

    static ServerOptions parse(const QStringList &arguments);
};

} // namespace replhost::app
