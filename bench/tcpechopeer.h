// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace replhost::bench {

// The transport of an HTTP round trip and nothing else: a child process that listens on
// 127.0.0.1, takes one connection, and answers every `requestSize` bytes it reads with `answer`
// in one write(), without looking at what it read. A KeepAliveConnection round trip against it
// is what loopback TCP and two context switches cost on this machine, the floor under what an
// HTTP server adds to a run.
//
// Errors: start() returns false with error() saying why. The child is killed and reaped by stop()
// or the destructor. Threading: one thread at a time.
class TcpEchoPeer {
public:
    TcpEchoPeer() = default;
    ~TcpEchoPeer();
    TcpEchoPeer(const TcpEchoPeer &) = delete;
    TcpEchoPeer &operator=(const TcpEchoPeer &) = delete;

    bool start(size_t requestSize, std::string answer);
    void stop();

    uint16_t port() const { return m_port; }
    pid_t pid() const { return m_pid; }
    const std::string &error() const { return m_error; }

private:
    pid_t m_pid = 0;
    uint16_t m_port = 0;
    std::string m_error;
};

} // namespace replhost::bench
