// SPDX-License-Identifier: Apache-2.0
// replhost-cli: a terminal client of replhost-server's native HTTP API, built on Poco::Net (no Qt).

#include "apiclient.h"
#include "commandline.h"
#include "console.h"
#include "contextscommand.h"
#include "envcommand.h"
#include "filescommand.h"
#include "helptext.h"
#include "historycommand.h"
#include "kernelspeccommand.h"
#include "mcprelay.h"
#include "pluginscommand.h"
#include "runcommand.h"
#include "serverlauncher.h"
#include "serverlocator.h"
#include "workspacescommand.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace replhost::cli;

namespace {

std::unique_ptr<Command> commandFor(const CommandLine &line, ApiClient &client)
{
    if (line.command == "run")
        return std::make_unique<RunCommand>(line, client);
    if (line.command == "contexts")
        return std::make_unique<ContextsCommand>(line, client);
    if (line.command == "env")
        return std::make_unique<EnvCommand>(line, client);
    if (line.command == "files")
        return std::make_unique<FilesCommand>(line, client);
    if (line.command == "history")
        return std::make_unique<HistoryCommand>(line, client);
    if (line.command == "kernelspec")
        return std::make_unique<KernelspecCommand>(line, client);
    if (line.command == "plugins" || line.command == "languages")
        return std::make_unique<PluginsCommand>(line, client);
    return std::make_unique<WorkspacesCommand>(line, client);
}

int finish(const Result<ExitStatus> &result)
{
    if (result)
        return toExitCode(*result);
    Console::complain(result.failure().message);
    return toExitCode(result.failure().status);
}

} // namespace

int main(int argc, char *argv[])
{
    const std::vector<std::string> arguments(argv + 1, argv + argc);
    const Result<CommandLine> line = CommandLine::parse(arguments);
    if (!line) {
        if (arguments.empty())
            Console::err(HelpText::overview());
        return finish(line.failure());
    }
    if (line->help) {
        Console::out(HelpText::forCommand(line->command));
        return toExitCode(ExitStatus::Ok);
    }
    if (line->version) {
        Console::out("replhost-cli " REPLHOST_VERSION "\n");
        return toExitCode(ExitStatus::Ok);
    }

    if (line->command == "mcp") {
        // stdout is the protocol's from here on: every failure goes to stderr.
        const Result<ServerEndpoint> endpoint =
                ServerLauncher::locateOrStart(ServerLocator::Overrides{line->url, line->token, line->dataDir});
        if (!endpoint)
            return finish(endpoint.failure());
        return McpRelay(*endpoint, std::cin, std::cout, line->workspace).run();
    }

    // The server is looked for on the first request, after the command has checked its words.
    ApiClient client(ServerLocator::Overrides{line->url, line->token, line->dataDir}, line->workspace);
    return finish(commandFor(*line, client)->execute());
}
