// SPDX-License-Identifier: Apache-2.0
// replhost-kernel: a Jupyter kernel (protocol 5.3, on xeus 2.4) whose cells run in a replhost
// context, through the local replhost-server's HTTP API.

#include "contexthistory.h"
#include "contextlease.h"
#include "kernelserver.h"
#include "parentwatch.h"
#include "replhostinterpreter.h"
#include "serverconnection.h"

#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <zmq.hpp>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace replhost;

namespace {

constexpr const char *kUsage =
        "usage: replhost-kernel -f CONNECTION_FILE (--language LANGUAGE | --context ID)\n"
        "                       [--workspace NAME] [--data-dir DIR] [--url URL] [--token TOKEN]\n"
        "\n"
        "A Jupyter kernel whose cells run in a replhost context. Jupyter starts it from a kernelspec\n"
        "(replhost-cli kernelspec install). It uses the replhost-server of the data dir, and starts one\n"
        "in the background when none runs.\n"
        "\n"
        "  -f FILE           the connection file Jupyter writes\n"
        "  --language ID     create a context of this language (named after the notebook when the\n"
        "                    frontend says, JPY_SESSION_NAME); shutdown deletes it\n"
        "  --context ID      run in this existing context instead; shutdown leaves it and its state\n"
        "  --workspace NAME  the workspace of the context (default: the default workspace)\n"
        "  --data-dir DIR, --url URL, --token TOKEN   as for replhost-cli\n";

int usageError(const std::string &message)
{
    std::cerr << "replhost-kernel: " << message << "\n\n" << kUsage;
    return 2;
}

} // namespace

int main(int argc, char *argv[])
{
    static const std::vector<std::string> valued = {"-f", "--language", "--context", "--workspace", "--data-dir",
                                                    "--url", "--token"};
    std::map<std::string, std::string> options;
    for (int i = 1; i < argc; ++i) {
        std::string word = argv[i];
        if (word == "--help" || word == "-h") {
            std::cout << kUsage;
            return 0;
        }
        if (word == "--version") {
            std::cout << "replhost-kernel " REPLHOST_VERSION "\n";
            return 0;
        }
        std::string value;
        const size_t equals = word.find('=');
        if (word.rfind("--", 0) == 0 && equals != std::string::npos) {
            value = word.substr(equals + 1);
            word = word.substr(0, equals);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return usageError(word + " needs a value");
        }
        if (std::find(valued.begin(), valued.end(), word) == valued.end())
            return usageError("unknown option " + word);
        if (options.count(word))
            return usageError(word + " was given twice");
        options[word] = value;
    }
    if (!options.count("-f"))
        return usageError("-f CONNECTION_FILE is missing");
    if (options.count("--language") == options.count("--context"))
        return usageError("give either --language or --context");

    xeus::xconfiguration config;
    try {
        config = xeus::load_configuration(options["-f"]);
    } catch (const std::exception &e) {
        std::cerr << "replhost-kernel: cannot read the connection file " << options["-f"] << ": " << e.what() << std::endl;
        return 1;
    }

    const cli::ServerLocator::Overrides overrides{options["--url"], options["--token"], options["--data-dir"]};
    const std::string workspace = options["--workspace"];
    kernel::ServerConnection server(overrides, workspace);
    if (const cli::Result<void> connected = server.connect(); !connected) {
        std::cerr << "replhost-kernel: " << connected.failure().message << std::endl;
        return 1;
    }
    const char *sessionName = std::getenv("JPY_SESSION_NAME");
    cli::Result<kernel::ContextLease> lease = kernel::ContextLease::acquire(
            server, {options["--language"], options["--context"], sessionName ? sessionName : "", config.m_key});
    if (!lease) {
        std::cerr << "replhost-kernel: " << lease.failure().message << std::endl;
        return 1;
    }

    const std::string contextId = lease->id();
    auto interpreter = std::make_unique<kernel::ReplhostInterpreter>(overrides, workspace, std::move(*lease));
    kernel::ReplhostInterpreter *interpreterView = interpreter.get();
    auto history = std::make_unique<kernel::ContextHistory>(overrides, workspace, contextId);

    xeus::xkernel jupyterKernel(config, xeus::get_user_name(), xeus::make_context<zmq::context_t>(),
                                std::move(interpreter), &kernel::KernelServer::make, std::move(history));
    static_cast<kernel::KernelServer &>(jupyterKernel.get_server()).setInterpreter(interpreterView);
    // A frontend that died sent no shutdown_request: its kernel ends as a shutdown would.
    const kernel::ParentWatch parentWatch([&overrides, &workspace, interpreterView] {
        std::cerr << "replhost-kernel: the process that started this kernel is gone; shutting down" << std::endl;
        kernel::ServerConnection own(overrides, workspace);
        if (const cli::Result<void> released = interpreterView->lease().release(own, false); !released)
            std::cerr << "replhost-kernel: " << released.failure().message << std::endl;
        std::_Exit(0);
    });
    jupyterKernel.start();
    return 0;
}
