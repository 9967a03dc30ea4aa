// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"
#include "serverlocator.h"

#include <string>

namespace replhost::cli {

// Starts replhost-server in the background for a data dir where none runs, so that a client
// such as `replhost-cli mcp` needs no server started by hand: an agent's configuration is one
// command line.
//
// The server is the replhost-server beside this executable, else the first on PATH. It is
// started detached (its own session, not a child of this process, which may exit first) with
// --data-dir and --port 0 (any free port: the URL file says which), its output appended to
// <data dir>/server.log, and is waited for until the URL file names it, for at most
// kStartTimeoutSeconds.
//
// Failures: Unreachable (no replhost-server found, it could not be started, or it did not come
// up in time; the message says where its log is). Threading: any one thread; forks.
class ServerLauncher {
public:
    static constexpr int kStartTimeoutSeconds = 30;

    // The server `overrides` lead to; when none runs and no URL was given (--url,
    // REPLHOST_URL), one started for the data dir.
    static Result<ServerEndpoint> locateOrStart(const ServerLocator::Overrides &overrides);

    // Where replhost-server is: beside this executable, else on PATH; empty when nowhere.
    static std::string serverExecutable();
};

} // namespace replhost::cli
