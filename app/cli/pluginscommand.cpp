// SPDX-License-Identifier: Apache-2.0
#include "pluginscommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/JSON/Array.h>

namespace replhost::cli {

namespace {

std::string text(const Poco::JSON::Object::Ptr &object, const std::string &key)
{
    if (!object || !object->has(key) || object->isNull(key))
        return {};
    return object->getValue<std::string>(key);
}

std::string joined(const Poco::JSON::Array::Ptr &words)
{
    std::string list;
    for (size_t i = 0; words && i < words->size(); ++i)
        list += (list.empty() ? "" : ", ") + words->getElement<std::string>(unsigned(i));
    return list;
}

} // namespace

Result<ExitStatus> PluginsCommand::execute()
{
    if (!m_line.arguments.empty())
        return m_line.usageError("unexpected argument '" + m_line.arguments.front() + "'");
    return m_line.command == "plugins" ? plugins() : languages();
}

Result<ExitStatus> PluginsCommand::plugins()
{
    Result<HttpReply> reply = m_client.call("GET", "/v1/plugins");
    if (!reply)
        return reply.failure();
    const Poco::JSON::Object::Ptr document = reply->object();
    if (!document)
        return fail(ExitStatus::Refused, "the server's answer is not a plugin list");
    if (m_line.json) {
        Console::json(reply->body);
        return ExitStatus::Ok;
    }
    const Poco::JSON::Array::Ptr dirs = document->getArray("search_path");
    const Poco::JSON::Array::Ptr found = document->getArray("plugins");

    TextTable searched({"ORIGIN", "DIRECTORY", "PLUGINS"});
    for (size_t i = 0; dirs && i < dirs->size(); ++i) {
        const Poco::JSON::Object::Ptr dir = dirs->getObject(unsigned(i));
        if (!dir)
            continue;
        const std::string path = text(dir, "directory");
        size_t count = 0;
        for (size_t j = 0; found && j < found->size(); ++j) {
            if (text(found->getObject(unsigned(j)), "directory") == path)
                ++count;
        }
        const bool exists = dir->optValue<bool>("exists", false);
        searched.addRow({text(dir, "origin"), path, exists ? std::to_string(count) : "missing"});
    }
    TextTable plugins({"ID", "STATE", "ORIGIN", "FILE", "REASON"});
    for (size_t i = 0; found && i < found->size(); ++i) {
        const Poco::JSON::Object::Ptr plugin = found->getObject(unsigned(i));
        if (!plugin)
            continue;
        const std::string id = text(plugin, "id");
        plugins.addRow({id.empty() ? "-" : id, text(plugin, "state"), text(plugin, "origin"), text(plugin, "file"),
                        text(plugin, "reason")});
    }
    Console::out("Searched, in order (the first plugin of a language wins):\n" + searched.text() + "\n"
                 + plugins.text());
    return ExitStatus::Ok;
}

Result<ExitStatus> PluginsCommand::languages()
{
    Result<HttpReply> reply = m_client.call("GET", "/v1/languages");
    if (!reply)
        return reply.failure();
    const Poco::JSON::Array::Ptr entries = reply->array();
    if (!entries)
        return fail(ExitStatus::Refused, "the server's answer is not a list of languages");
    if (m_line.json) {
        Console::json(reply->body);
        return ExitStatus::Ok;
    }
    TextTable table({"ID", "NAME", "AVAILABLE", "VERSION", "ALIASES", "REASON"});
    size_t refused = 0;
    for (size_t i = 0; i < entries->size(); ++i) {
        const Poco::JSON::Object::Ptr language = entries->getObject(unsigned(i));
        if (!language)
            continue;
        const std::string state = text(language, "state");
        if (state != "loaded") {
            // A shadowed plugin's language is served by another file; the others provide none.
            refused += state == "shadowed" ? 0 : 1;
            continue;
        }
        const bool available = language->optValue<bool>("available", false);
        table.addRow({text(language, "id"), text(language, "name"), available ? "yes" : "no",
                      text(language, "version"), joined(language->getArray("aliases")),
                      available ? std::string() : text(language, "reason")});
    }
    Console::out(table.text());
    if (refused > 0)
        Console::complain(std::to_string(refused) + (refused == 1 ? " plugin file was" : " plugin files were")
                          + " refused; 'replhost-cli plugins' says why");
    return ExitStatus::Ok;
}

} // namespace replhost::cli
