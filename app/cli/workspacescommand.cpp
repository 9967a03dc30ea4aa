// SPDX-License-Identifier: Apache-2.0
#include "workspacescommand.h"

#include "console.h"
#include "texttable.h"

namespace replhost::cli {

Result<ExitStatus> WorkspacesCommand::execute()
{
    const size_t wanted = m_line.action == "ls" ? 0 : 1;
    if (m_line.arguments.size() != wanted)
        return m_line.usageError(wanted == 0 ? "workspaces ls takes no arguments"
                                             : "say which workspace: workspaces " + m_line.action + " NAME");

    Result<HttpReply> reply = HttpReply{};
    if (m_line.action != "ls")
        m_client.routeTo(m_line.arguments.front());
    if (m_line.action == "ls") {
        reply = m_client.call("GET", "/v1/workspaces");
    } else if (m_line.action == "new") {
        Poco::JSON::Object body;
        body.set("name", m_line.arguments.front());
        if (m_line.has("directory"))
            body.set("directory", m_line.value("directory"));
        reply = m_client.call("POST", "/v1/workspaces", body);
    } else {
        reply = m_client.call("DELETE", "/v1/workspaces/" + ApiClient::encode(m_line.arguments.front())
                                                + (m_line.has("purge") ? "?purge=true" : ""));
    }
    if (!reply)
        return reply.failure();
    if (m_line.json) {
        if (m_line.action == "rm") {
            Poco::JSON::Array deleted;
            deleted.add(m_line.arguments.front());
            Poco::JSON::Object document;
            document.set("deleted", deleted);
            Console::json(document);
        } else {
            Console::json(reply->body);
        }
        return ExitStatus::Ok;
    }
    if (m_line.action == "ls") {
        TextTable table({"NAME", "DIRECTORY"});
        const Poco::JSON::Array::Ptr workspaces = reply->array();
        for (size_t i = 0; workspaces && i < workspaces->size(); ++i) {
            if (const Poco::JSON::Object::Ptr workspace = workspaces->getObject(unsigned(i)))
                table.addRow({workspace->optValue<std::string>("name", ""),
                              workspace->optValue<std::string>("directory", "")});
        }
        Console::out(table.text());
    }
    return ExitStatus::Ok;
}

} // namespace replhost::cli
