// SPDX-License-Identifier: Apache-2.0
#include "apiclient.h"

#include <Poco/Dynamic/Var.h>
#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>

#include <istream>
#include <sstream>
#include <ostream>

namespace replhost::cli {

namespace {

// No receive timeout by default: a run's stream may stay silent between keep-alive comments for
// as long as the server is configured to wait (--sse-keep-alive), and a server that goes away
// closes the connection, which ends any read. A stuck server leaves Ctrl-C to the user.
constexpr long kSendTimeoutSeconds = 120;
constexpr long kConnectTimeoutSeconds = 10;

Poco::Dynamic::Var parseJson(const std::string &body)
{
    if (body.empty())
        return {};
    try {
        return Poco::JSON::Parser().parse(body);
    } catch (const std::exception &) {
        return {};
    }
}

} // namespace

Poco::JSON::Object::Ptr HttpReply::object() const
{
    const Poco::Dynamic::Var json = parseJson(body);
    return json.type() == typeid(Poco::JSON::Object::Ptr) ? json.extract<Poco::JSON::Object::Ptr>()
                                                          : Poco::JSON::Object::Ptr();
}

Poco::JSON::Array::Ptr HttpReply::array() const
{
    const Poco::Dynamic::Var json = parseJson(body);
    return json.type() == typeid(Poco::JSON::Array::Ptr) ? json.extract<Poco::JSON::Array::Ptr>()
                                                         : Poco::JSON::Array::Ptr();
}

ApiClient::ApiClient(ServerLocator::Overrides overrides, std::string workspace)
    : m_overrides(std::move(overrides)), m_workspace(std::move(workspace))
{
}

ApiClient::ApiClient(ServerEndpoint endpoint, std::string workspace)
    : m_endpoint(std::move(endpoint)), m_workspace(std::move(workspace))
{
}

Result<void> ApiClient::connect()
{
    if (m_session)
        return {};
    if (m_overrides) {
        Result<ServerEndpoint> found = ServerLocator::locate(*m_overrides);
        if (!found)
            return found.failure();
        m_endpoint = std::move(*found);
        m_overrides.reset();
    }
    const Poco::URI uri(m_endpoint.url);  // checked by ServerLocator::checkUrl
    m_basePath = uri.getPath();
    while (!m_basePath.empty() && m_basePath.back() == '/')
        m_basePath.pop_back();
    m_session = std::make_unique<Poco::Net::HTTPClientSession>(uri.getHost(), uri.getPort());
    m_session->setKeepAlive(true);
    m_session->setTimeout(Poco::Timespan(kConnectTimeoutSeconds, 0), Poco::Timespan(kSendTimeoutSeconds, 0),
                          Poco::Timespan(m_receiveTimeoutSeconds, 0));
    return {};
}

ApiClient::~ApiClient() = default;

std::string ApiClient::encode(const std::string &text)
{
    std::string encoded;
    Poco::URI::encode(text, "!#$&'()*+,/:;=?@[]", encoded);
    return encoded;
}

std::string ApiClient::scoped(const std::string &tail) const
{
    return m_workspace.empty() ? "/v1" + tail : "/v1/workspaces/" + encode(m_workspace) + tail;
}

Result<std::unique_ptr<Poco::Net::HTTPRequest>> ApiClient::makeRequest(const std::string &method,
                                                                       const std::string &path)
{
    if (Result<void> connected = connect(); !connected)
        return connected.failure();
    auto request = std::make_unique<Poco::Net::HTTPRequest>(method, m_basePath + path,
                                                            Poco::Net::HTTPMessage::HTTP_1_1);
    request->setKeepAlive(true);
    request->setCredentials("Bearer", m_endpoint.token);
    // What a router in front of several servers places the request by (the server checks that
    // it agrees with the path).
    const std::string &routed = m_routedWorkspace.empty() ? m_workspace : m_routedWorkspace;
    if (!routed.empty())
        request->set("X-Replhost-Workspace", routed);
    return request;
}

Failure ApiClient::unreachable(const std::string &why)
{
    // A broken connection must not be reused for the next request.
    m_session->reset();
    return fail(ExitStatus::Unreachable, "cannot reach replhost-server at " + m_endpoint.url + " (from "
                                                 + m_endpoint.urlSource + "): " + why);
}

Failure ApiClient::refusal(int status, const std::string &body) const
{
    std::string code;
    std::string message;
    try {
        const Poco::JSON::Object::Ptr error =
                Poco::JSON::Parser().parse(body).extract<Poco::JSON::Object::Ptr>();
        code = error->optValue<std::string>("code", "");
        message = error->optValue<std::string>("message", "");
    } catch (const std::exception &) {
        // Not one of our JSON errors (a proxy in between, say): the status says enough.
    }
    if (message.empty())
        message = "the server answered HTTP " + std::to_string(status);
    if (status == 401) {
        return fail(ExitStatus::Unauthorized, "the server at " + m_endpoint.url + " refused the token from "
                                                      + m_endpoint.tokenSource + " (" + message
                                                      + "); pass the server's token with --token or "
                                                        "REPLHOST_TOKEN, or its --data-dir",
                status);
    }
    return fail(ExitStatus::Refused, message, status);
}

Result<std::istream *> ApiClient::exchange(Poco::Net::HTTPRequest &request,
                                           const std::function<void(std::ostream &)> &writeBody,
                                           Poco::Net::HTTPResponse &response)
{
    try {
        std::ostream &out = m_session->sendRequest(request);
        if (writeBody)
            writeBody(out);
        std::istream &in = m_session->receiveResponse(response);
        const int status = int(response.getStatus());
        if (status >= 400) {
            std::string body;
            Poco::StreamCopier::copyToString(in, body);
            return refusal(status, body);
        }
        return &in;
    } catch (const std::exception &error) {  // Poco::Exception derives from it
        const auto *poco = dynamic_cast<const Poco::Exception *>(&error);
        return unreachable(poco ? poco->displayText() : std::string(error.what()));
    }
}

Result<HttpReply> ApiClient::roundTrip(Poco::Net::HTTPRequest &request,
                                       const std::function<void(std::ostream &)> &writeBody)
{
    Poco::Net::HTTPResponse response;
    Result<std::istream *> in = exchange(request, writeBody, response);
    if (!in)
        return in.failure();
    HttpReply reply;
    reply.status = int(response.getStatus());
    reply.instance = response.get("X-Replhost-Instance", "");
    try {
        Poco::StreamCopier::copyToString(**in, reply.body);
    } catch (const std::exception &error) {
        return unreachable(error.what());
    }
    if (response.hasContentLength() && std::streamsize(reply.body.size()) != response.getContentLength())
        return unreachable("the connection broke off in the middle of an answer");
    return reply;
}

Result<HttpReply> ApiClient::call(const std::string &method, const std::string &path, const std::string &jsonBody)
{
    Result<std::unique_ptr<Poco::Net::HTTPRequest>> request = makeRequest(method, path);
    if (!request)
        return request.failure();
    if (!jsonBody.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        (*request)->setContentType("application/json");
        (*request)->setContentLength(std::streamsize(jsonBody.size()));
    }
    return roundTrip(**request, [&jsonBody](std::ostream &out) { out << jsonBody; });
}

Result<HttpReply> ApiClient::call(const std::string &method, const std::string &path, const Poco::JSON::Object &body)
{
    std::ostringstream text;
    body.stringify(text);
    return call(method, path, text.str());
}

Result<HttpReply> ApiClient::upload(const std::string &path, std::istream &in, std::streamsize length)
{
    Result<std::unique_ptr<Poco::Net::HTTPRequest>> request = makeRequest("PUT", path);
    if (!request)
        return request.failure();
    (*request)->setContentType("application/octet-stream");
    (*request)->setContentLength(length);
    return roundTrip(**request, [&in](std::ostream &out) { Poco::StreamCopier::copyStream(in, out); });
}

Result<std::streamsize> ApiClient::download(const std::string &path, std::ostream &out)
{
    Result<std::unique_ptr<Poco::Net::HTTPRequest>> request = makeRequest("GET", path);
    if (!request)
        return request.failure();
    Poco::Net::HTTPResponse response;
    Result<std::istream *> in = exchange(**request, {}, response);
    if (!in)
        return in.failure();
    std::streamsize copied = 0;
    try {
        copied = std::streamsize(Poco::StreamCopier::copyStream64(**in, out));
    } catch (const std::exception &error) {
        return unreachable(error.what());
    }
    if (response.hasContentLength() && copied != response.getContentLength())
        return unreachable("the connection broke off after " + std::to_string(copied) + " of "
                           + std::to_string(response.getContentLength()) + " bytes");
    return copied;
}

Result<void> ApiClient::stream(const std::string &path, const std::string &jsonBody,
                               const std::function<void(const SseEvent &)> &onEvent)
{
    Result<std::unique_ptr<Poco::Net::HTTPRequest>> request = makeRequest("POST", path);
    if (!request)
        return request.failure();
    (*request)->setContentType("application/json");
    (*request)->setContentLength(std::streamsize(jsonBody.size()));
    (*request)->set("Accept", "text/event-stream");
    Poco::Net::HTTPResponse response;
    Result<std::istream *> in = exchange(**request, [&jsonBody](std::ostream &out) { out << jsonBody; }, response);
    if (in) {
        // Stream errors surface as end of input (the istream catches them): the caller sees a
        // stream without its last event.
        SseReader reader(**in);
        while (const std::optional<SseEvent> event = reader.next())
            onEvent(*event);
        if (!**in && !(*in)->eof())
            m_session->reset();
    }
    if (!in)
        return in.failure();
    return {};
}

} // namespace replhost::cli
