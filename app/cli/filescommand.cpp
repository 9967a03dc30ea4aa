// SPDX-License-Identifier: Apache-2.0
#include "filescommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/File.h>
#include <Poco/Path.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace replhost::cli {

namespace {

std::string listing(const Poco::JSON::Object::Ptr &document)
{
    TextTable table({"MODE", "SIZE", "MODIFIED", "NAME"});
    const Poco::JSON::Array::Ptr entries = document ? document->getArray("entries") : nullptr;
    for (size_t i = 0; entries && i < entries->size(); ++i) {
        const Poco::JSON::Object::Ptr entry = entries->getObject(unsigned(i));
        if (!entry)
            continue;
        const std::string type = entry->optValue<std::string>("type", "");
        std::string name = entry->optValue<std::string>("name", "");
        if (type == "directory")
            name += '/';
        else if (type == "symlink")
            name += " -> " + entry->optValue<std::string>("target", "");
        table.addRow({entry->optValue<std::string>("mode", ""),
                      type == "file" ? entry->optValue<std::string>("size", "0") : "-",
                      entry->optValue<std::string>("modified_at", ""), name});
    }
    return table.text();
}

std::string contentPath(const ApiClient &client, const std::string &path)
{
    return client.scoped("/files/content?path=" + ApiClient::encode(path));
}

} // namespace

Result<ExitStatus> FilesCommand::execute()
{
    if (m_line.action == "ls")
        return list();
    if (m_line.action == "get")
        return get();
    return put();
}

Result<ExitStatus> FilesCommand::list()
{
    if (m_line.arguments.size() > 1)
        return m_line.usageError("files ls takes one directory at most");
    const std::string directory = m_line.arguments.empty() ? std::string() : m_line.arguments.front();
    Result<HttpReply> reply = m_client.call("GET", m_client.scoped("/files?path=" + ApiClient::encode(directory)));
    if (!reply)
        return reply.failure();
    if (m_line.json)
        Console::json(reply->body);
    else
        Console::out(listing(reply->object()));
    return ExitStatus::Ok;
}

Result<ExitStatus> FilesCommand::get()
{
    if (m_line.arguments.empty() || m_line.arguments.size() > 2)
        return m_line.usageError("files get PATH [LOCAL]");
    const std::string &remote = m_line.arguments[0];
    const std::string local = m_line.arguments.size() == 2 ? m_line.arguments[1] : "-";
    if (local == "-") {
        if (m_line.json)
            return m_line.usageError("files get --json writes the bytes to a LOCAL file; name one");
        Result<std::streamsize> copied = m_client.download(contentPath(m_client, remote), std::cout);
        std::cout.flush();
        if (!copied)
            return copied.failure();
        return ExitStatus::Ok;
    }

    // A directory receives the file under its own name. The bytes go to a temporary file first,
    // so a failed download never leaves a half-written LOCAL behind.
    Poco::Path target(local);
    if (Poco::File(local).exists() && Poco::File(local).isDirectory())
        target = Poco::Path(local).makeDirectory().setFileName(Poco::Path(remote).getFileName());
    const std::string finalPath = target.toString();
    const std::string partial = finalPath + ".part";
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out)
        return fail(ExitStatus::Failed, "cannot write " + partial + ": " + std::strerror(errno));
    Result<std::streamsize> copied = m_client.download(contentPath(m_client, remote), out);
    out.close();
    if (!copied || !out) {
        std::remove(partial.c_str());
        if (!copied)
            return copied.failure();
        return fail(ExitStatus::Failed, "cannot write " + partial);
    }
    if (std::rename(partial.c_str(), finalPath.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(partial.c_str());
        return fail(ExitStatus::Failed, "cannot write " + finalPath + ": " + why);
    }
    if (m_line.json) {
        Poco::JSON::Object document;
        document.set("path", remote);
        document.set("size", Poco::Int64(*copied));
        document.set("local", finalPath);
        Console::json(document);
    }
    return ExitStatus::Ok;
}

Result<ExitStatus> FilesCommand::put()
{
    if (m_line.arguments.size() != 2)
        return m_line.usageError("files put LOCAL PATH");
    const std::string &local = m_line.arguments[0];
    const std::string &remote = m_line.arguments[1];

    Result<HttpReply> reply = HttpReply{};
    if (local == "-") {
        // The length must be known before sending: standard input is read whole first.
        std::stringstream content;
        content << std::cin.rdbuf();
        if (std::cin.bad())
            return fail(ExitStatus::Failed, "cannot read standard input");
        const std::streamsize length = std::streamsize(content.str().size());
        reply = m_client.upload(contentPath(m_client, remote), content, length);
    } else {
        std::ifstream in(local, std::ios::binary | std::ios::ate);
        if (!in || Poco::File(local).isDirectory())
            return fail(ExitStatus::Failed, "cannot read " + local + (in ? ": it is a directory" : ": " + std::string(std::strerror(errno))));
        const std::streamsize length = in.tellg();
        in.seekg(0);
        reply = m_client.upload(contentPath(m_client, remote), in, length);
    }
    if (!reply)
        return reply.failure();
    if (m_line.json)
        Console::json(reply->body);
    return ExitStatus::Ok;
}

} // namespace replhost::cli
