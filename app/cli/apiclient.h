// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"
#include "serverlocator.h"
#include "ssereader.h"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace Poco::Net { class HTTPClientSession; class HTTPRequest; class HTTPResponse; }

namespace replhost::cli {

// An answer of the server with a status below 400.
struct HttpReply {
    int status = 0;
    std::string body;
    std::string instance;  // X-Replhost-Instance: which server answered (empty: not said)

    // The body parsed as JSON; null pointers when it is not an object (or an array).
    Poco::JSON::Object::Ptr object() const;
    Poco::JSON::Array::Ptr array() const;
};

// The native API v1 over one keep-alive HTTP/1.1 connection (Poco::Net::HTTPClientSession),
// with `Authorization: Bearer <token>` on every request, and `X-Replhost-Workspace` naming the
// workspace when there is one (so that a router in front of several servers places it). Paths are
// absolute API paths ("/v1/info"); scoped() prefixes the workspace routes for --workspace.
//
// The server is found (ServerLocator) on the first request, so a command can refuse a wrong
// command line before anything is looked up.
//
// Failures: those of ServerLocator::locate(), Unreachable (cannot connect, or the connection
// broke), Unauthorized (401), Refused (any other status ≥ 400; the message is the server's).
// Poco's exceptions never leave this class.
//
// Owns its connection. Threading: one thread at a time; use one ApiClient per thread.
class ApiClient {
public:
    // A client of the server that `overrides` lead to.
    ApiClient(ServerLocator::Overrides overrides, std::string workspace);
    // A client of a server already found.
    ApiClient(ServerEndpoint endpoint, std::string workspace);
    ~ApiClient();
    ApiClient(const ApiClient &) = delete;
    ApiClient &operator=(const ApiClient &) = delete;

    // How long a read may wait for the server; 0 (the default) waits as long as it takes, which a
    // run's stream needs. Takes effect on the next connection.
    void setReceiveTimeout(int seconds) { m_receiveTimeoutSeconds = seconds; }

    // Valid once a request has been sent.
    const ServerEndpoint &endpoint() const { return m_endpoint; }
    const std::string &workspace() const { return m_workspace; }
    // The workspace sent as X-Replhost-Workspace, by which a router places requests: the
    // --workspace one unless set here (workspaces new/rm/import name theirs). Empty: none.
    void routeTo(std::string workspace) { m_routedWorkspace = std::move(workspace); }

    // "/contexts" → "/v1/contexts", or "/v1/workspaces/<name>/contexts" with a workspace.
    std::string scoped(const std::string &tail) const;
    // Percent-encodes a path segment or a query value.
    static std::string encode(const std::string &text);

    // A request with a JSON body (none when `jsonBody` is empty) and a small answer.
    Result<HttpReply> call(const std::string &method, const std::string &path,
                           const std::string &jsonBody = {});
    Result<HttpReply> call(const std::string &method, const std::string &path,
                           const Poco::JSON::Object &body);

    // PUT of `length` raw bytes read from `in`.
    Result<HttpReply> upload(const std::string &path, std::istream &in, std::streamsize length);
    // GET whose body is copied to `out` as it arrives; returns the number of bytes.
    Result<std::streamsize> download(const std::string &path, std::ostream &out);

    // POST of `jsonBody` answered with an event stream: `onEvent` is called for each message as
    // it arrives, until the server ends the stream. A stream that breaks off also ends normally
    // here; the caller knows from the events whether it got all of them.
    Result<void> stream(const std::string &path, const std::string &jsonBody,
                        const std::function<void(const SseEvent &)> &onEvent);

private:
    Result<void> connect();
    // Finds the server and opens the session on first use.
    Result<std::unique_ptr<Poco::Net::HTTPRequest>> makeRequest(const std::string &method, const std::string &path);
    // Sends the request (the body written by `writeBody`) and reads the response head. A status
    // ≥ 400 is turned into a Failure after reading its body.
    Result<std::istream *> exchange(Poco::Net::HTTPRequest &request,
                                    const std::function<void(std::ostream &)> &writeBody,
                                    Poco::Net::HTTPResponse &response);
    // exchange() and the whole answer read into memory.
    Result<HttpReply> roundTrip(Poco::Net::HTTPRequest &request, const std::function<void(std::ostream &)> &writeBody);
    Failure unreachable(const std::string &why);
    Failure refusal(int status, const std::string &body) const;

    std::optional<ServerLocator::Overrides> m_overrides;  // until the server is found
    ServerEndpoint m_endpoint;
    std::string m_workspace;
    std::string m_routedWorkspace;
    std::string m_basePath;  // the path of the server URL, "" or "/prefix"
    int m_receiveTimeoutSeconds = 0;
    std::unique_ptr<Poco::Net::HTTPClientSession> m_session;
};

} // namespace replhost::cli
