// SPDX-License-Identifier: Apache-2.0
#include "historycommand.h"

#include "console.h"
#include "texttable.h"

#include <Poco/JSON/Array.h>
#include <Poco/NumberParser.h>

namespace replhost::cli {

namespace {

constexpr size_t kCodeColumnWidth = 60;

// The first line of the code, cut to the column; "…" says something was left out.
std::string codeSummary(const std::string &code)
{
    const size_t lineEnd = code.find('\n');
    std::string line = code.substr(0, lineEnd);
    bool cut = lineEnd != std::string::npos && lineEnd + 1 < code.size();
    size_t characters = 0;
    for (size_t i = 0; i < line.size(); ++i) {
        if ((line[i] & 0xC0) == 0x80)
            continue;
        if (++characters > kCodeColumnWidth) {
            line.resize(i);
            cut = true;
            break;
        }
    }
    return cut ? line + "…" : line;
}

} // namespace

Result<std::string> HistoryCommand::contextId()
{
    if (m_line.has("context") && m_line.has("language"))
        return m_line.usageError("use --context ID or -l LANGUAGE, not both");
    if (m_line.has("context"))
        return m_line.value("context");
    if (!m_line.has("language"))
        return m_line.usageError("say whose history: --context ID, or -l LANGUAGE for that language's default context");
    const std::string language = m_line.value("language");
    Result<HttpReply> reply = m_client.call("GET", m_client.scoped("/contexts?language=" + ApiClient::encode(language)));
    if (!reply)
        return reply.failure();
    const Poco::JSON::Array::Ptr contexts = reply->array();
    const Poco::JSON::Object::Ptr oldest = contexts && contexts->size() > 0 ? contexts->getObject(0) : nullptr;
    if (!oldest)
        return fail(ExitStatus::Refused, "no " + language + " context in this workspace yet, so no history");
    return oldest->optValue<std::string>("id", "");
}

Result<ExitStatus> HistoryCommand::execute()
{
    if (!m_line.arguments.empty())
        return m_line.usageError("unexpected argument '" + m_line.arguments.front() + "'");
    unsigned limit = 0;
    if (m_line.has("limit") && (!Poco::NumberParser::tryParseUnsigned(m_line.value("limit"), limit) || limit == 0))
        return m_line.usageError("--limit takes a whole number of runs from 1");
    if (m_line.has("all") && m_line.has("before"))
        return m_line.usageError("--all starts at the newest run; leave out --before");
    Result<std::string> id = contextId();
    if (!id)
        return id.failure();

    const std::string base = m_client.scoped("/contexts/" + ApiClient::encode(*id) + "/executions");
    std::string cursor = m_line.value("before");
    Poco::JSON::Array all;
    TextTable table({"SEQ", "STATUS", "STARTED", "MS", "CODE"});
    for (;;) {
        std::string query;
        if (limit > 0)
            query += "&limit=" + std::to_string(limit);
        if (!cursor.empty())
            query += "&before=" + ApiClient::encode(cursor);
        Result<HttpReply> reply = m_client.call("GET", query.empty() ? base : base + "?" + query.substr(1));
        // The server checks --limit's range and --before's cursor: a 400 means the command line is
        // wrong, the usage error it is when the client sees it first (-n 0).
        if (!reply && reply.failure().httpStatus == 400)
            return m_line.usageError(reply.failure().message);
        if (!reply)
            return reply.failure();
        const Poco::JSON::Object::Ptr page = reply->object();
        if (!page)
            return fail(ExitStatus::Refused, "the server's answer is not a page of history");
        if (m_line.json && !m_line.has("all")) {
            Console::json(reply->body);
            return ExitStatus::Ok;
        }
        const Poco::JSON::Array::Ptr executions = page->getArray("executions");
        for (size_t i = 0; executions && i < executions->size(); ++i) {
            const Poco::JSON::Object::Ptr run = executions->getObject(unsigned(i));
            if (!run)
                continue;
            all.add(run);
            table.addRow({run->optValue<std::string>("seq", ""), run->optValue<std::string>("status", ""),
                          run->optValue<std::string>("started_at", ""),
                          run->optValue<std::string>("duration_ms", ""),
                          codeSummary(run->optValue<std::string>("code", ""))});
        }
        cursor = page->optValue<std::string>("next", "");
        if (cursor.empty() || !m_line.has("all"))
            break;
    }

    if (m_line.json) {
        Poco::JSON::Object document;
        document.set("executions", all);
        document.set("next", Poco::Dynamic::Var());
        Console::json(document);
        return ExitStatus::Ok;
    }
    Console::out(table.text());
    if (!cursor.empty())
        Console::complain("older runs: add --before " + cursor + " (or --all)");
    return ExitStatus::Ok;
}

} // namespace replhost::cli
