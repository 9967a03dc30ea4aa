// SPDX-License-Identifier: Apache-2.0
#include "inprocessengine.h"

#include "core/engine.h"

namespace replhost::gui {

namespace {

// An empty workspace name means the default one, as in the engine's API.
QString workspaceName(const QString &workspace)
{
    return workspace.isEmpty() ? core::WorkspaceManager::defaultName() : workspace;
}

template<typename T>
T valueOr(Result<T> result, T fallback = T())
{
    return result ? std::move(*result) : std::move(fallback);
}

template<typename T>
Result<void> withoutValue(const Result<T> &result)
{
    if (!result)
        return result.error();
    return {};
}

} // namespace

InProcessEngine::InProcessEngine(core::Engine &engine, QObject *parent)
    : EngineClient(parent), m_engine(engine)
{
    core::ContextManager &contexts = engine.contexts();
    connect(&contexts, &core::ContextManager::contextAdded, this, &EngineClient::contextAdded);
    connect(&contexts, &core::ContextManager::contextChanged, this, &EngineClient::contextChanged);
    connect(&contexts, &core::ContextManager::contextRemoved, this, &EngineClient::contextRemoved);
    connect(&contexts, &core::ContextManager::executionStarted, this, &EngineClient::executionStarted);
    connect(&contexts, &core::ContextManager::backgroundOutputAdded, this, &EngineClient::backgroundOutputAdded);
    connect(&engine.workspaces(), &core::WorkspaceManager::workspaceAdded, this,
            [this](const storage::WorkspaceRecord &ws) { emit workspaceAdded(ws.name); });
    connect(&engine.workspaces(), &core::WorkspaceManager::workspaceRemoved, this, &EngineClient::workspaceRemoved);
}

QString InProcessEngine::dataDir() const
{
    return m_engine.dataDir();
}

QString InProcessEngine::description() const
{
    return tr("%1 (engine in this process)").arg(m_engine.dataDir());
}

QList<core::PluginEntry> InProcessEngine::plugins() const
{
    return m_engine.plugins().entries();
}

QList<core::PluginSearchDir> InProcessEngine::pluginSearchDirs() const
{
    return m_engine.plugins().searchDirs();
}

QStringList InProcessEngine::availableLanguages() const
{
    return m_engine.plugins().availableLanguages();
}

QList<storage::WorkspaceRecord> InProcessEngine::workspaces() const
{
    return valueOr(m_engine.workspaces().list());
}

std::optional<storage::WorkspaceRecord> InProcessEngine::workspace(const QString &name) const
{
    if (auto ws = m_engine.workspaces().get(workspaceName(name)))
        return *ws;
    return std::nullopt;
}

QList<core::ContextInfo> InProcessEngine::contexts(const QString &workspace, const QString &language) const
{
    return valueOr(m_engine.contexts().list(workspaceName(workspace), language));
}

QList<core::ContextInfo> InProcessEngine::allContexts() const
{
    return m_engine.contexts().all();
}

std::optional<core::ContextInfo> InProcessEngine::context(const QString &workspace, const QString &id) const
{
    if (id.isEmpty())
        return std::nullopt;
    if (auto info = m_engine.contexts().get(workspaceName(workspace), id))
        return *info;
    return std::nullopt;
}

void InProcessEngine::createContext(const core::CreateContextRequest &request, Reply<core::ContextInfo> reply)
{
    reply(m_engine.contexts().create(request));
}

void InProcessEngine::renameContext(const QString &workspace, const QString &id, const QString &name,
                                    Reply<core::ContextInfo> reply)
{
    reply(m_engine.contexts().rename(workspaceName(workspace), id, name));
}

void InProcessEngine::restartContext(const QString &workspace, const QString &id, Reply<void> reply)
{
    reply(withoutValue(m_engine.contexts().restart(workspaceName(workspace), id)));
}

void InProcessEngine::removeContext(const QString &workspace, const QString &id, Reply<void> reply)
{
    reply(m_engine.contexts().remove(workspaceName(workspace), id));
}

void InProcessEngine::interrupt(const QString &workspace, const QString &id, Reply<void> reply)
{
    reply(m_engine.contexts().interrupt(workspaceName(workspace), id));
}

void InProcessEngine::run(const core::RunRequest &request, Reply<core::ExecutionPtr> reply)
{
    reply(m_engine.contexts().run(request));
}

void InProcessEngine::answerInput(const QString &executionId, const QString &value, bool eof, Reply<void> reply)
{
    reply(m_engine.contexts().answerInput(executionId, value, eof));
}

core::ExecutionPtr InProcessEngine::followedExecution(const QString &executionId) const
{
    if (auto execution = m_engine.contexts().execution(executionId))
        return *execution;
    return {};
}

void InProcessEngine::executionEvents(const QString &executionId, Reply<QList<sdk::Event>> reply)
{
    const auto execution = m_engine.contexts().lookupExecution(executionId);
    if (!execution) {
        reply(execution.error());
        return;
    }
    reply((*execution)->eventRange());  // older events come back from the history
}

void InProcessEngine::history(const QString &workspace, const QString &contextId, int limit,
                              Reply<QList<storage::ExecutionRecord>> reply)
{
    reply(m_engine.contexts().history(workspaceName(workspace), contextId, 0, limit));
}

void InProcessEngine::backgroundOutput(const QString &workspace, const QString &contextId,
                                       Reply<QList<core::BackgroundOutput::Entry>> reply)
{
    const auto page = m_engine.contexts().backgroundOutput(workspaceName(workspace), contextId, 0,
                                                           core::BackgroundOutput::kDefaultMaxEntries);
    if (!page) {
        reply(page.error());
        return;
    }
    reply(page->entries);
}

void InProcessEngine::complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                               Reply<QJsonObject> reply)
{
    m_engine.contexts().complete(workspaceName(workspace), id, code, cursor, std::move(reply));
}

void InProcessEngine::variables(const QString &workspace, const QString &id, Reply<QJsonObject> reply)
{
    m_engine.contexts().variables(workspaceName(workspace), id, std::move(reply));
}

void InProcessEngine::envLayer(const QString &workspace, const QString &contextId,
                               Reply<QList<storage::EnvVarRecord>> reply)
{
    if (contextId.isEmpty())
        reply(m_engine.workspaces().env(workspaceName(workspace)));
    else
        reply(m_engine.contexts().env(workspaceName(workspace), contextId));
}

void InProcessEngine::changeEnvLayer(const QString &workspace, const QString &contextId,
                                     const QMap<QString, QString> &set, const QStringList &unset,
                                     const QStringList &clear, Reply<void> reply)
{
    if (contextId.isEmpty())
        reply(m_engine.workspaces().changeEnv(workspaceName(workspace), set, unset, clear));
    else
        reply(m_engine.contexts().changeEnv(workspaceName(workspace), contextId, set, unset, clear));
}

void InProcessEngine::effectiveEnv(const QString &workspace, const QString &contextId,
                                   Reply<QMap<QString, QString>> reply)
{
    reply(m_engine.contexts().effectiveEnv(workspaceName(workspace), contextId));
}

void InProcessEngine::workspaceSettings(const QString &workspace, Reply<core::WorkspaceSettings> reply)
{
    reply(m_engine.workspaces().settings(workspaceName(workspace)));
}

void InProcessEngine::changeWorkspaceSettings(const QString &workspace, const QJsonObject &patch,
                                              Reply<core::WorkspaceSettings> reply)
{
    reply(m_engine.workspaces().changeSettings(workspaceName(workspace), patch));
}

} // namespace replhost::gui
