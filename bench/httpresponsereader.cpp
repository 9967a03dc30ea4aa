// SPDX-License-Identifier: Apache-2.0
#include "httpresponsereader.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace replhost::bench {

namespace {

constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxLine = 4096;

} // namespace

void HttpResponseReader::reset()
{
    m_state = State::Head;
    m_head.clear();
    m_line.clear();
    m_body.clear();
    m_error.clear();
    m_remaining = 0;
    m_bodyBytes = 0;
    m_status = 0;
}

size_t HttpResponseReader::fail(const std::string &why)
{
    m_state = State::Failed;
    m_error = why;
    return 0;
}

void HttpResponseReader::deliver(const char *data, size_t size)
{
    m_bodyBytes += size;
    if (m_sink)
        m_sink(data, size);
    else
        m_body.append(data, size);
}

std::string HttpResponseReader::header(const std::string &lowerCaseName) const
{
    const std::string key = "\r\n" + lowerCaseName + ":";
    size_t at = 0;
    // Names were lower-cased in parseHead(); values keep their case.
    while ((at = m_head.find(key, at)) != std::string::npos) {
        size_t begin = at + key.size();
        const size_t end = m_head.find("\r\n", begin);
        while (begin < end && (m_head[begin] == ' ' || m_head[begin] == '\t'))
            ++begin;
        return m_head.substr(begin, end - begin);
    }
    return {};
}

bool HttpResponseReader::parseHead()
{
    // "HTTP/1.1 200 OK"
    if (m_head.compare(0, 7, "HTTP/1.") != 0 || m_head.size() < 12) {
        fail("not an HTTP/1.x status line");
        return false;
    }
    m_status = std::atoi(m_head.c_str() + 9);
    // Lower-case the field names (up to each colon), so header() can search for them.
    for (size_t line = m_head.find("\r\n"); line != std::string::npos;
         line = m_head.find("\r\n", line + 2)) {
        for (size_t i = line + 2; i < m_head.size() && m_head[i] != ':' && m_head[i] != '\r'; ++i)
            m_head[i] = char(std::tolower(static_cast<unsigned char>(m_head[i])));
    }
    std::string coding = header("transfer-encoding");
    std::transform(coding.begin(), coding.end(), coding.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (coding == "chunked") {
        m_state = State::ChunkSize;
        return true;
    }
    if (!coding.empty()) {
        fail("unsupported transfer coding " + coding);
        return false;
    }
    const std::string length = header("content-length");
    m_remaining = length.empty() ? 0 : size_t(std::strtoull(length.c_str(), nullptr, 10));
    m_state = m_remaining > 0 ? State::FixedBody : State::Done;
    return true;
}

size_t HttpResponseReader::feed(const char *data, size_t size)
{
    size_t used = 0;
    while (used < size) {
        const char *at = data + used;
        const size_t left = size - used;
        switch (m_state) {
        case State::Head: {
            // The end of the head may straddle two reads: search from 3 bytes back.
            const size_t from = m_head.size() >= 3 ? m_head.size() - 3 : 0;
            m_head.append(at, left);
            const size_t end = m_head.find("\r\n\r\n", from);
            if (end == std::string::npos) {
                if (m_head.size() > kMaxHead)
                    return fail("response head over 64 KiB");
                return used + left;
            }
            const size_t headBytesHere = end + 4 - (m_head.size() - left);
            m_head.resize(end + 2);  // keep the last field's CRLF for header()
            used += headBytesHere;
            if (!parseHead())
                return used;
            break;
        }
        case State::FixedBody: {
            const size_t n = std::min(left, m_remaining);
            deliver(at, n);
            used += n;
            m_remaining -= n;
            if (m_remaining == 0)
                m_state = State::Done;
            break;
        }
        case State::ChunkSize:
        case State::Trailer: {
            const char *eol = static_cast<const char *>(std::memchr(at, '\n', left));
            const size_t n = eol ? size_t(eol - at) + 1 : left;
            m_line.append(at, n);
            used += n;
            if (m_line.size() > kMaxLine)
                return fail("chunk line over 4 KiB");
            if (!eol)
                break;
            if (m_state == State::Trailer) {
                const bool last = m_line == "\r\n" || m_line == "\n";
                m_line.clear();
                if (last)
                    m_state = State::Done;
                break;
            }
            char *end = nullptr;
            m_remaining = size_t(std::strtoull(m_line.c_str(), &end, 16));
            if (end == m_line.c_str())
                return fail("bad chunk size line");
            m_line.clear();
            m_state = m_remaining == 0 ? State::Trailer : State::ChunkData;
            break;
        }
        case State::ChunkData: {
            const size_t n = std::min(left, m_remaining);
            deliver(at, n);
            used += n;
            m_remaining -= n;
            if (m_remaining == 0) {
                m_state = State::ChunkDataEnd;
                m_remaining = 2;  // CRLF
            }
            break;
        }
        case State::ChunkDataEnd: {
            const size_t n = std::min(left, m_remaining);
            used += n;
            m_remaining -= n;
            if (m_remaining == 0)
                m_state = State::ChunkSize;
            break;
        }
        case State::Done:
        case State::Failed:
            return used;
        }
        if (m_state == State::Done || m_state == State::Failed)
            return used;
    }
    return used;
}

} // namespace replhost::bench
