// SPDX-License-Identifier: Apache-2.0
#include "replhostinterpreter.h"

#include "cellcompleteness.h"

#include <iostream>

namespace replhost::kernel {

namespace {

bool isContinuationByte(char c)
{
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Jupyter's cursor positions count Unicode code points (protocol 5.2), as replhost's do.
int codePoints(const std::string &text)
{
    int count = 0;
    for (const char c : text)
        count += isContinuationByte(c) ? 0 : 1;
    return count;
}

size_t byteOffset(const std::string &text, int codePoint)
{
    size_t i = 0;
    for (int seen = 0; i < text.size(); ++i) {
        if (!isContinuationByte(text[i]) && seen++ == codePoint)
            break;
    }
    return i;
}

nl::json parsed(const std::string &body)
{
    return nl::json::parse(body, nullptr, false);
}

std::string text(const nl::json &object, const char *key)
{
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

nl::json errorReply(const std::string &ename, const std::string &evalue, const nl::json &traceback)
{
    return {{"status", "error"}, {"ename", ename}, {"evalue", evalue}, {"traceback", traceback}};
}

// What the outcome of a run without an error event of its own is called in Jupyter's error.
std::string errorNameFor(const std::string &status)
{
    if (status == "interrupted")
        return "Interrupted";
    if (status == "timeout")
        return "Timeout";
    if (status == "aborted")
        return "Aborted";
    return "Error";
}

} // namespace

ReplhostInterpreter::ReplhostInterpreter(cli::ServerLocator::Overrides overrides, std::string workspace,
                                         ContextLease lease)
    : m_shell(overrides, workspace), m_answers(overrides, workspace), m_control(overrides, workspace),
      m_lease(std::move(lease)),
      m_info(LanguageInfo::forLanguage(m_lease.language()))
{
}

std::string ReplhostInterpreter::contextPath(const std::string &tail) const
{
    return m_shell.scoped("/contexts/" + ServerConnection::encode(m_lease.id()) + tail);
}

void ReplhostInterpreter::publishNote(bool silent, const std::string &note)
{
    if (!silent)
        publish_stream("stderr", "[replhost] " + note + "\n");
}

nl::json ReplhostInterpreter::execute_request_impl(int executionCounter, const std::string &code, bool silent,
                                                   bool, nl::json, bool allowStdin)
{
    int count = executionCounter;
    bool inputPublished = false;
    const auto publishInput = [&] {
        if (silent || inputPublished)
            return;
        inputPublished = true;
        m_publishingOwnInput = true;
        publish_execution_input(code, count);
        m_publishingOwnInput = false;
    };

    nl::json error;  // the run's error event, if any
    std::string status;
    // A frontend that takes input requests answers the run's questions; otherwise the run finds
    // the end of input.
    nl::json body{{"code", code}};
    if (allowStdin && !silent)
        body["input"] = true;
    std::string executionId;
    const cli::Result<void> streamed = m_shell.stream(
            contextPath("/executions"), body.dump(), [&](const cli::SseEvent &event) {
                const nl::json data = parsed(event.data);
                if (!data.is_object())
                    return;
                if (event.type == "execution") {
                    executionId = text(data, "id");
                    std::lock_guard lock(m_runningMutex);
                    m_runningExecution = executionId;
                } else if (event.type == "input_request") {
                    publishInput();
                    answerInput(executionId, text(data, "prompt"), data.value("password", false));
                } else if (event.type == "started") {
                    count = data.value("execution_count", count);
                    m_executionCount = count;
                    publishInput();
                } else if (event.type == "stream") {
                    publishInput();
                    if (!silent)
                        publish_stream(text(data, "name") == "stderr" ? "stderr" : "stdout", text(data, "text"));
                } else if (event.type == "display") {
                    if (!silent) {
                        // A display_id travels in `transient`, as Jupyter frontends look for it there.
                        nl::json transient = nl::json::object();
                        if (data.contains("display_id") && data["display_id"].is_string())
                            transient["display_id"] = data["display_id"];
                        nl::json bundle = data.value("data", nl::json::object());
                        nl::json metadata = data.value("metadata", nl::json::object());
                        if (data.value("update", false) && transient.contains("display_id"))
                            update_display_data(std::move(bundle), std::move(metadata), std::move(transient));
                        else
                            display_data(std::move(bundle), std::move(metadata), std::move(transient));
                    }
                } else if (event.type == "clear_output") {
                    if (!silent)
                        clear_output(data.value("wait", false));
                } else if (event.type == "result") {
                    if (!silent)
                        publish_execution_result(count, data.value("data", nl::json::object()),
                                                 data.value("metadata", nl::json::object()));
                } else if (event.type == "error") {
                    error = data;
                } else if (event.type == "state_reset") {
                    publishNote(silent, "this context's state was reset: " + text(data, "reason"));
                } else if (event.type == "restored") {
                    if (!data.value("complete", true) || data.value("state_lost", false))
                        publishNote(silent, "this context was restored in part: "
                                                    + (data.contains("reason") ? text(data, "reason")
                                                                                : std::string("its replay stopped early")));
                    for (const nl::json &lost : data.value("lost", nl::json::array()))
                        if (lost.is_string())
                            publishNote(silent, "not restored: " + lost.get<std::string>());
                } else if (event.type == "truncated") {
                    publishNote(silent, text(data, "message"));
                } else if (event.type == "done") {
                    status = text(data, "status");
                    count = data.value("execution_count", count);
                    m_executionCount = count;
                }
            });
    {
        std::lock_guard lock(m_runningMutex);
        m_runningExecution.clear();
    }
    publishInput();

    if (!streamed) {
        const std::string message = streamed.failure().message;
        publish_execution_error("ReplhostError", message, {"ReplhostError: " + message});
        return errorReply("ReplhostError", message, nl::json::array({"ReplhostError: " + message}));
    }
    if (status.empty()) {
        const std::string message = "the connection to replhost-server broke off before the cell finished; it may "
                                    "still be running in context " + m_lease.id();
        publish_execution_error("ReplhostError", message, {"ReplhostError: " + message});
        return errorReply("ReplhostError", message, nl::json::array({"ReplhostError: " + message}));
    }
    if (status == "ok")
        return {{"status", "ok"}, {"payload", nl::json::array()}, {"user_expressions", nl::json::object()}};

    std::string ename = error.is_object() ? text(error, "ename") : std::string();
    std::string evalue = error.is_object() ? text(error, "evalue") : std::string();
    std::vector<std::string> traceback;
    if (error.is_object()) {
        for (const nl::json &line : error.value("traceback", nl::json::array()))
            if (line.is_string())
                traceback.push_back(line);
    }
    if (ename.empty()) {
        ename = errorNameFor(status);
        evalue = evalue.empty() ? "the cell ended with status " + status : evalue;
    }
    if (traceback.empty())
        traceback.push_back(evalue.empty() ? ename : ename + ": " + evalue);
    publish_execution_error(ename, evalue, traceback);
    return errorReply(ename, evalue, traceback);
}

void ReplhostInterpreter::answerInput(const std::string &executionId, const std::string &prompt, bool password)
{
    // Jupyter's stdin channel: the frontend shows the prompt and the shell thread waits for its
    // input_reply, as a kernel's raw_input does. (xeus's blocking_input_request would ask the
    // interpreter registered with xeus, and this one is not.)
    std::string value;
    register_input_handler([&value](const std::string &answer) { value = answer; });
    input_request(prompt, password);
    register_input_handler(nullptr);
    const cli::Result<cli::HttpReply> reply = m_answers.call(
            "POST", m_answers.scoped("/executions/" + ServerConnection::encode(executionId) + "/input"),
            nl::json{{"value", value}}.dump());
    // 409: the run stopped waiting meanwhile (an interrupt, its timeout); the stream says how.
    if (!reply && reply.failure().httpStatus != 409)
        std::cerr << "replhost-kernel: cannot answer the run: " << reply.failure().message << std::endl;
}

void ReplhostInterpreter::interrupt()
{
    std::string running;
    {
        std::lock_guard lock(m_runningMutex);
        running = m_runningExecution;
    }
    // The execution's own route interrupts that run only; a run that has just finished (409) or
    // none known yet leaves the context's route, which interrupts whatever runs in the context.
    if (!running.empty()) {
        const cli::Result<cli::HttpReply> reply =
                m_control.call("POST", m_control.scoped("/executions/" + ServerConnection::encode(running) + "/interrupt"));
        if (reply)
            return;
    }
    const cli::Result<cli::HttpReply> reply = m_control.call("POST", contextPath("/interrupt"));
    if (!reply)
        std::cerr << "replhost-kernel: cannot interrupt: " << reply.failure().message << std::endl;
}

void ReplhostInterpreter::release(bool restart)
{
    const cli::Result<void> released = m_lease.release(m_control, restart);
    if (!released)
        std::cerr << "replhost-kernel: " << (restart ? "cannot restart" : "cannot delete") << " context "
                  << m_lease.id() << ": " << released.failure().message << std::endl;
}

nl::json ReplhostInterpreter::complete_request_impl(const std::string &code, int cursorPos)
{
    const int cursor = cursorPos < 0 || cursorPos > codePoints(code) ? codePoints(code) : cursorPos;
    nl::json reply = {{"status", "ok"}, {"matches", nl::json::array()}, {"cursor_start", cursor},
                      {"cursor_end", cursor}, {"metadata", nl::json::object()}};
    const cli::Result<cli::HttpReply> answer =
            m_shell.call("POST", contextPath("/complete"), nl::json{{"code", code}, {"cursor", cursor}}.dump());
    // A busy context (409) or a language without completion (501) has no matches to offer.
    if (!answer)
        return reply;
    const nl::json completion = parsed(answer->body);
    if (!completion.is_object())
        return reply;
    for (const nl::json &match : completion.value("matches", nl::json::array()))
        if (match.is_string())
            reply["matches"].push_back(match);
    reply["cursor_start"] = completion.value("cursor_start", cursor);
    reply["cursor_end"] = completion.value("cursor_end", cursor);
    return reply;
}

nl::json ReplhostInterpreter::inspect_request_impl(const std::string &code, int cursorPos, int)
{
    nl::json reply = {{"status", "ok"}, {"found", false}, {"data", nl::json::object()},
                      {"metadata", nl::json::object()}};
    // The name under (or just before) the cursor, with a sigil in front where the language has them.
    const size_t at = byteOffset(code, cursorPos < 0 ? codePoints(code) : cursorPos);
    const auto isNameChar = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || isContinuationByte(c)
                || (static_cast<unsigned char>(c) & 0x80);
    };
    size_t start = at;
    while (start > 0 && isNameChar(code[start - 1]))
        --start;
    size_t end = at;
    while (end < code.size() && isNameChar(code[end]))
        ++end;
    const std::string name = code.substr(start, end - start);
    const std::string sigil = start > 0 && std::string("$@%").find(code[start - 1]) != std::string::npos
            ? code.substr(start - 1, 1) : std::string();
    if (name.empty())
        return reply;

    const cli::Result<cli::HttpReply> answer = m_shell.call("GET", contextPath("/variables"));
    if (!answer)
        return reply;
    const nl::json variables = parsed(answer->body);
    if (!variables.is_object())
        return reply;
    for (const nl::json &variable : variables.value("variables", nl::json::array())) {
        if (!variable.is_object())
            continue;
        const std::string variableName = text(variable, "name");
        if (variableName != name && variableName != sigil + name)
            continue;
        const std::string type = text(variable, "type");
        const std::string repr = text(variable, "repr");
        reply["found"] = true;
        reply["data"] = {{"text/plain", variableName + (type.empty() ? "" : ": " + type) + " = " + repr}};
        return reply;
    }
    return reply;
}

nl::json ReplhostInterpreter::is_complete_request_impl(const std::string &code)
{
    const CellCompleteness::Verdict verdict = CellCompleteness::judge(m_lease.language(), code);
    nl::json reply = {{"status", CellCompleteness::name(verdict.status)}};
    if (verdict.status == CellCompleteness::Status::Incomplete)
        reply["indent"] = verdict.indent;
    return reply;
}

nl::json ReplhostInterpreter::kernel_info_request_impl()
{
    const std::string version = m_lease.languageVersion();
    return {
        {"status", "ok"},
        {"implementation", "replhost"},
        {"implementation_version", REPLHOST_VERSION},
        {"language_info", m_info.toJupyter(version)},
        {"banner", m_info.displayName + (version.empty() ? "" : " " + version) + " in replhost context " + m_lease.id()
                           + (m_lease.owned() ? "" : " (bound: it outlives this kernel)")},
        {"help_links", nl::json::array()},
        {"debugger", false},
    };
}

} // namespace replhost::kernel
