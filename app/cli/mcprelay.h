// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "serverlocator.h"

#include <condition_variable>
#include <iosfwd>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace Poco::Net { class HTTPClientSession; }

namespace replhost::cli {

// `replhost-cli mcp`: MCP's stdio transport on this process's stdin and stdout, relayed to the
// server's Streamable HTTP transport at <url>/mcp. Each line read is one JSON-RPC message; it is
// POSTed with the bearer token, and what the server answers (a JSON body, or the messages of an
// event stream: progress notifications, then the response) is written to stdout one message a
// line. Nothing else is ever written to stdout; diagnostics go to stderr.
//
// initialize is relayed alone and first; its answer's Mcp-Session-Id and protocol revision go
// with every later message. Other messages are relayed concurrently, each on its own
// connection, so a notifications/cancelled reaches the server while the run it cancels is still
// being answered. A message of a stateless revision (2026-07-28: its params._meta names the
// revision) goes without the session, with the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers its body mirrors; a notifications/cancelled for such a request is not relayed but
// closes the request's connection, which is how Streamable HTTP cancels it, and nothing more is
// written for that request. When the server cannot be reached or refuses a request without a JSON-RPC
// answer (401, 403), the request gets a JSON-RPC error with its own id, saying why.
//
// At the end of stdin the relay waits for the answers still coming, then returns. The server
// keeps running (its contexts outlive the client).
//
// Threading: run() on one thread; it starts a thread per message and joins them all.
class McpRelay {
public:
    // `workspace` (--workspace): sent as X-Replhost-Workspace on every message, so that a router
    // places them all with that workspace's server, and tool calls that name no workspace act
    // on it; empty: none.
    McpRelay(ServerEndpoint endpoint, std::istream &in, std::ostream &out, std::string workspace = {});

    // Relays until the end of input; returns the process's exit status (0).
    int run();

    // JSON-RPC's internal error, used for what the relay itself could not do.
    static constexpr int kRelayError = -32603;

private:
    void relay(const std::string &message);
    // Closes the connection of the stateless request `id` (JSON text); false when none is open.
    bool cancelStateless(const std::string &id);
    void write(const std::string &message);
    void writeError(const std::string &id, const std::string &text);

    ServerEndpoint m_endpoint;
    std::string m_workspace;  // constant after construction
    std::string m_host;
    unsigned short m_port = 0;
    std::string m_path;  // <base path>/mcp
    std::istream &m_in;
    std::ostream &m_out;

    std::mutex m_mutex;  // guards the session, the count and the output
    std::condition_variable m_idle;
    std::string m_session;
    std::string m_version;
    int m_inFlight = 0;
    // Stateless requests being answered, by id as JSON text.
    struct Open {
        std::shared_ptr<Poco::Net::HTTPClientSession> connection;
        bool cancelled = false;
    };
    std::map<std::string, Open> m_stateless;
};

} // namespace replhost::cli
