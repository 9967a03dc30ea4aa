// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "result.h"

#include <Poco/JSON/Object.h>

#include <map>
#include <string>
#include <vector>

namespace replhost::cli {

// replhost-cli's command line, parsed and checked against the table of commands and options.
//
// Shape: replhost-cli [global options] COMMAND [ACTION] [options] [arguments]. Global options may
// also follow the command. Options take their value as the next word or after '=' (--limit=5);
// "--" ends the options; a lone "-" is an argument (standard input or output). Unknown commands
// and options, a missing option value and a repeated single-valued option are usage failures.
// Values are not interpreted here (numbers, KEY=VALUE): each command checks its own.
class CommandLine {
public:
    // Every command and its actions; empty for commands without actions.
    static const std::map<std::string, std::vector<std::string>> &commands();

    static Result<CommandLine> parse(const std::vector<std::string> &arguments);

    // Global options.
    std::string url;        // --url
    std::string token;      // --token
    std::string dataDir;    // --data-dir
    std::string workspace;  // --workspace, -w; empty: the default workspace
    bool json = false;      // --json
    bool help = false;      // --help, -h
    bool version = false;   // --version

    std::string command;    // "run", "contexts", ... (empty only with --help or --version)
    std::string action;     // "ls", "new", ... for commands that have actions
    std::vector<std::string> arguments;  // the words after the command and action

    // Command options, by long name ("language" for --language and -l).
    bool has(const std::string &name) const { return m_options.count(name) != 0; }
    // The option's value, or `fallback` when it was not given.
    std::string value(const std::string &name, const std::string &fallback = {}) const;
    std::vector<std::string> values(const std::string &name) const;

    // KEY=VALUE words split at the first '=' (the value may be empty, the key may not), as a JSON
    // object of strings; a word without '=' is a usage failure naming `what` ("--env").
    Result<Poco::JSON::Object> assignments(const std::vector<std::string> &words, const std::string &what) const;

    // "run", "contexts new", ...: how the user names the command in messages.
    std::string commandName() const;

    // A usage failure that points to the command's help.
    Failure usageError(const std::string &message) const;

private:
    std::map<std::string, std::vector<std::string>> m_options;
};

} // namespace replhost::cli
