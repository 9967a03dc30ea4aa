// SPDX-License-Identifier: Apache-2.0
#include "contexthistory.h"

#include <algorithm>
#include <fnmatch.h>
#include <set>

namespace replhost::kernel {

ContextHistory::ContextHistory(cli::ServerLocator::Overrides overrides, std::string workspace, std::string contextId)
    : m_server(std::move(overrides), std::move(workspace)), m_contextId(std::move(contextId))
{
}

std::vector<ContextHistory::Entry>
ContextHistory::entries(const std::function<bool(const std::vector<Entry> &)> &enough) const
{
    std::vector<Entry> found;
    std::string before;
    while (found.size() < size_t(kMaxEntries) && !enough(found)) {
        std::string path = m_server.scoped("/contexts/" + ServerConnection::encode(m_contextId) + "/executions?limit=500");
        if (!before.empty())
            path += "&before=" + ServerConnection::encode(before);
        const cli::Result<cli::HttpReply> page = m_server.call("GET", path);
        if (!page)
            break;
        const nl::json body = nl::json::parse(page->body, nullptr, false);
        if (!body.is_object())
            break;
        for (const nl::json &execution : body.value("executions", nl::json::array())) {
            if (!execution.is_object() || !execution["code"].is_string())
                continue;
            found.push_back({execution.value("execution_count", 0), execution["code"].get<std::string>(),
                             execution.value("id", "")});
        }
        if (!body.contains("next") || !body["next"].is_string())
            break;
        before = body["next"].get<std::string>();
    }
    return found;
}

nl::json ContextHistory::reply(const std::vector<Entry> &oldestFirst, bool output) const
{
    nl::json history = nl::json::array();
    for (const Entry &entry : oldestFirst) {
        if (!output) {
            history.push_back({0, entry.line, entry.code});
            continue;
        }
        std::string result;
        const cli::Result<cli::HttpReply> execution =
                m_server.call("GET", m_server.scoped("/executions/" + ServerConnection::encode(entry.executionId)));
        if (execution) {
            const nl::json body = nl::json::parse(execution->body, nullptr, false);
            if (body.is_object() && body.contains("result") && body["result"].is_object())
                result = body["result"].value("text/plain", "");
        }
        history.push_back({0, entry.line, {entry.code, result}});
    }
    return {{"status", "ok"}, {"history", history}};
}

nl::json ContextHistory::get_tail_impl(int n, bool, bool output) const
{
    const size_t wanted = size_t(std::max(n, 0));
    std::vector<Entry> newest = entries([&](const std::vector<Entry> &found) { return found.size() >= wanted; });
    newest.resize(std::min(newest.size(), wanted));
    std::reverse(newest.begin(), newest.end());
    return reply(newest, output);
}

nl::json ContextHistory::get_range_impl(int, int start, int stop, bool, bool output) const
{
    std::vector<Entry> all = entries([&](const std::vector<Entry> &found) {
        return !found.empty() && found.back().line < start;
    });
    std::vector<Entry> inRange;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
        if (it->line >= start && it->line < stop)
            inRange.push_back(*it);
    }
    return reply(inRange, output);
}

nl::json ContextHistory::search_impl(const std::string &pattern, bool, bool output, int n, bool unique) const
{
    const std::vector<Entry> all = entries([](const std::vector<Entry> &) { return false; });
    std::vector<Entry> matches;  // newest first
    std::set<std::string> seen;
    for (const Entry &entry : all) {
        if (n > 0 && matches.size() >= size_t(n))
            break;
        if (::fnmatch(pattern.c_str(), entry.code.c_str(), 0) != 0)
            continue;
        if (unique && !seen.insert(entry.code).second)
            continue;
        matches.push_back(entry);
    }
    std::reverse(matches.begin(), matches.end());
    return reply(matches, output);
}

} // namespace replhost::kernel
