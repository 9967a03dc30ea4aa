// SPDX-License-Identifier: Apache-2.0
#include "workspacescommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/JSON/Parser.h>

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <unistd.h>

namespace replhost::cli {

namespace {

// The workspace name an archive's manifest gives, read with libarchive (the manifest is the
// archive's first entry).
Result<std::string> nameInArchive(const std::string &bytes)
{
    std::unique_ptr<archive, int (*)(archive *)> in(archive_read_new(), archive_read_free);
    archive_read_support_format_tar(in.get());
    if (archive_read_open_memory(in.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
        return fail(ExitStatus::Failed, std::string("not a workspace archive: ") + archive_error_string(in.get()));
    archive_entry *entry = nullptr;
    while (archive_read_next_header(in.get(), &entry) == ARCHIVE_OK) {
        if (std::string(archive_entry_pathname(entry)) != "replhost-workspace.json")
            continue;
        std::string manifest(size_t(std::max<la_int64_t>(archive_entry_size(entry), 0)), '\0');
        if (archive_read_data(in.get(), manifest.data(), manifest.size()) != la_ssize_t(manifest.size()))
            break;
        try {
            Poco::JSON::Parser parser;
            const Poco::JSON::Object::Ptr object = parser.parse(manifest).extract<Poco::JSON::Object::Ptr>();
            const std::string name = object ? object->optValue<std::string>("name", "") : "";
            if (!name.empty())
                return name;
        } catch (const Poco::Exception &) {
        }
        break;
    }
    return fail(ExitStatus::Failed, "not a workspace archive: no manifest with a name; give one with --name");
}

} // namespace

Result<ExitStatus> WorkspacesCommand::execute()
{
    if (m_line.action == "export")
        return exportArchive();
    if (m_line.action == "import")
        return importArchive();
    if (m_line.action == "where")
        return where();
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

Result<ExitStatus> WorkspacesCommand::exportArchive()
{
    if (m_line.arguments.size() != 1)
        return m_line.usageError("say which workspace: workspaces export NAME > NAME.tar");
    if (::isatty(STDOUT_FILENO) == 1)
        return fail(ExitStatus::Usage, "workspaces export writes a tar archive: redirect stdout to a file");
    const std::string &name = m_line.arguments.front();
    m_client.routeTo(name);
    // Whole before any of it is written, so that a failure never leaves half an archive.
    std::stringstream archive;
    Result<std::streamsize> copied = m_client.download("/v1/workspaces/" + ApiClient::encode(name) + "/archive", archive);
    if (!copied)
        return copied.failure();
    std::cout << archive.rdbuf();
    std::cout.flush();
    if (!std::cout)
        return fail(ExitStatus::Failed, "cannot write the archive to stdout");
    return ExitStatus::Ok;
}

Result<ExitStatus> WorkspacesCommand::importArchive()
{
    if (m_line.arguments.size() != 1)
        return m_line.usageError("say which archive: workspaces import FILE [--name NAME]");
    const std::string &file = m_line.arguments.front();
    std::stringstream content;
    if (file == "-") {
        content << std::cin.rdbuf();
        if (std::cin.bad())
            return fail(ExitStatus::Failed, "cannot read standard input");
    } else {
        std::ifstream in(file, std::ios::binary);
        if (!in)
            return fail(ExitStatus::Failed, "cannot read " + file + ": " + std::strerror(errno));
        content << in.rdbuf();
    }
    const std::string bytes = content.str();
    std::string name = m_line.value("name");
    if (name.empty()) {
        Result<std::string> named = nameInArchive(bytes);
        if (!named)
            return named.failure();
        name = *named;
    }
    m_client.routeTo(name);
    std::istringstream body(bytes);
    Result<HttpReply> reply = m_client.upload("/v1/workspaces/" + ApiClient::encode(name) + "/archive", body,
                                              std::streamsize(bytes.size()));
    if (!reply)
        return reply.failure();
    if (m_line.json) {
        Console::json(reply->body);
        return ExitStatus::Ok;
    }
    const Poco::JSON::Object::Ptr imported = reply->object();
    Console::out("imported " + name + " with " + std::to_string(imported ? imported->optValue<int>("contexts", 0) : 0)
                 + " context(s)" + (reply->instance.empty() ? "" : " on " + reply->instance) + "\n");
    return ExitStatus::Ok;
}

Result<ExitStatus> WorkspacesCommand::where()
{
    if (m_line.arguments.size() != 1)
        return m_line.usageError("say which workspace: workspaces where NAME");
    const std::string &name = m_line.arguments.front();
    m_client.routeTo(name);
    // Any route a router places by the field; the answer says who answered.
    Result<HttpReply> reply = m_client.call("GET", "/v1/info");
    if (!reply)
        return reply.failure();
    if (reply->instance.empty())
        return fail(ExitStatus::Failed, "the server does not say which instance it is (no X-Replhost-Instance)");
    if (m_line.json) {
        Poco::JSON::Object document;
        document.set("workspace", name);
        document.set("instance", reply->instance);
        Console::json(document);
    } else {
        Console::out(reply->instance + "\n");
    }
    return ExitStatus::Ok;
}

} // namespace replhost::cli
