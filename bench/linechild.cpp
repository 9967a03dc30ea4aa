// SPDX-License-Identifier: Apache-2.0
#include "linechild.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char **environ;

namespace replhost::bench {

bool LineChild::start(const std::vector<std::string> &argv, std::string *error)
{
    int toChild[2], fromChild[2];
    if (pipe2(toChild, O_CLOEXEC) != 0 || pipe2(fromChild, O_CLOEXEC) != 0) {
        *error = "pipe2 failed";
        return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, toChild[0], 0);
    posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1);
    std::vector<char *> args;
    for (const std::string &arg : argv)
        args.push_back(const_cast<char *>(arg.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawn(&m_pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(toChild[0]);
    close(fromChild[1]);
    m_in = toChild[1];
    m_out = fromChild[0];
    if (rc != 0) {
        *error = "cannot start " + argv[0] + ": " + strerror(rc);
        m_pid = -1;
        stop();
        return false;
    }
    return true;
}

void LineChild::stop(int graceMs)
{
    if (m_in >= 0)
        close(m_in);
    m_in = -1;
    if (m_pid > 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(graceMs);
        while (waitpid(m_pid, nullptr, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                kill(m_pid, SIGKILL);
                waitpid(m_pid, nullptr, 0);
                break;
            }
            usleep(10000);
        }
        m_pid = -1;
    }
    if (m_out >= 0)
        close(m_out);
    m_out = -1;
}

bool LineChild::writeAll(const std::string &data)
{
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = write(m_in, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += size_t(n);
    }
    return true;
}

bool LineChild::readLine(std::string *line, int timeoutMs)
{
    for (;;) {
        const size_t eol = m_buffer.find('\n');
        if (eol != std::string::npos) {
            line->assign(m_buffer, 0, eol);
            m_buffer.erase(0, eol + 1);
            return true;
        }
        if (timeoutMs >= 0) {
            pollfd pfd{m_out, POLLIN, 0};
            if (poll(&pfd, 1, timeoutMs) <= 0)
                return false;
        }
        char chunk[4096];
        const ssize_t n = read(m_out, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        m_buffer.append(chunk, size_t(n));
    }
}

} // namespace replhost::bench
