// SPDX-License-Identifier: Apache-2.0
#include "mcprelay.h"

#include "ssereader.h"

#include <Poco/Base64Encoder.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>

#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace replhost::cli {

namespace {

std::string jsonText(const Poco::Dynamic::Var &value)
{
    std::ostringstream text;
    Poco::JSON::Stringifier::stringify(value, text);
    return text.str();
}

// What the relay needs to know of a message: its id as JSON text (empty for a notification or
// a message it cannot read), whether it is initialize, and for a message of a stateless
// revision what its headers mirror (Streamable HTTP wants them; stdio has none).
struct Peek {
    std::string id;
    bool initialize = false;
    std::string method;
    std::string statelessVersion;  // params._meta's revision; empty under a handshake revision
    std::optional<std::string> name;  // params.name or params.uri, for the methods that have one
    std::string cancels;  // notifications/cancelled: the id it cancels, as JSON text
};

Peek peek(const std::string &message)
{
    Peek result;
    try {
        const Poco::Dynamic::Var parsed = Poco::JSON::Parser().parse(message);
        if (parsed.type() != typeid(Poco::JSON::Object::Ptr))
            return result;
        const Poco::JSON::Object::Ptr object = parsed.extract<Poco::JSON::Object::Ptr>();
        if (object->has("id") && !object->isNull("id") && object->has("method"))
            result.id = jsonText(object->get("id"));
        if (object->has("method") && object->get("method").isString())
            result.method = object->getValue<std::string>("method");
        result.initialize = result.method == "initialize";
        const Poco::JSON::Object::Ptr params = object->getObject("params");
        if (!params)
            return result;
        if (const Poco::JSON::Object::Ptr meta = params->getObject("_meta");
            meta && meta->has("io.modelcontextprotocol/protocolVersion")
            && meta->get("io.modelcontextprotocol/protocolVersion").isString())
            result.statelessVersion = meta->getValue<std::string>("io.modelcontextprotocol/protocolVersion");
        const char *nameKey = result.method == "resources/read" ? "uri"
                : result.method == "tools/call" || result.method == "prompts/get" ? "name" : nullptr;
        if (nameKey && params->has(nameKey) && params->get(nameKey).isString())
            result.name = params->getValue<std::string>(nameKey);
        if (result.method == "notifications/cancelled" && params->has("requestId"))
            result.cancels = jsonText(params->get("requestId"));
    } catch (const std::exception &) {  // Poco's too: the server says what is wrong with it
    }
    return result;
}

// A value for an Mcp-Name header: as it is when it is plain visible ASCII, else in the
// transport's base64 sentinel (which a plain value that looks like one needs too).
std::string headerValue(const std::string &value)
{
    bool plain = !value.empty() && value.front() != ' ' && value.back() != ' '
            && !(value.rfind("=?base64?", 0) == 0 && value.size() >= 2 && value.compare(value.size() - 2, 2, "?=") == 0);
    for (const char c : value)
        plain = plain && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) <= 0x7e;
    if (plain)
        return value;
    std::ostringstream encoded;
    Poco::Base64Encoder encoder(encoded);
    encoder.rdbuf()->setLineLength(0);
    encoder << value;
    encoder.close();
    return "=?base64?" + encoded.str() + "?=";
}

// A JSON-RPC error object whose id is null gets `id`: the server could not tie it to the
// request (it refused the whole POST), the relay can.
std::string withId(const std::string &body, const std::string &id)
{
    if (id.empty())
        return body;
    try {
        Poco::JSON::Object::Ptr object =
                Poco::JSON::Parser().parse(body).extract<Poco::JSON::Object::Ptr>();
        if (!object->has("error") || !object->isNull("id"))
            return body;
        object->set("id", Poco::JSON::Parser().parse(id));
        std::ostringstream text;
        object->stringify(text);
        return text.str();
    } catch (const std::exception &) {
        return body;
    }
}

bool isJsonRpc(const std::string &body)
{
    return body.find("\"jsonrpc\"") != std::string::npos;
}

std::string escaped(const std::string &text)
{
    std::ostringstream out;
    Poco::JSON::Stringifier::formatString(text, out);
    return out.str();
}

} // namespace

McpRelay::McpRelay(ServerEndpoint endpoint, std::istream &in, std::ostream &out, std::string workspace)
    : m_endpoint(std::move(endpoint)), m_workspace(std::move(workspace)), m_in(in), m_out(out)
{
    const Poco::URI uri(m_endpoint.url);
    m_host = uri.getHost();
    m_port = uri.getPort();
    m_path = uri.getPath() + "/mcp";
}

int McpRelay::run()
{
    std::string line;
    while (std::getline(m_in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos)
            continue;
        const Peek message = peek(line);
        if (message.initialize) {
            relay(line);  // alone: later messages need its session
            continue;
        }
        // Over HTTP a stateless request is cancelled by closing its connection.
        if (!message.cancels.empty() && cancelStateless(message.cancels))
            continue;
        {
            std::lock_guard lock(m_mutex);
            ++m_inFlight;
        }
        std::thread([this, line] {
            relay(line);
            std::lock_guard lock(m_mutex);
            if (--m_inFlight == 0)
                m_idle.notify_all();
        }).detach();
    }
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return m_inFlight == 0; });
    return 0;
}

void McpRelay::write(const std::string &message)
{
    // One message a line: the server's JSON is compact, so it has no raw newline.
    std::lock_guard lock(m_mutex);
    m_out << message << '\n';
    m_out.flush();
}

void McpRelay::writeError(const std::string &id, const std::string &text)
{
    if (id.empty()) {
        std::cerr << "replhost-cli mcp: " << text << '\n';
        return;
    }
    write("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":" + std::to_string(kRelayError)
          + ",\"message\":" + escaped(text) + "}}");
}

bool McpRelay::cancelStateless(const std::string &id)
{
    std::lock_guard lock(m_mutex);
    const auto found = m_stateless.find(id);
    if (found == m_stateless.end())
        return false;
    found->second.cancelled = true;
    // Shut down, not closed: the relaying thread is reading from it and closes it itself.
    try {
        found->second.connection->socket().shutdown();
    } catch (const std::exception &) {  // not connected yet, or gone already
    }
    return true;
}

void McpRelay::relay(const std::string &message)
{
    const Peek request = peek(message);
    const bool stateless = !request.statelessVersion.empty() && !request.initialize;
    std::string session, version;
    if (stateless) {
        version = request.statelessVersion;
    } else {
        std::lock_guard lock(m_mutex);
        session = m_session;
        version = m_version;
    }
    const auto connectionHolder = std::make_shared<Poco::Net::HTTPClientSession>(m_host, m_port);
    Poco::Net::HTTPClientSession &connection = *connectionHolder;
    if (stateless && !request.id.empty()) {
        std::lock_guard lock(m_mutex);
        m_stateless[request.id] = {connectionHolder, false};
    }
    // Whether the client cancelled this request: then nothing more is written for it. With
    // `done`, the request is forgotten too.
    const auto cancelled = [&](bool done = true) {
        if (!stateless || request.id.empty())
            return false;
        std::lock_guard lock(m_mutex);
        const auto found = m_stateless.find(request.id);
        if (found == m_stateless.end() || found->second.connection != connectionHolder)
            return false;
        const bool was = found->second.cancelled;
        if (done)
            m_stateless.erase(found);
        return was;
    };
    try {
        // A run answers when it ends, however long that takes.
        connection.setTimeout(Poco::Timespan(10, 0), Poco::Timespan(30, 0), Poco::Timespan(0, 0));
        Poco::Net::HTTPRequest post(Poco::Net::HTTPRequest::HTTP_POST, m_path, Poco::Net::HTTPMessage::HTTP_1_1);
        post.set("Authorization", "Bearer " + m_endpoint.token);
        post.set("Accept", "application/json, text/event-stream");
        post.setContentType("application/json");
        post.setContentLength(std::streamsize(message.size()));
        if (!m_workspace.empty())
            post.set("X-Replhost-Workspace", m_workspace);
        if (!session.empty())
            post.set("Mcp-Session-Id", session);
        if (!version.empty())
            post.set("MCP-Protocol-Version", version);
        if (stateless) {
            post.set("Mcp-Method", request.method);
            if (request.name)
                post.set("Mcp-Name", headerValue(*request.name));
        }
        connection.sendRequest(post) << message;
        Poco::Net::HTTPResponse response;
        std::istream &body = connection.receiveResponse(response);
        const int status = int(response.getStatus());
        if (status == 202) {
            cancelled();
            return;
        }
        if (response.getContentType().rfind("text/event-stream", 0) == 0) {
            SseReader reader(body);
            while (const std::optional<SseEvent> event = reader.next()) {
                if (cancelled(false))
                    break;
                write(event->data);
            }
            cancelled();
            return;
        }
        std::string text;
        Poco::StreamCopier::copyToString(body, text);
        if (cancelled())
            return;
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        if (request.initialize && status == 200) {
            std::lock_guard lock(m_mutex);
            m_session = response.get("Mcp-Session-Id", "");
            try {
                const Poco::JSON::Object::Ptr answer =
                        Poco::JSON::Parser().parse(text).extract<Poco::JSON::Object::Ptr>();
                m_version = answer->getObject("result")->getValue<std::string>("protocolVersion");
            } catch (const std::exception &) {
                m_version.clear();  // an error answer: no revision was agreed
            }
        }
        if (isJsonRpc(text))
            write(withId(text, request.id));
        else if (!text.empty() || status >= 400)
            writeError(request.id, "replhost-server answered " + std::to_string(status) + " " + response.getReason()
                                           + (text.empty() ? std::string() : ": " + text));
    } catch (const std::exception &error) {  // Poco's network exceptions too
        if (cancelled())
            return;  // the relay closed the connection itself
        writeError(request.id, "cannot reach replhost-server at " + m_endpoint.url + " (from "
                                       + m_endpoint.urlSource + "): " + error.what());
    }
}

} // namespace replhost::cli
