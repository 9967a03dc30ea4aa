// SPDX-License-Identifier: Apache-2.0
#include "envcommand.h"

#include "console.h"

namespace replhost::cli {

namespace {

// KEY=value lines of a JSON object of strings, in key order.
std::string assignmentLines(const Poco::JSON::Object::Ptr &object)
{
    std::string text;
    if (!object)
        return text;
    for (const std::string &key : object->getNames())
        text += key + '=' + object->optValue<std::string>(key, "") + '\n';
    return text;
}

} // namespace

Result<ExitStatus> EnvCommand::execute()
{
    const std::string path = m_line.has("context")
            ? m_client.scoped("/contexts/" + ApiClient::encode(m_line.value("context")) + "/env")
            : m_client.scoped("/env");
    if (m_line.action == "show")
        return show(path);
    return change(path);
}

Result<ExitStatus> EnvCommand::show(const std::string &path)
{
    if (!m_line.arguments.empty())
        return m_line.usageError("unexpected argument '" + m_line.arguments.front() + "'");
    if (m_line.has("effective") && !m_line.has("context"))
        return m_line.usageError("--effective needs --context ID (it is the environment a context's run starts from)");
    Result<HttpReply> reply = m_client.call("GET", path);
    if (!reply)
        return reply.failure();
    if (m_line.json) {
        Console::json(reply->body);
        return ExitStatus::Ok;
    }
    const Poco::JSON::Object::Ptr layer = reply->object();
    if (!layer)
        return fail(ExitStatus::Refused, "the server's answer is not an env layer");
    if (m_line.has("effective")) {
        Console::out(assignmentLines(layer->getObject("effective")));
        return ExitStatus::Ok;
    }
    std::string text = assignmentLines(layer->getObject("set"));
    if (const Poco::JSON::Array::Ptr unset = layer->getArray("unset")) {
        for (size_t i = 0; i < unset->size(); ++i)
            text += "unset " + unset->getElement<std::string>(unsigned(i)) + '\n';
    }
    Console::out(text);
    return ExitStatus::Ok;
}

Result<ExitStatus> EnvCommand::change(const std::string &path)
{
    if (m_line.has("effective"))
        return m_line.usageError("--effective goes with env show");
    if (m_line.arguments.empty())
        return m_line.usageError(m_line.action == "set" ? "say what to set: env set KEY=VALUE..."
                                                        : "say which keys: env " + m_line.action + " KEY...");
    Poco::JSON::Object patch;
    if (m_line.action == "set") {
        Result<Poco::JSON::Object> set = m_line.assignments(m_line.arguments, "env set");
        if (!set)
            return set.failure();
        patch.set("set", *set);
    } else {
        Poco::JSON::Array keys;
        for (const std::string &key : m_line.arguments) {
            if (key.empty() || key.find('=') != std::string::npos)
                return m_line.usageError("env " + m_line.action + " takes names of variables, not '" + key + "'");
            keys.add(key);
        }
        patch.set(m_line.action, keys);  // "unset" and "clear" are the API's words too
    }
    Result<HttpReply> reply = m_client.call("PATCH", path, patch);
    if (!reply)
        return reply.failure();
    if (m_line.json)
        Console::json(reply->body);
    return ExitStatus::Ok;
}

} // namespace replhost::cli
