// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace replhost::bench {

// An incremental HTTP/1.1 response parser for the benchmarks' own client: status line, header
// fields, and a body framed by Content-Length or chunked transfer coding (or none: 204).
// Deliberately small, so the client costs little next to the server it measures: no copies of
// body bytes when a sink is set, no allocation per chunk.
//
// Feed it what the socket returns; it stops at the end of one response and says how much it
// used, so bytes of a following response are left to the caller.
//
// Errors: failed() and error() for a response it cannot frame. Threading: a value.
class HttpResponseReader {
public:
    using BodySink = std::function<void(const char *data, size_t size)>;

    // Ready for the next response; keeps the sink.
    void reset();
    // Body bytes go to `sink` as they arrive instead of into body() (for streams of any size).
    void setBodySink(BodySink sink) { m_sink = std::move(sink); }

    // Consumes bytes of the current response and returns how many it used (fewer than `size`
    // once the response is complete or has failed).
    size_t feed(const char *data, size_t size);

    bool isComplete() const { return m_state == State::Done; }
    bool failed() const { return m_state == State::Failed; }
    const std::string &error() const { return m_error; }

    int status() const { return m_status; }
    // The value of the first header field named `lowerCaseName`, or empty.
    std::string header(const std::string &lowerCaseName) const;
    const std::string &body() const { return m_body; }
    size_t bodyBytes() const { return m_bodyBytes; }

private:
    enum class State { Head, FixedBody, ChunkSize, ChunkData, ChunkDataEnd, Trailer, Done, Failed };

    bool parseHead();
    void deliver(const char *data, size_t size);
    size_t fail(const std::string &why);

    State m_state = State::Head;
    std::string m_head;   // status line and header fields, lower-cased names
    std::string m_line;   // a chunk-size or trailer line being read
    std::string m_body;
    std::string m_error;
    BodySink m_sink;
    size_t m_remaining = 0;  // of the fixed body or of the current chunk
    size_t m_bodyBytes = 0;
    int m_status = 0;
};

} // namespace replhost::bench
