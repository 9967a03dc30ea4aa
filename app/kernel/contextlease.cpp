// SPDX-License-Identifier: Apache-2.0
#include "contextlease.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace replhost::kernel {

namespace {

// A context's name is at most 200 characters without control characters (the server refuses
// others): a notebook path is shortened to its last characters and cleaned.
std::string contextName(const std::string &name)
{
    std::string clean;
    for (const char c : name) {
        if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)
            clean += c;
    }
    size_t start = 0;
    size_t codePoints = 0;
    for (size_t i = clean.size(); i > 0; --i) {
        if ((static_cast<unsigned char>(clean[i - 1]) & 0xC0) != 0x80 && ++codePoints == 200) {
            start = i - 1;
            break;
        }
    }
    return clean.substr(start);
}

} // namespace

std::string ContextLease::notePath(const ServerConnection &server, const std::string &connectionKey)
{
    Poco::SHA2Engine sha;
    sha.update(connectionKey);
    return server.dataDir() + "/kernels/restart-" + Poco::DigestEngine::digestToHex(sha.digest());
}

cli::Result<ContextLease> ContextLease::acquire(ServerConnection &server, const Request &request)
{
    ContextLease lease;
    lease.m_connectionKey = request.connectionKey;
    std::string id = request.contextId;
    lease.m_owned = id.empty();

    if (id.empty() && !request.connectionKey.empty()) {
        const std::string note = notePath(server, request.connectionKey);
        std::ifstream in(note);
        std::string noted;
        if (in && std::getline(in, noted) && !noted.empty()) {
            ::unlink(note.c_str());
            cli::Result<cli::HttpReply> found = server.call("GET", server.scoped("/contexts/" + ServerConnection::encode(noted)));
            if (found)
                id = noted;
        }
    }

    nlohmann::json creation = {{"language", request.language}};
    if (!contextName(request.name).empty())
        creation["name"] = contextName(request.name);
    cli::Result<cli::HttpReply> reply = id.empty()
            ? server.call("POST", server.scoped("/contexts"), creation.dump())
            : server.call("GET", server.scoped("/contexts/" + ServerConnection::encode(id)));
    if (!reply)
        return reply.failure();
    const nlohmann::json context = nlohmann::json::parse(reply->body, nullptr, false);
    if (!context.is_object() || !context.contains("id") || !context["id"].is_string())
        return cli::fail(cli::ExitStatus::Failed, "the server answered with something that is not a context");
    lease.m_id = context["id"];
    lease.m_language = context.value("language", request.language);
    lease.m_languageVersion = versionIn(context);
    // A context whose interpreter has not started yet has no version: the runtime's is the same.
    if (lease.m_languageVersion.empty()) {
        if (const cli::Result<cli::HttpReply> languages = server.call("GET", "/v1/languages"); languages) {
            const nlohmann::json list = nlohmann::json::parse(languages->body, nullptr, false);
            for (const nlohmann::json &language : list.is_array() ? list : nlohmann::json::array()) {
                if (language.is_object() && language.value("id", "") == lease.m_language)
                    lease.m_languageVersion = versionIn(language, "version");
            }
        }
    }
    return lease;
}

std::string ContextLease::versionIn(const nlohmann::json &object, const char *key)
{
    const auto version = object.find(key);
    return version != object.end() && version->is_string() ? version->get<std::string>() : std::string();
}

cli::Result<void> ContextLease::release(ServerConnection &server, bool restart) const
{
    const std::string path = server.scoped("/contexts/" + ServerConnection::encode(m_id));
    if (!restart) {
        if (!m_owned)
            return {};
        cli::Result<cli::HttpReply> deleted = server.call("DELETE", path);
        if (!deleted)
            return deleted.failure();
        return {};
    }
    cli::Result<cli::HttpReply> restarted = server.call("POST", path + "/restart");
    if (!restarted)
        return restarted.failure();
    if (m_owned && !m_connectionKey.empty()) {
        const std::string directory = server.dataDir() + "/kernels";
        ::mkdir(directory.c_str(), 0700);
        std::ofstream out(notePath(server, m_connectionKey), std::ios::trunc);
        out << m_id << '\n';
        if (!out)
            return cli::fail(cli::ExitStatus::Failed, "cannot write the restart note in " + directory);
    }
    return {};
}

} // namespace replhost::kernel
