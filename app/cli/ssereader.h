// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <istream>
#include <optional>
#include <string>

namespace replhost::cli {

// One Server-Sent Events message.
struct SseEvent {
    std::string id;    // the "id:" field; empty when the message has none
    std::string type;  // the "event:" field; "message" when the message has none
    std::string data;  // the "data:" lines, joined with '\n'
};

// Reads Server-Sent Events from a byte stream as they arrive (the WHATWG framing): lines end in
// "\n" or "\r\n"; a blank line ends a message; "field: value" with one optional space after the
// colon; ":" starts a comment (the server's keep-alives); unknown fields and messages without
// data are skipped.
//
// Does not own the stream. Threading: one thread at a time.
class SseReader {
public:
    explicit SseReader(std::istream &in) : m_in(in) {}

    // Blocks until the next message is complete. Nothing at the end of the stream, or when the
    // stream fails (a lost connection); a message cut off by the end is dropped, never returned
    // half-read.
    std::optional<SseEvent> next();

private:
    std::istream &m_in;
};

} // namespace replhost::cli
