// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "http/apiserverconfig.h"

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
    qint64 maxOutputBytes = 0;     // per execution or command; 0: the engine's default
    int maxResidentWorkers = 0;    // 0: the engine's default (sized to memory)
    int workerIdleTimeoutMs = -1;  // -1: the engine's default; 0: never
    http::ApiServerConfig server;  // everything but the token
    int e2bPort = -1;              // --e2b-port: the token-less E2B listener; -1: none

    // The port E2B's SDKs in debug mode expect; they reach the E2B routes there only through
    // /e2b/<token>, or at the root of a --e2b-port listener.
    static constexpr quint16 kDefaultPort = 49999;

    static ServerOptions parse(const QStringList &arguments);
};

} // namespace replhost::app
