// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace Poco::JSON { class Object; }

namespace replhost::cli {

// replhost-cli's output: bytes straight to file descriptors 1 and 2, unbuffered, so streamed
// output reaches the terminal (or the pipe) the moment it arrives and stdout and stderr keep the
// order in which the run wrote them. Safe to call from any thread (one write(2) loop per call).
class Console {
public:
    static void out(std::string_view text);
    static void err(std::string_view text);
    // A JSON document (the server's, as it came) on stdout, ending with a newline.
    static void json(std::string_view document);
    static void json(const Poco::JSON::Object &document);
    // "replhost-cli: <message>\n" on stderr.
    static void complain(std::string_view message);
};

} // namespace replhost::cli
