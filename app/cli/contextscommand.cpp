// SPDX-License-Identifier: Apache-2.0
#include "contextscommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/JSON/Array.h>
#include <Poco/NumberParser.h>
#include <Poco/Thread.h>

#include <algorithm>

namespace replhost::cli {

Result<ExitStatus> ContextsCommand::execute()
{
    if (m_line.action == "ls")
        return list();
    if (m_line.action == "new")
        return create();
    if (m_line.action == "rm")
        return remove();
    if (m_line.action == "output")
        return output();
    return restart();
}

Result<ExitStatus> ContextsCommand::output()
{
    if (m_line.arguments.size() != 1)
        return m_line.usageError(m_line.arguments.empty() ? "say whose output: contexts output ID"
                                                          : "unexpected argument '" + m_line.arguments.back() + "'");
    Poco::Int64 after = 0;
    if (m_line.has("after") && (!Poco::NumberParser::tryParse64(m_line.value("after"), after) || after < 0))
        return m_line.usageError("--after takes an entry number from 0");
    const bool follow = m_line.has("follow");
    if (follow && m_line.json)
        return m_line.usageError("--follow prints text as it comes; leave out --json");
    const std::string base = m_client.scoped("/contexts/" + ApiClient::encode(m_line.arguments.front())
                                             + "/background-output?limit=1000&after=");
    Poco::JSON::Array all;
    for (;;) {
        Result<HttpReply> reply = m_client.call("GET", base + std::to_string(after));
        if (!reply)
            return reply.failure();
        const Poco::JSON::Object::Ptr page = reply->object();
        const Poco::JSON::Array::Ptr entries = page ? page->getArray("entries") : nullptr;
        const size_t count = entries ? entries->size() : 0;
        for (size_t i = 0; i < count; ++i) {
            const Poco::JSON::Object::Ptr entry = entries->getObject(unsigned(i));
            const Poco::JSON::Object::Ptr event = entry ? entry->getObject("event") : nullptr;
            if (!event)
                continue;
            after = std::max(after, entry->optValue<Poco::Int64>("seq", after));
            if (m_line.json) {
                all.add(entry);
                continue;
            }
            if (event->optValue<std::string>("type", "") == "stream") {
                const std::string text = event->optValue<std::string>("text", "");
                event->optValue<std::string>("name", "") == "stderr" ? Console::err(text) : Console::out(text);
            } else if (const Poco::JSON::Object::Ptr data = event->getObject("data");
                       data && data->has("text/plain") && !data->isNull("text/plain")) {
                std::string text = data->getValue<std::string>("text/plain");
                Console::out(text.empty() || text.back() == '\n' ? text : text + '\n');
            }
        }
        if (count > 0)
            continue;  // a full page may have more behind it
        if (!follow)
            break;
        Poco::Thread::sleep(250);
    }
    if (m_line.json) {
        Poco::JSON::Object document;
        document.set("entries", all);
        document.set("last_seq", after);
        Console::json(document);
    }
    return ExitStatus::Ok;
}

Result<ExitStatus> ContextsCommand::list()
{
    if (!m_line.arguments.empty())
        return m_line.usageError("unexpected argument '" + m_line.arguments.front() + "'");
    std::string path = m_client.scoped("/contexts");
    if (m_line.has("language"))
        path += "?language=" + ApiClient::encode(m_line.value("language"));
    Result<HttpReply> reply = m_client.call("GET", path);
    if (!reply)
        return reply.failure();
    if (m_line.json) {
        Console::json(reply->body);
        return ExitStatus::Ok;
    }
    TextTable table({"ID", "LANGUAGE", "STATE", "RUNS", "NAME"});
    if (const Poco::JSON::Array::Ptr contexts = reply->array()) {
        for (size_t i = 0; i < contexts->size(); ++i) {
            const Poco::JSON::Object::Ptr context = contexts->getObject(unsigned(i));
            if (!context)
                continue;
            table.addRow({context->optValue<std::string>("id", ""), context->optValue<std::string>("language", ""),
                          context->optValue<std::string>("state", ""),
                          context->optValue<std::string>("execution_count", "0"),
                          context->optValue<std::string>("name", "")});
        }
    }
    Console::out(table.text());
    return ExitStatus::Ok;
}

Result<ExitStatus> ContextsCommand::create()
{
    // The language as -l LANGUAGE or as the one argument ("contexts new python").
    const bool named = m_line.has("language");
    if (m_line.arguments.size() > (named ? 0u : 1u))
        return m_line.usageError("unexpected argument '" + m_line.arguments.back() + "'");
    if (!named && m_line.arguments.empty())
        return m_line.usageError("say the new context's language: contexts new LANGUAGE, or -l LANGUAGE");
    Poco::JSON::Object body;
    body.set("language", named ? m_line.value("language") : m_line.arguments.front());
    if (m_line.has("name"))
        body.set("name", m_line.value("name"));
    if (m_line.has("cwd"))
        body.set("cwd", m_line.value("cwd"));
    Result<Poco::JSON::Object> env = m_line.assignments(m_line.values("env"), "--env");
    if (!env)
        return env.failure();
    if (env->size() > 0)
        body.set("env", *env);

    Result<HttpReply> reply = m_client.call("POST", m_client.scoped("/contexts"), body);
    if (!reply)
        return reply.failure();
    if (m_line.json) {
        Console::json(reply->body);
    } else {
        const Poco::JSON::Object::Ptr context = reply->object();
        Console::out((context ? context->optValue<std::string>("id", "") : std::string()) + '\n');
    }
    return ExitStatus::Ok;
}

Result<ExitStatus> ContextsCommand::remove()
{
    if (m_line.arguments.empty())
        return m_line.usageError("say which contexts to delete: contexts rm ID...");
    Poco::JSON::Array deleted;
    for (const std::string &id : m_line.arguments) {
        Result<HttpReply> reply = m_client.call("DELETE", m_client.scoped("/contexts/" + ApiClient::encode(id)));
        if (!reply)
            return reply.failure();
        deleted.add(id);
    }
    if (m_line.json) {
        Poco::JSON::Object document;
        document.set("deleted", deleted);
        Console::json(document);
    }
    return ExitStatus::Ok;
}

Result<ExitStatus> ContextsCommand::restart()
{
    if (m_line.arguments.size() != 1)
        return m_line.usageError("say which context to restart: contexts restart ID");
    Result<HttpReply> reply = m_client.call(
            "POST", m_client.scoped("/contexts/" + ApiClient::encode(m_line.arguments.front()) + "/restart"));
    if (!reply)
        return reply.failure();
    if (m_line.json)
        Console::json(reply->body);
    return ExitStatus::Ok;
}

} // namespace replhost::cli
