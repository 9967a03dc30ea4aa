// SPDX-License-Identifier: Apache-2.0
#include "tcpechopeer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace replhost::bench {

namespace {

// The child's whole life: only system calls, as a fork of a threaded process may make.
[[noreturn]] void serve(int listener, size_t requestSize, const std::string &answer)
{
    const int connection = ::accept(listener, nullptr, nullptr);
    if (connection < 0)
        ::_exit(1);
    const int one = 1;
    ::setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buffer[64 * 1024];
    size_t pending = 0;
    for (;;) {
        const ssize_t n = ::read(connection, buffer, sizeof buffer);
        if (n <= 0)
            ::_exit(0);
        pending += size_t(n);
        while (pending >= requestSize) {
            pending -= requestSize;
            if (::write(connection, answer.data(), answer.size()) != ssize_t(answer.size()))
                ::_exit(1);
        }
    }
}

} // namespace

TcpEchoPeer::~TcpEchoPeer()
{
    stop();
}

bool TcpEchoPeer::start(size_t requestSize, std::string answer)
{
    stop();
    if (requestSize == 0) {
        m_error = "the request size must not be 0";
        return false;
    }
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0
        || ::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) != 0
        || ::listen(listener, 1) != 0) {
        m_error = std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
        if (listener >= 0)
            ::close(listener);
        return false;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        m_error = std::string("fork: ") + std::strerror(errno);
        ::close(listener);
        return false;
    }
    if (pid == 0)
        serve(listener, requestSize, answer);
    ::close(listener);
    m_pid = pid;
    m_port = ntohs(address.sin_port);
    return true;
}

void TcpEchoPeer::stop()
{
    if (m_pid <= 0)
        return;
    ::kill(m_pid, SIGKILL);
    while (::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    m_pid = 0;
    m_port = 0;
}

} // namespace replhost::bench
