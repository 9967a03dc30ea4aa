// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "contextmanager.h"
#include "sandboxsupport.h"

#include <replhost/sdk/result.h>

#include <QHash>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>

namespace replhost::storage { class Store; }

namespace replhost::core {

class CommandProcess;
class WorkspaceManager;

struct CommandRequest {
    QString workspace;              // empty = "default"
    QString command;                // run by /bin/sh -c
    QString cwd;                    // inside the workspace; empty = its directory
    QMap<QString, QString> env;     // on top of the base environment and the workspace layer
    int timeoutMs = 0;              // 0 = none; on expiry the interrupt ladder runs, "timeout"
};

// Stateless shell commands in a workspace, for both faces: each runs /bin/sh -c in a process
// group of its own, in the workspace (or a directory inside it) with the workspace's env layer,
// under the confinement the workspace's workers get (WorkerConfinement::forWorkspace: its
// memory, process, CPU and file size limits through the launcher and the worker cgroups, and
// for isolation "sandbox" the same bubblewrap sandbox, the clean environment of
// WorkerConfinement::baseEnvironment below the env layer, and a refusal while sandboxes are
// unavailable here),
// and is seen as an Execution whose events are the command's output: "started", "stream"
// (stdout, stderr), maybe "truncated", "error" (timeout, start failure) and "done" with
// "exit_code". Its status is "ok" (exit 0), "error" (any other exit), "interrupted", "timeout"
// or "aborted" (server shutdown, workspace deleted). Its context_id is empty and its language
// "sh". Nothing is kept in storage. The workspace's settings bound each command like an
// execution: limits.output_bytes caps its output, limits.timeout_ms its time (a request may ask
// for less, not more).
//
// Errors: "bad_request" (empty command, invalid env key, cwd outside the workspace: "forbidden"),
// "not_found", "unavailable" (a sandboxed workspace where sandboxes cannot be made, with why). Threading: engine thread only. Store and workspaces are owned by the Engine and
// outlive this object.
class CommandRunner : public QObject {
    Q_OBJECT
public:
    CommandRunner(storage::Store *store, WorkspaceManager *workspaces, SandboxSupport sandbox,
                  int finishedKept, QObject *parent = nullptr);
    ~CommandRunner() override;  // kills whatever still runs

    Result<ExecutionPtr> run(const CommandRequest &request);
    // A running or recently finished command. Error "not_found".
    Result<ExecutionPtr> command(const QString &id) const;
    // Starts the interrupt ladder of a running command; a finished one is left alone.
    Result<void> interrupt(const QString &id);
    // Kills every running command (for a clean exit); they end "aborted".
    void shutdownAll();

signals:
    void commandStarted(replhost::core::ExecutionPtr command);
    void commandFinished(replhost::core::ExecutionPtr command);

private:
    void remember(const ExecutionPtr &command);

    storage::Store *m_store;
    WorkspaceManager *m_workspaces;
    const SandboxSupport m_sandbox;
    int m_finishedKept;
    QHash<QString, ExecutionPtr> m_commands;
    QHash<QString, QPointer<CommandProcess>> m_running;
    QList<QString> m_finishedOrder;
};

} // namespace replhost::core
