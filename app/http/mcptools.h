// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "mcptool.h"

#include "core/contextmanager.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>

namespace replhost::core { class Engine; }

namespace replhost::http {

// The MCP tools over an Engine: languages, contexts (create, list, delete, restart, interrupt,
// history) and runs (run_code, and run_command for a stateless shell command), each with its
// inputSchema, outputSchema and annotations. Every tool is a client of the engine's public API, the same calls the native HTTP routes make, in
// the workspace its `workspace` argument names ("default" when absent).
//
// A tool's answer is a tools/call result: content, structuredContent matching its outputSchema,
// and isError. What goes wrong inside a tool (bad arguments, an unknown context, a run that
// ends in an error) is an isError result with a sentence saying what to do, never a protocol
// error: the agent reads it and can correct itself.
//
// run_code and run_command report the output as progress notifications when the call wants
// them, and interrupt the run when the call is cancelled (McpRunWatch; a context keeps its
// state, as an interrupt does). run_code's questions go to the client's user when the client
// takes elicitation; under the stateless revision a run_code call that brings a requestState
// answers the question of the run it names and follows that run instead of starting one.
//
// Ownership: the engine must outlive this object. Threading: the engine's thread.
class McpTools {
public:
    explicit McpTools(core::Engine &engine);
    ~McpTools();

    // The tool definitions for tools/list.
    QJsonArray definitions() const;
    bool has(const QString &name) const;

    using Reply = McpTool::Reply;
    // Runs the tool `name` (has(name) must hold). `reply` is called once, maybe later.
    void call(const QString &name, const QJsonObject &arguments, const McpCallPtr &call, Reply reply);

    // Tools defined elsewhere (McpFiles), listed after these.
    void add(McpTool tool) { m_tools.append(std::move(tool)); }

private:
    using Handler = McpTool::Handler;
    void addContextTools();
    void addRunTools();

    void runCode(const QJsonObject &arguments, const McpCallPtr &call, Reply reply);
    // A retry of run_code (the stateless revision's multi round-trip requests).
    void resumeRun(const McpCallPtr &call, Reply reply);
    void followRun(const core::ExecutionPtr &execution, const McpCallPtr &call, Reply reply);
    void runCommand(const QJsonObject &arguments, const McpCallPtr &call, Reply reply);

    core::Engine &m_engine;
    QList<McpTool> m_tools;
};

} // namespace replhost::http
