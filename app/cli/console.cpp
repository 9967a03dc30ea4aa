// SPDX-License-Identifier: Apache-2.0
#include "console.h"

#include <Poco/JSON/Object.h>

#include <cerrno>
#include <sstream>
#include <string>

#include <unistd.h>

namespace replhost::cli {

namespace {

void writeAll(int fd, std::string_view text)
{
    while (!text.empty()) {
        const ssize_t written = ::write(fd, text.data(), text.size());
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return;  // a closed terminal or pipe: nobody is reading any more
        text.remove_prefix(size_t(written));
    }
}

} // namespace

void Console::out(std::string_view text)
{
    writeAll(STDOUT_FILENO, text);
}

void Console::err(std::string_view text)
{
    writeAll(STDERR_FILENO, text);
}

void Console::json(std::string_view document)
{
    writeAll(STDOUT_FILENO, document);
    if (document.empty() || document.back() != '\n')
        writeAll(STDOUT_FILENO, "\n");
}

void Console::json(const Poco::JSON::Object &document)
{
    std::ostringstream text;
    document.stringify(text);
    json(text.str());
}

void Console::complain(std::string_view message)
{
    std::string line = "replhost-cli: ";
    line += message;
    line += '\n';
    writeAll(STDERR_FILENO, line);
}

} // namespace replhost::cli
