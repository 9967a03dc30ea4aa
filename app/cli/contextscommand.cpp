// SPDX-License-Identifier: Apache-2.0
#include "contextscommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/JSON/Array.h>
#include <Poco/NumberParser.h>
#include <Poco/Thread.h>

#include <algorithm>
#include <map>
#include <utility>

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
    // Text starts with whole lines: the entries up to SEQ are read too (as far as the server
    // still has them), for the start of the line that each stream's first entry after SEQ
    // continues. --json gives the entries after SEQ exactly.
    const Poco::Int64 shownAfter = after;
    Poco::Int64 next = m_line.json ? after : 0;
    std::map<std::string, std::string> openLine;  // per stream, the unfinished line of entries <= SEQ
    Poco::JSON::Array all;
    for (;;) {
        Result<HttpReply> reply = m_client.call("GET", base + std::to_string(next));
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
            const Poco::Int64 seq = entry->optValue<Poco::Int64>("seq", next);
            next = std::max(next, seq);
            after = std::max(after, seq);
            if (m_line.json) {
                all.add(entry);
                continue;
            }
            const bool stream = event->optValue<std::string>("type", "") == "stream";
            const std::string name = event->optValue<std::string>("name", "");
            if (seq <= shownAfter) {
                if (stream) {
                    const std::string text = event->optValue<std::string>("text", "");
                    const size_t lineEnd = text.rfind('\n');
                    openLine[name] = lineEnd == std::string::npos ? openLine[name] + text : text.substr(lineEnd + 1);
                }
                continue;
            }
            if (stream) {
                const std::string text = std::exchange(openLine[name], std::string()) + event->optValue<std::string>("text", "");
                name == "stderr" ? Console::err(text) : Console::out(text);
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
