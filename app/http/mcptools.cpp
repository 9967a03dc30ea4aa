// SPDX-License-Identifier: Apache-2.0
#include "mcptools.h"

#include "jsonbody.h"
#include "mcpcoderesult.h"
#include "mcpinputstate.h"
#include "mcprunwatch.h"
#include "mcpschema.h"

#include "core/engine.h"

#include <QDateTime>
#include <QJsonDocument>

#include <climits>

namespace replhost::http {

namespace {

using S = McpSchema;

QJsonObject contextIdProperty()
{
    return S::string(QStringLiteral("A context's id, as create_context or list_contexts give it"));
}

// The context as the tools show it: ContextInfo's JSON, which the native API serves too.
QJsonObject contextSchema()
{
    return S::object({{QStringLiteral("id"), S::string()},
                      {QStringLiteral("workspace"), S::string()},
                      {QStringLiteral("language"), S::string()},
                      {QStringLiteral("name"), S::string()},
                      {QStringLiteral("cwd"), S::string()},
                      {QStringLiteral("state"),
                       S::string(QStringLiteral("starting, restoring, idle, busy, dormant (restored on next "
                                                "use) or dead (restarted on next use)"))},
                      {QStringLiteral("execution_count"), S::of({QStringLiteral("integer")})},
                      {QStringLiteral("language_version"), S::string()}},
                     {QStringLiteral("id"), QStringLiteral("workspace"), QStringLiteral("language"),
                      QStringLiteral("state")});
}

QString isoTime(qint64 msecsSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msecsSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

} // namespace

McpTools::McpTools(core::Engine &engine) : m_engine(engine)
{
    addContextTools();
    addRunTools();
}

McpTools::~McpTools() = default;

QJsonArray McpTools::definitions() const
{
    QJsonArray list;
    for (const McpTool &tool : m_tools)
        list.append(tool.definition());
    return list;
}

bool McpTools::has(const QString &name) const
{
    return std::any_of(m_tools.cbegin(), m_tools.cend(), [&](const McpTool &tool) { return tool.name == name; });
}

void McpTools::call(const QString &name, const QJsonObject &arguments, const McpCallPtr &call, Reply reply)
{
    for (const McpTool &tool : std::as_const(m_tools)) {
        if (tool.name == name) {
            tool.handler(arguments, call, std::move(reply));
            return;
        }
    }
    reply(McpTool::failure(QStringLiteral("no tool named '%1'").arg(name)));
}

void McpTools::addContextTools()
{
    // Each handler answers at once: the engine's context calls do not wait on a worker.
    auto sync = [](std::function<QJsonObject(const JsonBody &)> body) -> Handler {
        return [body = std::move(body)](const QJsonObject &arguments, const McpCallPtr &, Reply reply) {
            const Result<JsonBody> json = McpTool::arguments(arguments);
            reply(json ? body(*json) : McpTool::failure(json.error().message));
        };
    };

    add({QStringLiteral("list_languages"), QStringLiteral("List languages"),
         QStringLiteral("Lists the languages code can run in, with the version of each runtime. A language "
                        "that is not available says why (for example which package to install). Use a "
                        "language's id with create_context or run_code."),
         S::object({}),
         S::object({{QStringLiteral("languages"),
                     S::arrayOf(S::object({{QStringLiteral("id"), S::string()},
                                           {QStringLiteral("name"), S::string()},
                                           {QStringLiteral("aliases"), S::arrayOf(S::string())},
                                           {QStringLiteral("available"), S::of({QStringLiteral("boolean")})},
                                           {QStringLiteral("version"), S::string()},
                                           {QStringLiteral("reason"), S::nullableString()}},
                                          {QStringLiteral("id"), QStringLiteral("available")}))}},
                   {QStringLiteral("languages")}),
         McpTool::hints(QStringLiteral("List languages"), true, false, true),
         sync([this](const JsonBody &) {
             QJsonArray list;
             for (const core::PluginEntry &entry : m_engine.plugins().entries()) {
                 const bool loaded = entry.state == core::PluginEntry::State::Loaded;
                 const bool available = loaded && entry.runtime.available;
                 const QString reason = loaded ? entry.runtime.reason : entry.error;
                 list.append(QJsonObject{{QStringLiteral("id"), entry.id},
                                         {QStringLiteral("name"), entry.name},
                                         {QStringLiteral("aliases"), QJsonArray::fromStringList(entry.aliases)},
                                         {QStringLiteral("available"), available},
                                         {QStringLiteral("version"), entry.runtime.version},
                                         {QStringLiteral("reason"), available || reason.isEmpty()
                                                  ? QJsonValue() : QJsonValue(reason)}});
             }
             return McpTool::success({{QStringLiteral("languages"), list}});
         })});

    add({QStringLiteral("create_context"), QStringLiteral("Create a context"),
         QStringLiteral("Starts a new context: one live interpreter of a language whose variables, functions "
                        "and imports persist from one run_code call to the next, until it is restarted or "
                        "deleted. It survives a server restart (its history is replayed). Returns its id."),
         S::object({{QStringLiteral("language"),
                     S::string(QStringLiteral("A language id or alias from list_languages: python, javascript, "
                                              "typescript, bash, perl, java, go, …"))},
                    {QStringLiteral("name"), S::string(QStringLiteral("A name to tell contexts apart"))},
                    {QStringLiteral("cwd"),
                     S::string(QStringLiteral("Working directory, relative to the workspace directory"))},
                    {QStringLiteral("env"), S::stringMap(QStringLiteral("Environment variables of the context"))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("language")}),
         contextSchema(), McpTool::hints(QStringLiteral("Create a context"), false, false, false),
         sync([this](const JsonBody &json) {
             core::CreateContextRequest request;
             request.workspace = McpTool::workspace(json);
             const Result<QString> language = json.requiredString(QStringLiteral("language"));
             const Result<QString> name = json.optionalString(QStringLiteral("name"));
             const Result<QString> cwd = json.optionalString(QStringLiteral("cwd"));
             const Result<QMap<QString, QString>> env = json.stringMap(QStringLiteral("env"));
             for (const Error *error : {language ? nullptr : &language.error(), name ? nullptr : &name.error(),
                                        cwd ? nullptr : &cwd.error(), env ? nullptr : &env.error()}) {
                 if (error)
                     return McpTool::failure(error->message);
             }
             request.language = *language;
             request.name = *name;
             request.cwd = *cwd;
             request.env = *env;
             const Result<core::ContextInfo> created = m_engine.contexts().create(request);
             return created ? McpTool::success(created->toJson()) : McpTool::failure(created.error().message);
         })});

    add({QStringLiteral("list_contexts"), QStringLiteral("List contexts"),
         QStringLiteral("Lists the contexts of a workspace, oldest first, with their language, state and "
                        "number of runs. The oldest context of a language is its default context, the one "
                        "run_code uses when given a language and no context_id."),
         S::object({{QStringLiteral("language"), S::string(QStringLiteral("Only the contexts of this language"))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}}),
         S::object({{QStringLiteral("contexts"), S::arrayOf(contextSchema())}}, {QStringLiteral("contexts")}),
         McpTool::hints(QStringLiteral("List contexts"), true, false, true),
         sync([this](const JsonBody &json) {
             const Result<QString> language = json.optionalString(QStringLiteral("language"));
             if (!language)
                 return McpTool::failure(language.error().message);
             const Result<QList<core::ContextInfo>> contexts =
                     m_engine.contexts().list(McpTool::workspace(json), *language);
             if (!contexts)
                 return McpTool::failure(contexts.error().message);
             QJsonArray list;
             for (const core::ContextInfo &context : *contexts)
                 list.append(context.toJson());
             return McpTool::success({{QStringLiteral("contexts"), list}});
         })});

    const QJsonObject byContext = S::object({{QStringLiteral("context_id"), contextIdProperty()},
                                             {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                                            {QStringLiteral("context_id")});
    add({QStringLiteral("delete_context"), QStringLiteral("Delete a context"),
         QStringLiteral("Stops a context's interpreter and deletes the context with its history. Its state "
                        "is gone for good; files it wrote in the workspace stay."),
         byContext, S::object({{QStringLiteral("deleted"), S::string()}}, {QStringLiteral("deleted")}),
         McpTool::hints(QStringLiteral("Delete a context"), false, true, true),
         sync([this](const JsonBody &json) {
             const Result<QString> id = json.requiredString(QStringLiteral("context_id"));
             if (!id)
                 return McpTool::failure(id.error().message);
             const Result<void> removed = m_engine.contexts().remove(McpTool::workspace(json), *id);
             return removed ? McpTool::success({{QStringLiteral("deleted"), *id}}) : McpTool::failure(removed.error().message);
         })});

    add({QStringLiteral("restart_context"), QStringLiteral("Restart a context"),
         QStringLiteral("Replaces a context's interpreter with a fresh one: same id, working directory and "
                        "environment, but every variable, function and import is gone. Use it when the "
                        "state is broken; to stop a run and keep the state, use interrupt instead."),
         byContext, contextSchema(), McpTool::hints(QStringLiteral("Restart a context"), false, true, false),
         sync([this](const JsonBody &json) {
             const Result<QString> id = json.requiredString(QStringLiteral("context_id"));
             if (!id)
                 return McpTool::failure(id.error().message);
             const Result<core::ContextInfo> info = m_engine.contexts().restart(McpTool::workspace(json), *id);
             return info ? McpTool::success(info->toJson()) : McpTool::failure(info.error().message);
         })});

    add({QStringLiteral("interrupt"), QStringLiteral("Interrupt a run"),
         QStringLiteral("Interrupts the run going on in a context (give context_id; runs queued behind it are "
                        "dropped) or one run (give execution_id, from run_code). The interpreter and its "
                        "variables are kept: only the running code stops."),
         S::object({{QStringLiteral("context_id"), contextIdProperty()},
                    {QStringLiteral("execution_id"), S::string(QStringLiteral("An execution id from run_code"))},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}}),
         S::object({{QStringLiteral("interrupted"), S::string()},
                    {QStringLiteral("status"), S::string()}},
                   {QStringLiteral("interrupted")}),
         McpTool::hints(QStringLiteral("Interrupt a run"), false, false, true),
         sync([this](const JsonBody &json) {
             const Result<QString> contextId = json.optionalString(QStringLiteral("context_id"));
             const Result<QString> executionId = json.optionalString(QStringLiteral("execution_id"));
             if (!contextId || !executionId)
                 return McpTool::failure(!contextId ? contextId.error().message : executionId.error().message);
             if (contextId->isEmpty() == executionId->isEmpty())
                 return McpTool::failure(QStringLiteral("give exactly one of context_id (interrupts what the context "
                                               "runs) and execution_id (interrupts that run)"));
             const QString workspace = McpTool::workspace(json);
             if (!contextId->isEmpty()) {
                 const Result<void> done = m_engine.contexts().interrupt(workspace, *contextId);
                 if (!done)
                     return McpTool::failure(done.error().message);
                 const Result<core::ContextInfo> info = m_engine.contexts().get(workspace, *contextId);
                 return McpTool::success({{QStringLiteral("interrupted"), *contextId},
                                 {QStringLiteral("status"), info ? info->state : QString()}});
             }
             const Result<core::ExecutionPtr> execution = m_engine.contexts().execution(*executionId);
             if (!execution || (*execution)->workspace() != workspace)
                 return McpTool::failure(QStringLiteral("no running execution '%1' in workspace '%2'")
                                        .arg(*executionId, workspace));
             if ((*execution)->isFinished())
                 return McpTool::failure(QStringLiteral("execution '%1' has already finished (status %2)")
                                        .arg(*executionId, (*execution)->status()));
             const Result<void> done = m_engine.contexts().interruptExecution(*executionId);
             if (!done)
                 return McpTool::failure(done.error().message);
             return McpTool::success({{QStringLiteral("interrupted"), *executionId},
                             {QStringLiteral("status"), (*execution)->status()}});
         })});

    add({QStringLiteral("get_history"), QStringLiteral("Get a context's history"),
         QStringLiteral("Lists the runs of a context, newest first: the code of each, its status and when it "
                        "ran. Useful to see what state a context holds before using it."),
         S::object({{QStringLiteral("context_id"), contextIdProperty()},
                    {QStringLiteral("limit"), S::integer(QStringLiteral("At most this many runs (default 20)"), 1, 500)},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("context_id")}),
         S::object({{QStringLiteral("executions"),
                     S::arrayOf(S::object({{QStringLiteral("id"), S::string()},
                                           {QStringLiteral("seq"), S::of({QStringLiteral("integer")})},
                                           {QStringLiteral("code"), S::string()},
                                           {QStringLiteral("status"), S::string()},
                                           {QStringLiteral("execution_count"), S::of({QStringLiteral("integer")})},
                                           {QStringLiteral("started_at"), S::string()},
                                           {QStringLiteral("duration_ms"), S::of({QStringLiteral("integer")})}},
                                          {QStringLiteral("id"), QStringLiteral("code"), QStringLiteral("status")}))}},
                   {QStringLiteral("executions")}),
         McpTool::hints(QStringLiteral("Get a context's history"), true, false, true),
         sync([this](const JsonBody &json) {
             const Result<QString> id = json.requiredString(QStringLiteral("context_id"));
             const Result<int> limit = json.optionalInt(QStringLiteral("limit"), 20, 1, 500);
             if (!id || !limit)
                 return McpTool::failure(!id ? id.error().message : limit.error().message);
             const Result<QList<storage::ExecutionRecord>> rows =
                     m_engine.contexts().history(McpTool::workspace(json), *id, 0, *limit);
             if (!rows)
                 return McpTool::failure(rows.error().message);
             QJsonArray list;
             for (const storage::ExecutionRecord &record : *rows) {
                 list.append(QJsonObject{{QStringLiteral("id"), record.id},
                                         {QStringLiteral("seq"), record.seq},
                                         {QStringLiteral("code"), record.code},
                                         {QStringLiteral("status"), record.status},
                                         {QStringLiteral("execution_count"), record.executionCount},
                                         {QStringLiteral("started_at"), isoTime(record.startedAt)},
                                         {QStringLiteral("duration_ms"), record.durationMs}});
             }
             return McpTool::success({{QStringLiteral("executions"), list}});
         })});
}

void McpTools::addRunTools()
{
    add({QStringLiteral("run_code"), QStringLiteral("Run code"),
         QStringLiteral("Runs code in a context and returns its stdout, stderr, the value of the last "
                        "expression, the text of displays (R's visible values among them), the error with its traceback, and images (matplotlib figures, displayed "
                        "PNG/JPEG) as image content. State persists between calls in the same context. Give "
                        "context_id to run in that context, or language to run in that language's default "
                        "context (created on first use; context_id wins when both are given). A run that "
                        "fails, times out or is interrupted is an error result; the context keeps its "
                        "variables unless state_lost says otherwise."),
         S::object({{QStringLiteral("code"), S::string(QStringLiteral("The code to run, as one cell"))},
                    {QStringLiteral("language"),
                     S::string(QStringLiteral("Run in this language's default context (an id or alias from "
                                              "list_languages)"))},
                    {QStringLiteral("context_id"), contextIdProperty()},
                    {QStringLiteral("env"),
                     S::stringMap(QStringLiteral("Environment variables for this run only"))},
                    {QStringLiteral("timeout_ms"),
                     S::integer(QStringLiteral("Interrupt the run after this many milliseconds (0: the "
                                               "workspace's limit)"), 0, INT_MAX)},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("code")}),
         McpCodeResult::outputSchema(), McpTool::hints(QStringLiteral("Run code"), false, true, false),
         [this](const QJsonObject &arguments, const McpCallPtr &call, Reply reply) {
             runCode(arguments, call, std::move(reply));
         }});

    add({QStringLiteral("run_command"), QStringLiteral("Run a shell command"),
         QStringLiteral("Runs a shell command (/bin/sh -c) in the workspace directory, or in cwd inside it, "
                        "and returns its stdout, stderr and exit code. Nothing persists between commands "
                        "but the files they write; use run_code with language bash for a shell whose "
                        "variables and directory persist. A command that exits non-zero, times out or is "
                        "interrupted is an error result."),
         S::object({{QStringLiteral("command"), S::string(QStringLiteral("The command line"))},
                    {QStringLiteral("cwd"),
                     S::string(QStringLiteral("Working directory, relative to the workspace directory"))},
                    {QStringLiteral("env"), S::stringMap(QStringLiteral("Environment variables for the command"))},
                    {QStringLiteral("timeout_ms"),
                     S::integer(QStringLiteral("Interrupt the command after this many milliseconds (0: the "
                                               "workspace's limit)"), 0, INT_MAX)},
                    {QStringLiteral("workspace"), McpTool::workspaceProperty()}},
                   {QStringLiteral("command")}),
         McpCodeResult::outputSchema(), McpTool::hints(QStringLiteral("Run a shell command"), false, true, false),
         [this](const QJsonObject &arguments, const McpCallPtr &call, Reply reply) {
             runCommand(arguments, call, std::move(reply));
         }});
}

void McpTools::runCode(const QJsonObject &arguments, const McpCallPtr &call, Reply reply)
{
    if (!call->requestState().isEmpty()) {
        resumeRun(call, std::move(reply));
        return;
    }
    const Result<JsonBody> json = McpTool::arguments(arguments);
    if (!json) {
        reply(McpTool::failure(json.error().message));
        return;
    }
    core::RunRequest request;
    request.workspace = McpTool::workspace(*json);
    const Result<QString> code = json->requiredString(QStringLiteral("code"));
    const Result<QString> language = json->optionalString(QStringLiteral("language"));
    const Result<QString> contextId = json->optionalString(QStringLiteral("context_id"));
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env"));
    const Result<int> timeout = json->optionalInt(QStringLiteral("timeout_ms"), 0, 0, INT_MAX);
    for (const Error *error : {code ? nullptr : &code.error(), language ? nullptr : &language.error(),
                               contextId ? nullptr : &contextId.error(), env ? nullptr : &env.error(),
                               timeout ? nullptr : &timeout.error()}) {
        if (error) {
            reply(McpTool::failure(error->message));
            return;
        }
    }
    if (language->isEmpty() && contextId->isEmpty()) {
        reply(McpTool::failure(QStringLiteral("give context_id (a context from create_context or list_contexts) or "
                                     "language (runs in that language's default context)")));
        return;
    }
    request.code = *code;
    request.contextId = *contextId;
    request.language = contextId->isEmpty() ? *language : QString();
    request.env = *env;
    request.timeoutMs = *timeout;
    // Code that reads input asks the client's user, when the client can ask one; otherwise it
    // finds the end of input at once.
    request.input = call->canElicit();
    const Result<core::ExecutionPtr> started = m_engine.contexts().run(request);
    if (!started) {
        reply(McpTool::failure(started.error().message));
        return;
    }
    followRun(*started, call, std::move(reply));
}

void McpTools::resumeRun(const McpCallPtr &call, Reply reply)
{
    const std::optional<QString> executionId = McpInputState::read(call->requestState());
    if (!executionId) {
        reply(McpTool::failure(QStringLiteral("the requestState is not one this server gave, or the server has "
                                              "restarted since; call run_code again without it")));
        return;
    }
    const Result<core::ExecutionPtr> execution = m_engine.contexts().execution(*executionId);
    if (!execution) {
        reply(McpTool::failure(execution.error().message));
        return;
    }
    // A retry without the answer is asked again (McpRunWatch); one whose run no longer waits
    // (the question went unanswered too long, the run was interrupted) follows it to its end.
    const QJsonValue response = call->inputResponses().value(QLatin1String("input"));
    if ((*execution)->isWaitingForInput() && response.isObject()) {
        const std::optional<QString> text = McpCall::answerText(response.toObject());
        (void)m_engine.contexts().answerInput(*executionId, text.value_or(QString()), !text.has_value());
    }
    followRun(*execution, call, std::move(reply));
}

void McpTools::followRun(const core::ExecutionPtr &execution, const McpCallPtr &call, Reply reply)
{
    McpRunWatch::answer(
            execution, call, [this](const QString &id) { (void)m_engine.contexts().interruptExecution(id); },
            std::move(reply), [this](const QString &id, const std::optional<QString> &text) {
                // A conflict: the run stopped waiting meanwhile (interrupted, timed out).
                (void)m_engine.contexts().answerInput(id, text.value_or(QString()), !text.has_value());
            });
}

void McpTools::runCommand(const QJsonObject &arguments, const McpCallPtr &call, Reply reply)
{
    const Result<JsonBody> json = McpTool::arguments(arguments);
    if (!json) {
        reply(McpTool::failure(json.error().message));
        return;
    }
    core::CommandRequest request;
    request.workspace = McpTool::workspace(*json);
    const Result<QString> command = json->requiredString(QStringLiteral("command"));
    const Result<QString> cwd = json->optionalString(QStringLiteral("cwd"));
    const Result<QMap<QString, QString>> env = json->stringMap(QStringLiteral("env"));
    const Result<int> timeout = json->optionalInt(QStringLiteral("timeout_ms"), 0, 0, INT_MAX);
    for (const Error *error : {command ? nullptr : &command.error(), cwd ? nullptr : &cwd.error(),
                               env ? nullptr : &env.error(), timeout ? nullptr : &timeout.error()}) {
        if (error) {
            reply(McpTool::failure(error->message));
            return;
        }
    }
    request.command = *command;
    request.cwd = *cwd;
    request.env = *env;
    request.timeoutMs = *timeout;
    const Result<core::ExecutionPtr> started = m_engine.commands().run(request);
    if (!started) {
        reply(McpTool::failure(started.error().message));
        return;
    }
    McpRunWatch::answer(*started, call, [this](const QString &id) {
        (void)m_engine.commands().interrupt(id);
    }, std::move(reply));
}

} // namespace replhost::http
