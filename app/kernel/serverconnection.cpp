// SPDX-License-Identifier: Apache-2.0
#include "serverconnection.h"

#include "serverlauncher.h"

namespace replhost::kernel {

ServerConnection::ServerConnection(cli::ServerLocator::Overrides overrides, std::string workspace)
    : m_overrides(std::move(overrides)), m_workspace(std::move(workspace))
{
}

ServerConnection::~ServerConnection() = default;

cli::Result<void> ServerConnection::connect()
{
    cli::Result<cli::ServerEndpoint> endpoint = cli::ServerLauncher::locateOrStart(m_overrides);
    if (!endpoint)
        return endpoint.failure();
    m_client = std::make_unique<cli::ApiClient>(std::move(*endpoint), m_workspace);
    return {};
}

bool ServerConnection::relocate()
{
    return connect().ok();
}

std::string ServerConnection::scoped(const std::string &tail) const
{
    return m_workspace.empty() ? "/v1" + tail : "/v1/workspaces/" + encode(m_workspace) + tail;
}

std::string ServerConnection::dataDir() const
{
    return cli::ServerLocator::dataDir(m_overrides.dataDir);
}

cli::Result<cli::HttpReply> ServerConnection::call(const std::string &method, const std::string &path,
                                                   const std::string &jsonBody)
{
    if (!m_client) {
        if (cli::Result<void> connected = connect(); !connected)
            return connected.failure();
    }
    cli::Result<cli::HttpReply> reply = m_client->call(method, path, jsonBody);
    if (!reply && reply.failure().status == cli::ExitStatus::Unreachable && relocate())
        return m_client->call(method, path, jsonBody);
    return reply;
}

cli::Result<void> ServerConnection::stream(const std::string &path, const std::string &jsonBody,
                                           const std::function<void(const cli::SseEvent &)> &onEvent)
{
    if (!m_client) {
        if (cli::Result<void> connected = connect(); !connected)
            return connected.failure();
    }
    bool began = false;
    const auto relay = [&](const cli::SseEvent &event) {
        began = true;
        onEvent(event);
    };
    cli::Result<void> streamed = m_client->stream(path, jsonBody, relay);
    if (!streamed && !began && streamed.failure().status == cli::ExitStatus::Unreachable && relocate())
        return m_client->stream(path, jsonBody, relay);
    return streamed;
}

} // namespace replhost::kernel
