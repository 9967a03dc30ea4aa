// SPDX-License-Identifier: Apache-2.0
#include "serverlauncher.h"

#include "siblingexecutable.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace replhost::cli {

namespace {

// fork, setsid, fork: the server belongs to no terminal and is nobody's child here, so it
// outlives this process and leaves no zombie behind. Returns false when the first fork failed.
bool spawnDetached(const std::string &program, const std::vector<std::string> &arguments, const std::string &log)
{
    const pid_t child = ::fork();
    if (child < 0)
        return false;
    if (child == 0) {
        ::setsid();
        if (::fork() != 0)
            ::_exit(0);
        const int devNull = ::open("/dev/null", O_RDWR);
        const int logFd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        ::dup2(devNull, 0);
        ::dup2(devNull, 1);  // stdout belongs to the MCP client talking to this process
        ::dup2(logFd >= 0 ? logFd : devNull, 2);
        for (int fd = 3; fd < 1024; ++fd)
            ::close(fd);
        std::vector<char *> argv;
        argv.push_back(const_cast<char *>(program.c_str()));
        for (const std::string &argument : arguments)
            argv.push_back(const_cast<char *>(argument.c_str()));
        argv.push_back(nullptr);
        ::execv(program.c_str(), argv.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return true;
}

} // namespace

std::string ServerLauncher::serverExecutable()
{
    return siblingExecutable("replhost-server");
}

Result<ServerEndpoint> ServerLauncher::locateOrStart(const ServerLocator::Overrides &overrides)
{
    Result<ServerEndpoint> found = ServerLocator::locate(overrides);
    const char *urlFromEnvironment = std::getenv("REPLHOST_URL");
    if (found || found.failure().status != ExitStatus::Unreachable || !overrides.url.empty()
        || (urlFromEnvironment && *urlFromEnvironment))
        return found;

    const std::string server = serverExecutable();
    if (server.empty())
        return fail(ExitStatus::Unreachable,
                    found.failure().message + "; and no replhost-server was found beside this program or on "
                                              "PATH to start one");
    const std::string dataDir = ServerLocator::dataDir(overrides.dataDir);
    // The server makes its data dir the same way; the log needs it first.
    for (size_t slash = dataDir.find('/', 1); ; slash = dataDir.find('/', slash + 1)) {
        ::mkdir(dataDir.substr(0, slash).c_str(), slash == std::string::npos ? 0700 : 0755);
        if (slash == std::string::npos)
            break;
    }
    const std::string log = dataDir + "/server.log";
    if (!spawnDetached(server, {"--data-dir", dataDir, "--port", "0"}, log))
        return fail(ExitStatus::Unreachable, "cannot start " + server + ": fork failed");

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kStartTimeoutSeconds);
    while (std::chrono::steady_clock::now() < deadline) {
        ServerLocator::Overrides forDataDir = overrides;
        forDataDir.dataDir = dataDir;
        Result<ServerEndpoint> started = ServerLocator::locate(forDataDir);
        if (started)
            return started;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return fail(ExitStatus::Unreachable, "started " + server + " for " + dataDir + ", but it did not come up within "
                                             + std::to_string(kStartTimeoutSeconds) + " s; see " + log);
}

} // namespace replhost::cli
