// SPDX-License-Identifier: Apache-2.0
#include "serverlocator.h"

#include <Poco/Exception.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/Path.h>
#include <Poco/URI.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <signal.h>

namespace replhost::cli {

namespace {

std::string environment(const char *name)
{
    const char *value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

std::string joinPath(const std::string &directory, const std::string &name)
{
    return Poco::Path(directory).append(Poco::Path(name)).toString();
}

enum class FileState { Read, Missing, Unreadable };

FileState readFile(const std::string &path, std::string *content)
{
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return errno == ENOENT ? FileState::Missing : FileState::Unreadable;
    std::ostringstream text;
    text << file.rdbuf();
    *content = text.str();
    return FileState::Read;
}

std::string trimmed(const std::string &text)
{
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// Whether process `pid` exists. EPERM: it exists but belongs to someone else.
bool processExists(long pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

Result<std::string> urlFromFile(const std::string &dataDir)
{
    const std::string path = joinPath(dataDir, ServerLocator::kUrlFileName);
    std::string content;
    switch (readFile(path, &content)) {
    case FileState::Missing:
        return fail(ExitStatus::Unreachable,
                    "no running replhost-server found: " + path + " does not exist. Start "
                    "replhost-server (it writes that file while it runs), or pass --url or "
                    "--data-dir, or set REPLHOST_URL");
    case FileState::Unreadable:
        return fail(ExitStatus::Unreachable, "cannot read " + path);
    case FileState::Read:
        break;
    }

    std::string url;
    long pid = 0;
    try {
        const Poco::JSON::Object::Ptr object =
                Poco::JSON::Parser().parse(content).extract<Poco::JSON::Object::Ptr>();
        url = object->getValue<std::string>("url");
        pid = object->getValue<long>("pid");
    } catch (const std::exception &) {  // Poco's exceptions too: malformed JSON, missing fields
        return fail(ExitStatus::Unreachable,
                    path + " is not a server URL file ({\"url\": ..., \"pid\": ...}); delete it "
                           "and start replhost-server again");
    }
    if (!processExists(pid)) {
        return fail(ExitStatus::Unreachable,
                    "stale server URL file " + path + ": it names process " + std::to_string(pid)
                            + ", which is not running (the server did not exit cleanly). Start "
                              "replhost-server again, or delete the file");
    }
    return ServerLocator::checkUrl(url, path);
}

} // namespace

std::string ServerLocator::dataDir(const std::string &overrideDir)
{
    std::string directory = overrideDir;
    if (directory.empty())
        directory = environment("REPLHOST_DATA_DIR");
    if (directory.empty()) {
        std::string xdg = environment("XDG_DATA_HOME");
        if (xdg.empty())
            xdg = joinPath(environment("HOME"), ".local/share");
        directory = joinPath(xdg, "replhost");
    }
    return Poco::Path(directory).makeAbsolute().toString();
}

Result<std::string> ServerLocator::checkUrl(const std::string &url, const std::string &source)
{
    Poco::URI uri;
    try {
        uri = Poco::URI(url);
    } catch (const Poco::Exception &) {
        return fail(ExitStatus::Usage, "the URL from " + source + " is malformed: '" + url + "'");
    }
    if (uri.getScheme() != "http" || uri.getHost().empty()) {
        return fail(ExitStatus::Usage, "the URL from " + source + " must look like "
                                       "http://127.0.0.1:49999, not '" + url + "'");
    }
    if (!uri.getQuery().empty() || !uri.getFragment().empty())
        return fail(ExitStatus::Usage, "the URL from " + source + " must not have a query or fragment");
    std::string text = url;
    while (!text.empty() && text.back() == '/')
        text.pop_back();
    return text;
}

Result<ServerEndpoint> ServerLocator::locate(const Overrides &overrides)
{
    ServerEndpoint endpoint;
    const std::string directory = dataDir(overrides.dataDir);

    Result<std::string> url = std::string();
    if (!overrides.url.empty()) {
        endpoint.urlSource = "--url";
        url = checkUrl(overrides.url, endpoint.urlSource);
    } else if (const std::string fromEnvironment = environment("REPLHOST_URL"); !fromEnvironment.empty()) {
        endpoint.urlSource = "REPLHOST_URL";
        url = checkUrl(fromEnvironment, endpoint.urlSource);
    } else {
        endpoint.urlSource = joinPath(directory, kUrlFileName);
        url = urlFromFile(directory);
    }
    if (!url)
        return url.failure();
    endpoint.url = *url;

    if (!overrides.token.empty()) {
        endpoint.token = overrides.token;
        endpoint.tokenSource = "--token";
    } else if (const std::string fromEnvironment = environment("REPLHOST_TOKEN"); !fromEnvironment.empty()) {
        endpoint.token = fromEnvironment;
        endpoint.tokenSource = "REPLHOST_TOKEN";
    } else {
        endpoint.tokenSource = joinPath(directory, kTokenFileName);
        std::string content;
        const FileState state = readFile(endpoint.tokenSource, &content);
        if (state == FileState::Unreadable)
            return fail(ExitStatus::Unauthorized, "cannot read the token file " + endpoint.tokenSource
                                                          + "; pass --token or set REPLHOST_TOKEN");
        endpoint.token = trimmed(content);
        if (endpoint.token.empty())
            return fail(ExitStatus::Unauthorized, "no token: " + endpoint.tokenSource
                                                          + " is missing or empty; pass --token or "
                                                            "set REPLHOST_TOKEN");
    }
    // The token travels in a header: a line break in it would split the request.
    if (endpoint.token.find_first_of("\r\n ") != std::string::npos)
        return fail(ExitStatus::Unauthorized, "the token from " + endpoint.tokenSource
                                                      + " contains spaces or line breaks");
    return endpoint;
}

} // namespace replhost::cli
