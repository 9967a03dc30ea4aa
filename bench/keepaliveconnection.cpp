// SPDX-License-Identifier: Apache-2.0
#include "keepaliveconnection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace replhost::bench {

KeepAliveConnection::~KeepAliveConnection()
{
    close();
}

bool KeepAliveConnection::open(uint16_t port)
{
    close();
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (m_fd < 0) {
        m_error = std::string("socket: ") + std::strerror(errno);
        return false;
    }
    const int one = 1;
    setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(m_fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        m_error = "connect to 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
        close();
        return false;
    }
    return true;
}

void KeepAliveConnection::close()
{
    if (m_fd >= 0)
        ::close(m_fd);
    m_fd = -1;
}

bool KeepAliveConnection::setNonBlocking(bool nonBlocking)
{
    const int flags = fcntl(m_fd, F_GETFL);
    return flags >= 0
            && fcntl(m_fd, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) == 0;
}

bool KeepAliveConnection::send(const std::string &bytes)
{
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(m_fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += size_t(n);
        } else if (n < 0 && errno == EAGAIN) {
            pollfd pfd{m_fd, POLLOUT, 0};
            poll(&pfd, 1, -1);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            m_error = std::string("send: ") + std::strerror(errno);
            return false;
        }
    }
    return true;
}

bool KeepAliveConnection::feed(HttpResponseReader &reader, const char *data, size_t size)
{
    const size_t used = reader.feed(data, size);
    if (reader.failed()) {
        m_error = "bad response: " + reader.error();
        return false;
    }
    if (used < size) {
        // Requests are never pipelined here, so nothing may follow a response.
        m_error = "unexpected bytes after a response";
        return false;
    }
    return true;
}

bool KeepAliveConnection::read(HttpResponseReader &reader, bool wait)
{
    while (!reader.isComplete()) {
        const ssize_t n = ::recv(m_fd, m_buffer, sizeof m_buffer, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN && !wait)
            return true;
        if (n <= 0) {
            m_error = n == 0 ? "the server closed the connection"
                             : std::string("recv: ") + std::strerror(errno);
            return false;
        }
        if (!feed(reader, m_buffer, size_t(n)))
            return false;
    }
    return true;
}

bool KeepAliveConnection::roundTrip(const std::string &request, HttpResponseReader &reader)
{
    reader.reset();
    return send(request) && receive(reader);
}

std::string KeepAliveConnection::request(const std::string &method, const std::string &target,
                                         uint16_t port, const std::string &token,
                                         const std::string &jsonBody)
{
    std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port)
            + "\r\nAuthorization: Bearer " + token + "\r\n";
    if (!jsonBody.empty() || method == "POST" || method == "PATCH")
        text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(jsonBody.size())
                + "\r\n";
    text += "\r\n";
    text += jsonBody;
    return text;
}

} // namespace replhost::bench
