// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace replhost::cli {

// replhost-cli's --help texts (docs/cli.md is the longer reference).
class HelpText {
public:
    // The overview: commands, global options, discovery, exit statuses.
    static std::string overview();
    // The help of one command ("run", "contexts", "env", ...); the overview for anything else.
    static std::string forCommand(const std::string &command);
};

} // namespace replhost::cli
