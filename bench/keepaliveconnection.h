// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "httpresponsereader.h"

#include <cstdint>
#include <string>

namespace replhost::bench {

// One persistent HTTP/1.1 connection to 127.0.0.1 on a plain POSIX socket, with TCP_NODELAY:
// a request is one write(), and its answer is read with as few read()s as it arrives in. Kept
// lean on purpose, so that in a round trip the client costs a few µs, not the server's share.
//
// Errors: false, with error() saying why. Threading: one thread at a time.
class KeepAliveConnection {
public:
    KeepAliveConnection() = default;
    ~KeepAliveConnection();
    KeepAliveConnection(const KeepAliveConnection &) = delete;
    KeepAliveConnection &operator=(const KeepAliveConnection &) = delete;

    bool open(uint16_t port);
    void close();
    int fd() const { return m_fd; }
    const std::string &error() const { return m_error; }

    // For an event loop: reads then return what is there instead of waiting.
    bool setNonBlocking(bool nonBlocking);

    // Writes all of `bytes` (waits while the socket is full, also when non-blocking).
    bool send(const std::string &bytes);

    // Blocking: reads until `reader` holds one complete response.
    bool receive(HttpResponseReader &reader) { return read(reader, true); }

    // Non-blocking: feeds `reader` whatever has arrived. False when the peer closed the
    // connection or a read failed; a complete response shows in reader.isComplete().
    bool receiveAvailable(HttpResponseReader &reader) { return read(reader, false); }

    // One request and its complete response (blocking).
    bool roundTrip(const std::string &request, HttpResponseReader &reader);

    // A request with Host, bearer token and, for a body, Content-Type and Content-Length.
    static std::string request(const std::string &method, const std::string &target,
                               uint16_t port, const std::string &token,
                               const std::string &jsonBody = {});

private:
    bool read(HttpResponseReader &reader, bool wait);
    bool feed(HttpResponseReader &reader, const char *data, size_t size);

    int m_fd = -1;
    std::string m_error;
    char m_buffer[256 * 1024];
};

} // namespace replhost::bench
