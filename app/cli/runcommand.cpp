// SPDX-License-Identifier: Apache-2.0
#include "runcommand.h"

#include "console.h"
#include "interruptwatcher.h"

#include <Poco/JSON/Parser.h>
#include <Poco/Path.h>
#include <Poco/String.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <unistd.h>

namespace replhost::cli {

namespace {

constexpr int kInterruptTimeoutSeconds = 10;
const std::string kSayWhichLanguage = "say which language to run with -l LANGUAGE, or which context with --context ID";

Poco::JSON::Object::Ptr parseObject(const std::string &text)
{
    try {
        const Poco::Dynamic::Var json = Poco::JSON::Parser().parse(text);
        if (json.type() == typeid(Poco::JSON::Object::Ptr))
            return json.extract<Poco::JSON::Object::Ptr>();
    } catch (const std::exception &) {
    }
    return {};
}

std::string withNewline(std::string text)
{
    if (!text.empty() && text.back() != '\n')
        text += '\n';
    return text;
}

// Console::complain's line, for text that goes through the run's output.
std::string complaint(const std::string &message)
{
    return "replhost-cli: " + message + '\n';
}

// The text/plain of a MIME bundle, or nothing.
std::optional<std::string> plainText(const Poco::JSON::Object::Ptr &event)
{
    const Poco::JSON::Object::Ptr data = event->getObject("data");
    if (!data || !data->has("text/plain") || data->isNull("text/plain"))
        return std::nullopt;
    return data->getValue<std::string>("text/plain");
}

ExitStatus statusOfRun(const std::string &status)
{
    if (status == "ok")
        return ExitStatus::Ok;
    if (status == "interrupted")
        return ExitStatus::Interrupted;
    if (status == "timeout")
        return ExitStatus::TimedOut;
    return ExitStatus::Failed;  // error, aborted
}

// "1.5" seconds → 1500 ms; a positive number of seconds up to INT_MAX ms.
std::optional<int> parseTimeout(const std::string &text)
{
    std::istringstream in(text);
    double seconds = 0;
    in >> seconds;
    if (!in || !in.eof() || !std::isfinite(seconds) || seconds <= 0 || seconds * 1000 > INT_MAX)
        return std::nullopt;
    return std::max(1, int(std::lround(seconds * 1000)));
}

} // namespace

Result<std::string> RunCommand::readCode() const
{
    if (m_line.arguments.size() > 1)
        return m_line.usageError("give the code as one argument (quote it), with -f FILE, or on standard input");
    const bool hasFile = m_line.has("file");
    if (!m_line.arguments.empty() && hasFile)
        return m_line.usageError("give the code either as an argument or with -f, not both");
    if (!m_line.arguments.empty())
        return m_line.arguments.front();

    const std::string file = m_line.value("file", "-");
    std::ostringstream code;
    if (file == "-") {
        code << std::cin.rdbuf();
        if (std::cin.bad())
            return fail(ExitStatus::Failed, "cannot read the code from standard input");
        return code.str();
    }
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return fail(ExitStatus::Usage, "cannot read " + file + ": " + std::strerror(errno));
    code << in.rdbuf();
    return code.str();
}

Result<std::string> RunCommand::languageOfFile(const std::string &path)
{
    const std::string extension = Poco::toLower(Poco::Path(path).getExtension());
    if (extension.empty())
        return m_line.usageError(kSayWhichLanguage);
    Result<HttpReply> reply = m_client.call("GET", "/v1/languages");
    if (!reply)
        return reply.failure();
    if (const Poco::JSON::Array::Ptr languages = reply->array()) {
        for (size_t i = 0; i < languages->size(); ++i) {
            const Poco::JSON::Object::Ptr language = languages->getObject(unsigned(i));
            const Poco::JSON::Array::Ptr extensions = language ? language->getArray("extensions") : nullptr;
            for (size_t j = 0; extensions && j < extensions->size(); ++j) {
                if (Poco::toLower(extensions->getElement<std::string>(unsigned(j))) == "." + extension)
                    return language->getValue<std::string>("id");
            }
        }
    }
    return m_line.usageError("no language on the server runs ." + extension + " files; say which with -l LANGUAGE");
}

Result<ExitStatus> RunCommand::execute()
{
    if (m_line.has("language") && m_line.has("context"))
        return m_line.usageError("use -l LANGUAGE or --context ID, not both");
    // Said before standard input is read, which could wait for a terminal forever.
    if (!m_line.has("language") && !m_line.has("context") && m_line.value("file", "-") == "-")
        return m_line.usageError(kSayWhichLanguage);
    Poco::JSON::Object body;
    if (m_line.has("timeout")) {
        const std::optional<int> timeoutMs = parseTimeout(m_line.value("timeout"));
        if (!timeoutMs)
            return m_line.usageError("--timeout takes a number of seconds greater than 0, such as 30 or 0.5");
        body.set("timeout_ms", *timeoutMs);
    }
    Result<Poco::JSON::Object> env = m_line.assignments(m_line.values("env"), "--env");
    if (!env)
        return env.failure();
    if (env->size() > 0)
        body.set("env", *env);

    Result<std::string> code = readCode();
    if (!code)
        return code.failure();
    body.set("code", *code);
    // Someone at the terminal can answer the run's questions, unless the terminal gave the code
    // (and --json keeps stdout for the document).
    const bool codeFromStdin = m_line.arguments.empty() && m_line.value("file", "-") == "-";
    if (TerminalInput::available() && !codeFromStdin && !m_line.json)
        body.set("input", true);

    if (m_line.has("context")) {
        body.set("context_id", m_line.value("context"));
    } else if (m_line.has("language")) {
        body.set("language", m_line.value("language"));
    } else {
        Result<std::string> language = languageOfFile(m_line.value("file", "-"));
        if (!language)
            return language.failure();
        body.set("language", *language);
    }

    std::ostringstream json;
    body.stringify(json);
    std::string executionId;
    Result<void> streamed;
    {
        InterruptWatcher watcher([this](int count) { onInterrupt(count); });
        streamed = m_client.stream(m_client.scoped("/executions"), json.str(), [this](const SseEvent &event) {
            render(event);
        });
        m_input.cancel();
        const std::lock_guard<std::mutex> lock(m_mutex);
        executionId = m_executionId;
    }
    if (!streamed)
        return streamed.failure();
    if (m_status.empty()) {
        return fail(ExitStatus::Unreachable,
                    "the connection to the server broke off before the run finished"
                            + (executionId.empty() ? std::string()
                                                   : "; execution " + executionId + " may still be running"));
    }
    if (m_line.json) {
        Result<HttpReply> document = m_client.call("GET", m_client.scoped("/executions/" + ApiClient::encode(executionId)));
        if (!document)
            return document.failure();
        Console::json(document->body);
    } else if (m_stateLost) {
        Console::complain("the interpreter had to be restarted: this context's earlier state is gone");
    }
    return statusOfRun(m_status);
}

void RunCommand::render(const SseEvent &event)
{
    const Poco::JSON::Object::Ptr data = parseObject(event.data);
    if (!data)
        return;
    if (event.type == "execution") {
        const std::string id = data->optValue<std::string>("id", "");
        bool send = false;
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_executionId = id;
            send = m_interruptWanted && !m_interruptSent;
            m_interruptSent = m_interruptSent || send;
        }
        if (send)
            sendInterrupt(id);
        return;
    }
    if (event.type == "input_request") {
        std::string id;
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            id = m_executionId;
        }
        m_output.interruptedByInput();
        m_input.ask(data->optValue<std::string>("prompt", ""), data->optValue<bool>("password", false),
                    [this, id](const std::optional<std::string> &line) { sendAnswer(id, line); });
        return;
    }
    if (event.type == "done") {
        // An interrupt or a timeout ended a question still open.
        m_input.cancel();
        m_status = data->optValue<std::string>("status", "error");
        m_stateLost = data->optValue<bool>("state_lost", false);
        return;
    }
    if (m_line.json)
        return;  // the document at the end has it all

    if (event.type == "stream") {
        const std::string text = data->optValue<std::string>("text", "");
        if (data->optValue<std::string>("name", "") == "stderr")
            m_output.err(text);
        else
            m_output.out(text);
    } else if (event.type == "clear_output") {
        m_output.clear(data->optValue<bool>("wait", false));
    } else if (event.type == "result" || event.type == "display") {
        const bool update = data->optValue<bool>("update", false);
        if (const std::optional<std::string> text = plainText(data)) {
            m_output.display(data->optValue<std::string>("display_id", ""), *text, update);
        } else if (update) {
            // Said when it was first shown.
        } else if (const Poco::JSON::Object::Ptr bundle = data->getObject("data")) {
            std::string types;
            for (const std::string &name : bundle->getNames())
                types += (types.empty() ? "" : ", ") + name;
            m_output.err(complaint("a " + event.type + " of type " + types + " cannot be shown as text; --json has it"));
        }
    } else if (event.type == "error") {
        std::string text;
        if (const Poco::JSON::Array::Ptr traceback = data->getArray("traceback")) {
            for (size_t i = 0; i < traceback->size(); ++i)
                text += withNewline(traceback->getElement<std::string>(unsigned(i)));
        }
        if (text.empty()) {
            text = data->optValue<std::string>("ename", "Error") + ": "
                    + data->optValue<std::string>("evalue", "") + '\n';
        }
        m_output.err(text);
    } else if (event.type == "truncated") {
        m_output.err(complaint(data->optValue<std::string>("message", "output was dropped")));
    } else if (event.type == "state_reset") {
        m_output.err(complaint(data->optValue<std::string>("reason", "the interpreter was started afresh")));
    }
}

void RunCommand::onInterrupt(int count)
{
    std::string id;
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        id = m_executionId;
        if (count > 1) {
            Console::complain(id.empty() ? std::string("stopped waiting for the run")
                                         : "stopped waiting; execution " + id + " may still be running");
            ::_exit(toExitCode(ExitStatus::Interrupted));
        }
        m_interruptWanted = true;
        if (id.empty() || m_interruptSent)
            id.clear();
        else
            m_interruptSent = true;
    }
    // Said once the server has the interrupt (or, before the run has an id, once it is wanted):
    // a Ctrl-C after this line is a second one.
    if (!id.empty())
        sendInterrupt(id);
    Console::complain("interrupting the run (Ctrl-C again to stop waiting for it)");
}

void RunCommand::sendInterrupt(const std::string &executionId)
{
    // The main thread's connection is busy with the stream: this one is the caller's own.
    ApiClient client(m_client.endpoint(), m_client.workspace());
    // Bounded, so a second Ctrl-C (handled on the same thread) is never stuck behind a hung server.
    client.setReceiveTimeout(kInterruptTimeoutSeconds);
    const Result<HttpReply> reply =
            client.call("POST", client.scoped("/executions/" + ApiClient::encode(executionId) + "/interrupt"));
    // 409: the run finished on its own meanwhile; its stream says how.
    if (!reply && reply.failure().httpStatus != 409)
        Console::complain("cannot interrupt the run: " + reply.failure().message);
}

void RunCommand::sendAnswer(const std::string &executionId, const std::optional<std::string> &line)
{
    // On the reader's thread, with a connection of its own: the main one carries the stream.
    ApiClient client(m_client.endpoint(), m_client.workspace());
    client.setReceiveTimeout(kInterruptTimeoutSeconds);
    Poco::JSON::Object body;
    if (line)
        body.set("value", *line);
    else
        body.set("eof", true);
    const Result<HttpReply> reply =
            client.call("POST", client.scoped("/executions/" + ApiClient::encode(executionId) + "/input"), body);
    // 409: the run stopped waiting meanwhile (interrupted, timed out); its stream says how.
    if (!reply && reply.failure().httpStatus != 409)
        Console::complain("cannot answer the run: " + reply.failure().message);
}

} // namespace replhost::cli
