// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "engineclient.h"

namespace replhost::gui {

// The engine of this process behind the workbench's EngineClient: every call goes straight to
// core::Engine's managers, and every reply is called before the call returns.
//
// Ownership: the engine must outlive this client. GUI thread only (the engine's thread).
class InProcessEngine : public EngineClient {
    Q_OBJECT
public:
    explicit InProcessEngine(core::Engine &engine, QObject *parent = nullptr);

    QString dataDir() const override;
    QString description() const override;
    bool isAttached() const override { return false; }
    core::Engine *localEngine() const override { return &m_engine; }

    QList<core::PluginEntry> plugins() const override;
    QList<core::PluginSearchDir> pluginSearchDirs() const override;
    QStringList availableLanguages() const override;
    QList<storage::WorkspaceRecord> workspaces() const override;
    std::optional<storage::WorkspaceRecord> workspace(const QString &name) const override;
    QList<core::ContextInfo> contexts(const QString &workspace, const QString &language = {}) const override;
    QList<core::ContextInfo> allContexts() const override;
    std::optional<core::ContextInfo> context(const QString &workspace, const QString &id) const override;

    void createContext(const core::CreateContextRequest &request, Reply<core::ContextInfo> reply) override;
    void renameContext(const QString &workspace, const QString &id, const QString &name,
                       Reply<core::ContextInfo> reply) override;
    void restartContext(const QString &workspace, const QString &id, Reply<void> reply) override;
    void removeContext(const QString &workspace, const QString &id, Reply<void> reply) override;
    void interrupt(const QString &workspace, const QString &id, Reply<void> reply) override;

    void run(const core::RunRequest &request, Reply<core::ExecutionPtr> reply) override;
    void answerInput(const QString &executionId, const QString &value, bool eof, Reply<void> reply) override;
    core::ExecutionPtr followedExecution(const QString &executionId) const override;
    void executionEvents(const QString &executionId, Reply<QList<sdk::Event>> reply) override;
    void history(const QString &workspace, const QString &contextId, int limit,
                 Reply<QList<storage::ExecutionRecord>> reply) override;
    void backgroundOutput(const QString &workspace, const QString &contextId,
                          Reply<QList<core::BackgroundOutput::Entry>> reply) override;

    void complete(const QString &workspace, const QString &id, const QString &code, int cursor,
                  Reply<QJsonObject> reply) override;
    void variables(const QString &workspace, const QString &id, Reply<QJsonObject> reply) override;

    void envLayer(const QString &workspace, const QString &contextId,
                  Reply<QList<storage::EnvVarRecord>> reply) override;
    void changeEnvLayer(const QString &workspace, const QString &contextId, const QMap<QString, QString> &set,
                        const QStringList &unset, const QStringList &clear, Reply<void> reply) override;
    void effectiveEnv(const QString &workspace, const QString &contextId,
                      Reply<QMap<QString, QString>> reply) override;
    void workspaceSettings(const QString &workspace, Reply<core::WorkspaceSettings> reply) override;
    void changeWorkspaceSettings(const QString &workspace, const QJsonObject &patch,
                                 Reply<core::WorkspaceSettings> reply) override;

private:
    core::Engine &m_engine;
};

} // namespace replhost::gui
