// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace replhost::bench {

// A child process with a pipe to its stdin and one from its stdout, exchanging lines. It runs
// in the host's CPU set (inherited) until it is pinned elsewhere, with this process's
// environment. Threading: one thread.
class LineChild {
public:
    LineChild() = default;
    ~LineChild() { stop(); }
    LineChild(const LineChild &) = delete;
    LineChild &operator=(const LineChild &) = delete;

    bool start(const std::vector<std::string> &argv, std::string *error);
    // Closing its stdin asks the child to finish; it gets `graceMs`, then SIGKILL.
    void stop(int graceMs = 20000);

    pid_t pid() const { return m_pid; }

    bool writeAll(const std::string &data);
    // Reads one line (without the newline). `timeoutMs` < 0 blocks without poll(), as the
    // timed loops must: one read() per reply, like the baseline's client.
    bool readLine(std::string *line, int timeoutMs = -1);

private:
    pid_t m_pid = -1;
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
};

} // namespace replhost::bench
