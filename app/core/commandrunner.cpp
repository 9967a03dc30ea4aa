// SPDX-License-Identifier: Apache-2.0
#include "commandrunner.h"

#include "cgroupmanager.h"
#include "commandprocess.h"
#include "envlayers.h"
#include "storage/store.h"
#include "workspacefiles.h"
#include "workerconfinement.h"
#include "workspacemanager.h"

#include <replhost/sdk/confinedcommand.h>

#include <QFileInfo>
#include <QUuid>

#include <limits>

namespace replhost::core {

CommandRunner::CommandRunner(storage::Store *store, WorkspaceManager *workspaces,
                             SandboxSupport sandbox, int finishedKept, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_workspaces(workspaces)
    , m_sandbox(std::move(sandbox))
    , m_finishedKept(finishedKept)
{
    connect(m_workspaces, &WorkspaceManager::aboutToRemove, this,
            [this](const QString &, const QString &name) {
                const auto running = m_running;
                for (const QPointer<CommandProcess> &process : running) {
                    if (process && process->execution()->workspace() == name)
                        process->kill(QStringLiteral("the workspace was deleted"));
                }
            },
            Qt::DirectConnection);
}

CommandRunner::~CommandRunner()
{
    shutdownAll();
}

Result<ExecutionPtr> CommandRunner::run(const CommandRequest &request)
{
    if (request.command.trimmed().isEmpty())
        return makeError(QStringLiteral("bad_request"), QStringLiteral("the command is empty"));
    if (request.timeoutMs < 0)
        return makeError(QStringLiteral("bad_request"), QStringLiteral("timeout_ms must be >= 0"));
    for (auto it = request.env.cbegin(); it != request.env.cend(); ++it) {
        if (!EnvLayers::isValidKey(it.key()))
            return makeError(QStringLiteral("bad_request"),
                             QStringLiteral("invalid environment variable name \"%1\"").arg(it.key()));
    }
    auto ws = m_workspaces->get(request.workspace);
    if (!ws)
        return ws.error();
    auto settings = m_workspaces->settings(ws->name);
    if (!settings)
        return settings.error();
    auto files = m_workspaces->files(ws->name);
    if (!files)
        return files.error();
    // The same confinement as the files routes: a command cannot be started outside.
    auto directory = files->resolve(request.cwd);
    if (!directory)
        return directory.error();
    if (!QFileInfo(*directory).isDir())
        return makeError(QStringLiteral("bad_request"),
                         QStringLiteral("cwd \"%1\" is not a directory in the workspace").arg(request.cwd));
    if (auto allowed = WorkerConfinement::sandboxRefusal(*settings, m_sandbox); !allowed)
        return allowed.error();
    QJsonObject confinement = WorkerConfinement::forWorkspace(*settings, ws->directory, m_sandbox);
    auto layer = m_store->env(storage::EnvScope::Workspace, ws->id);
    if (!layer)
        return layer.error();
    Environment env = EnvLayers::apply(WorkerConfinement::baseEnvironment(confinement), *layer);
    for (auto it = request.env.cbegin(); it != request.env.cend(); ++it)
        env.insert(it.key(), it.value());
    env.insert(QStringLiteral("PWD"), files->sandboxPath(*directory));

    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    auto command = ExecutionPtr(new Execution(id, ws->name, QString(), QStringLiteral("sh"),
                                              request.command),
                                &Execution::dispose);
    const qint64 outputCap = settings->limits.outputBytes > 0
                                     ? settings->limits.outputBytes
                                     : std::numeric_limits<qint64>::max();
    // The cgroups go with the process, once it and everything it started have ended.
    std::unique_ptr<WorkerCgroup> cgroup =
        WorkerConfinement::placeInCgroups(confinement, CgroupManager::forThisProcess());
    auto argv = sdk::confinedCommand({{QStringLiteral("confinement"), confinement}},
                                     QStringLiteral("/bin/sh"),
                                     {QStringLiteral("-c"), request.command}, *directory);
    if (!argv)
        return argv.error();
    auto *process = new CommandProcess(command, outputCap, this);
    if (cgroup)
        cgroup.release()->setParent(process);
    m_commands.insert(id, command);
    m_running.insert(id, process);
    connect(process, &CommandProcess::finished, this, [this](const ExecutionPtr &finished) {
        m_running.remove(finished->id());
        remember(finished);
    });
    emit commandStarted(command);
    process->start(*argv, *directory, env, settings->effectiveTimeoutMs(request.timeoutMs));
    return command;
}

void CommandRunner::remember(const ExecutionPtr &command)
{
    m_finishedOrder.append(command->id());
    while (m_finishedOrder.size() > m_finishedKept)
        m_commands.remove(m_finishedOrder.takeFirst());
    emit commandFinished(command);
}

Result<ExecutionPtr> CommandRunner::command(const QString &id) const
{
    const ExecutionPtr command = m_commands.value(id);
    if (!command)
        return makeError(QStringLiteral("not_found"),
                         QStringLiteral("no running or recent command \"%1\"").arg(id));
    return command;
}

Result<void> CommandRunner::interrupt(const QString &id)
{
    auto found = command(id);
    if (!found)
        return found.error();
    if (CommandProcess *process = m_running.value(id))
        process->interrupt();
    return {};
}

void CommandRunner::shutdownAll()
{
    const auto running = m_running;
    for (const QPointer<CommandProcess> &process : running) {
        if (process)
            process->kill(QStringLiteral("replhost is shutting down"));
    }
}

} // namespace replhost::core
