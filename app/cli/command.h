// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "apiclient.h"
#include "commandline.h"

namespace replhost::cli {

// One command of replhost-cli ("run", "contexts", ...): checks its part of the command line, talks
// to the server through the client and prints what it got. Failures come back as values and are
// printed once, by main(); nothing is printed to stdout for a failure.
//
// Borrows the command line and the client, which outlive it. Threading: the main thread.
class Command {
public:
    Command(const CommandLine &line, ApiClient &client) : m_line(line), m_client(client) {}
    virtual ~Command() = default;
    Command(const Command &) = delete;
    Command &operator=(const Command &) = delete;

    // What the command did, as the process's exit status; or why it could not.
    virtual Result<ExitStatus> execute() = 0;

protected:
    const CommandLine &m_line;
    ApiClient &m_client;
};

} // namespace replhost::cli
