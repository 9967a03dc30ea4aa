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
    http::ApiServerConfig server;  // everything but the token

    static constexpr quint16 kDefaultPort = 49999;  // what E2B clients in debug mode expect

    static ServerOptions parse(const QStringList &arguments);
};

} // namespace replhost::app
