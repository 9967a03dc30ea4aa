// SPDX-License-Identifier: Apache-2.0
#include "ssereader.h"

namespace replhost::cli {

std::optional<SseEvent> SseReader::next()
{
    SseEvent event;
    bool hasData = false;
    std::string line;
    while (std::getline(m_in, line)) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.empty()) {
            if (hasData) {
                if (event.type.empty())
                    event.type = "message";
                return event;
            }
            event = SseEvent{};  // a message without data is not dispatched
            continue;
        }
        if (line.front() == ':')
            continue;
        const size_t colon = line.find(':');
        const std::string field = line.substr(0, colon);
        std::string value;
        if (colon != std::string::npos) {
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ')
                value.erase(0, 1);
        }
        if (field == "data") {
            if (hasData)
                event.data += '\n';
            event.data += value;
            hasData = true;
        } else if (field == "event") {
            event.type = value;
        } else if (field == "id") {
            event.id = value;
        }
    }
    return std::nullopt;
}

} // namespace replhost::cli
