// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "apiclient.h"
#include "serverlocator.h"

#include <functional>
#include <memory>
#include <string>

namespace replhost::kernel {

// The kernel's way to the local replhost server: replhost-cli's ApiClient, found the way
// replhost-cli finds it (ServerLauncher: --url, REPLHOST_URL, else the data dir's URL file, and a
// server started in the background for the data dir when none runs).
//
// A server that restarts comes back on a new port (--port 0) with a new URL file, and a kernel
// outlives it: when a request cannot reach the server at all, the server is looked up again and
// the request is sent once more. A stream that broke off after it began is never sent again
// (the run it started goes on in the server).
//
// Owns its connection. Threading: one thread at a time; the kernel keeps one per thread.
class ServerConnection {
public:
    ServerConnection(cli::ServerLocator::Overrides overrides, std::string workspace);
    ~ServerConnection();
    ServerConnection(const ServerConnection &) = delete;
    ServerConnection &operator=(const ServerConnection &) = delete;

    // Finds (or starts) the server now; the failure says why there is none.
    cli::Result<void> connect();

    // "/contexts/…" under the workspace's routes.
    std::string scoped(const std::string &tail) const;
    static std::string encode(const std::string &text) { return cli::ApiClient::encode(text); }

    cli::Result<cli::HttpReply> call(const std::string &method, const std::string &path,
                                     const std::string &jsonBody = {});
    cli::Result<void> stream(const std::string &path, const std::string &jsonBody,
                             const std::function<void(const cli::SseEvent &)> &onEvent);

    // The data dir the server is looked up in (absolute).
    std::string dataDir() const;

private:
    bool relocate();

    cli::ServerLocator::Overrides m_overrides;
    std::string m_workspace;
    std::unique_ptr<cli::ApiClient> m_client;
};

} // namespace replhost::kernel
